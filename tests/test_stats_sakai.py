"""Textbook values: Sakai's Table 5.1 (three systems, 20 topics, nDCG@5).

Source of the data and of every expected value below: Tetsuya Sakai, *Laboratory Experiments
in Information Retrieval* (Springer, 2018), Table 5.1 and the analyses of it in the book, as
copied in ``tests/data/sakai-table-5.1/`` from ``shared/data/`` (README.md there; the CSV
files come from the test data of the elinor project, kampersanda/elinor,
test-data/sakai-book/). The published values are rounded to 4 decimals, so they are compared
within 5e-5.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.stats import anova, compare, paired_test, randomized_tukey_hsd, tukey_hsd

ROUNDING = 5e-5  # the book's values have 4 decimals
# A copy of shared/data/sakai-table-5.1 (README.md there and here: the CSV files come from
# elinor's test data, MIT or Apache-2.0), so a clone without shared/ beside it runs these too.
DATA = Path(__file__).resolve().parent / "data" / "sakai-table-5.1"


def sakai_directory() -> Path:
    """The committed copy of Sakai's Table 5.1 (``tests/data/sakai-table-5.1``)."""
    return DATA


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """The tidy frame of Table 5.1: systems X, Y, Z; query IDs Q1..Q20; measure nDCG@5."""
    frames = []
    for system in "XYZ":
        columns = pd.read_csv(sakai_directory() / f"{system}.csv", dtype={"query_id": str})
        assert list(columns.columns) == ["query_id", "ndcg@5"]
        frames.append(
            pd.DataFrame(
                {
                    "system": system,
                    "query_id": columns["query_id"],
                    "measure": "nDCG@5",
                    "value": columns["ndcg@5"],
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    assert len(frame) == 60
    return frame


def test_paired_t_test_x_minus_y(table: pd.DataFrame) -> None:
    pair = table[table["system"].isin(["X", "Y"])]
    (row,) = compare(pair, "Y", test="ttest", interval="t").to_dict("records")
    assert (row["system"], row["base"], row["n"], row["df"]) == ("X", "Y", 20, 19)
    # Sakai Table 5.1, X - Y: mean 0.0750, variance 0.0251, d_z 0.4731, t 2.1158,
    # p 0.0478, margin of error 0.0742, 95% CI [0.0008, 0.1492].
    assert row["diff"] == pytest.approx(0.0750, abs=ROUNDING)
    assert row["variance"] == pytest.approx(0.0251, abs=ROUNDING)
    assert row["effect_size"] == pytest.approx(0.4731, abs=ROUNDING)
    assert row["effect_size_kind"] == "d_z"
    assert row["t"] == pytest.approx(2.1158, abs=ROUNDING)
    assert row["p_value"] == pytest.approx(0.0478, abs=ROUNDING)
    assert row["t_ci_high"] - row["diff"] == pytest.approx(0.0742, abs=ROUNDING)
    assert row["t_ci_low"] == pytest.approx(0.0008, abs=ROUNDING)
    assert row["t_ci_high"] == pytest.approx(0.1492, abs=ROUNDING)
    assert (row["ci_method"], row["ci_low"], row["ci_high"]) == (
        "t",
        row["t_ci_low"],
        row["t_ci_high"],
    )


def test_two_way_anova(table: pd.DataFrame) -> None:
    result = anova(table).set_index("source")
    assert list(result.index) == ["system", "topic", "residual", "total"]
    # Sakai Table 5.1, two-way ANOVA without replication: S_A 0.1083, S_B 1.0293,
    # S_E 0.8317, V_E 0.0219, F_A 2.4749, F_B 2.4754, p_A 0.0976, p_B 0.0086, 95% MOE 0.0670.
    assert result.loc["system", "ss"] == pytest.approx(0.1083, abs=ROUNDING)
    assert result.loc["topic", "ss"] == pytest.approx(1.0293, abs=ROUNDING)
    assert result.loc["residual", "ss"] == pytest.approx(0.8317, abs=ROUNDING)
    assert result.loc["residual", "ms"] == pytest.approx(0.0219, abs=ROUNDING)
    assert result.loc["system", "f"] == pytest.approx(2.4749, abs=ROUNDING)
    assert result.loc["topic", "f"] == pytest.approx(2.4754, abs=ROUNDING)
    assert result.loc["system", "p_value"] == pytest.approx(0.0976, abs=ROUNDING)
    assert result.loc["topic", "p_value"] == pytest.approx(0.0086, abs=ROUNDING)
    assert (result["margin_of_error"] - 0.0670).abs().max() <= ROUNDING
    assert result["df"].tolist() == [2, 19, 38, 59]  # k - 1, n - 1, (k - 1)(n - 1), kn - 1


def test_tukey_effect_sizes(table: pd.DataFrame) -> None:
    result = tukey_hsd(table)
    assert list(zip(result["system"], result["base"], strict=True)) == [
        ("X", "Y"),
        ("X", "Z"),
        ("Y", "Z"),
    ]
    # Sakai Table 5.1, Tukey HSD effect size diff / sqrt(V_E): X-Y 0.5070, X-Z 0.6760,
    # Y-Z 0.1690.
    np.testing.assert_allclose(result["effect_size"], [0.5070, 0.6760, 0.1690], atol=ROUNDING)
    assert set(result["effect_size_kind"]) == {"diff/sqrt(V_E)"}
    randomized = randomized_tukey_hsd(table, n_resamples=200)
    np.testing.assert_array_equal(randomized["effect_size"], result["effect_size"])


def test_randomization_test_counts_ties_on_sakai_data(table: pd.DataFrame) -> None:
    # README of the data: with exact ties counted, the two-sided randomization p of X - Y over
    # all 2**20 sign patterns is 0.0659 (the published 0.0498 did not count ties). Enumerated
    # here too, on integer hundredths so that every tie is exact.
    x = table[table["system"] == "X"]["value"].to_numpy()
    y = table[table["system"] == "Y"]["value"].to_numpy()
    hundredths = np.rint((x - y) * 100).astype(np.int64)
    signs = 1 - 2 * ((np.arange(1 << 10)[:, None] >> np.arange(10)) & 1)  # 2**10 x 10
    totals = (signs @ hundredths[:10])[:, None] + (signs @ hundredths[10:])[None, :]
    exact = float(np.mean(np.abs(totals) >= abs(hundredths.sum())))  # over 2**20 patterns
    assert exact == pytest.approx(0.0659, abs=ROUNDING)
    p = paired_test(x, y, n_resamples=40_000, seed=1)
    # Monte Carlo tolerance: 4 binomial standard errors plus the +1 convention's 1/(B + 1).
    assert abs(p - exact) <= 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1 / 40_001


def test_randomized_tukey_counts_ties_on_sakai_data(table: pd.DataFrame) -> None:
    # README of the data: with ties counted the randomized Tukey HSD p-values are "about
    # 0.303, 0.108 and 0.892" (three decimals: +-0.0005 rounding, and their own Monte Carlo
    # error, taken as one more standard error at 10^5 trials); the published 0.2561, 0.1040,
    # 0.8926 did not count ties.
    b = 40_000
    result = randomized_tukey_hsd(table, n_resamples=b, seed=3)
    for p, reference in zip(result["p_value"], (0.303, 0.108, 0.892), strict=True):
        se = math.sqrt(reference * (1 - reference) / b)
        assert abs(p - reference) <= 4 * se + 1 / (b + 1) + 0.0005 + se


def test_tukey_sakai_margin_and_family(table: pd.DataFrame) -> None:
    result = tukey_hsd(table)
    assert set(result["family_size"]) == {3}
    assert all("all 3 pairs of 3 systems" in f for f in result["family"])
    # The simultaneous interval: half-width Q^{-1}_{3,38}(0.95) sqrt(V_E / 20), with
    # V_E = S_E / 38 from the ANOVA above; Q^{-1}_{3,38}(0.95) = 3.448 (tables of the
    # studentized range, k = 3, df = 38: between 3.44 at df 40 and 3.49 at df 30).
    half = (result["ci_high"] - result["diff"]).to_numpy()
    assert np.ptp(half) <= 1e-12
    v_e = 0.8316666666666667 / 38  # S_E of Table 5.1 computed exactly from the data
    assert 3.44 * math.sqrt(v_e / 20) <= half[0] <= 3.49 * math.sqrt(v_e / 20)
    x = table.pivot(index="query_id", columns="system", values="value")
    residual = x.sub(x.mean(axis=0), axis=1).sub(x.mean(axis=1), axis=0) + x.to_numpy().mean()
    assert float((residual**2).to_numpy().sum()) == pytest.approx(0.8316666666666667, rel=1e-12)
    assert list(itertools.combinations("XYZ", 2)) == list(
        zip(result["system"], result["base"], strict=True)
    )
