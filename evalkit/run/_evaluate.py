"""Fixture x systems -> ``Evaluation``: per-query measures, rankings, latency, failures.

Rules (the deterministic projection depends on nothing else):

- Each system is built fresh, indexes the fixture's chunks, then answers every query with
  ``search(query, k)``. Hits are deduplicated by chunk ID (first occurrence kept) and cut at
  ``k`` before any measure is computed; ranks are 1-based in the system's order.
- Ranking measures are computed by ``evalkit.measures.score`` with ``ties="given"`` over
  answerable queries only, and so is ``NoResult`` (1.0 when an answerable query returned
  nothing: the price of abstaining); ``NoAnswerFP`` (1.0 when a no-answer query returned
  anything) over no-answer queries only. So every row has a value, with one exception:
- ``ContextPrecision@k``/``ContextRecall@k`` have a row for every answerable query, NaN ("n/a")
  where the query's evidence is not annotated with spans (:func:`evalkit.measures.spans.
  spans_apply`: no judgment of grade >= 1, or one without a span). On a collection imported
  from TREC, BEIR or SMART (``requires_spans: false``, no spans) every value is NaN; on a
  fixture with ``requires_spans: true`` none is. Summaries average the other queries and count
  them in ``n``; a mean over no value is NaN. Reports print "n/a"; the JSON report leaves such
  values out (:mod:`evalkit.run.report_json`); gates, statistics and the verdict skip them.
- Each system's ``name`` must pass :func:`evalkit.safety.names.check_name` against its own
  ``definition()`` (an ID; no path, endpoint, credential or private definition value), else
  ``InputError`` naming the system's position, not its name.
- ``concurrency > 1`` sends up to that many ``search`` calls at once to each system that says
  it is safe (``concurrent_searches = True``, e.g. ``http:`` systems); others are called one at
  a time. Each call's latency is measured around that call; results are put back in query
  order, so the output does not depend on completion order.
- A system with ``latency_measured = False`` (a precomputed ``run:`` file) gets NaN latency:
  ``latency_summary`` marks it ``measured = False`` and reports say "not measured".
- A system with a ``bind_queries(queries)`` method is given the fixture's queries before
  searching (a ``run:`` file checks its query IDs there).
- A system whose ``definition()`` has ``documentLevel: true`` (``run:PATH?ids=documents``)
  ranks documents, each as its best chunk for the query: its ranking measures are computed
  against one judgment per document, at its best chunk with the highest grade of its chunks
  (:func:`evalkit.measures.documents.document_judgments`), so they equal document-level
  evaluation with max-aggregated qrels. Its span measures are computed as for any system, on
  chunks chosen knowing the judgments: optimistic (an upper bound).
- A system with a ``confidence(query, hits)`` method (:mod:`evalkit.systems.protocol`; a
  JSONL run with ``confidence`` fields, an ``http:`` system with a ``confidence`` pointer)
  declares each answered query's confidence; it must declare one for every query it answers
  or for none (``InputError`` naming the system and a query otherwise).
  :meth:`Evaluation.confidences` gives every query's confidence and its source: declared, or
  the top result's score.
- With ``repeats >= 2`` every system runs again; its definition hash (``canonical_hash`` of
  ``definition()``) and its rankings (chunk IDs, ranks, scores, grades, declared confidences)
  must be identical, else
  ``DeterminismError`` naming the system. Measure values and failures are pure functions of the
  rankings, and the report's definition hashes of the definitions, so this checks the whole
  deterministic projection; latency is excluded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd

from evalkit.errors import DeterminismError, InputError
from evalkit.measures import aggregate, parse_measure, score
from evalkit.measures.documents import DOCUMENT_LEVEL_KEY, document_judgments
from evalkit.measures.names import SUMMARY_MEASURE_NAMES, summary_measure_problem
from evalkit.measures.spans import QuerySpans, context_precision_recall
from evalkit.results import CONFIDENCE_DECLARED, CONFIDENCE_TOP_SCORE
from evalkit.run._systems_run import (
    CONFIDENCE_COLUMN,
    RANKING_COLUMNS,
    SystemsRun,
    run_systems as run_systems_here,
)
from evalkit.safety.arguments import path_argument
from evalkit.safety.canonical import canonical_hash
from evalkit.safety.names import safe_id

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.run.drilldown import QueryExplanation
    from evalkit.safety.privacy import PrivateText
    from evalkit.systems.protocol import Retriever

__all__ = ["DEFAULT_RANKING_MEASURES", "Evaluation", "default_measures", "evaluate"]

DEFAULT_RANKING_MEASURES: tuple[str, ...] = ("R@5", "R@10", "RR@10", "nDCG(dcg='exp-log2')@10")
NO_ANSWER_MEASURE = "NoAnswerFP"
NO_RESULT_MEASURE = "NoResult"
PER_QUERY_COLUMNS = ["system", "query_id", "language", "answerable", "measure", "value"]
FAILURE_COLUMNS = ["system", "query_id", "language", "kind", "chunk_ids"]
DECLARED_COLUMNS = ["system", "query_id", "confidence"]
CONFIDENCE_COLUMNS = ["system", "query_id", "language", "answerable", "confidence", "source"]


def _no_declared() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": pd.Series(dtype=object),
            "query_id": pd.Series(dtype=object),
            "confidence": pd.Series(dtype="float64"),
        }
    )


@dataclass(frozen=True)
class Evaluation:
    """The result of ``evaluate``. Frames are tidy; IDs are strings.

    - ``per_query``: ``system, query_id, language`` (str), ``answerable`` (bool), ``measure``
      (str), ``value`` (float64; NaN where a span measure does not apply)
    - ``rankings``: ``system, query_id`` (str), ``rank`` (int64, 1-based), ``chunk_id`` (str),
      ``score`` (float64), ``grade`` (int64; 0 when unjudged: :meth:`explain` tells the two
      apart)
    - ``latency``: ``system, query_id`` (str), ``repeat`` (int64), ``latency_ms`` (float64)

    The ID and name columns stay strings (not categorical), so frames of two evaluations
    concatenate and compare without aligning categories; the frames of :meth:`explain` are
    categorical where their values are a known, ordered set (systems, measures, kinds).
    It displays itself in JupyterLab (``_repr_html_``: systems, k, measures, determinism and
    the mean of every measure per system; :mod:`evalkit.run.display`).
    - ``definitions``: each system's ``definition()`` — private, never published raw
    - ``notes``: per system with a ``notes()`` method (a ``run:`` file), its ID-and-count-only
      notes, e.g. ``{"latency": "not measured", "queriesMissing": 3, ...}``
    - ``declared_confidence``: ``system, query_id`` (str), ``confidence`` (float64): the
      confidence each system that declares one declared for each query it answered (module
      docstring); :meth:`confidences` gives every query's
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
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    declared_confidence: pd.DataFrame = field(default_factory=_no_declared, repr=False)

    def confidence_sources(self) -> dict[str, str]:
        """``{system: "declared" | "top score"}``: where each system's confidences come from
        (:data:`~evalkit.results.CONFIDENCE_DECLARED`: the system declared them)."""
        declared = set(self.declared_confidence["system"])
        return {
            s: CONFIDENCE_DECLARED if s in declared else CONFIDENCE_TOP_SCORE for s in self.systems
        }

    def confidences(self) -> pd.DataFrame:
        """Each query's confidence, what abstention thresholds compare: columns ``system,
        query_id, language`` (str), ``answerable`` (bool), ``confidence`` (float64: the
        declared one, else the top result's score; ``-inf`` for a query without a result,
        never answered) and ``source`` (``"declared"`` or ``"top score"``, per system). One
        row per (system, query), in ``per_query`` order."""
        queries = self.per_query[["system", "query_id", "language", "answerable"]]
        queries = queries.drop_duplicates(["system", "query_id"])
        top = self.rankings.loc[self.rankings["rank"] == 1, ["system", "query_id", "score"]]
        frame = queries.merge(top, on=["system", "query_id"], how="left")
        sources = frame["system"].map(self.confidence_sources())
        declared = self.declared_confidence
        if len(declared):
            frame = frame.merge(declared, on=["system", "query_id"], how="left")
            frame["score"] = frame["score"].where(
                sources != CONFIDENCE_DECLARED, frame["confidence"]
            )
        frame["confidence"] = frame["score"].fillna(-np.inf).astype("float64")
        frame["source"] = sources.astype(object)
        return frame[CONFIDENCE_COLUMNS].reset_index(drop=True)

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

    def summary(self, by: str | Iterable[str] = ()) -> pd.DataFrame:
        """Macro averages: columns ``system, *by, measure, value, n``.

        Ranking and span measures average over answerable queries, ``NoAnswerFP`` over
        no-answer queries (each measure only has rows for the queries it applies to). ``n``
        counts the values averaged: a span measure's NaN ("n/a") rows are not counted, and its
        mean is NaN when every row is NaN.
        ``by`` adds grouping columns of ``per_query``, e.g. ``by=["language"]`` (or one
        column name, ``by="language"``).
        """
        by = [by] if isinstance(by, str) else list(by)
        if len(set(by)) < len(by) or "system" in by:
            raise InputError(
                f"summary(by=...) names a column twice ({', '.join(map(repr, by))}); give "
                "each grouping column once (system is always one)"
            )
        keys = ["system", *by]
        means = aggregate(self.per_query, by=keys)
        counts = (
            self.per_query.groupby([*keys, "measure"], sort=False, observed=True)["value"]
            .count()  # values, not rows: NaN (n/a) is not counted
            .rename("n")
            .reset_index()
        )
        out = means.merge(counts, on=[*keys, "measure"], how="left", validate="one_to_one")
        return _in_order(out, self.systems, self.measures, by=list(by))

    def latency_summary(self) -> pd.DataFrame:
        """Per system: ``system, count, min_ms, median_ms, p95_ms, max_ms, mean_ms, measured``.

        ``count`` is the number of calls; a system whose latency was not measured (a ``run:``
        file) has ``measured`` False and NaN statistics, never invented numbers."""
        latency = self.latency.groupby("system", sort=False)["latency_ms"]
        summary = pd.DataFrame(
            {
                "count": latency.size(),
                "min_ms": latency.min(),
                "median_ms": latency.median(),
                "p95_ms": latency.quantile(0.95),  # linear interpolation, as numpy's default
                "max_ms": latency.max(),
                "mean_ms": latency.mean(),
            }
        )
        summary = summary.reindex(list(self.systems))
        summary["measured"] = summary["mean_ms"].notna()
        summary["count"] = summary["count"].fillna(0)
        summary = summary.astype({"count": "int64", "measured": bool})
        return summary.rename_axis("system").reset_index()

    def private_texts(self) -> list[PrivateText]:
        """What the leak scan looks for in this evaluation's artifacts: the fixture's text and
        the systems' private definition values (:func:`evalkit.safety.privacy.private_texts`)."""
        from evalkit.safety.privacy import private_texts

        return private_texts(self.fixture, self.definitions)

    def to_report(self) -> dict[str, Any]:
        """The privacy-safe report dict (IDs, hashes, aggregates); see
        ``evalkit.run.report_json``."""
        from evalkit.run.report_json import build_report

        return build_report(self)

    def trec_run(self) -> str:
        """Every system's ranking as the text of one TREC run file, six columns a line:
        ``query_id Q0 chunk_id rank score system`` (the system's name is the run tag), systems
        in evaluation order, queries in fixture order, ranks ascending; scores as Python's
        shortest round-trip ``repr``. trec_eval, ir_measures and ``evalkit trec-eval`` read it."""
        rows = self.rankings
        lines = [
            f"{query} Q0 {chunk} {rank} {score!r} {system}"
            for system, query, rank, chunk, score in zip(
                rows["system"],
                rows["query_id"],
                rows["rank"].tolist(),
                rows["chunk_id"],
                rows["score"].tolist(),
                strict=True,
            )
        ]
        return "".join(line + "\n" for line in lines)

    @cached_property
    def _failures(self) -> pd.DataFrame:
        return _find_failures(self.fixture, self.rankings, self.systems)

    def failures(self) -> pd.DataFrame:
        """Actionable, ID-only failures: ``system, query_id, language, kind, chunk_ids``.

        Kinds: ``missed-relevant`` (answerable query with no relevant chunk in the top k;
        chunk_ids = the relevant chunks it missed, sorted), ``answered-no-answer`` (a no-answer
        query returned results; chunk_ids = what it returned, in rank order),
        ``near-duplicate-above`` (an irrelevant near-duplicate outranks the relevant chunk it
        imitates; chunk_ids = ``[<near-duplicate>, <relevant>]``).

        Dtypes: ``system, query_id, language, kind`` are str (object); ``chunk_ids`` holds a
        list of str per row (``frame.explode("chunk_ids")`` gives one row per chunk). Each call
        returns a new frame with new lists.
        """
        frame = self._failures.copy()
        frame["chunk_ids"] = [list(ids) for ids in frame["chunk_ids"]]
        return frame

    def explain(
        self, query_id: str, systems: Sequence[str] | None = None, *, redact: bool = False
    ) -> QueryExplanation:
        """The drill-down of one query, side by side for ``systems`` (default: all): each
        system's top k with grades and the chunk text, answer spans highlighted; the judged
        chunks and where each system ranked them; the query's measures and failures. It
        displays itself as HTML in JupyterLab and gives frames (``.rankings``,
        ``.judgments``, ``.measures``, ``.failures``): :mod:`evalkit.run.drilldown`.
        ``redact=True`` shows IDs and hashes only; otherwise the output holds fixture text
        and says so: never export it."""
        from evalkit.run.drilldown import explain_query

        return explain_query(self, query_id, systems, redact=redact)

    @classmethod
    def from_rankings(
        cls,
        fixture: Fixture | str | os.PathLike[str],
        rankings: pd.DataFrame,
        *,
        k: int | None = None,
        measures: Sequence[str] | None = None,
    ) -> Evaluation:
        """An evaluation of rankings made elsewhere, scored as :func:`evaluate` scores
        (``repeats=1``, no latency, empty definitions).

        ``rankings`` has columns ``query_id``, ``chunk_id`` (or ``doc_id``, as
        :func:`~evalkit.formats.read_run` reads) and ``score``; optionally ``system``
        (default ``run``), ``rank`` (what orders each system's rows for a query; default:
        the row order) and ``confidence`` (a query's declared confidence, the same on each of
        its rows; NaN or absent: none declared, as :func:`~evalkit.formats.read_run_file`
        reads it with ``with_confidence=True``). Ranks are renumbered 1, 2, ... in that order.
        Rows past ``k`` (default: the deepest rank) are cut; rows of queries the fixture
        does not have are left out. ``measures`` as in :func:`evaluate`.
        """
        from evalkit.fixtures import Fixture, load_fixture

        directory = path_argument(
            fixture, "fixture", function="from_rankings", also=(Fixture,), what="a Fixture"
        )
        fixture = load_fixture(directory) if directory is not None else cast("Fixture", fixture)
        frame = (
            rankings.rename(columns={"doc_id": "chunk_id"})
            if "chunk_id" not in rankings
            else rankings
        )
        missing = [c for c in ("query_id", "chunk_id", "score") if c not in frame.columns]
        if missing:
            raise InputError(
                f"rankings lack column(s) {', '.join(missing)}; expected query_id, chunk_id "
                "(or doc_id), score and optionally system and rank"
            )
        frame = frame.assign(
            system=frame["system"].astype(str) if "system" in frame.columns else "run",
            query_id=frame["query_id"].astype(str),
            chunk_id=frame["chunk_id"].astype(str),
            score=frame["score"].astype("float64"),
        )
        frame = frame[frame["query_id"].isin(fixture.queries_by_id)]
        if "rank" in frame.columns:  # orders the rows; renumbered 1, 2, ... below
            frame = frame.sort_values(["system", "query_id", "rank"], kind="stable")
        frame = frame.assign(rank=frame.groupby(["system", "query_id"], sort=False).cumcount() + 1)
        k = int(frame["rank"].max()) if k is None and len(frame) else (k or 10)
        frame = frame[frame["rank"] <= k]
        grades = {(q.id, j.chunk_id): j.grade for q in fixture.queries for j in q.judgments}
        frame = frame.assign(
            rank=frame["rank"].astype("int64"),
            grade=[
                grades.get(key, 0) for key in zip(frame["query_id"], frame["chunk_id"], strict=True)
            ],
        )
        systems = tuple(dict.fromkeys(frame["system"]))
        order = {q.id: i for i, q in enumerate(fixture.queries)}
        frame = (
            frame.assign(_s=frame["system"].map(systems.index), _q=frame["query_id"].map(order))
            .sort_values(["_s", "_q", "rank"], kind="stable")
            .reset_index(drop=True)
        )
        if CONFIDENCE_COLUMN not in frame.columns:
            frame[CONFIDENCE_COLUMN] = np.nan
        frame, declared = _split_confidence(
            frame.astype({CONFIDENCE_COLUMN: "float64"})[[*RANKING_COLUMNS, CONFIDENCE_COLUMN]],
            systems,
        )
        ranking_measures, all_measures = _measure_lists(measures, k)
        definitions: dict[str, dict[str, Any]] = {s: {} for s in systems}
        per_query = _measure(
            fixture,
            frame,
            systems,
            k,
            ranking_measures=ranking_measures,
            measures=all_measures,
            definitions=definitions,
        )
        latency = pd.DataFrame(
            {
                "system": pd.Series(dtype=object),
                "query_id": pd.Series(dtype=object),
                "repeat": pd.Series(dtype="int64"),
                "latency_ms": pd.Series(dtype="float64"),
            }
        )
        return cls(
            fixture=fixture,
            systems=systems,
            k=k,
            measures=all_measures,
            per_query=per_query,
            rankings=frame,
            latency=latency,
            definitions=definitions,
            repeats=1,
            declared_confidence=declared,
        )

    def __repr__(self) -> str:
        return (
            f"<Evaluation of fixture {self.fixture.id!r}: {len(self.systems)} system(s) "
            f"({', '.join(self.systems)}), k={self.k}, {len(self.measures)} measures, "
            f"{self.fixture.queries.__len__()} queries, {_determinism(self)}>"
        )

    def _repr_html_(self) -> str:
        from evalkit.run.display import evaluation_html

        return evaluation_html(self)


def _determinism(evaluation: Evaluation) -> str:
    """How the evaluation's determinism was checked, in words."""
    if evaluation.deterministic:
        return f"deterministic over {evaluation.repeats} repeats"
    return "determinism not checked (one run)"


def default_measures(k: int) -> tuple[str, ...]:
    """The default ranking measures at cutoff ``k``: ``R@5`` (only when ``k >= 5``), then
    ``R@k``, ``RR@k`` and ``nDCG(dcg='exp-log2')@k`` (``DEFAULT_RANKING_MEASURES`` at k=10)."""
    names = (*(("R@5",) if k >= 5 else ()), f"R@{k}", f"RR@{k}", f"nDCG(dcg='exp-log2')@{k}")
    return tuple(dict.fromkeys(names))  # k == 5: R@5 once


def _measure_lists(
    measures: Sequence[str] | None, k: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ranking measures scored (``measures`` checked, or the defaults at ``k``) and every
    measure of an evaluation: those, the span measures at ``k`` and the two no-answer ones."""
    ranking = _checked_measures(measures or default_measures(k), k)
    spans = (f"ContextPrecision@{k}", f"ContextRecall@{k}")
    return ranking, (*ranking, *spans, NO_RESULT_MEASURE, NO_ANSWER_MEASURE)


def _checked_measures(measures: Sequence[str], k: int) -> tuple[str, ...]:
    """Canonical names of ``measures``; a cutoff above ``k`` is an ``InputError`` saying why."""
    parsed = [parse_measure(m) for m in measures]
    summaries = [str(m) for m in parsed if m.name in SUMMARY_MEASURE_NAMES]
    if summaries:
        raise InputError(summary_measure_problem(summaries[0]))
    above = [str(m) for m in parsed if m.cutoff is not None and m.cutoff > k]
    if above:
        raise InputError(
            f"measure(s) {', '.join(above)} have a cutoff above k={k}: each system returns at "
            f"most k={k} results, so a deeper cutoff would silently score only the top {k}. "
            f"Lower the cutoff to at most {k} or raise k"
        )
    return tuple(dict.fromkeys(str(m) for m in parsed))


def evaluate(
    fixture: Fixture | str | os.PathLike[str],
    systems: Sequence[str | Retriever] | None = None,
    *,
    k: int = 10,
    repeats: int = 2,
    measures: Sequence[str] | None = None,
    progress: bool = False,
    concurrency: int = 1,
    client: Any = None,
    workers: int = 1,
) -> Evaluation:
    """Evaluate ``systems`` (names, ``package.module:factory`` specs or instances) on ``fixture``
    (a loaded :class:`~evalkit.fixtures.Fixture`, or its directory as ``str`` or ``PathLike``).

    ``systems=None`` runs the five reference systems. ``measures`` are ranking measures of the
    measures engine with cutoffs of at most ``k`` (default: :func:`default_measures`, at k=10
    R@5, R@10, RR@10, nDCG(dcg='exp-log2')@10); the span measures
    ``ContextPrecision@k``/``ContextRecall@k``, ``NoResult`` and ``NoAnswerFP`` are always
    added. ``progress=True`` shows progress bars on stderr (counts only, no names): one per
    indexing pass of a reference system, and one over the queries per system and repeat.
    ``concurrency`` is the most ``search`` calls in flight at once for systems that allow it
    (module docs). ``client`` (a ``dask.distributed.Client`` or a scheduler address) runs the
    systems on that Dask cluster, with the same result (:mod:`evalkit.run.distributed`).
    ``workers > 1`` runs the systems and repeats in up to that many processes of this machine,
    with the same result but latency measured beside the other workers
    (``_parallel``).
    """
    from evalkit.fixtures import Fixture, load_fixture
    from evalkit.systems.reference import REFERENCE_SYSTEMS

    directory = path_argument(
        fixture, "fixture", function="evaluate", also=(Fixture,), what="a Fixture"
    )
    fixture = load_fixture(directory) if directory is not None else cast("Fixture", fixture)
    for option, count in (
        ("k", k),
        ("repeats", repeats),
        ("concurrency", concurrency),
        ("workers", workers),
    ):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"{option} must be a positive integer, got {count!r}")
    if workers > 1 and client is not None:
        raise InputError("give either client (a Dask cluster) or workers (this machine), not both")
    for name, value in (("systems", systems), ("measures", measures)):
        if isinstance(value, str):  # it would be read as a list of its characters
            shown = repr(value) if safe_id(value) else "'...'"
            raise InputError(
                f"{name} must be a list of names, got one string; write {name}=[{shown}]"
            )
    specs = list(systems) if systems is not None else list(REFERENCE_SYSTEMS)
    if not specs:
        raise InputError("systems is empty; name at least one system or pass None for all")
    if measures is not None and not measures:
        raise InputError(
            "measures is empty; name at least one measure or pass None for the defaults"
        )
    ranking_measures, all_measures = _measure_lists(measures, k)

    notes: dict[str, dict[str, Any]] = {}
    run_systems: Callable[..., tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]]]]
    run_systems = run_systems_here
    if client is not None:
        from functools import partial

        from evalkit.run.distributed import connect, run_systems as run_on_cluster

        run_systems = partial(run_on_cluster, connect(client))

    ran: list[SystemsRun] | None = None  # every repeat, when forked workers ran them
    if workers > 1 and len(specs) * repeats > 1:  # (workers > 1 means no client: see above)
        from evalkit.run._parallel import fork_available, run_repeats

        if fork_available():
            ran = run_repeats(fixture, specs, k, repeats, concurrency, workers, progress)

    def run(repeat: int, filled: dict[str, dict[str, Any]]) -> Any:
        """Repeat ``repeat`` of every system: rankings, latency, definitions; its notes go
        into ``filled``."""
        if ran is None:
            return run_systems(fixture, specs, k, repeat, progress, concurrency, filled)
        rankings, latency, definitions, noted = ran[repeat]
        filled.update(noted)
        return rankings, latency, definitions

    rankings, latency, definitions = run(0, notes)
    latency_frames = [latency]
    for repeat in range(1, repeats):
        again, latency, definitions_again = run(repeat, {})
        # Measure values and failures are pure functions of the rankings and the fixture, so
        # equal definitions and rankings (IDs, ranks, scores, grades) mean an equal
        # deterministic projection.
        _check_same_definitions(definitions, definitions_again, repeat)
        _check_same(rankings, again)
        latency_frames.append(latency)
    systems_run = tuple(definitions)
    rankings, declared = _split_confidence(rankings, systems_run)
    per_query = _measure(
        fixture,
        rankings,
        systems_run,
        k,
        ranking_measures=ranking_measures,
        measures=all_measures,
        definitions=definitions,
    )
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
        notes=notes,
        declared_confidence=declared,
    )


def _split_confidence(
    rankings: pd.DataFrame, systems: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rankings without the confidence column, declared confidences)``: each query's
    confidence (its rank-1 row's) for the systems that declared one. A system that declared
    a confidence for some queries it answered and not for others, or two values for one
    query, is an ``InputError`` naming it and the first such query."""
    values = rankings[CONFIDENCE_COLUMN]
    stripped = rankings.drop(columns=CONFIDENCE_COLUMN)
    if values.isna().all():
        return stripped, _no_declared()
    spread = rankings.groupby(["system", "query_id"], sort=False)[CONFIDENCE_COLUMN].nunique(
        dropna=False
    )
    mixed = spread[spread > 1]
    if len(mixed):
        system, query_id = mixed.index[0]
        raise InputError(
            f"system {system!r} declared more than one confidence for query {query_id!r}; a "
            "confidence belongs to the query: give one value for all its results"
        )
    top = rankings.loc[rankings["rank"] == 1, ["system", "query_id", CONFIDENCE_COLUMN]]
    for system in systems:
        mine = top[top["system"] == system]
        missing = mine[mine[CONFIDENCE_COLUMN].isna()]
        if 0 < len(missing) < len(mine):
            raise InputError(
                f"system {system!r} declared a confidence for {len(mine) - len(missing)} of the "
                f"{len(mine)} queries it answered, not for query {missing['query_id'].iloc[0]!r} "
                f"(and {len(missing) - 1} more); declare one for every query it answers, or for "
                "none (then its top result's score is the confidence)"
            )
    declared = top[top[CONFIDENCE_COLUMN].notna()].reset_index(drop=True)
    return stripped, declared[DECLARED_COLUMNS].astype({"confidence": "float64"})


def _measure(
    fixture: Fixture,
    rankings: pd.DataFrame,
    systems: tuple[str, ...],
    k: int,
    *,
    ranking_measures: tuple[str, ...],
    measures: tuple[str, ...],
    definitions: dict[str, dict[str, Any]],
) -> pd.DataFrame:
    """The tidy per-query frame; ``measures`` (ranking, span, no-answer) orders its rows;
    ``definitions`` says which systems rank documents (module docstring)."""
    answerable = [q for q in fixture.queries if q.answerable]
    no_answer = [q for q in fixture.queries if not q.answerable]
    qrels = pd.DataFrame(
        [(q.id, j.chunk_id, j.grade) for q in answerable for j in q.judgments],
        columns=["query_id", "doc_id", "relevance"],
    )
    document_qrels: pd.DataFrame | None = None  # for systems that rank documents
    if any(definitions.get(s, {}).get(DOCUMENT_LEVEL_KEY) is True for s in systems):
        document_of = {c.id: c.document_id for c in fixture.chunks}
        order = [c.id for c in fixture.chunks]
        document_qrels = pd.DataFrame(
            [
                (q.id, chunk_id, grade)
                for q in answerable
                for chunk_id, grade in document_judgments(q.judgments, document_of, order).values()
            ],
            columns=["query_id", "doc_id", "relevance"],
        )
    chunk_text = {c.id: c.text for c in fixture.chunks}
    spans = {q.id: QuerySpans.from_judgments(q.judgments, chunk_text) for q in answerable}
    text_length = {chunk_id: len(text) for chunk_id, text in chunk_text.items()}
    language = {q.id: q.language for q in fixture.queries}
    frames = []
    for system in systems:
        ranking = rankings[rankings["system"] == system]
        judged = ranking[ranking["query_id"].isin(spans)]
        run = judged.rename(columns={"chunk_id": "doc_id"})[["query_id", "doc_id", "score", "rank"]]
        by_document = definitions.get(system, {}).get(DOCUMENT_LEVEL_KEY) is True
        judged_by = document_qrels if by_document and document_qrels is not None else qrels
        ranked = score(judged_by, run, ranking_measures, ties="given")
        returned = _in_rank_order(ranking["query_id"].tolist(), ranking["chunk_id"].tolist())
        span_rows = []
        for q in answerable:
            precision, recall = context_precision_recall(
                spans[q.id], returned.get(q.id, []), text_length
            )
            span_rows += [
                (q.id, f"ContextPrecision@{k}", precision),
                (q.id, f"ContextRecall@{k}", recall),
                (q.id, NO_RESULT_MEASURE, float(q.id not in returned)),
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
    per_query = _in_order(per_query, systems, measures, by=["query_id"])[PER_QUERY_COLUMNS]
    return per_query.astype({"answerable": bool, "value": "float64"})


def _in_order(
    frame: pd.DataFrame, systems: Sequence[str], measures: Sequence[str], *, by: list[str]
) -> pd.DataFrame:
    """``frame`` sorted by system (evaluation order), then ``by``, then measure (given order)."""
    system_rank = {s: i for i, s in enumerate(systems)}
    measure_rank = {m: i for i, m in enumerate(measures)}
    keyed = frame.assign(_s=frame["system"].map(system_rank), _m=frame["measure"].map(measure_rank))
    return (
        keyed.sort_values(["_s", *by, "_m"], kind="stable")
        .drop(columns=["_s", "_m"])
        .reset_index(drop=True)
    )


K = TypeVar("K")


def _in_rank_order(keys: Iterable[K], chunk_ids: list[str]) -> dict[K, list[str]]:
    """Each key's chunk IDs, in the order of the rows (rank order: rankings are sorted by
    system, query and rank); ``keys``: each row's key, e.g. its query ID."""
    grouped: dict[K, list[str]] = {}
    for key, chunk_id in zip(keys, chunk_ids, strict=True):
        grouped.setdefault(key, []).append(chunk_id)
    return grouped


def _find_failures(
    fixture: Fixture, rankings: pd.DataFrame, systems: tuple[str, ...]
) -> pd.DataFrame:
    near_duplicates = {c.id: c.near_duplicate_of for c in fixture.chunks if c.near_duplicate_of}
    by_key = _in_rank_order(
        zip(rankings["system"].tolist(), rankings["query_id"].tolist(), strict=True),
        rankings["chunk_id"].tolist(),
    )
    rows: list[tuple[str, str, str, str, tuple[str, ...]]] = []
    for system in systems:
        for q in fixture.queries:
            returned = by_key.get((system, q.id), [])
            relevant = {j.chunk_id for j in q.judgments if j.grade >= 1}
            if not q.answerable:
                if returned:
                    rows.append((system, q.id, q.language, "answered-no-answer", tuple(returned)))
                continue
            if not relevant.intersection(returned):
                rows.append((system, q.id, q.language, "missed-relevant", tuple(sorted(relevant))))
            # only the returned near-duplicates can be one above its relevant original
            above = [c for c in returned if c in near_duplicates] if near_duplicates else []
            position = {c: i for i, c in enumerate(returned)} if above else {}
            for chunk_id in above:
                target = near_duplicates.get(chunk_id)
                if (
                    target in relevant
                    and chunk_id not in relevant
                    and position[chunk_id] < position.get(target, len(returned))
                ):
                    rows.append(
                        (system, q.id, q.language, "near-duplicate-above", (chunk_id, target))
                    )
    frame = pd.DataFrame(rows, columns=FAILURE_COLUMNS)
    return frame.astype(dict.fromkeys(FAILURE_COLUMNS[:-1], str))


def _check_same_definitions(
    first: dict[str, dict[str, Any]], again: dict[str, dict[str, Any]], repeat: int
) -> None:
    """Raise ``DeterminismError`` naming the systems whose definition hash changed."""
    changed = [
        name
        for name in first
        if name not in again or canonical_hash(first[name]) != canonical_hash(again[name])
    ]
    changed += [name for name in again if name not in first]
    if changed:
        raise DeterminismError(
            f"the definition of system(s) {', '.join(map(repr, changed))} changed between "
            f"repeat 1 and repeat {repeat + 1} (its definition() hash differs; the values are "
            "not shown). definition() must describe the configuration and nothing else: no "
            "timestamps, counters, random seeds drawn at run time or object addresses; "
            "otherwise every baseline goes stale on every run",
            differences=[(name, "") for name in changed],
        )


def _check_same(rankings: pd.DataFrame, again: pd.DataFrame) -> None:
    """Raise ``DeterminismError`` naming the (system, query_id) pairs whose rankings differ."""
    columns = ["rank", "chunk_id", "score", "grade", CONFIDENCE_COLUMN]
    if rankings.reset_index(drop=True).equals(again.reset_index(drop=True)):
        return  # identical frames (the usual case): no need to compare pair by pair
    left, right = (
        {
            key: group[columns].astype(object).where(group[columns].notna(), None).values.tolist()
            for key, group in frame.groupby(["system", "query_id"], sort=False)
        }
        for frame in (rankings, again)
    )
    pairs = sorted(
        (str(s), str(q))
        for s, q in left.keys() | right.keys()
        if left.get((s, q)) != right.get((s, q))
    )
    if pairs:
        listed = ", ".join(f"{s}/{q}" for s, q in pairs[:20])
        more = f" and {len(pairs) - 20} more" if len(pairs) > 20 else ""
        raise DeterminismError(
            f"repeated runs differ for {len(pairs)} (system, query) pair(s): {listed}{more}. "
            "A system must return the same ranking for the same input; break score ties by "
            "chunk ID and avoid unseeded randomness or Python's hash().",
            differences=pairs,
        )
