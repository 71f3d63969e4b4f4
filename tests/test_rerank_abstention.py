"""hybrid-rerank's abstention rules 2-4 on tiny in-memory corpora (real SQLite, real tokenizer).

Expected values are worked out by hand from the rules in ``evalkit.systems.abstention``'s
module docstring: which words and characters the hand-written chunks contain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from system_inputs import Chunk, Query

from evalkit.systems import AliasEmbedder, HeuristicReranker, HybridRetriever, LexicalRetriever
from evalkit.systems.abstention import asks_yes_no
from evalkit.systems.vectors import VectorRetriever

CHUNKS = [
    Chunk("a1", "A ferry ticket costs 3 dollars at the pier.", title="Ferry tickets"),
    Chunk("a2", "The north pier opens at noon for a child and an adult.", title="Pier"),
    Chunk("a3", "渡轮每天从码头出发。", title="渡轮", language="zh"),
    Chunk("a4", "The library lends books.", title="Library"),
    Chunk("a5", "You can borrow books here.", title="Loans"),
]
CONCEPTS = {
    "ferry": ["ferry", "boat", "渡轮"],
    "pier": ["pier", "码头"],
    "library": ["library", "图书馆"],
}


def _reranker(
    concepts: Mapping[str, Sequence[str]] = CONCEPTS, **settings: Any
) -> HeuristicReranker:
    hybrid = HybridRetriever(
        [LexicalRetriever(), VectorRetriever(AliasEmbedder(concepts), name="alias")]
    )
    reranker = HeuristicReranker(hybrid, AliasEmbedder(concepts), **settings)
    reranker.index(CHUNKS)
    return reranker


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Can I rent a kayak at the pier?", True),  # English: auxiliary or modal verb first
        ("Is there a boat at noon?", True),
        ("Does the ferry stop at the library?", True),
        ("Where can I rent a kayak?", False),  # a wh-question
        ("kayak rental pier", False),  # keywords
        ("码头可以租皮划艇吗？", True),  # Chinese: the particle 吗 at the end
        ("码头有没有停车场", True),  # Chinese: an A-not-A form
        ("码头在哪里", False),
    ],
)
def test_asks_yes_no(text: str, expected: bool) -> None:
    assert asks_yes_no(text) is expected


def test_unknown_items_by_hand() -> None:
    reranker = _reranker()
    try:
        # rent and kayak occur in no chunk; can and I are question words; pier is in a1 and a2.
        assert reranker.unknown_items("Can I rent a kayak at the pier?") == ["rent", "kayak"]
        # boat occurs in no chunk but is an alias of the ferry concept the query mentions.
        assert reranker.unknown_items("Is there a boat at noon?") == []
        assert reranker.unknown_items("Is there a boat with wifi?") == ["wifi"]
        # "children" stems to itself, which no chunk has, but a2's "child" shares its first
        # four letters (ITEM_PREFIX): a form of a known word, not an unknown item.
        assert reranker.unknown_items("Are children welcome at the pier?") == ["welcom"]
        # 租皮划艇 is a run of four characters no chunk has; 可以 and 吗 are function characters.
        assert reranker.unknown_items("码头可以租皮划艇吗") == ["租皮划艇"]
        # A single unknown character (狗) is no item: it may be part of a known word elsewhere.
        assert reranker.unknown_items("码头有狗吗") == []
    finally:
        reranker.close()


def test_rule_3_is_opt_in_and_needs_a_yes_no_question_and_a_table() -> None:
    asked = Query("q", "Can I rent a kayak at the pier?")
    default = _reranker()
    on = _reranker(abstain_on_unknown_item=True)
    without_table = _reranker({}, abstain_on_unknown_item=True)
    try:
        assert default.search(asked, 10)  # off by default: the pier chunks are returned
        assert on.search(asked, 10) == []
        # The same words as a wh-question ask where, not whether: rule 3 does not apply.
        assert on.search(Query("q", "Where can I rent a kayak at the pier?"), 10)
        # No table: no alias can explain a word, so rule 3 never fires.
        assert without_table.search(asked, 10)
    finally:
        for system in (default, on, without_table):
            system.close()


def test_rule_4_a_yes_no_question_whose_concepts_no_candidate_joins() -> None:
    default = _reranker()
    on = _reranker(abstain_on_apart=True)
    try:
        # ferry (a1, a3) and library (a4) are never mentioned by one chunk.
        apart = Query("q", "Does the ferry stop at the library?")
        assert default.search(apart, 10)
        assert on.search(apart, 10) == []
        # ferry and pier are both in a1: the rule does not fire.
        assert on.search(Query("q", "Does the ferry stop at the pier?"), 10)
    finally:
        default.close()
        on.close()


def test_rule_2_never_abstains_when_no_candidate_is_in_the_query_language() -> None:
    reranker = _reranker(min_support=0.0)
    try:
        # BM25 finds a5 through "can" alone, a question word (support 0); 借书 is in no chunk.
        # For an English query that is no support: rule 2 abstains. For a Chinese query whose
        # only candidate is English, sharing no words is expected: rule 2 does not apply.
        assert reranker.first_stage.search_text("can 借书", 10)
        assert reranker.search(Query("q", "can 借书", language="en"), 10) == []
        assert [h.chunk_id for h in reranker.search(Query("q", "can 借书", language="zh"), 10)] == [
            "a5"
        ]
    finally:
        reranker.close()


def test_rule_2_is_off_by_default() -> None:
    # The fit (benchmarks/fit_rerank.py) found rule 2 at min_support 0 abstaining on no
    # no-answer query and on answerable ones: the default leaves it off. "can" is a question
    # word, so a5 shares no content word with the query, and it is still returned.
    reranker = _reranker()
    try:
        assert reranker.min_support is None
        found = reranker.search(Query("q", "can 借书", language="en"), 10)
        assert [h.chunk_id for h in found] == ["a5"]
    finally:
        reranker.close()


def test_definition_names_the_new_rules() -> None:
    definition = _reranker().definition()
    assert definition["version"] == 4
    assert definition["min_support"] is None
    assert definition["abstain_on_unknown_item"] is False
    assert definition["abstain_on_apart"] is False
    assert definition["item_prefix"] == 4
