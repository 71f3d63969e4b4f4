"""FTS5 segments built directly (issue 21): ``evalkit.systems.fts5_segment`` must write the
segment FTS5 itself writes.

The oracle is SQLite's FTS5: the same rows inserted into a real FTS5 table (a tiny ``hashsize``
so that they land in many segments) and merged by its ``optimize`` into one segment, whose leaf
pages, term index (``%_idx``) and doclist indexes must equal ours byte for byte. Small page
sizes (``pgsz``) make terms, row IDs and position lists cross pages and doclist indexes of one
and more levels appear. FTS5's ``optimize`` works in steps of 1,000 leaf pages (it then starts a
new page and writes the step's first term in full), so byte equality is checked below that; a
larger segment is checked by FTS5's ``integrity-check`` and by its query results.
"""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from evalkit.fixtures.schema import Chunk
from evalkit.systems import fts5_segment, fts5_writer, store as store_module
from evalkit.systems.fts5_segment import encode_segment
from evalkit.systems.store import ChunkStore

# Words with what FTS5's ascii tokenizer changes or splits on (upper case, punctuation,
# control characters), non-ASCII ones, and longer-than-7-byte ones sharing 7-byte prefixes
# (ordered by the tie-break of the term sort), besides many plain ones.
WORDS = [
    "a", "ab", "abc", "abd", "b", "ba", "zz", "q1", "x" * 40,
    "abcdefg", "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefghij", "abcdefgi",
    "Hello", "AB", "a-b", "x_y", "C++", "tab\tx", "a.b.c", "\x00z",
    "中文", "中国", "中文中文中", "中文中", "Ünï", "ÜnïcodeÜberlang", "Ünïcodf",
] + [f"w{i}" for i in range(300)]  # fmt: skip


def _fts5_table(pgsz: int, path: Path | str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms, content = '', tokenize = 'ascii')")
    for option, value in (("pgsz", pgsz), ("automerge", 0), ("hashsize", 1024)):
        db.execute("INSERT INTO t(t, rank) VALUES (?, ?)", (option, value))
    return db


def _fts5_segment(
    docs: list[str], pgsz: int, first: int
) -> tuple[list[bytes], list[tuple[int, bytes]], list[tuple[bytes, int]], sqlite3.Connection]:
    """FTS5's own segment of ``docs`` (rows ``first ..``): pages, doclist indexes, term index."""
    db = _fts5_table(pgsz)
    rows = [(first + i, doc) for i, doc in enumerate(docs)]
    half = len(rows) // 2
    for part in (rows[:half], rows[half:]):  # two transactions: two segments at least, merged
        with db:
            db.executemany("INSERT INTO t(rowid, terms) VALUES (?, ?)", part)
    with db:
        db.execute("INSERT INTO t(t) VALUES ('optimize')")
    blocks = db.execute("SELECT id, block FROM t_data WHERE id > 10 ORDER BY id").fetchall()
    assert len({row_id >> 37 for row_id, _ in blocks}) == 1  # one segment after optimize
    low = (1 << 37) - 1
    pages = [bytes(block) for row_id, block in blocks if not (row_id & low) >> 36]
    doclist = sorted(
        (row_id & low, bytes(block)) for row_id, block in blocks if (row_id & low) >> 36
    )
    index = sorted((bytes(term), pgno) for term, pgno in db.execute("SELECT term, pgno FROM t_idx"))
    return pages, doclist, index, db


def _random_docs(rng: random.Random, rows: int, common: float) -> list[str]:
    return [
        " ".join(
            "a" if rng.random() < common else rng.choice(WORDS) for _ in range(rng.randint(0, 60))
        )
        for _ in range(rows)
    ]


def _assert_fts5s_own(docs: list[str], pgsz: int, first: int) -> list[tuple[int, bytes]]:
    """Our segment of ``docs`` is FTS5's, byte for byte; FTS5's doclist-index rows."""
    pages, doclist, index, _ = _fts5_segment(docs, pgsz, first)
    assert len(pages) < 1000  # optimize cuts a segment of 1,000 pages or more into steps
    ours = encode_segment(docs, first, pgsz)
    assert ours.pages == pages
    assert sorted(ours.doclist_index) == doclist
    assert sorted(ours.term_index) == index
    return doclist


@pytest.mark.parametrize("seed", range(12))
def test_segments_are_the_ones_fts5_writes(seed: int) -> None:
    rng = random.Random(seed)
    pgsz = [32, 40, 64, 100, 256, 4050][seed % 6]
    docs = _random_docs(rng, rng.randint(20, 300), common=rng.random() * 0.3)
    docs[rng.randrange(len(docs))] = ""  # a row without a token still counts
    _assert_fts5s_own(docs, pgsz, first=rng.choice([1, 5, 1000, 300_000]))


@pytest.mark.parametrize(("pgsz", "rows"), [(32, 2000), (40, 4000), (64, 4000)])
def test_long_doclists_get_the_doclist_indexes_fts5_writes(pgsz: int, rows: int) -> None:
    rng = random.Random(pgsz)
    docs = [
        " ".join(["a"] * rng.randint(1, 3) + [rng.choice(["b", "c", "中文"])]) for _ in range(rows)
    ]
    doclist = _assert_fts5s_own(docs, pgsz, first=7)
    heights = {(key >> 31) & 31 for key, _ in doclist}
    assert heights >= {0, 1}  # doclist indexes of two levels: the case this test is for


def test_a_huge_position_list_after_a_doclist_index_grows_it_as_fts5_does() -> None:
    # hundreds of pages holding no row ID, each adding to the doclist index begun before them
    assert _assert_fts5s_own(["a " * 40, "a " * 5000, "a b"], 32, first=1)


def test_row_ids_beyond_what_the_writer_encodes_are_refused() -> None:
    with pytest.raises(ValueError, match="row IDs"):
        encode_segment(["a"], 0)
    with pytest.raises(ValueError, match="row IDs"):
        encode_segment(["a", "b"], fts5_segment.MAX_ROWID)
    assert encode_segment(["a"], fts5_segment.MAX_ROWID - 1).pages


def test_without_the_compiled_writer_the_store_uses_fts5s_inserts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fails(*args: object) -> None:
        raise RuntimeError("cannot cache function: no locator available")  # Numba's words

    monkeypatch.setattr(fts5_writer, "_write", fails)
    assert fts5_writer.compile_writer.__wrapped__() is False
    monkeypatch.setattr(store_module, "SEGMENT_FROM", 1)
    monkeypatch.setattr(store_module, "_segment_writer_ready", lambda: False)
    docs = _random_docs(random.Random(2), 300, common=0.1)
    reference = _fts5_segment(docs, fts5_segment.DEFAULT_PAGE_SIZE, 1)[3]
    with ChunkStore() as store:
        store.add(_chunks(len(docs)))
        store.index_texts(docs, list)  # would raise if the writer ran
        ours = store._db.execute(
            "SELECT rowid, round(bm25(chunk_terms), 9) FROM chunk_terms "
            "WHERE chunk_terms MATCH '\"a\"' ORDER BY rowid"
        ).fetchall()
    assert ours == _matches(reference, "a")


def _matches(db: sqlite3.Connection, term: str) -> list[tuple[int, float]]:
    return db.execute(
        "SELECT rowid, round(bm25(t), 9) FROM t WHERE t MATCH ? ORDER BY rowid", (f'"{term}"',)
    ).fetchall()


def test_a_large_segment_reads_as_fts5s_own(tmp_path: Path) -> None:
    rng = random.Random(99)
    docs = _random_docs(rng, 3000, common=0.2)
    pgsz = 64
    reference = _fts5_segment(docs, pgsz, 1)[3]
    ours = encode_segment(docs, 1, pgsz)
    assert len(ours.pages) > 3000  # several of optimize's steps
    path = tmp_path / "segment.sqlite3"
    db = _fts5_table(pgsz, path)
    with db:
        fts5_segment.write_segment(db, "t", ours, segment_id=1, first_rowid=1)
        cookie = db.execute("SELECT block FROM t_data WHERE id = 10").fetchone()[0][:4]
        structure = store_module._structure_record(cookie, 1, [(0, [(1, 1, len(ours.pages))])])
        totals = store_module._varints([len(docs), ours.tokens])
        db.executemany("UPDATE t_data SET block = ? WHERE id = ?", [(structure, 10), (totals, 1)])
    db.close()  # FTS5 keeps the structure it read: a new connection reads the one written
    db = sqlite3.connect(path)
    assert db.execute("INSERT INTO t(t) VALUES ('integrity-check')").fetchall() == []
    terms = sorted(
        {
            token.lower()
            for doc in docs
            for token in re.split(r"[^0-9A-Za-z\x80-\U0010FFFF]+", doc)
            if token
        }
    )
    assert len(terms) > 300
    for term in terms:
        assert _matches(db, term) == _matches(reference, term), term
    assert (
        db.execute("SELECT * FROM t_docsize ORDER BY id").fetchall()
        == reference.execute("SELECT * FROM t_docsize ORDER BY id").fetchall()
    )
    assert (
        db.execute("SELECT block FROM t_data WHERE id = 1").fetchone()
        == reference.execute("SELECT block FROM t_data WHERE id = 1").fetchone()
    )


def test_term_order_sorts_tokens_by_their_bytes() -> None:
    rng = random.Random(3)
    alphabet = ["a", "b", "é", "中", "0"]
    tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    encoded = [token.encode() for token in tokens]
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in encoded])))
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    distinct = sorted(set(encoded))
    rank = {token: i for i, token in enumerate(distinct)}
    longer = [t for t in distinct if len(t) > 7]
    ties = np.array([longer.index(t) if len(t) > 7 else 0 for t in encoded])
    order, first = fts5_writer.term_order(offsets, data, ties)
    assert [encoded[i] for i in order] == sorted(encoded)
    assert list(order) == sorted(range(len(encoded)), key=lambda i: (rank[encoded[i]], i))
    assert int(first.sum()) == len(distinct)


def test_rows_without_a_token_give_no_pages_and_a_cut_token_is_refused() -> None:
    empty = encode_segment(["", " ", "--"], 1)
    assert empty.pages == []
    assert empty.term_index == []
    assert list(empty.token_counts) == [0, 0, 0]
    longest = "b" * fts5_segment.MAX_TOKEN_BYTES
    cut = ["a " + longest + "b"]
    assert fts5_segment.has_cut_token(cut)
    assert fts5_segment.has_cut_token(pa.array([s.split(" ") for s in cut]))
    assert not fts5_segment.has_cut_token(["a " + longest, "-" * 40_000])
    with pytest.raises(ValueError, match="token of more than"):
        encode_segment(cut, 1)


@pytest.mark.parametrize(
    ("segment_from", "segment_rows"),
    [(1, 10**9), (1, 400), (10**9, 10**9)],
    ids=["one-segment", "segments-of-400-rows", "fts5-inserts"],
)
def test_the_store_indexes_as_fts5_does(
    segment_from: int, segment_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's own index (direct segments or FTS5's inserts) against FTS5's inserts."""
    monkeypatch.setattr(store_module, "SEGMENT_FROM", segment_from)
    monkeypatch.setattr(store_module, "SEGMENT_ROWS", segment_rows)
    rng = random.Random(5)
    docs = _random_docs(rng, 1500, common=0.1)
    docs[400:800] = [""] * 400  # rows 401-800, one whole segment's rows, without a token
    reference = _fts5_segment(docs, fts5_segment.DEFAULT_PAGE_SIZE, 1)[3]
    with ChunkStore() as store:
        store.index_texts(docs, list, meanwhile=lambda: store.add(_chunks(len(docs))))
        db = store._db
        check = "INSERT INTO chunk_terms(chunk_terms) VALUES ('integrity-check')"
        assert db.execute(check).fetchall() == []
        segments = db.execute("SELECT count(DISTINCT segid) FROM chunk_terms_idx").fetchone()[0]
        assert segments == (3 if segment_rows == 400 else 1)
        for term in ["a", "ab", "abcdefgh1", "中文", "hello", "w7", "w299"]:
            ours = db.execute(
                "SELECT rowid, round(bm25(chunk_terms), 9) FROM chunk_terms "
                "WHERE chunk_terms MATCH ? ORDER BY rowid",
                (f'"{term}"',),
            ).fetchall()
            assert ours == _matches(reference, term), term
        assert db.execute("SELECT * FROM chunk_terms_docsize ORDER BY id").fetchall() == (
            reference.execute("SELECT * FROM t_docsize ORDER BY id").fetchall()
        )
        assert db.execute("SELECT block FROM chunk_terms_data WHERE id = 1").fetchone() == (
            reference.execute("SELECT block FROM t_data WHERE id = 1").fetchone()
        )


def test_a_token_fts5_would_cut_sends_the_rows_through_fts5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_module, "SEGMENT_FROM", 1)
    docs = ["a b", "c " + "d" * (fts5_segment.MAX_TOKEN_BYTES + 5), "a"]
    reference = _fts5_segment(docs, fts5_segment.DEFAULT_PAGE_SIZE, 1)[3]
    with ChunkStore() as store:
        store.add(_chunks(len(docs)))
        store.index_texts(docs, list)
        cut = "d" * fts5_segment.MAX_TOKEN_BYTES  # FTS5 indexes its first 32,768 bytes
        for term in ["a", "c", cut]:
            ours = store._db.execute(
                "SELECT rowid FROM chunk_terms WHERE chunk_terms MATCH ? ORDER BY rowid",
                (f'"{term}"',),
            ).fetchall()
            assert ours == [row[:1] for row in _matches(reference, term)], term
        assert ours == [(2,)]


def _chunks(count: int) -> list[Chunk]:
    return [
        Chunk(id=f"c{i}", document_id="d", language="en", title="t", text="x") for i in range(count)
    ]


@pytest.mark.parametrize("divider", [False, True])
def test_term_lists_give_the_segment_of_their_joined_strings(divider: bool) -> None:
    rng = random.Random(11)
    docs = _random_docs(rng, 200, common=0.1)
    lists = [doc.split(" ") for doc in docs]
    if divider:  # a term FTS5's tokenizer splits: the lists are joined and split again
        lists[3].append("x_Y")
    joined = [" ".join(terms) for terms in lists]
    arrow = pa.array(lists, pa.large_list(pa.large_string()))
    ours, theirs = encode_segment(arrow, 1, 64), encode_segment(joined, 1, 64)
    assert (ours.pages, ours.term_index, ours.doclist_index) == (
        theirs.pages,
        theirs.term_index,
        theirs.doclist_index,
    )
    assert list(ours.token_counts) == list(theirs.token_counts)
