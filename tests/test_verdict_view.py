"""The verdict as a reader sees it: the badge says PASS or FAIL in words with the counts, the
changes are coloured with their arrows kept, and a too-small fixture says it cannot detect the
differences it shows. The minimum detectable difference is checked against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import TTestPower

from evalkit.report.verdict_view import (
    BETTER_COLOR,
    WORSE_COLOR,
    detection_note,
    style_changes,
    verdict_badge,
)
from evalkit.stats import minimum_detectable_difference


@pytest.mark.parametrize("n", [2, 3, 5, 10, 50, 400])
def test_the_minimum_detectable_difference_is_statsmodels_power_solution(n: int) -> None:
    diffs = np.random.default_rng(n).normal(0.02, 0.1, size=n)
    # statsmodels solves the same noncentral-t power equation for the standardized effect
    effect = TTestPower().solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8)
    expected = effect * diffs.std(ddof=1)
    assert minimum_detectable_difference(diffs) == pytest.approx(expected, rel=1e-6)


def test_degenerate_differences() -> None:
    assert minimum_detectable_difference([0.3]) == np.inf
    assert minimum_detectable_difference([0.1, 0.1, 0.1]) == 0.0


def _per_query(base: list[float], other: list[float]) -> pd.DataFrame:
    rows = [("base", f"q{i}", "nDCG@10", v) for i, v in enumerate(base)]
    rows += [("other", f"q{i}", "nDCG@10", v) for i, v in enumerate(other)]
    return pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])


def test_five_queries_say_they_cannot_detect_the_difference() -> None:
    per_query = _per_query([0.2, 0.9, 0.4, 0.7, 0.1], [0.3, 0.6, 0.5, 0.9, 0.2])
    note = detection_note(
        per_query, base="base", systems=["base", "other"], measure="nDCG@10", alpha=0.05
    )
    assert note is not None
    assert "with 5 queries" in note
    assert "inconclusive" in note


def test_many_queries_with_a_real_difference_get_no_note() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, size=200)
    per_query = _per_query(list(base), list(np.clip(base + 0.2, 0, 1)))
    assert (
        detection_note(
            per_query, base="base", systems=["base", "other"], measure="nDCG@10", alpha=0.05
        )
        is None
    )


class _Gates:
    def __init__(self, gated: bool, passed: bool) -> None:
        self.gated, self.passed = gated, passed
        self.gates_total, self.gates_checks = 3, 5
        self.gates_headline = (
            "FAIL: 1 of 3 evaluated check(s) failed; 3 of 5 checks evaluated, 2 not evaluated"
            if not passed
            else "PASS: all 3 evaluated check(s) passed; 3 of 5 checks evaluated"
        )


def test_the_badge_says_its_verdict_in_words_and_counts() -> None:
    failed = verdict_badge(_Gates(gated=True, passed=False))  # type: ignore[arg-type]
    assert ">FAIL<" in failed
    assert WORSE_COLOR in failed
    assert "3 of 5 checks evaluated" in failed
    passed = verdict_badge(_Gates(gated=True, passed=True))  # type: ignore[arg-type]
    assert ">PASS<" in passed
    assert BETTER_COLOR in passed


def test_changes_are_coloured_and_keep_their_arrows() -> None:
    matrix = pd.DataFrame({"system": ["a"], "nDCG@10": ["▲ +0.120"], "RR@10": ["▼ -0.050"]})
    html = style_changes(matrix).to_html()
    assert "▲ +0.120" in html
    assert "▼ -0.050" in html
    assert BETTER_COLOR in html
    assert WORSE_COLOR in html
