"""The registry of named systems, pre-filled with the five offline reference ablations.

``SYSTEMS.get(name)`` returns a factory; every call builds a fresh, unindexed system, so repeated
evaluations never share state. Register your own with ``SYSTEMS.register("name", factory)``, or
name it on the command line as ``package.module:factory``.

Reference settings of ``hybrid`` (chosen by a grid over lexical weight {1, 0.7, 0.5, 0.3},
``rrf_k`` {10, 30, 60} and depth {20, 50, 100} on ``synthetic-bilingual-v1``): lexical weight
0.3 and alias-vector weight 1.0, ``rrf_k`` 10, depth 50. BM25 cannot match across languages, so
an equal-weight fusion lets in-language but off-topic BM25 hits crowd out cross-language
matches; the lighter lexical weight keeps BM25 as a tie-breaker among the alias-vector's many
equal cosines. ``hybrid-rerank`` reranks that hybrid's top 30 with the defaults of
``HeuristicReranker`` (see ``evalkit.systems.fusion``). These are fixture baselines, not
universal settings.
"""

from __future__ import annotations

from collections.abc import Callable

from evalkit.registry import Registry
from evalkit.systems.external import external_system, is_external_spec
from evalkit.systems.fusion import HeuristicReranker, HybridRetriever
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.protocol import Retriever, load_factory
from evalkit.systems.vectors import AliasEmbedder, TokenHashEmbedder, VectorRetriever

__all__ = ["REFERENCE_SYSTEMS", "SYSTEMS", "resolve_system"]

SystemFactory = Callable[[], Retriever]

SYSTEMS: Registry[SystemFactory] = Registry("system", ids=True)


def _lexical() -> Retriever:
    return LexicalRetriever(name="lexical")


def _token_hash() -> Retriever:
    return VectorRetriever(TokenHashEmbedder(), name="token-hash")


def _alias_vector() -> Retriever:
    return VectorRetriever(AliasEmbedder(), name="alias-vector")


_HYBRID_WEIGHTS = (0.3, 1.0)  # lexical, alias-vector
_HYBRID_RRF_K = 10
_HYBRID_DEPTH = 50
_RERANK_DEPTH = 30


def _hybrid_stage(name: str = "hybrid") -> HybridRetriever:
    return HybridRetriever(
        [LexicalRetriever(name="lexical"), VectorRetriever(AliasEmbedder(), name="alias-vector")],
        name=name,
        weights=_HYBRID_WEIGHTS,
        rrf_k=_HYBRID_RRF_K,
        depth=_HYBRID_DEPTH,
    )


def _hybrid() -> Retriever:
    return _hybrid_stage()


def _hybrid_rerank() -> Retriever:
    return HeuristicReranker(
        _hybrid_stage(), AliasEmbedder(), name="hybrid-rerank", depth=_RERANK_DEPTH
    )


SYSTEMS.register("lexical", _lexical)
SYSTEMS.register("token-hash", _token_hash)
SYSTEMS.register("alias-vector", _alias_vector)
SYSTEMS.register("hybrid", _hybrid)
SYSTEMS.register("hybrid-rerank", _hybrid_rerank)

REFERENCE_SYSTEMS: tuple[str, ...] = tuple(SYSTEMS.names())


def resolve_system(spec: str | Retriever, *, where: str = "system spec") -> Retriever:
    """A fresh system from a registered name, a ``run:PATH`` or ``http:NAME`` spec (see
    :mod:`evalkit.systems.external`), a ``package.module:factory`` spec, or an instance.

    ``where`` (e.g. ``system #2``) names the spec in errors, which never quote an unsafe spec.
    """
    if not isinstance(spec, str):
        return spec
    if is_external_spec(spec) and spec not in SYSTEMS:
        return external_system(spec)
    if ":" in spec and spec not in SYSTEMS:
        return load_factory(spec, where=where)
    return SYSTEMS.get(spec)()
