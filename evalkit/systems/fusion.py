"""``hybrid`` (lexical + vector fusion) and ``hybrid-rerank`` (hybrid + a local heuristic reranker).

Hybrid uses reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each component
returns its top ``depth`` hits and a chunk scores ``sum(weight / (rrf_k + rank))`` over the
components that returned it. RRF needs no score calibration between BM25 and cosine, which live
on different scales. Defaults: ``rrf_k = 60`` (the paper's value), ``depth = 50``, equal weights.

The reranker rescores the hybrid's top ``depth`` candidates with three transparent features in
[0, 1]:

- ``concept``: share of the query's alias concepts that the chunk also mentions;
- ``terms``: IDF-weighted share of the query's index terms that occur in the chunk;
- ``prior``: the hybrid fusion score divided by its maximum possible value.

``score = w_concept * concept + w_terms * terms + w_prior * prior``. When no candidate reaches
``min_score`` the query is treated as unanswerable and nothing is returned (abstention).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike
from evalkit.systems.text import tokenize
from evalkit.systems.vectors import AliasEmbedder

__all__ = ["HeuristicReranker", "HybridRetriever"]


class TextSearcher(Protocol):
    """A component that can be searched with raw text to a given depth."""

    name: str

    def definition(self) -> dict[str, Any]: ...
    def index(self, chunks: Sequence[ChunkLike]) -> None: ...
    def search_text(self, text: str, k: int) -> list[Hit]: ...
    def close(self) -> None: ...


class HybridRetriever(BaseRetriever):
    """Reciprocal rank fusion of text searchers (see module docstring)."""

    def __init__(
        self,
        components: Sequence[TextSearcher],
        *,
        name: str = "hybrid",
        weights: Sequence[float] | None = None,
        rrf_k: int = 60,
        depth: int = 50,
        min_score: float = 0.0,
    ) -> None:
        self.name = name
        self.components = list(components)
        self.weights = list(weights) if weights is not None else [1.0] * len(self.components)
        self.rrf_k = rrf_k
        self.depth = depth
        self.min_score = min_score

    def definition(self) -> dict[str, Any]:
        return {
            "class": "HybridRetriever",
            "fusion": "reciprocal-rank",
            "rrf_k": self.rrf_k,
            "depth": self.depth,
            "weights": self.weights,
            "components": [c.definition() for c in self.components],
            "min_score": self.min_score,
        }

    @property
    def max_score(self) -> float:
        """The fusion score of a chunk ranked first by every component."""
        return sum(self.weights) / (self.rrf_k + 1)

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        for component in self.components:
            component.index(chunks)

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self.search_text(query.text, k)

    def search_text(self, text: str, k: int) -> list[Hit]:
        """Fused hits for raw text, score descending then chunk ID ascending."""
        fused: dict[str, float] = {}
        for weight, component in zip(self.weights, self.components, strict=True):
            for rank, hit in enumerate(component.search_text(text, self.depth), start=1):
                fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + weight / (self.rrf_k + rank)
        ranked = sorted(((round(s, 12), c) for c, s in fused.items()), key=lambda x: (-x[0], x[1]))
        return [Hit(c, s) for s, c in ranked if s > self.min_score][:k]

    def close(self) -> None:
        for component in self.components:
            component.close()


class HeuristicReranker(BaseRetriever):
    """Rescores a hybrid's candidates with concept, term and prior features (module docstring)."""

    def __init__(
        self,
        first_stage: HybridRetriever,
        embedder: AliasEmbedder,
        *,
        name: str = "hybrid-rerank",
        depth: int = 30,
        w_concept: float = 0.5,
        w_terms: float = 0.3,
        w_prior: float = 0.2,
        min_score: float = 0.35,
    ) -> None:
        self.name = name
        self.first_stage = first_stage
        self.embedder = embedder
        self.depth = depth
        self.w_concept = w_concept
        self.w_terms = w_terms
        self.w_prior = w_prior
        self.min_score = min_score
        self._concepts: dict[str, frozenset[int]] = {}
        self._terms: dict[str, frozenset[str]] = {}
        self._idf: dict[str, float] = {}
        self._default_idf = 0.0

    def definition(self) -> dict[str, Any]:
        return {
            "class": "HeuristicReranker",
            "first_stage": self.first_stage.definition(),
            "embedder": self.embedder.definition(),
            "depth": self.depth,
            "weights": {"concept": self.w_concept, "terms": self.w_terms, "prior": self.w_prior},
            "min_score": self.min_score,
        }

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        self.first_stage.index(chunks)
        document_frequency: Counter[str] = Counter()
        for chunk in chunks:
            text = f"{chunk.title}\n{chunk.text}"
            terms = frozenset(tokenize(text))
            self._terms[chunk.id] = terms
            self._concepts[chunk.id] = frozenset(self.embedder.concepts(text))
            document_frequency.update(terms)
        n = len(chunks)
        self._idf = {
            t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in document_frequency.items()
        }
        self._default_idf = math.log(1 + (n + 0.5) / 0.5)

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        candidates = self.first_stage.search_text(query.text, self.depth)
        if not candidates:
            return []
        query_concepts = frozenset(self.embedder.concepts(query.text))
        query_terms = list(dict.fromkeys(tokenize(query.text)))
        term_weights = {t: self._idf.get(t, self._default_idf) for t in query_terms}
        total_weight = sum(term_weights.values())
        max_prior = self.first_stage.max_score
        scored = []
        for hit in candidates:
            concept = (
                len(query_concepts & self._concepts[hit.chunk_id]) / len(query_concepts)
                if query_concepts
                else 0.0
            )
            chunk_terms = self._terms[hit.chunk_id]
            terms = (
                sum(w for t, w in term_weights.items() if t in chunk_terms) / total_weight
                if total_weight
                else 0.0
            )
            prior = hit.score / max_prior
            score = self.w_concept * concept + self.w_terms * terms + self.w_prior * prior
            scored.append((round(score, 12), hit.chunk_id))
        scored.sort(key=lambda x: (-x[0], x[1]))
        if scored[0][0] < self.min_score:
            return []
        return [Hit(c, s) for s, c in scored[:k]]

    def close(self) -> None:
        self.first_stage.close()
