"""The reference systems' bulk-indexing paths (issue 21): batched loads, ``index_terms``, bars.

Real SQLite and the real tokenizer throughout; the large measurements live in
``benchmarks/bench_index.py``.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Literal

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from system_inputs import Chunk

from evalkit.fixtures import generate_fixture
from evalkit.run import evaluate
from evalkit.systems import (
    lexical as lexical_module,
    store as store_module,
    vectors as vectors_module,
)
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.store import ChunkStore
from evalkit.systems.text import (
    TOKEN_LISTS_VECTORIZED_FROM,
    _char_tables,
    _index_terms_vectorized,
    index_term_lists,
    index_terms,
    index_terms_batch,
    token_lists,
    tokenize,
)
from evalkit.systems.vectors import TokenHashEmbedder, VectorRetriever

# Latin letters and digits, CJK ideographs, full-width forms, accents, punctuation and spaces:
# every branch of the tokenizer.
_ALPHABET = st.sampled_from(
    list("abcXYZ019 .,-_'\n") + list("渡轮码头船北") + ["Ｆ", "é", "ß", "²", "、", "。"]
)


@given(st.text(_ALPHABET, max_size=40))
def test_index_terms_is_tokenize_as_a_bag(text: str) -> None:
    assert Counter(index_terms(text).split()) == Counter(tokenize(text))


def test_index_terms_groups_english_then_cjk_in_text_order() -> None:
    # The same terms as tokenize's doctest ("ferri leav" stemmed, "the" dropped), grouped.
    assert index_terms("The ferries leave 渡轮码头 船") == "ferri leav 渡轮 轮码 码头 船"
    assert index_terms("船 pier 渡轮") == "pier 船 渡轮"
    assert index_terms("") == ""


# What the batch tokenizer must treat as index_terms does: Greek capital sigma (lower-cases by
# context), dotted capital I (lower-cases to two code points), combining accents (NFKC composes
# them), compatibility forms and ligatures, Hangul jamo, CJK compatibility ideographs, an
# ideograph beyond the BMP, NUL (the batch's own separator) and a lone surrogate.
_HARD = st.sampled_from(
    [
        *"abcXYZ019 .,-_'\n渡轮码头船北Ｆ²、。，",
        *["\u00e9", "Σ", "Α", "İ", "e", "\u0301", "ﬁ", "㍿", "\u1100", "\u1161", "\u11a8", "豈"],
        *["𠀀", "\x00", "\ud800"],
    ]
)


@settings(deadline=None, max_examples=300)  # the first example builds the tables (about 1 s)
@given(st.lists(st.text(_HARD, max_size=12), max_size=8))
def test_the_vectorized_tokenizer_is_index_terms(texts: list[str]) -> None:
    assert _index_terms_vectorized(texts) == [index_terms(text) for text in texts]


@pytest.mark.parametrize("text_model", ["zipf", "uniform"])
def test_the_vectorized_tokenizer_is_index_terms_on_generated_corpora(
    text_model: Literal["zipf", "uniform"],
) -> None:
    fixture = generate_fixture(11, documents=300, chunks_per_document=4, text_model=text_model)
    texts = [f"{chunk.title}\n{chunk.text}" for chunk in fixture.chunks]
    assert _index_terms_vectorized(texts) == [index_terms(text) for text in texts]


@pytest.mark.parametrize("count", [3, 12_000])  # below and above VECTORIZED_FROM
def test_the_term_lists_are_the_terms_before_their_join(count: int) -> None:
    fixture = generate_fixture(11, documents=3000, chunks_per_document=4, text_model="zipf")
    texts = [f"{chunk.title}\n{chunk.text}" for chunk in fixture.chunks][:count]
    texts[1] = "the a of"  # stop words only: no term
    lists = index_term_lists(texts).to_pylist()
    assert [" ".join(terms) for terms in lists] == index_terms_batch(texts)
    assert all(term for terms in lists for term in terms if terms != [""])


@settings(deadline=None, max_examples=200)
@given(st.lists(st.text(_HARD, max_size=12), max_size=8), st.integers(0, 2))
def test_the_batch_token_lists_are_tokenize(texts: list[str], mixed: int) -> None:
    # mixed texts (Latin and CJK terms), stop words, NUL and lone surrogates, in batches
    # large enough for the tables
    texts = [*texts, *["船 pier 渡轮", "the a of", "ＡＢＣ 渡轮"][:mixed]]
    batch = texts * (TOKEN_LISTS_VECTORIZED_FROM // max(1, len(texts)) + 1)
    assert token_lists(batch) == [tokenize(text) for text in batch]


@pytest.mark.parametrize("text_model", ["zipf", "uniform"])
def test_the_batch_token_lists_are_tokenize_on_generated_corpora(
    text_model: Literal["zipf", "uniform"],
) -> None:
    fixture = generate_fixture(11, documents=300, chunks_per_document=4, text_model=text_model)
    texts = [f"{chunk.title}\n{chunk.text}" for chunk in fixture.chunks]
    assert len(texts) >= TOKEN_LISTS_VECTORIZED_FROM
    assert token_lists(texts) == [tokenize(text) for text in texts]


def test_strings_of_stable_code_points_are_in_nfkc() -> None:
    # The claim the batch tokenizer's NFKC shortcut rests on, checked by unicodedata itself on
    # random strings of stable code points, and each single-code-point NFKC form in the table.
    tables = _char_tables()
    rng = np.random.default_rng(0)
    stable = np.flatnonzero(tables.stable[:0x30000])
    for _ in range(300):
        text = "".join(map(chr, rng.choice(stable, size=40)))
        assert unicodedata.is_normalized("NFKC", text)
    for point in rng.choice(0x30000, size=5000):
        if not 0xD800 <= point < 0xE000:
            form = unicodedata.normalize("NFKC", chr(point))
            assert chr(tables.nfkc[point]) == (form if len(form) == 1 else chr(point))


CHUNKS = [
    Chunk(f"c{i:02d}", text)
    for i, text in enumerate(
        [
            "The ferry leaves the north pier every morning.",
            "Library cards are free for residents.",
            "渡轮每天早上从北码头出发。",
            "Recycling is collected on Tuesdays.",
            "The north pier has a ferry ticket office.",
            "Ferry tickets are sold at the library too.",
            "码头旁边有图书馆。",
        ]
    )
]
QUERIES = ["ferry north pier", "library ferry", "码头 渡轮", "tuesdays recycling", "volcano"]


def _searches(retriever: LexicalRetriever) -> list[list[tuple[str, float]]]:
    return [[(h.chunk_id, h.score) for h in retriever.search_text(q, 10)] for q in QUERIES]


def test_lexical_batches_give_the_one_batch_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical_module, "MEMORY_INDEX_BELOW", 0)  # the FTS5 store's batches
    whole = LexicalRetriever()
    whole.index(CHUNKS)
    expected = _searches(whole)
    whole.close()
    monkeypatch.setattr(store_module, "BATCH", 2)  # 7 chunks: batches of 2, 2, 2 and 1
    batched = LexicalRetriever()
    batched.index(CHUNKS)
    try:
        assert _searches(batched) == expected
        assert expected[0][0][0] in {"c00", "c04"}  # a ferry + north + pier chunk wins
        assert expected[-1] == []  # no shared term
    finally:
        batched.close()


def test_index_texts_needs_one_text_per_stored_chunk() -> None:
    with ChunkStore() as store:
        store.add(CHUNKS)
        with pytest.raises(ValueError, match="2 texts for 7 chunks"):
            store.index_texts(["a", "b"], index_terms_batch)


def test_vector_batches_give_the_one_batch_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = TokenHashEmbedder(dim=64)
    expected = embedder.embed([f"{c.title}\n{c.text}" for c in CHUNKS])
    monkeypatch.setattr(vectors_module, "_EMBED_BATCH", 3)
    retriever = VectorRetriever(TokenHashEmbedder(dim=64), name="v")
    retriever.index(CHUNKS)
    try:
        np.testing.assert_array_equal(retriever._matrix.toarray(), expected)
    finally:
        retriever.close()


def test_progress_bars_show_counts_and_no_names(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = generate_fixture(5, documents=4, queries=8)
    evaluate(fixture, ["lexical", "hybrid-rerank"], repeats=1, progress=True)
    shown = capsys.readouterr().err
    # One bar per indexing pass, numbered per system (hybrid-rerank: its lexical and
    # alias-vector components, then the reranker), and one over the queries per system.
    assert "indexing pass 3" in shown
    assert "indexing pass 4" not in shown
    assert "system 2/2 repeat 1" in shown
    for private in ("lexical", "hybrid", fixture.chunks[0].id, fixture.queries[0].id):
        assert private not in shown
    evaluate(fixture, ["lexical"], repeats=1)
    assert capsys.readouterr().err == ""


def test_store_without_text_keeps_ids_only() -> None:
    with ChunkStore() as store:
        store.add(CHUNKS, with_text=False)
        assert store.chunk_ids == [c.id for c in CHUNKS]
        assert store.texts() == [("", "")] * len(CHUNKS)
