"""evalkit on a Dask cluster: the optional extra ``pip install 'evalkit[dask]'``.

Everything here runs on :mod:`dask.distributed`; evalkit adds no scheduler of its own.

**Scoring** lives with the measures (:mod:`evalkit.measures.cluster`, reached through
:func:`evalkit.measures.score` with ``client=``); :func:`connect` is re-exported here.

**Systems** (:func:`run_systems`, reached through ``evaluate(..., client=...)`` and
``evalkit run --scheduler ADDRESS``): one task per system and repeat, each building the
system on a worker, indexing the fixture and answering its queries there, so latency is
measured on the worker. ``run:`` and ``http:`` systems hold no state between queries: their
queries are split into one shard per worker (each shard task builds its own instance; a
``run:`` file checks its query IDs against the whole fixture). Results come back in system
order and, within a system, in query order, so the evaluation is identical to the local one
whatever the completion order. Names and ``package.module:factory`` specs are resolved on the
workers, which need evalkit (and the factories' packages) installed; a ``run:PATH`` must be
readable there; an instance is pickled to the worker.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit.errors import EvalkitError, portable_error
from evalkit.measures.cluster import connect
from evalkit.run._systems_run import combine_runs, run_one_system
from evalkit.systems.external import is_external_spec
from evalkit.systems.reference import resolve_system

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.run._systems_run import SystemsRun
    from evalkit.systems.protocol import Retriever

__all__ = ["connect", "run_systems"]


# --- systems ------------------------------------------------------------------------------------


def run_systems(  # noqa: PLR0917 - evaluate's own helper's arguments, in its order
    client: Any,
    fixture: Fixture,
    specs: Sequence[str | Retriever],
    k: int,
    repeat: int,
    progress: bool = False,
    concurrency: int = 1,
    notes: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, Any]]]:
    """``evaluate``'s ``(rankings, latency, definitions)`` of one repeat, the systems run on the
    cluster of ``client`` (module docs); ``notes`` gets each system's notes; ``progress``
    shows a bar of finished tasks on stderr."""
    from distributed import as_completed
    from tqdm import tqdm

    client = connect(client)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    shared = client.scatter(fixture, broadcast=True)
    n_queries = len(fixture.queries)
    tasks: list[tuple[int, Any]] = []
    for position, spec in enumerate(specs, start=1):
        where = f"system #{position} of {len(specs)}"
        ranges: list[tuple[int | None, int | None]] = [(None, None)]
        if is_external_spec(spec) and workers > 1 and n_queries > 1:
            ranges = list(shards(n_queries, workers))
        for lo, hi in ranges:
            future = client.submit(
                _run_one, shared, _Opaque(spec), where, lo, hi, k, repeat, concurrency, pure=False
            )
            tasks.append((position, future))
    with tqdm(
        total=len(tasks), desc=f"systems (repeat {repeat + 1})", unit="task", disable=not progress
    ) as bar:
        for _ in as_completed([future for _, future in tasks]):
            bar.update(1)
    results = client.gather([future for _, future in tasks])
    positions = [position for position, _ in tasks]
    rankings, latency, definitions, noted = combine_runs(zip(positions, results, strict=True))
    if notes is not None:
        notes.update(noted)
    return rankings, latency, definitions


class _Opaque:
    """A value whose repr says nothing: a system spec may hold a path, which Dask's logs of a
    failed task must not show."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<system spec, not shown>"


def _run_one(  # noqa: PLR0917 - called positionally by client.submit only
    fixture: Fixture,
    spec: _Opaque,
    where: str,
    lo: int | None,
    hi: int | None,
    k: int,
    repeat: int,
    concurrency: int,
) -> SystemsRun:
    """On a worker: one system (or one query shard of it) through ``evaluate``'s own loop."""

    try:
        system: Any = resolve_system(spec.value, where=where)
    except EvalkitError as error:
        raise portable_error(error) from None
    view = fixture
    if lo is not None:
        system = _Shard(system, fixture.queries)
        view = fixture.model_copy(update={"queries": fixture.queries[lo:hi]})
    return run_one_system(view, system, where, k, repeat, concurrency)


class _Shard:
    """A stateless system answering one shard of the queries: it is bound to all of them (a
    ``run:`` file checks its query IDs and counts the missing ones over the whole fixture)."""

    def __init__(self, system: Any, queries: Sequence[Any]) -> None:
        self._system = system
        self._queries = queries

    def __getattr__(self, name: str) -> Any:
        return getattr(self._system, name)

    def bind_queries(self, queries: Sequence[Any]) -> None:
        bind = getattr(self._system, "bind_queries", None)
        if callable(bind):
            bind(self._queries)


def shards(n_items: int, n_shards: int) -> Iterator[tuple[int, int]]:
    """``n_shards`` contiguous ``(lo, hi)`` ranges covering ``range(n_items)`` in order."""
    n_shards = max(1, min(n_shards, n_items))
    bounds = [math.floor(i * n_items / n_shards) for i in range(n_shards + 1)]
    yield from itertools.pairwise(bounds)
