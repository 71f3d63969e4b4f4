"""Temporary state that the next run finds and removes, even after ``kill -9``.

Everything temporary that evalkit makes is named after the process that made it, so a later
process tells a dead process's leftovers from a live one's (git's ``gc.pid`` practice: the host
and the PID, plus the process's start time, so a reused PID is not taken for its predecessor).
A *tag* is ``<host8>-<pid>-<start>``: the first 8 hex digits of the SHA-256 of the host name,
the PID, and field 22 of ``/proc/<pid>/stat`` (``0`` without ``/proc``).

- Temporary folders (a chunk store, a report's evaluation data, the report kernel's connection
  file) live in one folder per process, ``<tmp>/evalkit-<uid>/<tag>/`` (:func:`scratch_dir`),
  where ``<tmp>`` is :func:`tempfile.gettempdir`. The root is made with mode 0700 and must be a
  real directory (not a link) owned by the user, as tmux and ssh-agent require of theirs.
- An output's temporary file is ``.<name>.<tag>-<token>.tmp`` next to it
  (:func:`temporary_path`, used by :func:`evalkit.safety.output.write_texts_atomic`).
- A write of several files that belong together (a report's HTML and notebook) writes the
  journal ``.evalkit-pending.<tag>-<token>.json`` once every temporary file is complete, renames
  them, then removes the journal. A sweep that finds a dead process's journal finishes its
  renames (roll forward, like a database's commit record): the pair is then the new one, or
  still the old one when the kill came before the journal.
- An import's staging folder is ``<parent>/.evalkit-staging/<tag>-<token>/``
  (:func:`staging_dir`), renamed to ``<parent>/<target>`` at the end (one file system). The
  container holds a ``.gitignore`` of ``*``, so ``git status`` never shows it, and is removed
  when empty (:func:`remove_staging`).

:func:`sweep` removes what dead processes of this host left: the process folders in the root,
and in the folders it is given their temporary files, journals and staging folders (with the
empty folders their import had reserved). The CLI calls it when a command starts; the writers
call it for the folders they write into. What it did is said in one line on stderr when the
command ends (:func:`release`): ``evalkit: cleaned up after an earlier evalkit process that was
stopped (pid 4242): ...``, without a path. Leftovers of another host, of a live process, or
named before this scheme are never touched.

Every command sweeps as it starts, so this module is on every command's start-up path (and
``evalkit trec-eval`` is measured against a C binary): what a sweep that finds nothing does not
need (``hashlib`` and ``socket`` for the host's digest) is imported where it is used.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from evalkit.errors import OutputError
from evalkit.safety.inputs import load_json

__all__ = [
    "STAGING_FOLDER",
    "STAGING_RECORD",
    "Swept",
    "journal_path",
    "process_folder",
    "release",
    "remove_staging",
    "scratch_dir",
    "staging_dir",
    "sweep",
    "temporary_path",
]

STAGING_FOLDER: Final = ".evalkit-staging"
STAGING_RECORD: Final = ".evalkit-reserved.json"
"""The file in a staging folder naming the folders its import reserved (removed before the
staging folder becomes the fixture)."""
_TAG: Final = r"(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-(?P<start>[0-9]+)"
# the names of what this module makes (patterns for re.fullmatch, compiled at first use: a
# sweep that finds no root, the common case, compiles none)
_FOLDER: Final = _TAG
_TOKEN: Final = rf"{_TAG}-[a-z0-9_]+"  # a staging folder: mkdtemp's suffix
_TEMPORARY: Final = rf"\..+\.{_TAG}-[0-9a-f]+\.tmp"
_JOURNAL: Final = rf"\.evalkit-pending\.{_TAG}-[0-9a-f]+\.json"
_RELEASE_REGISTERED: set[int] = set()
_FOLDER_MADE: set[int] = set()  # the PIDs whose process_folder() ran (forked children too)


@dataclass
class Swept:
    """What :func:`sweep` removed or completed, and the PIDs of the processes that left it."""

    folders: int = 0
    files: int = 0
    completed: int = 0  # interrupted writes finished (journals rolled forward)
    pids: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.folders or self.files or self.completed)

    def add(self, other: Swept) -> None:
        self.folders += other.folders
        self.files += other.files
        self.completed += other.completed
        self.pids |= other.pids

    def line(self) -> str:
        """The one line that says what was cleaned up (no path)."""
        pids = ", ".join(str(pid) for pid in sorted(self.pids))
        parts = [f"{self.folders} temporary folder(s)", f"{self.files} file(s)"]
        if self.completed:
            parts.append(f"completed {self.completed} interrupted write(s)")
        return (
            "evalkit: cleaned up after an earlier evalkit process that was stopped "
            f"(pid {pids}): {', '.join(parts)}"
        )


_PENDING: dict[int, Swept] = {}  # by PID (a forked child says nothing of its parent's sweep)


def _start_time(pid: int) -> tuple[str, str]:
    """(state, start time) of ``pid`` from ``/proc`` (``("", "0")`` without it)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "", "0"
    fields = data[data.rindex(b")") + 2 :].split()  # after the command name: field 3 on
    return fields[0].decode(), fields[19].decode()


@functools.cache
def _host8() -> str:
    """The first 8 hex digits of the SHA-256 of this host's name."""
    import hashlib  # here, not at start-up (see the module docstring)
    import socket

    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _tag(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{_host8()}-{pid}-{_start_time(pid)[1]}"


def _is_dead(match: re.Match[str]) -> bool:
    """Whether the process a tag names is gone (this host only; a live or foreign one: no).
    The host's digest is computed (``hashlib``, ``socket``) only for a PID that is not live
    here: a folder of a live process, the common case, costs a start-up nothing."""
    pid = int(match["pid"])
    return pid != os.getpid() and _pid_gone(pid, match["start"]) and match["host"] == _host8()


def _pid_gone(pid: int, start_time: str) -> bool:
    """Whether no process ``pid`` with start time ``start_time`` runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's live process
        return False
    state, start = _start_time(pid)
    return state == "Z" or (start_time != "0" and start not in ("0", start_time))


def _root_path() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"evalkit-{uid}"


def _root_exists(root: Path) -> bool:
    """Whether the root exists; raises :class:`OutputError` when it is not this user's own
    real directory."""
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return False
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or not owned:
        raise OutputError(
            f"the temporary folder {root.name} (in the system's temporary folder) is not a "
            "directory of this user; expected one evalkit made; remove it or set TMPDIR"
        )
    return True


def process_folder() -> Path:
    """This process's folder of temporary folders (created, 0700); removed by :func:`release`."""
    root = _root_path()
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    _root_exists(root)
    folder = root / _tag()
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    _FOLDER_MADE.add(os.getpid())
    _release_at_exit()
    return folder


def _release_at_exit() -> None:
    if os.getpid() not in _RELEASE_REGISTERED:
        _RELEASE_REGISTERED.add(os.getpid())
        atexit.register(release)


def scratch_dir(kind: str) -> Path:
    """A new private folder ``<kind>-<random>`` in :func:`process_folder`; the caller removes
    it when done (what a kill leaves is swept by the next run)."""
    return Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=process_folder()))


def temporary_path(destination: Path) -> Path:
    """A new name for the temporary file of ``destination``, beside it (the name is cut so the
    temporary name stays within 255 bytes)."""
    stem = os.fsencode(destination.name)[:180].decode("utf-8", errors="ignore")
    return destination.with_name(f".{stem}.{_tag()}-{os.urandom(6).hex()}.tmp")


def journal_path(folder: Path) -> Path:
    """A new name for the journal of a write of several files, in ``folder``."""
    return folder / f".evalkit-pending.{_tag()}-{os.urandom(6).hex()}.json"


def staging_dir(parent: Path, reserved: list[Path]) -> Path:
    """A new staging folder in ``parent``'s ``.evalkit-staging`` container (with its
    ``.gitignore``); ``reserved`` (empty folders the import made for its target) are recorded,
    so a sweep after a kill removes them if they are still empty."""
    container = parent / STAGING_FOLDER
    with contextlib.suppress(FileExistsError):
        os.mkdir(container)
    _ignore_all(container)
    folder = Path(tempfile.mkdtemp(prefix=f"{_tag()}-", dir=container))
    names = [os.path.relpath(path, parent) for path in reserved]
    (folder / STAGING_RECORD).write_text(json.dumps(names), encoding="utf-8")
    return folder


def remove_staging(folder: Path) -> None:
    """Remove a staging folder and, when it was the last, its container."""
    shutil.rmtree(folder, ignore_errors=True)
    _remove_container(folder.parent)


def _ignore_all(container: Path) -> None:
    ignore = container / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):
            ignore.write_text("*\n", encoding="utf-8")


def _remove_container(container: Path) -> None:
    try:
        if any(entry.name != ".gitignore" for entry in _entries(container)):
            return
        (container / ".gitignore").unlink(missing_ok=True)
        container.rmdir()
    except FileNotFoundError:
        return
    except OSError:  # another import staged meanwhile: its folder stays ignored
        _ignore_all(container)


def sweep(folders: tuple[Path, ...] = ()) -> Swept:
    """Remove what dead processes left in the root and in ``folders`` (see the module
    docstring); what was done, also kept for the line :func:`release` prints."""
    swept = Swept()
    root = _root_path()
    if _root_exists(root):
        for entry in _entries(root):
            match = re.fullmatch(_FOLDER, entry.name)
            if match and entry.is_dir(follow_symlinks=False) and _is_dead(match):
                inside = len(_entries(Path(entry.path)))
                if inside:  # an empty one is a forked worker's that ended normally: not said
                    swept.folders += inside
                    swept.pids.add(int(match["pid"]))
                shutil.rmtree(entry.path, ignore_errors=True)
    for folder in folders:
        _sweep_folder(folder, swept)
    if swept:
        _PENDING.setdefault(os.getpid(), Swept()).add(swept)
        _release_at_exit()
    return swept


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _sweep_folder(folder: Path, swept: Swept) -> None:
    entries = _entries(folder)
    for entry in entries:  # journals first: their temporary files are the new outputs
        match = re.fullmatch(_JOURNAL, entry.name)
        if match and _is_dead(match):
            swept.completed += _roll_forward(folder, Path(entry.path))
            swept.pids.add(int(match["pid"]))
    for entry in _entries(folder):
        match = re.fullmatch(_TEMPORARY, entry.name)
        if match and entry.is_file(follow_symlinks=False) and _is_dead(match):
            Path(entry.path).unlink(missing_ok=True)
            swept.files += 1
            swept.pids.add(int(match["pid"]))
    container = folder / STAGING_FOLDER
    for entry in _entries(container):
        match = re.fullmatch(_TOKEN, entry.name)
        if match and entry.is_dir(follow_symlinks=False) and _is_dead(match):
            reserved = _reserved(Path(entry.path))
            shutil.rmtree(entry.path, ignore_errors=True)
            swept.folders += 1
            swept.pids.add(int(match["pid"]))
            _remove_container(container)
            for name in reserved:  # deepest first, each only if still empty
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.normpath(folder / name))


def _reserved(staging: Path) -> list[str]:
    try:
        names = load_json((staging / STAGING_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _roll_forward(folder: Path, journal: Path) -> int:
    """Finish the renames a dead process's journal lists; 1 if it was read, else 0."""
    try:
        pairs = load_json(journal.read_text(encoding="utf-8"))  # depth-checked: a file on disk
    except (OSError, ValueError):
        pairs = None
    done = 0
    if isinstance(pairs, list):
        for pair in pairs:
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair):
                temporary, destination = folder / pair[0], folder / pair[1]
                if temporary.is_file() and not temporary.is_symlink():
                    os.replace(temporary, destination)
        done = 1
    journal.unlink(missing_ok=True)
    return done


def release() -> None:
    """Remove this process's folder (and empty folders of dead processes, such as forked
    workers'), the root when it is empty, and print the line of what :func:`sweep` did."""
    root = _root_path()
    try:
        present = _root_exists(root)
    except OutputError:  # not evalkit's: left alone
        present = False
    if present:
        if os.getpid() in _FOLDER_MADE:  # else there is none (and no host digest to compute)
            shutil.rmtree(root / _tag(), ignore_errors=True)
        for entry in _entries(root):
            match = re.fullmatch(_FOLDER, entry.name)
            if match and _is_dead(match):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)
        with contextlib.suppress(OSError):
            root.rmdir()
    pending = _PENDING.pop(os.getpid(), None)
    if pending:
        print(pending.line(), file=sys.stderr)
