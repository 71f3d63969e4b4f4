"""``NoResult``: the share of answerable queries that got no result (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.fixtures import load_fixture
from evalkit.measures import higher_is_better
from evalkit.run import evaluate
from evalkit.systems import FunctionRetriever


def _answers_english_only(text: str, k: int) -> list[tuple[str, float]]:
    # The tiny fixture (tests/conftest.py): English queries get c-en-1, Chinese ones nothing.
    return [("c-en-1", 1.0)] if text.isascii() else []


def test_no_result_counts_answerable_queries_left_without_results(make_fixture: Any) -> None:
    fixture = load_fixture(make_fixture())
    system = FunctionRetriever(_answers_english_only, name="english-only")
    evaluation = evaluate(fixture, [system], repeats=1)
    rows = evaluation.per_query[evaluation.per_query["measure"] == "NoResult"]
    # Answerable: q-en-1 (answered) and q-zh-1 (nothing returned); no-answer queries get no row.
    assert dict(zip(rows["query_id"], rows["value"], strict=True)) == {"q-en-1": 0.0, "q-zh-1": 1.0}
    assert rows["answerable"].all()
    summary = evaluation.summary().set_index("measure")
    assert summary.loc["NoResult", "value"] == pytest.approx(0.5)
    assert summary.loc["NoResult", "n"] == 2
    # The English no-answer query q-en-2 was answered, the Chinese one was not.
    assert summary.loc["NoAnswerFP", "value"] == pytest.approx(0.5)
    assert evaluation.to_report()["summary"]["english-only"]["NoResult"] == {"mean": 0.5, "n": 2}


def test_no_result_is_lower_is_better_for_gates() -> None:
    assert not higher_is_better("NoResult")
    assert not higher_is_better("NoAnswerFP")
    assert higher_is_better("RR@10")
