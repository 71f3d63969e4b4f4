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
so FTS5 indexes exactly the given terms.

Indexing across cores (``index_texts``): with at least ``SHARD_MIN`` rows per core, each core
indexes one contiguous range of rows: forked processes tokenize and index every range but the
first into an FTS5 table of their own (a database in the store's directory, the same schema and
settings), while this process does the first. Then :func:`_absorb_shard` moves each range's
segments into the store's table, in SQL over an attached database: the segment pages (``%_data``
rows, renumbered to unused segment IDs), their term index (``%_idx``) and row sizes
(``%_docsize``) are copied, and the totals record (rows, tokens) and the structure record (the
segments of each level) are rewritten, in the record formats FTS5's source describes
(``fts5_index.c``: SQLite varints, after a 4-byte cookie). The segments are untouched, so the
index holds exactly the rows, terms and positions one process would have written, and BM25 reads
the same totals: hits and scores are the same to the last bit, and FTS5's ``integrity-check``
passes (``tests/test_store_shards.py``). A layout this code does not know (another FTS5 version,
or the structure form with tombstones of newer tables) is detected first, and that range is then
indexed by this process instead.

Each range's segment: from ``SEGMENT_FROM`` rows on it is written directly
(:mod:`evalkit.systems.fts5_segment`): the segment FTS5's ``optimize`` writes, byte for byte,
built from all the range's term occurrences at once, with the page writer of ``fts5_index.c``
compiled by Numba. FTS5's own inserts cost about 1.3-1.7 microseconds of CPU per term occurrence
(its hash of pending terms, then flushes and merges), 50 s per core for the 60.5 million of a
million generated chunks; the direct segment costs about 0.55 of that
(``benchmarks/bench_fts5_segment.py``). Smaller ranges, and a range with a token FTS5 would cut
(over 32 KB), go through FTS5's inserts and one ``optimize``; a range of more than
``SEGMENT_ROWS`` rows becomes several segments, each built with bounded memory. Measured at
1,000,000 zipf chunks on 2 cores (``benchmarks/bench_index.py``), one run after the other:
37.6 and 43.9 s, against 63.7 s for FTS5's inserts in both ranges (the commit before; 82.1 s
when it was committed, on a slower day; 112.2 s for the design before that, one inserting
process).

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

import functools
import itertools
import logging
import multiprocessing
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from evalkit import forking
from evalkit.fixtures.records import RecordTable
from evalkit.safety.interrupts import deferred
from evalkit.safety.scratch import scratch_dir
from evalkit.systems import fts5_segment
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, Hit, TextRetriever

if TYPE_CHECKING:
    from scipy import sparse  # imported on use: a lexical store keeps no vectors

__all__ = [
    "BATCH",
    "FTS5_LOAD",
    "MEANWHILE_SHARE",
    "SEGMENT_FROM",
    "SEGMENT_ROWS",
    "SHARD_MIN",
    "ChunkStore",
    "StoreBackedRetriever",
    "chunk_texts",
]

#: Rows per ``executemany`` batch when loading chunks and terms.
BATCH = 20_000

#: Rows per core from which ``index_texts`` builds the FTS5 index in parallel processes.
SHARD_MIN = 10_000

#: Rows from which a range's FTS5 segment is built directly (``evalkit.systems.fts5_segment``:
#: FTS5's own format, without its per-occurrence inserts); fewer go through FTS5's inserts,
#: where Numba's import and the writer's start cost more than they save.
SEGMENT_FROM = 20_000

#: The share of its rows this process's range leaves to the forked ones when ``index_texts``
#: also runs ``meanwhile`` (storing the chunk rows): that costs about 4.6 microseconds of CPU
#: per row against 80 for indexing one (1,000,000 generated zipf chunks, ``bench_index.py``),
#: and 4.6 / 80 = 0.0575 balances two ranges.
MEANWHILE_SHARE = 0.06

#: Rows per directly built segment: its build holds all their term occurrences (about 1.6 GB
#: for 500,000 generated chunks), so a larger range is written as several segments.
SEGMENT_ROWS = 600_000

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

_FTS5_TABLE = "CREATE VIRTUAL TABLE chunk_terms USING fts5(terms, content = '', tokenize = 'ascii')"

_OPTIMIZE = "INSERT INTO chunk_terms(chunk_terms) VALUES ('optimize')"

_SCHEMA = f"""
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    document_id TEXT NOT NULL,
    language TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL
);
{_FTS5_TABLE};
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

    ``add`` stores chunks in the given order; ``index_texts`` fills the FTS5 table from their
    texts and a tokenizer; ``put_vectors``/``vectors`` keep one sparse float64 matrix per named
    vector space (each row stored as its non-zero dimensions and weights).
    """

    def __init__(self) -> None:
        self._directory = scratch_dir("store")  # swept by the next run if this one is killed
        self.path = self._directory / "store.sqlite3"
        try:
            self._db = _connect(self.path)
            self._db.executescript(_SCHEMA)
            _configure_fts5(self._db)
        except BaseException:  # an error or SIGINT/SIGTERM: no folder left behind
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        self._ids: list[str] = []

    # lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection and delete the database; safe to call twice. A signal that
        arrives meanwhile waits until the folder is gone (it would leave half of it)."""
        with deferred():
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
    def index_texts(
        self,
        texts: Sequence[str],
        terms_of: Callable[[Sequence[str]], Any],
        *,
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """Fill the FTS5 table: row ``i + 1`` gets ``terms_of(batch)``'s entry for ``texts[i]``.

        ``texts`` are in row order (one per stored chunk); ``terms_of`` maps a batch of texts to
        their space-separated terms (or to an Arrow list array of terms per text, as
        ``evalkit.systems.text.index_term_lists`` does). A bar counts the chunks.
        ``meanwhile`` runs here once the range processes (below) have started and before this
        process indexes its own range, for example to :meth:`add` the chunks; after it, there
        must be one chunk per text.

        From ``SHARD_MIN`` texts per core on, the rows are split into one contiguous range per
        core (``fork`` only): a forked process tokenizes and indexes each range but the first
        into an FTS5 table of its own database in this store's directory, this process indexes
        the first, and then each other range's index segments are moved into this table
        (:func:`_absorb_shard`). FTS5 costs about 1.3 microseconds of CPU per term
        occurrence and one process cannot go faster; the ranges run side by side. The result
        is the index one process builds: the same rows, terms, positions and totals, so the
        same hits and BM25 scores (``tests/test_store_shards.py``), in one segment per range.
        From ``SEGMENT_FROM`` rows on, a range's segment is written directly, in FTS5's own
        format (:mod:`evalkit.systems.fts5_segment`), not through FTS5's inserts.
        """
        if meanwhile is None and len(texts) != len(self._ids):
            raise ValueError(f"index_texts: {len(texts)} texts for {len(self._ids)} chunks")
        bounds = _shard_bounds(len(texts), MEANWHILE_SHARE if meanwhile is not None else 0.0)
        # before any fork: the range processes share the compiled segment writer
        direct = (
            max(np.diff(bounds).tolist(), default=0) >= SEGMENT_FROM and _segment_writer_ready()
        )
        with chunk_bar(len(texts)) as bar:
            first, *others = (_Rows(texts, terms_of, lo, hi, direct) for lo, hi in pairwise(bounds))
            shards = [_Shard(rows, self._directory / f"shard-{rows.lo}.sqlite3") for rows in others]
            try:
                own = 0

                def show(done: int) -> None:
                    nonlocal own
                    own += done
                    bar.update(own + sum(shard.done() for shard in shards) - bar.n)

                if meanwhile is not None:
                    meanwhile()
                    if len(texts) != len(self._ids):
                        raise ValueError(
                            f"index_texts: {len(texts)} texts for {len(self._ids)} chunks"
                        )
                with self._db:
                    _index_rows(self._db, first, show)
                for shard in shards:
                    shard.wait(lambda: show(0))
                for shard in shards:
                    if not _absorb_shard(self._db, shard.path):
                        with self._db:  # an FTS5 layout this code does not know: do it here
                            _insert_terms(self._db, shard.rows, _terms(shard.rows))
                            self._db.execute(_OPTIMIZE)
                    shard.path.unlink()
                bar.update(len(texts) - bar.n)
            finally:
                for shard in shards:
                    shard.stop()
        # FTS5 keeps the structure it read: a fresh connection reads the one written here.
        self._db.close()
        self._db = _connect(self.path)

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
        return list(map(Hit._make, ((i, round(float(score), 12)) for i, score in rows)))

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
        from scipy import sparse

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


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    for pragma in _PRAGMAS:
        db.execute(pragma)
    return db


def _configure_fts5(db: sqlite3.Connection) -> None:
    with db:
        for option, value in FTS5_LOAD:
            db.execute("INSERT INTO chunk_terms(chunk_terms, rank) VALUES (?, ?)", (option, value))


@dataclass(frozen=True)
class _Rows:
    """Rows ``lo + 1 .. hi`` of an index: their texts ``texts[lo:hi]``, how to tokenize them,
    and whether their segments may be written directly (the compiled writer is ready)."""

    texts: Sequence[str]
    terms_of: Callable[[Sequence[str]], Any]
    lo: int
    hi: int
    direct: bool = False


FAST_INDEX_NOTICE: Final = (
    "evalkit: this index is built with SQLite FTS5's own inserts; "
    "pip install 'evalkit[fast-index]' (Numba) builds indexes this large several times faster"
)
"""The one line logged (``evalkit.systems``, WARNING) when a large index has no Numba."""


@functools.cache
def _segment_writer_ready() -> bool:
    """Whether the compiled segment writer (``evalkit.systems.fts5_writer``, the ``fast-index``
    extra) can run here. Without Numba, FTS5's inserts build the same index, and
    :data:`FAST_INDEX_NOTICE` is logged once per process."""
    try:
        from evalkit.systems import fts5_writer  # imports Numba
    except ImportError:
        logging.getLogger("evalkit.systems").warning(FAST_INDEX_NOTICE)
        return False
    return fts5_writer.compile_writer()


def _terms(rows: _Rows, done: Callable[[int], None] | None = None) -> Any:
    """The terms of ``rows``, tokenized ``BATCH`` at a time, calling ``done`` with each count:
    strings, or an Arrow list array where ``terms_of`` gives those
    (``evalkit.systems.text.index_term_lists``)."""
    parts = []
    for start in range(rows.lo, rows.hi, BATCH):
        stop = min(start + BATCH, rows.hi)
        parts.append(rows.terms_of(rows.texts[start:stop]))
        if done is not None:
            done(stop - start)
    if all(isinstance(part, list) for part in parts):
        return list(itertools.chain.from_iterable(parts))
    import pyarrow as pa  # imported on use, as in evalkit.fixtures.records

    return pa.concat_arrays(parts)


def _strings(terms: Any) -> list[str]:
    """``_terms``' result as one space-separated string per row."""
    if isinstance(terms, list):
        return terms
    import pyarrow as pa
    import pyarrow.compute as pc

    joined: list[str] = pc.binary_join(terms, pa.scalar(" ", pa.large_string())).to_pylist()
    return joined


def _insert_terms(db: sqlite3.Connection, rows: _Rows, terms: Any) -> None:
    """Insert ``terms`` (those of ``rows``, see :func:`_terms`) through FTS5, ``BATCH`` at a
    time."""
    terms = _strings(terms)
    for start in range(0, len(terms), BATCH):
        stop = min(start + BATCH, len(terms))
        db.executemany(
            "INSERT INTO chunk_terms(rowid, terms) VALUES (?, ?)",
            zip(range(rows.lo + start + 1, rows.lo + stop + 1), terms[start:stop], strict=True),
        )


def _index_rows(
    db: sqlite3.Connection, rows: _Rows, done: Callable[[int], None] | None = None
) -> None:
    """Index ``rows`` into ``db``'s ``chunk_terms``: as new segments of at most
    ``SEGMENT_ROWS`` rows each, built directly (:mod:`evalkit.systems.fts5_segment`), from
    ``SEGMENT_FROM`` rows on; else, or for a token FTS5 would cut or an FTS5 layout
    :func:`_fts5_records` does not know, through FTS5's own inserts and one ``optimize``."""
    terms = _terms(rows, done)
    records = _fts5_records(db, "main") if rows.direct else None
    if records is None or rows.hi - rows.lo < SEGMENT_FROM or fts5_segment.has_cut_token(terms):
        _insert_terms(db, rows, terms)
        # One merge of all segments into one: a single segment is the fastest to query.
        db.execute(_OPTIMIZE)
        return
    totals, (cookie, write_counter, levels) = records
    free = _free_segment_ids(levels)
    pgsz = fts5_segment.page_size(db, "chunk_terms")
    for lo in range(0, len(terms), SEGMENT_ROWS):
        block = terms[lo : lo + SEGMENT_ROWS]
        segment = fts5_segment.encode_segment(block, rows.lo + lo + 1, pgsz)
        segment_id = next(free)
        fts5_segment.write_segment(
            db, "chunk_terms", segment, segment_id=segment_id, first_rowid=rows.lo + lo + 1
        )
        if segment.pages:  # rows without any token add their sizes and count only
            if not levels:
                levels.append((0, []))
            levels[0][1].append((segment_id, 1, len(segment.pages)))
        totals = _added(totals, [len(block), segment.tokens])
        write_counter += 1
    _write_records(db, totals, (cookie, write_counter, levels))


def _shard_bounds(count: int, lighter_first: float = 0.0) -> list[int]:
    """``[0, ..., count]``: the row ranges :meth:`ChunkStore.index_texts` indexes side by side,
    one per core with at least ``SHARD_MIN`` rows each (one range where no helper can be
    forked, :func:`~evalkit.forking.can_fork_helpers`). ``lighter_first``: the share of its
    rows the first range (this process's) leaves to the others, which share them equally."""
    shards = min(forking.usable_cores(), count // SHARD_MIN)
    if shards < 2 or not forking.can_fork_helpers():
        return [0, count]
    first = round(count / shards * (1 - lighter_first))
    return [0] + [first + (count - first) * i // (shards - 1) for i in range(shards)]


class _Shard:
    """A forked process indexing ``rows`` into an FTS5 table of its own database at ``path``."""

    def __init__(self, rows: _Rows, path: Path) -> None:
        self.rows, self.path = rows, path
        self._counter: Synchronized[int] = multiprocessing.get_context("fork").Value("q", 0)
        # Forked: the child has the texts and ``terms_of`` already; nothing is pickled to it.
        what = f"indexing rows {rows.lo + 1}-{rows.hi}"
        self._call = forking.ForkedCall(_build_shard, rows, path, self._counter, what=what)

    def done(self) -> int:
        """Rows indexed so far."""
        return int(self._counter.value)

    def wait(self, tick: Callable[[], None]) -> None:
        """Wait for the shard, calling ``tick`` about every 0.2 s; raise what it raised."""
        self._call.result(tick)

    def stop(self) -> None:
        """End the process if it still runs (after an error here)."""
        self._call.close()


def _build_shard(rows: _Rows, path: Path, counter: Synchronized[int]) -> None:
    """In a forked :class:`_Shard`: index ``rows`` into a new database at ``path`` (the FTS5
    table alone, with the store's settings)."""

    def done(count: int) -> None:
        with counter.get_lock():
            counter.value += count

    db = _connect(path)
    db.execute(_FTS5_TABLE)
    _configure_fts5(db)
    with db:
        _index_rows(db, rows, done)
    db.close()


# FTS5's records (``fts5_index.c``): %_data row 1 holds the averages (varints: the number of
# rows, then each column's number of tokens), row 10 the structure (a 4-byte cookie, then
# varints: levels, segments, write counter; per level: segments being merged, segments; per
# segment: its ID, first and last leaf page). A segment's pages are the %_data rows whose ID
# has the segment ID above bit 37, and its terms the %_idx rows of its ``segid``.
_AVERAGES_ROW, _STRUCTURE_ROW = 1, 10
_SEGMENT_SHIFT = fts5_segment.SEGMENT_SHIFT
_FTS5_VERSION = 4  # %_config's 'version' for that layout


def _absorb_shard(db: sqlite3.Connection, path: Path) -> bool:
    """Move the FTS5 segments, row sizes and totals of the shard database at ``path`` into the
    store's own ``chunk_terms``, whose rows they do not overlap; ``False`` (nothing changed)
    when either index is not in the layout this function knows."""
    db.execute("ATTACH DATABASE ? AS shard", (str(path),))
    try:
        own, other = (_fts5_records(db, schema) for schema in ("main", "shard"))
        if own is None or other is None:
            return False
        (own_rows, own_structure), (other_rows, other_structure) = own, other
        free = _free_segment_ids(own_structure[2])
        renumbered = {
            segment[0]: next(free) for level in other_structure[2] for segment in level[1]
        }
        with db:
            for old, new in renumbered.items():
                db.execute(
                    "INSERT INTO chunk_terms_data(id, block) SELECT id + ?, block "
                    "FROM shard.chunk_terms_data WHERE id >= ? AND id < ?",
                    (
                        (new - old) << _SEGMENT_SHIFT,
                        old << _SEGMENT_SHIFT,
                        (old + 1) << _SEGMENT_SHIFT,
                    ),
                )
                db.execute(
                    "INSERT INTO chunk_terms_idx(segid, term, pgno) "
                    "SELECT ?, term, pgno FROM shard.chunk_terms_idx WHERE segid = ?",
                    (new, old),
                )
            db.execute("INSERT INTO chunk_terms_docsize SELECT * FROM shard.chunk_terms_docsize")
            cookie, write_counter, levels = own_structure
            for depth, (_, segments) in enumerate(other_structure[2]):
                while depth >= len(levels):
                    levels.append((0, []))
                levels[depth][1].extend((renumbered[s[0]], s[1], s[2]) for s in segments)
            _write_records(
                db,
                _added(own_rows, other_rows),
                (cookie, write_counter + other_structure[1], levels),
            )
        return True
    finally:
        db.execute("DETACH DATABASE shard")


_Structure = tuple[bytes, int, list[tuple[int, list[tuple[int, int, int]]]]]


def _fts5_records(db: sqlite3.Connection, schema: str) -> tuple[list[int], _Structure] | None:
    """The averages and the structure of ``schema``'s ``chunk_terms``, or ``None`` for another
    layout (another version, or the structure form of newer FTS5 tables with tombstones, which
    begins with 0xFFFFFFFF) or a structure with a merge under way."""
    version = db.execute(
        f"SELECT v FROM {schema}.chunk_terms_config WHERE k = 'version'"
    ).fetchone()
    blocks = dict(
        db.execute(
            f"SELECT id, block FROM {schema}.chunk_terms_data WHERE id IN (?, ?)",
            (_AVERAGES_ROW, _STRUCTURE_ROW),
        )
    )
    structure = blocks.get(_STRUCTURE_ROW)
    if version != (_FTS5_VERSION,) or structure is None or structure[:4] == b"\xff" * 4:
        return None
    values = _read_varints(structure[4:])
    count, _, write_counter = values[:3]
    levels, at = [], 3
    for _ in range(count):
        merging, segments = values[at : at + 2]
        at += 2
        if merging:
            return None
        level = [(values[i], values[i + 1], values[i + 2]) for i in range(at, at + 3 * segments, 3)]
        levels.append((0, level))
        at += 3 * segments
    if at != len(values):
        return None
    return _read_varints(blocks.get(_AVERAGES_ROW, b"")), (structure[:4], write_counter, levels)


def _free_segment_ids(levels: list[tuple[int, list[tuple[int, int, int]]]]) -> Iterator[int]:
    """The segment IDs (1-65535) no segment of ``levels`` uses, in increasing order."""
    used = {segment[0] for _, segments in levels for segment in segments}
    return (n for n in range(1, 65536) if n not in used)


def _added(totals: list[int], more: list[int]) -> list[int]:
    """Two averages records' values summed (a fresh table's record is empty)."""
    return [a + b for a, b in zip(totals or [0] * len(more), more, strict=True)]


def _write_records(db: sqlite3.Connection, totals: list[int], structure: _Structure) -> None:
    """Write ``chunk_terms``' averages (``totals``) and structure records."""
    cookie, write_counter, levels = structure
    db.executemany(
        "INSERT OR REPLACE INTO chunk_terms_data(block, id) VALUES (?, ?)",
        [
            (_varints(totals), _AVERAGES_ROW),
            (_structure_record(cookie, write_counter, levels), _STRUCTURE_ROW),
        ],
    )


def _structure_record(
    cookie: bytes, write_counter: int, levels: list[tuple[int, list[tuple[int, int, int]]]]
) -> bytes:
    values = [len(levels), sum(len(segments) for _, segments in levels), write_counter]
    for merging, segments in levels:
        values += [merging, len(segments)]
        for segment in segments:
            values += segment
    return cookie + _varints(values)


def _read_varints(data: bytes) -> list[int]:
    """SQLite's varints (big-endian groups of 7 bits, a high bit meaning "more"; a 9th byte
    gives 8 bits)."""
    values, at = [], 0
    while at < len(data):
        value = 0
        for position in range(9):
            byte = data[at]
            at += 1
            if position == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


def _varints(values: Iterable[int]) -> bytes:
    """``values`` as SQLite varints (each below 2**56, which every count and ID here is)."""
    out = bytearray()
    for value in values:
        if not 0 <= value < 1 << 56:
            raise ValueError(f"FTS5 record value out of range: {value}")
        groups, rest = [value & 0x7F], value >> 7
        while rest:
            groups.append(0x80 | (rest & 0x7F))
            rest >>= 7
        out += bytes(reversed(groups))
    return bytes(out)


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
        with deferred():  # a signal cannot fall between the store's folder and its owner
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
