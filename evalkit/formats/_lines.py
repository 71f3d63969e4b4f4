"""Reading whitespace-separated text files of fixed fields: TREC qrels and runs, subtopic qrels.

The shared reader of :mod:`evalkit.formats.trec` and :mod:`evalkit.formats.subtopics` (and the
byte reader of :mod:`evalkit.formats.beir`): fields are separated by runs of the ASCII
whitespace C's ``isspace`` knows, empty lines and lines whose first field starts with ``#`` are
skipped, a ``.gz`` file is decompressed, IDs are read as strings. Well-formed files take a fast
path (pyarrow's multi-threaded CSV reader); anything else is parsed line by line, which also
produces the :class:`~evalkit.errors.FormatError` naming the file and line of the first
malformed line. Error messages never quote the file's content.
"""

from __future__ import annotations

import codecs
import gzip
import math
import os
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from evalkit.errors import FormatError, InputFileError
from evalkit.safety.inputs import (
    check_line_lengths,
    check_regular_file,
    read_from,
    read_input_bytes,
)

__all__ = [
    "PathLike",
    "checked_file",
    "csv_options",
    "fast_parse",
    "load_bytes",
    "read_fields",
    "slow_parse",
    "text_blocks",
]

PathLike = str | os.PathLike[str]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def checked_file(path: PathLike) -> Path:
    """``path`` as a Path when it is (a symlink to) a regular file; FormatError otherwise (a
    FIFO or device would block pyarrow's reader)."""
    file = Path(path)
    try:
        check_regular_file(file)
    except InputFileError as error:
        missing = error.reason == "does not exist"
        reason = f"file not found{read_from(path)}" if missing else error.reason
        raise FormatError(reason, file=os.fspath(path)) from None
    return file


def read_fields(
    path: Path,
    fields: tuple[str, ...],
    keep: dict[str, pa.DataType],
    *,
    extra_fields: bool = False,
) -> pd.DataFrame:
    """The ``keep`` columns (of ``fields``, each line's fields in order) of the file at
    ``path``, in file order, with their types (large strings as pandas ``str``).
    ``extra_fields``: a line may have more fields than ``fields`` (the rest are ignored)."""
    checked_file(path)
    # the parsed table is passed on, not kept here: _frame lets its columns go one by one
    frame = _frame(_parsed(path, fields, keep, extra_fields=extra_fields), keep)
    for name, dtype in keep.items():
        if pa.types.is_large_string(dtype) and str(frame[name].dtype) != "str":
            frame[name] = frame[name].astype("str")
    return frame


def _parsed(
    path: Path, fields: tuple[str, ...], keep: dict[str, pa.DataType], *, extra_fields: bool
) -> pa.Table:
    table = fast_parse(path, fields, keep)
    if table is None:
        table = slow_parse(path, load_bytes(path), fields, keep, extra_fields=extra_fields)
    return table.select(list(keep))


def _frame(table: pa.Table, keep: dict[str, pa.DataType]) -> pd.DataFrame:
    """The ``keep`` columns of ``table`` (which the caller no longer holds) as a frame, each
    column's arrow memory let go once converted: a number column is copied into its numpy
    array chunk by chunk, each chunk freed once copied (so the column is never held twice, as
    ``to_pandas`` holds it while it joins the chunks); the string columns (pandas' arrow-backed
    ``str``) are not copied. The memory the pool holds free goes back to the system: arrow's
    allocator keeps it, and what comes next (the ranking: numpy) does not allocate from it."""
    pool = pa.default_memory_pool()
    numbers: dict[str, npt.NDArray[Any]] = {}
    for name, dtype in keep.items():
        if pa.types.is_large_string(dtype):
            continue
        chunks = list(table.column(name).chunks)
        table = table.drop_columns([name])
        out = np.empty(sum(len(chunk) for chunk in chunks), dtype=dtype.to_pandas_dtype())
        at = 0
        chunks.reverse()
        while chunks:
            chunk = chunks.pop()
            out[at : at + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
            at += len(chunk)
            del chunk
            pool.release_unused()
        numbers[name] = out
    strings = table.to_pandas(self_destruct=True)
    del table
    pool.release_unused()
    columns = {name: numbers[name] if name in numbers else strings[name] for name in keep}
    return pd.DataFrame(columns, copy=False)


def load_bytes(path: Path) -> bytes:
    """The bytes of the file (``.gz`` decompressed); FormatError when it cannot be read, holds
    a line over :data:`~evalkit.safety.inputs.MAX_LINE_BYTES` or is not valid gzip."""
    try:
        check_line_lengths(path)  # one huge line: an error at bounded memory, not a 2 GB read
        data = read_input_bytes(path)
    except InputFileError as error:
        raise FormatError(error.reason, file=str(path)) from None
    if path.suffix != ".gz":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise FormatError(
            f"cannot be decompressed ({type(error).__name__}); expected a gzip file",
            file=str(path),
        ) from None


def csv_options(
    fields: tuple[str, ...], keep: dict[str, pa.DataType], delimiter: str, block_size: int
) -> dict[str, Any]:
    """pyarrow CSV options for whitespace-separated TREC lines: no quoting, no nulls, only the
    ``keep`` columns with their types."""
    return {
        "read_options": pacsv.ReadOptions(column_names=list(fields), block_size=block_size),
        "parse_options": pacsv.ParseOptions(
            delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False
        ),
        "convert_options": pacsv.ConvertOptions(
            column_types=keep,
            include_columns=list(keep),
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }


def fast_parse(
    path: Path, fields: tuple[str, ...], keep: dict[str, pa.DataType]
) -> pa.Table | None:
    """pyarrow's multi-threaded CSV reader; a plain file is read in text blocks of whole lines
    (:func:`text_blocks`, 32 MB each), a ``.gz`` file streamed and decompressed.

    Tried with a space, then a tab delimiter; None when neither reads the whole file cleanly
    (mixed whitespace, comments, a malformed line, a NaN score, an empty file): the line parser
    then reads it or reports the exact line.
    """
    for delimiter in (" ", "\t"):
        try:
            table = _read_table(path, csv_options(fields, keep, delimiter, _PART_BYTES))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
            continue
        if table is None or table.num_rows == 0:
            return None
        # a comment line with the right number of fields parses as data: leave it to the
        # line parser, like NaN scores (rejected there with their line number)
        if pc.any(pc.starts_with(table["query_id"], "#")).as_py():
            return None
        if "score" in keep and pc.any(pc.is_nan(table["score"])).as_py():
            return None
        return table
    return None


_BLOCK_BYTES = 1 << 25  # text read at a time by fast_parse: the whole file is never held
_PART_BYTES = 1 << 23  # the CSV reader's block (one table chunk each), parsed one per core


def _read_table(path: Path, options: dict[str, Any]) -> pa.Table | None:
    """The file parsed with ``options`` (None: no text at all). Reading a plain file block by
    block holds one block of text besides the table, not the file's text and its parse."""
    if path.suffix == ".gz":
        return pacsv.read_csv(str(path), **options)
    tables = []
    for block, _ in text_blocks(path, _BLOCK_BYTES):
        tables.append(pacsv.read_csv(pa.BufferReader(block), **options))
        del block
        pa.default_memory_pool().release_unused()
    return pa.concat_tables(tables) if tables else None


def slow_parse(
    path: Path,
    data: bytes,
    fields: tuple[str, ...],
    keep: dict[str, pa.DataType],
    *,
    extra_fields: bool = False,
) -> pa.Table:
    """Line-by-line parser: any whitespace, comments; raises FormatError at the first bad line.

    ``extra_fields``: a line may have more fields than ``fields`` (the rest are ignored)."""
    wanted = [(i, name, keep[name]) for i, name in enumerate(fields) if name in keep]
    columns: dict[str, list[object]] = {name: [] for name in keep}
    layout = " ".join(fields)
    data = data.removeprefix(codecs.BOM_UTF8)  # as pyarrow's reader (the fast path) skips it
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError("is not valid UTF-8", file=str(path), line=number) from None
        # fields are separated by C's isspace() characters only (space, \t, \n, \v, \f, \r),
        # as trec_eval splits them: a no-break space or U+2003 inside an ID stays in the ID
        parts = [part.decode("utf-8") for part in raw.split()]
        if not parts or parts[0].startswith("#"):
            if parts and not extra_fields and not raw.startswith(b"#"):
                raise FormatError(
                    "is an indented comment: trec_eval reads a qrels line whose '#' is not in "
                    "the first column as a judgment (or refuses it as malformed); start the "
                    "comment at the first column",
                    file=str(path),
                    line=number,
                )
            continue
        if len(parts) != len(fields) and not (extra_fields and len(parts) > len(fields)):
            or_more = " or more" if extra_fields else ""
            raise FormatError(
                f"expected {len(fields)} whitespace-separated fields ({layout}){or_more}, "
                f"found {len(parts)}",
                file=str(path),
                line=number,
            )
        for i, name, dtype in wanted:
            columns[name].append(_convert(parts[i], name, dtype, path, number))
    return pa.table({name: pa.array(values, type=keep[name]) for name, values in columns.items()})


def _convert(text: str, name: str, dtype: pa.DataType, path: Path, line: int) -> object:
    convert: Callable[[str], object]
    if pa.types.is_large_string(dtype):
        return text
    if pa.types.is_integer(dtype):
        convert, expected = int, "an integer"
    else:
        convert, expected = float, "a number"
    try:
        if "_" in text:  # Python reads "1_0" as 10; C's atof (trec_eval) does not
            raise ValueError(text)
        value = convert(text)
    except ValueError:
        hexadecimal = _hex_float(text) if convert is float else None
        if hexadecimal is None:
            raise FormatError(
                f"field {name} must be {expected}; trec_eval would read it as "
                f"{_as_c_reads(text, integer=convert is int)}, which evalkit does not guess",
                file=str(path),
                line=line,
            ) from None
        value = hexadecimal
    if isinstance(value, int) and not _INT64_MIN <= value <= _INT64_MAX:
        raise FormatError(
            f"field {name} is outside the 64-bit integer range; expected an integer from "
            f"{_INT64_MIN} to {_INT64_MAX}",
            file=str(path),
            line=line,
        )
    if isinstance(value, float) and math.isnan(value):
        raise FormatError(
            f"field {name} is NaN; expected a number (trec_eval reads it as NaN and ranks it "
            "where its sort happens to leave it: no order to reproduce)",
            file=str(path),
            line=line,
        )
    return value


def _hex_float(text: str) -> float | None:
    """A C99 hexadecimal float (``0x1p-3``, as ``atof`` reads it), else None."""
    body = text.lstrip("+-")
    if body[:2].lower() != "0x":
        return None
    try:
        return float.fromhex(text)
    except ValueError:
        return None


def _as_c_reads(text: str, *, integer: bool) -> str:
    """What C's ``atol`` (``integer``) or ``atof`` makes of ``text``: its longest leading
    number, 0 without one (the number only, never the text)."""
    pattern = r"[+-]?\d+" if integer else r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    match = re.match(pattern, text)
    if match is None:
        return "0"
    return str(int(match[0])) if integer else repr(float(match[0]))


def text_blocks(path: Path, block_size: int) -> Iterator[tuple[pa.Buffer, int]]:
    """The text of the file at ``path`` in blocks of whole lines: about ``block_size`` bytes
    each, cut after the block's last line end (``\\n``, or ``\\r`` in a block without one; a
    block without either is read again twice as large), with the bytes read so far. Every byte
    is in exactly one block, in order. The blocks are read into arrow's memory pool (which reuses
    the memory of the blocks already parsed) and never copied."""
    with pa.OSFile(str(path), "rb") as file:
        size = file.size()
        at = 0
        while at < size:
            want = max(block_size, 1)
            while True:
                file.seek(at)
                block = file.read_buffer(min(want, size - at))
                cut = block.size if at + block.size >= size else _after_last_line_end(block)
                if cut:
                    break
                want *= 2  # a line longer than the block
            yield block.slice(0, cut), at + cut
            at += cut


_TAIL = 1 << 16


def _after_last_line_end(block: pa.Buffer) -> int:
    """The offset after the last ``\\n`` of ``block`` (else after its last ``\\r``; 0 without
    either), searched from the end, 64 KB at a time."""
    view = memoryview(block)
    for end_of_line in (b"\n", b"\r"):
        end = len(view)
        while end > 0:
            start = max(end - _TAIL, 0)
            found = bytes(view[start:end]).rfind(end_of_line)
            if found >= 0:
                return start + found + 1
            end = start
    return 0
