"""Scoring runs larger than memory: blocks of whole queries, combined into one judged ranking.

A run source is the path of a TREC run file (plain or ``.gz``), of a Parquet file, of a
Parquet dataset (a directory of Parquet files), or a list of such files, read in that order.
:func:`stream_ranking` reads it in blocks of about ``block_rows`` rows (pyarrow's streaming CSV
reader, :mod:`pyarrow.parquet` and :mod:`pyarrow.dataset`), cut between two queries, so that a
block holds whole queries:

- **grouped runs** (each query's rows together, as TREC files list them) stream in one pass;
- **ungrouped runs** (a query whose rows come back after another query's) are noticed when the
  query comes back; the source is then read again and written to disk in ``n`` partitions of
  whole queries (ranges of the qrels' sorted query IDs, about ``block_rows`` rows each; Arrow
  IPC files through :func:`pyarrow.dataset.write_dataset`, in a temporary directory deleted
  afterwards), and each partition is judged on its own. A query keeps its rows' order.

Each block is judged by the in-memory engine (:func:`evalkit.measures.ranking.judged_ranking`)
against the qrels of its queries. What a block leaves is a :class:`JudgedPiece`: its queries'
retrieved counts and the position and grade of each retrieved doc the qrels judge, a few arrays
no longer than the block's qrels. :func:`combine_pieces` puts the pieces together into the
very :class:`~evalkit.measures.judged.JudgedRanking` the in-memory path builds (same arrays,
same order), and the kernels run once on it, so every value is identical to the in-memory
path, bit for bit, including the kernels that take running sums across queries. Memory is
bounded by one block (about ``block_rows`` rows), the qrels and the pieces (at most one entry
per qrels row); the README states the bound measured by ``benchmarks/bench_scale.py``.

The Dask path (:mod:`evalkit.run.distributed`) judges partitions into the same pieces on the
workers and combines them here.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from evalkit._arrays import IntArray
from evalkit.errors import FormatError, InputError, RunOnlyQueriesWarning
from evalkit.measures._sorting import ranges
from evalkit.measures.judged import JudgedRanking
from evalkit.measures.ranking import DEFAULT_OPTIONS, ScoreOptions, judged_ranking
from evalkit.safety.scratch import process_folder

__all__ = [
    "DEFAULT_BLOCK_ROWS",
    "JudgedPiece",
    "QrelsIndex",
    "RunFiles",
    "RunSource",
    "combine_pieces",
    "judge_block",
    "stream_ranking",
]

RunSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Any

#: Rows per block: 2 million rows (about 65 MB of TREC text) keep a streamed run's peak near
#: 0.5 GB (``benchmarks/bench_scale.py``).
DEFAULT_BLOCK_ROWS = 1 << 21
#: text per table read (a plain file is parsed on every core, in parts of 1 MB)
_TEXT_BLOCK_BYTES = 1 << 23
_PARQUET_BATCH_ROWS = 1 << 19


@dataclass(frozen=True)
class JudgedPiece:
    """The judged ranking of some whole queries, in a form pieces can be combined in.

    ``query_ids``: the queries the piece's rows rank (each with at least one row; qrels queries
    only); ``num_ret``: int64, rows per query; ``query`` (index into ``query_ids``),
    ``position`` (0-based, in the query's ranking) and ``grade``: int64, one entry per retrieved
    doc the qrels judge. ``unknown``: the IDs of the run-only queries the rows also had.
    """

    query_ids: tuple[str, ...]
    num_ret: IntArray
    query: IntArray
    position: IntArray
    grade: IntArray
    unknown: tuple[str, ...] = ()


class QrelsIndex:
    """The qrels, checked once, with each query's rows at hand (for a block's qrels), and the
    ``options`` every block of the run is ranked by."""

    def __init__(self, qrels: pd.DataFrame, options: ScoreOptions = DEFAULT_OPTIONS) -> None:
        # the qrels side of every ranking, checked (IDs, grades, pairs judged twice) once
        empty = pd.DataFrame(
            {
                "query_id": pd.Series([], dtype="str"),
                "doc_id": pd.Series([], dtype="str"),
                "score": pd.Series([], dtype="float64"),
            }
        )
        if options.ties == "given":
            empty["rank"] = pd.Series([], dtype="int64")
        self.base = judged_ranking(qrels, empty, options)
        self.options = options
        self.qrels = qrels
        self.ids = pa.array(self.base.query_ids, pa.large_string())
        codes = _codes(pa.array(qrels["query_id"], from_pandas=True), self.ids)
        self._order = np.argsort(codes, kind="stable").astype(np.int64)
        counts = np.bincount(codes, minlength=len(self.ids)).astype(np.int64)
        self._first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    @property
    def n_queries(self) -> int:
        return len(self.ids)

    def codes(self, query_ids: pa.Array | pa.ChunkedArray) -> IntArray:
        """Each ID's index in the sorted qrels query IDs (-1: a query the qrels lack)."""
        return _codes(query_ids, self.ids)

    def subset(self, codes: IntArray) -> pd.DataFrame:
        """The qrels rows of the queries ``codes`` (in qrels order within each query)."""
        lo, hi = self._first[codes], self._first[codes + 1]
        rows = ranges(lo, hi - lo)
        subset: pd.DataFrame = self.qrels.iloc[self._order[rows]]
        return subset


def _codes(values: pa.Array | pa.ChunkedArray, ids: pa.Array) -> IntArray:
    """Each value's index in ``ids`` (-1: not there)."""
    found = pc.index_in(values, value_set=ids)
    return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), np.int64)


def judge_block(
    index: QrelsIndex, run: pa.Table | pd.DataFrame, *, first_row: int = 0
) -> JudgedPiece:
    """Judge ``run``, rows of whole queries (``query_id``, ``doc_id``, ``score``[, ``rank``]),
    against the qrels of its queries, by the index's options. ``first_row``: the block's first
    row in the source, for error messages."""
    columns = run.column_names if isinstance(run, pa.Table) else list(run.columns)
    if len(run) == 0:
        return _empty_piece()
    for column in ("query_id", "doc_id", "score"):
        if column not in columns:
            raise InputError(
                f"run is missing column {column}; expected columns query_id, doc_id, score "
                f"(and rank with ties='given'), found {', '.join(map(str, columns))}"
            )
    if isinstance(run, pa.Table):
        query_ids, frame = run["query_id"], run.to_pandas()
    else:  # pandas' arrow-backed string columns convert without a copy
        query_ids, frame = _string_ids(run), run
        if query_ids is None:  # not strings: the engine raises its error for that
            judged_ranking(index.qrels, run, index.options)
            raise InputError("run.query_id must hold strings; convert it with .astype(str)")
    ids = pc.unique(query_ids)
    codes = index.codes(ids)
    known = codes >= 0
    unknown = tuple(str(v) for v in pc.filter(ids, pa.array(~known)).to_pylist())
    if not known.any():
        return replace(_empty_piece(), unknown=unknown)
    qrels = index.subset(np.sort(codes[known]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)  # counted once, by the caller
        try:
            ranking = judged_ranking(qrels, frame, index.options)
        except InputError as error:
            if not first_row:
                raise
            raise InputError(
                f"in the block of run rows from row {first_row} on (rows below count from "
                f"there): {error}"
            ) from None
    return JudgedPiece(
        query_ids=ranking.query_ids,
        num_ret=ranking.num_ret,
        query=ranking.query,
        position=ranking.position,
        grade=ranking.grade,
        unknown=unknown,
    )


def _string_ids(run: pd.DataFrame) -> pa.Array | pa.ChunkedArray | None:
    """``run.query_id`` as arrow strings, or None when it does not hold strings."""
    try:
        ids = pa.array(run["query_id"], from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if pa.types.is_dictionary(ids.type):
        ids = ids.cast(ids.type.value_type)
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        return None
    return ids


def _empty_piece() -> JudgedPiece:
    empty = np.zeros(0, dtype=np.int64)
    return JudgedPiece((), empty, empty, empty, empty)


def combine_pieces(index: QrelsIndex, pieces: Iterable[JudgedPiece]) -> JudgedRanking:
    """The judged ranking of the whole run from pieces of disjoint queries: the arrays the
    in-memory engine builds, in the same order. Warns once (RunOnlyQueriesWarning) about the
    run-only queries the pieces saw."""
    num_ret = np.zeros(index.n_queries, dtype=np.int64)
    queries, positions, grades = [], [], []
    unknown: set[str] = set()
    for piece in pieces:
        unknown.update(piece.unknown)
        if not piece.query_ids:
            continue
        codes = index.codes(pa.array(piece.query_ids, pa.large_string()))
        num_ret[codes] += piece.num_ret
        queries.append(codes[piece.query])
        positions.append(piece.position)
        grades.append(piece.grade)
    if unknown:
        listed = ", ".join(repr(q) for q in sorted(unknown)[:5])
        warnings.warn(
            f"the run has {len(unknown)} queries that the qrels do not judge (e.g. {listed}); "
            "they were ignored",
            RunOnlyQueriesWarning,
            stacklevel=3,
        )
    empty = np.zeros(0, dtype=np.int64)
    query = np.concatenate(queries) if queries else empty
    position = np.concatenate(positions) if positions else empty
    order = np.lexsort((position, query))
    return replace(
        index.base,
        num_ret=num_ret,
        query=query[order],
        position=position[order],
        grade=(np.concatenate(grades) if grades else empty)[order],
    )


# --- sources ------------------------------------------------------------------------------------


class RunFiles:
    """A run source read as arrow tables, with a progress bar's total and position."""

    def __init__(self, source: RunSource, *, rank: bool) -> None:
        if isinstance(source, str | os.PathLike):
            paths = [Path(source)]
        elif isinstance(source, Sequence) and source and not isinstance(source, bytes):
            paths = [Path(p) for p in source]
        else:
            raise InputError(
                "run must be a DataFrame, the path of a TREC run file (.gz allowed), of a "
                "Parquet file or dataset, or a list of such paths (or a Dask DataFrame); got "
                f"{type(source).__name__}"
            )
        self.paths = paths
        self.files: list[tuple[Path, str]] = []
        for path in paths:
            if path.is_dir():
                found = sorted(p for p in path.rglob("*.parquet") if p.is_file())
                if not found:
                    raise InputError(
                        f"run directory {_shown(path)} holds no .parquet file; expected a "
                        "Parquet dataset"
                    )
                self.files += [(p, "parquet") for p in found]
            elif path.suffix == ".parquet":
                self.files.append((path, "parquet"))
            else:
                self.files.append((path, "trec"))
        self.rank = rank
        self.total = sum(_size(p) for p, _ in self.files)  # bytes: the progress bar's unit
        self.unit = "B"
        self.position = 0  # bytes read (for a Parquet file: its share of rows read)
        self.rows = 0

    def no_results(self) -> FormatError:
        """The error for a source without any row (trec_eval refuses such a run)."""
        from evalkit.formats.rules import no_results_error

        given = self.paths  # as the caller named them (a directory, not its files)
        return no_results_error(
            str(given[0]) if len(given) == 1 else f"the run's {len(given)} paths"
        )

    def tables(self) -> Iterator[pa.Table]:
        from evalkit.formats.parquet import open_parquet
        from evalkit.formats.trec import stream_run

        start = 0
        for path, kind in self.files:
            size = _size(path)
            if kind == "parquet":
                what = f"run file {_shown(path)}"
                file = open_parquet(path, what)
                file_rows, read = max(file.metadata.num_rows, 1), 0
                for table in _parquet_tables(file, what, rank=self.rank):
                    read += table.num_rows
                    self.rows += table.num_rows
                    self.position = start + size * read // file_rows
                    yield table
            else:

                def moved(n: int, start: int = start) -> None:
                    self.position = start + n

                for table in stream_run(
                    path, rank=self.rank, block_size=_TEXT_BLOCK_BYTES, on_read=moved
                ):
                    self.rows += table.num_rows
                    yield table
            start += size
            self.position = start


def read_source(source: RunSource) -> pd.DataFrame:
    """A run source (a TREC run file, a Parquet file or dataset, or a list of them) read into
    memory, for what ranks an in-memory run (the diversity measures): columns ``query_id``,
    ``doc_id`` (str) and ``score`` (float64), in source order. Raises FormatError for a source
    without any row, as the streamed scoring does."""
    reader = RunFiles(source, rank=False)
    tables = [table.select(["query_id", "doc_id", "score"]) for table in reader.tables()]
    if reader.rows == 0:
        raise reader.no_results()
    frame: pd.DataFrame = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    return frame.astype({"query_id": "str", "doc_id": "str", "score": "float64"})


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _shown(path: Path) -> str:
    from evalkit.safety.output import shown_path

    return shown_path(str(path))


_RUN_TYPES: Final = {
    "query_id": pa.large_string(),
    "doc_id": pa.large_string(),
    "score": pa.float64(),
    "rank": pa.int64(),
}


def _parquet_tables(file: Any, what: str, *, rank: bool) -> Iterator[pa.Table]:
    """The tables of the open Parquet run file ``file`` (``what`` names it in errors)."""
    from evalkit.formats.parquet import parquet_batches

    schema = file.schema_arrow
    missing = [c for c in ("query_id", "doc_id", "score") if c not in schema.names]
    if missing:
        raise InputError(
            f"{what} is missing column(s) {', '.join(missing)}; expected "
            "query_id, doc_id, score (and rank with ties='given')"
        )
    for column in ("query_id", "doc_id"):
        kind = schema.field(column).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise InputError(
                f"{what}: column {column} holds {kind}, expected strings; write the IDs as strings"
            )
    columns = [
        "query_id",
        "doc_id",
        "score",
        *(["rank"] if rank and "rank" in schema.names else []),
    ]
    # the types a TREC text file gives: files of one dataset may store their IDs as string,
    # large_string or dictionary and their scores as float32, and they are concatenated
    common = pa.schema([(name, _RUN_TYPES[name]) for name in columns])
    yield from parquet_batches(
        file,
        what,
        lambda batch: pa.Table.from_batches([batch]).cast(common),
        batch_size=_PARQUET_BATCH_ROWS,
        columns=columns,
    )


# --- streaming ----------------------------------------------------------------------------------


class _Ungrouped(Exception):
    """A query's rows came back after another query's: the run is not grouped by query."""


def stream_ranking(
    index: QrelsIndex,
    source: RunSource,
    *,
    block_rows: int = DEFAULT_BLOCK_ROWS,
    progress: bool | None = None,
    tmp_dir: str | os.PathLike[str] | None = None,
) -> JudgedRanking:
    """The judged ranking of a run source (module docs), read in blocks of whole queries and
    ranked by the index's options."""
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise InputError(f"block_rows must be a positive integer, got {block_rows!r}")
    given = index.options.ties == "given"
    reader = RunFiles(source, rank=given)
    bar = _bar(reader, progress, "scoring run")
    try:
        ranking = combine_pieces(index, _grouped_pieces(index, reader, bar, block_rows))
        if reader.rows == 0:
            raise reader.no_results()
        return ranking
    except _Ungrouped:
        rows, position = reader.rows, reader.position
    finally:
        bar.close()
    # the rows per unit of the source seen so far tell about how many rows it has
    estimate = rows if position <= 0 else math.ceil(rows * reader.total / position)
    again = RunFiles(source, rank=given)
    bar = _bar(again, progress, "partitioning run")
    try:
        pieces = _partitioned_pieces(
            index,
            reader=again,
            bar=bar,
            block_rows=block_rows,
            estimate=estimate,
            tmp_dir=tmp_dir,
        )
        return combine_pieces(index, pieces)
    finally:
        bar.close()


def _bar(reader: RunFiles, progress: bool | None, what: str) -> tqdm[Any]:
    show = sys.stderr.isatty() if progress is None else progress
    return tqdm(
        total=reader.total,
        unit=reader.unit,
        unit_scale=True,
        desc=what,
        disable=not show,
        delay=0 if progress else 1.0,
        file=sys.stderr,
        leave=False,
    )


def _advance(bar: tqdm[Any], reader: RunFiles) -> None:
    if reader.position > bar.n:
        bar.update(reader.position - bar.n)


def _grouped_pieces(
    index: QrelsIndex,
    reader: RunFiles,
    bar: tqdm[Any],
    block_rows: int,
) -> Iterator[JudgedPiece]:
    """Pieces of blocks cut between queries; raises _Ungrouped when a query comes back."""
    seen = np.zeros(index.n_queries, dtype=bool)
    pending: list[pa.Table] = []
    pending_rows = 0
    first_row = 0

    def judged(block: pa.Table) -> JudgedPiece:
        piece = judge_block(index, block, first_row=first_row)
        codes = index.codes(pa.array(piece.query_ids, pa.large_string()))
        if seen[codes].any():
            raise _Ungrouped
        seen[codes] = True
        return piece

    for table in reader.tables():
        pending.append(table)
        pending_rows += table.num_rows
        _advance(bar, reader)
        if pending_rows < block_rows:
            continue
        cut = _last_query_start(pending)
        if cut == 0:
            continue  # one query so far: it grows until another one starts
        block = pa.concat_tables(pending)
        yield judged(block.slice(0, cut))
        first_row += cut
        pending, pending_rows = [block.slice(cut)], block.num_rows - cut
    if pending_rows:
        yield judged(pa.concat_tables(pending))


def _last_query_start(tables: list[pa.Table]) -> int:
    """The first row (in the concatenation of ``tables``) of the last run of equal query IDs;
    only the tables that run covers are compared."""
    last = tables[-1]["query_id"][tables[-1].num_rows - 1]
    end = int(sum(t.num_rows for t in tables))
    for table in reversed(tables):
        end -= int(table.num_rows)
        same = pc.equal(table["query_id"], last).to_numpy(zero_copy_only=False)
        other = np.flatnonzero(~same)
        if other.size:
            return end + int(other[-1]) + 1
    return 0


def _partitioned_pieces(
    index: QrelsIndex,
    *,
    reader: RunFiles,
    bar: tqdm[Any],
    block_rows: int,
    estimate: int,
    tmp_dir: str | os.PathLike[str] | None,
) -> Iterator[JudgedPiece]:
    """Write the rows in partitions of whole queries on disk, then judge each partition."""
    import pyarrow.dataset as ds

    n_parts = max(1, min(index.n_queries, math.ceil(1.25 * estimate / block_rows)))
    unknown: set[str] = set()
    tables = reader.tables()
    first = next(tables, None)
    if first is None:
        return
    names = [c for c in ("query_id", "doc_id", "score", "rank") if c in first.column_names]
    types = {"query_id": pa.large_string(), "doc_id": pa.large_string(), "score": pa.float64()}
    schema = pa.schema(
        [
            *[(name, types.get(name, pa.int64())) for name in names],
            ("_row", pa.int64()),
            ("_part", pa.int32()),
        ]
    )

    def tagged() -> Iterator[pa.RecordBatch]:
        row = 0
        for table in itertools.chain([first], tables):
            codes = index.codes(table["query_id"])
            known = codes >= 0
            if not known.all():
                ids = pc.unique(pc.filter(table["query_id"], pa.array(~known)))
                unknown.update(str(v) for v in ids.to_pylist())
            rows = np.arange(row, row + table.num_rows, dtype=np.int64)
            row += table.num_rows
            part = (codes * n_parts // max(index.n_queries, 1)).astype(np.int32)
            columns = [table[name].cast(schema.field(name).type) for name in names]
            out = pa.table([*columns, rows, part], schema=schema).filter(pa.array(known))
            _advance(bar, reader)
            yield from out.to_batches()

    # by default in this process's temporary folder, which the next run sweeps after a kill
    where = tmp_dir if tmp_dir is not None else process_folder()
    with tempfile.TemporaryDirectory(prefix="evalkit-partitions-", dir=where) as tmp:
        ds.write_dataset(
            tagged(),
            tmp,
            schema=schema,
            format="ipc",
            partitioning=ds.partitioning(pa.schema([("_part", pa.int32())])),
            existing_data_behavior="overwrite_or_ignore",
            preserve_order=True,
            max_partitions=max(n_parts, 1024),
        )
        for part in range(n_parts):
            folder = Path(tmp) / str(part)
            if not folder.is_dir():
                continue
            table = ds.dataset(folder, format="ipc").to_table()
            rows = table["_row"].to_numpy()
            if rows.size > 1 and not bool(np.all(rows[1:] > rows[:-1])):
                table = table.take(pa.array(np.argsort(rows, kind="stable")))
            yield judge_block(index, table.drop_columns(["_row"]))
    if unknown:
        yield replace(_empty_piece(), unknown=tuple(sorted(unknown)))
