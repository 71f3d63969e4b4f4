"""What a gate summary explains (issue 34): the worst queries of a failing check, and the
changes against the baseline per language where a language's change differs from the overall
one. Expected values are computed by hand from the tiny reports below."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.gates import Gates, check_gates, language_changes, worst_queries


def report(overall: float, en: float, zh: float, per_query: dict[str, float]) -> dict[str, Any]:
    def cell(value: float) -> dict[str, Any]:
        return {"RR@10": {"mean": value, "n": 2}}

    return {
        "schema": "evalkit.report/1",
        "settings": {"k": 10, "measures": ["RR@10"]},
        "systems": ["my-system"],
        "summary": {"my-system": cell(overall)},
        "summaryByLanguage": {"my-system": {"en": cell(en), "zh": cell(zh)}},
        "perQuery": {"my-system": {q: {"RR@10": v} for q, v in per_query.items()}},
        "failures": [],
    }


BEFORE = {"q-en-1": 1.0, "q-en-2": 0.5, "q-zh-1": 1.0, "q-zh-2": 0.5}
AFTER = {"q-en-1": 1.0, "q-en-2": 0.5, "q-zh-1": 0.1, "q-zh-2": 0.25}
SPEC = Gates.model_validate({"schema": "evalkit.gates/1", "baseline": {"tolerance": 0.02}})


def per_query_frame(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": "my-system",
            "query_id": list(values),
            "measure": "RR@10",
            "value": list(values.values()),
            "language": [q.split("-")[1] for q in values],
        }
    )


def test_worst_queries_are_those_that_lost_most_against_the_baseline() -> None:
    baseline = report(0.75, 0.75, 0.75, BEFORE)
    current = report(0.4625, 0.75, 0.175, AFTER)
    results = check_gates(current, SPEC, baseline)
    failing = results[results["status"] == "fail"]
    assert list(failing["language"]) == ["all", "zh"]  # en is unchanged
    worst = worst_queries(results, per_query_frame(AFTER), baseline, n=3)
    by_language = dict(zip(results["language"], worst, strict=True))
    # losses: q-zh-1 1.0 -> 0.1 (0.9), q-zh-2 0.5 -> 0.25 (0.25); the en queries lost nothing
    assert by_language == {"all": ["q-zh-1", "q-zh-2"], "en": [], "zh": ["q-zh-1", "q-zh-2"]}


def test_language_rows_appear_where_a_language_differs_from_the_overall_change() -> None:
    baseline = report(0.75, 0.75, 0.75, BEFORE)
    current = report(0.4625, 0.75, 0.175, AFTER)
    assert SPEC.baseline is not None
    rows = language_changes(current, baseline, SPEC.baseline, ["my-system"])
    assert list(zip(rows["language"], rows["change"], strict=True)) == [
        ("all", "worse"),  # 0.4625 < 0.75 - 0.02
        ("en", "same"),  # differs from the overall change: the rows are shown
        ("zh", "worse"),
    ]
    # a uniform change (every language as the overall one) needs no per-language rows
    uniform = report(0.5, 0.5, 0.5, AFTER)
    assert language_changes(uniform, baseline, SPEC.baseline, ["my-system"]).empty
