"""BM25 as SQLite FTS5's ``bm25()`` computes it, over an index held in NumPy arrays.

Issue 48: on a collection of 10,000 chunks, FTS5's inserts and ``optimize`` took about half of
``evaluate`` (1.1 microseconds of CPU per term occurrence, twice with the determinism repeat),
and a search at k=1000 another SQL query with a join. :class:`TermIndex` builds the same
statistics from the tokenizer's term lists in a few array passes (a dictionary encoding, one
sort of ``(term, row)`` keys) and answers a query with one NumPy pass per query term.

The result is the one FTS5 gives, to the last bit (``tests/test_bm25_index.py`` compares the
two on generated and hostile inputs): the statistics are FTS5's (rows ``N``, every row counted
even without a token; each row's number of tokens ``D``; their mean ``avgdl``; a term's rows
``nHit``), and the score is ``fts5Bm25Function``'s (``fts5_aux.c``) operation for operation, in
IEEE double precision, query terms summed in their order::

    idf   = log((N - nHit + 0.5) / (nHit + 0.5)), or 1e-6 where that is <= 0
    score = sum over terms of idf * (f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / avgdl))

with ``k1 = 1.2``, ``b = 0.75``, ``f`` a term's occurrences in the row; the logarithm is C's
(``math.log``), each array operation is one correctly rounded IEEE operation, as C's are
(no operation is fused). Rows that hold none of the terms are not returned; the others are
ordered by score, descending, then chunk ID ascending (code point order, which is UTF-8 byte
order: SQLite's ``BINARY``), as ``ChunkStore.search_terms`` orders them, and their scores are
rounded to 12 decimals as there.

The index takes a term as FTS5's ``ascii`` tokenizer would take it only when that tokenizer
leaves it whole and unchanged: ASCII digits, lower-case ASCII letters and non-ASCII characters
only, under ``MAX_TOKEN_BYTES`` bytes. :func:`plain_terms` checks an index's terms and
:func:`plain_term` a query's; the reference tokenizer (:mod:`evalkit.systems.text`) makes no
other kind, and the caller takes FTS5 itself for anything else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.systems.fts5_segment import ASCII_TOKENIZER, MAX_TOKEN_BYTES, binary_buffers
from evalkit.systems.protocol import Hit

__all__ = ["K1", "B", "TermIndex", "plain_term", "plain_terms"]

#: FTS5's ``bm25()`` constants (``fts5_aux.c``).
K1 = 1.2
B = 0.75


def _kept_bytes() -> np.ndarray:
    """The bytes FTS5's ascii tokenizer keeps as they are (digits, lower-case letters,
    non-ASCII): those its table maps to themselves, but the space it maps separators to."""
    byte = np.arange(256)
    kept: np.ndarray = (byte == ASCII_TOKENIZER) & (byte != ord(" "))
    return kept


_PLAIN_BYTE = _kept_bytes()
_PLAIN_TERM = re.compile(r"[0-9a-z\x80-\U0010ffff]+\Z")


def plain_term(term: str) -> bool:
    """Whether FTS5's ``ascii`` tokenizer takes ``term`` as one token, unchanged (module
    docstring)."""
    if _PLAIN_TERM.match(term) is None:
        return False
    try:
        return len(term.encode("utf-8")) < MAX_TOKEN_BYTES
    except UnicodeEncodeError:  # a lone surrogate: SQLite is not given such text either
        return False


def plain_terms(terms: Any) -> bool:
    """Whether every term of ``terms`` (an Arrow list array of strings, empty strings allowed:
    they are no token) is :func:`plain_term`."""
    import pyarrow.compute as pc

    values = terms.flatten()
    if len(values) and pc.max(pc.binary_length(values)).as_py() >= MAX_TOKEN_BYTES:
        return False
    import pyarrow as pa

    return bool(_PLAIN_BYTE[_bytes(values.cast(pa.large_string()))[1]].all())


def _bytes(strings: Any) -> tuple[np.ndarray, np.ndarray]:
    """A ``large_string`` array's offsets (from 0) and the UTF-8 bytes of its strings, as
    NumPy views."""
    offsets, data = binary_buffers(strings)
    return offsets - offsets[0], data[offsets[0] : offsets[-1]]


class TermIndex:
    """Rows ``0 .. N-1`` and their terms (:func:`plain_terms`): per distinct term its rows
    (ascending) and occurrences in each (CSR: ``starts``, ``rows``, ``counts``), per row its
    number of tokens; :meth:`search` ranks ``ids`` (one chunk ID per row) by BM25."""

    def __init__(self, terms: Any, ids: Sequence[str]) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if len(terms) != len(ids):
            raise ValueError(f"TermIndex: {len(terms)} term lists for {len(ids)} IDs")
        self.ids = list(ids)
        count = len(self.ids)
        values = terms.flatten()
        parents = np.asarray(pc.list_parent_indices(terms), dtype=np.int64)
        kept = np.asarray(pc.greater(pc.binary_length(values), 0), dtype=bool)
        if not kept.all():  # a text without terms holds one empty string: no token
            values, parents = values.filter(pa.array(kept)), parents[kept]
        encoded = pc.dictionary_encode(values)
        vocabulary = encoded.dictionary
        # a query term's code: its hash looked up among the sorted hashes of the vocabulary,
        # then the string compared (faster to build than a dict of 100,000s of terms)
        self._vocabulary = vocabulary.cast(pa.large_string())
        hashes = _hashes(self._vocabulary)
        self._hash_order = np.argsort(hashes)
        self._sorted_hashes = hashes[self._hash_order]
        # each (term, row) once, by term then row; its count is the term's occurrences there
        keys = np.asarray(encoded.indices, dtype=np.int64) * max(count, 1) + parents
        pairs, occurrences = np.unique(keys, return_counts=True)
        self._rows = pairs % max(count, 1)
        self._counts = occurrences.astype(np.float64)
        self._starts = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(
            np.bincount(pairs // max(count, 1), minlength=len(vocabulary)), out=self._starts[1:]
        )
        self._sizes = np.bincount(parents, minlength=count).astype(np.float64)
        self._count = count
        self._avgdl = float(len(parents)) / float(count) if count else 0.0
        order = sorted(range(count), key=self.ids.__getitem__)
        self._id_rank = np.empty(count, dtype=np.int64)
        self._id_rank[order] = np.arange(count)

    def _code(self, term: str) -> int | None:
        """The vocabulary index of ``term``, or ``None`` when no row holds it."""
        wanted = _hash(term.encode("utf-8"))
        at = int(np.searchsorted(self._sorted_hashes, np.uint64(wanted)))
        while at < len(self._sorted_hashes) and int(self._sorted_hashes[at]) == wanted:
            code = int(self._hash_order[at])
            if self._vocabulary[code].as_py() == term:
                return code
            at += 1
        return None

    def scored(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)``: the rows holding any of ``terms`` (each :func:`plain_term`;
        repeats count once), ascending, and their BM25 scores as FTS5's ``bm25()`` computes
        them (its value negated: higher is better), unrounded."""
        scores = np.zeros(self._count, dtype=np.float64)
        matched = np.zeros(self._count, dtype=bool)
        for term in dict.fromkeys(terms):
            code = self._code(term)
            if code is None:  # no row holds it: it adds nothing to any score
                continue
            lo, hi = self._starts[code], self._starts[code + 1]
            rows, f = self._rows[lo:hi], self._counts[lo:hi]
            hits = int(hi - lo)
            idf = math.log((self._count - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            # fts5Bm25Function's expression, operation for operation (each one IEEE rounding)
            scores[rows] += idf * (
                (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * self._sizes[rows] / self._avgdl))
            )
            matched[rows] = True
        found = np.flatnonzero(matched)
        return found, scores[found]

    def search(self, terms: Sequence[str], limit: int) -> list[Hit]:
        """The rows holding any of ``terms``, best ``limit`` first, as ``ChunkStore.
        search_terms`` answers over FTS5: score descending, then chunk ID ascending; scores
        rounded to 12 decimals."""
        if limit <= 0 or not self._count:
            return []
        rows, scores = self.scored(terms)
        best = np.lexsort((self._id_rank[rows], -scores))[:limit]
        ids = self.ids
        return [
            Hit(ids[row], round(score, 12))
            for row, score in zip(rows[best].tolist(), scores[best].tolist(), strict=True)
        ]


# A polynomial hash of a string's UTF-8 bytes modulo 2**64 (equal strings, equal hashes;
# lookups compare the strings, so a collision costs a comparison, never a wrong term).
_MULTIPLIER = 0x100000001B3
_LENGTH_MULTIPLIER = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def _hash(data: bytes) -> int:
    """:func:`_hashes` of one string's bytes."""
    value, power = 0, 1
    for byte in data:
        value = (value + byte * power) & _MASK
        power = (power * _MULTIPLIER) & _MASK
    return (value + len(data) * _LENGTH_MULTIPLIER) & _MASK


def _hashes(strings: Any) -> np.ndarray:
    """The :func:`_hash` of every string of a non-empty Arrow ``large_string`` array without
    empty strings, as uint64 (NumPy's unsigned arithmetic wraps modulo 2**64)."""
    if not len(strings):
        return np.zeros(0, dtype=np.uint64)
    offsets, data = _bytes(strings)
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    powers = np.full(int(lengths.max()), _MULTIPLIER, dtype=np.uint64)
    powers[0] = 1
    powers = np.cumprod(powers, dtype=np.uint64)
    position = np.arange(len(data), dtype=np.int64) - np.repeat(starts, lengths)
    terms = data.astype(np.uint64) * powers[position]
    hashes: np.ndarray = np.add.reduceat(terms, starts) + lengths.astype(np.uint64) * np.uint64(
        _LENGTH_MULTIPLIER
    )
    return hashes
