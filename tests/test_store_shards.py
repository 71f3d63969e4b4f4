"""``ChunkStore.index_texts`` across processes (issue 21): each forked process indexes a range of
rows into its own FTS5 table, and the store moves those segments into its own index.

The reference is the same store indexed by one process; the hits, scores and FTS5's own
``integrity-check`` must agree. Real SQLite and real forked processes throughout.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from evalkit import forking
from evalkit.fixtures import generate_fixture
from evalkit.fixtures.schema import Chunk
from evalkit.run import evaluate
from evalkit.systems import lexical as lexical_module, store as store_module
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.store import ChunkStore, chunk_texts
from evalkit.systems.text import index_terms_batch

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the ranges are forked"
)


@pytest.fixture(autouse=True)
def _through_fts5(monkeypatch: pytest.MonkeyPatch) -> None:
    """``lexical`` indexes these chunks in the FTS5 store, not in arrays (``lexical``)."""
    monkeypatch.setattr(lexical_module, "MEMORY_INDEX_BELOW", 0)


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Chunk], list[str]]:
    # 1,600 chunks in English and Chinese: more than the 128 KB FTS5 hash, so every range
    # flushes segments of its own before its optimize.
    fixture = generate_fixture(7, documents=400, chunks_per_document=4, queries=60)
    return list(fixture.chunks), [query.text for query in fixture.queries]


def _index(
    chunks: Sequence[Chunk], queries: Sequence[str]
) -> tuple[list[list[tuple[str, float]]], int]:
    retriever = LexicalRetriever()
    retriever.index(chunks)
    try:
        db = retriever._indexed_store()._db
        assert (
            db.execute("INSERT INTO chunk_terms(chunk_terms) VALUES ('integrity-check')").fetchall()
            == []
        )
        segments = db.execute("SELECT count(DISTINCT segid) FROM chunk_terms_idx").fetchone()[0]
        hits = [[(h.chunk_id, h.score) for h in retriever.search_text(q, 20)] for q in queries]
        return hits, segments
    finally:
        retriever.close()


def _shards(monkeypatch: pytest.MonkeyPatch, cores: int, rows: int) -> None:
    monkeypatch.setattr(forking, "usable_cores", lambda: cores)
    monkeypatch.setattr(store_module, "SHARD_MIN", rows)
    monkeypatch.setattr(store_module, "BATCH", 150)  # several batches per range


@pytest.mark.parametrize("direct", [False, True], ids=["fts5-inserts", "direct-segments"])
@pytest.mark.parametrize("cores", [2, 3])
def test_ranges_indexed_apart_give_the_one_process_index(
    corpus: tuple[list[Chunk], list[str]],
    monkeypatch: pytest.MonkeyPatch,
    cores: int,
    direct: bool,
) -> None:
    chunks, queries = corpus
    expected, one = _index(chunks, queries)  # one process, FTS5's inserts and optimize
    assert one == 1
    assert sum(map(len, expected)) > 300  # the queries find chunks
    _shards(monkeypatch, cores, rows=400)
    # each range's segment written directly (evalkit.systems.fts5_segment), or by FTS5
    monkeypatch.setattr(store_module, "SEGMENT_FROM", 100 if direct else 10**9)
    hits, segments = _index(chunks, queries)
    assert segments == cores  # one optimized segment per range, all in the store's index
    assert hits == expected  # same chunks, same order, same BM25 scores to the last bit


def test_too_few_rows_per_core_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forking, "usable_cores", lambda: 8)
    monkeypatch.setattr(store_module, "SHARD_MIN", 100)
    assert store_module._shard_bounds(250) == [0, 125, 250]
    assert store_module._shard_bounds(199) == [0, 199]
    assert store_module._shard_bounds(10_000) == [
        0,
        1250,
        2500,
        3750,
        5000,
        6250,
        7500,
        8750,
        10_000,
    ]
    monkeypatch.setattr(forking, "usable_cores", lambda: 1)
    assert store_module._shard_bounds(10_000) == [0, 10_000]


def test_an_unknown_fts5_layout_is_indexed_here_instead(
    corpus: tuple[list[Chunk], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, queries = corpus
    expected, _ = _index(chunks, queries)
    _shards(monkeypatch, 2, rows=400)
    monkeypatch.setattr(store_module, "_fts5_records", lambda db, schema: None)
    hits, segments = _index(chunks, queries)
    assert hits == expected
    assert segments == 1  # the second range inserted after the first, then one optimize


def test_an_error_in_a_range_process_reaches_the_caller(
    corpus: tuple[list[Chunk], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _ = corpus
    _shards(monkeypatch, 2, rows=400)
    texts = chunk_texts(chunks)

    def fails_late(batch: Sequence[str]) -> list[str]:  # a closure: forked, never pickled
        if any(text is texts[1200] for text in batch):
            raise ValueError("tokenizer failed at row 1201")
        return index_terms_batch(batch)

    with ChunkStore() as store:
        store.add(chunks, with_text=False)
        with pytest.raises(ValueError, match="row 1201"):
            store.index_texts(texts, fails_late)
        directory = store._directory
    assert not directory.exists()  # closing the store removes the ranges' databases too


def test_fts5_varints_round_trip() -> None:
    values = [0, 1, 127, 128, 16_383, 16_384, 2**21, 2**35 + 5, 2**49, 2**56 - 1]
    assert store_module._read_varints(store_module._varints(values)) == values
    assert store_module._varints([300]) == bytes([0x82, 0x2C])  # SQLite's documented form
    with pytest.raises(ValueError, match="out of range"):
        store_module._varints([2**56])


def test_ranges_inside_evaluate_workers_give_the_serial_evaluation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # evaluate(workers=2) forks one worker per system run; a lexical index there forks its
    # ranges in turn. Per-query values and rankings are those of one process doing it all.
    fixture = generate_fixture(9, documents=150, chunks_per_document=4, queries=40)
    serial = evaluate(fixture, ["lexical", "hybrid"], repeats=2)
    _shards(monkeypatch, 2, rows=100)
    absorb, log = store_module._absorb_shard, tmp_path / "absorbed"

    def logged(db: sqlite3.Connection, path: Path) -> bool:  # in the workers: a file says so
        with log.open("a") as out:
            out.write("range\n")
        return absorb(db, path)

    monkeypatch.setattr(store_module, "_absorb_shard", logged)
    apart = evaluate(fixture, ["lexical", "hybrid"], repeats=2, workers=2)
    assert log.read_text().count("range") == 4  # 2 systems x 2 repeats, a second range each
    pd.testing.assert_frame_equal(apart.per_query, serial.per_query, check_exact=True)
    pd.testing.assert_frame_equal(apart.rankings, serial.rankings, check_exact=True)
    assert len(serial.rankings) > 500
