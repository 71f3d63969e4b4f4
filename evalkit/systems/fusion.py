"""``hybrid``: lexical + vector fusion by reciprocal rank.

Hybrid
------
Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each component returns its top
``depth`` hits and a chunk scores ``sum(weight / (rrf_k + rank))`` over the components that
returned it. RRF needs no score calibration between BM25 and cosine, which live on different
scales. Parameters (class defaults; ``evalkit.systems.reference`` sets the reference values):

- ``weights``: one non-negative weight per component (default: equal);
- ``rrf_k``: the rank offset (default 60, the paper's value; a smaller value lets the top ranks
  of each component dominate);
- ``depth``: hits taken from each component (default 50);
- ``min_score``: fused scores at or below it are dropped (default 0.0: keep everything).

Ties are broken by chunk ID ascending after rounding scores to 12 decimals.

Reranker
--------
``HeuristicReranker`` (``hybrid-rerank``) lives in ``evalkit.systems.rerank``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from evalkit.errors import InputError
from evalkit.systems.protocol import ChunkLike, Hit, TextRetriever, provide_aliases

__all__ = ["HybridRetriever"]


class TextSearcher(Protocol):
    """A component that can be searched with raw text to a given depth."""

    name: str

    def definition(self) -> dict[str, Any]: ...
    def index(self, chunks: Sequence[ChunkLike]) -> None: ...
    def search_text(self, text: str, k: int) -> list[Hit]: ...
    def close(self) -> None: ...


class HybridRetriever(TextRetriever):
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
        if len(self.weights) != len(self.components):
            raise InputError(
                f"HybridRetriever {name!r}: got {len(self.weights)} weights for "
                f"{len(self.components)} components; give one weight per component"
            )
        if any(w < 0 for w in self.weights) or not any(w > 0 for w in self.weights):
            raise InputError(
                f"HybridRetriever {name!r}: weights must be non-negative with at least one positive"
            )
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

    def use_aliases(self, table: Any) -> None:
        """Hand the fixture's concept table to the components that take one."""
        for component in self.components:
            provide_aliases(component, table)

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        for component in self.components:
            component.index(chunks)

    def search_text(self, text: str, k: int) -> list[Hit]:
        """Fused hits for raw text, score descending then chunk ID ascending."""
        return self.search_components(text, k)[0]

    def search_components(self, text: str, k: int) -> tuple[list[Hit], list[list[Hit]]]:
        """The fused top ``k`` and each component's own top ``depth`` hits (in component order)."""
        fused: dict[str, float] = {}
        lists = []
        for weight, component in zip(self.weights, self.components, strict=True):
            hits = component.search_text(text, self.depth)
            lists.append(hits)
            for rank, hit in enumerate(hits, start=1):
                fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + weight / (self.rrf_k + rank)
        ranked = sorted(((round(s, 12), c) for c, s in fused.items()), key=lambda x: (-x[0], x[1]))
        return [Hit(c, s) for s, c in ranked if s > self.min_score][:k], lists

    def close(self) -> None:
        for component in self.components:
            component.close()
