"""``lexical``: BM25 over SQLite FTS5 with the shared English/Chinese tokenizer.

Below ``MEMORY_INDEX_BELOW`` chunks the ranking is computed by :class:`~evalkit.systems.bm25.
TermIndex`, FTS5's ``bm25()`` over the same terms in NumPy arrays: the same hits and scores to
the last bit, without FTS5's inserts (issue 48: they were half of ``evaluate`` on 10,000
chunks). Larger corpora, and any term FTS5's tokenizer would not take whole
(:func:`~evalkit.systems.bm25.plain_term`; the reference tokenizer makes none), go through the
FTS5 store (:mod:`evalkit.systems.store`), whose bulk path (forked ranges, directly written
segments) is built and measured for millions of chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from evalkit.fixtures.records import RecordTable
from evalkit.systems.bm25 import TermIndex, plain_term, plain_terms
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, Hit
from evalkit.systems.store import SEGMENT_FROM, ChunkStore, StoreBackedRetriever, chunk_texts
from evalkit.systems.text import index_term_lists, tokenize

__all__ = ["MEMORY_INDEX_BELOW", "LexicalRetriever"]

#: Chunks below which ``lexical`` ranks with :class:`~evalkit.systems.bm25.TermIndex`: the
#: sizes whose FTS5 index would be built by FTS5's own inserts (``store.SEGMENT_FROM``), the
#: slowest path; from there on the store writes its segments directly.
MEMORY_INDEX_BELOW: Final = SEGMENT_FROM


class LexicalRetriever(StoreBackedRetriever):
    """BM25 (SQLite FTS5: k1 = 1.2, b = 0.75) over title + text, query terms OR-ed.

    Hits scoring at or below ``min_score`` are dropped, so a query whose terms barely match
    anything returns nothing (abstains). Ties are broken by chunk ID ascending.
    """

    def __init__(self, *, name: str = "lexical", min_score: float = 0.0) -> None:
        self.name = name
        self.min_score = min_score
        self._memory: TermIndex | None = None
        self._chunks: Sequence[ChunkLike] = ()

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
        texts = chunk_texts(chunks)
        if len(texts) < MEMORY_INDEX_BELOW:
            with chunk_bar(len(texts)) as bar:
                terms = index_term_lists(texts)
                if plain_terms(terms):
                    self._memory = TermIndex(terms, _ids(chunks))
                    self._chunks = chunks  # for a query term the arrays do not take
                    bar.update(len(texts))
                    return
        self._index_store(chunks, texts)

    def _index_store(self, chunks: Sequence[ChunkLike], texts: list[str]) -> ChunkStore:
        store = self._open_store((), with_text=False)
        # the chunk rows are stored while the forked range processes index theirs
        store.index_texts(
            texts, index_term_lists, meanwhile=lambda: store.add(chunks, with_text=False)
        )
        return store

    def search_text(self, text: str, k: int) -> list[Hit]:
        terms = tokenize(text)
        if self._memory is not None and all(map(plain_term, terms)):
            hits = self._memory.search(terms, k)
        else:
            if self._memory is not None:  # FTS5 itself, built once, for such a query
                self._index_store(self._chunks, chunk_texts(self._chunks))
                self._memory, self._chunks = None, ()
            hits = self._indexed_store().search_terms(terms, k)
        return [hit for hit in hits if hit.score > self.min_score]

    def close(self) -> None:
        self._memory, self._chunks = None, ()
        super().close()


def _ids(chunks: Sequence[ChunkLike]) -> list[str]:
    """The chunks' IDs in order (from the Arrow column of a ``RecordTable``)."""
    if isinstance(chunks, RecordTable):
        ids: list[str] = chunks.column("id")
        return ids
    return [chunk.id for chunk in chunks]
