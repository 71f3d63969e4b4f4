"""The ranking order within each query, by the ties, trec_eval version and duplicates policies
of :mod:`evalkit.measures.ranking` (whose builder this module serves).

With ``ties="trec"`` score descending, then doc ID descending (byte order, like ``strcmp``);
scores compare as float64 with ``trec_version="10"`` (trec_eval 10.0 stores them as C doubles)
and as float32 with ``"9"`` (trec_eval 9.0.8's C floats); with ``ties="given"`` the ``rank``
column ascending when present, else the row order within each query (rows of equal rank keep
their row order). A run already sorted by query block and score is not sorted again: only tie
groups holding a judged document are ordered by doc ID. With ``duplicates="keep-first"``, of a
doc listed twice for a query the occurrence ranked first is kept.

Ties (``ties="trec"``) are broken by doc ID only within the tie groups that hold a judged
document. The sort key holds the float32 score; float32 rounding keeps the order of float64
values, so with ``trec_version="10"`` only those same tie groups compare the float64 scores
before the doc IDs (no extra cost on runs without float32 ties). Small groups compare each
judged doc with every member of its group, by the IDs' first 8 bytes and lengths (the ID
strings only when those cannot tell); large groups are sorted by ID.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from evalkit._arrays import IntArray, U64Array
from evalkit.formats.strings import Strings
from evalkit.measures._sorting import BLOCK, U64, ranges, sort_segments

__all__ = ["FLOAT32_OVERFLOW", "given_positions", "keep_first", "trec_positions"]

#: Said (once per ranking) when a score does not fit a float32.
FLOAT32_OVERFLOW = (
    "a score is beyond float32's range (about 3.4e38): its float32 sort key is infinity, so "
    "it ties with every other such score and their documents fall back to the doc ID order"
)


def _descending_float32_key(
    scores: npt.NDArray[np.float64], *, say_overflow: bool = False
) -> npt.NDArray[np.uint32]:
    """uint32 keys whose ascending order is float32(score) descending (-0.0 ties with 0.0).
    A score beyond float32's range gets infinity's key, silently, or with a RuntimeWarning
    (:data:`FLOAT32_OVERFLOW`) when ``say_overflow`` (float32 is the final order: 9.0.8)."""
    overflow: list[str] = []
    with np.errstate(over="call", call=lambda kind, flag: overflow.append(kind)):
        as32 = scores.astype(np.float32)  # beyond float32's range: +-inf (no numpy warning)
    if overflow and say_overflow:
        warnings.warn(FLOAT32_OVERFLOW, RuntimeWarning, stacklevel=2)
    as32 += np.float32(0.0)  # -0.0 + 0.0 == +0.0
    bits = as32.view(np.uint32)
    # IEEE order as unsigned ints: flip all bits of negatives, only the sign bit of the others;
    # then invert everything for descending order.
    flip = (bits.view(np.int32) >> np.int32(31)).view(np.uint32)
    flip |= np.uint32(0x80000000)
    bits ^= flip
    np.invert(bits, out=bits)
    return bits


def trec_positions(
    qidx: IntArray,
    scores: npt.NDArray[np.float64],
    *,
    docs: Strings,
    rows: IntArray | None,
    judged: IntArray,
    query_start: IntArray,
    query_sizes: IntArray,
    out: U64Array,
    workers: int | None,
    double: bool = False,
) -> IntArray:
    """0-based positions of the ``judged`` entries (indices into ``rows``, None: every row of
    ``docs``) within their query. The rows are grouped by query in increasing code order:
    ``query_start`` and ``query_sizes`` are each query code's first row and number of rows.

    ``out``: a uint64 array of ``qidx.size`` to build the sort keys in (overwritten).

    Order: float32 score descending (``double``: float64), then doc ID descending. Only tie
    groups (of equal float32 scores) that hold a judged document are ordered further, by the
    float64 score when ``double``, then by doc ID: the order among unjudged documents changes
    no measure.
    """
    key = out
    for lo in range(0, key.size, BLOCK):  # block by block: small temporaries
        hi = min(lo + BLOCK, key.size)
        part = key[lo:hi]
        np.copyto(part, qidx[lo:hi], casting="unsafe")
        part <<= U64(32)
        part |= _descending_float32_key(scores[lo:hi], say_overflow=not double)
    jkey = key[judged]
    begin = query_start[qidx[judged]]
    order: IntArray | None = None
    if bool(np.all(key[1:] >= key[:-1])):
        # already in order: an entry's slot is its row, unless it ties with a neighbour
        left, right = judged.astype(np.int64), judged.astype(np.int64) + 1
        before = key[np.maximum(judged - 1, 0)] == jkey
        before[judged == 0] = False
        after = key[np.minimum(judged + 1, key.size - 1)] == jkey
        after[judged == key.size - 1] = False
        tie = np.flatnonzero(before | after)
        left[tie] = np.searchsorted(key, jkey[tie], side="left")
        right[tie] = np.searchsorted(key, jkey[tie], side="right")
    else:
        order = _sort_within_queries(key, qidx, query_start, query_sizes, workers)
        # searched in key order, each search starts where the last one ended
        by_key = np.argsort(jkey)
        left, right = np.empty_like(judged, dtype=np.int64), np.empty_like(judged, dtype=np.int64)
        left[by_key] = np.searchsorted(key, jkey[by_key], side="left")
        right[by_key] = np.searchsorted(key, jkey[by_key], side="right")
    in_group = np.zeros(judged.size, dtype=np.int64)
    tied = np.flatnonzero(right - left > 1)
    if tied.size:
        rank_among_ties = (
            _rank_among_ties_pairwise
            if int((right[tied] - left[tied]).sum()) <= max(key.size, _PAIRWISE_MIN)
            else _rank_among_ties_sorted
        )
        in_group[tied] = rank_among_ties(
            docs,
            rows=rows,
            order=order,
            judged=judged[tied],
            left=left[tied],
            right=right[tied],
            scores=scores if double else None,
        )
    position: IntArray = left + in_group - begin
    return position


def _sort_within_queries(
    key: U64Array,
    qidx: IntArray,
    query_start: IntArray,
    query_sizes: IntArray,
    workers: int | None,
) -> IntArray:
    """Sort ``key`` (``query << 32 | low 32 bits``) in place and return the stable order it was
    sorted by; the rows are grouped by query in increasing code order.

    Each query's rows are sorted on their own (numpy's sort of many small rows is several times
    faster than one sort of them all), by (low 32 bits, row within the query) packed in one
    uint64; queries of more than 16,384 rows, or very ragged sizes, take one stable argsort.
    """
    packed = np.empty(key.size, dtype=np.uint64)
    for lo in range(0, key.size, BLOCK):  # block by block: small temporaries
        hi = min(lo + BLOCK, key.size)
        part = packed[lo:hi]
        np.left_shift(key[lo:hi], U64(32), out=part)  # the query bits go
        within = np.arange(lo, hi, dtype=np.int64) - query_start[qidx[lo:hi]]
        part |= within.view(np.uint64)
    if not sort_segments(packed, query_sizes, workers):
        order: IntArray = np.argsort(key, kind="stable").astype(np.int64)
        key[:] = key[order]
        return order
    low = U64(0xFFFFFFFF)
    for lo in range(0, key.size, BLOCK):
        hi = min(lo + BLOCK, key.size)
        part, sorted_part = key[lo:hi], packed[lo:hi]
        part >>= U64(32)  # the query bits stay (each row keeps its query's segment) ...
        part <<= U64(32)
        part |= sorted_part >> U64(32)  # ... with the sorted low bits
        sorted_part &= low  # the row within the query ...
        sorted_part.view(np.int64)[:] += query_start[qidx[lo:hi]]  # ... and the row itself
    return packed.view(np.int64)


_PAIRWISE_MIN = 1 << 16  # tie pairs always compared pairwise below this many


def _rank_among_ties_pairwise(
    docs: Strings,
    *,
    rows: IntArray | None,
    order: IntArray | None,
    judged: IntArray,
    left: IntArray,
    right: IntArray,
    scores: npt.NDArray[np.float64] | None = None,
) -> IntArray:
    """For each judged entry (index into ``rows``; None: every row of ``docs``) whose tie
    group is the sorted slots ``left .. right - 1`` (slot ``i`` holds entry ``order[i]``;
    None: entry ``i``): how many docs of its group have a greater ID (byte order); with
    ``scores`` (per entry), how many have a greater score or an equal score and a greater ID.

    Compares each entry with every member of its group: fast while groups are small. Most
    pairs are decided by the IDs' first 8 bytes and their lengths; only two different IDs of 8
    bytes or more that share their first 8 bytes compare the ID strings.
    """
    sizes = right - left
    owner = np.repeat(np.arange(judged.size, dtype=np.int64), sizes)
    member_slot = ranges(left, sizes)
    member_local = member_slot if order is None else order[member_slot]
    member_row = member_local if rows is None else rows[member_local]
    judged_row = judged if rows is None else rows[judged]
    words, lengths = docs.words(np.concatenate([member_row, judged_row]))
    n = member_row.size
    member_word, member_length = words[:n], lengths[:n]
    owner_word, owner_length = words[n:][owner], lengths[n:][owner]
    greater = member_word > owner_word
    same_word = member_word == owner_word
    greater |= same_word & (member_length > owner_length)
    # equal first 8 bytes: an ID shorter than 8 bytes is then a prefix of the other, so the
    # lengths decide; when both IDs have 8 bytes or more, only the strings can tell
    unsure = np.flatnonzero(
        same_word
        & (np.minimum(member_length, owner_length) >= 8)
        & (np.maximum(member_length, owner_length) > 8)
        & (member_row != judged_row[owner])
    )
    if unsure.size:
        greater[unsure] = docs.greater(member_row[unsure], docs, judged_row[owner[unsure]])
    if scores is not None:
        member_score, owner_score = scores[member_local], scores[judged][owner]
        greater &= member_score == owner_score  # -0.0 == 0.0, as in C
        greater |= member_score > owner_score
    counts: IntArray = np.bincount(owner[greater], minlength=judged.size).astype(np.int64)
    return counts


def _rank_among_ties_sorted(
    docs: Strings,
    *,
    rows: IntArray | None,
    order: IntArray | None,
    judged: IntArray,
    left: IntArray,
    right: IntArray,
    scores: npt.NDArray[np.float64] | None = None,
) -> IntArray:
    """:func:`_rank_among_ties_pairwise` for large tie groups: every member of the groups is
    sorted once by (group, score descending when ``scores`` is given, ID descending)."""
    group_start, first = np.unique(left, return_index=True)
    sizes = right[first] - group_start
    member_slot = ranges(group_start, sizes)
    member_local = member_slot if order is None else order[member_slot]
    member_group = np.repeat(np.arange(group_start.size, dtype=np.int64), sizes)
    member_row = member_local if rows is None else rows[member_local]
    # np.lexsort's last key sorts first: group, then score and ID descending (the ID in byte
    # order: its 8-byte words as big-endian integers, inverted, then its length, negated)
    lengths = docs.lengths(member_row)
    keys: list[npt.NDArray[np.generic]] = [-lengths]
    for k in reversed(range((int(lengths.max(initial=0)) + 7) // 8)):
        keys.append(~docs.words(member_row, k)[0])
    if scores is not None:
        keys.append(-(scores[member_local] + 0.0))  # -0.0 + 0.0 == +0.0: ties with 0.0
    keys.append(member_group)
    ranked_np = np.lexsort(keys).astype(np.int64)
    member_rank = np.empty(ranked_np.size, dtype=np.int64)
    member_rank[ranked_np] = np.arange(ranked_np.size, dtype=np.int64) - np.repeat(
        np.cumsum(sizes) - sizes, sizes
    )
    if order is None:  # members were listed by slot, which is their row order here
        where = np.searchsorted(member_local, judged)
    else:
        by_local = np.argsort(member_local)
        where = by_local[np.searchsorted(member_local[by_local], judged)]
    ranks: IntArray = member_rank[where]
    return ranks


def given_positions(
    qidx: IntArray, ranks: IntArray | None, judged: IntArray, query_start: IntArray
) -> IntArray:
    """Positions by ``rank`` ascending (else row order) within each query (``query_start``: as
    for :func:`trec_positions`)."""
    order = np.argsort(qidx, kind="stable") if ranks is None else np.lexsort((ranks, qidx))
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.arange(order.size, dtype=np.int64)
    position: IntArray = inverse[judged] - query_start[qidx[judged]]
    return position


def keep_first(
    dup_rows: IntArray,
    *,
    run_q: Strings,
    run_d: Strings,
    scores: npt.NDArray[np.float64],
    ranks: IntArray | None,
    ties: str,
    n_rows: int,
    double: bool = False,
) -> npt.NDArray[np.bool_]:
    """Row mask keeping, of each duplicated (query, doc) pair, the occurrence ranked first."""
    key: npt.NDArray[np.generic]
    if ties == "trec" and double:
        key = -(scores[dup_rows] + 0.0)
    elif ties == "trec":
        key = _descending_float32_key(scores[dup_rows])
    elif ranks is not None:
        key = ranks[dup_rows]
    else:
        key = np.zeros(dup_rows.size, dtype=np.int64)
    order = np.lexsort((dup_rows, key))  # ranked first, then first in the run
    # each (query, doc) pair's code; object arrays: numpy's str dtypes drop trailing NULs
    _, query_code = np.unique(np.array(run_q.to_list(dup_rows), dtype=object), return_inverse=True)
    _, doc_code = np.unique(np.array(run_d.to_list(dup_rows), dtype=object), return_inverse=True)
    pair = query_code.astype(np.int64) * (int(doc_code.max()) + 1) + doc_code
    _, first = np.unique(pair[order], return_index=True)  # each pair's first in ``order``
    keep = np.ones(n_rows, dtype=bool)
    keep[dup_rows] = False
    keep[dup_rows[order[first]]] = True
    return keep
