"""TREC qrels and run files: readers and writers.

A qrels line is ``query_id iteration doc_id relevance``; a run line is
``query_id Q0 doc_id rank score run_id``, and may carry more fields after ``run_id``, which are
ignored (as trec_eval 10.0 reads it, e.g. the lines of its ``test/results.trunc``). Fields
are separated by runs of the ASCII whitespace C's ``isspace`` knows (space, tab, CR, vertical
tab, form feed; so CRLF files read as trec_eval reads them, and a no-break space stays inside
an ID); empty lines and lines whose first field starts with ``#`` are skipped; a ``.gz`` file
is decompressed. IDs are always read as strings (``"001"`` stays ``"001"``).

Well-formed files take a fast path (pyarrow's multi-threaded CSV reader); anything else is
parsed line by line, which also produces the :class:`~evalkit.errors.FormatError` naming the
file and line of the first malformed line. Error messages never quote the file's content.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from evalkit.errors import FormatError, InputError
from evalkit.formats._lines import (
    PathLike,
    checked_file,
    csv_options,
    read_fields,
    text_blocks,
)
from evalkit.formats.rules import require_columns
from evalkit.formats.trec_arrays import is_iteration_field, last_run_id

__all__ = [
    "last_run_id",
    "read_qrels",
    "read_run",
    "stream_run",
    "text_blocks",
    "write_qrels",
    "write_run",
]

_QRELS_FIELDS = ("query_id", "iteration", "doc_id", "relevance")
_RUN_FIELDS = ("query_id", "q0", "doc_id", "rank", "score", "run_id")


def read_qrels(path: PathLike) -> pd.DataFrame:
    """Read a TREC qrels file into columns ``query_id`` (str), ``doc_id`` (str), ``relevance``
    (int64), in file order. Raises FormatError (file, line) on a malformed line, a grade
    outside int64, and on a file without any judgment (empty, or only comments and blank
    lines): nothing could be scored against it."""
    qrels = read_fields(
        Path(path),
        _QRELS_FIELDS,
        {"query_id": pa.large_string(), "doc_id": pa.large_string(), "relevance": pa.int64()},
    )
    if qrels.empty:
        raise FormatError(
            "holds no judgments (the file is empty, or only comments and blank lines); "
            "expected lines 'query_id iteration doc_id relevance'",
            file=str(path),
        )
    return qrels


def read_run(path: PathLike, *, rank: bool = True) -> pd.DataFrame:
    """Read a TREC run file into columns ``query_id`` (str), ``doc_id`` (str), ``score``
    (float64) and, unless ``rank=False``, ``rank`` (int64, the file's rank column as written),
    in file order.

    trec_eval ignores the rank column (it ranks by score); so does :func:`evalkit.score` unless
    ``ties="given"``. ``rank=False`` leaves the field unread and unchecked, which reads large
    files about 15% faster.
    Raises FormatError (file, line) on a malformed line or a NaN score.
    """
    columns = {"query_id": pa.large_string(), "doc_id": pa.large_string(), "score": pa.float64()}
    if rank:
        columns["rank"] = pa.int64()
    frame = read_fields(Path(path), _RUN_FIELDS, columns, extra_fields=True)
    _check_column_order(frame, path)
    return frame


def _check_column_order(run: pd.DataFrame, path: PathLike) -> None:
    """A FormatError naming the column when the doc ID column holds what belongs in the second
    column (``Q0``) on every line: the columns are out of order (``query_id doc_id Q0 ...``),
    which would otherwise read as one document listed many times."""
    if len(run) < 2:
        return
    first = str(run["doc_id"].iat[0])
    if is_iteration_field(first) and bool((run["doc_id"] == first).all()):
        raise FormatError(
            f"column 3 (doc_id) holds {first!r} on every line, which belongs in column 2; the "
            "columns look out of order: a TREC run line is 'query_id Q0 doc_id rank score "
            "run_id'",
            file=os.fspath(path),
        )


def write_qrels(qrels: pd.DataFrame, path: PathLike) -> None:
    """Write ``qrels`` (query_id, doc_id, relevance) as a TREC qrels file (``.gz`` compresses)."""
    require_columns(qrels, "qrels", ("query_id", "doc_id", "relevance"))
    relevance = qrels["relevance"].to_numpy()
    if relevance.dtype.kind not in "iu":
        raise InputError(
            f"qrels.relevance must hold integers, found dtype {qrels['relevance'].dtype}"
        )
    table = pa.table(
        {
            "query_id": _writable_ids(qrels, "query_id", "qrels"),
            "iteration": pa.array(np.zeros(len(qrels), dtype=np.int64)),
            "doc_id": _writable_ids(qrels, "doc_id", "qrels"),
            "relevance": pa.array(relevance.astype(np.int64)),
        }
    )
    _write(table, Path(path))


def write_run(run: pd.DataFrame, path: PathLike, *, run_id: str = "evalkit") -> None:
    """Write ``run`` (query_id, doc_id, score[, rank]) as a TREC run file (``.gz`` compresses).

    Rows are written by query ID, then rank. Without a ``rank`` column the rank is the position
    by score descending, then doc ID descending (trec_eval's order).
    """
    require_columns(run, "run", ("query_id", "doc_id", "score"))
    if not run_id or any(c.isspace() for c in run_id):
        raise InputError("run_id must be a non-empty string without whitespace")
    scores = run["score"].to_numpy()
    if scores.dtype.kind not in "iuf":
        raise InputError(f"run.score must be numeric, found dtype {run['score'].dtype}")
    frame = pd.DataFrame(
        {
            "query_id": _writable_ids(run, "query_id", "run").to_pandas(),
            "doc_id": _writable_ids(run, "doc_id", "run").to_pandas(),
            "score": scores.astype(np.float64),
        }
    )
    if "rank" in run:
        ranks = run["rank"].to_numpy()
        if ranks.dtype.kind not in "iu":
            raise InputError(f"run.rank must hold integers, found dtype {run['rank'].dtype}")
        frame["rank"] = ranks.astype(np.int64)
        frame = frame.sort_values(["query_id", "rank"], kind="stable")
    else:
        frame = frame.sort_values(
            ["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable"
        )
        frame["rank"] = frame.groupby("query_id", sort=False).cumcount().to_numpy() + 1
    table = pa.table(
        {
            "query_id": pa.array(frame["query_id"], type=pa.string()),
            "q0": pa.array(np.full(len(frame), "Q0")),
            "doc_id": pa.array(frame["doc_id"], type=pa.string()),
            "rank": pa.array(frame["rank"].to_numpy()),
            "score": pa.array(frame["score"].to_numpy()),
            "run_id": pa.array(np.full(len(frame), run_id)),
        }
    )
    _write(table, Path(path))


def stream_run(
    path: PathLike,
    *,
    rank: bool = True,
    block_size: int = 1 << 20,
    on_read: Callable[[int], None] | None = None,
) -> Iterator[pa.Table]:
    """The rows of a TREC run file of any size (plain or ``.gz``), as arrow tables of about
    ``block_size`` bytes of text each, in file order: columns ``query_id``, ``doc_id``
    (large_string), ``score`` (float64) and, unless ``rank=False``, ``rank`` (int64).

    A plain file is read ``block_size`` bytes at a time, cut after its last line end, and each
    block is parsed by pyarrow's multi-threaded CSV reader in parts of at most 1 MB, on every
    core (:func:`text_blocks`); a ``.gz`` file goes through pyarrow's streaming CSV reader, which
    parses on one thread. Either way memory does not grow with the file but with
    ``block_size`` (a block's text and its table, plus the streaming reader's few dozen blocks
    for ``.gz``). A file these readers cannot take (fields separated by a mix of spaces and
    tabs, comment lines, more than six fields, a NaN score, a malformed line) is read from the
    first such block on by :func:`read_run`'s line parser, which reads the whole file: the same
    rows come out, but that file takes :func:`read_run`'s memory, and a malformed line raises
    its FormatError (file, line). ``on_read(n)``: told the bytes of the file read so far
    (compressed bytes for ``.gz``) after each table.
    """
    file = checked_file(path)
    keep = {"query_id": pa.large_string(), "doc_id": pa.large_string(), "score": pa.float64()}
    if rank:
        keep["rank"] = pa.int64()
    done = 0  # rows yielded
    for delimiter in (" ", "\t"):
        options = csv_options(_RUN_FIELDS, keep, delimiter, min(block_size, _PART_BYTES))
        tables = (
            _gzip_tables(file, options, on_read)
            if file.suffix == ".gz"
            else _plain_tables(file, options, block_size, on_read)
        )
        try:
            for table in tables:
                if pc.any(pc.starts_with(table["query_id"], "#")).as_py() or (
                    pc.any(pc.is_nan(table["score"])).as_py()
                ):
                    break
                done += table.num_rows
                yield table
            else:
                if done:
                    return
        except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
            pass
        finally:
            tables.close()
        if done:
            break  # some rows came out with this delimiter: the line parser takes the rest
    whole = read_fields(file, _RUN_FIELDS, keep, extra_fields=True)
    table = pa.Table.from_pandas(whole, preserve_index=False).slice(done)
    if on_read is not None:
        on_read(file.stat().st_size)
    if table.num_rows:
        yield table


_PART_BYTES = 1 << 20  # the CSV reader's block: a streamed text block is parsed in such parts


def _gzip_tables(
    file: Path, options: dict[str, Any], on_read: Callable[[int], None] | None
) -> Generator[pa.Table, None, None]:
    """The tables of pyarrow's streaming CSV reader over the decompressed ``.gz`` file."""
    raw = pa.OSFile(str(file), "rb")
    stream = pa.CompressedInputStream(raw, "gzip")
    try:
        reader = pacsv.open_csv(stream, **options)
        for batch in reader:
            if batch.num_rows:
                if on_read is not None:
                    on_read(raw.tell())
                yield pa.Table.from_batches([batch])
    finally:
        stream.close()


def _plain_tables(
    file: Path, options: dict[str, Any], block_size: int, on_read: Callable[[int], None] | None
) -> Generator[pa.Table, None, None]:
    """The tables of the plain file's text blocks (:func:`text_blocks`), each parsed by
    pyarrow's multi-threaded CSV reader."""
    for block, read in text_blocks(file, block_size):
        table = pacsv.read_csv(pa.BufferReader(block), **options)
        if table.num_rows:
            if on_read is not None:
                on_read(read)
            yield table


# --- writing -----------------------------------------------------------------------------------


def _writable_ids(frame: pd.DataFrame, column: str, what: str) -> pa.Array:
    series = frame[column]
    if series.isna().any():
        raise InputError(f"{what}.{column} has missing values; every ID must be a string")
    try:
        array = pa.array(series, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise InputError(
            f"{what}.{column} must hold strings, found dtype {series.dtype}; "
            "convert it with .astype(str)"
        ) from None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    bad = pc.or_(pc.equal(pc.binary_length(array), 0), pc.match_substring_regex(array, r"\s"))
    if pc.any(bad).as_py():
        index = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{what}.{column} at row {index} is empty or contains whitespace "
            f"({array[index].as_py()!r}); TREC files separate fields by whitespace"
        )
    return array


def _write(table: pa.Table, path: Path) -> None:
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    if path.suffix == ".gz":
        with pa.CompressedOutputStream(str(path), "gzip") as stream:
            pacsv.write_csv(table, stream, options)
    else:
        pacsv.write_csv(table, str(path), options)
