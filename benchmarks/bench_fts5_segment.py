"""FTS5's own inserts against the segment written directly (issue 21), on the same terms.

The terms are those of the first ``--chunks`` chunks of the cached ``bench_index.py`` fixture
(zipf text model; generated there on first use), made by the lexical system's tokenizer
(``index_terms_batch``, not timed). Each round times, in this process and in turn:

- ``fts5``: FTS5's inserts into a fresh table with the store's bulk settings
  (``evalkit.systems.store.FTS5_LOAD``), ``BATCH`` rows per ``executemany``, then ``optimize``;
- ``segment``: ``fts5_segment.encode_segment`` then ``write_segment`` into a fresh table.

Both in a database file in a temporary directory, as the store does; CPU seconds of this
process. The ratio is segment / fts5 per round (below 1: the direct segment is faster). The
first round also checks that both tables answer 200 of the terms with the same rows and BM25
scores, and that FTS5's ``integrity-check`` passes on the direct one.

    .venv/bin/python benchmarks/bench_fts5_segment.py [--chunks 200000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _fixture_dir() -> Path:
    found = sorted((HERE / "data").glob("generated-s1-d250000-c4-q10000-zipf-*"))
    if not found:  # bench_index.py generates and caches it
        subprocess.run(
            [sys.executable, str(HERE / "bench_index.py"), "--systems", "alias-vector"],
            check=True,
        )
        found = sorted((HERE / "data").glob("generated-s1-d250000-c4-q10000-zipf-*"))
    return found[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from evalkit.fixtures import load_fixture
    from evalkit.systems import fts5_writer, store as store_module
    from evalkit.systems.store import chunk_texts
    from evalkit.systems.text import index_terms_batch

    texts = chunk_texts(load_fixture(_fixture_dir()).chunks)[: args.chunks]
    terms: list[str] = []
    for start in range(0, len(texts), store_module.BATCH):
        terms += index_terms_batch(texts[start : start + store_module.BATCH])
    fts5_writer.compile_writer()
    table = store_module._FTS5_TABLE

    def fresh(directory: str, name: str) -> sqlite3.Connection:
        db = store_module._connect(Path(directory) / name)
        db.execute(table)
        store_module._configure_fts5(db)
        return db

    def fts5(db: sqlite3.Connection) -> None:
        with db:
            for start in range(0, len(terms), store_module.BATCH):
                db.executemany(
                    "INSERT INTO chunk_terms(rowid, terms) VALUES (?, ?)",
                    zip(
                        range(start + 1, start + store_module.BATCH + 1),
                        terms[start : start + store_module.BATCH],
                        strict=False,
                    ),
                )
            db.execute(store_module._OPTIMIZE)

    def segment(db: sqlite3.Connection) -> None:
        with db:
            store_module._index_rows(db, store_module._Rows(terms, list, 0, len(terms), True))

    print(f"{len(terms):,} chunks; CPU seconds of this process")
    print(f"{'round':>5} {'fts5 s':>8} {'segment s':>10} {'ratio':>7}")
    saved = store_module.SEGMENT_FROM
    store_module.SEGMENT_FROM = 1
    try:
        for round_number in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as directory:
                seconds = {}
                dbs = {}
                for name, build in (("fts5", fts5), ("segment", segment)):
                    db = fresh(directory, f"{name}.sqlite3")
                    start = time.process_time()
                    build(db)
                    seconds[name] = time.process_time() - start
                    db.close()
                    dbs[name] = sqlite3.connect(Path(directory) / f"{name}.sqlite3")
                if round_number == 1:
                    _check(dbs["fts5"], dbs["segment"], terms)
                for db in dbs.values():
                    db.close()
            ratio = seconds["segment"] / seconds["fts5"]
            print(
                f"{round_number:>5} {seconds['fts5']:>8.2f} {seconds['segment']:>10.2f} "
                f"{ratio:>7.2f}",
                flush=True,
            )
    finally:
        store_module.SEGMENT_FROM = saved


def _check(reference: sqlite3.Connection, ours: sqlite3.Connection, terms: list[str]) -> None:
    check = "INSERT INTO chunk_terms(chunk_terms) VALUES ('integrity-check')"
    if ours.execute(check).fetchall() != []:
        raise SystemExit("integrity-check failed on the direct segment")
    query = (
        "SELECT rowid, bm25(chunk_terms) FROM chunk_terms WHERE chunk_terms MATCH ? ORDER BY rowid"
    )
    sample = sorted({term for row in terms[::997] for term in row.split()})[:200]
    for term in sample:
        match = (f'"{term}"',)
        if reference.execute(query, match).fetchall() != ours.execute(query, match).fetchall():
            raise SystemExit("the direct segment answers a term otherwise than FTS5's")
    print(f"checked: integrity-check, and {len(sample)} terms' rows and BM25 scores agree")


if __name__ == "__main__":
    main()
