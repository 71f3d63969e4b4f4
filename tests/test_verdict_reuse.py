"""Section 6 of the report shows the verdict's comparisons instead of computing them again:
they must be exactly what ``paired_comparisons`` computes for the same settings."""

from __future__ import annotations

import pandas as pd

from evalkit.fixtures import generate_fixture
from evalkit.report.tables import ordered_comparisons, paired_comparisons
from evalkit.report.verdict import build_verdict
from evalkit.run import evaluate


def test_the_verdicts_comparisons_are_the_paired_comparisons() -> None:
    evaluation = evaluate(
        generate_fixture(4, documents=12, queries=10), ["lexical", "token-hash", "hybrid"]
    )
    systems, measures = list(evaluation.systems), list(evaluation.measures)
    outcome = build_verdict(evaluation, None, base="token-hash", n_resamples=300, seed=3)
    expected = paired_comparisons(
        evaluation.per_query,
        "token-hash",
        systems=systems,
        measures=measures,
        n_resamples=300,
        seed=3,
    )
    assert len(expected) == 2 * len(measures)
    shown = ordered_comparisons(outcome.comparisons, systems=systems, measures=measures)
    pd.testing.assert_frame_equal(shown, expected, check_exact=True)
