"""Retrieval systems: the ``Retriever`` protocol, the system registry and the reference stack.

The names are resolved on first use (PEP 562): code that only reads evaluation results (the
report's kernel, given a saved evaluation) does not load the systems' tokenizers and indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
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

# public name -> the module that defines it
_MODULE_OF = {
    "HybridRetriever": "evalkit.systems.fusion",
    "LexicalRetriever": "evalkit.systems.lexical",
    **dict.fromkeys(
        ("BaseRetriever", "FunctionRetriever", "Hit", "Retriever", "fingerprint", "load_factory"),
        "evalkit.systems.protocol",
    ),
    **dict.fromkeys(
        ("REFERENCE_SYSTEMS", "SYSTEMS", "resolve_system"), "evalkit.systems.reference"
    ),
    "HeuristicReranker": "evalkit.systems.rerank",
    **dict.fromkeys(
        ("AliasEmbedder", "TokenHashEmbedder", "VectorRetriever"), "evalkit.systems.vectors"
    ),
}


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
