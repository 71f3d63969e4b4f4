"""Matching run rows with the qrels: document fingerprints, the packed sort, duplicates, the join.

Each document ID gets a 64-bit fingerprint; one sort of packed (query, fingerprint, row)
integers finds duplicate (query, doc) pairs and the run rows that the qrels judge. A
fingerprint match is only a candidate: every match and duplicate is confirmed by comparing the
ID strings, so a fingerprint collision can never change a result. The run's fingerprints are
computed in slices on a thread pool, and the qrels' fingerprints, duplicate check and orders on
another thread, while the ranking builder (:mod:`evalkit.measures.ranking`) prepares the run.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from evalkit._arrays import IntArray, U64Array
from evalkit.errors import InputError
from evalkit.formats.strings import StringChunk, Strings
from evalkit.measures._sorting import BLOCK, U64, Pending, Submitter, lexsort, parallel_sort, ranges

# the ranking builder's (evalkit.measures.ranking)
__all__ = [
    "ALL_BITS",
    "Judgments",
    "Packed",
    "PreparedQrels",
    "SlicedFingerprints",
    "confirmed_duplicates",
    "fingerprint",
    "join",
    "local_rows",
    "packed_sort",
    "prepare_qrels",
]

ALL_BITS = U64(0xFFFFFFFFFFFFFFFF)
_FNV_OFFSET = U64(0xCBF29CE484222325)
_FNV_PRIME = U64(0x100000001B3)
_MIX_1 = U64(0xFF51AFD7ED558CCD)
_MIX_2 = U64(0xC4CEB9FE1A85EC53)


def fingerprint(strings: Strings, out: U64Array | None = None) -> U64Array:
    """A 64-bit fingerprint of each string: FNV-style mixing of its zero-padded little-endian
    8-byte words and its length, then murmur3's fmix64 finalizer (so the high bits are mixed).

    Written into ``out`` when given (``len(strings)`` values)."""
    out = np.empty(len(strings), dtype=np.uint64) if out is None else out
    lo = 0
    for chunk in strings.chunks:
        _fingerprint_chunk(chunk, out[lo : lo + len(chunk)])
        lo += len(chunk)
    return out


class SlicedFingerprints:
    """:func:`fingerprint` of every string, computed in slices on a thread pool."""

    def __init__(self, strings: Strings, pool: Submitter, slices: int) -> None:
        self._out = np.empty(len(strings), dtype=np.uint64)
        bounds = np.linspace(0, len(strings), max(slices, 1) + 1).astype(np.int64).tolist()
        self._jobs = [
            pool.submit(fingerprint, strings.slice(lo, hi - lo), self._out[lo:hi])
            for lo, hi in itertools.pairwise(bounds)
        ]

    def result(self) -> U64Array:
        """The fingerprints, once every slice is done."""
        for job in self._jobs:
            job.result()
        return self._out


def _fingerprint_chunk(strings: StringChunk, h: U64Array) -> None:
    """Write the fingerprints of ``strings`` into ``h``."""
    n = len(strings)
    for lo in range(0, n, BLOCK):
        hi = min(lo + BLOCK, n)
        _fingerprint_block(strings.data, strings.starts[lo:hi], strings.ends[lo:hi], h[lo:hi])


def _fingerprint_block(
    data: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    h: U64Array,
) -> None:
    n = starts.size
    if n == 0:
        return
    lengths = ends - starts
    h.fill(_FNV_OFFSET)
    width = int(lengths.max())
    first = int(starts[0])
    packed = int(ends[-1]) - first == n * width  # the strings back to back, nothing between
    if int(lengths.min()) == width and width % 8 == 0 and packed:
        # every string has the same length, a multiple of 8: its words are a zero-copy view
        n_words = width // 8
        words = data[first : first + n * width].view("<u8").reshape(n, n_words)
        for k in range(n_words):
            h ^= words[:, k]
            h *= _FNV_PRIME
    else:
        # every 8-byte window of the block's data (padded) as a little-endian integer
        padded = np.concatenate([data[first : int(ends[-1])], np.zeros(8, dtype=np.uint8)])
        windows = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
        starts = starts - first
        lengths = lengths.astype(np.int64)
        for k in range((width + 7) // 8):
            active = np.flatnonzero(lengths > 8 * k)  # strings with a k-th word
            word = windows[starts[active] + 8 * k].astype(np.uint64)
            tail = np.flatnonzero(lengths[active] < 8 * (k + 1))  # zero the bytes past the end
            word[tail] &= ALL_BITS >> ((8 * (k + 1) - lengths[active[tail]]) * 8).astype(np.uint64)
            h[active] ^= word
            h[active] *= _FNV_PRIME
    h ^= lengths.astype(np.uint64)
    h *= _FNV_PRIME
    # murmur3 fmix64
    for multiplier in (_MIX_1, _MIX_2, None):
        h ^= h >> U64(33)
        if multiplier is not None:
            h *= multiplier


class Packed(NamedTuple):
    """Sorted uint64 keys: ``query << (fp_bits + row_bits) | fingerprint top bits << row_bits |
    row``."""

    keys: U64Array
    fp_bits: int
    row_bits: int

    def rows(self, at: IntArray) -> IntArray:
        """Row numbers stored in the keys at sorted positions ``at``."""
        mask = (U64(1) << U64(self.row_bits)) - U64(1)
        return (self.keys[at] & mask).astype(np.int64)

    def pair_keys(self, qidx: IntArray, fp: U64Array) -> U64Array:
        """The (query code, fingerprint bits) part of the keys of these pairs (row bits 0)."""
        shift = U64(64 - self.fp_bits)
        high = (qidx.astype(np.uint64) << U64(self.fp_bits)) | (fp >> shift)
        return high << U64(self.row_bits)

    def same_pair_as_next(self) -> IntArray:
        """Sorted positions ``i`` whose key has the (query, fingerprint) part of key ``i + 1``."""
        limit = U64(1) << U64(self.row_bits)
        found = [np.zeros(0, dtype=np.int64)]
        for lo in range(0, self.keys.size - 1, BLOCK):  # block by block: small temporaries
            hi = min(lo + BLOCK, self.keys.size - 1)
            differ = self.keys[lo + 1 : hi + 1] ^ self.keys[lo:hi]
            found.append(np.flatnonzero(differ < limit) + lo)
        return np.concatenate(found)


def _bits(n: int) -> int:
    return max(1, int(n).bit_length())


def packed_sort(
    qidx: IntArray,
    fp: U64Array,
    rows: IntArray | None,
    n_queries: int,
    n_rows: int,
    *,
    query_sizes: IntArray | None = None,
    workers: int | None = None,
) -> Packed:
    """Pack (query code, fingerprint, row number) into one uint64 per row and sort.

    ``fp`` is overwritten (it becomes the sorted keys). ``rows``: the row numbers (None:
    ``0 .. len(fp) - 1``). ``query_sizes``: rows per query code when the rows are grouped by
    query in increasing code order (enables the per-query sort), else None. ``workers``:
    threads for the sort (None: one per core).
    """
    q_bits, row_bits = _bits(n_queries), _bits(n_rows)
    fp_bits = 64 - q_bits - row_bits
    if fp_bits < 1:
        raise InputError(f"too many queries x rows to evaluate at once ({n_queries} x {n_rows})")
    keys = fp
    for lo in range(0, keys.size, BLOCK):  # block by block: small temporaries
        hi = min(lo + BLOCK, keys.size)
        part = keys[lo:hi]
        part >>= U64(64 - fp_bits)
        part <<= U64(row_bits)
        if rows is None:
            part |= np.arange(lo, hi, dtype=np.uint64)
        else:
            part |= rows[lo:hi].view(np.uint64)  # row numbers are >= 0
        query = qidx[lo:hi].astype(np.uint64)
        query <<= U64(fp_bits + row_bits)
        part |= query
    parallel_sort(keys, query_sizes, workers)
    return Packed(keys, fp_bits, row_bits)


def confirmed_duplicates(
    packed: Packed,
    row_index: IntArray | None,
    qidx: IntArray,
    docs: Strings,
) -> IntArray:
    """Row numbers (sorted) of every (query, doc) pair that occurs more than once.

    ``qidx``: the query codes of the rows packed, in the order ``row_index`` maps row numbers
    to (None: row ``i`` is entry ``i``).
    """
    at = packed.same_pair_as_next()
    if at.size == 0:
        return np.zeros(0, dtype=np.int64)
    candidates = np.unique(np.concatenate([packed.rows(at), packed.rows(at + 1)]))
    local = local_rows(row_index, candidates)
    pairs = list(zip(qidx[local].tolist(), docs.to_list(candidates), strict=True))
    seen: dict[tuple[int, str], int] = {}
    for pair in pairs:
        seen[pair] = seen.get(pair, 0) + 1
    repeated = np.array([seen[pair] > 1 for pair in pairs], dtype=bool)
    duplicated: IntArray = candidates[repeated]
    return duplicated


def local_rows(row_index: IntArray | None, at: IntArray) -> IntArray:
    """Kept-row indices of the run row numbers ``at`` (``row_index``: run row -> kept row;
    None: every row is kept in run order)."""
    return at if row_index is None else row_index[at]


class Judgments(NamedTuple):
    """The qrels, as the join needs them."""

    code: IntArray  # query code of each row
    docs: Strings
    grades: IntArray
    prepared: Pending[PreparedQrels]  # computed on another thread


def join(
    packed: Packed, *, qrels_rows: IntArray, qrels: Judgments, run_d: Strings
) -> tuple[IntArray, IntArray]:
    """Run rows (sorted) that the qrels judge, and their grades.

    ``qrels_rows``: the qrels rows to look up; any order is correct, (query, fingerprint) order
    is fastest: numpy narrows each search from the previous one.
    """
    keys = packed.pair_keys(qrels.code[qrels_rows], qrels.prepared.result().fp[qrels_rows])
    row_mask = (U64(1) << U64(packed.row_bits)) - U64(1)
    last = packed.keys.size - 1
    if last < 0 or keys.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lo = np.searchsorted(packed.keys, keys, side="left").astype(np.int64)
    # run rows with the same (query, fingerprint): one, or more on a fingerprint collision
    counts = ((packed.keys[np.minimum(lo, last)] ^ keys) <= row_mask).astype(np.int64)
    several = np.flatnonzero(counts.astype(bool) & (lo < last))
    several = several[(packed.keys[lo[several] + 1] ^ keys[several]) <= row_mask]
    counts[several] = (
        np.searchsorted(packed.keys, keys[several] | row_mask, side="right") - lo[several]
    )
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if int(counts.max()) == 1:  # the usual case: at most one candidate per judged pair
        found = np.flatnonzero(counts)
        slots = lo[found]
    else:
        found = np.repeat(np.arange(keys.size, dtype=np.int64), counts)
        slots = ranges(lo, counts)
    run_rows, judged = packed.rows(slots), qrels_rows[found]
    # in run row order, the run's IDs are read front to back
    order = np.argsort(run_rows, kind="stable")
    run_rows, judged = run_rows[order], judged[order]
    ok = run_d.equal(run_rows, qrels.docs, judged)
    return run_rows[ok], qrels.grades[judged[ok]]


class PreparedQrels(NamedTuple):
    """What the qrels need before the join, computed on another thread."""

    fp: U64Array  # doc fingerprint of each row
    duplicates: IntArray  # rows (sorted) of (query, doc) pairs judged twice
    by_pair: IntArray  # row numbers in (query, fingerprint) order
    by_grade: IntArray  # row numbers in (query, grade descending) order


def prepare_qrels(qidx: IntArray, docs: Strings, grades: IntArray) -> PreparedQrels:
    """The qrels' fingerprints, duplicates and orders (``qidx``: query index of each row)."""
    fp = fingerprint(docs)
    rows = np.arange(len(docs), dtype=np.int64)
    n_queries = int(qidx.max(initial=0)) + 1
    grouped = bool(np.all(qidx[1:] >= qidx[:-1]))
    sizes = np.bincount(qidx, minlength=n_queries) if grouped else None
    packed = packed_sort(qidx, fp.copy(), rows, n_queries, len(docs), query_sizes=sizes)
    return PreparedQrels(
        fp=fp,
        duplicates=confirmed_duplicates(packed, None, qidx, docs),
        by_pair=packed.rows(rows),
        by_grade=lexsort(qidx, -grades),
    )
