"""Tests of evalkit.stats._multi: two-way ANOVA, Tukey's HSD, the randomized Tukey HSD."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import stats_oracles
from stats_oracles import SECRET, monte_carlo_tolerance

from evalkit.errors import InputError
from evalkit.stats import (
    ANOVA_COLUMNS,
    TUKEY_COLUMNS,
    anova,
    paired_test,
    randomized_tukey_hsd,
    tukey_hsd,
)

# every frame carries a query_text column that no output may show
tidy_matrix = functools.partial(stats_oracles.tidy_matrix, query_text=SECRET)


def retrieval_like(n: int, k: int, seed: int, topic_spread: float = 0.25) -> np.ndarray:
    """Topic effects much larger than system effects, values clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    topic = rng.normal(0.5, topic_spread, (n, 1))
    system = np.linspace(0.0, 0.06, k)[None, :]
    return np.clip(topic + system + rng.normal(0, 0.08, (n, k)), 0.0, 1.0)


def exact_randomized_tukey(matrix: np.ndarray) -> np.ndarray:
    """Oracle: randomized Tukey HSD p-values of every pair i < j by enumerating all (k!)^n
    within-topic permutations, on integer-valued matrices (so every tie is exact)."""
    n, k = matrix.shape
    orders = list(itertools.permutations(range(k)))
    permuted_rows = [matrix[t][list(orders)] for t in range(n)]  # each (k!, k)
    totals = np.zeros((1, k), dtype=np.int64)
    for rows in permuted_rows:
        totals = (totals[:, None, :] + rows[None, :, :]).reshape(-1, k)
    ranges = totals.max(axis=1) - totals.min(axis=1)
    observed = matrix.sum(axis=0)
    return np.array(
        [np.mean(ranges >= abs(observed[i] - observed[j])) for i, j in pairs_of(k)],
    )


def pairs_of(k: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(k), 2))


# --- anova ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "seed"), [(12, 3, 0), (30, 5, 1), (7, 2, 2)])
def test_anova_matches_least_squares_oracle(n: int, k: int, seed: int) -> None:
    matrix = retrieval_like(n, k, seed)
    result = anova(tidy_matrix(matrix)).set_index("source")
    assert list(result.columns) == [c for c in ANOVA_COLUMNS if c != "source"]
    # Oracle: residual sums of squares of linear models fitted by numpy.linalg.lstsq on
    # dummy-coded factors; a factor's SS is the drop in RSS when it is added last.
    y = matrix.ravel()
    topics = np.repeat(np.eye(n), k, axis=0)
    systems = np.tile(np.eye(k), (n, 1))
    ones = np.ones((n * k, 1))

    def rss(design: np.ndarray) -> float:
        fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
        return float(np.sum((y - fitted) ** 2))

    full = rss(np.hstack([topics, systems]))
    assert result.loc["residual", "ss"] == pytest.approx(full, rel=1e-9)
    assert result.loc["system", "ss"] == pytest.approx(rss(topics) - full, rel=1e-9)
    assert result.loc["topic", "ss"] == pytest.approx(rss(systems) - full, rel=1e-9)
    assert result.loc["total", "ss"] == pytest.approx(rss(ones), rel=1e-9)
    v_e = full / ((k - 1) * (n - 1))
    assert result.loc["residual", "ms"] == pytest.approx(v_e, rel=1e-9)
    f_system = (rss(topics) - full) / (k - 1) / v_e
    assert result.loc["system", "f"] == pytest.approx(f_system, rel=1e-9)
    assert result.loc["system", "p_value"] == pytest.approx(
        scipy.stats.f.sf(f_system, k - 1, (k - 1) * (n - 1)), rel=1e-9
    )
    # The margin of error is the t half-width with the residual df (Sakai 2018, Sec. 3.2).
    expected = scipy.stats.t.ppf(0.975, (k - 1) * (n - 1)) * math.sqrt(v_e / n)
    assert result["margin_of_error"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_anova_with_two_systems_is_the_paired_t_test() -> None:
    matrix = retrieval_like(15, 2, 4)
    result = anova(tidy_matrix(matrix)).set_index("source")
    paired = scipy.stats.ttest_rel(matrix[:, 0], matrix[:, 1])
    assert result.loc["system", "f"] == pytest.approx(paired.statistic**2, rel=1e-9)
    assert result.loc["system", "p_value"] == pytest.approx(paired.pvalue, rel=1e-9)


def test_anova_one_way_pooling_matches_scipy_f_oneway() -> None:
    # scipy's f_oneway is the unpaired model: its error is topic + residual.
    n, k = 25, 4
    matrix = retrieval_like(n, k, 5)
    result = anova(tidy_matrix(matrix)).set_index("source")
    within = (result.loc["topic", "ss"] + result.loc["residual", "ss"]) / (k * (n - 1))
    one_way = scipy.stats.f_oneway(*matrix.T)
    assert result.loc["system", "ms"] / within == pytest.approx(one_way.statistic, rel=1e-9)


def test_anova_additive_table_and_columns() -> None:
    matrix = np.add.outer(np.linspace(0.1, 0.5, 6), [0.0, 0.1, 0.2])  # residual exactly 0
    result = anova(tidy_matrix(matrix), confidence=0.9).set_index("source")
    assert result.loc["residual", "ss"] == pytest.approx(0.0, abs=1e-28)
    assert result.loc["system", "f"] > 1e12 or math.isinf(result.loc["system", "f"])
    assert result["confidence"].eq(0.9).all()
    assert result["n_topics"].eq(6).all()
    assert result["n_systems"].eq(3).all()


# --- tukey_hsd -----------------------------------------------------------------------------


def test_tukey_with_two_systems_is_the_paired_t_test() -> None:
    # Q_{2, df} = sqrt(2) |T_df|, and q = sqrt(2) |t| with V_E = var(d) / 2.
    matrix = retrieval_like(18, 2, 6)
    (row,) = tukey_hsd(tidy_matrix(matrix)).to_dict("records")
    reference = scipy.stats.ttest_rel(matrix[:, 0], matrix[:, 1])
    assert row["q"] == pytest.approx(math.sqrt(2) * abs(reference.statistic), rel=1e-9)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-6)
    interval = reference.confidence_interval(0.95)
    assert row["ci_low"] == pytest.approx(interval.low, rel=1e-6)
    assert row["ci_high"] == pytest.approx(interval.high, rel=1e-6)


@pytest.mark.parametrize(("n", "k", "seed"), [(20, 3, 7), (40, 6, 8)])
def test_tukey_paired_model_against_scipy_tukey_hsd(n: int, k: int, seed: int) -> None:
    """scipy.stats.tukey_hsd is one-way (unpaired): its error term pools the topic effect.

    Checked here: (1) scipy's p-values are exactly the one-way model built from our ANOVA
    (MS = (S_B + S_E) / (k(n - 1)), df = k(n - 1)) through scipy.stats.studentized_range;
    (2) ours are the paired model (V_E, df = (k - 1)(n - 1)) through the same distribution;
    (3) on retrieval-like data (topics vary far more than systems) the paired test is more
    powerful: every p-value is smaller.
    """
    matrix = retrieval_like(n, k, seed)
    frame = tidy_matrix(matrix)
    table = anova(frame).set_index("source")
    ours = tukey_hsd(frame)
    scipy_result = scipy.stats.tukey_hsd(*matrix.T)
    means = matrix.mean(axis=0)
    one_way_ms = (table.loc["topic", "ss"] + table.loc["residual", "ss"]) / (k * (n - 1))
    v_e = table.loc["residual", "ms"]
    for row, (i, j) in zip(ours.to_dict("records"), pairs_of(k), strict=True):
        diff = means[i] - means[j]
        one_way = scipy.stats.studentized_range.sf(
            abs(diff) / math.sqrt(one_way_ms / n), k, k * (n - 1)
        )
        assert scipy_result.pvalue[i, j] == pytest.approx(one_way, rel=1e-6, abs=1e-12)
        paired = scipy.stats.studentized_range.sf(
            abs(diff) / math.sqrt(v_e / n), k, (k - 1) * (n - 1)
        )
        assert row["p_value"] == pytest.approx(paired, rel=1e-12)
        assert row["p_value"] < scipy_result.pvalue[i, j]
        assert row["diff"] == pytest.approx(scipy_result.statistic[i, j], rel=1e-12)
        assert (row["system"], row["base"]) == (f"s{i}", f"s{j}")
        assert row["effect_size"] == pytest.approx(diff / math.sqrt(v_e), rel=1e-12)


def test_tukey_without_topic_effect_agrees_with_scipy_up_to_df() -> None:
    # Where scipy's model applies (no topic effect: S_B = 0 after centering each topic), the
    # two tests differ only by their error df (k(n - 1) pooled vs (k - 1)(n - 1)) and by the
    # error SS divisor; scaled to the same MS, the q statistics coincide.
    n, k = 30, 4
    matrix = retrieval_like(n, k, 9)
    centered = matrix - matrix.mean(axis=1, keepdims=True) + matrix.mean()
    ours = tukey_hsd(tidy_matrix(centered))
    scipy_ci = scipy.stats.tukey_hsd(*centered.T).confidence_interval(0.95)
    scipy_half = (scipy_ci.high - scipy_ci.low)[0, 1] / 2
    q_scipy = scipy.stats.studentized_range.ppf(0.95, k, k * (n - 1))
    q_ours = scipy.stats.studentized_range.ppf(0.95, k, (k - 1) * (n - 1))
    ratio = math.sqrt(k / (k - 1))  # sqrt(V_E / MS_within) when S_B = 0
    ours_half = float((ours["ci_high"] - ours["diff"]).iloc[0])
    assert ours_half == pytest.approx(scipy_half * q_ours / q_scipy * ratio, rel=1e-6)


def test_tukey_degenerate_and_bad_input() -> None:
    matrix = np.add.outer(np.linspace(0.1, 0.5, 5), [0.0, 0.0, 0.2])  # additive: V_E = 0
    result = tukey_hsd(tidy_matrix(matrix))
    assert result["p_value"].iloc[0] == 1.0  # s0 - s1: diff exactly 0
    assert result["p_value"].iloc[1] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(InputError, match="at least two"):
        tukey_hsd(tidy_matrix(matrix[:, :1]))
    incomplete = tidy_matrix(matrix).iloc[1:]
    with pytest.raises(InputError, match="s0/q00") as caught:
        tukey_hsd(incomplete)
    assert SECRET not in str(caught.value)
    with pytest.raises(InputError, match="'alpha'"):
        tukey_hsd(tidy_matrix(matrix), alpha=1.5)


# --- randomized_tukey_hsd ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_randomized_tukey_matches_exact_enumeration(seed: int) -> None:
    # 6 topics x 3 systems on an integer grid (many exact ties): (3!)^6 = 46,656 assignments.
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 5, (6, 1)) + rng.integers(0, 4, (6, 3)) + np.array([0, 1, 2])
    exact = exact_randomized_tukey(matrix)
    b = 20_000
    result = randomized_tukey_hsd(tidy_matrix(matrix / 10), n_resamples=b, seed=seed)
    for p, reference in zip(result["p_value"], exact, strict=True):
        assert abs(p - reference) <= monte_carlo_tolerance(reference, b)


def test_randomized_tukey_with_two_systems_is_the_sign_flip_test() -> None:
    rng = np.random.default_rng(10)
    matrix = rng.integers(0, 6, (10, 2))
    exact = exact_randomized_tukey(matrix)[0]
    diffs = (matrix[:, 0] - matrix[:, 1]).astype(float)
    signs = np.array(list(itertools.product((1, -1), repeat=10)))
    assert exact == pytest.approx(np.mean(np.abs(signs @ diffs) >= abs(diffs.sum())))
    (row,) = randomized_tukey_hsd(tidy_matrix(matrix / 10), n_resamples=20_000).to_dict("records")
    assert abs(row["p_value"] - exact) <= monte_carlo_tolerance(exact, 20_000)
    two_sided = paired_test(matrix[:, 0] / 10, matrix[:, 1] / 10, n_resamples=20_000)
    assert abs(two_sided - exact) <= monte_carlo_tolerance(exact, 20_000)


def test_randomized_tukey_many_systems_path_matches_large_b_reference() -> None:
    # Nine systems use argsort permutations instead of the permutation table. Enumeration is
    # out of reach ((9!)^15 assignments), so a B = 4,000 run must agree with a B = 40,000
    # reference (another seed) within both Monte Carlo tolerances.
    matrix = retrieval_like(15, 9, 11)
    frame = tidy_matrix(matrix)
    first = randomized_tukey_hsd(frame, n_resamples=4_000, seed=1)["p_value"].to_numpy()
    reference = randomized_tukey_hsd(frame, n_resamples=40_000, seed=2)["p_value"].to_numpy()
    assert len(first) == 36
    for p, q in zip(first, reference, strict=True):
        assert abs(p - q) <= monte_carlo_tolerance(q, 4_000) + monte_carlo_tolerance(q, 40_000)


def test_randomized_tukey_reproducible_order_and_measure_independent() -> None:
    matrix = retrieval_like(25, 4, 12)
    frame = pd.concat(
        [tidy_matrix(matrix, "nDCG@10"), tidy_matrix(matrix[::-1] * 0.9, "R@5")],
        ignore_index=True,
    )
    first = randomized_tukey_hsd(frame, n_resamples=2_000, seed=4)
    assert list(first.columns) == list(TUKEY_COLUMNS)
    assert len(first) == 2 * 6
    assert first.to_csv() == randomized_tukey_hsd(frame, n_resamples=2_000, seed=4).to_csv()
    shuffled = frame.sample(frac=1.0, random_state=2)
    pd.testing.assert_frame_equal(
        randomized_tukey_hsd(shuffled, n_resamples=2_000, seed=4), first, check_exact=True
    )
    alone = randomized_tukey_hsd(frame[frame.measure == "R@5"], n_resamples=2_000, seed=4)
    pd.testing.assert_frame_equal(
        alone, first[first.measure == "R@5"].reset_index(drop=True), check_exact=True
    )
    other_seed = randomized_tukey_hsd(frame, n_resamples=2_000, seed=5)
    assert not np.array_equal(other_seed["p_value"], first["p_value"])
    assert SECRET not in first.to_csv()
    assert first["significant"].dtype == bool
    assert first["family_size"].eq(6).all()
    assert (first["test"] == "randomized-tukey-hsd").all()


def test_randomized_tukey_bad_input() -> None:
    frame = tidy_matrix(retrieval_like(5, 3, 0))
    with pytest.raises(InputError, match="'n_resamples'"):
        randomized_tukey_hsd(frame, n_resamples=0)
    with pytest.raises(InputError, match="'nDCG@5'"):
        randomized_tukey_hsd(frame, measures="nDCG@5")
    with pytest.raises(InputError, match="duplicated"):
        randomized_tukey_hsd(pd.concat([frame, frame.iloc[:1]]))
