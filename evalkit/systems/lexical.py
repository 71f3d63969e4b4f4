"""``lexical``: BM25 over SQLite FTS5 with the shared English/Chinese tokenizer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike
from evalkit.systems.store import ChunkStore
from evalkit.systems.text import tokenize

__all__ = ["LexicalRetriever"]


class LexicalRetriever(BaseRetriever):
    """BM25 (SQLite FTS5: k1 = 1.2, b = 0.75) over title + text, query terms OR-ed.

    Hits scoring at or below ``min_score`` are dropped, so a query whose terms barely match
    anything returns nothing (abstains). Ties are broken by chunk ID ascending.
    """

    def __init__(self, *, name: str = "lexical", min_score: float = 0.0) -> None:
        self.name = name
        self.min_score = min_score
        self._store: ChunkStore | None = None

    def definition(self) -> dict[str, Any]:
        return {
            "class": "LexicalRetriever",
            "ranking": "bm25-fts5",
            "k1": 1.2,
            "b": 0.75,
            "tokenizer": "nfkc-lower+lucene-en-stop+snowball-en+cjk-bigram",
            "fields": ["title", "text"],
            "min_score": self.min_score,
        }

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        self.close()
        self._store = ChunkStore()
        self._store.add(chunks)
        self._store.index_terms(tokenize)

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self.search_text(query.text, k)

    def search_text(self, text: str, k: int) -> list[Hit]:
        """Search with raw text (the hybrid system calls this with a deeper ``k``)."""
        if self._store is None:
            raise RuntimeError(f"system {self.name!r}: call index(chunks) before search()")
        hits = self._store.search_terms(tokenize(text), k)
        return [hit for hit in hits if hit.score > self.min_score]

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
