"""Tests of evalkit.stats._paired(_tests) for many systems: all pairs, t details, the bootstrap
test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from stats_oracles import monte_carlo_tolerance, synthetic, tidy

from evalkit.errors import InputError
from evalkit.stats import (
    COMPARE_COLUMNS,
    adjust_pvalues,
    bootstrap_ci,
    compare,
    paired_test,
    t_interval,
)

STABLE = [c for c in COMPARE_COLUMNS if c not in ("family", "family_size", "p_adjusted")]
STABLE.remove("significant")


def exact_bootstrap_p(diffs: np.ndarray) -> float:
    """Oracle: the studentized mean-shifted bootstrap p-value over all n^n equally likely
    ordered resamples (Efron and Tibshirani 1993, Algorithm 16.2, without Monte Carlo).

    A constant resample has no spread: it counts as extreme unless it is all zeros."""
    n = diffs.size
    observed = abs(diffs.mean() / (diffs.std(ddof=1) / math.sqrt(n)))
    shifted = diffs - diffs.mean()
    grid = np.indices((n,) * n).reshape(n, -1).T  # every index tuple, n^n x n
    sample = shifted[grid]
    means = sample.mean(axis=1)
    spread = sample.std(axis=1, ddof=1)
    constant = np.ptp(sample, axis=1) == 0  # equal values, not only equal indices
    statistic = np.empty(means.size)
    statistic[~constant] = np.abs(means[~constant]) / (spread[~constant] / math.sqrt(n))
    statistic[constant] = np.where(np.abs(means[constant]) > 1e-15, np.inf, 0.0)
    return float(np.mean(statistic >= observed * (1 - 1e-9)))


# --- all pairs -----------------------------------------------------------------------------


def test_all_pairs_rows_family_and_correction() -> None:
    frame = synthetic(systems=3)  # base, sys1, sys2, sys3; two measures
    result = compare(frame, None, n_resamples=500)
    assert list(result.columns) == list(COMPARE_COLUMNS)
    pairs = list(itertools.combinations(["base", "sys1", "sys2", "sys3"], 2))
    assert list(zip(result["system"], result["base"], strict=True)) == [
        pair for pair in pairs for _ in range(2)
    ]
    assert len(result) == 6 * 2
    assert result["family_size"].eq(12).all()
    assert result["family"].iloc[0] == (
        "all 6 pairs of 4 systems x 2 measures: 12 tests, correction holm"
    )
    np.testing.assert_array_equal(
        result["p_adjusted"], adjust_pvalues(result["p_value"].to_numpy(), "holm")
    )
    np.testing.assert_allclose(
        result["diff"], result["mean"] - result["base_mean"], rtol=0, atol=1e-12
    )


def test_all_pairs_row_equals_the_same_pair_against_a_base() -> None:
    frame = synthetic(systems=3)
    everything = compare(frame, None, by="language", n_resamples=800, seed=3)
    pair = frame[frame.system.isin(["sys1", "sys3"])]
    alone = compare(pair, "sys3", by="language", n_resamples=800, seed=3)
    expected = everything[(everything.system == "sys1") & (everything.base == "sys3")]
    pd.testing.assert_frame_equal(
        alone[STABLE], expected[STABLE].reset_index(drop=True), check_exact=True
    )
    assert alone["family"].iloc[0].startswith("1 system against base 'sys3' x 2 measures")
    assert everything["family_size"].iloc[0] == 6 * 2 * 2


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("by", [None, "language"])
def test_given_pairs_equal_each_pair_compared_alone(test: str, by: str | None) -> None:
    frame = synthetic(systems=4)
    # ties and zeros: a pair with snapped differences leaves the per-system totals' path
    frame.loc[(frame.system == "sys2") & (frame.query_id < "q010"), "value"] = 0.0
    frame.loc[(frame.system == "sys4") & (frame.query_id < "q010"), "value"] = 0.0
    pairs = [("sys3", "base"), ("sys1", "sys2"), ("sys4", "sys2"), ("base", "sys4")]
    together = compare(frame, None, by=by, test=test, pairs=pairs, n_resamples=700, seed=5)
    assert list(zip(together["system"], together["base"], strict=True)) == [
        pair for pair in pairs for _ in range(len(together) // len(pairs))
    ]
    assert together["family"].iloc[0].startswith("4 given pairs of systems x 2 measures")
    for system, base in pairs:
        alone = compare(
            frame[frame.system.isin([system, base])],
            base,
            by=by,
            test=test,
            n_resamples=700,
            seed=5,
        )
        rows = together[(together.system == system) & (together.base == base)]
        pd.testing.assert_frame_equal(
            alone[STABLE], rows[STABLE].reset_index(drop=True), check_exact=True
        )


def test_given_pairs_are_checked() -> None:
    frame = synthetic(systems=2)
    with pytest.raises(InputError, match="either 'base' or 'pairs'"):
        compare(frame, "base", pairs=[("sys1", "sys2")])
    with pytest.raises(InputError, match="two different system names"):
        compare(frame, None, pairs=[("sys1", "sys1")])
    with pytest.raises(InputError, match=r"system 'sys9' of 'pairs' has no rows"):
        compare(frame, None, pairs=[("sys1", "sys9")])


def test_base_given_family_text_and_bonferroni() -> None:
    result = compare(synthetic(systems=2), "base", correction="bonferroni", n_resamples=300)
    assert set(result["base"]) == {"base"}
    assert result["family"].iloc[0] == (
        "2 systems against base 'base' x 2 measures: 4 tests, correction bonferroni"
    )
    np.testing.assert_array_equal(
        result["p_adjusted"], np.minimum(1.0, 4 * result["p_value"].to_numpy())
    )


def test_nan_p_values_stay_out_of_the_family() -> None:
    # Constant non-zero differences: the t-test p is NaN and is not counted.
    frame = tidy({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.4], "c": [0.5, 0.1, 0.9]})
    result = compare(frame, None, test="ttest")
    assert math.isnan(result["p_value"].iloc[0])  # a - b = -0.1 everywhere
    assert result["family_size"].eq(2).all()
    assert "2 tests" in result["family"].iloc[0]


def test_all_pairs_of_one_system_is_empty_with_columns() -> None:
    result = compare(tidy({"only": [0.1, 0.2]}), None)
    assert result.empty
    assert list(result.columns) == list(COMPARE_COLUMNS)
    assert result["family_size"].dtype == np.int64
    assert result["df"].dtype == np.int64


# --- t statistic, df, t interval, interval methods -----------------------------------------


def test_t_columns_agree_with_scipy() -> None:
    frame = synthetic(n_queries=23, systems=2)
    result = compare(frame, None, test="ttest", n_resamples=300)
    for row in result.to_dict("records"):
        rows = frame[frame.measure == row["measure"]]
        a = rows[rows.system == row["system"]].sort_values("query_id")["value"].to_numpy()
        b = rows[rows.system == row["base"]].sort_values("query_id")["value"].to_numpy()
        reference = scipy.stats.ttest_rel(a, b)
        assert row["t"] == pytest.approx(reference.statistic, rel=1e-12)
        assert row["df"] == reference.df == 22
        assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-12)
        interval = reference.confidence_interval(0.95)
        assert row["t_ci_low"] == pytest.approx(interval.low, rel=1e-12)
        assert row["t_ci_high"] == pytest.approx(interval.high, rel=1e-12)
        assert row["variance"] == pytest.approx(np.var(a - b, ddof=1), rel=1e-12)
        assert row["effect_size"] == pytest.approx(
            row["diff"] / math.sqrt(row["variance"]), rel=1e-12
        )
        assert row["effect_size_kind"] == "d_z"
        assert row["ci_method"] == "percentile"
        assert row["test"] == "ttest"


@pytest.mark.parametrize("interval", ["percentile", "bca", "t"])
def test_interval_parameter(interval: str) -> None:
    frame = synthetic(n_queries=30, systems=1)
    result = compare(frame, "base", interval=interval, n_resamples=2_000, confidence=0.9)
    assert (result["ci_method"] == interval).all()
    for row in result.to_dict("records"):
        assert row["ci_low"] <= row["diff"] <= row["ci_high"]
        # Every method estimates one 90% interval: within a third of the t half-width.
        half = row["t_ci_high"] - row["diff"]
        assert row["ci_low"] == pytest.approx(row["t_ci_low"], abs=half / 3)
        assert row["ci_high"] == pytest.approx(row["t_ci_high"], abs=half / 3)
    if interval == "t":
        np.testing.assert_array_equal(result["ci_low"], result["t_ci_low"])


def test_t_interval_function_golden_and_degenerate() -> None:
    # d = 1..5: mean 3, sd sqrt(2.5); t_{0.975}(4) = 2.776445 (t tables); half = 1.963243.
    low, high = t_interval([1.0, 2, 3, 4, 5])
    assert (low + high) / 2 == pytest.approx(3.0)
    assert (high - low) / 2 == pytest.approx(2.776445 * math.sqrt(2.5 / 5), rel=1e-6)
    assert t_interval([0.4, 0.4]) == (0.4, 0.4)
    assert all(math.isnan(v) for v in t_interval([0.4]))
    with pytest.raises(InputError, match="empty"):
        t_interval([])


def test_percentile_interval_is_too_narrow_at_n_8() -> None:
    # The observation: at n = 8 the percentile bootstrap interval is narrower than the
    # t interval (the bootstrap uses the plug-in variance, ddof = 0, and normal-like tails).
    values = np.array([0.1, -0.2, 0.3, 0.0, 0.25, -0.05, 0.4, 0.15])
    boot = bootstrap_ci(values, n_resamples=20_000)
    t_low, t_high = t_interval(values)
    assert (boot[1] - boot[0]) < 0.85 * (t_high - t_low)


# --- bootstrap hypothesis test -------------------------------------------------------------


@pytest.mark.parametrize("data_seed", [0, 1, 2])
def test_bootstrap_test_matches_exact_enumeration(data_seed: int) -> None:
    rng = np.random.default_rng(data_seed)
    diffs = np.round(rng.normal(0.1, 0.2, 6), 1)  # a 0.1 grid: ties among resamples
    if np.ptp(diffs) == 0:
        diffs[0] += 0.1
    exact = exact_bootstrap_p(diffs)
    b = 20_000
    p = paired_test(diffs, np.zeros(6), test="bootstrap", n_resamples=b, seed=data_seed)
    assert abs(p - exact) <= monte_carlo_tolerance(exact, b)


def test_bootstrap_test_large_sample_is_close_to_the_t_test() -> None:
    # Large-sample reference: at n = 400 the studentized bootstrap and the t-test agree to
    # within Monte Carlo error plus a small O(1/n) difference (0.01 allowed).
    rng = np.random.default_rng(7)
    a = rng.beta(2, 3, 400)
    b = np.clip(a - rng.normal(0.02, 0.2, 400), 0, 1)
    t_p = paired_test(a, b, test="ttest")
    boot = paired_test(a, b, test="bootstrap", n_resamples=20_000, seed=1)
    assert abs(boot - t_p) <= monte_carlo_tolerance(t_p, 20_000) + 0.01


def test_bootstrap_test_degenerate_reproducible_and_in_compare() -> None:
    assert paired_test([0.2, 0.3], [0.2, 0.3], test="bootstrap") == 1.0
    assert math.isnan(paired_test([0.2, 0.3], [0.1, 0.2], test="bootstrap"))
    assert math.isnan(paired_test([0.2], [0.1], test="bootstrap"))
    rng = np.random.default_rng(3)
    a, b = rng.uniform(size=30), rng.uniform(size=30)
    first = paired_test(a, b, test="bootstrap", n_resamples=3_000, seed=4)
    assert paired_test(a, b, test="bootstrap", n_resamples=3_000, seed=4) == first
    assert paired_test(a, b, test="bootstrap", n_resamples=3_000, seed=5) != first
    result = compare(synthetic(), None, test="bootstrap", n_resamples=1_000)
    assert (result["test"] == "bootstrap").all()
    assert result["p_value"].between(0, 1).all()


def test_text_groups_come_in_pandas_order_whatever_the_column_type() -> None:
    """The groups of a text ``by`` column (read from its array) are those, in the order, of a
    pandas sort: code point order, upper case before lower case, for str and object columns."""
    frame = synthetic(systems=1)
    names = ["zh", "Zu", "é", "a b", "中文", "de"]
    frame["language"] = [names[int(q[1:]) % len(names)] for q in frame["query_id"]]
    expected = sorted(pd.Series(names).drop_duplicates().sort_values().tolist())
    for column in (frame["language"].astype("str"), frame["language"].astype(object)):
        result = compare(frame.assign(language=column), "base", by="language", n_resamples=200)
        shown = result.loc[result.measure == "R@5", "language"].tolist()
        assert shown == expected == pd.Series(names).sort_values().tolist()
