"""TREC qrels and run files read into numpy arrays, with numpy and the standard library only.

``evalkit trec-eval`` starts like a C tool: it reads its two files here, without pandas or
pyarrow. :func:`read_qrels_columns` and :func:`read_run_columns` read a well-formed file as
one buffer and the bounds of its fields (:class:`~evalkit.formats.strings.Strings`, nothing
copied per ID), grades as int64 and scores as float64, and return None for any file they do
not take: a ``.gz`` file, one over :data:`MAX_ARRAY_BYTES`, non-ASCII bytes or control
characters, blank or comment lines, a line of another number of fields, a number in any form
but plain decimal digits (``12``, ``-3``, ``0.25``, ``1e-3``), a NaN, or a doc ID column that
looks like the ``Q0`` column. The caller then reads the file with
:func:`evalkit.formats.read_qrels` / :func:`evalkit.formats.read_run`, whose rules and error
messages (file, line) are the only ones: what this module takes, those readers read to the
same columns (``tests/test_trec_arrays.py`` checks it).

Fields are separated by C's ``isspace`` characters (space, tab, CR, vertical tab, form feed)
and lines by ``\\n``, as trec_eval reads them. A score is converted as ``strtod`` does it,
correctly rounded: a decimal of at most 15 digits without exponent is its integer digits
divided by a power of ten (both exact in float64, so the one rounding of the division is the
correct one); any other is converted by numpy's string-to-float cast (Python's ``float``).

:func:`last_run_id` (the run ID of a run file's last line, trec_eval's ``runid``) is here too:
the same command prints it.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray, IntArray
from evalkit.formats.strings import Strings
from evalkit.safety.inputs import MAX_LINE_BYTES

__all__ = [
    "MAX_ARRAY_BYTES",
    "QrelsColumns",
    "RunColumns",
    "is_iteration_field",
    "last_run_id",
    "read_qrels_columns",
    "read_run_columns",
]


#: Files up to this size are read whole into memory here; a larger one is left to the
#: streamed readers (bounded memory).
MAX_ARRAY_BYTES: Final = 1 << 28


class QrelsColumns(NamedTuple):
    """A qrels file's columns: query and doc IDs, grades (int64), in file order."""

    query: Strings
    doc: Strings
    grade: IntArray


class RunColumns(NamedTuple):
    """A run's columns: query and doc IDs, scores (float64), ranks (int64, or None when not
    read), in file order."""

    query: Strings
    doc: Strings
    score: FloatArray
    rank: IntArray | None = None


_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[48:58] = True
_NUMBER = _DIGIT.copy()  # the bytes of a plain decimal number
_NUMBER[[ord("."), ord("-"), ord("+"), ord("e"), ord("E")]] = True
_POWERS_OF_TEN = np.array([float(10**k) for k in range(16)])  # exact in float64
_ITERATION = re.compile(r"[Qq]?0|\d{1,3}")


def is_iteration_field(text: str) -> bool:
    """Whether ``text`` is what the second column of a TREC line holds (trec_eval ignores
    it): ``Q0``, or an iteration number. In a run's doc ID column it means the columns are
    out of order."""
    return _ITERATION.fullmatch(text) is not None


def read_qrels_columns(path: str | os.PathLike[str]) -> QrelsColumns | None:
    """The columns of the qrels file at ``path`` (``query_id iteration doc_id relevance``), or
    None when this reader does not take it (module docs)."""
    columns = _id_columns_and(Path(path), 4, 3, _integers)
    return None if columns is None else QrelsColumns(*columns)


def read_run_columns(path: str | os.PathLike[str]) -> RunColumns | None:
    """The columns of the run file at ``path`` (``query_id Q0 doc_id rank score run_id``;
    the rank is not read), or None when this reader does not take it (module docs)."""
    columns = _id_columns_and(Path(path), 6, 4, _floats)
    if columns is None:
        return None
    query, doc, score = columns
    first = doc.to_list(np.zeros(1, dtype=np.int64))[0]
    if is_iteration_field(first):  # maybe columns out of order: read_run says so
        return None
    return RunColumns(query, doc, score)


_Values = TypeVar("_Values", IntArray, FloatArray)


def _id_columns_and(
    path: Path,
    width: int,
    field: int,
    parse: Callable[[npt.NDArray[np.uint8], IntArray, IntArray], _Values | None],
) -> tuple[Strings, Strings, _Values] | None:
    """The query IDs (field 0), the document IDs (field 2) and field ``field`` read by
    ``parse`` of a file of ``width`` fields a line; None when the file or the field is not
    taken (module docs)."""
    fields = _fields(path, width, (0, 2, field))
    if fields is None:
        return None
    data, starts, ends = fields
    values = parse(data, starts[field], ends[field])
    if values is None:
        return None
    return Strings.of(data, starts[0], ends[0]), Strings.of(data, starts[2], ends[2]), values


_Fields = tuple[npt.NDArray[np.uint8], dict[int, IntArray], dict[int, IntArray]]


def _fields(path: Path, width: int, wanted: tuple[int, ...]) -> _Fields | None:
    """The file's bytes and, for each ``wanted`` field, the start and end of each line's
    field; None unless every line has ``width`` fields (module docs)."""
    if path.suffix == ".gz":
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_ARRAY_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    # a field's bytes: printable ASCII; between fields C's isspace (space, \t, \n, \v, \f,
    # \r); anything else (control characters, non-ASCII bytes) is left to read_qrels/read_run
    if not raw or raw.translate(None, _TEXT_BYTES):
        return None
    data = np.frombuffer(raw, dtype=np.uint8)
    gaps = _single_separators(data, width)
    per_field: dict[int, IntArray] = {}
    per_end: dict[int, IntArray] = {}
    if gaps is not None:  # field k of a line: from after its gap k - 1 to its gap k
        firsts = np.empty(gaps.size // width, dtype=np.int64)
        firsts[0] = 0
        np.add(gaps[width - 1 : -1 : width], 1, out=firsts[1:])
        for k in wanted:
            per_field[k] = firsts if k == 0 else gaps[k - 1 :: width] + 1
            per_end[k] = np.ascontiguousarray(gaps[k::width])
    else:
        bounds = _bounds(data, width)
        if bounds is None:
            return None
        starts, ends = bounds
        firsts = starts[0::width]
        for k in wanted:
            per_field[k] = np.ascontiguousarray(starts[k::width])
            per_end[k] = np.ascontiguousarray(ends[k::width])
    if bool((data[firsts] == ord("#")).any()):
        return None  # a comment line: read_qrels/read_run know the rules
    return data, per_field, per_end


_TEXT_BYTES: Final = bytes(range(9, 14)) + bytes(range(32, 127))
"""The bytes this reader takes: C's ``isspace`` characters and printable ASCII."""


def _single_separators(data: npt.NDArray[np.uint8], width: int) -> IntArray | None:
    """The offset of the whitespace byte after each field (every field of every line, in
    order) when the text is laid out as most TREC files are: ``width`` fields a line, one
    whitespace byte between fields, a ``\\n`` after each line's last field (the file's last
    byte), no other whitespace. The fields are then the spans between those bytes, found in
    one pass with few temporaries (a one-shot command pays for each new page of memory);
    None for any other layout, which :func:`_bounds` reads (the same fields where both read
    a text). Bytes are printable ASCII or whitespace (checked before)."""
    if data[0] <= 32 or data[-1] != 10:
        return None
    space = data <= 32  # whitespace: every byte below 33 here
    if bool((space[1:] & space[:-1]).any()):
        return None  # two whitespace bytes in a row
    gaps = np.flatnonzero(space)
    if gaps.size % width:
        return None  # a line of another width
    after = data[gaps].reshape(-1, width)  # the byte after each field, a row per line
    if not bool((after[:, -1] == 10).all()) or bool((after[:, :-1] == 10).any()):
        return None  # a line end inside a line: a line of fewer fields
    if int(np.diff(gaps[width - 1 :: width], prepend=-1).max()) > MAX_LINE_BYTES:
        return None  # read_qrels/read_run refuse it
    return gaps


def _bounds(data: npt.NDArray[np.uint8], width: int) -> tuple[IntArray, IntArray] | None:
    """Each field's start and end, for any layout of whitespace; None unless every line has
    ``width`` fields or when a line is over ``MAX_LINE_BYTES``."""
    space = data <= 32  # C's isspace here: other bytes below 33 were refused before
    kind = ~space
    lines = np.flatnonzero(data == 10)
    if int(np.diff(lines, prepend=-1, append=data.size).max()) > MAX_LINE_BYTES:
        return None  # read_qrels/read_run refuse it
    # where a field starts or ends: a byte whose kind differs from the one before it
    edges = np.flatnonzero(kind[1:] != kind[:-1]) + 1
    if kind[0]:
        edges = np.concatenate([[0], edges])
    if kind[-1]:
        edges = np.concatenate([edges, [data.size]])
    starts, ends = edges[0::2], edges[1::2]
    n = starts.size
    if n == 0 or n % width:
        return None
    # the field after each newline (between fields): each line's first field, and only those
    after = np.searchsorted(starts, lines)
    after = after[(after > 0) & (after < n)]
    if after.size:
        after = after[np.concatenate([[True], after[1:] != after[:-1]])]
    if not np.array_equal(after, np.arange(width, n, width)):
        return None
    return starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False)


def _digits(
    data: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]] | None:
    """Of each field ``[sign][digits][.digits]``: its digits as an integer, the number of
    digits after the point, and whether it is negative; None when a field is not of that
    form or has more than 15 digits."""
    negative = data[starts] == ord("-")
    signed = negative | (data[starts] == ord("+"))
    first = starts + signed
    lengths = ends - first
    if int(lengths.min(initial=1)) < 1 or int(lengths.max(initial=0)) > 16:
        return None
    # one step per byte position, each over every field (1-D: numpy's fast case); counters
    # in int8 and updates in place: a one-shot command pays for each new page of memory
    n, longest, last = starts.size, int(lengths.max(initial=0)), data.size - 1
    size = lengths.astype(np.int8)  # 1 .. 16
    value = np.zeros(n, dtype=np.int64)
    digits = np.zeros(n, dtype=np.int8)
    before_point = np.zeros(n, dtype=np.int8)  # digits before the point (of a field with one)
    points = np.zeros(n, dtype=np.int8)
    clamp = n > 0 and int(first.max()) + longest - 1 > last  # the last field ends the file
    for k in range(longest):
        inside = size > k
        byte = data[np.minimum(first + k, last) if clamp else first + k]
        digit = byte - np.uint8(48)  # wraps around below "0"
        is_digit = digit < 10
        is_digit &= inside
        is_point = byte == 46
        is_point &= inside
        if np.count_nonzero(is_digit) + np.count_nonzero(is_point) != np.count_nonzero(inside):
            return None  # another byte
        np.copyto(before_point, digits, where=is_point)
        points += is_point
        np.multiply(value, 10, out=value, where=is_digit)
        np.add(value, digit, out=value, where=is_digit)
        digits += is_digit
    fraction = np.where(points > 0, digits - before_point, 0).astype(np.int64)
    if int(points.max(initial=0)) > 1:
        return None  # two points
    if int(digits.min(initial=1)) < 1 or int(digits.max(initial=0)) > 15:
        return None
    return value, fraction, negative


def _integers(data: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> IntArray | None:
    """The fields as integers (``[sign]digits``), or None."""
    parsed = _digits(data, starts, ends)
    if parsed is None:
        return None
    value, fraction, negative = parsed
    if bool((fraction > 0).any()) or bool((data[ends - 1] == ord(".")).any()):
        return None
    return np.where(negative, -value, value).astype(np.int64)


def _floats(data: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> FloatArray | None:
    """The fields as float64, correctly rounded (module docs), or None."""
    if not bool(_NUMBER[data[starts]].all()):
        return None
    plain = _digits(data, starts, ends)
    if plain is not None:
        value, fraction, negative = plain
        out: FloatArray = value.astype(np.float64) / _POWERS_OF_TEN[fraction]
        np.negative(out, out=out, where=negative)
        return out
    # exponents, or more digits: numpy's cast, after checking the bytes are a number's
    lengths = ends - starts
    width = int(lengths.max(initial=1))
    index = starts[:, None] + np.arange(width)
    inside = np.arange(width) < lengths[:, None]
    matrix = np.where(inside, data[np.minimum(index, data.size - 1)], 0).astype(np.uint8)
    if not bool(_NUMBER[matrix[inside]].all()):
        return None
    try:
        return matrix.view(f"S{width}").reshape(-1).astype(np.float64)
    except ValueError:
        return None


# --- the run ID -------------------------------------------------------------------------------

_RUN_FIELDS = 6


def last_run_id(path: str | os.PathLike[str], *, chunk: int = 1 << 16) -> str | None:
    """The run ID (sixth field) of the last result line of a TREC run file (plain or ``.gz``),
    which trec_eval prints as its ``runid`` line; None when no line has six fields. Comment
    lines (``#`` after optional whitespace) and blank lines are skipped, as trec_eval skips
    them. A plain file is read backwards from its end, a ``.gz`` file decompressed in
    ``chunk``-byte steps keeping only its tail: memory does not grow with the file."""
    file = Path(path)
    tail = b""
    if file.suffix == ".gz":
        with gzip.open(file, "rb") as stream:
            while block := stream.read(chunk):
                tail = _last_lines(tail + block)
        return _run_id_of(tail, complete=True)
    with file.open("rb") as stream:
        end = stream.seek(0, os.SEEK_END)
        while end > 0:
            start = max(0, end - chunk)
            stream.seek(start)
            tail = stream.read(end - start) + tail
            end = start
            found = _run_id_of(tail, complete=start == 0)
            if found is not None or start == 0:
                return found
    return None


def _last_lines(data: bytes) -> bytes:
    """The last two lines of ``data`` that hold a field, with everything after them."""
    cut = len(data)
    kept = 0
    while cut > 0 and kept < 2:
        cut = data.rfind(b"\n", 0, cut)
        if cut < 0:
            return data
        line_end = data.find(b"\n", cut + 1)
        line = data[cut + 1 : None if line_end < 0 else line_end]
        if line.strip() and not line.lstrip().startswith(b"#"):
            kept += 1
    return data[max(cut, 0) :]


def _run_id_of(data: bytes, *, complete: bool) -> str | None:
    lines = data.split(b"\n")
    if not complete:
        lines = lines[1:]  # the first may be cut
    for line in reversed(lines):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < _RUN_FIELDS:
            return None
        return fields[5].decode("utf-8", errors="replace")
    return None
