"""Subtopic qrels files: the judgments of ndeval (and of ir_measures' diversity measures).

A line is ``query_id subtopic doc_id relevance``: the layout of a TREC qrels file with the
second field naming the subtopic (intent) the document is judged for, as ndeval reads it and
as ir_measures reads a qrels file's ``iteration`` field. For example::

    51 1 clueweb09-en0000-00-00000 1
    51 2 clueweb09-en0000-00-00000 0

Fields are separated by spaces or tabs; empty lines and lines starting with ``#`` are skipped;
a ``.gz`` file is decompressed. IDs (the subtopic included) are read as strings; a relevance is
an integer (``>= 1`` relevant by default, negative: pooled but unjudged). The reader is strict:
every line has exactly four fields, a relevance is an integer, no (query, subtopic, doc) is
judged twice and the file holds at least one judgment; otherwise a FormatError names the file
and line, what was expected, what was found and how to fix it (never quoting the line).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from evalkit.errors import FormatError, InputFileError
from evalkit.formats._lines import PathLike, fast_parse, load_bytes
from evalkit.safety.inputs import check_regular_file

__all__ = ["read_subtopic_qrels"]

_FIELDS = ("query_id", "subtopic", "doc_id", "relevance")
_LAYOUT = "query_id subtopic doc_id relevance"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def read_subtopic_qrels(path: PathLike) -> pd.DataFrame:
    """Read a subtopic qrels file into columns ``query_id``, ``subtopic``, ``doc_id`` (str) and
    ``relevance`` (int64), in file order: the ``subtopics`` argument of
    :func:`evalkit.measures.score`. Raises FormatError (file, line) on a malformed line."""
    file = Path(path)
    try:
        check_regular_file(file)  # a FIFO or device would block the reader
    except InputFileError as error:
        reason = "file not found" if error.reason == "does not exist" else error.reason
        raise FormatError(
            f"{reason}; expected a subtopic qrels file ({_LAYOUT} per line)", file=str(file)
        ) from None
    keep = {
        "query_id": pa.large_string(),
        "subtopic": pa.large_string(),
        "doc_id": pa.large_string(),
        "relevance": pa.int64(),
    }
    table = fast_parse(file, _FIELDS, keep)
    lines: np.ndarray | None = None
    if table is None:
        table, lines = _parse_lines(file, load_bytes(file))
    frame: pd.DataFrame = table.to_pandas()
    for column in ("query_id", "subtopic", "doc_id"):
        if str(frame[column].dtype) != "str":
            frame[column] = frame[column].astype("str")
    if frame.empty:
        raise FormatError(
            "holds no judgments (the file is empty, or only comments and blank lines); "
            f"expected lines '{_LAYOUT}'",
            file=str(file),
        )
    twice = frame.duplicated(list(_FIELDS[:3]), keep="first").to_numpy()
    if twice.any():
        if lines is None:  # the fast reader keeps no line numbers: read again, line by line
            _, lines = _parse_lines(file, load_bytes(file))
        row = int(np.flatnonzero(twice)[0])
        same = (frame[list(_FIELDS[:3])] == frame.iloc[row][list(_FIELDS[:3])]).all(axis=1)
        first = int(np.flatnonzero(same.to_numpy())[0])
        raise FormatError(
            f"judges the same (query, subtopic, doc) as line {int(lines[first])}; expected each "
            "document judged at most once per subtopic; found a second judgment. Fix: keep "
            "one of the two lines",
            file=str(file),
            line=int(lines[row]),
        )
    return frame


def _parse_lines(path: Path, data: bytes) -> tuple[pa.Table, np.ndarray]:
    """Line-by-line parser: the table and each row's line number; raises FormatError at the
    first bad line."""
    columns: dict[str, list[object]] = {name: [] for name in _FIELDS}
    numbers: list[int] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(
                "is not valid UTF-8; expected UTF-8 text. Fix: re-encode the file as UTF-8",
                file=str(path),
                line=number,
            ) from None
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != len(_FIELDS):
            hint = (
                "a TREC run line has 6 fields: this looks like a run file, not subtopic qrels"
                if len(parts) == 6
                else "put the four fields on one line, separated by spaces or tabs"
            )
            raise FormatError(
                f"expected 4 whitespace-separated fields ({_LAYOUT}), found {len(parts)}. "
                f"Fix: {hint}",
                file=str(path),
                line=number,
            )
        for name, text in zip(_FIELDS[:3], parts, strict=False):
            columns[name].append(text)
        columns["relevance"].append(_relevance(parts[3], path, number))
        numbers.append(number)
    table = pa.table(
        {
            "query_id": pa.array(columns["query_id"], pa.large_string()),
            "subtopic": pa.array(columns["subtopic"], pa.large_string()),
            "doc_id": pa.array(columns["doc_id"], pa.large_string()),
            "relevance": pa.array(columns["relevance"], pa.int64()),
        }
    )
    return table, np.asarray(numbers, dtype=np.int64)


def _relevance(text: str, path: Path, line: int) -> int:
    try:
        if "_" in text:  # Python reads "1_0" as 10; C's atoi (ndeval) does not
            raise ValueError(text)
        value = int(text)
    except ValueError:
        kind = "a number with a fraction" if _is_number(text) else "text that is not a number"
        raise FormatError(
            f"field relevance (the 4th) must be an integer, e.g. 0 or 1; found {kind}. Fix: "
            "write the grade as a whole number",
            file=str(path),
            line=line,
        ) from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise FormatError(
            f"field relevance (the 4th) is outside the 64-bit integer range; expected an "
            f"integer from {_INT64_MIN} to {_INT64_MAX}. Fix: use a small grade such as 0 or 1",
            file=str(path),
            line=line,
        )
    return value


def _is_number(text: str) -> bool:
    try:
        return not math.isnan(float(text))
    except ValueError:
        return False
