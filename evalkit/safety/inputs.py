"""Reading user-supplied input files safely: regular files only, JSON of bounded depth.

Every reader of a file named on the command line (TREC qrels and runs, BEIR files, gates and
probe YAML, report and baseline JSON) goes through :func:`read_input_bytes` or
:func:`check_regular_file`, so a FIFO, a device or a directory is refused with a message instead
of hanging or reading forever. :func:`load_json` refuses JSON nested deeper than ``MAX_DEPTH``
before ``json`` could recurse into it. Errors are :class:`InputFileError`, an ``OSError`` whose
``reason`` is a message fragment such as ``"is a FIFO (named pipe), not a regular file"``;
each reader turns it into its own error class, naming the file.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

from evalkit.errors import InputError, InputFileError

__all__ = [
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "check_line_lengths",
    "check_regular_file",
    "find_input",
    "finite_number",
    "json_depth_error",
    "json_too_deep",
    "load_json",
    "long_line",
    "open_input",
    "read_from",
    "read_input_bytes",
]

#: Deepest nesting of JSON arrays/objects (or YAML collections) accepted in an input file.
#: evalkit's own reports nest 5 levels; 64 leaves room for any hand-written file.
MAX_DEPTH: Final = 64

_KINDS: Final = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a FIFO (named pipe)"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISSOCK, "is a socket"),
)


def read_from(path: str | os.PathLike[str]) -> str:
    """Where a relative ``path`` was looked up, for a "does not exist" message: ``" (read from
    the working directory '/home/me/project')"``; ``""`` for an absolute path. A public
    function reads a relative path from the working directory as given, nowhere else."""
    if Path(path).is_absolute():
        return ""
    return f" (read from the working directory {os.getcwd()!r})"


def _kind_problem(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    for test, what in _KINDS:
        if test(mode):
            return f"{what}, not a regular file; pass a regular file"
    return "is not a regular file; pass a regular file"


def _os_reason(error: OSError) -> str:
    if isinstance(error, InputFileError):
        return error.reason
    if isinstance(error, FileNotFoundError):
        return "does not exist"
    if isinstance(error, PermissionError):
        return "cannot be read (permission denied)"
    return f"cannot be read ({type(error).__name__})"


def check_regular_file(path: str | os.PathLike[str]) -> None:
    """Raise :class:`InputFileError` unless ``path`` is (a symlink to) a regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None
    problem = _kind_problem(mode)
    if problem is not None:
        raise InputFileError(problem)


def read_input_bytes(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file ``path``; :class:`InputFileError` otherwise, or when it
    holds more than ``max_bytes`` (read no further than that).

    The file is opened non-blocking and checked with ``fstat`` on the open descriptor, so a
    FIFO with no writer never blocks the open and is refused like a directory or a device.
    """
    with open_input(path) as handle:
        try:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        except OSError as error:
            raise InputFileError(_os_reason(error)) from None
    if max_bytes is not None and len(data) > max_bytes:
        raise InputFileError(
            f"is larger than {max_bytes} bytes, more than a file of its kind holds; check "
            "that it is the right file"
        )
    return data


@contextlib.contextmanager
def open_input(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """The regular file ``path`` open for reading in binary (streamed reads); the one check
    of every file a user names: :class:`InputFileError` for a FIFO, a device, a directory, a
    socket, a missing or unreadable file. The open never blocks (``O_NONBLOCK``)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None
    try:
        problem = _kind_problem(os.fstat(fd).st_mode)
        if problem is not None:
            raise InputFileError(problem)
        handle = os.fdopen(fd, "rb")
    except InputFileError:
        os.close(fd)
        raise
    except OSError as error:
        os.close(fd)
        raise InputFileError(_os_reason(error)) from None
    with handle:
        yield handle


#: Longest line (bytes) of a line-based input file (TREC qrels and runs, JSONL runs): a run
#: line is under 200 bytes; a JSON Lines record with text stays far below it.
MAX_LINE_BYTES: Final = 1 << 20

_BLOCK: Final = 1 << 20


def long_line(handle: BinaryIO, limit: int = MAX_LINE_BYTES) -> int | None:
    """The 1-based number of the first line of ``handle`` longer than ``limit`` bytes, or None;
    reads ``handle`` to its end in 1 MiB blocks (memory bounded by the block and the limit)."""
    line, length = 1, 0
    while block := handle.read(_BLOCK):
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            if length + end - start > limit:
                return line
            line, length, start = line + 1, 0, end + 1
        length += len(block) - start
        if length > limit:
            return line
    return None


def check_line_lengths(path: str | os.PathLike[str], limit: int = MAX_LINE_BYTES) -> None:
    """Raise :class:`InputFileError` naming the first line of the regular file ``path`` longer
    than ``limit`` bytes (gzip files are checked after decompression)."""
    with open_input(path) as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
        handle.seek(0)
        try:
            if compressed:
                with gzip.open(handle) as unpacked:
                    number = long_line(unpacked, limit)  # type: ignore[arg-type]
            else:
                number = long_line(handle, limit)
        except (OSError, EOFError, zlib.error):
            return  # not valid gzip: the reader reports it
    if number is not None:
        raise InputFileError(
            f"line {number} is longer than {limit} bytes (the longest line accepted); "
            "check that the file has one record per line"
        )


_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth_error(data: bytes | str) -> str | None:
    """``"line N: ..."`` when JSON ``data`` nests deeper than ``MAX_DEPTH``, else None.

    Counts brackets outside string literals, without recursion (a running depth, clamped at 0
    as a closing bracket too many leaves it); it does not validate
    the JSON (``json`` does). Strings are replaced by a constant first (at C speed); the line
    of a problem is counted only on the error path.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return None
    if _first_too_deep(_STRING.sub(b'""', raw)) is None:
        return None
    with_lines = _STRING.sub(lambda m: b"\n" * m.group().count(b"\n"), raw)
    position = _first_too_deep(with_lines) or 0
    line = with_lines.count(b"\n", 0, position) + 1
    return (
        f"line {line}: nested more than {MAX_DEPTH} levels deep; an evalkit report nests 5 levels"
    )


def _first_too_deep(stripped: bytes) -> int | None:
    """The offset of the first bracket of ``stripped`` (JSON with its strings removed) that
    opens level ``MAX_DEPTH + 1``, or None.

    The brackets alone (``bytes.translate``, C speed) as steps of +1 and -1, summed by
    :func:`itertools.accumulate` (C speed): when that walk never goes below 0 it is the
    depth itself, and its maximum decides. Only a closing bracket too many (the depth clamped
    at 0) or a level too deep is walked bracket by bracket in Python. No numpy: the check runs
    as a command starts (a report notebook has a few hundred brackets)."""
    steps = memoryview(stripped.translate(_BRACKET_STEPS, _NOT_BRACKETS)).cast("b")
    walk = list(itertools.accumulate(steps))
    if not walk or (min(walk) >= 0 and max(walk) <= MAX_DEPTH):
        return None
    depth = 0
    for index, step in enumerate(steps):
        depth = max(depth + step, 0)
        if depth > MAX_DEPTH:
            return _nth_bracket(stripped, index)
    return None


_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_BRACKET_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
"""Each opening bracket as the signed byte +1, each closing one as -1."""


def _nth_bracket(data: bytes, n: int) -> int:
    """The offset in ``data`` of its bracket number ``n`` (from 0)."""
    found = itertools.islice(re.finditer(rb"[\[\]{}]", data), n, None)
    return next(found).start()


def json_too_deep(data: bytes | str) -> bool:
    """Whether JSON ``data`` nests deeper than ``MAX_DEPTH`` (a check without recursion, for
    each line of a JSON Lines file before ``json`` reads it)."""
    return json_depth_error(data) is not None


def finite_number(value: object) -> float | None:
    """``value`` as a finite float, or None when it is not a number (a bool is not), is NaN or
    infinite, or is an integer outside the range of a float (``float()`` of a 400-digit
    integer raises ``OverflowError``; here it is None, for the caller to name the field)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def load_json(data: bytes | str) -> Any:
    """``json.loads(data)`` after the depth check; ``ValueError`` (a message naming the line)
    for JSON that is malformed or too deeply nested, never ``RecursionError``."""
    problem = json_depth_error(data)
    if problem is not None:
        raise ValueError(problem)
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise ValueError(f"line {error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    except ValueError:  # e.g. an integer of more than 4300 digits
        raise ValueError("not valid JSON (a number is too long)") from None
    except RecursionError:  # pragma: no cover - the depth check runs first
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None


def find_input(path: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None) -> Path:
    """The existing file or directory ``path`` names.

    A relative path is looked up from ``base`` (default: the working directory), then from its
    parent, so a notebook opened in JupyterLab from a folder below the repository root finds
    the repository's ``fixtures/...`` as well. Raises :class:`InputError` when neither exists.
    """
    candidate = Path(path)
    if candidate.is_absolute() and candidate.exists():
        return candidate
    start = Path(base) if base is not None else Path.cwd()
    if not candidate.is_absolute():
        for root in (start, start.parent):
            if (root / candidate).exists():
                return root / candidate
    # the folder looked in is not named: a working directory shows the user's home or project
    where = "" if candidate.is_absolute() else " (looked in the working directory and its parent)"
    raise InputError(
        f"{os.fspath(path)!r} does not exist{where}; give the path from the working directory, "
        "e.g. fixtures/synthetic-bilingual-v1 in a clone of evalkit's repository"
    )
