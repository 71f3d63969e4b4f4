"""``TermIndex`` (BM25 in NumPy arrays, issue 48) against SQLite FTS5's own ``bm25()``.

The reference is real FTS5: the store's table (``ChunkStore.index_texts``) queried as
``ChunkStore.search_terms`` queries it, and ``bm25()`` read unrounded. Scores must be equal to
the last bit, hits in the same order, on generated English/Chinese chunks and on random term
lists with ties, repeated terms, empty rows and terms that half the rows hold (IDF floor).
"""

from __future__ import annotations

import sqlite3
import string
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings, strategies as st

from evalkit.fixtures import generate_fixture
from evalkit.fixtures.records import RecordTable
from evalkit.fixtures.schema import Chunk
from evalkit.systems import lexical as lexical_module
from evalkit.systems.bm25 import TermIndex, plain_term, plain_terms
from evalkit.systems.fts5_segment import MAX_TOKEN_BYTES
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.store import ChunkStore, chunk_texts
from evalkit.systems.text import index_term_lists, tokenize


class _Row:
    def __init__(self, chunk_id: str) -> None:
        self.id, self.document_id, self.language, self.title, self.text = (
            chunk_id,
            "d",
            "en",
            "",
            "",
        )


def _fts5(docs: Sequence[str], ids: Sequence[str]) -> ChunkStore:
    store = ChunkStore()
    store.add([_Row(i) for i in ids], with_text=False)  # type: ignore[list-item]
    store.index_texts(list(docs), list)
    return store


def _raw(store: ChunkStore, terms: Sequence[str]) -> list[tuple[int, float]]:
    """FTS5's unrounded ``-bm25()`` of every matching row (0-based), by row."""
    unique = list(dict.fromkeys(terms))
    if not unique:
        return []
    db = sqlite3.connect(store.path)
    try:
        rows = db.execute(
            "SELECT rowid - 1, -bm25(chunk_terms) FROM chunk_terms WHERE chunk_terms MATCH ? "
            "ORDER BY rowid",
            (" OR ".join(f'"{t}"' for t in unique),),
        ).fetchall()
    finally:
        db.close()
    return [(int(r), float(s)) for r, s in rows]


def _lists(docs: Sequence[str]) -> pa.LargeListArray:
    return pc.split_pattern(pa.array(list(docs), pa.large_string()), " ")


def _same(docs: list[str], ids: list[str], queries: list[list[str]], limit: int) -> int:
    index = TermIndex(_lists(docs), ids)
    found = 0
    with _fts5(docs, ids) as store:
        for terms in queries:
            rows, scores = index.scored(terms)
            assert list(zip(rows.tolist(), scores.tolist(), strict=True)) == _raw(store, terms)
            assert index.search(terms, limit) == store.search_terms(terms, limit)
            found += bool(len(rows))
    return found


def test_generated_chunks_give_fts5s_hits_and_scores() -> None:
    fixture = generate_fixture(11, documents=300, chunks_per_document=3, queries=60)
    chunks = list(fixture.chunks)
    texts = chunk_texts(chunks)
    index = TermIndex(index_term_lists(texts), [c.id for c in chunks])
    with ChunkStore() as store:
        store.add(chunks, with_text=False)
        store.index_texts(texts, index_term_lists)
        matched = 0
        for query in fixture.queries:
            terms = tokenize(query.text)
            assert index.search(terms, 1000) == store.search_terms(terms, 1000)
            assert index.search(terms, 3) == store.search_terms(terms, 3)
            rows, scores = index.scored(terms)
            assert list(zip(rows.tolist(), scores.tolist(), strict=True)) == _raw(store, terms)
            matched += bool(len(rows))
    assert matched >= 40  # the generated queries share terms with their chunks


_TERMS = ["a", "b", "c", "ab", "w7", "中文", "文字", "é", "z9z"]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(_TERMS), max_size=12), min_size=1, max_size=40),
    queries=st.lists(
        st.lists(st.sampled_from([*_TERMS, "missing"]), max_size=5), min_size=1, max_size=6
    ),
    limit=st.integers(1, 50),
)
def test_random_term_lists_give_fts5s_hits_and_scores(
    docs: list[list[str]], queries: list[list[str]], limit: int
) -> None:
    # few distinct terms: many ties (broken by ID), repeated terms, terms in most rows
    ids = [f"c{n:03d}" for n in reversed(range(len(docs)))]  # ID order is not row order
    _same([" ".join(doc) for doc in docs], ids, queries, limit)


def test_common_terms_take_fts5s_idf_floor() -> None:
    docs = ["a b", "a", "a c", "a", "b c c"]
    ids = ["e", "d", "c", "b", "a"]
    assert _same(docs, ids, [["a"], ["a", "c"], ["c", "a", "a"], ["b"], ["zz"], []], 10) == 4


def test_plain_terms_are_what_fts5s_ascii_tokenizer_keeps_whole() -> None:
    for term in ["ferri", "w7", "中文", "é"]:
        assert plain_term(term), term
    for term in ["Ferri", "a_b", "a-b", "a b", "", "\ud800", "x" * MAX_TOKEN_BYTES]:
        assert not plain_term(term), term
    assert plain_terms(_lists(["a b", "", "中文 é"]))
    assert not plain_terms(_lists(["a b", "x" * MAX_TOKEN_BYTES]))
    assert not plain_terms(_lists(["a B"]))
    fixture = generate_fixture(3, documents=50, chunks_per_document=2, queries=20)
    assert plain_terms(index_term_lists(chunk_texts(list(fixture.chunks))))
    punctuation = "".join(c for c in string.printable if not c.isalnum())
    assert all(plain_term(t) for t in tokenize(f"Ünïcode {punctuation} ＡＢＣ 漢字 ΣΑΣ straße"))


@pytest.mark.parametrize("form", ["models", "arrow"])
def test_lexical_uses_the_arrays_below_the_limit_and_fts5_above(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = generate_fixture(4, documents=120, chunks_per_document=2, queries=30)
    chunks = list(fixture.chunks)
    given = chunks if form == "models" else RecordTable.from_models(Chunk, chunks)
    queries = [q.text for q in fixture.queries]
    memory = LexicalRetriever()
    memory.index(given)
    monkeypatch.setattr(lexical_module, "MEMORY_INDEX_BELOW", 0)
    stored = LexicalRetriever()
    stored.index(given)
    try:
        with pytest.raises(RuntimeError):
            memory._indexed_store()  # no FTS5 table was built
        stored._indexed_store()
        assert [memory.search_text(q, 1000) for q in queries] == [
            stored.search_text(q, 1000) for q in queries
        ]
    finally:
        memory.close()
        stored.close()


def test_a_query_term_the_arrays_do_not_take_goes_to_fts5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fixture = generate_fixture(4, documents=40, chunks_per_document=2, queries=5)
    chunks = list(fixture.chunks)
    retriever = LexicalRetriever()
    retriever.index(chunks)
    try:
        query = fixture.queries[0].text
        expected = retriever.search_text(query, 20)
        odd = [*tokenize(query), "Odd_Term"]  # FTS5 folds and splits it: "odd", "term"
        monkeypatch.setattr(lexical_module, "tokenize", lambda text: odd)
        hits = retriever.search_text(query, 20)
        retriever._indexed_store()  # built now, once
        with ChunkStore() as store:
            store.add(chunks, with_text=False)
            store.index_texts(chunk_texts(chunks), index_term_lists)
            assert hits == [h for h in store.search_terms(odd, 20) if h.score > 0]
        monkeypatch.setattr(lexical_module, "tokenize", tokenize)
        assert retriever.search_text(query, 20) == expected
    finally:
        retriever.close()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_the_reference_tokenizer_makes_only_plain_terms(text: str) -> None:
    # so lexical's arrays take every term of the reference systems (module docstring)
    terms = tokenize(text)
    assert all(plain_term(term) for term in terms), terms
    if "\0" not in text:  # index_term_lists joins a batch's texts by NUL
        assert plain_terms(index_term_lists([text]))
