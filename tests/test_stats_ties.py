"""The one rule of equality (evalkit.stats._ties) in every statistic: identical systems, grid
ties in Wilcoxon's ranks, constant differences, exact sign-flip enumeration, measure names."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import stats_oracles
from stats_oracles import exact_sign_flip_p

from evalkit.errors import InputError
from evalkit.stats import anova, bootstrap_ci, compare, paired_test, randomized_tukey_hsd, tukey_hsd

# the frames here are P@10 values
tidy_matrix = functools.partial(stats_oracles.tidy_matrix, measure="P@10")


def grid_column(rng: np.random.Generator, n: int, step: float) -> np.ndarray:
    """Values on a P@k- or nDCG-like grid: multiples of ``step`` in [0, 1]."""
    return rng.integers(0, round(1 / step) + 1, size=n) * step


@pytest.mark.parametrize("table", range(40))
def test_anova_on_identical_systems_gives_nan_never_a_small_p(table: int) -> None:
    # 3 identical systems x 20 topics: no system effect and no residual at all. Row means of
    # three equal grid values are not always that value in floats (0.1 * 3 / 3), which left
    # V_E near 1e-31 and F up to 25 before the rule of equality.
    rng = np.random.default_rng(table)
    column = grid_column(rng, 20, 0.1 if table % 2 else 0.05)
    matrix = np.column_stack([column] * 3)
    result = anova(tidy_matrix(matrix)).set_index("source")
    assert result.loc["residual", "ss"] == 0.0
    assert result.loc["system", "ss"] == 0.0
    assert math.isnan(result.loc["system", "f"])
    assert math.isnan(result.loc["system", "p_value"])
    assert (tukey_hsd(tidy_matrix(matrix))["p_value"] == 1.0).all()
    randomized = randomized_tukey_hsd(tidy_matrix(matrix), n_resamples=200)
    assert (randomized["p_value"] == 1.0).all()


def test_constant_shift_gives_the_documented_inf() -> None:
    # Systems that differ by a constant on every topic: an additive table, V_E = 0.
    rng = np.random.default_rng(7)
    base = grid_column(rng, 20, 0.1)
    matrix = np.column_stack([base, base + 0.1, base + 0.3])
    result = anova(tidy_matrix(matrix)).set_index("source")
    assert result.loc["residual", "ss"] == 0.0
    assert result.loc["system", "f"] == math.inf
    assert result.loc["system", "p_value"] == 0.0
    tukey = tukey_hsd(tidy_matrix(matrix))
    assert np.isinf(tukey["effect_size"]).all()
    assert np.isinf(tukey["q"]).all()
    assert (tukey["p_value"] == 0.0).all()


A = [0.9, 0.6, 0.2, 0.8, 0.2, 0.9, 0.5, 0.3]
B = [0.6, 0.7, 0.5, 0.4, 0.2, 0.6, 0.8, 0.6]


def test_wilcoxon_ranks_grid_ties_as_ties() -> None:
    # d = (0.3, -0.1, -0.3, 0.4, 0, 0.3, -0.3, -0.3). By hand: the zero is dropped; |d| has
    # ranks 0.1 -> 1, the five 0.3s -> 4 (average of 2..6), 0.4 -> 7; W+ = 4 + 7 + 4 = 15,
    # the null mean is 28 / 2 = 14. A sum of the ranks {1, 4, 4, 4, 4, 4, 7} is 1a + 4b + 7c
    # (a, c in {0, 1}), never 14, so every one of the 2**8 sign vectors is at least 1 from
    # the mean: the exact tie-aware permutation p-value is 1.0. (Float ranks of the 0.3s,
    # 0.30000000000000004 against 0.29999999999999999, gave 0.6875.)
    assert paired_test(A, B, test="wilcoxon") == 1.0
    row = compare(
        pd.concat([tidy_matrix(np.array([A]).T), tidy_matrix(np.array([B]).T).assign(system="b")]),
        "b",
        test="wilcoxon",
    ).iloc[0]
    assert row["p_value"] == 1.0
    assert row["p_method"] == "exact"


def test_wilcoxon_large_sample_is_rs_normal_approximation_with_tie_correction() -> None:
    # n = 40 grid differences with ties: the normal approximation without continuity
    # correction, R's wilcox.test(a, b, paired=TRUE, exact=FALSE, correct=FALSE,
    # digits.rank=10). The oracle is that formula written out here (tie-corrected variance
    # n(n+1)(2n+1)/24 - sum(t^3 - t)/48) on differences in tenths, integers, so no float tie.
    rng = np.random.default_rng(11)
    a = grid_column(rng, 40, 0.1)
    b = grid_column(rng, 40, 0.1)
    tenths = np.round(a * 10).astype(int) - np.round(b * 10).astype(int)
    nonzero = tenths[tenths != 0]
    n = nonzero.size
    ranks = scipy.stats.rankdata(np.abs(nonzero))
    w_plus = ranks[nonzero > 0].sum()
    _, counts = np.unique(np.abs(nonzero), return_counts=True)
    variance = n * (n + 1) * (2 * n + 1) / 24 - np.sum(counts**3 - counts) / 48
    z = (w_plus - n * (n + 1) / 4) / math.sqrt(variance)
    expected = 2 * scipy.stats.norm.sf(abs(z))
    assert paired_test(a, b, test="wilcoxon") == pytest.approx(expected, rel=1e-12)


def test_bca_on_a_constant_difference_is_the_zero_width_interval() -> None:
    # A table on which BCa raised (DegenerateDataWarning) while percentile and t gave (0.1, 0.1)
    rng = np.random.default_rng(4)
    base = grid_column(rng, 20, 0.1)
    diffs = (base + 0.1) - base  # 0.1 up to float rounding: not all bit-identical
    assert np.ptp(diffs) > 0.0
    for method in ("bca", "percentile"):
        low, high = bootstrap_ci(diffs, method=method)
        assert low == pytest.approx(0.1, abs=1e-15)
        assert high == pytest.approx(0.1, abs=1e-15)
    frame = tidy_matrix(np.column_stack([base + 0.1, base]))
    for interval in ("bca", "percentile", "t"):
        row = compare(frame, "s1", interval=interval, n_resamples=500).iloc[0]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.1, 0.1), abs=1e-15)
        assert math.isnan(row["t"])  # constant non-zero differences: no variance


def test_sign_flip_at_n_10_is_exact_enumeration() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=10), rng.uniform(size=10)
    expected = exact_sign_flip_p(a - b)
    for seed in (0, 1):
        assert paired_test(a, b, n_resamples=10_000, seed=seed) == expected
    frame = tidy_matrix(np.column_stack([a, b]))
    row = compare(frame, "s1", n_resamples=1024).iloc[0]
    assert row["p_value"] == expected
    assert row["p_method"] == "exact"
    sampled = compare(frame, "s1", n_resamples=1023).iloc[0]
    assert sampled["p_method"] == "monte-carlo"


def test_randomized_tukey_is_exact_when_the_permutations_are_few() -> None:
    # k = 3, n = 4: (3!)**3 = 216 permutations with topic 1 fixed. The oracle enumerates all
    # (3!)**4 = 1296 orders of every topic, without fixing any.
    rng = np.random.default_rng(4)
    matrix = np.column_stack([grid_column(rng, 4, 0.1) for _ in range(3)])
    orders = list(itertools.permutations(range(3)))
    ranges = []
    for choice in itertools.product(orders, repeat=4):
        totals = sum(matrix[t, list(order)] for t, order in enumerate(choice))
        ranges.append(totals.max() - totals.min())
    result = randomized_tukey_hsd(tidy_matrix(matrix), n_resamples=1000)
    totals = matrix.sum(axis=0)
    for row in result.itertuples():
        i, j = int(row.system[1:]), int(row.base[1:])
        observed = abs(totals[i] - totals[j])
        expected = np.mean(np.array(ranges) >= observed - 1e-9)
        assert row.p_value == pytest.approx(expected, abs=1e-15)
    assert (result["test"] == "randomized-tukey-hsd (exact)").all()
    assert (
        randomized_tukey_hsd(tidy_matrix(matrix), n_resamples=215)["test"] == "randomized-tukey-hsd"
    ).all()


@pytest.mark.parametrize("function", [compare, anova, tukey_hsd, randomized_tukey_hsd])
def test_an_absent_measure_suggests_the_closest_and_lists_all(function: object) -> None:
    names = ["nDCG(dcg='exp-log2')@10", "P@10", "R@5", "RR@10", "AP", "Rprec", "Judged@10"]
    frame = pd.concat(
        [tidy_matrix(np.array([[0.1, 0.2], [0.3, 0.5]]), measure=name) for name in names]
    )
    with pytest.raises(InputError) as error:
        function(frame, measures="nDCG@10")  # type: ignore[operator]
    message = str(error.value)
    assert "Did you mean \"nDCG(dcg='exp-log2')@10\"?" in message
    assert all(repr(name) in message or f'"{name}"' in message for name in names)
    assert "more" not in message


def test_randomized_tukey_on_many_topics_samples_without_overflow() -> None:
    """(k!)**(n-1) exceeds a float at 300 topics of 5 systems (Cranfield-sized fixtures): the
    exactness check must compare integers, and the test samples."""
    rng = np.random.default_rng(3)
    rows = [
        (f"s{j}", f"q{t}", "AP", float(v))
        for t in range(300)
        for j, v in enumerate(rng.uniform(0, 1, size=5))
    ]
    frame = pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])
    result = randomized_tukey_hsd(frame, "AP", n_resamples=50, seed=0)
    assert "exact" not in str(result["test"].iloc[0])
    assert result["p_value"].between(0, 1).all()
