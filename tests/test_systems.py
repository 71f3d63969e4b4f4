"""The reference systems on tiny in-memory corpora (real SQLite, real tokenizer)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from system_inputs import Chunk, Query

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
from evalkit.systems.rerank import answer_shapes, evidence_shapes
from evalkit.systems.store import ChunkStore
from evalkit.systems.text import tokenize

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


# --- reranker features and abstention (issue 14) ----------------------------------------------

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
LN2, LN10_3 = math.log(2), math.log(10 / 3)


def _reranker(chunks: list[Chunk] | None = None, **settings: Any) -> HeuristicReranker:
    concepts = settings.pop("concepts", RERANK_CONCEPTS)
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(concepts), name="alias")]
    )
    reranker = HeuristicReranker(hybrid, AliasEmbedder(concepts), **settings)
    reranker.index(chunks or RERANK_CHUNKS)
    return reranker


def test_reranker_features_by_hand() -> None:
    reranker = _reranker()
    try:
        features = {hit.chunk_id: f for hit, f in reranker.features("ferry ticket", "en")}
        hits = reranker.search(Query("q", "ferry ticket"), 10)
    finally:
        reranker.close()
    # a2 (pier only) shares no term and no concept with the query: neither component returns it.
    assert sorted(features) == ["a1", "a3"]
    a1, a3 = features["a1"], features["a3"]
    # Only a1 has BM25 terms of the query; lexical = BM25 / best BM25.
    assert (a1.lexical, a3.lexical) == (1.0, 0.0)
    # a1 mentions ferry x2, ticket x2, pier x1 -> vector (1 + ln 2, 1 + ln 2, 1); query (1, 1, 0):
    # cosine = 2(1 + ln 2) / (sqrt 2 * sqrt(2(1 + ln 2)^2 + 1)) = 0.9227615; a3 (ferry x2, pier x1)
    # gives (1 + ln 2) / (sqrt 2 * sqrt((1 + ln 2)^2 + 1)) = 0.6088451.
    assert a1.cosine == pytest.approx(0.9227615, abs=1e-7)
    assert a3.cosine == pytest.approx(0.6088451, abs=1e-7)
    # Units: terms ferri, ticket (df 1 of 4: IDF ln(1 + 3.5 / 1.5) = ln(10/3)), concepts ferry
    # (df 2: ln 2) and ticket (df 1: ln(10/3)). a1 holds them all; a3 only the ferry concept.
    assert (a1.coverage, a1.title) == (1.0, 1.0)
    assert a3.coverage == pytest.approx(LN2 / (LN2 + 3 * LN10_3))
    assert a3.title == pytest.approx(LN2 / (LN2 + 3 * LN10_3))  # title "渡轮": the ferry concept
    assert (a1.answer, a3.answer) == (0.0, 0.0)  # the query asks for no answer shape
    assert (a1.language, a3.language) == (1.0, 0.0)
    assert a1.distinct == a3.distinct == 0.5  # no near duplicate among the candidates
    # RRF k = 60, equal weights: a1 is first in both lists (2/61, the maximum), a3 second in one.
    assert a1.prior == 1.0
    assert a3.prior == pytest.approx((1 / 62) / (2 / 61))
    # Default weights 0.2 lexical + 0.8 cosine.
    assert [h.chunk_id for h in hits] == ["a1", "a3"]
    assert [h.score for h in hits] == pytest.approx([0.2 + 0.8 * 0.9227615, 0.8 * 0.6088451])


def test_answer_shapes_of_questions_and_chunks() -> None:
    assert answer_shapes("How much is a day ticket?") == {"price"}
    assert answer_shapes("When does the ferry leave?") == {"time", "date"}
    assert answer_shapes("渡轮几点出发？") == {"time", "number"}  # 几 also asks "how many"
    assert answer_shapes("ferry pier") == frozenset()
    assert evidence_shapes("A ferry ticket costs 3 dollars at the pier.") == {"price", "number"}
    assert evidence_shapes("渡轮每天早上八点出发") == {"time", "date", "number"}
    assert evidence_shapes("Leaves at 06:40 on Mondays") == {"time", "date", "number"}
    reranker = _reranker(weights={"answer": 1.0})
    try:
        features = {h.chunk_id: f for h, f in reranker.features("how much is a ferry ticket")}
    finally:
        reranker.close()
    # price asked; a1 shows "3 dollars", a3 ("每天") shows a date but no price.
    assert (features["a1"].answer, features["a3"].answer) == (1.0, 0.0)


def test_near_duplicate_contrast_prefers_the_twin_with_the_query_words() -> None:
    chunks = [
        Chunk("d1", "The ferry leaves at noon from the north pier."),
        Chunk("d2", "The ferry leaves at noon from the south pier."),
        Chunk("d3", "Library cards are free."),
    ]
    reranker = _reranker(chunks, weights={"distinct": 1.0}, concepts={"x": ["xylophone"]})
    try:
        features = {h.chunk_id: f for h, f in reranker.features("north pier ferry")}
        hits = reranker.search(Query("q", "north pier ferry"), 10)
    finally:
        reranker.close()
    # Jaccard of the term sets {ferri, leav, noon, north|south, pier} is 4/6 >= 0.6; only d1's
    # differing term (north) is the query's: contrast 0.5 + 0.5 * (a - 0) / a = 1 for d1, 0 for d2.
    assert (features["d1"].distinct, features["d2"].distinct) == (1.0, 0.0)
    assert [h.chunk_id for h in hits] == ["d1", "d2"]


def test_reranker_abstains_on_a_concept_no_chunk_mentions() -> None:
    reranker = _reranker()
    try:
        assert reranker.unseen_concepts("a hotel near the 码头") == ["hotel"]
        assert reranker.unseen_concepts("ferry pier") == []
        assert reranker.search(Query("q", "hotel near the pier"), 10) == []
        reranker.abstain_on_unseen = False
        assert reranker.search(Query("q", "hotel near the pier"), 10)
    finally:
        reranker.close()


def test_reranker_support_and_its_threshold() -> None:
    reranker = _reranker(abstain_on_unseen=False)
    try:
        # Terms: pier (df 2 of 4: ln 2), hotel (in no chunk: the largest IDF, ln(1 + 4.5 / 0.5)
        # = ln 10). Concepts: pier (df 3: ln(10/7)), hotel (unseen: ln 10). For a2 the term
        # support ln 2 / (ln 2 + ln 10) beats the concept support ln(10/7) / (ln(10/7) + ln 10).
        expected = LN2 / (LN2 + math.log(10))
        assert reranker.support("pier hotel", "a2") == pytest.approx(expected)
        reranker.min_support = 0.25
        assert reranker.search(Query("q", "pier hotel"), 10) == []
        reranker.min_support = 0.2
        assert reranker.search(Query("q", "pier hotel"), 10)
    finally:
        reranker.close()


def test_reranker_abstains_when_only_question_words_match() -> None:
    chunks = [*RERANK_CHUNKS, Chunk("a5", "You can borrow books here.")]
    reranker = _reranker(chunks, min_support=0.0)  # rule 2 is off by default
    try:
        # BM25 matches "can" (not a Lucene stop word), but "what", "can", "I", "do" are all
        # question function words: no content unit, support 0, so threshold 0 abstains.
        assert reranker.first_stage.search_text("what can I do", 10)
        assert reranker.support("what can I do", "a5") == 0.0
        assert reranker.search(Query("q", "what can I do"), 10) == []
    finally:
        reranker.close()


def test_reranker_without_a_table_orders_as_bm25() -> None:
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(), name="alias")]  # fixture mode
    )
    reranker = HeuristicReranker(hybrid, AliasEmbedder())
    reranker.use_aliases(None)
    reranker.index(RERANK_CHUNKS)
    lexical = LexicalRetriever()
    lexical.index(RERANK_CHUNKS)
    try:
        for text in ("ferry pier", "north pier", "library books"):
            assert [h.chunk_id for h in reranker.search(Query("q", text), 10)] == [
                h.chunk_id for h in lexical.search(Query("q", text), 10)
            ]
    finally:
        reranker.close()
        lexical.close()


def test_reranker_ties_go_to_chunk_id_ascending() -> None:
    twins = [Chunk("z1", "A ferry leaves the pier."), Chunk("z0", "A ferry leaves the pier.")]
    reranker = _reranker(twins, weights={"cosine": 1.0})
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
    with pytest.raises(InputError, match="min_support"):
        HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), min_support=1.5)
    with pytest.raises(InputError, match="depth"):
        HeuristicReranker(hybrid, AliasEmbedder(CONCEPTS), depth=0)
    with pytest.raises(InputError, match="one weight per component"):
        HybridRetriever([LexicalRetriever()], weights=[1.0, 1.0])


def test_abstention_settings_are_part_of_the_definition() -> None:
    definition = resolve_system("hybrid-rerank").definition()
    assert {"min_support", "unseen_cjk_weight", "abstain_on_unseen", "weights"} <= set(definition)
    lenient = HeuristicReranker(HybridRetriever([LexicalRetriever()]), AliasEmbedder(CONCEPTS))
    strict = HeuristicReranker(
        HybridRetriever([LexicalRetriever()]), AliasEmbedder(CONCEPTS), min_support=0.5
    )
    assert fingerprint(lenient) != fingerprint(strict)
