"""Retrieval systems: the ``Retriever`` protocol, the system registry and the reference stack."""

from evalkit.systems.fusion import HybridRetriever
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.protocol import (
    BaseRetriever,
    FunctionRetriever,
    Hit,
    Retriever,
    fingerprint,
    load_factory,
)
from evalkit.systems.reference import REFERENCE_SYSTEMS, SYSTEMS, resolve_system
from evalkit.systems.rerank import HeuristicReranker
from evalkit.systems.vectors import AliasEmbedder, TokenHashEmbedder, VectorRetriever

__all__ = [
    "REFERENCE_SYSTEMS",
    "SYSTEMS",
    "AliasEmbedder",
    "BaseRetriever",
    "FunctionRetriever",
    "HeuristicReranker",
    "Hit",
    "HybridRetriever",
    "LexicalRetriever",
    "Retriever",
    "TokenHashEmbedder",
    "VectorRetriever",
    "fingerprint",
    "load_factory",
    "resolve_system",
]
