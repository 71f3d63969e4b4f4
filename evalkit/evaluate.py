"""Fixture x systems -> ``Evaluation``: per-query measures, rankings, latency, failures.

Rules (the deterministic projection depends on nothing else):

- Each system is built fresh, indexes the fixture's chunks, then answers every query with
  ``search(query, k)``. Hits are deduplicated by chunk ID (first occurrence kept) and cut at
  ``k`` before any measure is computed; ranks are 1-based in the system's order.
- Ranking measures are computed by ``evalkit.measures.score`` with ``ties="given"`` over
  answerable queries only; ``NoAnswerFP`` (1.0 when a no-answer query returned anything) over
  no-answer queries only. So every row has a value: no NaN, no missing rows.
- With ``repeats >= 2`` everything runs again and the deterministic projection (rankings,
  measure values, failures; latency excluded) must be identical, else ``DeterminismError``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from evalkit.errors import DeterminismError, InputError
from evalkit.measures import aggregate, parse_measure, score
from evalkit.spans import QuerySpans, context_precision_recall
from evalkit.systems.protocol import Retriever
from evalkit.systems.reference import REFERENCE_SYSTEMS, resolve_system

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture

__all__ = ["DEFAULT_RANKING_MEASURES", "Evaluation", "evaluate"]

DEFAULT_RANKING_MEASURES: tuple[str, ...] = ("R@5", "R@10", "RR@10", "nDCG(dcg='exp-log2')@10")
NO_ANSWER_MEASURE = "NoAnswerFP"
RANKING_COLUMNS = ["system", "query_id", "rank", "chunk_id", "score", "grade"]
LATENCY_COLUMNS = ["system", "query_id", "repeat", "latency_ms"]
PER_QUERY_COLUMNS = ["system", "query_id", "language", "answerable", "measure", "value"]
FAILURE_COLUMNS = ["system", "query_id", "language", "kind", "chunk_ids"]


@dataclass(frozen=True)
class Evaluation:
    """The result of ``evaluate``. Frames are tidy; IDs are strings.

    - ``per_query``: ``system, query_id, language, answerable, measure, value``
    - ``rankings``: ``system, query_id, rank, chunk_id, score, grade`` (grade 0 when unjudged)
    - ``latency``: ``system, query_id, repeat, latency_ms``
    - ``definitions``: each system's ``definition()`` — private, never published raw
    """

    fixture: Fixture
    systems: tuple[str, ...]
    k: int
    measures: tuple[str, ...]
    per_query: pd.DataFrame
    rankings: pd.DataFrame
    latency: pd.DataFrame
    definitions: dict[str, dict[str, Any]] = field(repr=False)
    repeats: int = 2

    @property
    def deterministic(self) -> bool | None:
        """True when repeats agreed (``evaluate`` raises otherwise); None when run only once."""
        return True if self.repeats >= 2 else None

    def wide(self) -> pd.DataFrame:
        """``per_query`` with one column per measure (index: system, query_id, language,
        answerable); NaN where a measure does not apply to a query (e.g. NoAnswerFP)."""
        frame = self.per_query.pivot(
            index=["system", "query_id", "language", "answerable"],
            columns="measure",
            values="value",
        )
        return frame[[m for m in self.measures if m in frame.columns]]

    def summary(self, by: Iterable[str] = ()) -> pd.DataFrame:
        """Macro averages: columns ``system, *by, measure, value, n``.

        Ranking and span measures average over answerable queries, ``NoAnswerFP`` over
        no-answer queries (each measure only has rows for the queries it applies to).
        ``by`` adds grouping columns of ``per_query``, e.g. ``by=["language"]``.
        """
        keys = ["system", *by]
        means = aggregate(self.per_query, by=keys)
        counts = (
            self.per_query.groupby([*keys, "measure"], sort=False, observed=True)
            .size()
            .rename("n")
            .reset_index()
        )
        out = means.merge(counts, on=[*keys, "measure"], how="left", validate="one_to_one")
        return self._order(out, keys)

    def _order(self, frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        system_rank = {s: i for i, s in enumerate(self.systems)}
        measure_rank = {m: i for i, m in enumerate(self.measures)}
        sort_frame = frame.assign(
            _s=frame["system"].map(system_rank), _m=frame["measure"].map(measure_rank)
        )
        other = [k for k in keys if k != "system"]
        return (
            sort_frame.sort_values(["_s", *other, "_m"], kind="stable")
            .drop(columns=["_s", "_m"])
            .reset_index(drop=True)
        )

    def latency_summary(self) -> pd.DataFrame:
        """Per system: ``system, count, min_ms, median_ms, p95_ms, max_ms, mean_ms``."""
        rows = []
        for system in self.systems:
            values = self.latency.loc[self.latency["system"] == system, "latency_ms"].to_numpy()
            if values.size == 0:
                rows.append({"system": system, "count": 0} | dict.fromkeys(_LATENCY_STATS, 0.0))
                continue
            rows.append(
                {
                    "system": system,
                    "count": int(values.size),
                    "min_ms": float(values.min()),
                    "median_ms": float(np.median(values)),
                    "p95_ms": float(np.percentile(values, 95)),
                    "max_ms": float(values.max()),
                    "mean_ms": float(values.mean()),
                }
            )
        return pd.DataFrame(rows, columns=["system", "count", *_LATENCY_STATS])

    def to_report(self) -> dict[str, Any]:
        """The privacy-safe report dict (IDs, hashes, aggregates); see ``evalkit.report``."""
        from evalkit.report import build_report

        return build_report(self)

    @cached_property
    def _failures(self) -> pd.DataFrame:
        return _find_failures(self.fixture, self.rankings, self.systems)

    def failures(self) -> pd.DataFrame:
        """Actionable, ID-only failures: ``system, query_id, language, kind, chunk_ids``.

        Kinds: ``missed-relevant`` (answerable query with no relevant chunk in the top k;
        chunk_ids = the relevant chunks it missed), ``answered-no-answer`` (a no-answer query
        returned results; chunk_ids = what it returned), ``near-duplicate-above`` (an
        irrelevant near-duplicate outranks the relevant chunk it imitates; chunk_ids =
        ``"<near-duplicate>,<relevant>"``). chunk_ids are comma-separated.
        """
        return self._failures.copy()


_LATENCY_STATS = ["min_ms", "median_ms", "p95_ms", "max_ms", "mean_ms"]


def evaluate(
    fixture: Fixture,
    systems: Sequence[str | Retriever] | None = None,
    *,
    k: int = 10,
    repeats: int = 2,
    measures: Sequence[str] | None = None,
    progress: bool = False,
) -> Evaluation:
    """Evaluate ``systems`` (names, ``package.module:factory`` specs or instances) on ``fixture``.

    ``systems=None`` runs the five reference systems. ``measures`` are ranking measures of the
    measures engine (default: R@5, R@10, RR@10, nDCG(dcg='exp-log2')@10); the span measures
    ``ContextPrecision@k``/``ContextRecall@k`` and ``NoAnswerFP`` are always added.
    ``progress=True`` shows a progress bar (on stderr) per system and repeat.
    """
    if not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    if not isinstance(repeats, int) or repeats < 1:
        raise InputError(f"repeats must be a positive integer, got {repeats!r}")
    specs = list(systems) if systems is not None else list(REFERENCE_SYSTEMS)
    if not specs:
        raise InputError("systems is empty; name at least one system or pass None for all")
    ranking_measures = tuple(str(parse_measure(m)) for m in (measures or DEFAULT_RANKING_MEASURES))
    all_measures = (
        *ranking_measures,
        f"ContextPrecision@{k}",
        f"ContextRecall@{k}",
        NO_ANSWER_MEASURE,
    )

    rankings, latency, definitions = _run_systems(fixture, specs, k, 0, progress)
    systems_run = tuple(definitions)
    per_query = _measure(fixture, rankings, systems_run, ranking_measures, k)
    latency_frames = [latency]
    for repeat in range(1, repeats):
        again, latency, _ = _run_systems(fixture, specs, k, repeat, progress)
        again_per_query = _measure(fixture, again, systems_run, ranking_measures, k)
        # Failures are a function of rankings and fixture, so equal rankings mean equal failures.
        _check_same(rankings, per_query, again, again_per_query)
        latency_frames.append(latency)
    return Evaluation(
        fixture=fixture,
        systems=systems_run,
        k=k,
        measures=all_measures,
        per_query=per_query,
        rankings=rankings,
        latency=pd.concat(latency_frames, ignore_index=True),
        definitions=definitions,
        repeats=repeats,
    )


def _run_systems(
    fixture: Fixture, specs: Sequence[str | Retriever], k: int, repeat: int, progress: bool
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]]]:
    grades = {(q.id, j.chunk_id): j.grade for q in fixture.queries for j in q.judgments}
    known_chunks = {c.id for c in fixture.chunks}
    ranking_rows: list[tuple[str, str, int, str, float, int]] = []
    latency_rows: list[tuple[str, str, int, float]] = []
    definitions: dict[str, dict[str, Any]] = {}
    for spec in specs:
        system = resolve_system(spec)
        name = str(system.name)
        if name in definitions:
            raise InputError(f"two systems are both named {name!r}; give each a unique name")
        definitions[name] = system.definition()
        try:
            system.index(fixture.chunks)
            queries = tqdm(
                fixture.queries,
                desc=f"{name} (repeat {repeat + 1})",
                unit="query",
                disable=not progress,
                leave=False,
            )
            for query in queries:
                started = time.perf_counter_ns()
                hits = system.search(query, k)
                elapsed_ms = (time.perf_counter_ns() - started) / 1e6
                latency_rows.append((name, query.id, repeat, elapsed_ms))
                seen: set[str] = set()
                for hit in hits:
                    chunk_id, hit_score = str(hit[0]), float(hit[1])
                    if chunk_id in seen:
                        continue
                    if chunk_id not in known_chunks:
                        raise InputError(
                            f"system {name!r} returned chunk ID {chunk_id!r} for query "
                            f"{query.id!r}, which is not in fixture {fixture.meta.id!r}"
                        )
                    if not np.isfinite(hit_score):
                        raise InputError(
                            f"system {name!r} returned a non-finite score for chunk "
                            f"{chunk_id!r} on query {query.id!r}"
                        )
                    seen.add(chunk_id)
                    ranking_rows.append(
                        (
                            name,
                            query.id,
                            len(seen),
                            chunk_id,
                            hit_score,
                            grades.get((query.id, chunk_id), 0),
                        )
                    )
                    if len(seen) == k:
                        break
        finally:
            close = getattr(system, "close", None)
            if callable(close):
                close()
    rankings = pd.DataFrame(ranking_rows, columns=RANKING_COLUMNS).astype(
        {
            "system": str,
            "query_id": str,
            "rank": "int64",
            "chunk_id": str,
            "score": "float64",
            "grade": "int64",
        }
    )
    latency = pd.DataFrame(latency_rows, columns=LATENCY_COLUMNS).astype(
        {"system": str, "query_id": str, "repeat": "int64", "latency_ms": "float64"}
    )
    return rankings, latency, definitions


def _measure(
    fixture: Fixture,
    rankings: pd.DataFrame,
    systems: tuple[str, ...],
    ranking_measures: tuple[str, ...],
    k: int,
) -> pd.DataFrame:
    answerable = [q for q in fixture.queries if q.answerable]
    no_answer = [q for q in fixture.queries if not q.answerable]
    qrels = pd.DataFrame(
        [(q.id, j.chunk_id, j.grade) for q in answerable for j in q.judgments],
        columns=["query_id", "doc_id", "relevance"],
    )
    spans = {q.id: _query_spans(fixture, q) for q in answerable}
    text_length = {c.id: len(c.text) for c in fixture.chunks}
    language = {q.id: q.language for q in fixture.queries}
    frames = []
    for system in systems:
        ranking = rankings[rankings["system"] == system]
        judged = ranking[ranking["query_id"].isin(spans)]
        run = judged.rename(columns={"chunk_id": "doc_id"})[["query_id", "doc_id", "score", "rank"]]
        ranked = score(qrels, run, ranking_measures, ties="given")
        returned = ranking.groupby("query_id", sort=False)["chunk_id"].agg(list).to_dict()
        span_rows = []
        for q in answerable:
            precision, recall = context_precision_recall(
                spans[q.id], returned.get(q.id, []), text_length
            )
            span_rows += [
                (q.id, f"ContextPrecision@{k}", precision),
                (q.id, f"ContextRecall@{k}", recall),
            ]
        span_rows += [(q.id, NO_ANSWER_MEASURE, float(q.id in returned)) for q in no_answer]
        frame = pd.concat(
            [ranked, pd.DataFrame(span_rows, columns=["query_id", "measure", "value"])],
            ignore_index=True,
        )
        frames.append(frame.assign(system=system))
    per_query = pd.concat(frames, ignore_index=True)
    per_query["language"] = per_query["query_id"].map(language)
    per_query["answerable"] = per_query["measure"] != NO_ANSWER_MEASURE
    measure_order = {
        m: i
        for i, m in enumerate(
            (*ranking_measures, f"ContextPrecision@{k}", f"ContextRecall@{k}", NO_ANSWER_MEASURE)
        )
    }
    system_order = {s: i for i, s in enumerate(systems)}
    per_query = per_query.assign(
        _s=per_query["system"].map(system_order), _m=per_query["measure"].map(measure_order)
    ).sort_values(["_s", "query_id", "_m"], kind="stable")
    per_query = per_query[PER_QUERY_COLUMNS].reset_index(drop=True)
    return per_query.astype({"answerable": bool, "value": "float64"})


def _query_spans(fixture: Fixture, query: Any) -> QuerySpans:
    intervals: dict[str, list[tuple[int, int]]] = {}
    for judgment in query.judgments:
        if judgment.grade < 1:
            continue
        text = fixture.chunk(judgment.chunk_id).text
        for span in judgment.spans:
            start = span.start if span.start is not None else text.find(span.text)
            if start < 0:
                continue
            intervals.setdefault(judgment.chunk_id, []).append((start, start + len(span.text)))
    return QuerySpans.from_intervals(intervals)


def _find_failures(
    fixture: Fixture, rankings: pd.DataFrame, systems: tuple[str, ...]
) -> pd.DataFrame:
    near_duplicates = {c.id: c.near_duplicate_of for c in fixture.chunks if c.near_duplicate_of}
    by_key = {
        key: list(group["chunk_id"])
        for key, group in rankings.groupby(["system", "query_id"], sort=False)
    }
    rows: list[tuple[str, str, str, str, str]] = []
    for system in systems:
        for q in fixture.queries:
            returned = by_key.get((system, q.id), [])
            relevant = {j.chunk_id for j in q.judgments if j.grade >= 1}
            if not q.answerable:
                if returned:
                    rows.append(
                        (system, q.id, q.language, "answered-no-answer", ",".join(returned))
                    )
                continue
            if not relevant.intersection(returned):
                rows.append(
                    (system, q.id, q.language, "missed-relevant", ",".join(sorted(relevant)))
                )
            position = {c: i for i, c in enumerate(returned)}
            for chunk_id in returned:
                target = near_duplicates.get(chunk_id)
                if (
                    target in relevant
                    and chunk_id not in relevant
                    and position[chunk_id] < position.get(target, len(returned))
                ):
                    rows.append(
                        (system, q.id, q.language, "near-duplicate-above", f"{chunk_id},{target}")
                    )
    return pd.DataFrame(rows, columns=FAILURE_COLUMNS).astype(str)


def _check_same(
    rankings_a: pd.DataFrame,
    per_query_a: pd.DataFrame,
    rankings_b: pd.DataFrame,
    per_query_b: pd.DataFrame,
) -> None:
    """Raise ``DeterminismError`` naming the (system, query_id) pairs whose results differ."""
    differing: set[tuple[str, str]] = set()
    for a, b, cols in (
        (rankings_a, rankings_b, ["rank", "chunk_id", "score", "grade"]),
        (per_query_a, per_query_b, ["measure", "value"]),
    ):
        left = {
            k: g[cols].to_numpy().tolist() for k, g in a.groupby(["system", "query_id"], sort=False)
        }
        right = {
            k: g[cols].to_numpy().tolist() for k, g in b.groupby(["system", "query_id"], sort=False)
        }
        for key in left.keys() | right.keys():
            if left.get(key) != right.get(key):
                differing.add((str(key[0]), str(key[1])))
    if differing:
        pairs = sorted(differing)
        listed = ", ".join(f"{s}/{q}" for s, q in pairs[:20])
        more = f" and {len(pairs) - 20} more" if len(pairs) > 20 else ""
        raise DeterminismError(
            f"repeated runs differ for {len(pairs)} (system, query) pair(s): {listed}{more}. "
            "A system must return the same ranking for the same input; break score ties by "
            "chunk ID and avoid unseeded randomness or Python's hash().",
            differences=pairs,
        )
