"""The reference systems on tiny in-memory corpora (real SQLite, real tokenizer)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    np.testing.assert_array_equal(
        TokenHashEmbedder(dim=64).embed(["ferry"]), embedder.embed(["ferry"])
    )


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
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(CONCEPTS), name="a")]
    )
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
    assert fingerprint(LexicalRetriever(min_score=0.0)) != fingerprint(
        LexicalRetriever(min_score=1.0)
    )


def search_everything(query: str, k: int) -> list[tuple[str, float]]:
    """A user's plain search function (used through load_factory below)."""
    return [("c2", 2.0), ("c1", 1.0)][:k]


def make_user_system() -> FunctionRetriever:
    return FunctionRetriever(search_everything, name="user")


def test_function_adapter_and_factory_spec() -> None:
    system = load_factory(f"{__name__}:make_user_system")
    assert system.name == "user"
    assert list(system.search(Query("q", "x"), 1)) == [Hit("c2", 2.0)]
    with pytest.raises(InputError, match=r"package\.module:factory"):
        load_factory("no-colon")
    with pytest.raises(InputError, match="cannot import"):
        load_factory("evalkit_no_such_module:factory")
    with pytest.raises(InputError, match="no callable"):
        load_factory(f"{__name__}:no_such_factory")


# --- reranker features and abstention (issue 9) -----------------------------------------------

RERANK_CHUNKS = [
    Chunk("a1", "A ferry ticket costs 3 dollars at the pier.", title="Ferry tickets"),
    Chunk("a2", "The north pier opens at dawn.", title="Pier"),
    Chunk("a3", "渡轮每天从码头出发。", title="渡轮", language="zh"),
    Chunk("a4", "The library lends books.", title="Library"),
]
RERANK_CONCEPTS = {
    "ferry": ["ferry", "渡轮"],
    "ticket": ["ticket", "tickets", "船票"],
    "pier": ["pier", "码头"],
    "library": ["library", "图书馆"],
    "hotel": ["hotel", "酒店"],  # no chunk mentions it: an out-of-corpus concept
}


def _reranker(**settings: Any) -> HeuristicReranker:
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(RERANK_CONCEPTS), name="alias")]
    )
    reranker = HeuristicReranker(hybrid, AliasEmbedder(RERANK_CONCEPTS), **settings)
    reranker.index(RERANK_CHUNKS)
    return reranker


def test_reranker_features_by_hand() -> None:
    reranker = _reranker()
    try:
        features = {hit.chunk_id: f for hit, f in reranker.features("ferry ticket")}
    finally:
        reranker.close()
    # a2 (pier only) shares no term and no concept with the query: neither component returns it.
    assert sorted(features) == ["a1", "a3"]
    # Concept document frequencies over the 4 chunks: ferry 2 (a1, a3), ticket 1 (a1), pier 3.
    # IDF = ln(1 + (4 - df + 0.5) / (df + 0.5)): df 1 -> ln(10/3) = 1.2039728, df 2 -> ln 2.
    a1, a3 = features["a1"], features["a3"]
    # a1 mentions ferry x2, ticket x2, pier x1 -> vector (1 + ln 2, 1 + ln 2, 1); query (1, 1, 0):
    # cosine = 2(1 + ln 2) / (sqrt 2 * sqrt(2(1 + ln 2)^2 + 1)) = 0.9227615.
    assert a1.cosine == pytest.approx(0.9227615, abs=1e-7)
    assert a1.concept_recall == pytest.approx(1.0)
    assert a1.concept_precision == pytest.approx(2 / 3)  # {ferry, ticket} of {ferry, ticket, pier}
    assert a1.term_recall == pytest.approx(1.0)  # "ferri" and "ticket" both occur in a1
    assert a1.title == pytest.approx(1.0)  # title "Ferry tickets" has both concepts and terms
    # a3 (Chinese) mentions ferry x2, pier x1 ->
    # cosine = (1 + ln 2) / (sqrt 2 * sqrt((1 + ln 2)^2 + 1)) = 0.6088451
    assert a3.cosine == pytest.approx(0.6088451, abs=1e-7)
    # concept recall = idf(ferry) / (idf(ferry) + idf(ticket)) = ln 2 / (ln 2 + ln(10/3))
    assert a3.concept_recall == pytest.approx(0.3653681, abs=1e-7)
    assert a3.concept_precision == pytest.approx(1 / 2)  # {ferry} of {ferry, pier}
    assert a3.term_recall == 0.0  # no English term in a Chinese chunk
    # title pool: concepts ferry (ln 2), ticket (ln 10/3); terms ferri, ticket (df 1: ln 10/3 each);
    # the title "渡轮" carries only the ferry concept: ln 2 / (ln 2 + 3 ln(10/3)) = 0.1610073.
    assert a3.title == pytest.approx(0.1610073, abs=1e-7)
    # prior = fused score / max fused score (a1 is first in both components: prior 1).
    assert a1.prior == pytest.approx(1.0)
    assert 0.0 < a3.prior < 1.0
    assert all(0.0 <= value <= 1.0 for f in features.values() for value in f)


def test_reranker_score_is_the_weighted_feature_sum() -> None:
    reranker = _reranker(weights={"concept_recall": 0.5, "title": 0.5})
    try:
        hits = reranker.search(Query("q", "ferry ticket"), 10)
    finally:
        reranker.close()
    # a1: 0.5 * 1 + 0.5 * 1; a3: 0.5 * 0.3653681 + 0.5 * 0.1610073 (values of the test above)
    assert [h.chunk_id for h in hits] == ["a1", "a3"]
    assert hits[0].score == pytest.approx(1.0)
    assert hits[1].score == pytest.approx(0.5 * 0.3653681 + 0.5 * 0.1610073, abs=1e-7)


def test_reranker_abstains_on_a_concept_no_chunk_mentions() -> None:
    reranker = _reranker()
    try:
        assert reranker.unseen_concepts("a hotel near the 码头") == ["hotel"]
        assert reranker.unseen_concepts("ferry pier") == []
        assert reranker.search(Query("q", "hotel near the pier"), 10) == []
        reranker.abstain_on_unseen = False
        hits = reranker.search(Query("q", "hotel near the pier"), 10)
        # Only "pier" counts (hotel and "near" are in no chunk). Default weights
        # 0.4 concept_recall + 0.2 concept_precision + 0.1 term_recall + 0.3 title:
        # a2 = 0.4 + 0.2 * 1/1 + 0.1 + 0.3 (title "Pier") = 1.0
        # a1 = 0.4 + 0.2 * 1/3 + 0.1 = 0.5667; a3 = 0.4 + 0.2 * 1/2 (no English term) = 0.5
        assert [h.chunk_id for h in hits] == ["a2", "a1", "a3"]
        assert [h.score for h in hits] == pytest.approx([1.0, 0.4 + 0.2 / 3 + 0.1, 0.5])
    finally:
        reranker.close()


def test_reranker_abstains_when_no_chunk_covers_the_query_concepts_together() -> None:
    reranker = _reranker()
    try:
        # library (a4 only) and ticket (a1 only) have equal IDF, so the best candidate covers 0.5.
        assert reranker.search(Query("q", "library ticket"), 10) == []
        reranker.min_concept_recall = 0.5
        assert {h.chunk_id for h in reranker.search(Query("q", "library ticket"), 10)} == {
            "a1",
            "a4",
        }
    finally:
        reranker.close()


def test_reranker_score_floor_applies_to_queries_without_concepts() -> None:
    reranker = _reranker()
    try:
        # No concept: the coverage check has nothing to say. Default weights give a2
        # 0.1 * term_recall (1.0) + 0.3 * title (0: "Pier" holds neither term) = 0.1 < 0.2.
        assert reranker.search(Query("q", "north dawn"), 10) == []
        reranker.min_score = 0.05
        hits = reranker.search(Query("q", "north dawn"), 10)
        assert [h.chunk_id for h in hits] == ["a2"]
        assert hits[0].score == pytest.approx(0.1)
    finally:
        reranker.close()


def test_reranker_ties_go_to_chunk_id_ascending() -> None:
    twins = [Chunk("z1", "A ferry leaves the pier."), Chunk("z0", "A ferry leaves the pier.")]
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(RERANK_CONCEPTS), name="alias")]
    )
    # Without the prior (which differs by first-stage rank) the twins' features are identical.
    reranker = HeuristicReranker(
        hybrid, AliasEmbedder(RERANK_CONCEPTS), weights={"cosine": 1.0}, min_score=0.0
    )
    reranker.index(twins)
    try:
        hits = reranker.search(Query("q", "ferry"), 10)
    finally:
        reranker.close()
    assert [h.chunk_id for h in hits] == ["z0", "z1"]
    assert hits[0].score == hits[1].score


def test_reranker_rejects_bad_settings() -> None:
    hybrid = HybridRetriever([LexicalRetriever()])
    with pytest.raises(InputError, match="unknown feature weight"):
        HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), weights={"bm25": 1.0})
    with pytest.raises(InputError, match="non-negative"):
        HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), weights={"title": -1.0})
    with pytest.raises(InputError, match="min_concept_recall"):
        HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), min_concept_recall=1.5)
    with pytest.raises(InputError, match="one weight per component"):
        HybridRetriever([LexicalRetriever()], weights=[1.0, 1.0])


def test_abstention_settings_are_part_of_the_definition() -> None:
    definition = resolve_system("hybrid-rerank").definition()
    assert {"min_score", "min_concept_recall", "abstain_on_unseen", "weights"} <= set(definition)
    lenient = HeuristicReranker(
        HybridRetriever([LexicalRetriever()]), AliasEmbedder(CONCEPTS), min_concept_recall=0.5
    )
    strict = HeuristicReranker(
        HybridRetriever([LexicalRetriever()]), AliasEmbedder(CONCEPTS), min_concept_recall=0.9
    )
    assert fingerprint(lenient) != fingerprint(strict)
