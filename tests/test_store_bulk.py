"""The FTS5 bulk load of ``ChunkStore`` (issue 21): several flushed segments merged by one
``optimize``, and chunks read from Arrow columns, give the BM25 of an independent computation.

The oracle is BM25 written out here from its definition with FTS5's constants (the formula of
SQLite's FTS5 documentation, "The bm25() function": k1 = 1.2, b = 0.75, IDF
``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6), over the terms of ``tokenize``: no FTS5 is
involved in it. Real SQLite throughout.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from evalkit.fixtures import generate_fixture
from evalkit.fixtures.records import RecordTable
from evalkit.fixtures.schema import Chunk
from evalkit.systems import lexical as lexical_module, store as store_module
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.store import FTS5_LOAD, ChunkStore, chunk_texts
from evalkit.systems.text import index_terms, index_terms_batch, tokenize

K1, B = 1.2, 0.75


def oracle_bm25(texts: list[str], ids: list[str], query: str, k: int) -> list[tuple[str, float]]:
    bags = [Counter(tokenize(text)) for text in texts]
    lengths = [sum(bag.values()) for bag in bags]
    average = sum(lengths) / len(lengths)
    terms = list(dict.fromkeys(tokenize(query)))
    scores: dict[str, float] = {}
    for term in terms:
        having = sum(1 for bag in bags if term in bag)
        idf = max(1e-6, math.log((len(bags) - having + 0.5) / (having + 0.5)))
        for chunk_id, bag, length in zip(ids, bags, lengths, strict=True):
            tf = bag.get(term, 0)
            if tf:
                norm = tf + K1 * (1 - B + B * length / average)
                scores[chunk_id] = scores.get(chunk_id, 0.0) + idf * tf * (K1 + 1) / norm
    ranked = sorted(scores.items(), key=lambda item: (-round(item[1], 9), item[0]))
    return ranked[:k]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Chunk], list[str]]:
    # 1,600 chunks in English and Chinese (random characters): about 110,000 terms, more than
    # the 128 KB FTS5 hash holds, so the load flushes several segments before the optimize.
    fixture = generate_fixture(5, documents=400, chunks_per_document=4, queries=40)
    return list(fixture.chunks), [query.text for query in fixture.queries]


def test_bulk_settings_are_the_documented_ones() -> None:
    assert dict(FTS5_LOAD) == {"hashsize": 131_072, "automerge": 0, "crisismerge": 64}


def test_bulk_load_flushes_segments_and_optimizes_to_one(
    corpus: tuple[list[Chunk], list[str]],
) -> None:
    chunks, _ = corpus
    with ChunkStore() as store:
        store.add(chunks, with_text=False)
        db = store._db
        # Before the optimize: the pending terms alone exceed the hash, so there are segments.
        texts = chunk_texts(chunks)
        half = len(texts) // 2
        with db:
            db.executemany(
                "INSERT INTO chunk_terms(rowid, terms) VALUES (?, ?)",
                [(i + 1, index_terms(texts[i])) for i in range(half)],
            )
        segments = db.execute("SELECT count(DISTINCT segid) FROM chunk_terms_idx").fetchone()[0]
        assert segments > 1
    with ChunkStore() as store:
        store.add(chunks, with_text=False)
        store.index_texts(chunk_texts(chunks), index_terms_batch)
        segments = store._db.execute(
            "SELECT count(DISTINCT segid) FROM chunk_terms_idx"
        ).fetchone()[0]
        assert segments == 1


@pytest.mark.parametrize(
    "segment_from", [10**9, 100, None], ids=["fts5-inserts", "direct-segment", "arrays"]
)
@pytest.mark.parametrize("form", ["models", "arrow"])
def test_bulk_loaded_lexical_matches_oracle_bm25(
    corpus: tuple[list[Chunk], list[str]],
    form: str,
    segment_from: int | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_module, "BATCH", 500)  # 4 batches
    # FTS5's inserts, or the segment written directly (evalkit.systems.fts5_segment), or
    # (None) lexical's arrays below MEMORY_INDEX_BELOW chunks (evalkit.systems.bm25)
    if segment_from is not None:
        monkeypatch.setattr(lexical_module, "MEMORY_INDEX_BELOW", 0)
        monkeypatch.setattr(store_module, "SEGMENT_FROM", segment_from)
    chunks, queries = corpus
    given = chunks if form == "models" else RecordTable.from_models(Chunk, chunks)
    texts = [f"{chunk.title}\n{chunk.text}" for chunk in chunks]
    ids = [chunk.id for chunk in chunks]
    assert chunk_texts(given) == texts
    retriever = LexicalRetriever()
    retriever.index(given)
    try:
        checked = 0
        for query in queries[:12]:
            expected = oracle_bm25(texts, ids, query, 10)
            hits = retriever.search_text(query, 10)
            assert [hit.chunk_id for hit in hits] == [chunk_id for chunk_id, _ in expected]
            for hit, (_, value) in zip(hits, expected, strict=True):
                assert hit.score == pytest.approx(value, rel=1e-9)
            checked += bool(hits)
        assert checked >= 8  # most generated queries share terms with their chunks
    finally:
        retriever.close()
