"""The distinct index terms of each chunk as integer keys, compact enough for millions of chunks.

``hybrid-rerank`` asks, for its top candidates, which of a query's terms a chunk contains, and,
for any term, how many chunks contain it. Kept as one Python set of strings per chunk, a million
generated chunks (70 million terms, about 35 million distinct CJK bigrams) need more than 8 GB;
as integer keys in a CSR layout they need about 5 bytes per (chunk, distinct term) pair plus 8
bytes per distinct CJK term.

Term keys (``TermCoder``; exact, no hashing):

- a CJK term of ``evalkit.systems.text`` (one ideograph, or a bigram of two, from the ranges
  U+3400-U+4DBF, U+4E00-U+9FFF, U+F900-U+FAFF) is numbered arithmetically: a character's
  position ``i`` in those ranges (0-28,095), a unigram ``i``, a bigram ``28,096 + i1 * 28,096 +
  i2`` (below ``LATIN_BASE`` = 2**30);
- any other term (a stemmed Latin-script word) is numbered in order of first appearance, from
  ``LATIN_BASE`` on.

``TermRows`` keeps the distinct keys of each text, sorted, in one CSR layout per batch of
texts added (``extend``): ``indptr`` (int64, shape (rows + 1,)) and keys (uint32, shape
(nnz,)), tokenized with ``evalkit.systems.text.index_terms_batch`` (the terms of ``tokenize``)
and split and numbered with Arrow and numpy. ``DocumentFrequencies`` counts, for every key, the
rows that contain it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from evalkit.systems.text import index_terms_batch

__all__ = ["LATIN_BASE", "DocumentFrequencies", "TermCoder", "TermRows"]

Keys = npt.NDArray[np.uint32]
LATIN_BASE: Final = 1 << 30
# The CJK ranges of evalkit.systems.text, as (first code point, last code point, first index).
_RANGES: Final = ((0x3400, 0x4DBF, 0), (0x4E00, 0x9FFF, 6592), (0xF900, 0xFAFF, 27584))
_N_CJK: Final = 28096
_BLOCK: Final = 1 << 22  # keys handled at once by the passes over all of them


def _cjk_index(character: str) -> int:
    """The character's position in the CJK ranges, or -1."""
    point = ord(character)
    for first, last, start in _RANGES:
        if first <= point <= last:
            return point - first + start
    return -1


def _cjk_character(index: int) -> str:
    for first, last, start in _RANGES:
        if index < start + last - first + 1:
            return chr(first + index - start)
    raise ValueError(f"CJK character index out of range: {index}")


def _cjk_indexes(points: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``_cjk_index`` of each code point (-1 outside the ranges)."""
    out = np.full(points.shape, -1, dtype=np.int64)
    for first, last, start in _RANGES:
        inside = (points >= first) & (points <= last)
        out[inside] = points[inside] - first + start
    return out


class TermCoder:
    """Exact integer keys of index terms (module docstring); Latin terms are numbered as met."""

    def __init__(self) -> None:
        self._latin: dict[str, int] = {}
        self.latin_terms: list[str] = []  # key - LATIN_BASE -> term

    def key(self, term: str) -> int | None:
        """The term's key; ``None`` for a Latin term never met (no text contains it)."""
        if 0 < len(term) <= 2:
            first = _cjk_index(term[0])
            if first >= 0:
                if len(term) == 1:
                    return first
                second = _cjk_index(term[1])
                if second >= 0:
                    return _N_CJK + first * _N_CJK + second
        found = self._latin.get(term)
        return None if found is None else LATIN_BASE + found

    def term(self, key: int) -> str:
        """The term of a key (inverse of :meth:`key`)."""
        if key >= LATIN_BASE:
            return self.latin_terms[key - LATIN_BASE]
        if key < _N_CJK:
            return _cjk_character(key)
        first, second = divmod(key - _N_CJK, _N_CJK)
        return _cjk_character(first) + _cjk_character(second)

    def _latin_keys(self, terms: list[str]) -> npt.NDArray[np.int64]:
        latin = self._latin
        for term in terms:
            if term not in latin:
                latin[term] = len(self.latin_terms)
                self.latin_terms.append(term)
        return np.array([latin[t] for t in terms], dtype=np.int64) + LATIN_BASE

    def encode(self, joined: Sequence[str]) -> tuple[npt.NDArray[np.int64], Keys]:
        """Rows and keys of the distinct terms of space-joined term strings, sorted by row, key.

        ``joined[i]`` holds the terms of row ``i`` separated by single spaces (``index_terms``).
        """
        import pyarrow as pa  # imported on use, as in evalkit.fixtures.records
        import pyarrow.compute as pc

        lists = pc.split_pattern(pa.array(joined, type=pa.large_string()), " ")
        flat = lists.flatten()
        rows = np.asarray(pc.list_parent_indices(lists).to_numpy(), dtype=np.int64)
        count = len(flat)
        offsets = np.frombuffer(flat.buffers()[1], dtype=np.int64)[
            flat.offset : flat.offset + count + 1
        ]
        data = np.frombuffer(flat.buffers()[2], dtype=np.uint8)
        starts, sizes = offsets[:-1], np.diff(offsets)
        keys = np.zeros(count, dtype=np.int64)
        # CJK terms are one or two 3-byte UTF-8 characters of the ranges.
        lead = np.zeros(count, dtype=bool)
        sized = (sizes == 3) | (sizes == 6)
        lead[sized] = (data[starts[sized]] >> 4) == 0xE  # the lead byte of a 3-byte character
        maybe = np.flatnonzero(lead)
        is_cjk = np.zeros(count, dtype=bool)
        if maybe.size:
            first = _cjk_indexes(_decode3(data, starts[maybe]))
            second = np.full(maybe.size, -1, dtype=np.int64)
            pairs = sizes[maybe] == 6
            second[pairs] = _cjk_indexes(_decode3(data, starts[maybe][pairs] + 3))
            ok = (first >= 0) & (~pairs | (second >= 0))
            is_cjk[maybe[ok]] = True
            keys[maybe[ok]] = np.where(
                pairs[ok], _N_CJK + first[ok] * _N_CJK + second[ok], first[ok]
            )
        other = np.flatnonzero(~is_cjk & (sizes > 0))
        if other.size:
            encoded = pc.dictionary_encode(flat.take(pa.array(other)))
            table = self._latin_keys(encoded.dictionary.to_pylist())
            keys[other] = table[encoded.indices.to_numpy()]
        used = is_cjk | (sizes > 0)
        packed = (rows[used] << 32) | keys[used]
        packed.sort()
        if packed.size:  # distinct (row, key) pairs, sorted
            fresh = np.empty(packed.size, dtype=bool)
            fresh[0] = True
            np.not_equal(packed[1:], packed[:-1], out=fresh[1:])
            packed = packed[fresh]
        return packed >> 32, (packed & 0xFFFFFFFF).astype(np.uint32)


def _decode3(data: npt.NDArray[np.uint8], at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Code points of the 3-byte UTF-8 characters starting at byte offsets ``at``."""
    b0 = data[at].astype(np.int64)
    b1 = data[at + 1].astype(np.int64)
    b2 = data[at + 2].astype(np.int64)
    points: npt.NDArray[np.int64] = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
    return points


class TermRows:
    """The sorted distinct term keys of each added text, in one CSR layout per added batch
    (module docstring): no copy joins them."""

    def __init__(self, coder: TermCoder) -> None:
        self.coder = coder
        self.parts: list[Keys] = []  # the keys of each batch
        self._indptrs: list[npt.NDArray[np.int64]] = []  # per batch, shape (rows + 1,)
        self._firsts: list[int] = []  # the first row of each batch
        self._size = 0

    def extend(self, texts: Sequence[str]) -> None:
        """Add one row per text (its ``index_terms``)."""
        self.extend_terms(index_terms_batch(texts))

    def extend_terms(self, joined: Sequence[str]) -> None:
        """Add one row per space-joined term string."""
        if not joined:
            return
        rows, keys = self.coder.encode(joined)
        counts = np.bincount(rows, minlength=len(joined))
        self.parts.append(keys)
        self._indptrs.append(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
        self._firsts.append(self._size)
        self._size += len(joined)

    def __len__(self) -> int:
        return self._size

    def row(self, row: int) -> Keys:
        """The sorted distinct keys of one row."""
        if not 0 <= row < self._size:
            raise IndexError(f"row {row} out of range for {self._size} rows")
        batch = bisect.bisect_right(self._firsts, row) - 1
        local = row - self._firsts[batch]
        indptr = self._indptrs[batch]
        return self.parts[batch][indptr[local] : indptr[local + 1]]


class DocumentFrequencies:
    """For each term key, the number of rows of a ``TermRows`` that contain it."""

    def __init__(self, rows: TermRows) -> None:
        self.coder = rows.coder
        cjk = np.concatenate(
            [np.zeros(0, dtype=np.uint32)] + [part[part < LATIN_BASE] for part in rows.parts]
        )
        cjk.sort()
        size = cjk.size
        if size:
            new = np.empty(size, dtype=bool)  # the first of each run of equal keys
            new[0] = True
            np.not_equal(cjk[1:], cjk[:-1], out=new[1:])
            self.cjk_keys: Keys = cjk[new]
            # Run starts in blocks, as int32 where they fit: fewer bytes held at once.
            index = np.int32 if size < 2**31 else np.int64
            starts = np.concatenate(
                [
                    (np.flatnonzero(new[at : at + _BLOCK]) + at).astype(index)
                    for at in range(0, size, _BLOCK)
                ]
            )
            del new, cjk
            counts = np.diff(starts, append=index(size))
            del starts
            self.cjk_counts = counts.astype(np.min_scalar_type(int(counts.max())))
        else:
            self.cjk_keys = np.zeros(0, dtype=np.uint32)
            self.cjk_counts = np.zeros(0, dtype=np.int32)
        self.latin_counts = np.zeros(len(self.coder.latin_terms), dtype=np.int64)
        for part in rows.parts:
            latin = part[part >= LATIN_BASE].astype(np.int64) - LATIN_BASE
            self.latin_counts += np.bincount(latin, minlength=self.latin_counts.size)

    def __len__(self) -> int:
        """The number of distinct terms that some row contains."""
        return int(self.cjk_keys.size + np.count_nonzero(self.latin_counts))

    def of_key(self, key: int | None) -> int:
        """Rows containing the term of ``key`` (0 for ``None`` or an unseen term)."""
        if key is None:
            return 0
        if key >= LATIN_BASE:
            index = key - LATIN_BASE
            return int(self.latin_counts[index]) if index < self.latin_counts.size else 0
        at = int(np.searchsorted(self.cjk_keys, key))
        if at < self.cjk_keys.size and int(self.cjk_keys[at]) == key:
            return int(self.cjk_counts[at])
        return 0

    def __call__(self, term: str) -> int:
        """Rows containing ``term``."""
        return self.of_key(self.coder.key(term))

    def terms(self) -> Iterator[str]:
        """Every term some row contains: the CJK terms by key, then the Latin terms as met."""
        for key in self.cjk_keys.tolist():
            yield self.coder.term(key)
        for index in np.flatnonzero(self.latin_counts).tolist():
            yield self.coder.latin_terms[index]

    def cjk_characters(self) -> frozenset[str]:
        """Every character of the CJK terms some row contains."""
        seen = np.zeros(_N_CJK, dtype=bool)
        for at in range(0, self.cjk_keys.size, _BLOCK):
            keys = self.cjk_keys[at : at + _BLOCK].astype(np.int64)
            seen[keys[keys < _N_CJK]] = True
            pairs = keys[keys >= _N_CJK] - _N_CJK
            seen[pairs // _N_CJK] = True
            seen[pairs % _N_CJK] = True
        return frozenset(_cjk_character(i) for i in np.flatnonzero(seen).tolist())

    def latin_terms(self) -> list[str]:
        """The non-CJK terms some row contains, in order of first appearance."""
        names = self.coder.latin_terms
        return [names[i] for i in np.flatnonzero(self.latin_counts).tolist()]
