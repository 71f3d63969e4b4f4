"""Minimal chunk and query objects for the reference systems' unit tests (the systems read
only these attributes: ``ChunkLike`` and ``QueryLike`` in ``evalkit.systems.protocol``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    title: str = "t"
    document_id: str = "d"
    language: str = "en"


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    language: str = "en"
