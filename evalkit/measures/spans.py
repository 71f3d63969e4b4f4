"""Character-span measures: how much of the returned context is annotated answer evidence.

For one query and one ranking (deduplicated by chunk ID, cut at k):

- ``covered`` = characters of returned chunks that lie inside the union of the query's annotated
  spans on that chunk (overlapping or nested spans are unioned, so nothing counts twice);
- ``ContextPrecision@k`` = covered / all characters of the returned chunks' text
  (0.0 when nothing is returned);
- ``ContextRecall@k`` = covered / all annotated span characters of the query.

**When they do not apply.** Both are defined for a query only when its evidence is annotated:
it has at least one judgment of grade >= 1 and *every* such judgment carries at least one span
(:func:`spans_apply`). Otherwise both are NaN ("n/a"), never 0.0: a collection imported from
TREC, BEIR or SMART (``requires_spans: false``, judgments without spans) has no span
measures at all, and in a fixture that annotates only some relevant judgments, the queries with
an unannotated relevant chunk are left out (their covered characters and their recall
denominator would both miss that chunk's evidence). A fixture with ``requires_spans: true``
(the validator requires spans on every judgment of grade >= 1) always has them for every
answerable query that has a relevant judgment.

A span's position is its stored ``start``/``end`` offsets when present, otherwise its first
occurrence in the chunk text (the fixture validator guarantees it occurs).

The four measures :func:`evalkit.run.evaluate` computes from a fixture are declared here: the
span measures, and ``NoAnswerFP`` and ``NoResult`` over the queries' ``answerable`` flag;
:func:`evalkit.measures.score` refuses them (they need a fixture, not qrels and a run).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from evalkit.measures._catalog import declare

__all__ = ["QuerySpans", "context_precision_recall", "spans_apply", "union_length"]

declare(
    "ContextPrecision",
    "answer-span characters / returned characters",
    __name__,
    cutoff="required",
    needs="fixture",
)
declare(
    "ContextRecall",
    "answer-span characters returned / all span chars",
    __name__,
    cutoff="required",
    needs="fixture",
)
declare(
    "NoAnswerFP",
    "1 if a no-answer query returned anything, else 0",
    __name__,
    higher_is_better=False,
    needs="fixture",
)
declare(
    "NoResult",
    "1 if an answerable query returned nothing, else 0",
    __name__,
    higher_is_better=False,
    needs="fixture",
)

Interval = tuple[int, int]


class SpanLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int | None: ...


class JudgmentLike(Protocol):
    """What span measures read from a judgment (``evalkit.fixtures.Judgment`` satisfies it)."""

    @property
    def chunk_id(self) -> str: ...
    @property
    def grade(self) -> int: ...
    @property
    def spans(self) -> Sequence[SpanLike]: ...


def union_length(intervals: Iterable[Interval]) -> int:
    """Total length of the union of half-open ``[start, end)`` intervals.

    >>> union_length([(0, 5), (3, 8), (10, 12)])
    10
    """
    total = 0
    current_start = current_end = -1
    for start, end in sorted(intervals):
        if start > current_end:
            total += max(0, current_end - current_start)
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    return total + max(0, current_end - current_start)


@dataclass(frozen=True)
class QuerySpans:
    """Annotated evidence of one query: merged span characters per judged chunk."""

    covered_by_chunk: Mapping[str, int]

    @property
    def total(self) -> int:
        """All annotated span characters of the query."""
        return sum(self.covered_by_chunk.values())

    @classmethod
    def from_intervals(cls, intervals_by_chunk: Mapping[str, Sequence[Interval]]) -> QuerySpans:
        return cls({c: union_length(iv) for c, iv in intervals_by_chunk.items() if iv})

    @classmethod
    def from_judgments(
        cls, judgments: Iterable[JudgmentLike], chunk_text: Mapping[str, str]
    ) -> QuerySpans:
        """The evidence of a query's judgments of grade >= 1 (positions: module docstring);
        empty (no characters: the measures are NaN) when :func:`spans_apply` is false."""
        judgments = list(judgments)
        if not spans_apply(judgments):
            return cls({})
        intervals: dict[str, list[Interval]] = {}
        for judgment in judgments:
            if judgment.grade < 1:
                continue
            text = chunk_text[judgment.chunk_id]
            for span in judgment.spans:
                start = span.start if span.start is not None else text.find(span.text)
                if start >= 0:
                    intervals.setdefault(judgment.chunk_id, []).append(
                        (start, start + len(span.text))
                    )
        return cls.from_intervals(intervals)


def spans_apply(judgments: Iterable[JudgmentLike]) -> bool:
    """True when span measures apply to a query with these judgments: at least one of grade
    >= 1, and every judgment of grade >= 1 has a span (module docstring)."""
    relevant = [j for j in judgments if j.grade >= 1]
    return bool(relevant) and all(j.spans for j in relevant)


def context_precision_recall(
    spans: QuerySpans, returned: Sequence[str], text_length: Mapping[str, int]
) -> tuple[float, float]:
    """``(ContextPrecision, ContextRecall)`` of the returned chunk IDs (already deduplicated);
    ``(nan, nan)`` when ``spans`` holds no annotated character (the measures do not apply)."""
    context = sum(text_length[c] for c in returned)
    covered = sum(spans.covered_by_chunk.get(c, 0) for c in returned)
    if not spans.total:
        return math.nan, math.nan
    precision = covered / context if context else 0.0
    recall = covered / spans.total
    return precision, recall
