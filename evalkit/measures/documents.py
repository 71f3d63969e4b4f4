"""Passage judgments as document judgments: each document stands for its best judged chunk.

The usual passage-to-document relevance mapping: a document is as relevant as its most
relevant part. For one query, a document's **grade** is the highest grade among the query's
judgments of its chunks, and its **best chunk** is the chunk that has it (ties: the first in
the fixture's chunk order). A document none of whose chunks is judged has no entry; a system
that ranks it stands it for its first chunk, which is unjudged, as the document is.

Scoring a ranking of best chunks against :func:`document_judgments` (one judgment per
document, at its best chunk) is therefore document-level evaluation against max-aggregated
qrels, chunk ID for document ID: every ranking measure gives the same value. Used by the
``run:PATH?ids=documents`` system (:mod:`evalkit.systems.external`) and by
:func:`evalkit.run.evaluate` for systems that rank documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

__all__ = ["DOCUMENT_LEVEL_KEY", "document_judgments"]

DOCUMENT_LEVEL_KEY = "documentLevel"
"""The key of a system's ``definition()`` that, set to ``True``, says the system ranks
documents (each as its best chunk): it is scored against :func:`document_judgments`."""


class _Judgment(Protocol):
    @property
    def chunk_id(self) -> str: ...
    @property
    def grade(self) -> int: ...


def document_judgments(
    judgments: Iterable[_Judgment], document_of: Mapping[str, str], chunk_order: Sequence[str]
) -> dict[str, tuple[str, int]]:
    """``{document_id: (best chunk ID, grade)}`` of one query's ``judgments`` (module docs).

    ``document_of`` maps each chunk ID to its document ID; ``chunk_order`` is the fixture's
    chunk IDs in order (the tie rule). Documents come in the order of their best chunks.
    """
    position = {chunk_id: i for i, chunk_id in enumerate(chunk_order)}
    best: dict[str, tuple[int, int, str]] = {}  # document -> (-grade, position, chunk)
    for judgment in judgments:
        document = document_of[judgment.chunk_id]
        key = (-judgment.grade, position[judgment.chunk_id], judgment.chunk_id)
        if document not in best or key < best[document]:
            best[document] = key
    ordered = sorted(best.items(), key=lambda item: item[1][1])
    return {document: (chunk, -grade) for document, (grade, _, chunk) in ordered}
