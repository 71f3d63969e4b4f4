"""Tests of evalkit.stats._paired_tests and evalkit.stats._paired: paired tests, bootstrap
intervals, corrections, compare, summaries."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st
from stats_oracles import SECRET, exact_sign_flip_p, monte_carlo_tolerance, synthetic, tidy

from evalkit.errors import InputError
from evalkit.stats import (
    COMPARE_COLUMNS,
    adjust_pvalues,
    bootstrap_ci,
    compare,
    paired_test,
    summarize_with_ci,
)

REPO = Path(__file__).resolve().parents[1]
# --- paired_test ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [6, 10])
@pytest.mark.parametrize("data_seed", [0, 1, 2])
def test_randomization_converges_to_exact_enumeration(n: int, data_seed: int) -> None:
    rng = np.random.default_rng(data_seed)
    a = rng.uniform(0, 1, n)
    b = a - rng.normal(0.15, 0.3, n)
    exact = exact_sign_flip_p(a - b)
    # Second oracle for the enumeration itself: scipy's exact permutation test (2**n <= 20,000).
    scipy_exact = scipy.stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.abs(np.mean(x - y, axis=axis)),
        permutation_type="samples",
        alternative="greater",
        n_resamples=np.inf,
    ).pvalue
    assert exact == pytest.approx(scipy_exact, abs=1e-12)
    p = paired_test(a, b, test="randomization", n_resamples=20_000, seed=5)
    assert abs(p - exact) <= monte_carlo_tolerance(exact, 20_000)


def test_randomization_with_tied_magnitudes_matches_enumeration() -> None:
    # Equal |d| values make many sign patterns tie with T_obs exactly; the tolerance counts them.
    a = np.array([0.3, 0.1, 0.6, 0.2, 0.5, 0.4, 0.7, 0.1])
    b = a - np.array([0.1, 0.1, -0.1, 0.1, 0.1, 0.2, -0.2, 0.1])
    exact = exact_sign_flip_p(a - b)
    p = paired_test(a, b, n_resamples=20_000, seed=0)
    assert abs(p - exact) <= monte_carlo_tolerance(exact, 20_000)


def test_randomization_plus_one_convention() -> None:
    # All 30 differences positive: only the two all-equal sign vectors reach |T_obs|
    # (probability 2 / 2**30), so with 999 resamples p is (0 + 1) / (999 + 1).
    a = np.linspace(0.5, 0.9, 30)
    assert paired_test(a, a - 0.2, n_resamples=999, seed=0) == 1 / 1000


def test_randomization_seeds_reproducible_and_close() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.uniform(size=50), rng.uniform(size=50)
    first = paired_test(a, b, n_resamples=5_000, seed=1)
    assert paired_test(a, b, n_resamples=5_000, seed=1) == first
    second = paired_test(a, b, n_resamples=5_000, seed=2)
    assert second != first
    assert abs(second - first) <= 2 * monte_carlo_tolerance(first, 5_000)


def test_ttest_and_wilcoxon_agree_with_scipy() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.uniform(size=37), rng.uniform(size=37)
    assert paired_test(a, b, test="ttest") == scipy.stats.ttest_rel(a, b).pvalue
    assert paired_test(a, b, test="wilcoxon") == scipy.stats.wilcoxon(a - b).pvalue


def test_ttest_golden() -> None:
    # d = 1..5: mean 3, sd sqrt(2.5), t = 3 / sqrt(2.5 / 5) = 4.2426..., df 4;
    # p = 2 * P(T_4 > 4.2426) from the t distribution's survival function.
    p = paired_test([2.0, 3, 4, 5, 6], [1.0, 1, 1, 1, 1], test="ttest")
    assert p == pytest.approx(2 * scipy.stats.t.sf(3 / math.sqrt(0.5), 4), rel=1e-12)


def test_wilcoxon_golden_and_zero_handling() -> None:
    # d = 1..5 all positive: W- = 0 only for the all-positive sign vector, so the exact
    # two-sided p is 2 * 1/2**5 = 0.0625. A zero difference is dropped (zero_method="wilcox").
    assert paired_test([2.0, 3, 4, 5, 6], [1.0] * 5, test="wilcoxon") == pytest.approx(0.0625)
    with_zero = paired_test([1.0, 2, 3, 4, 5, 6], [1.0] * 6, test="wilcoxon")
    assert with_zero == pytest.approx(0.0625)


@pytest.mark.parametrize("test", ["randomization", "ttest", "wilcoxon"])
def test_all_zero_differences_give_p_one(test: str) -> None:
    a = np.array([0.1, 0.5, 0.9])
    assert paired_test(a, a + 1e-15, test=test) == 1.0  # within TIE_TOLERANCE: a tie


def test_ttest_undefined_cases_are_nan() -> None:
    assert math.isnan(paired_test([1.0, 2.0], [0.5, 1.5], test="ttest"))  # constant d
    assert math.isnan(paired_test([1.0], [0.5], test="ttest"))  # one pair


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"a": [1.0, 2.0], "b": [1.0]}, "'a' has 2 values and 'b' has 1"),
        ({"a": [], "b": []}, "empty"),
        ({"a": [1.0, float("nan")], "b": [1.0, 2.0]}, "positions '1'"),
        ({"a": [1.0], "b": [1.0], "test": "t-test"}, "Did you mean 'ttest'"),
        ({"a": [1.0], "b": [1.0], "seed": -1}, "'seed' must be a non-negative int"),
        ({"a": [1.0], "b": [1.0], "n_resamples": 0}, "'n_resamples' must be at least 1"),
    ],
)
def test_paired_test_bad_input(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        paired_test(**kwargs)  # type: ignore[arg-type]


# --- adjust_pvalues ------------------------------------------------------------------------


def test_adjust_pvalues_hand_worked() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Bonferroni: 4p = 0.04, 0.16, 0.12, 0.02.
    np.testing.assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # Holm, ascending 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
    # running maximum 0.02, 0.03, 0.06, 0.06; back in input order:
    np.testing.assert_allclose(adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH, ascending times 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04; running minimum
    # from the largest: 0.02, 0.02, 0.04, 0.04; back in input order:
    np.testing.assert_allclose(adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_array_equal(adjust_pvalues(p, "none"), p)


def test_adjust_pvalues_nan_excluded_from_family() -> None:
    # R's p.adjust: m counts non-NaN values only. Holm with m = 2: 0.01 * 2, max(0.02, 0.04).
    adjusted = adjust_pvalues([0.01, float("nan"), 0.04], "holm")
    np.testing.assert_allclose(adjusted, [0.02, np.nan, 0.04])
    assert adjust_pvalues([], "bh").shape == (0,)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30), st.randoms())
def test_adjust_pvalues_properties(p: list[float], random: object) -> None:
    values = np.array(p)
    bh = adjust_pvalues(values, "bh")
    np.testing.assert_allclose(bh, scipy.stats.false_discovery_control(values), rtol=1e-12)
    holm = adjust_pvalues(values, "holm")
    bonferroni = adjust_pvalues(values, "bonferroni")
    assert np.all(values <= holm + 1e-15)
    assert np.all(holm <= bonferroni + 1e-15)
    assert np.all(bh <= holm + 1e-15)
    order = np.argsort(np.arange(values.size)[::-1])  # a fixed permutation: reversal
    for method in ("holm", "bonferroni", "bh"):
        adjusted = adjust_pvalues(values, method)
        np.testing.assert_array_equal(adjust_pvalues(values[order], method), adjusted[order])


@pytest.mark.parametrize(
    ("p", "method", "fragment"),
    [
        ([0.5, 1.5], "holm", "positions '1'"),
        ([[0.1]], "holm", "must be 1-D"),
        ([0.1], "hochberg", "unknown method"),
        ([0.1], "bonferoni", "Did you mean 'bonferroni'"),
    ],
)
def test_adjust_pvalues_bad_input(p: object, method: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        adjust_pvalues(p, method)  # type: ignore[arg-type]


# --- bootstrap_ci --------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_two_point_golden(method: str) -> None:
    # Resample means of [0, 1] are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the 2.5%
    # and 97.5% quantiles are 0 and 1; BCa has z0 = 0 and a = 0 here, so it is the same.
    assert bootstrap_ci([0.0, 1.0], method=method, n_resamples=4_000) == (0.0, 1.0)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_matches_normal_theory_on_large_sample(method: str) -> None:
    values = np.random.default_rng(11).normal(0.4, 0.2, 2_000)
    half_width = 1.959964 * values.std(ddof=1) / math.sqrt(values.size)  # z_0.975 sd/sqrt(n)
    low, high = bootstrap_ci(values, method=method, n_resamples=4_000, seed=3)
    assert low == pytest.approx(values.mean() - half_width, abs=0.1 * half_width)
    assert high == pytest.approx(values.mean() + half_width, abs=0.1 * half_width)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_simulation(method: str) -> None:
    # 400 samples of n = 50 from Beta(2, 5) (bounded and skewed like a retrieval measure;
    # true mean 2/7). At true coverage 0.95 the observed rate has binomial sd
    # sqrt(0.95 * 0.05 / 400) = 0.0109; [0.92, 0.98] is about +-2.75 sd, which also leaves room
    # for the known slight under-coverage of bootstrap intervals at n = 50.
    rng = np.random.default_rng(2024)
    covered = 0
    for trial in range(400):
        low, high = bootstrap_ci(rng.beta(2, 5, 50), n_resamples=1_000, method=method, seed=trial)
        covered += low <= 2 / 7 <= high
    assert 0.92 <= covered / 400 <= 0.98


def test_bootstrap_reproducible_and_seed_sensitive() -> None:
    values = np.random.default_rng(5).uniform(size=80)
    first = bootstrap_ci(values, seed=1)
    assert bootstrap_ci(values, seed=1) == first
    second = bootstrap_ci(values, seed=2)
    assert second != first
    assert second == pytest.approx(first, abs=0.01)


def test_bootstrap_degenerate_values() -> None:
    assert bootstrap_ci([0.25]) == (0.25, 0.25)
    assert bootstrap_ci([0.5, 0.5, 0.5], method="bca") == (0.5, 0.5)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"values": []}, "empty"),
        ({"values": [1.0, float("inf")]}, "positions '1'"),
        ({"values": [1.0], "confidence": 95}, "'confidence' must be a number in \\(0, 1\\)"),
        ({"values": [1.0], "method": "BCa"}, "Did you mean 'bca'"),
    ],
)
def test_bootstrap_bad_input(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        bootstrap_ci(**kwargs)  # type: ignore[arg-type]


# --- compare -------------------------------------------------------------------------------


def test_compare_hand_computed() -> None:
    frame = tidy({"base": [0.5, 0.2, 0.0, 1.0], "new": [0.7, 0.2, 0.1, 0.5]})
    result = compare(frame, "base", test="ttest", n_resamples=2_000)
    assert list(result.columns) == list(COMPARE_COLUMNS)
    (row,) = result.to_dict("records")
    # d = 0.2, 0, 0.1, -0.5: mean -0.05; deviations 0.25, 0.05, 0.15, -0.45; squares sum 0.29;
    # sd = sqrt(0.29 / 3) = 0.310913; d_z = -0.05 / 0.310913 = -0.160817;
    # t = -0.05 / (0.310913 / 2) = -0.321634, df 3.
    assert (row["system"], row["measure"], row["n"]) == ("new", "nDCG@10", 4)
    assert row["base_mean"] == pytest.approx(0.425)
    assert row["mean"] == pytest.approx(0.375)
    assert row["diff"] == pytest.approx(-0.05)
    assert row["effect_size"] == pytest.approx(-0.05 / math.sqrt(0.29 / 3))
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 1)
    assert row["p_value"] == pytest.approx(2 * scipy.stats.t.sf(0.05 / math.sqrt(0.29 / 12), 3))
    assert row["p_adjusted"] == row["p_value"]  # a family of one
    assert row["significant"] is False or row["significant"] == np.False_
    assert -0.5 <= row["ci_low"] <= row["diff"] <= row["ci_high"] <= 0.2


def test_compare_randomization_matches_exact_enumeration() -> None:
    rng = np.random.default_rng(8)
    base = rng.uniform(size=12)
    new = np.clip(base + rng.normal(0.08, 0.15, 12), 0, 1)
    frame = tidy({"base": list(base), "new": list(new)})
    (row,) = compare(frame, "base", n_resamples=20_000).to_dict("records")
    exact = exact_sign_flip_p(new - base)
    assert abs(row["p_value"] - exact) <= monte_carlo_tolerance(exact, 20_000)


def test_compare_pairs_by_query_id_not_row_order() -> None:
    frame = synthetic()
    shuffled = frame.sample(frac=1.0, random_state=12).reset_index(drop=True)
    expected = compare(frame, "base", test="ttest", n_resamples=500)
    base = frame[(frame.system == "base") & (frame.measure == "R@5")].sort_values("query_id")
    other = frame[(frame.system == "sys2") & (frame.measure == "R@5")].sort_values("query_id")
    reference = scipy.stats.ttest_rel(other["value"].to_numpy(), base["value"].to_numpy())
    row = expected[(expected.system == "sys2") & (expected.measure == "R@5")].iloc[0]
    assert row["p_value"] == reference.pvalue
    pd.testing.assert_frame_equal(
        compare(shuffled, "base", test="ttest", n_resamples=500), expected, check_exact=True
    )


def test_compare_byte_identical_and_row_order_invariant() -> None:
    frame = synthetic()
    first = compare(frame, "base", by="language", n_resamples=2_000, seed=7)
    second = compare(frame, "base", by="language", n_resamples=2_000, seed=7)
    assert first.to_csv() == second.to_csv()
    shuffled = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        compare(shuffled, "base", by="language", n_resamples=2_000, seed=7),
        first,
        check_exact=True,
    )


def test_compare_seed_changes_randomized_numbers_only_slightly() -> None:
    frame = synthetic()
    first = compare(frame, "base", n_resamples=4_000, seed=0)
    second = compare(frame, "base", n_resamples=4_000, seed=1)
    pd.testing.assert_series_equal(first["diff"], second["diff"], check_exact=True)
    assert not np.array_equal(first["p_value"], second["p_value"])
    for p, q in zip(first["p_value"], second["p_value"], strict=True):
        assert abs(p - q) <= 2 * monte_carlo_tolerance(p, 4_000)
    np.testing.assert_allclose(first["ci_low"], second["ci_low"], atol=0.02)


def test_compare_row_independent_of_other_systems_and_measures() -> None:
    frame = synthetic(systems=3)
    full = compare(frame, "base", n_resamples=1_000)
    subset = frame[frame.system.isin(["base", "sys2"]) & (frame.measure == "R@5")]
    alone = compare(subset, "base", n_resamples=1_000)
    family = ("family", "family_size", "p_adjusted", "significant")
    stable = [c for c in COMPARE_COLUMNS if c not in family]
    expected = full[(full.system == "sys2") & (full.measure == "R@5")][stable]
    pd.testing.assert_frame_equal(alone[stable], expected.reset_index(drop=True), check_exact=True)


def test_compare_thread_count_does_not_change_results(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        import numpy as np, pandas as pd
        sys.path.insert(0, sys.argv[1])
        from stats_oracles import synthetic
        from evalkit.stats import compare
        print(compare(synthetic(), "base", by="answerable", n_resamples=1000).to_csv())
        """
    )
    outputs = []
    for threads in ("1", "2"):
        env = dict(os.environ)
        env.update(
            dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), threads)
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(REPO / "tests")],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=tmp_path,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert "sys1" in outputs[0]


def test_compare_correction_spans_every_row() -> None:
    frame = synthetic()
    result = compare(frame, "base", by="language", correction="bonferroni", n_resamples=1_000)
    assert len(result) == 2 * 2 * 2  # systems x measures x languages
    np.testing.assert_array_equal(
        result["p_adjusted"], np.minimum(1.0, 8 * result["p_value"].to_numpy())
    )
    holm = compare(frame, "base", by="language", alpha=0.1, n_resamples=1_000)
    np.testing.assert_array_equal(
        holm["p_adjusted"], adjust_pvalues(holm["p_value"].to_numpy(), "holm")
    )
    np.testing.assert_array_equal(holm["significant"], holm["p_adjusted"] <= 0.1)


def test_compare_sorting_groups_and_dtypes() -> None:
    frame = synthetic()
    result = compare(frame, "base", by=["language", "answerable"], n_resamples=200)
    assert list(result.columns) == [
        "system",
        "base",
        "measure",
        "language",
        "answerable",
        *COMPARE_COLUMNS[3:],
    ]
    keys = list(result[["system", "measure", "language", "answerable"]].itertuples(index=False))
    assert keys == sorted(keys)
    assert "base" not in set(result["system"])
    assert result["answerable"].dtype == bool
    assert result["significant"].dtype == bool
    for column in ("n", "wins", "ties", "losses"):
        assert result[column].dtype == np.int64
    assert (result["wins"] + result["ties"] + result["losses"] == result["n"]).all()
    totals = result.groupby(["system", "measure"])["n"].sum()
    assert (totals == 40).all()


def test_compare_measure_selection() -> None:
    frame = synthetic()
    result = compare(frame, "base", ["R@5"], n_resamples=200)
    assert set(result["measure"]) == {"R@5"}
    assert list(compare(frame, "base", n_resamples=200)["measure"]) == ["R@5", "nDCG@10"] * 2


@pytest.mark.parametrize("test", ["randomization", "ttest", "wilcoxon"])
def test_compare_identical_systems(test: str) -> None:
    values = [0.1, 0.4, 0.4, 0.9]
    (row,) = compare(tidy({"a": values, "b": values}), "a", test=test).to_dict("records")
    assert (row["diff"], row["ci_low"], row["ci_high"], row["effect_size"]) == (0, 0, 0, 0)
    assert (row["wins"], row["ties"], row["losses"], row["p_value"]) == (0, 4, 0, 1.0)


def test_compare_only_base_gives_empty_frame_with_columns() -> None:
    result = compare(tidy({"base": [0.1, 0.2]}), "base")
    assert result.empty
    assert list(result.columns) == list(COMPARE_COLUMNS)
    assert result["n"].dtype == np.int64


def test_compare_does_not_modify_input() -> None:
    frame = synthetic()
    before = frame.copy(deep=True)
    compare(frame, "base", by="language", n_resamples=200)
    summarize_with_ci(frame, n_resamples=200)
    pd.testing.assert_frame_equal(frame, before, check_exact=True)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=3, max_size=25))
def test_compare_swapping_base_mirrors_result(pairs: list[tuple[float, float]]) -> None:
    frame = tidy({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]})
    for test in ("ttest", "wilcoxon"):
        forward = compare(frame, "a", test=test, n_resamples=100).iloc[0]
        backward = compare(frame, "b", test=test, n_resamples=100).iloc[0]
        assert backward["diff"] == pytest.approx(-forward["diff"], abs=1e-12)
        assert (backward["wins"], backward["losses"]) == (forward["losses"], forward["wins"])
        assert backward["ties"] == forward["ties"]
        np.testing.assert_allclose(backward["p_value"], forward["p_value"], rtol=1e-9)


def _bad_frames() -> list[tuple[str, pd.DataFrame, dict[str, object], list[str]]]:
    frame = synthetic(n_queries=6)
    missing_query = frame.drop(
        index=frame.index[(frame.system == "sys1") & (frame.query_id == "q004")][:1]
    )
    duplicated = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    with_nan = frame.copy()
    with_nan.loc[7, "value"] = np.nan
    relabelled = frame.copy()
    relabelled.loc[(relabelled.system == "sys2") & (relabelled.query_id == "q001"), "language"] = (
        "xx"
    )
    text_values = frame.copy()
    text_values["value"] = text_values["value"].astype(str)
    return [
        ("no base", frame, {"base": "bsae"}, ["'bsae'", "Did you mean 'base'"]),
        ("no column", frame.drop(columns="measure"), {"base": "base"}, ["'measure'"]),
        ("no by column", frame, {"base": "base", "by": "region"}, ["'region'"]),
        ("missing query", missing_query, {"base": "base"}, ["'sys1'", "'nDCG@10'", "'q004'"]),
        ("duplicate", duplicated, {"base": "base"}, ["duplicated", "base/q003/nDCG@10"]),
        ("nan", with_nan, {"base": "base"}, ["NaN", "base/q001/R@5"]),
        ("measure", frame, {"base": "base", "measures": ["nDCG@5"]}, ["'nDCG@5'", "'nDCG@10'"]),
        ("attribute", relabelled, {"base": "base", "by": "language"}, ["'language'", "'q001'"]),
        ("text values", text_values, {"base": "base"}, ["'value'", "real numbers"]),
        ("test name", frame, {"base": "base", "test": "wilcox"}, ["Did you mean 'wilcoxon'"]),
        ("correction", frame, {"base": "base", "correction": "BH"}, ["unknown correction"]),
        ("alpha", frame, {"base": "base", "alpha": 5}, ["'alpha'"]),
        ("by clash", frame, {"base": "base", "by": "system"}, ["'by' cannot name"]),
    ]


@pytest.mark.parametrize(
    ("frame", "kwargs", "fragments"),
    [pytest.param(f, k, m, id=name) for name, f, k, m in _bad_frames()],
)
def test_compare_bad_input(
    frame: pd.DataFrame, kwargs: dict[str, object], fragments: list[str]
) -> None:
    with pytest.raises(InputError) as caught:
        compare(frame, n_resamples=50, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message
    assert SECRET not in message


def test_outputs_carry_no_fixture_text() -> None:
    frame = synthetic()
    assert SECRET not in compare(frame, "base", by="language", n_resamples=200).to_csv()
    assert SECRET not in summarize_with_ci(frame, n_resamples=200).to_csv()


# --- summarize_with_ci ---------------------------------------------------------------------


def test_summarize_with_ci_means_and_shape() -> None:
    frame = synthetic()
    result = summarize_with_ci(frame, n_resamples=1_000)
    assert list(result.columns) == ["system", "measure", "n", "mean", "ci_low", "ci_high"]
    expected = frame.groupby(["system", "measure"])["value"].agg(["size", "mean"]).reset_index()
    np.testing.assert_array_equal(result[["system", "measure"]], expected[["system", "measure"]])
    np.testing.assert_array_equal(result["n"], expected["size"])
    np.testing.assert_allclose(result["mean"], expected["mean"], rtol=1e-12)
    assert (result["ci_low"] <= result["mean"]).all()
    assert (result["mean"] <= result["ci_high"]).all()


def test_summarize_with_ci_by_language_and_grouping_invariance() -> None:
    frame = synthetic()
    by = ("system", "language", "measure")
    result = summarize_with_ci(frame, by=by, n_resamples=1_000, seed=4)
    assert list(result.columns) == [*by, "n", "mean", "ci_low", "ci_high"]
    assert len(result) == 3 * 2 * 2
    shuffled = frame.sample(frac=1.0, random_state=3)
    pd.testing.assert_frame_equal(
        summarize_with_ci(shuffled, by=by, n_resamples=1_000, seed=4), result, check_exact=True
    )
    one_group = frame[(frame.system == "sys1") & (frame.language == "de")]
    alone = summarize_with_ci(one_group, by=by, n_resamples=1_000, seed=4)
    expected = result[(result.system == "sys1") & (result.language == "de")]
    pd.testing.assert_frame_equal(alone, expected.reset_index(drop=True), check_exact=True)


def test_summarize_with_ci_bca_and_bool_groups() -> None:
    frame = synthetic()
    result = summarize_with_ci(frame, by=("answerable",), method="bca", n_resamples=1_000)
    assert result["answerable"].tolist() == [False, True]
    assert result["answerable"].dtype == bool
    assert result["n"].sum() == len(frame)


def test_summarize_with_ci_constant_group() -> None:
    frame = tidy({"a": [0.5, 0.5, 0.5]})
    (row,) = summarize_with_ci(frame).to_dict("records")
    assert (row["n"], row["mean"], row["ci_low"], row["ci_high"]) == (3, 0.5, 0.5, 0.5)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"by": ("system", "region")}, "'region'"),
        ({"by": ()}, "'by' is empty"),
        ({"by": ("value",)}, "'by' cannot name"),
        ({"method": "basic"}, "unknown method"),
    ],
)
def test_summarize_with_ci_bad_input(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        summarize_with_ci(synthetic(n_queries=5), **kwargs)  # type: ignore[arg-type]
