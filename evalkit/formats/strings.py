"""A column of strings as numpy arrays: the bytes, and where each string starts and ends in them.

The ranking builder (:mod:`evalkit.measures.ranking`) matches, compares and orders query and
document IDs in this form, with numpy only. A TREC file read by
:mod:`evalkit.formats.trec_arrays` is one buffer with the bounds of each field; an arrow string
array (pandas' ``str`` columns) is viewed in place, its offsets serving as the bounds (one
:class:`StringChunk` per arrow chunk, nothing copied). Strings compare as C's ``strcmp`` (and
arrow) compares UTF-8: byte by byte, 8 bytes at a time as big-endian unsigned integers, a
proper prefix before the longer string.

Within a chunk, ``starts`` and ``ends`` never decrease from one string to the next (file order,
arrow's offsets), which the fingerprints (:mod:`evalkit.measures._join`) rely on.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalkit._arrays import IntArray, U64Array

__all__ = ["StringChunk", "Strings", "ranges"]

_ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
_BLOCK = 1 << 16


@dataclass(frozen=True)
class StringChunk:
    """Strings ``data[starts[i]:ends[i]]``: ``data`` uint8, ``starts`` and ``ends`` int64."""

    data: npt.NDArray[np.uint8]
    starts: IntArray
    ends: IntArray

    def __len__(self) -> int:
        return int(self.starts.size)

    def windows(self) -> npt.NDArray[np.uint64]:
        """Every 8-byte window of ``data`` as a little-endian integer (a strided view; ``data``
        is copied with 8 zero bytes when it is shorter than 8)."""
        data = self.data
        if data.size < 8:
            data = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
        return np.ndarray((data.size - 7,), dtype="<u8", buffer=data, strides=(1,))


class Strings:
    """A column of strings in chunks (:class:`StringChunk`); rows number them across chunks."""

    def __init__(self, chunks: Sequence[StringChunk]) -> None:
        self.chunks = tuple(chunks)
        sizes = [len(chunk) for chunk in self.chunks]
        self.bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)

    @classmethod
    def of(cls, data: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> Strings:
        """One chunk."""
        return cls([StringChunk(data, starts, ends)])

    @classmethod
    def from_list(cls, values: Sequence[str]) -> Strings:
        """The UTF-8 bytes of ``values`` (for tests and small columns)."""
        encoded = [v.encode("utf-8") for v in values]
        ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
        starts = ends - np.array([len(b) for b in encoded], dtype=np.int64)
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return cls.of(data, starts.astype(np.int64), ends.astype(np.int64))

    def __len__(self) -> int:
        return int(self.bounds[-1])

    def _parts(self, rows: IntArray) -> list[tuple[StringChunk, IntArray | None, IntArray]]:
        """``(chunk, positions in rows or None for all, local rows)`` of each chunk ``rows``
        fall in."""
        if len(self.chunks) == 1:
            return [(self.chunks[0], None, rows)]
        out: list[tuple[StringChunk, IntArray | None, IntArray]] = []
        if rows.size < 2 or bool(np.all(rows[1:] >= rows[:-1])):  # in row order: cut it
            cuts = np.searchsorted(rows, self.bounds).tolist()
            for k, chunk in enumerate(self.chunks):
                if cuts[k + 1] > cuts[k]:
                    mine = np.arange(cuts[k], cuts[k + 1], dtype=np.int64)
                    out.append((chunk, mine, rows[cuts[k] : cuts[k + 1]] - self.bounds[k]))
            return out
        chunk_of = np.searchsorted(self.bounds, rows, side="right") - 1
        by_chunk = np.argsort(chunk_of, kind="stable").astype(np.int64)
        cuts = np.searchsorted(chunk_of[by_chunk], np.arange(len(self.chunks) + 1)).tolist()
        for k, chunk in enumerate(self.chunks):
            if cuts[k + 1] > cuts[k]:
                mine = by_chunk[cuts[k] : cuts[k + 1]]
                out.append((chunk, mine, rows[mine] - self.bounds[k]))
        return out

    def slice(self, lo: int, n: int) -> Strings:
        """Rows ``lo .. lo + n - 1`` (views, nothing copied)."""
        parts = []
        for k, chunk in enumerate(self.chunks):
            base = int(self.bounds[k])
            a, b = max(lo, base) - base, min(lo + n, int(self.bounds[k + 1])) - base
            if b > a:
                parts.append(StringChunk(chunk.data, chunk.starts[a:b], chunk.ends[a:b]))
        return Strings(parts or [_empty_chunk()])

    def take(self, rows: IntArray) -> Strings:
        """Rows ``rows``, in that order (the bytes are shared; a column of several chunks taken
        out of row order is first joined into one chunk)."""
        if len(self.chunks) > 1 and rows.size > 1 and not bool(np.all(rows[1:] >= rows[:-1])):
            return self.joined().take(rows)
        parts = [
            StringChunk(chunk.data, chunk.starts[local], chunk.ends[local])
            for chunk, _, local in self._parts(rows)
        ]
        return Strings(parts or [_empty_chunk()])

    def joined(self) -> Strings:
        """The column as one chunk (the chunks' bytes copied into one buffer)."""
        if len(self.chunks) == 1:
            return self
        data = np.concatenate([chunk.data for chunk in self.chunks])
        shift = np.cumsum([0] + [chunk.data.size for chunk in self.chunks[:-1]])
        starts = np.concatenate([c.starts + s for c, s in zip(self.chunks, shift, strict=True)])
        ends = np.concatenate([c.ends + s for c, s in zip(self.chunks, shift, strict=True)])
        return Strings.of(data, starts.astype(np.int64), ends.astype(np.int64))

    def lengths(self, rows: IntArray) -> IntArray:
        """Byte length of the strings at ``rows``."""
        out = np.empty(rows.size, dtype=np.int64)
        for chunk, mine, local in self._parts(rows):
            length = chunk.ends[local] - chunk.starts[local]
            if mine is None:
                return length.astype(np.int64, copy=False)
            out[mine] = length
        return out

    def words(self, rows: IntArray, k: int = 0) -> tuple[U64Array, IntArray]:
        """Bytes ``8k .. 8k + 7`` of the strings at ``rows`` (zero-padded past a string's end,
        big-endian: integer order is byte order), and the strings' byte lengths."""
        words = np.zeros(rows.size, dtype=np.uint64)
        lengths = np.zeros(rows.size, dtype=np.int64)
        for chunk, mine, local in self._parts(rows):
            start = chunk.starts[local] + 8 * k
            length = chunk.ends[local] - chunk.starts[local]
            word = _word_at(chunk, start, length - 8 * k)
            if mine is None:
                return word, length.astype(np.int64, copy=False)
            words[mine], lengths[mine] = word, length
        return words, lengths

    def equal(self, rows: IntArray, other: Strings, other_rows: IntArray) -> npt.NDArray[np.bool_]:
        """``self[rows[i]] == other[other_rows[i]]`` for each ``i``."""
        first, length = self.words(rows)
        other_first, other_length = other.words(other_rows)
        same = (length == other_length) & (first == other_first)
        longest = int(length[same].max(initial=0))
        for k in range(1, (longest + 7) // 8):
            at = np.flatnonzero(same & (length > 8 * k))
            same[at] = self.words(rows[at], k)[0] == other.words(other_rows[at], k)[0]
        result: npt.NDArray[np.bool_] = same
        return result

    def greater(
        self, rows: IntArray, other: Strings, other_rows: IntArray
    ) -> npt.NDArray[np.bool_]:
        """``self[rows[i]] > other[other_rows[i]]`` in byte order, for each ``i``."""
        word, length = self.words(rows)
        other_word, other_length = other.words(other_rows)
        greater = word > other_word
        open_ = np.flatnonzero(word == other_word)  # undecided so far
        k = 1
        while open_.size:
            both = np.minimum(length[open_], other_length[open_])
            longer = np.maximum(length[open_], other_length[open_])
            # equal up to 8k bytes: past the shorter one's end the longer one is greater
            done = longer <= 8 * k
            done |= both <= 8 * k
            ended = open_[done]
            greater[ended] = length[ended] > other_length[ended]
            open_ = open_[~done]
            if not open_.size:
                break
            a = self.words(rows[open_], k)[0]
            b = other.words(other_rows[open_], k)[0]
            greater[open_] = a > b
            open_ = open_[a == b]
            k += 1
        return greater

    def differs_from_next(self) -> npt.NDArray[np.bool_]:
        """bool[n - 1]: whether each string differs from the next one (chunk by chunk, in
        blocks of 65,536 strings: small temporaries)."""
        n = len(self)
        out = np.zeros(max(n - 1, 0), dtype=bool)
        for k, chunk in enumerate(self.chunks):
            base, size = int(self.bounds[k]), len(chunk)
            for lo in range(0, size - 1, _BLOCK):
                hi = min(lo + _BLOCK, size - 1)  # pairs (i, i + 1) for i in lo .. hi - 1
                starts, ends = chunk.starts[lo : hi + 1], chunk.ends[lo : hi + 1]
                length = ends - starts
                width = int(length[0])
                first, m = int(starts[0]), hi + 1 - lo
                if width and int(ends[-1]) - first == m * width and bool((length == width).all()):
                    # strings of one length, back to back (an arrow array of fixed-width IDs):
                    # compared byte by byte with the bytes ``width`` further on, no gather
                    data = chunk.data[first : first + m * width]
                    changed = np.flatnonzero(data[width:] != data[:-width]) // width
                    out[base + lo + changed] = True
                    continue
                word = _word_at(chunk, starts, length)  # one gather per string
                differs = (length[1:] != length[:-1]) | (word[1:] != word[:-1])
                longer = np.flatnonzero(~differs & (length[:-1] > 8))  # the rest decides
                if longer.size:
                    part = Strings.of(chunk.data, starts, ends)
                    differs[longer] = ~part.equal(longer, part, longer + 1)
                out[base + lo : base + hi] = differs
            if size and base + size < n:  # this chunk's last string and the next one's first
                last = np.array([base + size - 1], dtype=np.int64)
                out[base + size - 1] = not bool(self.equal(last, self, last + 1)[0])
        return out

    def to_list(self, rows: IntArray | None = None) -> list[str]:
        """The strings at ``rows`` (None: all) as Python strings (for few rows)."""
        if rows is None:
            rows = np.arange(len(self), dtype=np.int64)
        out: list[Any] = [None] * rows.size
        for chunk, mine, local in self._parts(rows):
            starts, ends = chunk.starts[local], chunk.ends[local]
            lengths = ends - starts
            # every string's bytes in one gather, then cut in Python
            joined = chunk.data[ranges(starts, lengths)].tobytes()
            cuts = np.concatenate([[0], np.cumsum(lengths)]).tolist()
            texts = [
                joined[a:b].decode("utf-8", errors="replace") for a, b in itertools.pairwise(cuts)
            ]
            if mine is None:
                return texts
            for at, text in zip(mine.tolist(), texts, strict=True):
                out[at] = text
        return out


def ranges(starts: IntArray, sizes: IntArray) -> IntArray:
    """The indices ``starts[i] .. starts[i] + sizes[i] - 1`` of every ``i``, concatenated."""
    indices = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
    indices += np.arange(indices.size, dtype=np.int64)
    return indices


def _empty_chunk() -> StringChunk:
    empty = np.zeros(0, dtype=np.int64)
    return StringChunk(np.zeros(0, dtype=np.uint8), empty, empty)


def _word_at(chunk: StringChunk, start: IntArray, left: IntArray) -> U64Array:
    """The 8 bytes of ``chunk.data`` from each ``start`` (``left``: bytes of the string from
    there; bytes past its end are zeros, a word with ``left <= 0`` is 0)."""
    live = None if bool((left > 0).all()) else np.flatnonzero(left > 0)
    at = start if live is None else start[live]
    remaining = left if live is None else left[live]
    windows = chunk.windows()
    last = windows.size - 1
    if at.size and int(at.max()) > last:  # a string ending in the last 7 bytes: shifted up
        first = np.minimum(at, last)
        got = windows[first].astype(np.uint64, copy=False).byteswap()
        late = np.flatnonzero(first < at)
        got[late] <<= (np.minimum(at[late] - first[late], 7) * 8).astype(np.uint64)
    else:
        # gathered little-endian (a fast gather), then byte-swapped: the big-endian value
        got = windows[at].astype(np.uint64, copy=False).byteswap()
    short = np.flatnonzero(remaining < 8)  # zero the bytes past the string's end
    if short.size:
        got[short] &= ~(_ALL_BITS >> (remaining[short] * 8).astype(np.uint64))
    if live is None:
        return got
    word = np.zeros(start.size, dtype=np.uint64)
    word[live] = got
    return word
