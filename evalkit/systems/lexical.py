"""``lexical``: BM25 over SQLite FTS5 with the shared English/Chinese tokenizer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.systems.protocol import ChunkLike, Hit
from evalkit.systems.store import StoreBackedRetriever, chunk_texts
from evalkit.systems.text import index_term_lists, tokenize

__all__ = ["LexicalRetriever"]


class LexicalRetriever(StoreBackedRetriever):
    """BM25 (SQLite FTS5: k1 = 1.2, b = 0.75) over title + text, query terms OR-ed.

    Hits scoring at or below ``min_score`` are dropped, so a query whose terms barely match
    anything returns nothing (abstains). Ties are broken by chunk ID ascending.
    """

    def __init__(self, *, name: str = "lexical", min_score: float = 0.0) -> None:
        self.name = name
        self.min_score = min_score

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
        texts = chunk_texts(chunks)
        store = self._open_store((), with_text=False)
        # the chunk rows are stored while the forked range processes index theirs
        store.index_texts(
            texts, index_term_lists, meanwhile=lambda: store.add(chunks, with_text=False)
        )

    def search_text(self, text: str, k: int) -> list[Hit]:
        hits = self._indexed_store().search_terms(tokenize(text), k)
        return [hit for hit in hits if hit.score > self.min_score]
