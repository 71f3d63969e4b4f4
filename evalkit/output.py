"""Safe, workspace-relative output paths and atomic text writes.

Rules for an output path (anything else is refused with :class:`~evalkit.errors.UnsafePathError`
before anything on disk changes; the CLI exits 2):

- It is relative to the *workspace*: the ``workspace`` argument, else the current working
  directory. There is deliberately no environment variable for the workspace: the workspace is
  the boundary of what evalkit may write, and a stray variable must not widen it silently. The
  workspace must be an existing directory; it and its ancestors are trusted (they may be links).
- Not empty, no NUL byte, not absolute: no leading ``/``, no Windows drive (``C:\\x``, ``C:/x``,
  ``C:x``), no UNC/device prefix (``\\\\server\\share``, ``//server/share``).
- Components are separated by ``/`` (also ``\\`` on Windows). On POSIX a ``\\`` is refused,
  because the same path would climb or nest differently on Windows. Empty and ``.`` components
  are skipped; a ``..`` component anywhere is refused; the path must name a file (it cannot end
  with a separator or be just ``.``).
- Below the workspace, every existing component is checked with ``os.lstat`` (links are never
  followed): a symbolic link anywhere — pointing inside or outside the workspace — is refused,
  and so is a parent that is not a directory, or a destination that is a directory or not a
  regular file. Missing parent directories are created one at a time and each is re-checked to
  be a real directory.

:func:`write_text_atomic` encodes the text as UTF-8 (no newline translation), writes it to a new
temporary file ``.<name>.<random>.tmp`` in the destination directory (created with mode
``0o666`` minus the umask, like any new file, or with the mode of the file it replaces), flushes
and fsyncs it, re-checks the whole path, renames it into place with ``os.replace`` and fsyncs
the directory (POSIX). On any error the temporary file is removed and a previous file is left
byte-identical. Residual races (closing them needs ``dir_fd``-relative calls, which Windows
lacks): a link swapped in between the final check and the rename is not detected, and when a
parent directory is swapped for a link mid-write the refusal cannot find the temporary file to
remove it (it stays, hidden, in the moved directory).

:func:`output_path_from_env` picks the output path: the CLI's ``--output`` value, else the
``EVALKIT_OUTPUT`` environment variable (empty counts as unset), else ``None`` (write nothing).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
import stat
from collections.abc import Sequence

from evalkit.errors import InputError, UnsafePathError

__all__ = ["output_path_from_env", "resolve_output_path", "write_text_atomic"]

OUTPUT_ENV_VAR = "EVALKIT_OUTPUT"

_SEPARATORS = "/\\" if os.name == "nt" else "/"
_FIX_RELATIVE = "give a path relative to the workspace, e.g. reports/run.json"


def output_path_from_env(cli_value: str | None) -> str | None:
    """The ``--output`` value if given, else ``$EVALKIT_OUTPUT`` if non-empty, else ``None``."""
    if cli_value is not None:
        return cli_value
    return os.environ.get(OUTPUT_ENV_VAR) or None


def resolve_output_path(
    path: str | os.PathLike[str], *, workspace: str | os.PathLike[str] | None = None
) -> pathlib.Path:
    """Check ``path`` against the rules above, create missing parents; the absolute destination.

    Raises :class:`UnsafePathError` (nothing written) when a rule is broken.
    """
    return _resolve(path, _workspace_root(workspace))


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, workspace: str | os.PathLike[str] | None = None
) -> pathlib.Path:
    """Write ``text`` (UTF-8) to the checked ``path`` atomically; the absolute final path.

    Raises :class:`UnsafePathError` for a refused path, :class:`InputError` for text that is not
    valid Unicode (both before anything is written); ``OSError`` from the file system propagates
    after the temporary file is removed.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"write_text_atomic: the text for {os.fspath(path)!r} is not valid Unicode (lone "
            f"surrogate at character {error.start}); expected text that encodes as UTF-8"
        ) from None
    root = _workspace_root(workspace)
    destination = _resolve(path, root)
    previous = _lstat_or_none(destination)
    keep_mode = None if previous is None else stat.S_IMODE(previous.st_mode)
    temporary, descriptor = _create_temporary(destination)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            if keep_mode is not None:
                os.chmod(handle.fileno() if os.chmod in os.supports_fd else temporary, keep_mode)
            os.fsync(handle.fileno())
        _recheck(destination, root)
        os.replace(temporary, destination)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(destination.parent)
    return destination


def _resolve(path: str | os.PathLike[str], root: pathlib.Path) -> pathlib.Path:
    parents, name = _split_relative(path)
    destination = _check_parents(parents, root, create=True) / name
    _check_destination(destination, root)
    return destination


def _workspace_root(workspace: str | os.PathLike[str] | None) -> pathlib.Path:
    root = pathlib.Path(os.path.abspath(os.getcwd() if workspace is None else workspace))
    if not root.is_dir():
        raise UnsafePathError(
            f"workspace {str(root)!r} does not exist or is not a directory; expected an "
            "existing directory; create it or pass another workspace"
        )
    return root


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
    if raw[:2] in ("//", "\\\\", "/\\", "\\/"):
        raise UnsafePathError(
            f"output path {raw!r} is a UNC/device path; expected a workspace-relative path; "
            f"{_FIX_RELATIVE}"
        )
    if raw[:1] in ("/", "\\"):
        raise UnsafePathError(
            f"output path {raw!r} is absolute; expected a workspace-relative path; {_FIX_RELATIVE}"
        )
    if len(raw) >= 2 and raw[1] == ":" and raw[0].isascii() and raw[0].isalpha():
        raise UnsafePathError(
            f"output path {raw!r} starts with a Windows drive ({raw[:2]}); expected a "
            f"workspace-relative path; {_FIX_RELATIVE}"
        )
    if "\\" in raw and "\\" not in _SEPARATORS:
        raise UnsafePathError(
            f"output path {raw!r} contains a backslash at character {raw.index(chr(92))}; "
            "expected '/' as the only separator; use '/' between directories"
        )
    if raw[-1] in _SEPARATORS:
        raise UnsafePathError(
            f"output path {raw!r} ends with a separator; expected a file name at the end; "
            "add the file name, e.g. reports/run.json"
        )
    for separator in _SEPARATORS[1:]:
        raw = raw.replace(separator, "/")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        index = parts.index("..")
        raise UnsafePathError(
            f"output path {os.fspath(path)!r} has a '..' component (component {index + 1}); "
            f"expected a path that stays inside the workspace; {_FIX_RELATIVE}"
        )
    if not parts:
        raise UnsafePathError(
            f"output path {os.fspath(path)!r} names the workspace itself; expected a file name; "
            f"{_FIX_RELATIVE}"
        )
    return parts[:-1], parts[-1]


def _relative(target: pathlib.Path, root: pathlib.Path) -> str:
    return target.relative_to(root).as_posix()


def _lstat_or_none(target: pathlib.Path) -> os.stat_result | None:
    try:
        return os.lstat(target)
    except FileNotFoundError:
        return None


def _check_directory(target: pathlib.Path, root: pathlib.Path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(
            f"output path component {_relative(target, root)!r} (under workspace {str(root)!r}) "
            "is a symbolic link; expected a real directory; remove the link or write elsewhere"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(
            f"output path component {_relative(target, root)!r} (under workspace {str(root)!r}) "
            "is not a directory; expected a directory; rename it or choose another path"
        )


def _check_parents(parts: Sequence[str], root: pathlib.Path, *, create: bool) -> pathlib.Path:
    """Check each parent below ``root`` is a real directory (creating missing ones if
    ``create``, else refusing them); the innermost one."""
    current = root
    for part in parts:
        current = current / part
        info = _lstat_or_none(current)
        if info is None:
            if not create:
                raise UnsafePathError(
                    f"output directory {_relative(current, root)!r} (under workspace "
                    f"{str(root)!r}) disappeared during the write; expected it to stay; retry the "
                    "write"
                )
            with contextlib.suppress(FileExistsError):  # created meanwhile: checked below
                os.mkdir(current)
            info = os.lstat(current)
        _check_directory(current, root, info)
    return current


def _check_destination(destination: pathlib.Path, root: pathlib.Path) -> None:
    info = _lstat_or_none(destination)
    if info is None:
        return
    where = f"output path {_relative(destination, root)!r} (under workspace {str(root)!r})"
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(
            f"{where} is a symbolic link; expected a regular file or nothing; "
            "remove the link or choose another file name"
        )
    if stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(
            f"{where} is an existing directory; expected a file name; "
            "add the file name, e.g. reports/run.json"
        )
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(
            f"{where} is a special file (not a regular file); expected a regular file or "
            "nothing; choose another file name"
        )


def _recheck(destination: pathlib.Path, root: pathlib.Path) -> None:
    """Re-run the link checks (without creating anything) just before the rename."""
    _check_parents(destination.relative_to(root).parts[:-1], root, create=False)
    _check_destination(destination, root)


def _create_temporary(destination: pathlib.Path) -> tuple[pathlib.Path, int]:
    """A new empty file next to ``destination`` and its open descriptor.

    ``O_EXCL`` never opens an existing file or link; mode ``0o666`` minus the umask, like any new
    file (the caller copies the mode of a file being replaced).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        candidate = destination.with_name(f".{destination.name[:200]}.{secrets.token_hex(6)}.tmp")
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
