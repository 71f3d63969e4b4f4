"""One FTS5 index segment built from the terms of many rows at once, without FTS5's inserts.

Issue 21: FTS5 spends about 1.3-1.7 microseconds of CPU on every term occurrence it inserts
(its in-memory hash of pending terms, then the flushes and merges of segments), 50 s per core for
a million chunks, more than the whole time allowed. :func:`encode_segment` builds the segment
that FTS5's own ``optimize`` writes from the same rows, over all their occurrences at once:

1. the rows' text is split as FTS5's ``ascii`` tokenizer splits it (a byte table: ASCII letters
   and digits and every non-ASCII byte make tokens, upper case folded; every other byte divides
   them), by Arrow;
2. the tokens are sorted by their bytes, stably, so each term's rows and positions stay in order
   (``fts5_writer.term_order``: an LSD radix sort of 64-bit keys made of a token's first 7
   bytes, then Arrow's sort of the distinct longer tokens for ties); the distinct terms are
   stored as FTS5 stores them, after the main index's byte "0";
3. the page writer of ``fts5_index.c``, ported and compiled by Numba (``fts5_writer``), writes
   the leaf pages, the term index (``%_idx``) and the doclist indexes, with the same checks in
   the same order as FTS5's segment writer.

:func:`write_segment` inserts them, and the row sizes (``%_docsize``), into an FTS5 table; the
caller records the segment in FTS5's structure and totals records (``evalkit.systems.store``).
``tests/test_fts5_segment.py`` checks the result byte for byte against the segment FTS5 writes
when it merges the same rows (``optimize`` after inserts, with small page sizes so that terms,
row IDs and position lists cross pages and doclist indexes of two levels appear), and larger
segments by FTS5's ``integrity-check`` and its answers for every term.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "ASCII_TOKENIZER",
    "DEFAULT_PAGE_SIZE",
    "MAX_ROWID",
    "MAX_TOKEN_BYTES",
    "SEGMENT_SHIFT",
    "Segment",
    "binary_buffers",
    "encode_segment",
    "has_cut_token",
    "page_size",
    "write_segment",
]

#: FTS5's default ``pgsz`` (``FTS5_DEFAULT_PAGE_SIZE``).
DEFAULT_PAGE_SIZE = 4050

#: %_data row IDs (``fts5_index.c``): a segment's ID above this bit, the page number below.
SEGMENT_SHIFT = 37

# FTS5's ``ascii`` tokenizer (``fts5AsciiTokenize``): ASCII digits and letters and every
# non-ASCII byte make tokens, upper-case letters folded to lower case; every other byte divides
# them. As a byte table: token bytes to themselves (folded), dividers to a space.
ASCII_TOKENIZER = np.full(256, ord(" "), dtype=np.uint8)
for _first, _last in ("09", "az", "AZ"):
    ASCII_TOKENIZER[ord(_first) : ord(_last) + 1] = np.arange(ord(_first), ord(_last) + 1)
ASCII_TOKENIZER[ord("A") : ord("Z") + 1] += ord("a") - ord("A")
ASCII_TOKENIZER[0x80:] = np.arange(0x80, 0x100)

_TERM_LISTS = pa.large_list(pa.large_string())  # the list form of terms, as Arrow types

#: The largest row ID a segment here holds (its varints are written in at most 8 bytes).
MAX_ROWID = (1 << 56) - 1

#: FTS5 cuts longer tokens to this many bytes (``FTS5_MAX_TOKEN_SIZE``); :func:`encode_segment`
#: does not take them (:func:`has_cut_token`), and the store inserts such rows through FTS5.
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

    @property
    def tokens(self) -> int:
        """Tokens in all rows (what FTS5's averages record counts)."""
        return int(self.token_counts.sum())


def page_size(db: sqlite3.Connection, table: str, schema: str = "main") -> int:
    """The ``pgsz`` of the FTS5 table ``schema.table`` (FTS5's default when it was never set)."""
    row = db.execute(f"SELECT v FROM {schema}.{table}_config WHERE k = 'pgsz'").fetchone()
    return int(row[0]) if row is not None else DEFAULT_PAGE_SIZE


def encode_segment(
    terms: Sequence[str] | pa.LargeListArray, first_rowid: int, pgsz: int = DEFAULT_PAGE_SIZE
) -> Segment:
    """The segment of rows ``first_rowid + i`` whose space-separated terms are ``terms[i]``
    (or, from an Arrow list array, the terms of its list ``i``).

    The terms are split as FTS5's ``ascii`` tokenizer splits them (the reference systems'
    terms contain no divider, so each is one token). ``pgsz``: the table's page size
    (:func:`page_size`). Rows without any token give a segment without pages (only their
    sizes and count), as FTS5 writes none for them either. A token of more than
    ``MAX_TOKEN_BYTES`` is a ``ValueError``: check :func:`has_cut_token` first.
    """
    if not 1 <= first_rowid <= MAX_ROWID - len(terms):
        raise ValueError(
            f"encode_segment: row IDs {first_rowid}.. are outside 1..{MAX_ROWID}, "
            "the range this writer encodes"
        )
    flat, rows = _tokens(terms)
    lengths = pc.binary_length(flat)
    kept = np.asarray(pc.greater(lengths, 0), dtype=bool)
    if not kept.any():
        return Segment([], [], [], np.zeros(len(terms), dtype=np.int64))
    if int(pc.max(lengths).as_py()) > MAX_TOKEN_BYTES:
        raise ValueError(f"encode_segment: a token of more than {MAX_TOKEN_BYTES} bytes")
    del lengths
    if not kept.all():
        flat = flat.filter(pa.array(kept))
        rows = rows[kept]
    del kept
    counts = np.bincount(rows, minlength=len(terms))
    positions = np.arange(len(rows), dtype=np.int64) - np.repeat(_starts(counts), counts)
    from evalkit.systems import fts5_writer  # imports Numba: only a bulk index needs it

    offsets, data = binary_buffers(flat)
    lengths = np.diff(offsets)
    order, first = fts5_writer.term_order(offsets, data, _long_token_ranks(flat, lengths))
    del flat
    # FTS5 stores each term of its main index after the byte "0" (prefix indexes use "1", ...)
    firsts = order[first]
    stored = lengths[firsts] + 1
    vocabulary_offsets = np.zeros(len(stored) + 1, dtype=np.int64)
    np.cumsum(stored, out=vocabulary_offsets[1:])
    vocabulary = np.empty(int(vocabulary_offsets[-1]), dtype=np.uint8)
    vocabulary[vocabulary_offsets[:-1]] = ord("0")
    vocabulary[_gather_ranges(vocabulary_offsets[:-1] + 1, stored - 1)] = data[
        _gather_ranges(offsets[firsts], stored - 1)
    ]
    del firsts, stored, lengths, offsets, data
    occurrence_terms = np.cumsum(first) - 1
    del first
    shared = fts5_writer.common_prefixes(vocabulary_offsets, vocabulary)
    out, page_ends, index, dl_keys, dl_data, dl_ends = fts5_writer.write_pages(
        occurrence_terms,
        rows[order] + first_rowid,
        positions[order],
        vocabulary_offsets,
        vocabulary,
        shared,
        pgsz,
    )
    del occurrence_terms, rows, positions
    blob = out.tobytes()
    ends = page_ends.tolist()
    pages = [blob[a:b] for a, b in zip([0, *ends][:-1], ends, strict=True)]
    term_index = [
        (vocabulary[vocabulary_offsets[term] :][:length].tobytes() if term >= 0 else b"", pgno)
        for term, length, pgno in index.tolist()
    ]
    blocks = dl_data.tobytes()
    ends = dl_ends.tolist()
    doclist_index = [
        (key, blocks[a:b])
        for key, a, b in zip(dl_keys.tolist(), [0, *ends][:-1], ends, strict=True)
    ]
    return Segment(pages, term_index, doclist_index, counts)


def has_cut_token(terms: Sequence[str] | pa.LargeListArray) -> bool:
    """Whether a row of ``terms`` (as :func:`encode_segment` takes them) holds a token of more
    than ``MAX_TOKEN_BYTES``, which FTS5 would cut and :func:`encode_segment` does not take."""
    if isinstance(terms, (pa.ListArray, pa.LargeListArray)):
        terms = terms.cast(_TERM_LISTS)
        longest = pc.max(pc.binary_length(terms.flatten())).as_py()
        if longest is None or longest <= MAX_TOKEN_BYTES:  # a term is at least its tokens
            return False
        terms = pc.binary_join(terms, pa.scalar(" ", pa.large_string())).to_pylist()
    # only a row of more than MAX_TOKEN_BYTES / 4 characters can hold such a token
    long_rows = [text for text in terms if len(text) > MAX_TOKEN_BYTES // 4]
    if not long_rows:
        return False
    tokens = _tokens(long_rows)[0]
    return bool(pc.max(pc.binary_length(tokens)).as_py() > MAX_TOKEN_BYTES)


def write_segment(
    db: sqlite3.Connection,
    table: str,
    segment: Segment,
    *,
    segment_id: int,
    first_rowid: int,
    schema: str = "main",
) -> None:
    """Insert ``segment``'s pages, term index, doclist indexes and row sizes (rows
    ``first_rowid ..``) into the FTS5 table ``schema.table`` as segment ``segment_id``; the
    caller records the segment in the structure and the totals (see ``evalkit.systems.store``).
    """
    base = segment_id << SEGMENT_SHIFT
    db.executemany(
        f"INSERT INTO {schema}.{table}_data(id, block) VALUES (?, ?)",
        [(base + pgno, page) for pgno, page in enumerate(segment.pages, start=1)]
        + [(base + key, block) for key, block in segment.doclist_index],
    )
    db.executemany(
        f"INSERT INTO {schema}.{table}_idx(segid, term, pgno) VALUES (?, ?, ?)",
        [(segment_id, term, pgno) for term, pgno in segment.term_index],
    )
    from evalkit.systems import fts5_writer  # imports Numba: only a bulk index needs it

    data, ends = fts5_writer.varints(segment.token_counts)  # one column: its tokens
    blob, bounds = data.tobytes(), ends.tolist()
    db.executemany(
        f"INSERT INTO {schema}.{table}_docsize(id, sz) VALUES (?, ?)",
        zip(
            range(first_rowid, first_rowid + len(bounds)),
            (blob[a:b] for a, b in zip([0, *bounds][:-1], bounds, strict=True)),
            strict=True,
        ),
    )


def _long_token_ranks(tokens: pa.LargeStringArray, lengths: np.ndarray) -> np.ndarray:
    """Per token: for one of more than 7 bytes, its rank among the distinct such tokens in
    byte order (Arrow's sort); 0 for the others (see ``fts5_writer.term_order``)."""
    ranks = np.zeros(len(tokens), dtype=np.int64)
    long_places = np.flatnonzero(lengths > 7)
    if len(long_places):
        encoded = pc.dictionary_encode(tokens.take(pa.array(long_places)))
        order = np.asarray(pc.array_sort_indices(encoded.dictionary), dtype=np.int64)
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = np.arange(len(order))
        ranks[long_places] = rank_of[np.asarray(encoded.indices)]
    return ranks


def binary_buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A large string or binary array's ``(offsets, data)`` as NumPy views."""
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[
        strings.offset : strings.offset + len(strings) + 1
    ]
    data = strings.buffers()[2]
    return offsets, np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(
        0, np.uint8
    )


def _tokens(terms: Sequence[str] | pa.LargeListArray) -> tuple[pa.Array, np.ndarray]:
    """The tokens of ``terms`` as the ``ascii`` tokenizer makes them (empty ones included), and
    the row of each."""
    if isinstance(terms, (pa.ListArray, pa.LargeListArray)):
        terms = terms.cast(_TERM_LISTS)
        values = _ascii_tokenized(terms.flatten())
        offsets, data = binary_buffers(values)
        if not (data[offsets[0] : offsets[-1]] == ord(" ")).any():  # each term one token
            return values, np.asarray(pc.list_parent_indices(terms), dtype=np.int64)
        terms = pc.binary_join(terms, pa.scalar(" ", pa.large_string()))
    split = pc.split_pattern(_ascii_tokenized(pa.array(terms, type=pa.large_string())), " ")
    return split.flatten(), np.asarray(pc.list_parent_indices(split), dtype=np.int64)


def _ascii_tokenized(texts: pa.LargeStringArray) -> pa.LargeStringArray:
    """``texts`` with every divider of the ``ascii`` tokenizer a space, letters lower-cased."""
    validity, offsets, data = texts.buffers()
    if data is None:
        return texts
    mapped = ASCII_TOKENIZER[np.frombuffer(data, dtype=np.uint8)]
    return pa.LargeStringArray.from_buffers(
        len(texts), offsets, pa.py_buffer(mapped), validity, texts.null_count, texts.offset
    )


def _starts(counts: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums: where each of the runs of ``counts`` begins."""
    starts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _gather_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every range, concatenated."""
    total = int(lengths.sum())
    ranges: np.ndarray = np.arange(total, dtype=np.int64)
    ranges += np.repeat(starts - _starts(lengths), lengths)
    return ranges
