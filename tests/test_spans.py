"""Span measures on tiny hand-computed cases."""

from __future__ import annotations

import math

import pytest

from evalkit.fixtures.schema import Judgment
from evalkit.measures.spans import (
    QuerySpans,
    context_precision_recall,
    spans_apply,
    union_length,
)


@pytest.mark.parametrize(
    ("intervals", "expected"),
    [
        ([], 0),
        ([(0, 5)], 5),
        ([(0, 5), (5, 8)], 8),  # touching: 0..8
        ([(0, 5), (3, 8)], 8),  # overlapping: 0..8
        ([(2, 9), (3, 4)], 7),  # nested: the inner span adds nothing
        ([(10, 12), (0, 5), (3, 8)], 10),  # unsorted: 0..8 (8) + 10..12 (2)
        ([(4, 4)], 0),  # empty interval
    ],
)
def test_union_length(intervals: list[tuple[int, int]], expected: int) -> None:
    assert union_length(intervals) == expected


def test_context_precision_and_recall_hand_computed() -> None:
    # Query evidence: chunk a has spans [0,10) and [5,15) -> 15 chars; chunk b has [0,5) -> 5.
    spans = QuerySpans.from_intervals({"a": [(0, 10), (5, 15)], "b": [(0, 5)]})
    assert spans.total == 20
    lengths = {"a": 100, "b": 50, "c": 50}
    # Returned a and c: covered = 15 (a) + 0 (c); context = 100 + 50 = 150.
    precision, recall = context_precision_recall(spans, ["a", "c"], lengths)
    assert precision == pytest.approx(15 / 150)
    assert recall == pytest.approx(15 / 20)
    # Returned everything relevant: covered = 20, context = 150.
    precision, recall = context_precision_recall(spans, ["b", "a"], lengths)
    assert precision == pytest.approx(20 / 150)
    assert recall == 1.0


def test_context_measures_degenerate_cases() -> None:
    spans = QuerySpans.from_intervals({"a": [(0, 4)]})
    assert context_precision_recall(spans, [], {"a": 10}) == (0.0, 0.0)
    # no annotated character: not applicable (NaN), never 0.0 (issue 33)
    no_spans = QuerySpans.from_intervals({})
    assert all(math.isnan(v) for v in context_precision_recall(no_spans, ["a"], {"a": 10}))


def _judgment(chunk_id: str, grade: int, *spans: str) -> Judgment:
    return Judgment.model_validate({"chunk_id": chunk_id, "grade": grade, "spans": list(spans)})


@pytest.mark.parametrize(
    ("judgments", "applies"),
    [
        ([_judgment("a", 2, "ab")], True),
        ([_judgment("a", 2, "ab"), _judgment("b", 0)], True),  # grade 0 needs no span
        ([_judgment("a", 2)], False),  # an imported judgment: no span
        ([_judgment("a", 2, "ab"), _judgment("b", 1)], False),  # b's evidence not annotated
        ([_judgment("b", 0)], False),  # nothing relevant: recall would be 0/0
        ([], False),
    ],
)
def test_span_measures_apply_only_where_the_evidence_is_annotated(
    judgments: list[Judgment], applies: bool
) -> None:
    assert spans_apply(judgments) is applies
    text = {"a": "abcd", "b": "bcde"}
    precision, recall = context_precision_recall(
        QuerySpans.from_judgments(judgments, text), ["a", "b"], {"a": 4, "b": 4}
    )
    assert math.isnan(precision) is not applies
    assert math.isnan(recall) is not applies
    if applies:  # "ab" at 0 in a: 2 of the 8 returned characters, all of the 2 annotated
        assert (precision, recall) == (2 / 8, 1.0)
