"""FTS5's segment writer, compiled by Numba: sorted term occurrences in, leaf pages out.

The functions mirror those of SQLite's ``fts5_index.c`` that write a segment when FTS5 merges
segments (``fts5IndexMergeLevel``, which ``optimize`` runs): ``fts5WriteAppendTerm``,
``fts5WriteAppendRowid``, ``fts5WriteAppendPoslistData``, ``fts5WriteFlushLeaf``,
``fts5WriteFlushBtree``, ``fts5WriteBtreeNoTerm``, ``fts5WriteDlidxAppend`` and
``fts5WriteFinish``, with the same checks in the same order, so the pages are the ones FTS5
writes (``tests/test_fts5_segment.py`` compares them byte for byte). Their state
(``Fts5SegWriter``) lives in one integer array, ``state``, indexed by the constants below.

Numba compiles the writer on first use (10-20 s on this 2-core machine) and caches the machine
code beside this module (``cache=True``, in ``__pycache__``; ``make``'s set-up fills it with
``python -m evalkit.systems.fts5_writer``); :func:`compile_writer` loads it ahead of forking, so
that forked range processes share it. Importing this module imports Numba (0.5-1 s): only a
large index does (``evalkit.systems.store.SEGMENT_FROM``).
"""

# Numba's compiled functions take their arrays positionally, as the C functions they mirror.
# ruff: noqa: PLR0917

from __future__ import annotations

import functools

import numba
import numpy as np

__all__ = ["common_prefixes", "compile_writer", "term_order", "varints", "write_pages"]

# state[...]: the page being written and the writer's flags (Fts5SegWriter, Fts5PageWriter)
_N, _PGIDX, _PREV_PGIDX, _PGNO = 0, 1, 2, 3
_FIRST_TERM, _FIRST_ROWID_PAGE, _FIRST_ROWID_DOCLIST, _PREV_ROWID = 4, 5, 6, 7
_BT_TERM, _BT_LENGTH, _BT_PAGE, _EMPTY = 8, 9, 10, 11
_OUT, _PAGES, _IDX, _DLIDX, _DLIDX_BYTES, _LEVELS = 12, 13, 14, 15, 16, 17
_STATE = 18

_MAX_LEVELS = 16  # doclist-index levels; each holds pgsz bytes of page-first row IDs
# meta[...] per level (Fts5DlidxWriter): bytes used, its page number, whether ``prev`` is set
_SIZE, _PAGE, _VALID, _PREV = 0, 1, 2, 3
_DLIDX_BIT, _HEIGHT_SHIFT = 36, 31

_jit = numba.njit(cache=True, nogil=True)


@functools.cache
def compile_writer() -> bool:
    """Compile the writer (or read it from Numba's cache) now, not at its first call; ``False``
    when Numba cannot here (for example, no writable place for its cache), and the store then
    uses FTS5's own inserts."""
    small = np.zeros(1, dtype=np.int64)
    two = np.array([0, 2])
    data = np.frombuffer(b"0a", np.uint8)
    try:
        _write(small, small + 1, small, two, data, small, 4050)
        _term_order(two, data, small)
        _common_prefixes(two, data)
    except (RuntimeError, OSError, numba.core.errors.NumbaError):
        return False
    return True


def _int64(values: np.ndarray) -> np.ndarray:
    """``values`` as int64, copied only when they are another type."""
    return np.asarray(values, dtype=np.int64)


def write_pages(
    terms: np.ndarray,
    rowids: np.ndarray,
    positions: np.ndarray,
    vocabulary_offsets: np.ndarray,
    vocabulary_data: np.ndarray,
    shared: np.ndarray,
    pgsz: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The segment of the occurrences ``(terms[i], rowids[i], positions[i])``, sorted by term
    rank, then row ID, then position; term ``t`` is ``vocabulary_data[vocabulary_offsets[t]:
    vocabulary_offsets[t + 1]]`` (as FTS5 stores it, after its index byte) and shares
    ``shared[t]`` bytes with term ``t - 1``.

    Returns ``(pages, page_ends, index, doclist_keys, doclist_data, doclist_ends)``: the leaf
    pages concatenated (page ``p`` ends at ``page_ends[p - 1]``); one term-index row per
    ``index`` row ``(term, prefix length, pgno value)``; the doclist-index rows, their %_data
    IDs without the segment ID, and their blocks concatenated.
    """
    return _write(  # type: ignore[no-any-return]
        _int64(terms),
        _int64(rowids),
        _int64(positions),
        _int64(vocabulary_offsets),
        vocabulary_data,
        _int64(shared),
        int(pgsz),
    )


@_jit
def _grow(array: np.ndarray, need: int) -> np.ndarray:
    if need <= len(array):
        return array
    bigger = np.zeros(max(need, 2 * len(array)), dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


@_jit
def _put_varint(out: np.ndarray, at: int, value: int) -> int:
    """SQLite's varint of ``value`` (below 2**56) at ``out[at]``; the bytes written."""
    if value < 0x80:
        out[at] = value
        return 1
    size = 2
    while size < 8 and value >= 1 << (7 * size):
        size += 1
    for i in range(size):
        byte = (value >> (7 * (size - 1 - i))) & 0x7F
        out[at + i] = byte | 0x80 if i < size - 1 else byte
    return size


@_jit
def _get_varint(data: np.ndarray, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = int(data[at + i])
        if i == 8:
            return (value << 8) | byte, 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i + 1
    return value, 9


@_jit
def _flush_leaf(state, page, pgidx, out, page_ends, levels, meta):  # type: ignore[no-untyped-def]
    n = state[_N]
    page[2] = (n >> 8) & 0xFF
    page[3] = n & 0xFF
    if state[_FIRST_TERM]:  # fts5WriteBtreeNoTerm
        if state[_FIRST_ROWID_PAGE] and meta[_SIZE, 0] > 0:
            # a page without a row ID: its entry grows the level past pgsz, as C's buffer grows
            if meta[_SIZE, 0] + 1 > levels.shape[1]:
                wider = np.zeros((levels.shape[0], 2 * levels.shape[1]), dtype=levels.dtype)
                wider[:, : levels.shape[1]] = levels
                levels = wider
            meta[_SIZE, 0] += _put_varint(levels[0], meta[_SIZE, 0], 0)
        state[_EMPTY] += 1
    else:
        page[n : n + state[_PGIDX]] = pgidx[: state[_PGIDX]]
        n += state[_PGIDX]
    out = _grow(out, state[_OUT] + n)
    out[state[_OUT] : state[_OUT] + n] = page[:n]
    state[_OUT] += n
    page_ends = _grow(page_ends, state[_PAGES] + 1)
    page_ends[state[_PAGES]] = state[_OUT]
    state[_PAGES] += 1
    page[:4] = 0
    state[_N], state[_PGIDX], state[_PREV_PGIDX] = 4, 0, 0
    state[_PGNO] += 1
    state[_FIRST_TERM], state[_FIRST_ROWID_PAGE] = 1, 1
    return out, page_ends, levels


@_jit
def _add_dlidx(state, dl_keys, dl_ends, dl_data, key, block, size):  # type: ignore[no-untyped-def]
    dl_keys = _grow(dl_keys, state[_DLIDX] + 1)
    dl_ends = _grow(dl_ends, state[_DLIDX] + 1)
    dl_data = _grow(dl_data, state[_DLIDX_BYTES] + size)
    dl_data[state[_DLIDX_BYTES] : state[_DLIDX_BYTES] + size] = block[:size]
    state[_DLIDX_BYTES] += size
    dl_keys[state[_DLIDX]] = key
    dl_ends[state[_DLIDX]] = state[_DLIDX_BYTES]
    state[_DLIDX] += 1
    return dl_keys, dl_ends, dl_data


@_jit
def _flush_btree(  # type: ignore[no-untyped-def]
    state, index, levels, meta, dl_keys, dl_ends, dl_data
):
    if state[_BT_PAGE] == 0:
        return index, dl_keys, dl_ends, dl_data
    flag = 1 if meta[_SIZE, 0] > 0 and state[_EMPTY] >= 4 else 0  # fts5WriteFlushDlidx
    for depth in range(state[_LEVELS]):
        if meta[_SIZE, depth] == 0:
            break
        if flag:
            key = (1 << _DLIDX_BIT) + (depth << _HEIGHT_SHIFT) + meta[_PAGE, depth]
            dl_keys, dl_ends, dl_data = _add_dlidx(
                state, dl_keys, dl_ends, dl_data, key, levels[depth], meta[_SIZE, depth]
            )
        meta[_SIZE, depth] = 0
        meta[_VALID, depth] = 0
    state[_EMPTY] = 0
    index = _grow(index, 3 * (state[_IDX] + 1))
    index[3 * state[_IDX]] = state[_BT_TERM]
    index[3 * state[_IDX] + 1] = state[_BT_LENGTH]
    index[3 * state[_IDX] + 2] = flag + (state[_BT_PAGE] << 1)
    state[_IDX] += 1
    state[_BT_PAGE] = 0
    return index, dl_keys, dl_ends, dl_data


@_jit
def _dlidx_append(state, rowid, pgsz, levels, meta, dl_keys, dl_ends, dl_data):  # type: ignore[no-untyped-def]
    depth = 0
    done = False
    while not done:
        if meta[_SIZE, depth] >= pgsz:
            levels[depth, 0] = 0x01  # not the root
            key = (1 << _DLIDX_BIT) + (depth << _HEIGHT_SHIFT) + meta[_PAGE, depth]
            dl_keys, dl_ends, dl_data = _add_dlidx(
                state, dl_keys, dl_ends, dl_data, key, levels[depth], meta[_SIZE, depth]
            )
            if depth + 2 > state[_LEVELS]:
                if depth + 2 > _MAX_LEVELS:
                    raise ValueError("FTS5 segment: too many doclist-index levels")
                state[_LEVELS] = depth + 2
            if meta[_SIZE, depth + 1] == 0:
                skip = _get_varint(levels[depth], 1)[1]
                first = _get_varint(levels[depth], 1 + skip)[0]
                meta[_PAGE, depth + 1] = meta[_PAGE, depth]
                size = _put_varint(levels[depth + 1], 0, 0)
                size += _put_varint(levels[depth + 1], size, meta[_PAGE, depth])
                size += _put_varint(levels[depth + 1], size, first)
                meta[_SIZE, depth + 1] = size
                meta[_VALID, depth + 1] = 1
                meta[_PREV, depth + 1] = first
            meta[_SIZE, depth] = 0
            meta[_VALID, depth] = 0
            meta[_PAGE, depth] += 1
        else:
            done = True
        if meta[_VALID, depth]:
            value = rowid - meta[_PREV, depth]
        else:
            page_number = state[_PGNO] if depth == 0 else meta[_PAGE, depth - 1]
            meta[_SIZE, depth] += _put_varint(levels[depth], meta[_SIZE, depth], 0 if done else 1)
            meta[_SIZE, depth] += _put_varint(levels[depth], meta[_SIZE, depth], page_number)
            value = rowid
        meta[_SIZE, depth] += _put_varint(levels[depth], meta[_SIZE, depth], value)
        meta[_VALID, depth] = 1
        meta[_PREV, depth] = rowid
        depth += 1
    return dl_keys, dl_ends, dl_data


@_jit
def _write(terms, rowids, positions, offsets, data, shared, pgsz):  # type: ignore[no-untyped-def]
    longest = 0
    for t in range(len(offsets) - 1):
        longest = max(longest, offsets[t + 1] - offsets[t])
    room = 2 * pgsz + longest + 64
    page = np.zeros(room, dtype=np.uint8)
    pgidx = np.zeros(room, dtype=np.uint8)
    state = np.zeros(_STATE, dtype=np.int64)
    state[_N], state[_PGNO], state[_FIRST_TERM], state[_BT_PAGE], state[_LEVELS] = 4, 1, 1, 1, 1
    state[_BT_TERM] = -1
    out = np.zeros(max(1024, len(terms) * 3), dtype=np.uint8)
    page_ends = np.zeros(1024, dtype=np.int64)
    index = np.zeros(3 * 1024, dtype=np.int64)
    dl_keys = np.zeros(64, dtype=np.int64)
    dl_ends = np.zeros(64, dtype=np.int64)
    dl_data = np.zeros(1024, dtype=np.uint8)
    levels = np.zeros((_MAX_LEVELS, 2 * pgsz + 64), dtype=np.uint8)
    meta = np.zeros((4, _MAX_LEVELS), dtype=np.int64)
    poslist = np.zeros(64, dtype=np.uint8)

    i, count = 0, len(terms)
    while i < count:
        term = terms[i]
        # fts5WriteAppendTerm
        begin, end = offsets[term], offsets[term + 1]
        size = end - begin
        if state[_N] + state[_PGIDX] + size + 2 >= pgsz and state[_N] > 4:
            out, page_ends, levels = _flush_leaf(state, page, pgidx, out, page_ends, levels, meta)
        state[_PGIDX] += _put_varint(pgidx, state[_PGIDX], state[_N] - state[_PREV_PGIDX])
        state[_PREV_PGIDX] = state[_N]
        prefix = 0
        if state[_FIRST_TERM]:
            if state[_PGNO] != 1:  # fts5WriteBtreeTerm
                index, dl_keys, dl_ends, dl_data = _flush_btree(
                    state, index, levels, meta, dl_keys, dl_ends, dl_data
                )
                state[_BT_TERM] = term
                state[_BT_LENGTH] = shared[term] + 1
                state[_BT_PAGE] = state[_PGNO]
        else:
            prefix = shared[term]
            state[_N] += _put_varint(page, state[_N], prefix)
        state[_N] += _put_varint(page, state[_N], size - prefix)
        page[state[_N] : state[_N] + size - prefix] = data[begin + prefix : end]
        state[_N] += size - prefix
        state[_FIRST_TERM], state[_FIRST_ROWID_PAGE], state[_FIRST_ROWID_DOCLIST] = 0, 0, 1
        meta[_PAGE, 0] = state[_PGNO]

        while i < count and terms[i] == term:
            rowid = rowids[i]
            # the position list of (term, rowid): offset + 2, then delta + 2
            stop = i
            while stop < count and terms[stop] == term and rowids[stop] == rowid:
                stop += 1
            poslist = _grow(poslist, 9 * (stop - i))
            length, previous = 0, 0
            for j in range(i, stop):
                length += _put_varint(poslist, length, positions[j] - previous + 2)
                previous = positions[j]
            i = stop
            # fts5WriteAppendRowid
            if state[_N] + state[_PGIDX] >= pgsz:
                out, page_ends, levels = _flush_leaf(
                    state, page, pgidx, out, page_ends, levels, meta
                )
            if state[_FIRST_ROWID_PAGE]:
                page[0] = (state[_N] >> 8) & 0xFF
                page[1] = state[_N] & 0xFF
                dl_keys, dl_ends, dl_data = _dlidx_append(
                    state, rowid, pgsz, levels, meta, dl_keys, dl_ends, dl_data
                )
            if state[_FIRST_ROWID_DOCLIST] or state[_FIRST_ROWID_PAGE]:
                state[_N] += _put_varint(page, state[_N], rowid)
            else:
                state[_N] += _put_varint(page, state[_N], rowid - state[_PREV_ROWID])
            state[_PREV_ROWID] = rowid
            state[_FIRST_ROWID_DOCLIST], state[_FIRST_ROWID_PAGE] = 0, 0
            state[_N] += _put_varint(page, state[_N], 2 * length)  # size, no delete flag
            # fts5WriteAppendPoslistData
            at = 0
            while state[_N] + state[_PGIDX] + (length - at) >= pgsz:
                wanted = pgsz - state[_N] - state[_PGIDX]
                copied = 0
                while copied < wanted:
                    copied += _get_varint(poslist, at + copied)[1]
                page[state[_N] : state[_N] + copied] = poslist[at : at + copied]
                state[_N] += copied
                at += copied
                out, page_ends, levels = _flush_leaf(
                    state, page, pgidx, out, page_ends, levels, meta
                )
            if length - at > 0:
                page[state[_N] : state[_N] + length - at] = poslist[at:length]
                state[_N] += length - at
    # fts5WriteFinish
    if state[_N] > 4:
        out, page_ends, levels = _flush_leaf(state, page, pgidx, out, page_ends, levels, meta)
    if state[_PGNO] > 1:
        index, dl_keys, dl_ends, dl_data = _flush_btree(
            state, index, levels, meta, dl_keys, dl_ends, dl_data
        )
    return (
        out[: state[_OUT]],
        page_ends[: state[_PAGES]],
        index[: 3 * state[_IDX]].reshape(-1, 3),
        dl_keys[: state[_DLIDX]],
        dl_data[: state[_DLIDX_BYTES]],
        dl_ends[: state[_DLIDX]],
    )


def varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (each below 2**56) as SQLite varints, concatenated: ``(data, ends)``, value
    ``i`` ending at ``ends[i]``."""
    return _varints(_int64(values))


def term_order(
    offsets: np.ndarray, data: np.ndarray, ties: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The tokens ``data[offsets[i]:offsets[i + 1]]`` sorted by their bytes (stable: equal
    tokens stay in input order): ``(order, first)``, the token indices in sorted order and
    whether each starts a new term.

    The sort key is a token's first 7 bytes from the top of 64 bits, zero-padded, and
    ``min(length, 8)`` in the low byte: that sorts as the bytes do for tokens of up to 7 bytes,
    and puts longer tokens after them; ``ties`` orders longer tokens with the same key (their
    rank among the distinct longer tokens; 0 for the others). An LSD radix sort of 16-bit
    digits, then a stable sort by ``ties`` of each run of longer tokens with one key.
    """
    return _term_order(_int64(offsets), data, _int64(ties))


def common_prefixes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Bytes each term (``data[offsets[t]:offsets[t + 1]]``, sorted) shares with the one
    before (0 for the first)."""
    return _common_prefixes(_int64(offsets), data)


@_jit
def _prefix_keys(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    count = len(offsets) - 1
    keys = np.empty(count, dtype=np.uint64)
    for i in range(count):
        start, length = offsets[i], offsets[i + 1] - offsets[i]
        key = np.uint64(0)
        for j in range(7):
            key = key << np.uint64(8)
            if j < length:
                key |= np.uint64(data[start + j])
        keys[i] = (key << np.uint64(8)) | np.uint64(min(length, 8))
    return keys


_DIGIT_BITS = 16
_DIGITS = 1 << _DIGIT_BITS


@_jit
def _radix_pass(keys: np.ndarray, order: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """One stable pass of an LSD radix sort, on bits ``shift ..`` of ``keys``."""
    mask = np.uint64(_DIGITS - 1)
    counts = np.zeros(_DIGITS + 1, dtype=np.int64)
    for i in range(len(keys)):
        counts[((keys[i] >> np.uint64(shift)) & mask) + 1] += 1
    if counts.max() == len(keys):  # one digit for all: nothing moves
        return keys, order
    for d in range(_DIGITS):
        counts[d + 1] += counts[d]
    sorted_keys = np.empty_like(keys)
    sorted_order = np.empty_like(order)
    for i in range(len(keys)):
        d = (keys[i] >> np.uint64(shift)) & mask
        place = counts[d]
        counts[d] = place + 1
        sorted_keys[place] = keys[i]
        sorted_order[place] = order[i]
    return sorted_keys, sorted_order


@_jit
def _term_order(
    offsets: np.ndarray, data: np.ndarray, ties: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    keys = _prefix_keys(offsets, data)
    order = np.arange(len(keys), dtype=np.int64)
    for shift in range(0, 64, _DIGIT_BITS):
        keys, order = _radix_pass(keys, order, shift)
    # runs of one key among tokens of more than 7 bytes: ordered by ``ties``, stably
    start = 0
    while start < len(keys):
        stop = start + 1
        while stop < len(keys) and keys[stop] == keys[start]:
            stop += 1
        if stop - start > 1 and (keys[start] & np.uint64(0xFF)) == 8:
            run = order[start:stop].copy()
            within = np.argsort(ties[run], kind="mergesort")
            order[start:stop] = run[within]
        start = stop
    first = np.ones(len(keys), dtype=np.bool_)
    for i in range(1, len(keys)):
        first[i] = keys[i] != keys[i - 1] or ties[order[i]] != ties[order[i - 1]]
    return order, first


@_jit
def _varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    data = np.empty(9 * len(values), dtype=np.uint8)
    ends = np.empty(len(values), dtype=np.int64)
    at = 0
    for i in range(len(values)):
        at += _put_varint(data, at, values[i])
        ends[i] = at
    return data[:at], ends


@_jit
def _common_prefixes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    count = len(offsets) - 1
    shared = np.zeros(count, dtype=np.int64)
    for t in range(1, count):
        a, b = offsets[t - 1], offsets[t]
        limit = min(offsets[t] - a, offsets[t + 1] - b)
        n = 0
        while n < limit and data[a + n] == data[b + n]:
            n += 1
        shared[t] = n
    return shared


if __name__ == "__main__":  # ``python -m evalkit.systems.fts5_writer``: fill Numba's cache
    if not compile_writer():
        print("evalkit: Numba could not compile the bulk FTS5 writer here; FTS5's inserts are used")
