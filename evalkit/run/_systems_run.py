"""One repeat of some systems over a fixture: the loop that :func:`evalkit.run.evaluate`
runs in process, and the pieces its forked (``_parallel``) and Dask
(:mod:`evalkit.run.distributed`) runners share, so neither imports the evaluation itself.

Each system is built, indexes the fixture's chunks and answers every query; hits are
deduplicated by chunk ID and cut at ``k`` (:func:`deduplicated`). A run is a :data:`SystemsRun`:
``rankings`` (columns :data:`RANKING_COLUMNS` and :data:`CONFIDENCE_COLUMN`, the confidence a
system declares for a query, so it travels with the rankings through every runner and
their repeats are compared whole), ``latency`` (:data:`LATENCY_COLUMNS`), the
systems' definitions and their notes.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from evalkit.errors import EvalkitError, InputError, portable_error
from evalkit.safety.interrupts import deferred
from evalkit.safety.names import check_name, safe_id
from evalkit.systems.progress import indexing_progress
from evalkit.systems.protocol import (
    declared_confidence,
    hits_of,
    provide_aliases,
    running_user_code,
)

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.systems.protocol import Retriever

__all__ = [
    "CONFIDENCE_COLUMN",
    "LATENCY_COLUMNS",
    "RANKING_COLUMNS",
    "SystemsRun",
    "close_system",
    "combine_runs",
    "deduplicated",
    "run_one_system",
    "run_systems",
]

RANKING_COLUMNS = ["system", "query_id", "rank", "chunk_id", "score", "grade"]
CONFIDENCE_COLUMN = "confidence"
"""The last column of a run's rankings: the query's declared confidence on each of its rows
(NaN: none declared); :func:`evalkit.run.evaluate` moves it to ``Evaluation.confidence``."""
LATENCY_COLUMNS = ["system", "query_id", "repeat", "latency_ms"]

_SEE_IN_PYTHON = "call it in Python to see the message"


def _timed(system: Any, query: Any, k: int, name: str) -> tuple[list[Any], float, float]:
    """``(hits, elapsed ms, declared confidence)`` of one ``search`` call of system ``name``.
    The time covers the call (and running a returned generator to its end: the system's own
    work) and the system's optional ``confidence(query, hits)``
    (:func:`~evalkit.systems.protocol.declared_confidence`; NaN when it declares none), not
    evalkit's check of the hits (:func:`~evalkit.systems.protocol.hits_of`). A search that
    raises is a :class:`SystemFailedError` (the exception's message is not shown), one that
    returns no sequence of hits an ``InputError``."""
    who = f"system {name!r}"
    with running_user_code(who, f"in search(query {query.id!r}, k={k})", _SEE_IN_PYTHON):
        started = time.perf_counter_ns()
        result = system.search(query, k)
        if isinstance(result, Iterator):
            result = list(result)
        elapsed = time.perf_counter_ns() - started
        hits = hits_of(result, who, query.id)
        started = time.perf_counter_ns()
        declared = declared_confidence(system, query, hits, who)
        elapsed += time.perf_counter_ns() - started
    return hits, elapsed / 1e6, np.nan if declared is None else declared


def _search_all(
    system: Retriever, queries: Iterable[Any], k: int, concurrency: int, name: str
) -> Iterable[tuple[Any, list[Any], float, float]]:
    """``(query, hits, elapsed ms, confidence)`` per query, in query order, whatever the
    completion order."""
    if concurrency <= 1 or not getattr(system, "concurrent_searches", False):
        for query in queries:
            yield (query, *_timed(system, query, k, name))
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evalkit-search") as pool:
        listed = list(queries)
        futures = [pool.submit(_timed, system, query, k, name) for query in listed]
        try:
            for query, future in zip(listed, futures, strict=True):
                yield (query, *future.result())
        finally:
            for future in futures:
                future.cancel()


def run_systems(  # noqa: PLR0917 - called positionally by evaluate and run_one_system
    fixture: Fixture,
    specs: Sequence[str | Retriever],
    k: int,
    repeat: int,
    progress: bool,
    concurrency: int = 1,
    notes: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]]]:
    from evalkit.systems.text import shared_term_lists

    # the systems of one repeat that tokenize the same chunk texts (lexical, token-hash) share
    # the term lists; the next repeat tokenizes them again, as it builds every index again
    with shared_term_lists():
        return _run_systems(fixture, specs, k, repeat, progress, concurrency, notes)


def _run_systems(  # noqa: PLR0917 - run_systems' arguments, in its order
    fixture: Fixture,
    specs: Sequence[str | Retriever],
    k: int,
    repeat: int,
    progress: bool,
    concurrency: int,
    notes: dict[str, dict[str, Any]] | None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]]]:
    """:func:`run_systems`' loop."""
    # the systems are loaded when they run, not when results are read (evalkit.systems docs)
    from evalkit.systems.reference import resolve_system

    judged = {q.id: {j.chunk_id: j.grade for j in q.judgments} for q in fixture.queries}
    ranked_rows = _RankedColumns()
    latency_rows: list[tuple[str, str, int, float]] = []
    definitions: dict[str, dict[str, Any]] = {}
    for position, spec in enumerate(specs, start=1):
        where = f"system #{position} of {len(specs)}"
        system = resolve_system(spec, where=where)
        try:
            with running_user_code(where, "in use_aliases() or definition()", _SEE_IN_PYTHON):
                provide_aliases(system, fixture.aliases)  # the fixture's aliases.yaml, or None
                definition = system.definition()
            name = check_name(
                getattr(system, "name", None), kind="system", where=where, definition=definition
            )
        except BaseException:
            close_system(system)
            raise
        if name in definitions:
            close_system(system)
            raise InputError(f"two systems are both named {name!r}; give each a unique name")
        definitions[name] = definition
        try:
            with (
                indexing_progress(progress),
                running_user_code(f"system {name!r}", "in index(chunks)", _SEE_IN_PYTHON),
            ):
                system.index(fixture.chunks)  # indexing bars (counts only), when asked
                bind = getattr(system, "bind_queries", None)
                if callable(bind):
                    bind(fixture.queries)
            measured = bool(getattr(system, "latency_measured", True))
            queries = tqdm(
                fixture.queries,
                desc=f"system {position}/{len(specs)} repeat {repeat + 1}",  # counts, no name
                unit="query",
                disable=not progress,
                leave=False,
            )
            searched = _search_all(system, queries, k, concurrency, name)
            for query, hits, elapsed_ms, declared in searched:
                latency_rows.append((name, query.id, repeat, elapsed_ms if measured else np.nan))
                ranked = deduplicated(name, query.id, hits, k, fixture)
                ranked_rows.add(name, query.id, ranked, judged.get(query.id, {}), declared)
            system_notes = getattr(system, "notes", None)
            if notes is not None and callable(system_notes):
                notes[name] = dict(system_notes())
        finally:
            close_system(system)
    rankings = ranked_rows.frame().astype(
        {
            "system": str,
            "query_id": str,
            "rank": "int64",
            "chunk_id": str,
            "score": "float64",
            "grade": "int64",
            CONFIDENCE_COLUMN: "float64",
        }
    )
    latency = pd.DataFrame(latency_rows, columns=LATENCY_COLUMNS).astype(
        {"system": str, "query_id": str, "repeat": "int64", "latency_ms": "float64"}
    )
    return rankings, latency, definitions


class _RankedColumns:
    """The rankings of one repeat, gathered column by column (a query's hits extend each
    column at once) rather than as one tuple per row: at k=1000 a run has 100,000 rows per
    system, whose tuples and their frame cost about 1 s per system and repeat."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, str, float]] = []  # (system, query ID, declared) per query
        self.lengths: list[int] = []
        self.chunk_ids: list[str] = []
        self.scores: list[float] = []
        self.grades: list[int] = []

    def add(
        self,
        system: str,
        query_id: str,
        ranked: Sequence[tuple[str, float]],
        judged: dict[str, int],
        declared: float,
    ) -> None:
        """One query's deduplicated hits (ranks 1, 2, ... in order); ``judged``: the grade of
        each judged chunk of the query (0 for the others)."""
        if not ranked:
            return
        chunk_ids = [chunk_id for chunk_id, _ in ranked]
        self.keys.append((system, query_id, declared))
        self.lengths.append(len(chunk_ids))
        self.chunk_ids += chunk_ids
        self.scores += [hit_score for _, hit_score in ranked]
        self.grades += (
            map(judged.get, chunk_ids, itertools.repeat(0))
            if judged
            else itertools.repeat(0, len(ranked))
        )

    def frame(self) -> pd.DataFrame:
        """The rows, columns :data:`RANKING_COLUMNS` and :data:`CONFIDENCE_COLUMN` (object,
        int64, object, float64, int64, float64), in the order they were added."""
        lengths = np.asarray(self.lengths, dtype=np.int64)
        total = int(lengths.sum())
        starts = np.cumsum(lengths) - lengths
        systems, query_ids, declared = (
            np.array([key[i] for key in self.keys], dtype=dtype)
            for i, dtype in ((0, object), (1, object), (2, np.float64))
        )
        return pd.DataFrame(
            {
                "system": np.repeat(systems, lengths),
                "query_id": np.repeat(query_ids, lengths),
                "rank": np.arange(1, total + 1, dtype=np.int64) - np.repeat(starts, lengths),
                "chunk_id": np.array(self.chunk_ids, dtype=object),
                "score": np.array(self.scores, dtype=np.float64),
                "grade": np.array(self.grades, dtype=np.int64),
                CONFIDENCE_COLUMN: np.repeat(declared, lengths),
            }
        )


SystemsRun = tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]], dict[str, dict[str, Any]]]
"""One repeat's ``(rankings, latency, definitions, notes)`` of some systems."""


def run_one_system(  # noqa: PLR0917 - the worker entry points' arguments, in their order
    fixture: Fixture, system: Any, where: str, k: int, repeat: int, concurrency: int
) -> SystemsRun:
    """One system through ``evaluate``'s own loop, in a worker process (``_parallel``,
    :mod:`evalkit.run.distributed`): its rankings, latency, definitions and notes. An error names
    the system as ``where`` (``system #N of M``) and survives pickling."""
    notes: dict[str, dict[str, Any]] = {}
    try:
        rankings, latency, definitions = run_systems(
            fixture, [system], k, repeat, False, concurrency, notes
        )
    except EvalkitError as error:
        raise portable_error(error, str(error).replace("system #1 of 1", where)) from None
    return rankings, latency, definitions, notes


def combine_runs(parts: Iterable[tuple[int, SystemsRun]]) -> SystemsRun:
    """One repeat's run from the runs of its tasks, ``(system position, run)`` in system
    order, as ``_parallel`` and :mod:`evalkit.run.distributed` get them back; a system split
    into query shards comes back once per shard, from one position. One name at two positions
    is an :class:`InputError`."""
    rankings, latency = [], []
    definitions: dict[str, dict[str, Any]] = {}
    notes: dict[str, dict[str, Any]] = {}
    owner: dict[str, int] = {}
    for position, (ranked, timed, defined, noted) in parts:
        rankings.append(ranked)
        latency.append(timed)
        for name, definition in defined.items():
            if owner.setdefault(name, position) != position:
                raise InputError(f"two systems are both named {name!r}; give each a unique name")
            definitions.setdefault(name, definition)
            if name in noted:
                notes.setdefault(name, noted[name])
    return (
        pd.concat(rankings, ignore_index=True),
        pd.concat(latency, ignore_index=True),
        definitions,
        notes,
    )


def close_system(system: Any) -> None:
    """``system.close()`` if it has one, whole: a signal that arrives meanwhile waits until it
    returns, so a composite system (a fusion of several stores) never stops half closed."""
    close = getattr(system, "close", None)
    if callable(close):
        with deferred():
            close()


def deduplicated(
    system: str, query_id: str, hits: Iterable[Any], k: int, fixture: Fixture
) -> list[tuple[str, float]]:
    """The first ``k`` distinct ``(chunk_id, score)`` of ``hits``; unknown IDs and non-finite
    scores are ``InputError``s naming the system, query and chunk. A list of hits whose first
    ``k`` are distinct, known and finite is checked in bulk, not hit by hit."""
    known, finite = fixture.chunks_by_id, math.isfinite
    if type(hits) is list:
        first = hits[:k]
        returned = {chunk_id for chunk_id, _ in first}
        if (
            len(returned) == len(first)
            and all(map(known.__contains__, returned))
            and all(map(finite, [hit_score for _, hit_score in first]))
        ):
            return [(chunk_id, hit_score) for chunk_id, hit_score in first]
    ranked: dict[str, float] = {}
    for chunk_id, hit_score in hits:  # Hits already (hits_of): float scores
        if chunk_id in ranked:
            continue
        if chunk_id not in known:
            shown = safe_id(chunk_id)
            what = repr(shown) if shown else "(not shown: not a well-formed, safe ID)"
            raise InputError(
                f"system {system!r} returned chunk ID {what} for query {query_id!r}, "
                f"which is not in fixture {fixture.meta.id!r}; return the IDs of the chunks "
                "it was given"
            )
        if not finite(hit_score):
            raise InputError(
                f"system {system!r} returned a non-finite score for chunk {chunk_id!r} on "
                f"query {query_id!r}"
            )
        ranked[chunk_id] = hit_score
        if len(ranked) == k:
            break
    return list(ranked.items())
