"""Deterministic in-process embedding providers and cosine-similarity retrieval.

- ``TokenHashEmbedder``: topic-agnostic. Each index term (see ``evalkit.systems.text``) is hashed
  with BLAKE2b (never Python's salted ``hash()``) into one of ``dim`` signed buckets, weighted
  ``1 + log(tf)``, and the vector is L2-normalized. It knows nothing about any topic: a
  transparent lexical-overlap ablation in vector form.
- ``AliasEmbedder``: **regression plumbing, not an embedding model.** It maps text onto a
  concept table of bilingual aliases that belongs to the fixture (its optional ``aliases.yaml``,
  ``evalkit.fixtures.AliasTable``): evaluation hands the table over through ``use_aliases``
  before indexing. A table written alongside a fixture is fixture-aware by construction, so
  the numbers of ``alias-vector`` say nothing about the quality of any real embedding provider.
  **Without a table** (a fixture with no ``aliases.yaml``) the embedder knows no concept, every
  vector is zero and ``alias-vector`` returns no results for every query; one notice per
  process says so (logger ``evalkit.systems``, level INFO; the command line prints it to
  stderr). The other systems are unaffected, and ``hybrid``/``hybrid-rerank`` then rank with
  their lexical components alone.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

from evalkit.errors import InputError
from evalkit.safety.canonical import canonical_hash
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, Hit
from evalkit.systems.store import StoreBackedRetriever, chunk_texts
from evalkit.systems.text import normalize, token_lists, token_term_lists

if TYPE_CHECKING:
    from evalkit.fixtures.schema import AliasTable

__all__ = [
    "AliasEmbedder",
    "Embedder",
    "TokenHashEmbedder",
    "VectorRetriever",
    "rank_by_score",
]

Matrix = npt.NDArray[np.float64]
_LOG = logging.getLogger("evalkit.systems")
_BUCKET_CACHE = 1_000_000  # terms whose hash bucket a TokenHashEmbedder remembers
# Chunks embedded at once while indexing: the dense rows of one batch are made sparse before the
# next, so a million chunks never need a dense (n, dim) matrix.
_EMBED_BATCH = 4096
_NOTICED: set[str] = set()


def _notice_once(key: str, message: str) -> None:
    if key not in _NOTICED:
        _NOTICED.add(key)
        _LOG.info(message)


class Embedder(Protocol):
    """Turns texts into L2-normalized row vectors (a zero row when nothing is recognized)."""

    def definition(self) -> dict[str, Any]: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


def _normalize_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalized: Matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return normalized


@functools.cache
def _bucket_cache(dim: int) -> dict[str, int]:
    """The process's cache of hash codes for ``TokenHashEmbedder(dim)`` (at most
    ``_BUCKET_CACHE`` terms)."""
    return {}


class TokenHashEmbedder:
    """Signed feature hashing of index terms into ``dim`` dimensions (see module docstring)."""

    def __init__(self, dim: int = 1024) -> None:
        if dim < 2:
            raise InputError(f"TokenHashEmbedder dim must be at least 2, got {dim}")
        self.dim = dim
        # term -> 2 * bucket + (sign > 0): a pure function of the term and ``dim``, so one cache
        # per ``dim`` serves every embedder of the process (each system and repeat of an
        # evaluation embeds the same chunk texts; issue 48)
        self._buckets = _bucket_cache(dim)

    def definition(self) -> dict[str, Any]:
        return {"class": "TokenHashEmbedder", "dim": self.dim, "hash": "blake2b-64"}

    def _codes(self, terms: list[str]) -> npt.NDArray[np.int64]:
        """``2 * bucket + 1`` (positive sign) or ``2 * bucket`` (negative) of each term, from
        its BLAKE2b-64 hash; remembered for up to ``_BUCKET_CACHE`` terms."""
        cache = self._buckets
        if len(cache) > _BUCKET_CACHE:  # the limit was lowered (tests)
            cache.clear()
        codes: list[int | None] = list(map(cache.get, terms))
        if None in codes:
            new = list(dict.fromkeys([t for t, c in zip(terms, codes, strict=True) if c is None]))
            blake2b = hashlib.blake2b
            # each 8-byte digest read as a little-endian unsigned integer
            digests = b"".join([blake2b(t.encode(), digest_size=8).digest() for t in new])
            values = np.frombuffer(digests, dtype="<u8")
            fresh = dict(zip(new, (2 * (values % self.dim) + (values >> 63)).tolist(), strict=True))
            codes = list(map(fresh.get, terms, codes))  # a remembered term is not in fresh
            if len(cache) + len(fresh) > _BUCKET_CACHE:
                cache.clear()
            if len(fresh) <= _BUCKET_CACHE:
                cache.update(fresh)
        return np.array(codes, dtype=np.int64)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Rows of ``sum(sign * (1 + log(tf)))`` per bucket, L2-normalized.

        Each text's distinct terms are added in order of first appearance with one
        ``np.bincount`` (which sums in input order, as a loop over the terms would).
        """
        lists = token_term_lists(texts)
        if lists is not None:
            return self._embed_lists(lists, len(texts))
        sizes: list[int] = []
        terms: list[str] = []
        counts: list[int] = []
        for text_terms in token_lists(texts):
            found = Counter(text_terms)
            sizes.append(len(found))
            terms.extend(found)
            counts.extend(found.values())
        n = len(texts)
        rows = np.repeat(np.arange(n, dtype=np.int64), sizes)
        return self._rows(rows, self._codes(terms), np.array(counts, dtype=np.int64), n)

    def _embed_lists(self, lists: Any, n: int) -> Matrix:
        """:meth:`embed` from the texts' term lists (an Arrow list array, as
        :func:`~evalkit.systems.text.token_term_lists` gives them), with array passes instead
        of a ``Counter`` per text: each text's distinct terms with their counts, in order of
        first appearance (a sort of ``(row, term)`` keys, then their first positions), so the
        same values reach ``np.bincount`` in the same order and the rows are the same to the
        last bit."""
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(lists.flatten())
        vocabulary = encoded.dictionary.to_pylist()
        width = max(len(vocabulary), 1)
        rows = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
        keys = rows * width + np.asarray(encoded.indices, dtype=np.int64)
        pairs, first, counts = np.unique(keys, return_index=True, return_counts=True)
        in_order = np.argsort(first)  # each row's distinct terms as they first appear
        pairs, counts = pairs[in_order], counts[in_order]
        return self._rows(pairs // width, self._codes(vocabulary)[pairs % width], counts, n)

    def _rows(
        self,
        rows: npt.NDArray[np.int64],
        codes: npt.NDArray[np.int64],
        counts: npt.NDArray[np.int64],
        n: int,
    ) -> Matrix:
        """The ``(n, dim)`` L2-normalized matrix of the distinct terms given in order of first
        appearance per text: each term's text ``rows``, bucket ``codes`` (:meth:`_codes`) and
        ``counts``, weighted ``sign * (1 + log(tf))`` and summed by one ``np.bincount`` (in
        input order: the same sums as a loop over the terms)."""
        distinct, position = np.unique(counts, return_inverse=True)
        logs = np.array([1.0 + math.log(c) for c in distinct.tolist()], dtype=np.float64)
        weights = logs[position]
        signed = np.where(codes & 1, weights, -weights)
        cells = rows * self.dim + (codes >> 1)
        sums = np.bincount(cells, weights=signed, minlength=n * self.dim)
        matrix: Matrix = sums.astype(np.float64, copy=False).reshape(n, self.dim)
        return _normalize_rows(matrix)


class _CompiledTable(NamedTuple):
    """A concept table ready for matching (:meth:`AliasEmbedder.concepts`); read-only, shared
    by every embedder of the same table."""

    concept_ids: tuple[str, ...]
    alias_to_concept: dict[str, int]
    table_hash: str | None
    phrases: dict[tuple[str, ...], int]
    longest: int
    cjk_aliases: dict[str, list[tuple[str, int]]]
    first_words: frozenset[str]
    cjk_starts: re.Pattern[str] | None
    found: dict[str, Counter[int]]
    """Text -> its concept counts, for the texts matched so far (at most ``_FOUND_LIMIT``):
    every system and repeat of an evaluation matches the same chunk texts."""


@functools.lru_cache(maxsize=16)
def _compile_table(table: tuple[tuple[str, tuple[str, ...]], ...]) -> _CompiledTable:
    """``table`` (``(concept ID, aliases)`` pairs, sorted by ID) compiled once per process: an
    evaluation builds one embedder per system and repeat from the same fixture table."""
    concept_ids = tuple(c for c, _ in table)
    alias_to_concept: dict[str, int] = {}
    for index, (_, aliases) in enumerate(table):
        for alias in aliases:
            key = normalize(alias).strip()
            if key:
                alias_to_concept.setdefault(key, index)
    table_hash = canonical_hash({c: sorted(a) for c, a in table}) if table else None
    phrases: dict[tuple[str, ...], int] = {}
    for alias, index in sorted(alias_to_concept.items()):
        words = tuple(_LATIN_WORD.findall(alias))
        if words and not _is_cjk(alias):
            phrases.setdefault(words, index)
    by_first: dict[str, list[tuple[str, int]]] = {}
    for alias, index in sorted(alias_to_concept.items(), key=lambda a: (-len(a[0]), a[0])):
        if _is_cjk(alias):
            by_first.setdefault(alias[0], []).append((alias, index))
    # Where a match can start: a word that begins an English phrase, a character that begins
    # a Chinese alias. ``concepts`` tries only those positions.
    starts = "".join(re.escape(c) for c in sorted(by_first))
    return _CompiledTable(
        concept_ids=concept_ids,
        alias_to_concept=alias_to_concept,
        table_hash=table_hash,
        phrases=phrases,
        longest=max((len(p) for p in phrases), default=0),
        cjk_aliases=by_first,
        first_words=frozenset(p[0] for p in phrases),
        cjk_starts=re.compile(f"[{starts}]") if by_first else None,
        found={},
    )


_FOUND_LIMIT = 50_000  # texts whose concept counts a compiled table remembers


class AliasEmbedder:
    """Counts of concept aliases, one dimension per concept (see module docstring).

    ``concepts`` maps a concept ID to its aliases and fixes the table; without it (the reference
    systems) the table is the fixture's, set by :meth:`use_aliases`, and empty until then.
    English aliases match whole words or phrases of the lower-cased text, Chinese (CJK) aliases
    match as substrings. Longer aliases win.
    """

    def __init__(self, concepts: Mapping[str, Sequence[str]] | None = None) -> None:
        self.from_fixture = concepts is None
        self._set_table(dict(concepts) if concepts is not None else {})

    def _set_table(self, table: Mapping[str, Sequence[str]]) -> None:
        self._compiled = _compile_table(tuple((c, tuple(table[c])) for c in sorted(table)))
        self.concept_ids = list(self._compiled.concept_ids)

    @property
    def alias_to_concept(self) -> Mapping[str, int]:
        """Each alias of the table (normalized) -> the index of its concept in
        ``concept_ids``; read-only."""
        return MappingProxyType(self._compiled.alias_to_concept)

    def use_aliases(self, table: AliasTable | None) -> None:
        """Take the fixture's concept table (``None``: the fixture has none, so the table is empty).

        Ignored when the embedder was built with its own ``concepts``.
        """
        if not self.from_fixture:
            return
        self._set_table(table.mapping() if table is not None else {})

    @property
    def empty(self) -> bool:
        """True when the table knows no concept (every vector is zero)."""
        return not self.concept_ids

    def definition(self) -> dict[str, Any]:
        return {
            "class": "AliasEmbedder",
            "source": "fixture" if self.from_fixture else "given",
            "concepts": len(self.concept_ids),
            "table": self._compiled.table_hash,
        }

    def concepts(self, text: str) -> Counter[int]:
        """Concept indexes found in ``text`` with their counts.

        Matching is leftmost-longest and non-overlapping: English aliases match whole words
        (a phrase alias matches consecutive words); aliases containing Chinese characters match
        substrings (so ``65岁`` matches inside ``年满65岁``). A new ``Counter`` each call.
        """
        remembered = self._compiled.found
        known = remembered.get(text)
        if known is not None:
            return Counter(known)
        found = self._match(text)
        if len(remembered) < _FOUND_LIMIT:
            remembered[text] = Counter(found)
        return found

    def _match(self, text: str) -> Counter[int]:
        found: Counter[int] = Counter()
        table = self._compiled
        if not table.alias_to_concept:
            return found
        normalized = normalize(text)
        phrases, longest, first_words = table.phrases, table.longest, table.first_words
        if first_words:
            # A run of letters and digits touching a Chinese character is not an English word:
            # such a run contains a Chinese character, which no phrase word does, so it never
            # equals one and no phrase matches across it.
            words = _WORD_RUN.findall(normalized)
            free = 0  # the first word not yet inside a match
            for i in [i for i, word in enumerate(words) if word in first_words]:
                if i < free:
                    continue
                for n in range(min(longest, len(words) - i), 0, -1):
                    concept = phrases.get(tuple(words[i : i + n]))
                    if concept is not None:
                        found[concept] += 1
                        free = i + n
                        break
        if table.cjk_starts is not None:
            by_first = table.cjk_aliases
            free = 0
            for start in table.cjk_starts.finditer(normalized):
                j = start.start()
                if j < free:
                    continue
                for alias, concept in by_first[normalized[j]]:
                    if normalized.startswith(alias, j):
                        found[concept] += 1
                        free = j + len(alias)
                        break
        return found

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text; at least one column, so an empty table gives zero rows of width 1."""
        return self.embed_counts([self.concepts(text) for text in texts])

    def embed_counts(self, counts: Sequence[Counter[int]]) -> Matrix:
        """The rows of ``embed`` from concept counts already found by :meth:`concepts`."""
        matrix = np.zeros((len(counts), max(1, len(self.concept_ids))))
        for row, found in enumerate(counts):
            for concept, count in found.items():
                matrix[row, concept] = 1.0 + math.log(count)
        return _normalize_rows(matrix)


_CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LATIN_WORD = re.compile(rf"[^\W_{_CJK_CHARS}]+")
_WORD_RUN = re.compile(r"[^\W_]+")


_CJK_SEARCH = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


def _is_cjk(alias: str) -> bool:
    return _CJK_SEARCH.search(alias) is not None


def rank_by_score(
    scores: Matrix, chunk_ids: Sequence[str], id_order: npt.NDArray[np.int64], k: int, floor: float
) -> list[Hit]:
    """The top ``k`` of ``scores`` above ``floor``: score descending, then chunk ID ascending.

    Scores are rounded to 12 decimals first so that last-bit differences between BLAS code paths
    cannot reorder a ranking.
    """
    rounded = np.round(scores, 12)
    keep = np.flatnonzero(rounded > floor)
    if keep.size == 0 or k <= 0:
        return []
    order = keep[np.lexsort((id_order[keep], -rounded[keep]))][:k]
    return [Hit(chunk_ids[i], float(rounded[i])) for i in order]


class VectorRetriever(StoreBackedRetriever):
    """Cosine similarity between the query vector and every chunk vector (title + text).

    Vectors are stored (sparse) in the SQLite store and searched exhaustively with a sparse
    matrix-vector product, which needs no BLAS threads and sums in a fixed order; hits with
    cosine at or below ``min_score`` are dropped (abstention).
    """

    def __init__(self, embedder: Embedder, *, name: str, min_score: float = 0.0) -> None:
        self.name = name
        self.embedder = embedder
        self.min_score = min_score
        self._matrix = sparse.csr_matrix((0, 0))
        self._ids: list[str] = []
        self._id_order: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    def use_aliases(self, table: AliasTable | None) -> None:
        """Hand the fixture's concept table to the embedder, when it takes one."""
        use = getattr(self.embedder, "use_aliases", None)
        if callable(use):
            use(table)
            if table is None and getattr(self.embedder, "empty", False):
                _notice_once(
                    "no-aliases",
                    "notice: the fixture has no aliases.yaml, so the alias concept table is "
                    "empty: alias-vector returns no results, and hybrid and hybrid-rerank rank "
                    "with their lexical components alone",
                )

    def definition(self) -> dict[str, Any]:
        return {
            "class": "VectorRetriever",
            "embedder": self.embedder.definition(),
            "similarity": "cosine",
            "fields": ["title", "text"],
            "min_score": self.min_score,
        }

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        store = self._open_store(chunks, with_text=False)
        texts = chunk_texts(chunks)
        parts = []
        with chunk_bar(len(texts)) as bar:
            for start in range(0, len(texts), _EMBED_BATCH):
                batch = texts[start : start + _EMBED_BATCH]
                parts.append(sparse.csr_matrix(self.embedder.embed(batch)))
                bar.update(len(batch))
        matrix = sparse.vstack(parts, format="csr") if parts else sparse.csr_matrix((0, 1))
        store.put_vectors(self.name, matrix)
        self._matrix = matrix
        self._ids = store.chunk_ids
        self._id_order = np.argsort(np.argsort(np.array(self._ids, dtype=object), kind="stable"))

    def search_text(self, text: str, k: int) -> list[Hit]:
        self._indexed_store()
        if not self._ids:
            return []
        query_vector = self.embedder.embed([text])[0]
        scores = np.asarray(self._matrix @ query_vector, dtype=np.float64)
        return rank_by_score(scores, self._ids, self._id_order, k, self.min_score)
