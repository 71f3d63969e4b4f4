"""Run files in either text format, TREC or JSON Lines: which one a file is, and reading it.

:func:`run_file_format` tells the format from the file's name (``.jsonl``, ``.ndjson`` or
``.json``, before an optional ``.gz``: JSON Lines) or else from its first non-blank character
(``{``: JSON Lines; a gzip file is looked at decompressed, a UTF-8 BOM is skipped); any other
file is TREC. :func:`read_run_file` reads it once: a TREC file with
:func:`evalkit.formats.read_run` (so every reader of TREC runs takes the same fields, comments,
BOM and whitespace), a JSON Lines file here.

A JSON Lines run holds one object per line, ``{"query_id", "chunk_id", "score"}``: IDs are
strings (an integer is read as its string), the score a finite number; blank lines are
skipped, a UTF-8 BOM is skipped, and a gzip file (told by its first bytes) is decompressed.
An optional ``confidence`` key is the query's declared confidence (what abstention thresholds
compare instead of its top score: :func:`evalkit.stats.abstention`): a finite number, the same
on every line of the query that gives it (lines may leave it out), and given for every query
of the file or for none; anything else is a FormatError naming the line and the field. Other
keys are ignored.

The rules every run follows (columns, at least one result, no (query, doc) pair twice) are
:mod:`evalkit.formats.rules`'; the caller applies them, in its own words.
"""

from __future__ import annotations

import codecs
import gzip
import json
import zlib
from collections.abc import Callable
from typing import Final, Literal

import numpy as np
import pandas as pd

from evalkit.errors import FormatError, InputFileError
from evalkit.formats._lines import PathLike, checked_file
from evalkit.formats.trec import read_run
from evalkit.safety.inputs import (
    MAX_DEPTH,
    check_line_lengths,
    finite_number,
    json_too_deep,
    open_input,
    read_input_bytes,
)
from evalkit.safety.names import safe_id

__all__ = ["JSONL_SUFFIXES", "RunFileFormat", "read_run_file", "run_file_format"]

RunFileFormat = Literal["trec", "jsonl"]
#: File name suffixes (before an optional ``.gz``) of a JSON Lines run.
JSONL_SUFFIXES: Final = (".jsonl", ".ndjson", ".json")
_GZIP_MAGIC: Final = b"\x1f\x8b"
_PEEK: Final = 1 << 16


def run_file_format(path: PathLike) -> RunFileFormat:
    """``"jsonl"`` or ``"trec"``: the format of the run file at ``path`` (module docstring).
    Reads no further than its first non-blank character. Raises FormatError (no line) when
    the file is missing (``file not found``), not a regular file, unreadable, or starts as a
    gzip file that is not valid gzip."""
    file = checked_file(path)
    if file.name.lower().removesuffix(".gz").endswith(JSONL_SUFFIXES):
        return "jsonl"
    try:
        with open_input(file) as handle:
            compressed = handle.read(2) == _GZIP_MAGIC
            handle.seek(0)
            stream = gzip.GzipFile(fileobj=handle) if compressed else handle
            first = _first_non_blank(stream.read)
    except InputFileError as error:
        raise FormatError(error.reason, file=str(file)) from None
    except (OSError, EOFError, zlib.error):
        raise FormatError("is not valid gzip", file=str(file)) from None
    return "jsonl" if first == b"{" else "trec"


def _first_non_blank(read: Callable[[int], bytes]) -> bytes:
    """The first character after white space (and a leading UTF-8 BOM) of what ``read(n)``
    reads, ``b""`` at the end."""
    block = read(_PEEK)
    block = block.removeprefix(codecs.BOM_UTF8)
    while block:
        rest = block.lstrip()
        if rest:
            return rest[:1]
        block = read(_PEEK)
    return b""


def read_run_file(
    path: PathLike, run_format: RunFileFormat | None = None, *, with_confidence: bool = False
) -> pd.DataFrame:
    """The run file at ``path`` (``run_format``: as :func:`run_file_format` tells, when None)
    as columns ``query_id``, ``doc_id`` (str), ``score`` (float64) and ``order`` (int64: the
    TREC file's rank as written, or the JSON Lines line number; what orders equal scores), in
    file order; ``with_confidence`` adds ``confidence`` (float64: the query's declared
    confidence on each of its rows, NaN when the file declares none; a TREC file never does).
    Raises FormatError (file, and line when one is at fault) on a malformed file."""
    file = checked_file(path)
    if (run_format or run_file_format(file)) == "trec":
        frame = read_run(file)
        frame = frame.rename(columns={"rank": "order"})[["query_id", "doc_id", "score", "order"]]
        if with_confidence:
            frame["confidence"] = np.nan
        return frame
    frame = _read_jsonl(file)
    return frame if with_confidence else frame.drop(columns="confidence")


def _shown_id(query_id: str) -> str:
    """A query ID as a message may show it: its repr when well-formed and safe, else a note."""
    return repr(query_id) if safe_id(query_id) else "(an ID not shown)"


def _query_confidence(
    declared: dict[str, tuple[float, int]], query_id: str, value: object, where: tuple[str, int]
) -> None:
    """Record line ``where[1]``'s ``confidence`` of ``query_id`` in ``declared`` (``{query:
    (value, first line)}``); FormatError when it is no finite number or differs from the
    query's earlier value."""
    file, number = where
    confidence = finite_number(value)
    if confidence is None:
        raise FormatError("'confidence' should be a finite number", file=file, line=number)
    earlier = declared.setdefault(query_id, (confidence, number))
    if earlier[0] != confidence:
        raise FormatError(
            f"'confidence' {confidence!r} differs from {earlier[0]!r} given for the same query "
            f"on line {earlier[1]}; a confidence belongs to the query: give one value",
            file=file,
            line=number,
        )


def _read_jsonl(path: PathLike) -> pd.DataFrame:
    try:
        check_line_lengths(path)  # one huge line: an error at bounded memory
        data = read_input_bytes(path)
    except InputFileError as error:
        raise FormatError(error.reason, file=str(path)) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise FormatError("is not valid gzip", file=str(path)) from None
    data = data.removeprefix(codecs.BOM_UTF8)
    queries: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    declared: dict[str, tuple[float, int]] = {}  # query -> (its confidence, first line)
    first_line: dict[str, int] = {}
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        if json_too_deep(raw):
            raise FormatError(
                f"is not valid JSON (nested more than {MAX_DEPTH} levels deep)",
                file=str(path),
                line=number,
            )
        try:
            item = json.loads(raw)
        except ValueError:  # JSONDecodeError, UnicodeDecodeError, an over-long integer
            raise FormatError(
                "is not valid JSON; expected one object per line", file=str(path), line=number
            ) from None
        if not isinstance(item, dict):
            raise FormatError(
                f"expected an object, found {type(item).__name__}", file=str(path), line=number
            )
        query_id, chunk_id, score = item.get("query_id"), item.get("chunk_id"), item.get("score")
        for key, value in (("query_id", query_id), ("chunk_id", chunk_id)):
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise FormatError(f"'{key}' should be a string", file=str(path), line=number)
        number_score = finite_number(score)  # None for an integer too large for a float too
        if number_score is None:
            raise FormatError("'score' should be a finite number", file=str(path), line=number)
        if "confidence" in item:
            _query_confidence(declared, str(query_id), item["confidence"], (str(path), number))
        first_line.setdefault(str(query_id), number)
        queries.append(str(query_id))
        docs.append(str(chunk_id))
        scores.append(number_score)
        lines.append(number)
    lacking = [q for q in first_line if q not in declared]
    if declared and lacking:
        raise FormatError(
            f"query {_shown_id(lacking[0])} has no 'confidence' (nor {len(lacking) - 1} other "
            "queries) "
            f"while {len(declared)} queries have one; give every query a confidence, or none",
            file=str(path),
            line=first_line[lacking[0]],
        )
    return pd.DataFrame(
        {
            "query_id": pd.Series(queries, dtype="str"),
            "doc_id": pd.Series(docs, dtype="str"),
            "score": np.array(scores, dtype=np.float64),
            "order": np.array(lines, dtype=np.int64),
            "confidence": np.array(
                [declared[q][0] if q in declared else np.nan for q in queries], dtype=np.float64
            ),
        }
    )
