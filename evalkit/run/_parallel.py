"""``evaluate``'s systems on this machine's cores: ``evaluate(..., workers=N)``.

Each (system, repeat) is one task for a pool of ``N`` worker processes forked from this one,
so they inherit the fixture and the system specs (instances included: nothing is pickled on
the way in). A task builds its system, indexes the fixture and answers every query through
``evaluate``'s own loop, and sends back its rankings, latency, definition and notes. Tasks are
queued system by system (both repeats of a system one after the other), so the repeats of
the slowest system, usually the last one of the reference list, run side by side rather than
one after another. The results are put back in system and repeat order, so the evaluation is
the serial one whatever the completion order: ``tests/test_parallel.py`` compares them.

Latency is measured in the workers while other systems run on the other cores, so it includes
that contention; for latency alone, run with ``workers=1``. Only where ``fork`` exists (Linux,
macOS); elsewhere ``workers`` is ignored.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Final

from tqdm import tqdm

from evalkit.forking import fork_available
from evalkit.run._systems_run import SystemsRun, combine_runs, run_one_system
from evalkit.safety.interrupts import raise_if_cancelled

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.systems.protocol import Retriever

__all__ = ["fork_available", "run_repeats"]


#: Seconds a worker has to unwind after SIGTERM before it is killed.
_STOP_S: Final = 10.0

#: What the forked workers inherit: the fixture and the specs (set only while the pool runs).
_INHERITED: tuple[Fixture, Sequence[str | Retriever]] | None = None


def run_repeats(  # noqa: PLR0917 - evaluate's own arguments, in its order
    fixture: Fixture,
    specs: Sequence[str | Retriever],
    k: int,
    repeats: int,
    concurrency: int,
    workers: int,
    progress: bool = False,
) -> list[SystemsRun]:
    """Every repeat of every system of ``specs`` on ``fixture`` in up to ``workers`` forked
    processes (module docs): one ``SystemsRun`` per repeat, systems in
    ``specs`` order. After an error the tasks not yet begun are dropped, and the first error
    in serial order (repeat, then system) among those that ran is raised.
    ``progress`` shows a bar of finished tasks on stderr (counts only)."""
    global _INHERITED  # noqa: PLW0603 - set only around the pool, for the forked workers
    tasks = [(repeat, position) for position in range(len(specs)) for repeat in range(repeats)]
    _INHERITED = (fixture, specs)
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(tasks)),
            mp_context=multiprocessing.get_context("fork"),
        ) as pool:
            futures = {
                task: pool.submit(_run_task, task[1], k, task[0], concurrency) for task in tasks
            }
            try:
                with tqdm(
                    total=len(tasks), desc="systems x repeats", unit="task", disable=not progress
                ) as bar:
                    for done in as_completed(futures.values()):
                        bar.update(1)
                        if done.exception() is not None:  # the tasks not begun are not run
                            for future in futures.values():
                                future.cancel()
            except BaseException:  # SIGINT/SIGTERM: the workers unwind too, removing their stores
                _stop_workers(pool, futures.values())
                raise
            failed = sorted(t for t, f in futures.items() if not f.cancelled() and f.exception())
            if failed:  # the first error in serial order: (repeat, system) tasks sort that way
                futures[failed[0]].result()
            runs = [
                combine_runs((p, futures[(repeat, p)].result()) for p in range(len(specs)))
                for repeat in range(repeats)
            ]
    finally:
        _INHERITED = None
    return runs


def _stop_workers(pool: ProcessPoolExecutor, futures: Iterable[Future[SystemsRun]]) -> None:
    """Cancel the tasks not begun and send SIGTERM to the workers: each unwinds its task
    (:class:`~evalkit.errors.WorkerInterrupted`), removing its temporary store,
    and the pool's shutdown then waits for that. A worker still alive after
    :data:`_STOP_S` seconds is killed."""
    for future in futures:
        future.cancel()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)  # an idle worker gets its stop sentinel
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    ends = time.monotonic() + _STOP_S
    for process in processes:
        process.join(max(0.0, ends - time.monotonic()))
        if process.is_alive():
            process.kill()


def _run_task(position: int, k: int, repeat: int, concurrency: int) -> SystemsRun:
    """In a worker: the system at ``position`` (0-based) through ``evaluate``'s own loop."""
    raise_if_cancelled()  # a task queued before a signal reached this worker is not begun
    if _INHERITED is None:  # pragma: no cover - only a non-forked worker could get here
        raise RuntimeError("evalkit.run._parallel: the worker did not inherit the evaluation")
    fixture, specs = _INHERITED
    where = f"system #{position + 1} of {len(specs)}"
    return run_one_system(fixture, specs[position], where, k, repeat, concurrency)
