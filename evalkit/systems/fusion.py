"""``hybrid`` (lexical + vector fusion) and ``hybrid-rerank`` (hybrid + a local heuristic reranker).

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
``HeuristicReranker`` rescores the first stage's top ``depth`` candidates (default 30) with six
transparent features, each in [0, 1] (``RerankFeatures``):

- ``cosine``: cosine of the query's and the chunk's alias-concept vectors (``AliasEmbedder``);
- ``concept_recall``: IDF-weighted share of the query's concepts that the chunk (title + text)
  mentions. A concept's IDF is BM25's ``log(1 + (N - df + 0.5) / (df + 0.5))`` over the indexed
  chunks, so a rare concept (a district, a facility) counts more than a common one (price, time).
  Only concepts that some indexed chunk mentions take part; the others trigger abstention rule 1;
- ``concept_precision``: share of the chunk's distinct concepts that the query mentions (a
  focused chunk beats one that mentions everything);
- ``term_recall``: IDF-weighted share of the query's index terms (``evalkit.systems.text``) that
  occur in the chunk; terms no indexed chunk contains are left out, since no candidate has them;
- ``title``: IDF-weighted share of the query's concepts and index terms (one pool) that occur in
  the chunk's title (a section title names what the chunk answers);
- ``prior``: the first-stage fusion score divided by its maximum possible value.

``score = sum(weights[name] * feature)``, rounded to 12 decimals; ties go to the chunk ID
ascending. ``weights`` maps feature names to non-negative floats (a missing name weighs 0); the
default ``DEFAULT_RERANK_WEIGHTS`` is the best point of a grid over the simplex in steps of 0.1
on ``synthetic-bilingual-v1`` (a fixture baseline, not a universal setting).

Abstention: ``search`` returns nothing ("no answer") when

1. ``abstain_on_unseen`` is true and the query mentions an alias concept that no indexed chunk
   mentions (an out-of-corpus entity check; the corpus concepts are collected at index time);
2. the query mentions at least one concept and no candidate reaches ``min_concept_recall``
   (default 0.8) of ``concept_recall``: no chunk mentions the query's concepts together, e.g.
   the facility exists and the district exists, but never in one chunk; or
3. the best reranked score is below ``min_score`` (default 0.2, the score floor): the best
   candidate shares neither concepts nor most of the query's terms.

**Fixture-awareness.** The alias table (``data/alias_concepts.yaml``) is written for the committed
fixture ``synthetic-bilingual-v1`` and includes concepts that only its no-answer queries mention.
Rules 1 and 2 are real mechanisms, but the ``NoAnswerFP`` they reach on that fixture reflects the
fixture-aware table, not the abstention quality of any real system.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from evalkit.errors import InputError
from evalkit.systems.protocol import ChunkLike, Hit, TextRetriever
from evalkit.systems.text import tokenize
from evalkit.systems.vectors import AliasEmbedder, Matrix

__all__ = [
    "DEFAULT_RERANK_WEIGHTS",
    "FEATURE_NAMES",
    "HeuristicReranker",
    "HybridRetriever",
    "RerankFeatures",
]


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

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        for component in self.components:
            component.index(chunks)

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


class RerankFeatures(NamedTuple):
    """The reranker's features of one candidate chunk, each in [0, 1] (module docstring)."""

    cosine: float
    concept_recall: float
    concept_precision: float
    term_recall: float
    title: float
    prior: float


FEATURE_NAMES: tuple[str, ...] = RerankFeatures._fields

DEFAULT_RERANK_WEIGHTS: Mapping[str, float] = {
    "cosine": 0.0,
    "concept_recall": 0.4,
    "concept_precision": 0.2,
    "term_recall": 0.1,
    "title": 0.3,
    "prior": 0.0,
}


def _idf(document_frequency: int, n_documents: int) -> float:
    """BM25's non-negative IDF: ``log(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))


def _weighted_share(
    items: Iterable[Any], present: frozenset[Any], weight: Mapping[Any, float]
) -> float:
    total = matched = 0.0
    for item in items:
        total += weight[item]
        if item in present:
            matched += weight[item]
    return matched / total if total > 0 else 0.0


class HeuristicReranker(TextRetriever):
    """Rescores a hybrid's candidates with transparent features and abstains (module docstring)."""

    def __init__(
        self,
        first_stage: HybridRetriever,
        embedder: AliasEmbedder,
        *,
        name: str = "hybrid-rerank",
        depth: int = 30,
        weights: Mapping[str, float] | None = None,
        min_score: float = 0.2,
        min_concept_recall: float = 0.8,
        abstain_on_unseen: bool = True,
    ) -> None:
        chosen = dict(DEFAULT_RERANK_WEIGHTS if weights is None else weights)
        unknown = sorted(set(chosen) - set(FEATURE_NAMES))
        if unknown:
            raise InputError(
                f"HeuristicReranker {name!r}: unknown feature weight(s) {unknown}; "
                f"expected names from {list(FEATURE_NAMES)}"
            )
        if any(not math.isfinite(w) or w < 0 for w in chosen.values()):
            raise InputError(
                f"HeuristicReranker {name!r}: feature weights must be finite and non-negative"
            )
        if depth < 1:
            raise InputError(f"HeuristicReranker {name!r}: depth must be at least 1, got {depth}")
        if not 0.0 <= min_concept_recall <= 1.0:
            raise InputError(
                f"HeuristicReranker {name!r}: min_concept_recall must be in [0, 1], "
                f"got {min_concept_recall}"
            )
        self.name = name
        self.first_stage = first_stage
        self.embedder = embedder
        self.depth = depth
        self.weights = {f: float(chosen.get(f, 0.0)) for f in FEATURE_NAMES}
        self.min_score = min_score
        self.min_concept_recall = min_concept_recall
        self.abstain_on_unseen = abstain_on_unseen
        self._chunk_terms: dict[str, frozenset[str]] = {}
        self._title_terms: dict[str, frozenset[str]] = {}
        self._chunk_concepts: dict[str, frozenset[int]] = {}
        self._title_concepts: dict[str, frozenset[int]] = {}
        self._term_idf: dict[str, float] = {}
        self._concept_idf: dict[int, float] = {}
        self._row: dict[str, int] = {}
        self._vectors: Matrix = np.zeros((0, 0))

    def definition(self) -> dict[str, Any]:
        return {
            "class": "HeuristicReranker",
            "first_stage": self.first_stage.definition(),
            "embedder": self.embedder.definition(),
            "depth": self.depth,
            "weights": self.weights,
            "min_score": self.min_score,
            "min_concept_recall": self.min_concept_recall,
            "abstain_on_unseen": self.abstain_on_unseen,
        }

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        self.first_stage.index(chunks)
        self._chunk_terms, self._title_terms, self._row = {}, {}, {}
        self._chunk_concepts, self._title_concepts = {}, {}
        texts = [f"{chunk.title}\n{chunk.text}" for chunk in chunks]
        term_df: Counter[str] = Counter()
        concept_df: Counter[int] = Counter()
        for row, (chunk, text) in enumerate(zip(chunks, texts, strict=True)):
            self._row[chunk.id] = row
            self._chunk_terms[chunk.id] = frozenset(tokenize(text))
            self._title_terms[chunk.id] = frozenset(tokenize(chunk.title))
            self._chunk_concepts[chunk.id] = frozenset(self.embedder.concepts(text))
            self._title_concepts[chunk.id] = frozenset(self.embedder.concepts(chunk.title))
            term_df.update(self._chunk_terms[chunk.id])
            concept_df.update(self._chunk_concepts[chunk.id])
        n = len(chunks)
        self._term_idf = {t: _idf(df, n) for t, df in term_df.items()}
        self._concept_idf = {c: _idf(df, n) for c, df in concept_df.items()}
        self._vectors = self.embedder.embed(texts)

    def unseen_concepts(self, text: str) -> list[str]:
        """IDs of the alias concepts ``text`` mentions that no indexed chunk mentions, sorted."""
        return sorted(
            self.embedder.concept_ids[c]
            for c in self.embedder.concepts(text)
            if c not in self._concept_idf
        )

    def features(self, text: str) -> list[tuple[Hit, RerankFeatures]]:
        """The first stage's top ``depth`` hits for ``text`` with their features, in its order."""
        concepts = [c for c in self.embedder.concepts(text) if c in self._concept_idf]
        return self._features(text, concepts)

    def _features(self, text: str, concepts: list[int]) -> list[tuple[Hit, RerankFeatures]]:
        candidates = self.first_stage.search_text(text, self.depth)
        if not candidates:
            return []
        terms = [t for t in dict.fromkeys(tokenize(text)) if t in self._term_idf]
        query_vector = self.embedder.embed([text])[0]
        title_pool: dict[tuple[str, Any], float] = {
            ("c", c): self._concept_idf[c] for c in concepts
        }
        title_pool.update({("t", t): self._term_idf[t] for t in terms})
        max_prior = self.first_stage.max_score
        query_concepts = frozenset(concepts)
        out = []
        for hit in candidates:
            chunk_concepts = self._chunk_concepts[hit.chunk_id]
            in_title = frozenset(
                [("c", c) for c in self._title_concepts[hit.chunk_id]]
                + [("t", t) for t in self._title_terms[hit.chunk_id]]
            )
            cosine = float(self._vectors[self._row[hit.chunk_id]] @ query_vector)
            features = RerankFeatures(
                cosine=min(max(cosine, 0.0), 1.0),
                concept_recall=_weighted_share(concepts, chunk_concepts, self._concept_idf),
                concept_precision=(
                    len(chunk_concepts & query_concepts) / len(chunk_concepts)
                    if chunk_concepts
                    else 0.0
                ),
                term_recall=_weighted_share(terms, self._chunk_terms[hit.chunk_id], self._term_idf),
                title=_weighted_share(title_pool, in_title, title_pool),
                prior=min(hit.score / max_prior, 1.0) if max_prior > 0 else 0.0,
            )
            out.append((hit, features))
        return out

    def score(self, features: RerankFeatures) -> float:
        """The weighted feature sum, rounded to 12 decimals."""
        return round(
            sum(self.weights[f] * v for f, v in zip(FEATURE_NAMES, features, strict=True)), 12
        )

    def search_text(self, text: str, k: int) -> list[Hit]:
        """Reranked hits (score descending, chunk ID ascending), or ``[]`` to abstain."""
        mentioned = self.embedder.concepts(text)
        concepts = [c for c in mentioned if c in self._concept_idf]
        if self.abstain_on_unseen and len(concepts) < len(mentioned):
            return []  # rule 1: a concept no indexed chunk mentions
        candidates = self._features(text, concepts)
        if not candidates:
            return []
        best_recall = max(f.concept_recall for _, f in candidates)
        if concepts and best_recall < self.min_concept_recall:
            return []
        scored = sorted(
            ((self.score(f), hit.chunk_id) for hit, f in candidates),
            key=lambda x: (-x[0], x[1]),
        )
        if scored[0][0] < self.min_score:
            return []
        return [Hit(c, s) for s, c in scored[:k]]

    def close(self) -> None:
        self.first_stage.close()
