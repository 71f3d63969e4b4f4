"""The registry of named systems, pre-filled with the five offline reference ablations.

``SYSTEMS.get(name)`` returns a factory; every call builds a fresh, unindexed system, so repeated
evaluations never share state. Register your own with ``SYSTEMS.register("name", factory)``, or
name it on the command line as ``package.module:factory``.
"""

from __future__ import annotations

from collections.abc import Callable

from evalkit.registry import Registry
from evalkit.systems.fusion import HeuristicReranker, HybridRetriever
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.protocol import Retriever, load_factory
from evalkit.systems.vectors import AliasEmbedder, TokenHashEmbedder, VectorRetriever

__all__ = ["REFERENCE_SYSTEMS", "SYSTEMS", "resolve_system"]

SystemFactory = Callable[[], Retriever]

SYSTEMS: Registry[SystemFactory] = Registry("system")


def _lexical() -> Retriever:
    return LexicalRetriever(name="lexical")


def _token_hash() -> Retriever:
    return VectorRetriever(TokenHashEmbedder(), name="token-hash")


def _alias_vector() -> Retriever:
    return VectorRetriever(AliasEmbedder(), name="alias-vector")


def _hybrid_stage(name: str = "hybrid") -> HybridRetriever:
    return HybridRetriever(
        [LexicalRetriever(name="lexical"), VectorRetriever(AliasEmbedder(), name="alias-vector")],
        name=name,
    )


def _hybrid() -> Retriever:
    return _hybrid_stage()


def _hybrid_rerank() -> Retriever:
    return HeuristicReranker(_hybrid_stage(), AliasEmbedder(), name="hybrid-rerank")


SYSTEMS.register("lexical", _lexical)
SYSTEMS.register("token-hash", _token_hash)
SYSTEMS.register("alias-vector", _alias_vector)
SYSTEMS.register("hybrid", _hybrid)
SYSTEMS.register("hybrid-rerank", _hybrid_rerank)

REFERENCE_SYSTEMS: tuple[str, ...] = tuple(SYSTEMS.names())


def resolve_system(spec: str | Retriever) -> Retriever:
    """A fresh system from a registered name, a ``package.module:factory`` spec, or an instance."""
    if not isinstance(spec, str):
        return spec
    if ":" in spec and spec not in SYSTEMS:
        return load_factory(spec)
    return SYSTEMS.get(spec)()
