"""The measured abstention signals (``HeuristicReranker.abstention_signals``) and the in-domain
no-answer generator (``evalkit.fixtures.in_domain``).

Expected signal values are worked out by hand from ``AbstentionSignals``'s docstring over the
hand-written chunks of ``test_rerank_abstention`` (real SQLite, real tokenizer).
"""

from __future__ import annotations

import math
import re

import pytest
from system_inputs import Query
from test_rerank_abstention import _reranker

from evalkit.errors import InputError
from evalkit.fixtures import generate_fixture, validate_fixture
from evalkit.fixtures.in_domain import add_in_domain_no_answer
from evalkit.systems.abstention import EMPTY_SIGNALS


def _idf(df: int, n: int = 5) -> float:
    """BM25's IDF, written out again: log(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def test_attribute_coverage_by_hand() -> None:
    reranker = _reranker()
    try:
        # Terms borrow (a5), book (a4, a5), librari (a4) and the library concept (a4); "can" and
        # "I" are question words. Candidates a4, a5: book is in both, the entity; the attribute
        # is borrow, librari and the concept, each of df 1. a4 holds 2 of the 3.
        signals = reranker.abstention_signals("Can I borrow books at the library?", "en")
        assert signals.attribute_coverage == pytest.approx(2 / 3)
        # kayak is in no chunk and weighs the largest IDF (df 0); only a4 is a candidate, so
        # nothing is entity; a4 holds librari and the concept (df 1 each).
        signals = reranker.abstention_signals("Is there a kayak at the library?", "en")
        expected = 2 * _idf(1) / (_idf(0) + 2 * _idf(1))
        assert signals.attribute_coverage == pytest.approx(expected)
        assert signals.unknown_items == 1.0  # kayak
        assert signals.yes_no == 1.0
    finally:
        reranker.close()


def test_answer_evidence_needs_the_asked_shape_in_a_top_candidate() -> None:
    reranker = _reranker()
    try:
        # "How much" asks for a price; a1 shows "3 dollars".
        assert reranker.abstention_signals("How much is a ferry ticket?", "en").answer_evidence == 1
        # The library chunks show no amount of money, no numeral.
        library = reranker.abstention_signals("How much does the library charge?", "en")
        assert library.answer_evidence == 0.0
        assert library.yes_no == 0.0
        # A query that asks for no shape has nothing to miss.
        assert reranker.abstention_signals("library books", "en").answer_evidence == 1.0
    finally:
        reranker.close()


def test_agreement_of_the_lexical_and_the_vector_component() -> None:
    with_table, without_table = _reranker(), _reranker({})
    try:
        # BM25 ranks a1 first (ferri, ticket); the ferry concept is in a1 and a3 with the pier
        # concept (cosine 0.707 each), a1 first by ID.
        assert with_table.abstention_signals("ferry ticket", "en").agreement == 1.0
        # BM25: a2 (pier, north); vectors: boat + pier = ferry + pier, a1 and a3 (cosine 1).
        assert with_table.abstention_signals("boat pier north", "en").agreement == 0.0
        # Without a table the vector component returns nothing: undefined.
        assert without_table.abstention_signals("ferry ticket", "en").agreement == 0.5
    finally:
        with_table.close()
        without_table.close()


def test_margins_are_the_gap_between_the_two_best_search_scores() -> None:
    reranker = _reranker()
    try:
        text = "Can I borrow books at the library?"
        hits = reranker.search(Query("q", text), 10)
        signals = reranker.abstention_signals(text, "en")
        assert len(hits) >= 2
        assert signals.top_score == hits[0].score
        assert signals.margin == pytest.approx(hits[0].score - hits[1].score)
        assert signals.relative_margin == pytest.approx(signals.margin / hits[0].score)
    finally:
        reranker.close()


def test_a_query_without_candidates_gets_the_empty_signals() -> None:
    reranker = _reranker({})
    try:
        assert reranker.abstention_signals("zzz qqq", "en") == EMPTY_SIGNALS
    finally:
        reranker.close()


def test_in_domain_no_answer_queries_name_corpus_words_no_chunk_joins() -> None:
    base = generate_fixture(3, documents=12, queries=8)
    fixture = add_in_domain_no_answer(base, 5, count=10)
    added = fixture.queries[len(base.queries) :]
    assert fixture.queries[: len(base.queries)] == base.queries
    assert len(added) == 10
    assert validate_fixture(fixture) == []
    assert add_in_domain_no_answer(base, 5, count=10) == fixture  # a seed gives the same queries
    assert add_in_domain_no_answer(base, 6, count=10) != fixture
    for query in added:
        assert not query.answerable
        assert query.tags == ("no-answer",)
        texts = [c.text.lower() for c in base.chunks if c.language == query.language]
        if query.language == "zh":
            entity, item = query.text[:3], query.text[3:]
            assert len(item) == 3
            assert any(entity in t for t in texts)
            assert any(item in t for t in texts)
            assert not any(entity in t and item in t for t in texts)
        else:
            words = query.text.split()
            assert len(words) == 4
            bags = [set(re.findall(r"[^\W\d_]+", t)) for t in texts]
            assert any(set(words[:2]) <= b for b in bags)
            assert any(set(words[2:]) <= b for b in bags)
            assert not any(set(words) <= b for b in bags)


def test_in_domain_generator_refuses_bad_arguments() -> None:
    base = generate_fixture(1, documents=2, queries=4)
    with pytest.raises(InputError, match="count must be >= 0"):
        add_in_domain_no_answer(base, 1, count=-1)
    # Two documents, one per language: no language has chunks of two documents.
    with pytest.raises(InputError, match="at least two documents"):
        add_in_domain_no_answer(base, 1, count=1)
