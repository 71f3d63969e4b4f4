"""THE output-path check and atomic text writes; every file evalkit writes goes through here.

Writers do not call this module directly: they call :func:`evalkit.safety.artifacts.write_artifact`,
which scans the text for leaks first and then writes it with :func:`write_texts_atomic`.

Rules for an output path (anything else is refused with :class:`~evalkit.errors.UnsafePathError`
by :func:`resolve_output_path`, which creates nothing; the CLI exits 2):

- It is relative to the *workspace*: the ``workspace`` argument, else the current working
  directory. There is deliberately no environment variable for the workspace: the workspace is
  the boundary of what evalkit may write, and a stray variable must not widen it silently. The
  workspace must be an existing directory; it and its ancestors are trusted (they may be links).
- Not empty, no NUL byte, no control character (C0, DEL, C1: newline, CR, ESC, ...), no line or
  paragraph separator and no bidirectional-text control (U+200E/F, U+202A-E, U+2066-9), not
  absolute: no leading ``/``, no Windows drive (``C:\\x``, ``C:/x``, ``C:x``), no UNC/device
  prefix (``\\\\server\\share``, ``//server/share``).
- Components are separated by ``/`` (also ``\\`` on Windows). On POSIX a ``\\`` is refused,
  because the same path would climb or nest differently on Windows. Empty and ``.`` components
  are skipped; a ``..`` component anywhere is refused; the path must name a file (it cannot end
  with a separator or be just ``.``). With ``suffixes``, the file name must end in one of them.
- No component may be longer than the file system's name limit (``NAME_MAX``, 255 bytes on
  most systems, also leaving room for the temporary file's name) and the whole absolute path
  must be shorter than ``PATH_MAX`` (4096 bytes).
- Below the workspace, every existing component is checked with ``os.lstat`` (links are never
  followed): a symbolic link anywhere — pointing inside or outside the workspace — is refused,
  and so is a parent that is not a directory, or a destination that is a directory or not a
  regular file.
- The deepest existing directory must accept a new file: a probe file is created there with
  ``O_EXCL`` and removed at once (``os.access`` would not do: it says yes to root on a
  read-only folder).

Missing parent directories are created only at write time, one at a time, each re-checked to be
a real directory; when the write then fails they are removed again, so a failed command leaves
no folder behind.

:func:`write_texts_atomic` encodes each text as UTF-8 (no newline translation), writes it to a
new temporary file ``.<name>.<process tag>-<random>.tmp`` in the destination directory (created
with mode ``0o666`` minus the umask, like any new file, or with the mode of the file it
replaces), flushes and fsyncs it; only when every temporary file is written does it re-check
each whole path, rename each into place with ``os.replace`` and fsync the directory (POSIX).
Files written together (a report's HTML and notebook) stay a pair even after ``kill -9``: a
journal is committed before the first rename, and the next write into that folder finishes an
interrupted set of renames (:mod:`evalkit.safety.scratch`, which also removes the temporary
files of a dead process there; before the journal the old files are kept). On any error the
temporary files and the directories it created are removed and previous files are left
byte-identical (except a file already renamed when a later rename fails); a file-system error
becomes :class:`~evalkit.errors.OutputError` (an ``OSError``; the CLI exits 2). Residual races
(closing them needs ``dir_fd``-relative calls, which Windows lacks): a link swapped in between
the final check and the rename is not detected, and when a parent directory is swapped for a
link mid-write the refusal cannot find the temporary file to remove it (it stays, hidden, in
the moved directory).

:func:`output_path_from_env` picks the output path: the CLI's ``--output`` value, else the
``EVALKIT_OUTPUT`` environment variable (empty counts as unset), else ``None`` (write nothing).

Messages never show a path component that looks like a credential or an endpoint (the fixture
rules' detector, :func:`evalkit.fixtures.rules.find_sensitive`); they name its position instead.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import stat
import unicodedata
from collections.abc import Callable, Sequence
from typing import Final

from evalkit.errors import InputError, OutputError, UnsafePathError
from evalkit.safety.interrupts import deferred, record_written
from evalkit.safety.scratch import journal_path, sweep, temporary_path
from evalkit.safety.sensitive import SENSITIVE_KINDS, find_sensitive

__all__ = [
    "output_path_from_env",
    "resolve_output_path",
    "shown_path",
    "unshown_reason",
    "write_text_atomic",
    "write_texts_atomic",
]

OUTPUT_ENV_VAR = "EVALKIT_OUTPUT"

_SEPARATORS = "/\\" if os.name == "nt" else "/"
_FIX_RELATIVE = "give a path relative to the workspace, e.g. reports/run.json"
_DEFAULT_NAME_MAX = 255
_DEFAULT_PATH_MAX = 4096
_TEMPORARY_EXTRA = 64  # ".<name>.<host8>-<pid>-<start>-<12 hex>.tmp" (scratch.temporary_path)
_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HIDDEN_KINDS = ("url", "private_key", "token")


def output_path_from_env(cli_value: str | None) -> str | None:
    """The ``--output`` value if given, else ``$EVALKIT_OUTPUT`` if non-empty, else ``None``."""
    if cli_value is not None:
        return cli_value
    return os.environ.get(OUTPUT_ENV_VAR) or None


def unshown_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` must not be quoted in a message (it looks like a credential or endpoint, or
    holds a control character), or ``None`` when it may be."""
    raw = os.fspath(path)
    if not isinstance(raw, str):
        return "it is not text"
    if any(_control_name(c) for c in raw):
        return "it contains a control character"
    hidden = [kind for kind in find_sensitive(raw) if kind in _HIDDEN_KINDS]
    if hidden:
        return f"it looks like {SENSITIVE_KINDS[hidden[0]]}"
    return None


def shown_path(path: str | os.PathLike[str], *, label: str = "path") -> str:
    """``repr(path)`` for a message, else ``"the <label> (not shown: ...)"``."""
    reason = unshown_reason(path)
    return repr(os.fspath(path)) if reason is None else f"the {label} (not shown: {reason})"


def resolve_output_path(
    path: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
    suffixes: Sequence[str] = (),
) -> pathlib.Path:
    """THE output-path check (rules above); the absolute destination. Creates nothing.

    ``suffixes`` (e.g. ``(".html", ".htm")``, compared case-insensitively) restricts the file
    name's ending. Raises :class:`UnsafePathError` when a rule is broken.
    """
    root = _workspace_root(workspace)
    parents, name = _split_relative(path)
    if suffixes and not name.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise UnsafePathError(
            f"output path {shown_path(path)} should end in {' or '.join(suffixes)}; "
            f"found another suffix; rename the output, e.g. reports/report{suffixes[0]}"
        )
    _check_lengths(root, [*parents, name])
    deepest, existing = _walk_parents(parents, root)
    destination = root.joinpath(*parents, name)
    if existing == len(parents):
        _check_destination(destination, root)
    _check_writable(deepest, root)
    return destination


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, workspace: str | os.PathLike[str] | None = None
) -> pathlib.Path:
    """Write ``text`` (UTF-8) to the checked ``path`` atomically; the absolute final path.

    Raises :class:`UnsafePathError` for a refused path, :class:`InputError` for text that is not
    valid Unicode (both before anything is written), :class:`OutputError` when the file system
    fails (after the temporary file and any directory it created are removed).
    """
    return write_texts_atomic([(path, text)], workspace=workspace)[0]


def write_texts_atomic(
    items: Sequence[tuple[str | os.PathLike[str], str | bytes]],
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> list[pathlib.Path]:
    """Write several ``(path, text)`` pairs: all paths checked and all temporary files written
    before the first rename (rules above); the absolute final paths, in order. A ``bytes``
    value (a Parquet file) is written as it is."""
    encoded = [
        (path, text if isinstance(text, bytes) else _encode(path, text)) for path, text in items
    ]
    root = _workspace_root(workspace)
    destinations = [resolve_output_path(path, workspace=root) for path, _ in encoded]
    sweep(tuple(dict.fromkeys(d.parent for d in destinations if d.parent.is_dir())))
    created: list[pathlib.Path] = []
    temporaries: list[pathlib.Path] = []
    journal: pathlib.Path | None = None
    try:
        # A signal waits until every file is in place (pairs stay pairs) or the write failed:
        # none falls between a temporary file's creation and its being listed for removal.
        with deferred():
            for destination, (_, data) in zip(destinations, encoded, strict=True):
                _make_parents(destination, root, created)
                temporaries.append(_write_temporary(destination, data))
            if len(destinations) > 1:  # the commit point: after a kill, the next write renames
                journal = _write_journal(destinations, temporaries)
            for destination, temporary in zip(destinations, temporaries, strict=True):
                _recheck(destination, root)
                os.replace(temporary, destination)
                record_written()
                _fsync_directory(destination.parent)
            if journal is not None:
                journal.unlink()
    except BaseException as error:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
        if journal is not None:
            journal.unlink(missing_ok=True)
        for directory in reversed(created):
            try:
                directory.rmdir()
            except OSError:
                break
        if isinstance(error, OSError) and not isinstance(error, OutputError):
            reason = error.strerror or type(error).__name__
            raise OutputError(
                f"cannot write {len(destinations)} output file(s) ({reason}); nothing was "
                "written; expected a writable folder with free space; fix the folder's "
                "permissions or free space, or choose another --output"
            ) from None
        raise
    return destinations


def _write_journal(
    destinations: Sequence[pathlib.Path], temporaries: Sequence[pathlib.Path]
) -> pathlib.Path:
    """The journal of a write of several files (``[temporary, destination]`` names relative
    to the first destination's folder), written and fsynced with its folder."""
    folder = destinations[0].parent
    pairs = [
        [os.path.relpath(temporary, folder), os.path.relpath(destination, folder)]
        for temporary, destination in zip(temporaries, destinations, strict=True)
    ]
    journal = journal_path(folder)
    _write_temporary(journal, json.dumps(pairs).encode("utf-8"), exact=journal)
    _fsync_directory(folder)
    return journal


def _encode(path: str | os.PathLike[str], text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"write_text_atomic: the text for {shown_path(path)} is not valid Unicode (lone "
            f"surrogate at character {error.start}); expected text that encodes as UTF-8"
        ) from None


def _workspace_root(workspace: str | os.PathLike[str] | None) -> pathlib.Path:
    root = pathlib.Path(os.path.abspath(os.getcwd() if workspace is None else workspace))
    if not root.is_dir():
        shown = "(the working directory)" if workspace is None else shown_path(workspace)
        raise UnsafePathError(
            f"workspace {shown} does not exist or is not a directory; expected an existing "
            "directory; create it or pass another workspace"
        )
    return root


def _control_name(character: str) -> str:
    """A description of ``character`` when output paths refuse it, else ``""``."""
    category = unicodedata.category(character)
    if category == "Cc":
        return "a control character"
    if category in ("Zl", "Zp"):
        return "a line or paragraph separator"
    if character in _BIDI_CONTROLS:
        return "a bidirectional-text control"
    return ""


def _split_relative(path: str | os.PathLike[str]) -> tuple[list[str], str]:
    """Lexical checks; returns (parent components, file name)."""
    raw = os.fspath(path)
    if not isinstance(raw, str):
        raise UnsafePathError(
            f"output path must be text, found {type(raw).__name__}; pass a str or pathlib.Path"
        )
    if raw == "":
        raise UnsafePathError(f"output path is empty; expected a file name; {_FIX_RELATIVE}")
    if "\0" in raw:
        raise UnsafePathError(
            f"output path contains a NUL byte at character {raw.index(chr(0))}; "
            f"expected none; {_FIX_RELATIVE}"
        )
    for index, character in enumerate(raw):
        what = _control_name(character)
        if what:
            raise UnsafePathError(
                f"output path contains {what} (U+{ord(character):04X}) at character {index}; "
                "expected printable characters only (no newline, CR, ESC, ...); rename the "
                "output, e.g. reports/run.json"
            )
    shown = shown_path(raw, label="output path")
    if raw[:2] in ("//", "\\\\", "/\\", "\\/"):
        raise UnsafePathError(
            f"output path {shown} is a UNC/device path; expected a workspace-relative path; "
            f"{_FIX_RELATIVE}"
        )
    if raw[:1] in ("/", "\\"):
        raise UnsafePathError(
            f"output path {shown} is absolute; expected a workspace-relative path; {_FIX_RELATIVE}"
        )
    if len(raw) >= 2 and raw[1] == ":" and raw[0].isascii() and raw[0].isalpha():
        raise UnsafePathError(
            f"output path {shown} starts with a Windows drive ({raw[:2]}); expected a "
            f"workspace-relative path; {_FIX_RELATIVE}"
        )
    if "\\" in raw and "\\" not in _SEPARATORS:
        raise UnsafePathError(
            f"output path {shown} contains a backslash at character {raw.index(chr(92))}; "
            "expected '/' as the only separator; use '/' between directories"
        )
    if raw[-1] in _SEPARATORS:
        raise UnsafePathError(
            f"output path {shown} ends with a separator; expected a file name at the end; "
            "add the file name, e.g. reports/run.json"
        )
    for separator in _SEPARATORS[1:]:
        raw = raw.replace(separator, "/")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        index = parts.index("..")
        raise UnsafePathError(
            f"output path {shown} has a '..' component (component {index + 1}); "
            f"expected a path that stays inside the workspace; {_FIX_RELATIVE}"
        )
    if not parts:
        raise UnsafePathError(
            f"output path {shown} names the workspace itself; expected a file name; {_FIX_RELATIVE}"
        )
    return parts[:-1], parts[-1]


def _relative(target: pathlib.Path, root: pathlib.Path) -> str:
    return shown_path(target.relative_to(root).as_posix(), label="component")


def _lstat_or_none(target: pathlib.Path) -> os.stat_result | None:
    try:
        return os.lstat(target)
    except FileNotFoundError:
        return None
    except OSError as error:  # e.g. a folder that may not be searched
        raise UnsafePathError(
            f"output path: cannot inspect component {shown_path(target.name, label='name')} "
            f"({error.strerror or type(error).__name__}); expected a folder evalkit may search; "
            "fix its permissions or choose another --output"
        ) from None


# What an existing path must not be, in the order checked: (test of its mode, the problem)
_PathRules = tuple[tuple[Callable[[int], bool], str], ...]
_DIRECTORY_RULES: Final[_PathRules] = (
    (
        stat.S_ISLNK,
        "is a symbolic link; expected a real directory; remove the link or write elsewhere",
    ),
    (
        lambda mode: not stat.S_ISDIR(mode),
        "is not a directory; expected a directory; rename it or choose another path",
    ),
)
_FILE_RULES: Final[_PathRules] = (
    (
        stat.S_ISLNK,
        "is a symbolic link; expected a regular file or nothing; remove the link or choose "
        "another file name",
    ),
    (
        stat.S_ISDIR,
        "is an existing directory; expected a file name; add the file name, e.g. reports/run.json",
    ),
    (
        lambda mode: not stat.S_ISREG(mode),
        "is a special file (not a regular file); expected a regular file or nothing; choose "
        "another file name",
    ),
)


def _refuse(where: str, info: os.stat_result, rules: _PathRules) -> None:
    """An :class:`UnsafePathError` "``where`` PROBLEM" for the first rule ``info`` breaks."""
    for breaks, problem in rules:
        if breaks(info.st_mode):
            raise UnsafePathError(f"{where} {problem}")


def _check_directory(target: pathlib.Path, root: pathlib.Path, info: os.stat_result) -> None:
    where = f"output path component {_relative(target, root)} (in the workspace)"
    _refuse(where, info, _DIRECTORY_RULES)


def _walk_parents(parts: Sequence[str], root: pathlib.Path) -> tuple[pathlib.Path, int]:
    """Check each existing parent below ``root`` is a real directory; (the deepest existing
    one, how many of ``parts`` exist). Stops at the first missing one."""
    current = root
    for count, part in enumerate(parts):
        info = _lstat_or_none(current / part)
        if info is None:
            return current, count
        _check_directory(current / part, root, info)
        current = current / part
    return current, len(parts)


def _make_parents(
    destination: pathlib.Path, root: pathlib.Path, created: list[pathlib.Path]
) -> None:
    """Create the missing parents of ``destination`` (appending each to ``created``), each
    re-checked to be a real directory."""
    current = root
    for part in destination.relative_to(root).parts[:-1]:
        current = current / part
        info = _lstat_or_none(current)
        if info is None:
            try:
                os.mkdir(current)
                created.append(current)
            except FileExistsError:  # created meanwhile: checked below
                pass
            info = os.lstat(current)
        _check_directory(current, root, info)


def _check_destination(destination: pathlib.Path, root: pathlib.Path) -> None:
    info = _lstat_or_none(destination)
    if info is None:
        return
    _refuse(f"output path {_relative(destination, root)} (in the workspace)", info, _FILE_RULES)


def _limit(directory: pathlib.Path, name: str, default: int) -> int:
    try:
        return int(os.pathconf(directory, name))
    except (AttributeError, ValueError, OSError):
        return default


def _check_lengths(root: pathlib.Path, parts: Sequence[str]) -> None:
    """Each component within ``NAME_MAX`` and the whole path within ``PATH_MAX`` (as the
    workspace's file system reports them), before any ``lstat`` could fail on them."""
    name_max = _limit(root, "PC_NAME_MAX", _DEFAULT_NAME_MAX)
    for index, part in enumerate(parts):
        size = len(os.fsencode(part))
        limit = name_max  # the temporary file's name is cut to fit (_create_temporary)
        if size > limit:
            what = "file name" if index == len(parts) - 1 else f"component {index + 1}"
            raise UnsafePathError(
                f"output path: the {what} is {size} bytes long; expected at most {limit} bytes "
                "(the file system's name limit); choose a shorter name"
            )
    path_max = _limit(root, "PC_PATH_MAX", _DEFAULT_PATH_MAX)
    size = len(os.fsencode(os.fspath(root.joinpath(*parts)))) + _TEMPORARY_EXTRA
    if size >= path_max:
        raise UnsafePathError(
            f"output path: the full path would be {size} bytes long; expected fewer than "
            f"{path_max} (the file system's path limit); choose a shorter path"
        )


def _check_writable(directory: pathlib.Path, root: pathlib.Path) -> None:
    """Create and remove a probe file in ``directory``: it must accept new files."""
    probe = directory / f".evalkit-write-check.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(probe, flags, 0o600)
    except OSError as error:
        where = "the workspace" if directory == root else _relative(directory, root)
        raise UnsafePathError(
            f"output folder {where} does not accept new files "
            f"({error.strerror or type(error).__name__}); expected a writable folder; fix its "
            "permissions or choose another --output"
        ) from None
    os.close(descriptor)
    probe.unlink(missing_ok=True)


def _recheck(destination: pathlib.Path, root: pathlib.Path) -> None:
    """Re-run the link checks (without creating anything) just before the rename."""
    parts = destination.relative_to(root).parts[:-1]
    deepest, existing = _walk_parents(parts, root)
    if existing < len(parts):
        raise UnsafePathError(
            f"output directory {_relative(deepest / parts[existing], root)} (in the workspace) "
            "disappeared during the write; expected it to stay; retry the write"
        )
    _check_destination(destination, root)


def _write_temporary(
    destination: pathlib.Path, data: bytes, *, exact: pathlib.Path | None = None
) -> pathlib.Path:
    """A new temporary file next to ``destination`` (or the new file ``exact``) holding
    ``data`` (flushed and fsynced), with the mode of the file it will replace, if any."""
    previous = _lstat_or_none(destination)
    keep_mode = None if previous is None else stat.S_IMODE(previous.st_mode)
    temporary, descriptor = _create_temporary(destination, exact)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            if keep_mode is not None:
                os.chmod(handle.fileno() if os.chmod in os.supports_fd else temporary, keep_mode)
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _create_temporary(
    destination: pathlib.Path, exact: pathlib.Path | None = None
) -> tuple[pathlib.Path, int]:
    """A new empty file next to ``destination`` (named after this process, see
    :func:`evalkit.safety.scratch.temporary_path`; or ``exact``) and its open descriptor.

    ``O_EXCL`` never opens an existing file or link; mode ``0o666`` minus the umask, like any new
    file (the caller copies the mode of a file being replaced).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if exact is not None:
        return exact, os.open(exact, flags, 0o666)
    for _ in range(100):
        candidate = temporary_path(destination)
        try:
            return candidate, os.open(candidate, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {str(destination)!r}")


def _fsync_directory(directory: pathlib.Path) -> None:
    """Make the rename durable on POSIX; directories cannot be opened on Windows."""
    if os.name == "nt":
        return
    descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
