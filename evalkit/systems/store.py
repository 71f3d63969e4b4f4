"""A temporary SQLite store of chunks, with an FTS5 index and dense vectors.

Each store lives in its own temporary directory and is deleted by ``close()`` (or when used as a
context manager). Nothing outside that directory is read or written: no user database, no
environment setting, no network.

Bulk loading (issue 21: a million chunks): the database is a throw-away temporary file, so it
runs without a rollback journal and without fsync (``journal_mode=OFF``, ``synchronous=OFF``,
a 256 MB page cache, temporary tables in memory); rows go in with ``executemany`` in batches
of ``BATCH`` inside one transaction. The FTS5 table is contentless (``content=''``: the terms
are not stored twice) and uses FTS5's ``ascii`` tokenizer, which splits on ASCII spaces and
punctuation only: the terms were already made by ``evalkit.systems.text`` and contain neither,
so FTS5 indexes exactly the given terms. While one batch is inserted, a helper (a forked
process where it can be, see ``index_texts``) tokenizes the next.

FTS5 bulk-load settings (``FTS5_LOAD``), chosen from a profile (``perf``, and CPU time per phase
in ``benchmarks/bench_index.py`` runs) of 100,000 and 250,000 chunks of the old generator
(``generate_fixture(..., text_model="uniform")``: about 70 terms per chunk, half of them distinct,
since its Chinese text is uniform random characters). Flushing the in-memory term hash into a
new segment costs more per term the larger the hash (``hashsize``, 1 MB by default: 10.7 s of
CPU for 100,000 chunks without any merge, 5.3 s with 256 KB, whose working set stays in the
CPU caches), and the default incremental merges (``automerge`` 4) rewrite every term several
times. So the load uses a 128 KB hash, no incremental merging, a level merge only when 64
segments pile up (``crisismerge``), and one ``optimize`` at the end: 6.8 s instead of 14.5 s of
CPU for 100,000 such chunks. Checked again at 1,000,000 chunks of the realistic default
generator (``text_model="zipf"``: 60.5 million term occurrences, 5.1 million distinct terms;
the uniform one has 36.6 million distinct among 69.2 million), inserts + ``optimize``, CPU
seconds at load average 2 to 2.7: 128 KB hash 79.7 + 7.5 (65 segments before the optimize),
64 KB 77.4 + 7.6, 1 MB 133.0 + 8.8, ``crisismerge`` 200 73.8 + 16.4 (138 segments); without
any level merge FTS5 stops at its 2,000-segment limit ("database or disk is full"). What is
left is FTS5's cost per term occurrence (about 1.3 microseconds) more than per distinct term.

The final ``optimize`` pays for itself: at 1,000,000 zipf chunks it costs 7.5-9.9 s of CPU, and
400 of the fixture's queries (``search_terms``, top 10) took 68-72 ms of CPU each over the 65
segments against 62 ms over the single optimized one; from about 1,000 queries on (an
evaluation of a large fixture asks 10,000) the single segment is the faster trade.
Segments change how the postings are stored, never what they hold: hits and BM25 scores are the
same (``tests/test_store_bulk.py``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from scipy import sparse

from evalkit.fixtures.records import RecordTable
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, Hit, TextRetriever

__all__ = ["BATCH", "FTS5_LOAD", "ChunkStore", "StoreBackedRetriever", "chunk_texts"]

#: Rows per ``executemany`` batch when loading chunks and terms.
BATCH = 20_000

#: FTS5 configuration for the bulk load (see the module docstring), then ``optimize`` once.
FTS5_LOAD: tuple[tuple[str, int], ...] = (
    ("hashsize", 131_072),
    ("automerge", 0),
    ("crisismerge", 64),
)

_PRAGMAS = (
    "PRAGMA journal_mode = OFF",
    "PRAGMA synchronous = OFF",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA cache_size = -262144",
)

_SCHEMA = """
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    document_id TEXT NOT NULL,
    language TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE VIRTUAL TABLE chunk_terms USING fts5(terms, content = '', tokenize = 'ascii');
CREATE TABLE vector_spaces (space TEXT PRIMARY KEY, dim INTEGER NOT NULL);
CREATE TABLE chunk_vectors (
    space TEXT NOT NULL REFERENCES vector_spaces(space),
    rowid INTEGER NOT NULL REFERENCES chunks(rowid),
    dims BLOB NOT NULL,
    weights BLOB NOT NULL,
    PRIMARY KEY (space, rowid)
);
"""


class ChunkStore:
    """Chunks under their stable IDs in a temporary SQLite database.

    ``add`` stores chunks in the given order; ``index_terms`` fills the FTS5 table from a
    tokenizer; ``put_vectors``/``vectors`` keep one sparse float64 matrix per named vector space
    (each row stored as its non-zero dimensions and weights).
    """

    def __init__(self) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="evalkit-store-"))
        self.path = self._directory / "store.sqlite3"
        self._db = sqlite3.connect(self.path)
        for pragma in _PRAGMAS:
            self._db.execute(pragma)
        self._db.executescript(_SCHEMA)
        with self._db:
            for option, value in FTS5_LOAD:
                self._db.execute(
                    "INSERT INTO chunk_terms(chunk_terms, rank) VALUES (?, ?)", (option, value)
                )
        self._ids: list[str] = []

    # lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection and delete the database; safe to call twice."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]
        shutil.rmtree(self._directory, ignore_errors=True)

    def __enter__(self) -> ChunkStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # chunks ----------------------------------------------------------------------------------
    def add(self, chunks: Sequence[ChunkLike], *, with_text: bool = True) -> None:
        """Store ``chunks``; row IDs follow the given order.

        ``with_text=False`` stores IDs, document IDs and languages only (title and text are
        empty strings, so :meth:`texts` returns them empty): for a retriever that indexes the
        chunks' text itself and never reads it back.
        """
        start = len(self._ids)
        names = ("id", "document_id", "language") + (("title", "text") if with_text else ())
        columns: list[Iterable[Any]] = list(_columns(chunks, names))
        ids = list(columns[0])
        if not with_text:
            columns += [itertools.repeat(""), itertools.repeat("")]
        rows = zip(itertools.count(start + 1), *columns)
        with self._db:
            for batch in _batches(rows):
                self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", batch)
        self._ids.extend(ids)

    @property
    def chunk_ids(self) -> list[str]:
        """Stored chunk IDs in row order."""
        return list(self._ids)

    def texts(self) -> list[tuple[str, str]]:
        """``(title, text)`` of every chunk in row order."""
        return [
            (t, x) for t, x in self._db.execute("SELECT title, text FROM chunks ORDER BY rowid")
        ]

    # lexical ---------------------------------------------------------------------------------
    def index_terms(self, tokenizer: Callable[[str], list[str]]) -> None:
        """Fill the FTS5 table with the tokenized title and text of every chunk."""
        rows = self._db.execute("SELECT title, text FROM chunks ORDER BY rowid").fetchall()
        self.index_texts(
            [f"{title}\n{text}" for title, text in rows], lambda text: " ".join(tokenizer(text))
        )

    def index_texts(self, texts: Sequence[str], terms_of: Callable[[str], str]) -> None:
        """Fill the FTS5 table: row ``i + 1`` gets ``terms_of(texts[i])``, space-separated terms.

        ``texts`` are in row order (one per stored chunk). A helper computes the terms of the
        next batch while SQLite inserts the current one; a bar counts the chunks. With more than
        one batch, a module-level ``terms_of`` (picklable) and the ``fork`` start method, the
        helper is a child process: a helper thread and the inserts share the GIL and did not
        overlap (wall time = CPU time), a process does (16.1 s to 11.4 s for 100,000 chunks).
        The forked helper inherits ``texts`` and is sent index ranges, so only the terms cross
        the pipe (pickling both ways cost 2.5 s of CPU per 1,000,000 chunks).
        """
        if len(texts) != len(self._ids):
            raise ValueError(f"index_texts: {len(texts)} texts for {len(self._ids)} chunks")
        starts = range(0, len(texts), BATCH)
        with chunk_bar(len(texts)) as bar, _helper(terms_of, len(starts)) as pool, self._db:
            # A forked helper has ``texts`` already (copy-on-write): it gets ranges, not the
            # strings, so only the terms are pickled (by the helper) and unpickled (here).
            forked = isinstance(pool, ProcessPoolExecutor)

            def submit(start: int) -> Future[list[str]]:
                stop = min(start + BATCH, len(texts))
                if forked:
                    return pool.submit(_terms_range, terms_of, start, stop)
                return pool.submit(_terms_batch, terms_of, texts[start:stop])

            pending = _first_submit(submit, texts) if forked else submit(0)
            for start in starts:
                terms = pending.result()
                if start + BATCH < len(texts):
                    pending = submit(start + BATCH)
                self._db.executemany(
                    "INSERT INTO chunk_terms(rowid, terms) VALUES (?, ?)",
                    zip(range(start + 1, start + 1 + len(terms)), terms, strict=True),
                )
                bar.update(len(terms))
            # One merge of all segments into one: a single segment is the fastest to query.
            self._db.execute("INSERT INTO chunk_terms(chunk_terms) VALUES ('optimize')")

    def search_terms(self, terms: Iterable[str], limit: int) -> list[Hit]:
        """BM25 (FTS5, k1=1.2, b=0.75) over ``terms`` OR-ed; ties by chunk ID ascending."""
        unique = list(dict.fromkeys(terms))
        if not unique or limit <= 0:
            return []
        match = " OR ".join(f'"{term}"' for term in unique)
        rows = self._db.execute(
            "SELECT c.id, -bm25(chunk_terms) AS score FROM chunk_terms "
            "JOIN chunks c ON c.rowid = chunk_terms.rowid "
            "WHERE chunk_terms MATCH ? ORDER BY score DESC, c.id ASC LIMIT ?",
            (match, limit),
        ).fetchall()
        return [Hit(chunk_id, round(float(score), 12)) for chunk_id, score in rows]

    # vectors ---------------------------------------------------------------------------------
    def put_vectors(self, space: str, matrix: sparse.csr_matrix) -> None:
        """Store one sparse row vector per chunk (row order) under the vector space ``space``."""
        rows = (
            (
                space,
                i + 1,
                matrix.indices[matrix.indptr[i] : matrix.indptr[i + 1]].astype("<i4").tobytes(),
                matrix.data[matrix.indptr[i] : matrix.indptr[i + 1]].astype("<f8").tobytes(),
            )
            for i in range(matrix.shape[0])
        )
        with self._db:
            self._db.execute("DELETE FROM chunk_vectors WHERE space = ?", (space,))
            self._db.execute(
                "INSERT OR REPLACE INTO vector_spaces VALUES (?, ?)", (space, matrix.shape[1])
            )
            for batch in _batches(rows):
                self._db.executemany("INSERT INTO chunk_vectors VALUES (?, ?, ?, ?)", batch)

    def vectors(self, space: str) -> sparse.csr_matrix:
        """The ``(n_chunks, dim)`` sparse matrix stored under ``space`` (CSR, float64)."""
        found = self._db.execute(
            "SELECT dim FROM vector_spaces WHERE space = ?", (space,)
        ).fetchone()
        if found is None:
            return sparse.csr_matrix((0, 0))
        dims, weights, indptr = [], [], [0]
        for dim_blob, weight_blob in self._db.execute(
            "SELECT dims, weights FROM chunk_vectors WHERE space = ? ORDER BY rowid", (space,)
        ):
            dims.append(np.frombuffer(dim_blob, dtype="<i4"))
            weights.append(np.frombuffer(weight_blob, dtype="<f8"))
            indptr.append(indptr[-1] + len(dims[-1]))
        return sparse.csr_matrix(
            (
                np.concatenate(weights) if weights else np.zeros(0),
                np.concatenate(dims) if dims else np.zeros(0, dtype=np.int32),
                np.array(indptr),
            ),
            shape=(len(indptr) - 1, found[0]),
        )


def _columns(chunks: Sequence[ChunkLike], names: Sequence[str]) -> list[list[Any]]:
    """The fields ``names`` of every chunk, one list per field (read from the Arrow columns
    when ``chunks`` is a :class:`~evalkit.fixtures.records.RecordTable`, without building a
    model per chunk)."""
    if isinstance(chunks, RecordTable):
        return [chunks.column(name) for name in names]
    return [[getattr(chunk, name) for chunk in chunks] for name in names]


def chunk_texts(chunks: Sequence[ChunkLike]) -> list[str]:
    """``f"{title}\n{text}"`` of every chunk, in order: what the reference systems index."""
    if isinstance(chunks, RecordTable) and len(chunks):
        import pyarrow.compute as pc  # imported on use, as in evalkit.fixtures.records

        joined = pc.binary_join_element_wise(
            chunks.arrow.column("title"), chunks.arrow.column("text"), "\n"
        )
        texts: list[str] = joined.to_pylist()
        return texts
    return [f"{chunk.title}\n{chunk.text}" for chunk in chunks]


def _terms_batch(terms_of: Callable[[str], str], texts: Sequence[str]) -> list[str]:
    return [terms_of(text) for text in texts]


#: The texts of an ``index_texts`` while its helper process is forked (which inherits them).
_FORKED_TEXTS: Sequence[str] = ()
_FORK_LOCK = threading.Lock()


def _first_submit(
    submit: Callable[[int], Future[list[str]]], texts: Sequence[str]
) -> Future[list[str]]:
    """The first batch's task: a fork-context pool forks its worker in its first ``submit``, so
    the worker inherits ``_FORKED_TEXTS`` = ``texts`` (one store at a time: the lock)."""
    global _FORKED_TEXTS  # noqa: PLW0603 - set only around the fork
    with _FORK_LOCK:
        _FORKED_TEXTS = texts
        try:
            return submit(0)
        finally:
            _FORKED_TEXTS = ()


def _terms_range(terms_of: Callable[[str], str], start: int, stop: int) -> list[str]:
    """In the forked helper: the terms of ``texts[start:stop]`` of the parent's index_texts."""
    return [terms_of(text) for text in _FORKED_TEXTS[start:stop]]


class _Inline(Executor):
    """An executor that runs each task at once, in the caller: for a single batch there is
    nothing to overlap, and a helper thread cost a start and a join per index."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the caller through the future
            future.set_exception(error)
        return future


def _helper(terms_of: Callable[[str], str], batches: int) -> Executor:
    """One worker for :meth:`ChunkStore.index_texts`: none for a single batch (the terms are
    computed in place), a forked process when it pays and ``terms_of`` can be sent to it (a
    module-level function), else a thread."""
    if batches <= 1:
        return _Inline()
    if "fork" in multiprocessing.get_all_start_methods():
        try:
            pickle.dumps(terms_of)
        except (pickle.PicklingError, AttributeError, TypeError):
            pass
        else:
            return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    return ThreadPoolExecutor(1)


def _batches(rows: Iterable[tuple[object, ...]]) -> Iterator[list[tuple[object, ...]]]:
    iterator = iter(rows)
    while batch := list(itertools.islice(iterator, BATCH)):
        yield batch


class StoreBackedRetriever(TextRetriever):
    """A text retriever over its own ``ChunkStore``: ``index`` opens a fresh one, ``close``
    deletes it."""

    _store: ChunkStore | None = None

    def _open_store(self, chunks: Sequence[ChunkLike], *, with_text: bool = True) -> ChunkStore:
        """Replace any previous store by a new one holding ``chunks`` (see ``ChunkStore.add``)."""
        self.close()
        self._store = ChunkStore()
        self._store.add(chunks, with_text=with_text)
        return self._store

    def _indexed_store(self) -> ChunkStore:
        if self._store is None:
            raise RuntimeError(f"system {self.name!r}: call index(chunks) before search()")
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
