"""Integer sorts and threads of the ranking builder (:mod:`evalkit.measures.ranking`).

Stable sorts of non-negative integer keys (a radix sort when they fit in 32 bits, one sort of a
combined key for a two-key sort), and in-place sorts of keys grouped by query, whose parts
(matrix rows of equal-sized queries, or cache-sized runs of whole queries) are sorted
independently on every core: numpy's sort releases the GIL, and sorted parts in increasing
query order make a sorted array, so the thread count never changes a result. Threads are the
cores this process may run on, at most ``MAX_THREADS``. Large arrays are worked on block by
block (``BLOCK`` rows: small temporaries, fewer page faults).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

import numpy as np

from evalkit._arrays import IntArray, U64Array
from evalkit.formats.strings import ranges  # (re-exported: the ranking builder's helper too)

__all__ = [
    "BLOCK",
    "MAX_THREADS",
    "U64",
    "Pending",
    "Submitter",
    "jobs",
    "lexsort",
    "parallel_sort",
    "ranges",
    "sort_segments",
    "stable_order",
    "threads",
]


U64 = np.uint64

BLOCK = 1 << 16  # rows per block: keeps temporaries small, in cache and off the page-fault path

#: The most threads a ranking uses (its sorts and fingerprints).
MAX_THREADS = 8


def threads() -> int:
    """Threads for the parallel parts: the cores this process may run on (its CPU affinity, which
    taskset, a cpuset or a job scheduler narrows; not the machine's count), at most
    ``MAX_THREADS``."""
    from evalkit.forking import usable_cores  # here: ranking needs no multiprocessing import

    return min(usable_cores(), MAX_THREADS)


_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


class Pending(Protocol[_T_co]):
    """A job's result: a ``concurrent.futures.Future``, or one computed already."""

    def result(self) -> _T_co: ...


class Submitter(Protocol):
    """What runs jobs: a ``ThreadPoolExecutor``, or :func:`jobs`' inline runner."""

    def submit(self, fn: Callable[..., _T], /, *args: Any) -> Pending[_T]: ...


class _Done:
    """A job run when it was submitted: its value, or its exception raised by ``result()``
    (as a thread's would be)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        try:
            self._value = fn(*args)
        except Exception as error:  # raised by result(), where a future raises it
            self._error = error

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


class _Inline:
    def submit(self, fn: Callable[..., _T], /, *args: Any) -> Pending[_T]:
        done: Pending[_T] = _Done(fn, args)
        return done


@contextlib.contextmanager
def jobs(workers: int) -> Iterator[Submitter]:
    """A thread pool of ``workers`` threads; for one worker an inline runner (each job runs
    when submitted: no thread started, no import of ``concurrent.futures``). Either way the
    results are the same."""
    if workers <= 1:
        yield _Inline()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield pool


def _workers(workers: int | None, size: int) -> int:
    """``workers``, or one per core when None; one for fewer than 2**17 keys (no thread is
    worth starting, and the core count is not looked up)."""
    if size < 1 << 17:
        return 1
    return workers or threads()


def lexsort(major: IntArray, minor: IntArray) -> IntArray:
    """``np.lexsort((minor, major))`` (stable: by ``major``, then ``minor``, then index).

    ``major`` must be >= 0. One stable sort of a combined key when it fits in 63 bits (a radix
    sort when it fits in 32).
    """
    if major.size == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = int(minor.min()), int(minor.max())
    span = high - low + 1
    if (int(major.max()) + 1) * span >= 1 << 62:
        return np.lexsort((minor, major)).astype(np.int64)
    key = major * span
    key += minor
    key -= low
    if bool(np.all(key[1:] > key[:-1])):
        return np.arange(key.size, dtype=np.int64)  # already in order, no equal keys
    return stable_order(key)


def stable_order(values: IntArray) -> IntArray:
    """``np.argsort(values, kind="stable")`` for non-negative integers; a radix sort (16-bit
    digits) when they fit in 32 bits."""
    high = int(values.max(initial=0))
    if high >= 1 << 32:
        return np.argsort(values, kind="stable").astype(np.int64, copy=False)
    order = np.argsort(values.astype(np.uint16), kind="stable")  # numpy's radix sort
    if high >= 1 << 16:
        upper = (values[order] >> 16).astype(np.uint16)
        order = order[np.argsort(upper, kind="stable")]
    return order.astype(np.int64, copy=False)


def parallel_sort(keys: U64Array, query_sizes: IntArray | None, workers: int | None) -> None:
    """Sort ``keys`` in place; fast when the rows are grouped by query (``query_sizes``).

    When every query has the same number of rows the keys form a matrix whose rows are sorted;
    when the sizes differ but padding every query to the largest at most doubles the keys, the
    rows of such a padded matrix are sorted; otherwise the keys are cut at query boundaries into
    cache-sized parts (about 64k keys, whole queries). Either way the parts are sorted
    independently, on every core (numpy's sort releases the GIL), and sorted parts in
    increasing query order make a sorted array. Rows not grouped by query get one global sort.
    """
    if query_sizes is None or keys.size < 1 << 17:
        keys.sort()
        return
    if sort_segments(keys, query_sizes, workers):
        return
    sizes = query_sizes[query_sizes > 0]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # the start of the query holding every 64k-th key: always a valid index and a boundary
    holding = np.searchsorted(starts, np.arange(1 << 16, keys.size, 1 << 16), side="right") - 1
    cuts = np.unique(starts[holding])
    bounds = [0, *[c for c in cuts.tolist() if 0 < c < keys.size], keys.size]
    parts = [keys[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]
    workers = _workers(workers, keys.size)
    if workers == 1:
        for part in parts:
            part.sort()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(np.ndarray.sort, parts):
            pass


def sort_segments(keys: U64Array, sizes: IntArray, workers: int | None) -> bool:
    """Sort in place each segment of ``keys`` (consecutive segments of ``sizes`` keys) as the
    rows of a matrix: of one, when all segments have the same size, else padded with the
    largest key. False (nothing done) when a segment is too long or padding would more than
    double the keys."""
    sizes = sizes[sizes > 0]
    width = int(sizes.max(initial=0))
    if width == 0 or width > 1 << 14:
        return width == 0
    if bool(np.all(sizes == width)):  # e.g. a fixed-depth run
        _sort_matrix_rows(keys.reshape(-1, width), workers)
        return True
    if sizes.size * width > 2 * keys.size:
        return False
    filled = np.arange(width) < sizes[:, None]
    matrix = np.full((sizes.size, width), np.iinfo(np.uint64).max, dtype=np.uint64)
    matrix[filled] = keys
    _sort_matrix_rows(matrix, workers)
    keys[:] = matrix[filled]
    return True


def _sort_matrix_rows(matrix: U64Array, workers: int | None) -> None:
    """Sort each row of ``matrix`` in place, blocks of rows on ``workers`` threads (None: one
    per core; one thread for a small matrix)."""
    workers = _workers(workers, matrix.size)
    if workers == 1:
        matrix.sort(axis=1)
        return
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, matrix.shape[0], workers + 1).astype(np.int64).tolist()
    blocks = [matrix[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(lambda block: block.sort(axis=1), blocks):
            pass
