"""Vectorized resampling kernels of ``_paired``: many paired comparisons at once.

Every kernel takes ``diffs``, an ``(n, p)`` array of paired differences (one column per
comparison, ties already set to exactly 0.0), draws each resample *once* for all ``p``
columns, and returns one value per column. Resamples are drawn in blocks of about ``2**20``
values; the per-block work is numpy reductions and ``numpy.einsum`` (its own single-threaded
loops, never BLAS), so results do not depend on the thread count. Columns share the
resamples, and a column's result depends only on its own data and the generator, not on
the other columns.

* :func:`percentile_intervals`: bootstrap resamples as count vectors (how often each query
  is drawn; ``n`` draws with replacement), resample means ``counts @ diffs / n``, the
  percentile interval by ``numpy.quantile`` (linear interpolation, as
  ``scipy.stats.bootstrap(method="percentile")``).
* :func:`sign_flip_p`: sign vectors, ``T* = signs @ diffs``; all ``2**n`` of them when
  ``2**n <= B`` (exact: ``p = #{|T*| >= |T_obs| - n u} / 2**n``), else ``B`` random ones
  (``p = (#{|T*| >= |T_obs| - n u} + 1) / (B + 1)``); ``u`` is the unit of
  :mod:`evalkit.stats`.
* :func:`bootstrap_test_p`: the studentized, mean-shifted bootstrap test (see
  :func:`evalkit.stats.paired_test`).

Many pairs of systems at once (``compare`` with a thousand systems has 499,500 pairs): the
statistic of a sign vector or a count vector is linear in the values, ``w @ (x_i - x_j) =
w @ x_i - w @ x_j``, so :func:`resample_totals` computes ``w @ x`` once per *system* (a
``(k, B)`` array, summed query by query in a fixed order, so a system's totals do not depend
on the other systems), and :func:`pair_sign_flip_p` and :func:`pair_percentile_intervals`
take each pair's resampled statistics as the difference of its two rows: a pass over
``B`` values per pair instead of ``B x n`` multiply-adds. They draw the same sign and count
vectors from the same generators as :func:`sign_flip_p` and :func:`percentile_intervals`
and give the same p-values and intervals up to float rounding of the sums (the
``n * u`` slack of the sign-flip test absorbs it). The pair quantiles are selected by
partitioning each pair's row around the two order statistics that ``numpy.quantile``
interpolates, with its interpolation formula, so an interval equals ``numpy.quantile`` of the
same resample means exactly.

The generators they draw from: ``Generator(PCG64(seed))`` (:func:`random_generator`), and a group's
stream derived from ``seed`` and the group key (:func:`group_seed`: ``SeedSequence([seed,
*sha256(key)])``, stable across processes).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray

__all__ = [
    "BLOCK_VALUES",
    "STUDENTIZED_RTOL",
    "bootstrap_test_p",
    "count_blocks",
    "group_seed",
    "kept_blocks",
    "linear_quantiles",
    "pair_percentile_intervals",
    "pair_sign_flip_p",
    "percentile_intervals",
    "random_generator",
    "resample_totals",
    "sign_blocks",
    "sign_flip_exact",
    "sign_flip_p",
]


BLOCK_VALUES = 1 << 20
"""Values drawn per block (rows x queries): memory stays near 8 MB per block array."""

STUDENTIZED_RTOL = 1e-9
"""Relative float-tie tolerance of studentized statistics (the bootstrap test)."""

_CONSTANT_RTOL = 1e-10  # a resample variance below this times mean(w^2) is rounding noise


def percentile_intervals(
    diffs: FloatArray, rng: np.random.Generator, n_resamples: int, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap interval of each column's mean: ``(low, high)``, each ``(p,)``."""
    n = diffs.shape[0]
    means = np.empty((n_resamples, diffs.shape[1]), dtype=np.float64)
    for start, counts in count_blocks(rng, n, n_resamples):
        means[start : start + counts.shape[0]] = np.einsum("bn,np->bp", counts, diffs) / n
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return low, high


def sign_flip_p(
    diffs: FloatArray, rng: np.random.Generator, n_resamples: int, unit: FloatArray
) -> tuple[FloatArray, bool]:
    """Two-sided sign-flip randomization p-value of ``|sum(d)|`` per column, and whether it
    is exact (every one of the ``2**n`` sign vectors enumerated, ``rng`` unused).

    ``unit`` is each column's unit of equality: sums within ``n * unit`` of ``|T_obs|`` tie."""
    n = diffs.shape[0]
    observed = np.abs(diffs.sum(axis=0))
    threshold = observed - n * unit
    hits = np.zeros(diffs.shape[1], dtype=np.int64)
    for _, signs in sign_blocks(rng, n, n_resamples):
        totals = np.abs(np.einsum("bn,np->bp", signs, diffs))
        hits += np.count_nonzero(totals >= threshold, axis=0)
    return _sign_flip_from_hits(hits, n, n_resamples)


def sign_flip_exact(n: int, n_resamples: int) -> bool:
    """Whether the sign-flip test enumerates all ``2**n`` sign vectors (``2**n <= B``)."""
    return n < 63 and (1 << n) <= n_resamples


def sign_blocks(
    rng: np.random.Generator, n: int, n_resamples: int
) -> Iterator[tuple[int, FloatArray]]:
    """The sign vectors of :func:`sign_flip_p` as ``(start, signs)`` blocks of ``(rows, n)``
    floats ±1: all ``2**n`` in binary order when :func:`sign_flip_exact`, else ``B`` random
    ones (one random bit per query, drawn as bytes)."""
    rows_per_block = max(1, BLOCK_VALUES // n)
    exact = sign_flip_exact(n, n_resamples)
    total = (1 << n) if exact else n_resamples
    for start in range(0, total, rows_per_block):
        rows = min(rows_per_block, total - start)
        if exact:
            index = np.arange(start, start + rows, dtype=np.int64)[:, None]
            signs = 1.0 - 2.0 * ((index >> np.arange(n, dtype=np.int64)) & 1)
        else:
            bits = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
            signs = 1.0 - 2.0 * np.unpackbits(bits, axis=1, count=n)
        yield start, signs.astype(np.float64)


def _sign_flip_from_hits(
    hits: npt.NDArray[np.int64], n: int, n_resamples: int
) -> tuple[FloatArray, bool]:
    """The p-values of :func:`sign_flip_p` from the counts of ``|T*| >= |T_obs| - n u``."""
    if sign_flip_exact(n, n_resamples):
        return hits / (1 << n), True
    return (hits + 1) / (n_resamples + 1), False


def resample_totals(
    values: FloatArray, blocks: Iterable[tuple[int, npt.NDArray[Any]]]
) -> FloatArray:
    """``totals[j, b] = sum_q w[b, q] values[q, j]`` for every system ``j`` (a column of
    ``values``, ``(n, k)``) and resample ``b`` (the rows ``w`` of ``blocks``, from
    :func:`sign_blocks`, :func:`count_blocks` or :func:`kept_blocks`): ``(k, B)``.

    Summed query by query in ascending order with elementwise operations (no BLAS, no
    reordering), so a system's row depends only on its own column and the weights; systems
    are summed a few at a time (:data:`PAIR_CHUNK_VALUES` values), so the sums stay in cache."""
    parts = []
    systems = values.shape[1]
    for _, weights in blocks:
        by_query = np.ascontiguousarray(weights.T)  # (n, rows)
        totals = np.zeros((systems, weights.shape[0]), dtype=np.float64)
        step = max(1, PAIR_CHUNK_VALUES // max(1, weights.shape[0]))
        products = np.empty((step, weights.shape[0]), dtype=np.float64)
        for start in range(0, systems, step):
            part = totals[start : start + step]
            product = products[: part.shape[0]]
            for query in range(values.shape[0]):
                np.multiply(values[query, start : start + step, None], by_query[query], out=product)
                part += product
        parts.append(totals)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts, axis=1) if parts else np.zeros((values.shape[1], 0))


def pair_sign_flip_p(
    totals: FloatArray,
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
    *,
    threshold: FloatArray,
    n: int,
    n_resamples: int,
) -> tuple[FloatArray, bool]:
    """:func:`sign_flip_p` of the pairs ``(first[p], second[p])`` from the sign totals of
    :func:`resample_totals`: ``T* = totals[first] - totals[second]``, counted against each
    pair's ``threshold = |T_obs| - n u``. Returns the p-values and whether they are exact."""
    hits = np.zeros(first.size, dtype=np.int64)

    narrow = np.int32 if totals.shape[1] < 2**31 else np.int64  # a narrow sum is faster

    def count(chunk: slice, rows: FloatArray) -> None:
        np.abs(rows, out=rows)
        reached = rows >= threshold[chunk, None]
        hits[chunk] = np.add.reduce(reached.view(np.int8), axis=1, dtype=narrow)

    _each_pair_chunk(totals, first, second, count)
    return _sign_flip_from_hits(hits, n, n_resamples)


def pair_percentile_intervals(
    totals: FloatArray,
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
    n: int,
    confidence: float,
) -> tuple[FloatArray, FloatArray]:
    """:func:`percentile_intervals` of the pairs ``(first[p], second[p])`` from the count
    totals of :func:`resample_totals`: resample means ``(totals[first] - totals[second]) / n``.
    Returns ``(low, high)``, each ``(p,)``."""
    tail = (1.0 - confidence) / 2.0
    low = np.empty(first.size, dtype=np.float64)
    high = np.empty(first.size, dtype=np.float64)

    def select(chunk: slice, rows: FloatArray) -> None:
        low[chunk], high[chunk] = linear_quantiles(rows, tail, 1.0 - tail, divisor=n)

    _each_pair_chunk(totals, first, second, select)
    return low, high


def linear_quantiles(
    rows: FloatArray, lower: float, upper: float, *, divisor: float = 1.0
) -> tuple[FloatArray, FloatArray]:
    """``numpy.quantile(rows / divisor, [lower, upper], axis=1)`` (method ``"linear"``), equal
    to it bit for bit, for ``lower < upper`` in (0, 1) and ``divisor > 0``; ``rows`` is
    reordered in place.

    Each row is partitioned once around the upper neighbour of the lower quantile and once
    (its right part) around the lower neighbour of the upper one; the other neighbours are a
    maximum and a minimum of the pieces. numpy partitions for all four neighbours at once,
    which costs several times more per value. Dividing is monotonic and rounds each value on
    its own, so only the four neighbours are divided."""
    count = rows.shape[1]
    virtual = (count - 1) * np.array([lower, upper], dtype=np.float64)
    previous = np.floor(virtual)
    gamma = virtual - previous
    low_before, high_before = (int(i) for i in previous)
    if not (low_before >= 0 and low_before + 1 < high_before and high_before + 1 < count):
        quantiles = np.quantile(rows / divisor, [lower, upper], axis=1)
        return quantiles[0], quantiles[1]
    rows.partition(low_before + 1, axis=1)
    low_next = rows[:, low_before + 1] / divisor
    low_prev = rows[:, : low_before + 1].max(axis=1) / divisor
    right = rows[:, low_before + 2 :]
    right.partition(high_before - low_before - 2, axis=1)
    high_prev = right[:, high_before - low_before - 2] / divisor
    high_next = right[:, high_before - low_before - 1 :].min(axis=1) / divisor
    return _lerp(low_prev, low_next, gamma[0]), _lerp(high_prev, high_next, gamma[1])


def _lerp(before: FloatArray, after: FloatArray, gamma: np.float64) -> FloatArray:
    """numpy.quantile's linear interpolation, in its order of operations."""
    step = after - before
    result = np.add(before, step * gamma)
    if gamma >= 0.5:
        result = np.subtract(after, step * (1 - gamma))
    return np.asarray(result, dtype=np.float64)


PAIR_CHUNK_VALUES = 1 << 17
"""Values per chunk of pair rows in the pair kernels (1 MB): small enough to stay in cache."""

PAIR_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads the pair kernels run their chunks on (numpy releases the GIL in the subtraction,
the partition and the comparison). Each chunk writes only its own pairs' results, so the
results do not depend on the number of threads."""


def _each_pair_chunk(
    totals: FloatArray,
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
    work: Callable[[slice, FloatArray], None],
) -> None:
    """``work(chunk, totals[first[chunk]] - totals[second[chunk]])`` for chunks of pairs, each
    a ``(len(chunk), B)`` array that ``work`` may reorder (a buffer of its thread, reused: no
    fresh memory per chunk), on :data:`PAIR_THREADS` threads; a side that is one system for
    the whole chunk is read as one row (no copy), a run of consecutive systems as a slice."""
    width = totals.shape[1]
    size = max(1, PAIR_CHUNK_VALUES // max(1, width))
    buffers = threading.local()

    def run(start: int) -> None:
        chunk = slice(start, min(start + size, first.size))
        if not hasattr(buffers, "rows"):
            buffers.rows = np.empty((size, width), dtype=np.float64)
        rows = buffers.rows[: chunk.stop - chunk.start]
        a, b = _side(totals, first[chunk]), _side(totals, second[chunk])
        np.subtract(a, b, out=rows)
        work(chunk, rows)

    starts = range(0, first.size, size)
    if PAIR_THREADS == 1 or len(starts) < 2:
        for start in starts:
            run(start)
        return
    with ThreadPoolExecutor(max_workers=PAIR_THREADS) as executor:
        list(executor.map(run, starts))  # list(): re-raises a chunk's exception


def _side(totals: FloatArray, index: npt.NDArray[np.intp]) -> FloatArray:
    """``totals[index]`` without a copy when ``index`` is one value or a run of consecutive
    ones (a row broadcast against the other side, or a slice)."""
    start, stop = int(index[0]), int(index[-1])
    if start == stop and (index == start).all():
        row: FloatArray = totals[start]
        return row
    if stop - start == index.size - 1 and (np.diff(index) == 1).all():
        return totals[start : stop + 1]
    return totals[index]


def bootstrap_test_p(diffs: FloatArray, rng: np.random.Generator, n_resamples: int) -> FloatArray:
    """Studentized mean-shifted bootstrap p-value per column (columns must not be constant).

    For each resample (a count vector ``c``) and column: ``mean* = c @ w / n`` and
    ``var* = (c @ w^2 - n mean*^2) / (n - 1)`` of the shifted ``w = d - mean(d)``;
    ``t* = mean* / sqrt(var* / n)``. A resample whose variance is rounding noise
    (``var* <= 1e-10 mean(w^2)``: all drawn values equal) gets ``|t*| = inf``, or ``0`` when
    its mean is 0 too (``|mean*| <= 1e-9 max|w|``).
    """
    n = diffs.shape[0]
    mean = diffs.mean(axis=0)
    observed = np.abs(mean / (diffs.std(axis=0, ddof=1) / np.sqrt(n)))
    threshold = observed * (1.0 - STUDENTIZED_RTOL)
    shifted = diffs - mean
    both = np.hstack([shifted, shifted**2])
    p = diffs.shape[1]
    noise = _CONSTANT_RTOL * (shifted**2).mean(axis=0)
    zero = STUDENTIZED_RTOL * np.abs(shifted).max(axis=0)
    hits = np.zeros(p, dtype=np.int64)
    for _, counts in count_blocks(rng, n, n_resamples):
        sums = np.einsum("bn,np->bp", counts, both)
        means = sums[:, :p] / n
        variance = np.maximum((sums[:, p:] - n * means**2) / (n - 1), 0.0)
        constant = variance <= noise
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.abs(means) / np.sqrt(variance / n)
        statistic = np.where(constant, np.where(np.abs(means) > zero, np.inf, 0.0), statistic)
        hits += np.count_nonzero(statistic >= threshold, axis=0)
    return (hits + 1) / (n_resamples + 1)


def count_blocks(
    rng: np.random.Generator, n: int, n_resamples: int
) -> Iterator[tuple[int, FloatArray]]:
    """Bootstrap resamples as ``(start, counts)`` blocks; ``counts[b, i]`` is how often
    query ``i`` is drawn in resample ``start + b`` (``n`` uniform draws with replacement)."""
    index_type = np.uint16 if n <= 1 << 16 else np.int64
    rows_per_block = max(1, BLOCK_VALUES // n)
    for start in range(0, n_resamples, rows_per_block):
        rows = min(rows_per_block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=index_type)
        flat = (draws + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        yield start, counts.astype(np.float64)


KEPT_DRAW_VALUES = 1 << 24
"""Most weights (rows x queries) :func:`kept_blocks` keeps at once, 1 byte each (16 MB)."""

_Blocks = list[tuple[int, npt.NDArray[Any]]]


class _KeptDraws:
    """The draws :func:`kept_blocks` keeps, least recently used first, and their size."""

    def __init__(self) -> None:
        self.draws: OrderedDict[tuple[Any, ...], _Blocks] = OrderedDict()
        self.values = 0
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> _Blocks | None:
        with self.lock:
            found = self.draws.get(key)
            if found is not None:
                self.draws.move_to_end(key)
            return found

    def keep(self, key: tuple[Any, ...], blocks: _Blocks) -> None:
        size = sum(weights.size for _, weights in blocks)  # at most KEPT_DRAW_VALUES (kept_blocks)
        with self.lock:
            if key not in self.draws:
                self.draws[key] = blocks
                self.values += size
            while self.values > KEPT_DRAW_VALUES:
                _, dropped = self.draws.popitem(last=False)
                self.values -= sum(weights.size for _, weights in dropped)


_KEPT = _KeptDraws()


def kept_blocks(
    draw: Callable[[np.random.Generator, int, int], Iterator[tuple[int, FloatArray]]],
    seed: np.random.SeedSequence,
    n: int,
    n_resamples: int,
) -> Iterable[tuple[int, npt.NDArray[Any]]]:
    """The blocks ``draw(random_generator(seed), n, n_resamples)`` yields (:func:`sign_blocks`,
    :func:`count_blocks`), drawn once per ``(draw, seed, n, n_resamples)`` and kept.

    The draws depend only on those, not on the values: ``compare`` draws the same sign and
    count vectors for every comparison of one (measure, group) key, in every call: the
    report's verdict against its base system and its change against main's baseline
    (:func:`evalkit.gates.compare_with_baseline`, one call per batch of systems that share
    their queries) are separate calls over the same queries, and drawing them was a large
    part of each small comparison. Each block is
    kept as exact small integers (``int8``: signs, and counts up to 127; a block with a
    larger count is kept as drawn) in column-major order, so ``block.T`` is the contiguous
    ``(n, rows)`` array :func:`resample_totals` reads; ``float64 * int8`` multiplies the same
    numbers as ``float64 * float64``, so totals are bit for bit those of a fresh draw. At most
    :data:`KEPT_DRAW_VALUES` weights are kept, the least recently used dropped first; a draw
    that may be larger (``n * n_resamples`` weights, at least its size) is not gathered at all:
    its blocks are yielded one at a time as drawn."""
    if n * n_resamples > KEPT_DRAW_VALUES:
        return draw(random_generator(seed), n, n_resamples)
    entropy = seed.entropy
    key = (
        draw,
        tuple(entropy) if isinstance(entropy, Sequence) else entropy,
        seed.spawn_key,
        seed.pool_size,
        n,
        n_resamples,
    )
    found = _KEPT.get(key)
    if found is not None:
        return found
    blocks = [
        (start, np.asfortranarray(_compact(weights)))
        for start, weights in draw(random_generator(seed), n, n_resamples)
    ]
    for _, weights in blocks:
        weights.flags.writeable = False  # shared by every comparison that asks for it
    _KEPT.keep(key, blocks)
    return blocks


def _compact(weights: FloatArray) -> npt.NDArray[Any]:
    """``weights`` as ``int8`` when every weight is an integer in its range, else as given."""
    small = weights.astype(np.int8)
    return small if np.array_equal(small, weights) else weights


def group_seed(
    seed: int, purpose: str, columns: Sequence[str], key: Iterable[Any]
) -> np.random.SeedSequence:
    """``SeedSequence([seed, *sha256(key)])``: stable across processes (never Python's hash())."""
    text = json.dumps([purpose, list(columns), [str(v) for v in key]], ensure_ascii=True)
    digest = hashlib.sha256(text.encode("ascii")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence([int(seed), *words])


def random_generator(seed: int | np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))
