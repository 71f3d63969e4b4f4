"""One FTS5 index segment built from the terms of many rows at once, without FTS5's inserts.

Issue 21: FTS5 spends about 1.3-1.7 microseconds of CPU on every term occurrence it inserts
(its in-memory hash of pending terms, then the flushes and merges of segments), 50 s per core for
a million chunks, more than the whole time allowed. This module builds the segment that FTS5's
own ``optimize`` would write from the same rows, with NumPy and Arrow over all occurrences at once:

1. the terms (space-separated, as FTS5's ``ascii`` tokenizer splits them) are split and
   dictionary-encoded by Arrow; the distinct terms are sorted by their UTF-8 bytes (FTS5
   compares terms with ``memcmp``), and the occurrences are sorted stably by term, which keeps
   each term's rows and positions in order;
2. every record of the segment is encoded as FTS5's leaf format (``fts5_index.c``) lays it out
   when nothing is split across pages: each term prefix-compressed against the previous one,
   each row ID as a delta, each position list's size (bytes times 2, no delete flag) and its
   positions (offset + 2, then delta + 2), all as SQLite varints;
3. the pages are cut by a loop over pages (not over terms or occurrences) that applies the
   checks of FTS5's segment writer (``fts5WriteAppendTerm``, ``fts5WriteAppendRowid``,
   ``fts5WriteAppendPoslistData``) to a window of records with NumPy: a term that would end
   within two bytes of the page size starts a new page, as does a row ID once the page is full;
   a position list is split after the first varint that reaches the page size. What changes on
   a new page is re-encoded: its first term in full, its first row ID before any term as an
   absolute value (and its offset in the page header); each page ends with its term offsets
   (the page index), and the term index (``%_idx``: the shortest prefix of each page's first
   term that is larger than the term before, the page number, and whether a doclist index
   exists) and the doclist indexes of doclists spanning four or more term-less pages are
   written as ``fts5WriteFlushBtree`` and ``fts5WriteDlidxAppend`` write them.

The result is FTS5's own format, read by FTS5's own code: ``tests/test_fts5_segment.py`` checks
it byte for byte against the segment that FTS5 writes when it merges the same rows (``optimize``
after inserts, with small page sizes so that terms, row IDs and position lists cross pages, and
doclist indexes of one and two levels appear), and runs FTS5's ``integrity-check``. Terms must be
what the ``ascii`` tokenizer would keep unchanged (ASCII digits and lower-case letters, and any
non-ASCII character): :func:`encode_segment` returns ``None`` for anything else, and the caller
inserts such rows through FTS5 instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_TOKEN_BYTES",
    "Segment", "encode_segment", "page_size", "write_segment"]

#: FTS5's default ``pgsz`` (``FTS5_DEFAULT_PAGE_SIZE``).
DEFAULT_PAGE_SIZE = 4050

# %_data row IDs (``fts5_index.c``): segment ID above bit 37, the doclist-index flag at bit 36,
# the height (a doclist index's level) above bit 31, the page number below.
_SEGMENT_SHIFT, _DLIDX_BIT, _HEIGHT_SHIFT = 37, 36, 31

_TERM, _ROWID, _POSLIST = 0, 1, 2

# FTS5's ``ascii`` tokenizer (``fts5AsciiTokenize``): ASCII digits and letters and every
# non-ASCII byte make tokens, upper-case letters folded to lower case; every other byte divides
# them. As a byte table: token bytes to themselves (folded), dividers to a space.
_ASCII_TOKENIZER = np.full(256, ord(" "), dtype=np.uint8)
for _first, _last in ("09", "az", "AZ"):
    _ASCII_TOKENIZER[ord(_first) : ord(_last) + 1] = np.arange(ord(_first), ord(_last) + 1)
_ASCII_TOKENIZER[ord("A") : ord("Z") + 1] += ord("a") - ord("A")
_ASCII_TOKENIZER[0x80:] = np.arange(0x80, 0x100)

#: FTS5 cuts longer tokens to this many bytes (``FTS5_MAX_TOKEN_SIZE``); such rows go through
#: FTS5 itself.
MAX_TOKEN_BYTES = 32768


@dataclass
class Segment:
    """A built segment: leaf pages ``1..len(pages)``, term-index rows ``(term, pgno value)``,
    doclist-index rows ``(%_data id without the segment ID, block)``, and per row its number of
    tokens (``token_counts``, in row order)."""

    pages: list[bytes]
    term_index: list[tuple[bytes, int]]
    doclist_index: list[tuple[int, bytes]]
    token_counts: np.ndarray
    tokens: int = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = int(self.token_counts.sum())


def page_size(db: sqlite3.Connection, table: str, schema: str = "main") -> int:
    """The ``pgsz`` of the FTS5 table ``schema.table`` (FTS5's default when it was never set)."""
    row = db.execute(f"SELECT v FROM {schema}.{table}_config WHERE k = 'pgsz'").fetchone()
    return int(row[0]) if row is not None else DEFAULT_PAGE_SIZE


def encode_segment(
    terms: Sequence[str], first_rowid: int, pgsz: int = DEFAULT_PAGE_SIZE
) -> Segment | None:
    """The segment of rows ``first_rowid + i`` whose space-separated terms are ``terms[i]``.

    The terms are split as FTS5's ``ascii`` tokenizer splits them (the reference systems'
    terms contain no divider, so each is one token). ``None`` when there is no token at all
    (FTS5 writes no segment then either), or a token of more than ``MAX_TOKEN_BYTES``.
    """
    texts = _ascii_tokenized(pa.array(terms, type=pa.large_string()))
    split = pc.split_pattern(texts, " ")
    del texts
    flat = split.flatten()
    rows = np.asarray(pc.list_parent_indices(split)).astype(np.int32)
    del split
    lengths = pc.binary_length(flat)
    kept = np.asarray(pc.greater(lengths, 0), dtype=bool)
    if not kept.any() or int(pc.max(lengths).as_py()) > MAX_TOKEN_BYTES:
        return None
    del lengths
    if not kept.all():
        flat = flat.filter(pa.array(kept))
        rows = rows[kept]
    del kept
    counts = np.bincount(rows, minlength=len(terms))
    positions = (np.arange(len(rows), dtype=np.int64) - np.repeat(_starts(counts), counts)).astype(
        np.int32
    )
    encoded = pc.dictionary_encode(flat)
    del flat
    order = np.asarray(pc.array_sort_indices(encoded.dictionary), dtype=np.int64)
    ranks = np.empty(len(order), dtype=np.int32)
    ranks[order] = np.arange(len(order), dtype=np.int32)
    # FTS5 stores each term of its main index after the byte "0" (prefix indexes use "1", ...)
    vocabulary = pc.binary_join_element_wise(
        pa.scalar("0", pa.large_string()),
        encoded.dictionary.take(pa.array(order)),
        pa.scalar("", pa.large_string()),
    ).cast(pa.large_binary())
    del order
    occurrence_terms = ranks[np.asarray(encoded.indices)]
    del encoded, ranks
    by_term = np.argsort(occurrence_terms, kind="stable")
    occurrence_terms = occurrence_terms[by_term]
    rows = rows[by_term]
    positions = positions[by_term]
    del by_term
    records = _Records.build(occurrence_terms, rows, positions, vocabulary, first_rowid)
    del occurrence_terms, rows, positions
    pages, term_index, doclist_index = _Writer(records, pgsz).write()
    return Segment(pages, term_index, doclist_index, counts)


def write_segment(
    db: sqlite3.Connection,
    table: str,
    segment_id: int,
    segment: Segment,
    first_rowid: int,
    schema: str = "main",
) -> None:
    """Insert ``segment``'s pages, term index, doclist indexes and row sizes (rows
    ``first_rowid ..``) into the FTS5 table ``schema.table`` as segment ``segment_id``; the
    caller records the segment in the structure and the totals (see ``evalkit.systems.store``).
    """
    base = segment_id << _SEGMENT_SHIFT
    db.executemany(
        f"INSERT INTO {schema}.{table}_data(id, block) VALUES (?, ?)",
        [(base + pgno, page) for pgno, page in enumerate(segment.pages, start=1)]
        + [(base + key, block) for key, block in segment.doclist_index],
    )
    db.executemany(
        f"INSERT INTO {schema}.{table}_idx(segid, term, pgno) VALUES (?, ?, ?)",
        [(segment_id, term, pgno) for term, pgno in segment.term_index],
    )
    counts = segment.token_counts
    sizes = _varint_blobs(counts)
    db.executemany(
        f"INSERT INTO {schema}.{table}_docsize(id, sz) VALUES (?, ?)",
        zip(range(first_rowid, first_rowid + len(counts)), sizes, strict=True),
    )


def _ascii_tokenized(texts: pa.LargeStringArray) -> pa.LargeStringArray:
    """``texts`` with every divider of the ``ascii`` tokenizer a space, letters lower-cased."""
    validity, offsets, data = texts.buffers()
    if data is None:
        return texts
    mapped = _ASCII_TOKENIZER[np.frombuffer(data, dtype=np.uint8)]
    return pa.LargeStringArray.from_buffers(
        len(texts), offsets, pa.py_buffer(mapped), validity, texts.null_count, texts.offset
    )


def _starts(counts: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums: where each of the runs of ``counts`` begins."""
    starts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _varint_lengths(values: np.ndarray) -> np.ndarray:
    """Bytes of each SQLite varint (``int8``; every value here is below 2**35)."""
    lengths = np.ones(len(values), dtype=np.int8)
    for bits in (7, 14, 21, 28):
        lengths += values >= (1 << bits)
    return lengths


def _put_varints(out: np.ndarray, at: np.ndarray, values: np.ndarray, lengths: np.ndarray) -> None:
    """Write ``values`` as SQLite varints of ``lengths`` bytes into ``out`` at offsets ``at``
    (in blocks, to bound the temporaries)."""
    block = 1 << 22
    for begin in range(0, len(values), block):
        part = slice(begin, begin + block)
        where, value, length = at[part], values[part].astype(np.int64), lengths[part]
        for byte in range(int(length.max(initial=0))):
            mask = length > byte
            shift = 7 * (length[mask].astype(np.int64) - 1 - byte)
            more = np.where(byte < length[mask] - 1, 0x80, 0)
            out[where[mask] + byte] = ((value[mask] >> shift) & 0x7F) | more


def _varint(value: int) -> bytes:
    groups, rest = [value & 0x7F], value >> 7
    while rest:
        groups.append(0x80 | (rest & 0x7F))
        rest >>= 7
    return bytes(reversed(groups))


def _varint_blobs(values: np.ndarray) -> list[bytes]:
    lengths = _varint_lengths(values)
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    at = _starts(lengths)
    _put_varints(out, at, values.astype(np.int64), lengths)
    data = out.tobytes()
    return [data[a : a + n] for a, n in zip(at.tolist(), lengths.tolist(), strict=True)]


def _gather_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every range, concatenated."""
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) + np.repeat(starts - _starts(lengths), lengths)


def _common_prefixes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Bytes each term (``data[offsets[t]:offsets[t + 1]]``, in sorted order) shares with the
    term before it (0 for the first)."""
    lengths = np.diff(offsets)
    shared = np.zeros(len(lengths), dtype=np.int64)
    active = np.arange(1, len(lengths), dtype=np.int64)
    depth = 0
    while len(active):
        limit = np.minimum(lengths[active], lengths[active - 1])
        active = active[limit > depth]
        same = data[offsets[active] + depth] == data[offsets[active - 1] + depth]
        active = active[same]
        shared[active] += 1
        depth += 1
    return shared


@dataclass
class _Records:
    """Every record of the segment in order (per term: the term, then per row its row ID with
    its position list's size, then the position list), encoded as if no page split anything.

    Per record: ``kind`` and ``start`` (``start[-1]``: the stream's length), and ``longer``:
    how many more bytes it takes as a page's first term (in full) or first row ID (absolute).
    Per term (in order): its bytes (``vocabulary_offsets``/``vocabulary_data``) and the bytes
    it shares with the term before (``shared``). Per (term, row) pair: ``rowids`` and the
    bytes of its row ID delta (``delta_lengths``). ``stream``: the encoded bytes.
    """

    kind: np.ndarray
    start: np.ndarray
    longer: np.ndarray
    vocabulary_offsets: np.ndarray
    vocabulary_data: np.ndarray
    shared: np.ndarray
    rowids: np.ndarray
    delta_lengths: np.ndarray
    stream: np.ndarray

    @classmethod
    def build(
        cls,
        terms: np.ndarray,
        rows: np.ndarray,
        positions: np.ndarray,
        vocabulary: pa.Array,
        first_rowid: int,
    ) -> _Records:
        """From the occurrences sorted by term (then row, then position): ``terms`` (ranks in
        ``vocabulary``), ``rows`` (from 0) and ``positions``."""
        # (term, row) pairs, in order; the first occurrence of each starts a position list
        new_pair = np.ones(len(terms), dtype=bool)
        np.not_equal(terms[1:], terms[:-1], out=new_pair[1:])
        new_pair[1:] |= rows[1:] != rows[:-1]
        pair_first = np.flatnonzero(new_pair)
        values = positions + 2
        values[1:] -= np.where(new_pair[1:], 0, positions[:-1])
        value_lengths = _varint_lengths(values)
        list_lengths = np.add.reduceat(value_lengths, pair_first, dtype=np.int64)
        pair_terms = terms[pair_first]
        rowids = rows[pair_first].astype(np.int64) + first_rowid
        new_term = np.ones(len(pair_first), dtype=bool)
        np.not_equal(pair_terms[1:], pair_terms[:-1], out=new_term[1:])
        del pair_terms
        deltas = rowids.copy()
        deltas[1:] -= np.where(new_term[1:], 0, rowids[:-1])
        delta_lengths = _varint_lengths(deltas)
        size_values = 2 * list_lengths
        size_lengths = _varint_lengths(size_values)

        offsets = np.frombuffer(vocabulary.buffers()[1], dtype=np.int64)[
            vocabulary.offset : vocabulary.offset + len(vocabulary) + 1
        ]
        data = np.frombuffer(vocabulary.buffers()[2], dtype=np.uint8)
        term_lengths = np.diff(offsets)
        shared = _common_prefixes(offsets, data)
        suffix_lengths = term_lengths - shared
        shared_bytes, suffix_bytes = _varint_lengths(shared), _varint_lengths(suffix_lengths)

        n_terms, n_pairs = len(term_lengths), len(pair_first)
        term_at = np.arange(n_terms, dtype=np.int64) + 2 * np.flatnonzero(new_term)
        rowid_at = np.cumsum(new_term) + 2 * np.arange(n_pairs, dtype=np.int64)
        del new_term
        kind = np.full(n_terms + 2 * n_pairs, _POSLIST, dtype=np.int8)
        kind[term_at], kind[rowid_at] = _TERM, _ROWID
        length = np.empty(len(kind), dtype=np.int64)
        length[term_at] = shared_bytes + suffix_bytes + suffix_lengths
        length[rowid_at] = delta_lengths + size_lengths
        length[rowid_at + 1] = list_lengths
        start = np.zeros(len(kind) + 1, dtype=np.int64)
        np.cumsum(length, out=start[1:])
        del length
        stream = np.zeros(int(start[-1]), dtype=np.uint8)

        at = start[term_at]
        _put_varints(stream, at, shared, shared_bytes)
        at += shared_bytes
        _put_varints(stream, at, suffix_lengths, suffix_bytes)
        at += suffix_bytes
        stream[_gather_ranges(at, suffix_lengths)] = data[
            _gather_ranges(offsets[:-1] + shared, suffix_lengths)
        ]
        del at
        at = start[rowid_at]
        _put_varints(stream, at, deltas, delta_lengths)
        _put_varints(stream, at + delta_lengths, size_values, size_lengths)
        del at, deltas, size_values
        # each position varint: its list's start plus the varints before it in that list
        value_starts = np.cumsum(value_lengths, dtype=np.int64)
        value_starts -= value_lengths
        pair_of_value = np.cumsum(new_pair) - 1
        del new_pair
        value_starts += (start[rowid_at + 1] - value_starts[pair_first])[pair_of_value]
        del pair_of_value
        _put_varints(stream, value_starts, values, value_lengths)
        del value_starts, values, value_lengths

        longer = np.zeros(len(kind), dtype=np.int32)
        longer[term_at] = _varint_lengths(term_lengths) + shared - shared_bytes - suffix_bytes
        longer[rowid_at] = _varint_lengths(rowids) - delta_lengths
        return cls(kind, start, longer, offsets, data, shared, rowids, delta_lengths, stream)


@dataclass
class _DoclistIndexLevel:
    """One level of a doclist index being written (``Fts5DlidxWriter``)."""

    page: int = 0
    block: bytearray = field(default_factory=bytearray)
    previous: int | None = None


class _Writer:
    """Cuts :class:`_Records` into leaf pages as FTS5's segment writer does (see the module
    docstring), with its term index and doclist indexes."""

    def __init__(self, records: _Records, pgsz: int) -> None:
        self.records, self.pgsz = records, pgsz
        self.pages: list[bytes] = []
        self.term_index: list[tuple[bytes, int]] = []
        self.doclist_index: list[tuple[int, bytes]] = []
        self.btree_term, self.btree_page, self.termless = b"", 1, 0
        self.levels = [_DoclistIndexLevel()]

    def write(self) -> tuple[list[bytes], list[tuple[bytes, int]], list[tuple[int, bytes]]]:
        """The pages, the term-index rows and the doclist-index rows."""
        records, pgsz = self.records, self.pgsz
        count, starts, offsets = len(records.kind), records.start, records.vocabulary_offsets
        at, inner, continued = 0, 0, False  # continued: the page resumes record ``at``'s list
        next_term = next_pair = 0  # the term and the pair of the first such record from ``at``
        while at < count:
            page_number = len(self.pages) + 1
            window = min(
                count, int(np.searchsorted(starts, starts[at] + inner + pgsz + 32, "right")) + 1
            )
            kind = records.kind[at:window]
            size = np.diff(starts[at : window + 1])
            term_places = np.flatnonzero(kind == _TERM)
            rowid_places = np.flatnonzero(kind == _ROWID)
            # re-encoded on a page: its first term (in full), and its first row ID if it comes
            # before any term (as an absolute value): the first record unless it continues a
            # list, else the next one if it is a row ID
            changed = [] if continued else [0]
            if continued:
                size[0] -= inner
                if len(kind) > 1 and kind[1] == _ROWID:
                    changed.append(1)
            if len(term_places) and int(term_places[0]) not in changed:
                changed.append(int(term_places[0]))
            size[changed] += records.longer[[at + place for place in changed]]
            offset = 4 + _starts(size)
            index_steps = np.diff(offset[term_places], prepend=0)
            index_before = np.zeros(len(kind) + 1, dtype=np.int64)
            index_before[term_places + 1] = _varint_lengths(index_steps)
            used = offset + np.cumsum(index_before)[:-1]
            full = used + size >= pgsz  # a position list that does not fit is split
            full[rowid_places] = used[rowid_places] >= pgsz
            term_lengths = np.diff(offsets[next_term : next_term + len(term_places) + 1])
            full[term_places] = used[term_places] + term_lengths + 2 >= pgsz
            full[0] &= kind[0] != _TERM  # a page's first term goes in, whatever its size
            found = np.flatnonzero(full)
            if len(found) == 0 and window < count:
                raise RuntimeError("FTS5 segment: a page did not end within its window")
            stop = int(found[0]) if len(found) else len(kind)
            take = None  # bytes of record ``at + stop``'s position list on this page, if split
            if stop < len(kind) and kind[stop] == _POSLIST:
                list_start = int(starts[at + stop]) + (inner if stop == 0 else 0)
                take = self._split(list_start, int(starts[at + stop + 1]), pgsz - int(used[stop]))

            body = self._body(at, stop, take, inner, changed, next_term, next_pair)
            rowid_place = 0
            if not continued and kind[0] == _ROWID:
                rowid_place = 4
            elif continued and stop > 1 and kind[1] == _ROWID:
                rowid_place = int(offset[1])
            if rowid_place:  # the page's first row ID comes before any term
                self._doclist_index_append(int(records.rowids[next_pair]), page_number)
            terms_here = int(np.count_nonzero(term_places < stop))
            if terms_here:
                if page_number != 1:
                    self._flush_btree()
                    begin = int(offsets[next_term])
                    prefix = int(records.shared[next_term]) + 1
                    self.btree_term = records.vocabulary_data[begin : begin + prefix].tobytes()
                    self.btree_page = page_number
                self.levels[0].page = page_number
            else:
                has_rowid = bool(np.count_nonzero(rowid_places < stop))
                if not has_rowid and self.levels[0].block:
                    self.levels[0].block += _varint(0)
                self.termless += 1
            header = rowid_place.to_bytes(2, "big") + (4 + len(body)).to_bytes(2, "big")
            page_index = b"".join(_varint(int(step)) for step in index_steps[:terms_here])
            self.pages.append(header + body + page_index)

            next_term += terms_here
            next_pair += int(np.count_nonzero(rowid_places < stop))
            if stop == len(kind):
                break
            if take is None:
                at, inner, continued = at + stop, 0, False
            else:
                list_start = int(starts[at + stop]) + (inner if stop == 0 else 0)
                if list_start + take == int(starts[at + stop + 1]):
                    at, inner, continued = at + stop + 1, 0, False
                else:
                    inner = list_start + take - int(starts[at + stop])
                    at, continued = at + stop, True
        self._flush_btree()
        return self.pages, self.term_index, self.doclist_index

    def _split(self, list_start: int, list_end: int, room: int) -> int:
        """Bytes of a position list starting at ``list_start`` that go on this page: whole
        varints, the first reaching ``room`` bytes (``fts5WriteAppendPoslistData``)."""
        if room <= 0:
            return 0
        last = list_start + room - 1  # a varint ending here or later ends the page's part
        ends = np.flatnonzero(self.records.stream[last : last + 9] < 0x80)
        boundary = last + int(ends[0]) + 1 if len(ends) else list_end
        return min(boundary, list_end) - list_start

    def _body(
        self,
        at: int,
        stop: int,
        take: int | None,
        inner: int,
        changed: list[int],
        next_term: int,
        next_pair: int,
    ) -> bytes:
        """The page's records ``at .. at + stop`` (from byte ``inner`` of the first, and
        ``take`` bytes of record ``at + stop``'s list when it is split), the records at the
        places ``changed`` re-encoded: the window's first term (``next_term``) in full, its
        first row ID (``next_pair``) as an absolute value."""
        records, stream, starts = self.records, self.records.stream, self.records.start
        position = int(starts[at]) + inner
        if stop == 0:
            return stream[position : position + (take or 0)].tobytes()
        parts = []
        for place in changed:
            if place >= stop:
                continue
            record = at + place
            parts.append(stream[position : int(starts[record])].tobytes())
            if records.kind[record] == _TERM:
                begin, end = (int(x) for x in records.vocabulary_offsets[next_term : next_term + 2])
                parts.append(_varint(end - begin) + records.vocabulary_data[begin:end].tobytes())
            else:
                sizes = int(starts[record]) + int(records.delta_lengths[next_pair])
                parts.append(
                    _varint(int(records.rowids[next_pair]))
                    + stream[sizes : int(starts[record + 1])].tobytes()
                )
            position = int(starts[record + 1])
        end = int(starts[at + stop]) + (take or 0)
        parts.append(stream[position:end].tobytes())
        return b"".join(parts)

    def _flush_btree(self) -> None:
        """``fts5WriteFlushBtree``: the term-index row of the last page that began a term."""
        first = self.levels[0]
        flag = int(bool(first.block) and self.termless >= 4)
        for depth, level in enumerate(self.levels):
            if not level.block:
                break
            if flag:
                key = (1 << _DLIDX_BIT) + (depth << _HEIGHT_SHIFT) + level.page
                self.doclist_index.append((key, bytes(level.block)))
            level.block = bytearray()
            level.previous = None
        self.termless = 0
        self.term_index.append((self.btree_term, flag + (self.btree_page << 1)))

    def _doclist_index_append(self, rowid: int, page_number: int) -> None:
        """``fts5WriteDlidxAppend``: the first row ID of a page that continues a doclist."""
        depth, done = 0, False
        while not done:
            level = self.levels[depth]
            if len(level.block) >= self.pgsz:
                level.block[0] = 0x01  # not the root
                key = (1 << _DLIDX_BIT) + (depth << _HEIGHT_SHIFT) + level.page
                self.doclist_index.append((key, bytes(level.block)))
                if depth + 1 == len(self.levels):
                    self.levels.append(_DoclistIndexLevel())
                parent = self.levels[depth + 1]
                if not parent.block:
                    first = _read_varint(level.block, 1 + _varint_size(level.block, 1))
                    parent.page = level.page
                    parent.block += _varint(0) + _varint(level.page) + _varint(first)
                    parent.previous = first
                level.block = bytearray()
                level.previous = None
                level.page += 1
            else:
                done = True
            if level.previous is not None:
                value = rowid - level.previous
            else:
                page = page_number if depth == 0 else self.levels[depth - 1].page
                level.block += _varint(int(not done)) + _varint(page)
                value = rowid
            level.block += _varint(value)
            level.previous = rowid
            depth += 1


def _varint_size(data: bytearray, at: int) -> int:
    size = 1
    while data[at + size - 1] & 0x80 and size < 9:
        size += 1
    return size


def _read_varint(data: bytearray, at: int) -> int:
    value = 0
    for position in range(9):
        byte = data[at + position]
        if position == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value
