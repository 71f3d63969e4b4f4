"""The reference systems on tiny in-memory corpora (real SQLite, real tokenizer)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from evalkit.errors import InputError, UnknownNameError
from evalkit.systems import (
    SYSTEMS,
    AliasEmbedder,
    FunctionRetriever,
    HeuristicReranker,
    Hit,
    HybridRetriever,
    LexicalRetriever,
    Retriever,
    TokenHashEmbedder,
    VectorRetriever,
    fingerprint,
    load_factory,
    resolve_system,
)
from evalkit.systems.store import ChunkStore
from evalkit.systems.text import tokenize


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


CHUNKS = [
    Chunk("c1", "The ferry leaves the north pier every morning."),
    Chunk("c2", "Library cards are free for residents."),
    Chunk("c3", "渡轮每天早上从北码头出发。", language="zh"),
    Chunk("c4", "Recycling is collected on Tuesdays."),
]
CONCEPTS = {"ferry": ["ferry", "渡轮"], "library": ["library", "图书馆"], "pier": ["pier", "码头"]}


def test_tokenize_english_and_chinese() -> None:
    # Lucene stop words drop "the"; Snowball stems "ferries" -> "ferri", "leaves" -> "leav".
    assert tokenize("The ferries leave") == ["ferri", "leav"]
    # CJK runs become overlapping bigrams; a lone ideograph stays a unigram.
    assert tokenize("渡轮码头") == ["渡轮", "轮码", "码头"]
    assert tokenize("船") == ["船"]
    # NFKC folds full-width letters; case is folded.
    assert tokenize("ＦＥＲＲＹ") == tokenize("ferry")


def test_store_is_real_sqlite_and_removed_on_close() -> None:
    store = ChunkStore()
    store.add(CHUNKS)
    path = Path(store.path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM chunks").fetchone() == (4,)
    store.close()
    assert not path.exists()
    store.close()  # idempotent


def test_lexical_bm25_ranks_matching_chunk_first_and_abstains() -> None:
    system = LexicalRetriever()
    system.index(CHUNKS)
    try:
        hits = system.search(Query("q", "When does the ferry leave?"), 3)
        assert hits[0].chunk_id == "c1"
        assert all(isinstance(h, Hit) for h in hits)
        assert system.search(Query("q", "volcano"), 3) == []  # no shared term: abstains
        zh = system.search(Query("q", "渡轮几点出发", "zh"), 3)
        assert zh[0].chunk_id == "c3"
    finally:
        system.close()


def test_token_hash_embedder_is_stable_and_normalized() -> None:
    embedder = TokenHashEmbedder(dim=64)
    a = embedder.embed(["ferry pier ferry", "ferry pier ferry", ""])
    np.testing.assert_array_equal(a[0], a[1])
    assert np.linalg.norm(a[0]) == pytest.approx(1.0)
    assert not a[2].any()  # nothing recognized: zero vector
    # The bucket comes from BLAKE2b, not hash(): a second embedder agrees exactly.
    np.testing.assert_array_equal(TokenHashEmbedder(dim=64).embed(["ferry"]), embedder.embed(["ferry"]))


def test_alias_embedder_matches_across_languages() -> None:
    embedder = AliasEmbedder(CONCEPTS)
    en, zh = embedder.embed(["the ferry pier", "渡轮码头"])
    assert float(en @ zh) == pytest.approx(1.0)
    # English aliases match whole words only.
    assert embedder.concepts("ferryman") == {}


def test_vector_retriever_cross_language_and_tie_rule() -> None:
    system = VectorRetriever(AliasEmbedder(CONCEPTS), name="alias")
    system.index(CHUNKS)
    try:
        hits = system.search(Query("q", "ferry pier"), 10)
        assert [h.chunk_id for h in hits] == ["c1", "c3"]  # equal cosine: chunk ID ascending
        assert hits[0].score == hits[1].score
        assert system.search(Query("q", "volcano"), 10) == []
    finally:
        system.close()


def test_hybrid_rrf_arithmetic() -> None:
    lexical = LexicalRetriever()
    vector = VectorRetriever(AliasEmbedder(CONCEPTS), name="alias")
    hybrid = HybridRetriever([lexical, vector], rrf_k=60)
    hybrid.index(CHUNKS)
    try:
        lexical_hits = lexical.search_text("ferry pier", 50)
        vector_hits = vector.search_text("ferry pier", 50)
        fused = {h.chunk_id: h.score for h in hybrid.search(Query("q", "ferry pier"), 10)}
        # RRF: sum over components of 1 / (60 + rank).
        expected: dict[str, float] = {}
        for hits in (lexical_hits, vector_hits):
            for rank, hit in enumerate(hits, start=1):
                expected[hit.chunk_id] = expected.get(hit.chunk_id, 0.0) + 1 / (60 + rank)
        assert fused == pytest.approx(expected)
    finally:
        hybrid.close()


def test_reranker_abstains_below_floor() -> None:
    hybrid = HybridRetriever([LexicalRetriever(), VectorRetriever(AliasEmbedder(CONCEPTS), name="a")])
    reranker = HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), min_score=0.99)
    reranker.index(CHUNKS)
    try:
        assert reranker.search(Query("q", "ferry tickets price"), 10) == []
        reranker.min_score = 0.0
        assert reranker.search(Query("q", "ferry tickets price"), 10)
    finally:
        reranker.close()


def test_registry_names_and_errors() -> None:
    assert SYSTEMS.names() == ["lexical", "token-hash", "alias-vector", "hybrid", "hybrid-rerank"]
    with pytest.raises(UnknownNameError, match="Did you mean 'hybrid'"):
        SYSTEMS.get("hybird")
    first, second = resolve_system("lexical"), resolve_system("lexical")
    assert first is not second  # a fresh system each time
    assert isinstance(first, Retriever)


def test_fingerprints_are_stable_and_change_with_settings() -> None:
    assert fingerprint(resolve_system("hybrid")) == fingerprint(resolve_system("hybrid"))
    assert fingerprint(LexicalRetriever(min_score=0.0)) != fingerprint(LexicalRetriever(min_score=1.0))


def search_everything(query: str, k: int) -> list[tuple[str, float]]:
    """A user's plain search function (used through load_factory below)."""
    return [("c2", 2.0), ("c1", 1.0)][:k]


def make_user_system() -> FunctionRetriever:
    return FunctionRetriever(search_everything, name="user")


def test_function_adapter_and_factory_spec() -> None:
    system = load_factory(f"{__name__}:make_user_system")
    assert system.name == "user"
    assert list(system.search(Query("q", "x"), 1)) == [Hit("c2", 2.0)]
    with pytest.raises(InputError, match="package.module:factory"):
        load_factory("no-colon")
    with pytest.raises(InputError, match="cannot import"):
        load_factory("evalkit_no_such_module:factory")
    with pytest.raises(InputError, match="no callable"):
        load_factory(f"{__name__}:no_such_factory")
