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

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Final

from evalkit.errors import InputError

__all__ = [
    "MAX_DEPTH",
    "InputFileError",
    "check_regular_file",
    "find_input",
    "json_depth_error",
    "load_json",
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


class InputFileError(OSError):
    """An input file cannot be read; ``reason`` says why (no file content, no path)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


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


def read_input_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path``; :class:`InputFileError` otherwise.

    The file is opened non-blocking and checked with ``fstat`` on the open descriptor, so a
    FIFO with no writer never blocks the open and is refused like a directory or a device.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None
    try:
        problem = _kind_problem(os.fstat(fd).st_mode)
        if problem is not None:
            raise InputFileError(problem)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except InputFileError:
        raise
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None
    finally:
        os.close(fd)


_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET: Final = re.compile(rb"[\[\]{}]")


def json_depth_error(data: bytes | str) -> str | None:
    """``"line N: ..."`` when JSON ``data`` nests deeper than ``MAX_DEPTH``, else None.

    Counts brackets outside string literals; it does not validate the JSON (``json`` does).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return None
    stripped = _STRING.sub(lambda m: b"\n" * m.group().count(b"\n"), raw)
    depth = 0
    for match in _BRACKET.finditer(stripped):
        if match.group() in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = stripped.count(b"\n", 0, match.start()) + 1
                return (
                    f"line {line}: nested more than {MAX_DEPTH} levels deep; "
                    "an evalkit report nests 5 levels"
                )
        else:
            depth = max(depth - 1, 0)
    return None


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
    parent, so a notebook opened in JupyterLab from ``notebooks/`` finds the repository's
    ``fixtures/...`` as well. Raises :class:`InputError` when neither exists.
    """
    candidate = Path(path)
    if candidate.is_absolute():
        if candidate.exists():
            return candidate
    else:
        start = Path(base) if base is not None else Path.cwd()
        for root in (start, start.parent):
            if (root / candidate).exists():
                return root / candidate
    raise InputError(
        f"{os.fspath(path)!r} does not exist (looked in the working directory and its parent); "
        "give a path relative to the repository root, e.g. fixtures/synthetic-bilingual-v1"
    )
