"""Retrieval systems: the ``Retriever`` protocol, the system registry and the reference stack.

The names are resolved on first use (PEP 562): code that only reads evaluation results (the
report's kernel, given a saved evaluation) does not load the systems' tokenizers and indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.systems.fusion import HybridRetriever as HybridRetriever
    from evalkit.systems.lexical import LexicalRetriever as LexicalRetriever
    from evalkit.systems.protocol import (
        BaseRetriever as BaseRetriever,
        FunctionRetriever as FunctionRetriever,
        Hit as Hit,
        Retriever as Retriever,
        fingerprint as fingerprint,
        load_factory as load_factory,
    )
    from evalkit.systems.reference import (
        REFERENCE_SYSTEMS as REFERENCE_SYSTEMS,
        SYSTEMS as SYSTEMS,
        resolve_system as resolve_system,
    )
    from evalkit.systems.rerank import HeuristicReranker as HeuristicReranker
    from evalkit.systems.vectors import (
        AliasEmbedder as AliasEmbedder,
        TokenHashEmbedder as TokenHashEmbedder,
        VectorRetriever as VectorRetriever,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
