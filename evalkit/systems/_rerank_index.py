"""The ``hybrid-rerank`` index's storage (issue 21: a million chunks); a private half of
:mod:`evalkit.systems.rerank`.

``HeuristicReranker.index`` (:mod:`evalkit.systems.rerank`) keeps, per chunk, the sorted integer
keys of its distinct terms (:mod:`evalkit.systems.termsets`) and of its title's, its concepts
(``IntRows``), its language as a small code, its concept vector as a sparse row
(``DenseRows``), and document frequencies as counts per key (``TermIdf``); its answer shapes are
found when first needed (``ChunkShapes``). The classes here present that storage as read-only
mappings from chunk ID, holding what the dictionaries of sets held before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from scipy import sparse

from evalkit.fixtures.records import RecordTable
from evalkit.systems._rerank_features import SHAPES, evidence_shapes, idf
from evalkit.systems.protocol import ChunkLike
from evalkit.systems.termsets import DocumentFrequencies, TermRows
from evalkit.systems.text import tokenize
from evalkit.systems.vectors import Matrix

__all__ = [
    "UNKNOWN_SHAPES",
    "ChunkConcepts",
    "ChunkLanguages",
    "ChunkShapes",
    "ChunkTerms",
    "ChunkUnits",
    "DenseRows",
    "IntRows",
    "TermIdf",
    "chunk_fields",
]

_IDF_CACHE: Final = 100_000  # terms whose IDF a TermIdf remembers
UNKNOWN_SHAPES: Final = 255  # a chunk's shape bits not found yet
_SHAPE_SETS: Final = tuple(
    frozenset(shape for bit, shape in enumerate(SHAPES) if code >> bit & 1)
    for code in range(1 << len(SHAPES))
)


def _shape_code(shapes: frozenset[str]) -> int:
    """The answer shapes as bits (``SHAPES`` order); ``_SHAPE_SETS[code]`` is the inverse."""
    return sum(1 << bit for bit, shape in enumerate(SHAPES) if shape in shapes)


def chunk_fields(chunks: Sequence[ChunkLike], names: Sequence[str]) -> list[list[Any]]:
    """The fields ``names`` of every chunk, one list per field (from the Arrow columns of a
    :class:`~evalkit.fixtures.records.RecordTable`)."""
    if isinstance(chunks, RecordTable):
        return [chunks.column(name) for name in names]
    return [[getattr(chunk, name) for chunk in chunks] for name in names]


class IntRows:
    """Rows of small non-negative integers (concept indexes), sorted, in a CSR layout."""

    def __init__(self) -> None:
        self._sizes: list[npt.NDArray[np.int64]] = []
        self._parts: list[npt.NDArray[np.int32]] = []
        self.indptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self.values: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)

    def extend(self, rows: Sequence[Iterable[int]]) -> None:
        lists = [sorted(row) for row in rows]
        self._sizes.append(np.array([len(row) for row in lists], dtype=np.int64))
        self._parts.append(np.array([v for row in lists for v in row], dtype=np.int32))

    def freeze(self) -> None:
        if self._sizes:
            self.values = np.concatenate(self._parts)
            self.indptr = np.concatenate([[0], np.cumsum(np.concatenate(self._sizes))])
        self._sizes, self._parts = [], []

    def row(self, row: int) -> frozenset[int]:
        return frozenset(self.values[self.indptr[row] : self.indptr[row + 1]].tolist())


class _ByChunk(Mapping[str, Any]):
    """A read-only mapping from chunk ID to what row ``_row[chunk ID]`` of the index holds."""

    def __init__(self, rows: Mapping[str, int]) -> None:
        self._rows = rows

    def __getitem__(self, chunk_id: str) -> Any:
        return self._at(self._rows[chunk_id])

    def _at(self, row: int) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class ChunkTerms(_ByChunk):
    """Chunk ID -> ``frozenset(tokenize(title + "\\n" + text))``, built from the indexed chunk
    as ``index`` built it before issue 21 (same elements, same iteration order)."""

    def __init__(self, chunks: Sequence[ChunkLike], rows: Mapping[str, int]) -> None:
        super().__init__(rows)
        self._chunks = chunks

    def _at(self, row: int) -> frozenset[str]:
        chunk = self._chunks[row]
        return frozenset(tokenize(f"{chunk.title}\n{chunk.text}"))


class _Units:
    """The units of one chunk: ``("t", term)`` for its terms and ``("c", concept)`` for its
    concepts; membership only."""

    __slots__ = ("_concept_set", "_concepts", "_keys", "_row", "_term_keys", "_terms")

    def __init__(
        self,
        terms: TermRows,
        concepts: IntRows,
        row: int,
        term_keys: dict[str, int | None],
    ) -> None:
        self._terms, self._concepts, self._row = terms, concepts, row
        self._term_keys = term_keys  # term -> key, shared by every chunk's units
        self._keys: frozenset[int] | None = None
        self._concept_set: frozenset[int] | None = None

    def __contains__(self, unit: object) -> bool:
        if not isinstance(unit, tuple) or len(unit) != 2:
            return False
        kind, value = unit
        if kind == "t" and isinstance(value, str):
            if value in self._term_keys:
                key = self._term_keys[value]
            else:
                key = self._term_keys[value] = self._terms.coder.key(value)
            if key is None:
                return False
            if self._keys is None:
                self._keys = frozenset(self._terms.row(self._row).tolist())
            return key in self._keys
        if kind == "c" and isinstance(value, int):
            if self._concept_set is None:
                self._concept_set = self._concepts.row(self._row)
            return value in self._concept_set
        return False


class ChunkUnits(_ByChunk):
    """Chunk ID -> its units (``_Units``)."""

    def __init__(self, terms: TermRows, concepts: IntRows, rows: Mapping[str, int]) -> None:
        super().__init__(rows)
        self._terms, self._concepts = terms, concepts
        # The query's terms are looked up for every candidate: their keys are worked out once.
        self._term_keys: dict[str, int | None] = {}

    def _at(self, row: int) -> _Units:
        return _Units(self._terms, self._concepts, row, self._term_keys)


class ChunkConcepts(_ByChunk):
    """Chunk ID -> the concept indexes it mentions."""

    def __init__(self, concepts: IntRows, rows: Mapping[str, int]) -> None:
        super().__init__(rows)
        self._concepts = concepts

    def _at(self, row: int) -> frozenset[int]:
        return self._concepts.row(row)


class ChunkShapes(_ByChunk):
    """Chunk ID -> ``evidence_shapes`` of its title and text, found when first asked for (its
    regular expressions cost about 0.1 ms a chunk) and kept as bits."""

    def __init__(
        self, chunks: Sequence[ChunkLike], codes: npt.NDArray[np.uint8], rows: Mapping[str, int]
    ) -> None:
        super().__init__(rows)
        self._chunks, self._codes = chunks, codes

    def _at(self, row: int) -> frozenset[str]:
        code = int(self._codes[row])
        if code == UNKNOWN_SHAPES:
            chunk = self._chunks[row]
            code = _shape_code(evidence_shapes(f"{chunk.title}\n{chunk.text}"))
            self._codes[row] = code
        return _SHAPE_SETS[code]


class ChunkLanguages(_ByChunk):
    """Chunk ID -> its language (kept as codes)."""

    def __init__(
        self, codes: npt.NDArray[np.int32], names: Sequence[str], rows: Mapping[str, int]
    ) -> None:
        super().__init__(rows)
        self._codes, self._names = codes, names

    def _at(self, row: int) -> str:
        return self._names[int(self._codes[row])]


class TermIdf(Mapping[str, float]):
    """Term -> BM25 IDF over the indexed chunks, for the terms some chunk contains."""

    def __init__(self, frequencies: DocumentFrequencies, n_documents: int) -> None:
        self._frequencies, self._n = frequencies, n_documents
        self._cache: dict[str, float] = {}

    def __getitem__(self, term: str) -> float:
        found = self._cache.get(term)
        if found is None:
            df = self._frequencies(term) if isinstance(term, str) else 0
            if not df:
                raise KeyError(term)
            found = idf(df, self._n)
            if len(self._cache) >= _IDF_CACHE:
                self._cache.clear()
            self._cache[term] = found
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and (term in self._cache or self._frequencies(term) > 0)

    def __iter__(self) -> Iterator[str]:
        return self._frequencies.terms()

    def __len__(self) -> int:
        return len(self._frequencies)


class DenseRows:
    """Concept vectors kept sparse; ``[rows]`` gives those rows dense, as the dense matrix did."""

    def __init__(self, matrix: sparse.csr_matrix) -> None:
        self.matrix = matrix

    def __getitem__(self, rows: list[int]) -> Matrix:
        dense: Matrix = self.matrix[rows].toarray()
        return dense
