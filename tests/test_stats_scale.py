"""Many systems: compare's blocked pairs give the unblocked frame, its pair kernels agree with
the per-pair resampling, Tukey's tail for all pairs at once agrees with scipy value by value.
(The 1,000-system runs are in benchmarks/bench_stats_scale.py, not here.)"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from evalkit.stats import _paired as paired, _resampling as resampling, tukey_hsd
from evalkit.stats._studentized import DIRECT_LIMIT, studentized_range_sf


def many_systems(n: int, k: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    topic = rng.uniform(0.1, 0.9, size=(n, 1))
    matrix = np.clip(topic + rng.normal(0, 0.1, size=(n, k)) + rng.normal(0, 0.03, size=k), 0, 1)
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{j:02d}" for j in range(k)], n),
            "query_id": np.tile([f"q{t:02d}" for t in range(n)], k),
            "measure": "nDCG@10",
            "value": matrix.T.ravel(),
            "language": np.tile(["en", "de"], n * k // 2),
        }
    )


@pytest.mark.parametrize(
    ("test", "interval"),
    [("randomization", "percentile"), ("bootstrap", "t"), ("ttest", "bca"), ("wilcoxon", "t")],
)
def test_blocked_pairs_give_the_unblocked_frame(
    monkeypatch: pytest.MonkeyPatch, test: str, interval: str
) -> None:
    frame = many_systems(16, 9, seed=1)  # 36 pairs
    kwargs = {"test": test, "interval": interval, "n_resamples": 300, "seed": 4, "by": "language"}
    whole = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    # 2 * 300 resamples: 2 pairs per block; without resampling 16 queries: 2 pairs per block
    monkeypatch.setattr(paired, "PAIR_BLOCK_VALUES", 2 * 300 * 2 if test != "ttest" else 16)
    blocked = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(blocked, whole)
    assert len(whole) == 36 * 2


def test_the_pair_kernels_threads_and_chunks_do_not_change_the_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = many_systems(16, 9, seed=3)  # 36 pairs, the defaults' test and interval
    kwargs = {"n_resamples": 500, "seed": 2, "by": "language"}
    monkeypatch.setattr(resampling, "PAIR_THREADS", 1)
    alone = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(resampling, "PAIR_THREADS", 3)
    monkeypatch.setattr(resampling, "PAIR_CHUNK_VALUES", 3 * 500)  # 3 pairs per chunk
    threaded = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(threaded, alone, check_exact=True)


def test_too_many_totals_resample_each_block_of_pairs_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = many_systems(16, 9, seed=5)
    kwargs = {"n_resamples": 500, "seed": 1}
    shared = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(paired, "PAIR_TOTALS_VALUES", 1)  # no per-system totals
    alone = paired.compare(frame, None, **kwargs)  # type: ignore[arg-type]
    np.testing.assert_array_equal(alone["p_value"], shared["p_value"])
    for column in ("ci_low", "ci_high"):
        np.testing.assert_allclose(alone[column], shared[column], rtol=0, atol=1e-14)


def test_tail_for_many_distinct_q_agrees_with_scipy_value_by_value() -> None:
    k, df = 30, 29 * 49
    q = np.linspace(0.0, 9.0, 3 * DIRECT_LIMIT)
    ours = studentized_range_sf(q, k, df)
    every = slice(None, None, 3)  # a third of them: scipy takes a few ms per value
    reference = np.clip(scipy.stats.studentized_range.sf(q[every], k, df), 0.0, 1.0)
    assert np.abs(ours[every] - reference).max() < 1e-10
    assert ours[0] == 1.0
    assert studentized_range_sf(np.array([math.inf]), k, df)[0] == 0.0


def test_tukey_with_many_pairs_matches_scipy_per_pair() -> None:
    frame = many_systems(12, 18, seed=2)  # 153 pairs, more than DIRECT_LIMIT distinct q
    result = tukey_hsd(frame)
    assert len(result) == 153 > DIRECT_LIMIT
    sample = result.iloc[::10]
    reference = scipy.stats.studentized_range.sf(sample["q"].to_numpy(), 18, 17 * 11)
    np.testing.assert_allclose(sample["p_value"], np.clip(reference, 0, 1), rtol=0, atol=1e-10)


@pytest.mark.parametrize("count", [7, 40, 999, 10_000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_linear_quantiles_equal_numpy_quantile_bit_for_bit(count: int, confidence: float) -> None:
    rng = np.random.default_rng(count)
    rows = np.round(rng.normal(size=(5, count)), 2)  # ties among the values too
    tail = (1.0 - confidence) / 2.0
    expected = np.quantile(rows, [tail, 1.0 - tail], axis=1)
    low, high = resampling.linear_quantiles(rows.copy(), tail, 1.0 - tail)
    np.testing.assert_array_equal(low, expected[0])
    np.testing.assert_array_equal(high, expected[1])
    divided = np.quantile(rows / 7, [tail, 1.0 - tail], axis=1)  # resample sums / n
    low, high = resampling.linear_quantiles(rows.copy(), tail, 1.0 - tail, divisor=7)
    np.testing.assert_array_equal(low, divided[0])
    np.testing.assert_array_equal(high, divided[1])


@pytest.mark.parametrize("n", [8, 30])  # 2**8 <= 1000: the exact enumeration; 30: sampled
def test_pair_kernels_agree_with_the_per_pair_resampling(n: int) -> None:
    rng = np.random.default_rng(n)
    values = np.round(rng.uniform(size=(n, 6)), 1)  # a 0.1 grid: tied permutation sums
    pairs = np.array(list(itertools.combinations(range(6), 2)), dtype=np.intp)
    first, second = pairs[:, 0], pairs[:, 1]
    diffs = values[:, first] - values[:, second]
    unit = np.full(first.size, 1e-10)
    seed = np.random.SeedSequence(5)
    signs = resampling.resample_totals(
        values, resampling.sign_blocks(resampling.random_generator(seed), n, 1000)
    )
    p, exact = resampling.pair_sign_flip_p(
        signs, first, second, threshold=np.abs(diffs.sum(axis=0)) - n * unit, n=n, n_resamples=1000
    )
    expected, expected_exact = resampling.sign_flip_p(
        diffs, resampling.random_generator(seed), 1000, unit
    )
    np.testing.assert_array_equal(p, expected)
    assert exact == expected_exact == (n == 8)
    counts = resampling.resample_totals(
        values, resampling.count_blocks(resampling.random_generator(seed), n, 1000)
    )
    low, high = resampling.pair_percentile_intervals(counts, first, second, n, 0.9)
    expected_low, expected_high = resampling.percentile_intervals(
        diffs, resampling.random_generator(seed), 1000, 0.9
    )
    np.testing.assert_allclose(low, expected_low, rtol=0, atol=1e-14)
    np.testing.assert_allclose(high, expected_high, rtol=0, atol=1e-14)


@pytest.mark.parametrize("draw", [resampling.sign_blocks, resampling.count_blocks])
@pytest.mark.parametrize("n", [5, 40, 300])
def test_kept_blocks_give_the_totals_of_a_fresh_draw(draw, n):
    """The kept sign and count vectors (int8 where exact, kept across calls) give the same
    resampled totals, bit for bit, as the blocks drawn afresh from the same seed."""
    seed = resampling.group_seed(3, "compare", ("measure",), ("kept-test",)).spawn(2)[1]
    rng = np.random.default_rng(11)
    values = rng.normal(size=(n, 3)) * np.array([1.0, 0.0, 1e-3])  # a column of zeros too
    fresh = resampling.resample_totals(values, draw(resampling.random_generator(seed), n, 500))
    first = resampling.kept_blocks(draw, seed, n, 500)
    again = resampling.kept_blocks(draw, seed, n, 500)
    assert again is first  # drawn once
    kept = resampling.resample_totals(values, first)
    assert fresh.tobytes() == kept.tobytes()
    assert all(not weights.flags.writeable for _, weights in first)


@pytest.mark.parametrize("draw", [resampling.sign_blocks, resampling.count_blocks])
def test_a_draw_too_large_to_keep_is_yielded_block_by_block(draw, monkeypatch):
    """A draw of more weights than may be kept is neither kept nor gathered in memory: its
    blocks come one at a time, and give the totals of a fresh draw."""
    monkeypatch.setattr(resampling, "KEPT_DRAW_VALUES", 40 * 499)
    seed = resampling.group_seed(4, "compare", ("measure",), ("too-large",)).spawn(2)[1]
    values = np.random.default_rng(5).normal(size=(40, 2))
    fresh = resampling.resample_totals(values, draw(resampling.random_generator(seed), 40, 500))
    kept_before = (list(resampling._KEPT.draws), resampling._KEPT.values)
    blocks = resampling.kept_blocks(draw, seed, 40, 500)
    assert not isinstance(blocks, list)  # a generator: one block at a time
    assert resampling.kept_blocks(draw, seed, 40, 500) is not blocks
    assert (list(resampling._KEPT.draws), resampling._KEPT.values) == kept_before  # nothing kept
    assert resampling.resample_totals(values, blocks).tobytes() == fresh.tobytes()
