"""The ablation table marks a system "best" only where it is strictly best: not on ties (every
system at NoAnswerFP 1.0, say), not when a group has one system."""

from __future__ import annotations

import pandas as pd

from evalkit.report.tables import ablation_table


def _per_query(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = [
        (system, f"q{i}", measure, value)
        for (system, measure), series in values.items()
        for i, value in enumerate(series)
    ]
    return pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])


def test_best_only_where_one_system_is_strictly_best() -> None:
    per_query = _per_query(
        {
            ("a", "nDCG@10"): [0.9, 0.7],
            ("b", "nDCG@10"): [0.5, 0.5],
            ("a", "NoAnswerFP"): [1.0, 1.0],  # both at the worst value: a tie, no winner
            ("b", "NoAnswerFP"): [1.0, 1.0],
        }
    )
    table = ablation_table(
        per_query, systems=["a", "b"], measures=["nDCG@10", "NoAnswerFP"], n_resamples=20
    )
    best = table.set_index(["system", "measure"])["best"]
    assert bool(best[("a", "nDCG@10")])
    assert not bool(best[("b", "nDCG@10")])
    assert not best.xs("NoAnswerFP", level="measure").any()


def test_one_system_is_never_marked_best() -> None:
    per_query = _per_query({("a", "nDCG@10"): [0.9, 0.7]})
    table = ablation_table(per_query, systems=["a"], measures=["nDCG@10"], n_resamples=20)
    assert not table["best"].any()
