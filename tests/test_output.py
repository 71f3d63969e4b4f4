"""Tests for evalkit.safety.output: safe output paths and atomic writes.

Every refusal test compares a listing of the workspace (and of a directory outside it) before
and after: a refused path must leave the disk untouched.
"""

from __future__ import annotations

import os
import pathlib
import re
import stat
import subprocess
import sys
from collections.abc import Callable

import pytest

from evalkit.errors import EvalkitError, InputError, OutputError, UnsafePathError
from evalkit.safety.output import (
    output_path_from_env,
    resolve_output_path,
    write_text_atomic,
    write_texts_atomic,
)

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX path semantics")

Listing = dict[str, tuple[str, bytes]]


def listing(root: pathlib.Path) -> Listing:
    """Every entry under ``root``: kind and content (file bytes, link target); links unfollowed."""
    entries: Listing = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = pathlib.Path(directory, name)
            key = full.relative_to(root).as_posix()
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                entries[key] = ("link", os.readlink(full).encode())
            elif stat.S_ISDIR(mode):
                entries[key] = ("dir", b"")
            elif stat.S_ISREG(mode):
                entries[key] = ("file", full.read_bytes())
            else:  # never open a named pipe: reading it would block
                entries[key] = ("special", b"")
    return entries


@pytest.fixture
def workspace(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A workspace directory (the current directory) next to an ``outside`` directory."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "reports").mkdir()
    (root / "reports" / "old.json").write_text("{}\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def assert_refused(
    workspace: pathlib.Path,
    path: str,
    match: str | None,
    call: Callable[[str], object] | None = None,
) -> str:
    """``path`` is refused with UnsafePathError and nothing changes on disk; the message."""
    outside = workspace.parent / "outside"
    before = (listing(workspace), listing(outside))
    for function in [call] if call else [resolve_output_path, _write]:
        with pytest.raises(UnsafePathError, match=match) as info:
            function(path)
        assert (listing(workspace), listing(outside)) == before
    return str(info.value)


def _write(path: str) -> pathlib.Path:
    return write_text_atomic(path, '{"a": 1}\n')


# --- lexical refusals -------------------------------------------------------------------------


def test_empty_path_refused(workspace: pathlib.Path) -> None:
    message = assert_refused(workspace, "", "is empty")
    assert "expected" in message


def test_nul_byte_refused(workspace: pathlib.Path) -> None:
    message = assert_refused(workspace, "reports/a\0b.json", "NUL byte at character 9")
    assert "\0" not in message


def test_absolute_posix_path_refused(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "/tmp/report.json", "is absolute")


def test_absolute_path_inside_workspace_refused(workspace: pathlib.Path) -> None:
    assert_refused(workspace, str(workspace / "reports" / "new.json"), "absolute")


@pytest.mark.parametrize("path", ["C:\\x", "C:/x", "c:x", "Z:\\reports\\run.json"])
def test_windows_drive_path_refused(workspace: pathlib.Path, path: str) -> None:
    assert_refused(workspace, path, "Windows drive")


@pytest.mark.parametrize("path", ["\\\\server\\share\\x", "//server/share/x", "\\\\?\\C:\\x"])
def test_unc_path_refused(workspace: pathlib.Path, path: str) -> None:
    assert_refused(workspace, path, "UNC")


@pytest.mark.parametrize(
    ("path", "component"),
    [("../x.json", 1), ("reports/../x.json", 2), ("reports/..", 2), ("a/b/../../x", 3)],
)
def test_dot_dot_refused(workspace: pathlib.Path, path: str, component: int) -> None:
    message = assert_refused(workspace, path, r"'\.\.' component")
    assert f"component {component}" in message


def test_dot_dot_after_dot_components_refused(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "./reports/./../x.json", r"'\.\.'")


@posix_only
def test_backslash_refused_on_posix(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "reports\\..\\x.json", "backslash")


@pytest.mark.parametrize(
    ("path", "match"),
    [
        ("reports/", "ends with a separator"),
        ("./", "ends with a separator"),
        (".", "names the workspace itself"),
        ("reports/.", "existing directory"),
    ],
)
def test_path_must_name_a_file(workspace: pathlib.Path, path: str, match: str) -> None:
    assert_refused(workspace, path, match)


def test_bytes_path_refused(workspace: pathlib.Path) -> None:
    with pytest.raises(UnsafePathError, match="must be text"):
        resolve_output_path(b"x.json")  # type: ignore[arg-type]


# --- symbolic links ---------------------------------------------------------------------------


def test_symlinked_parent_inside_workspace_refused(workspace: pathlib.Path) -> None:
    (workspace / "alias").symlink_to(workspace / "reports", target_is_directory=True)
    message = assert_refused(workspace, "alias/new.json", "symbolic link")
    assert "'alias'" in message


def test_symlinked_parent_outside_workspace_refused(workspace: pathlib.Path) -> None:
    (workspace / "escape").symlink_to(workspace.parent / "outside", target_is_directory=True)
    assert_refused(workspace, "escape/keep.txt", "symbolic link")
    assert_refused(workspace, "escape/sub/new.json", "symbolic link")


def test_symlink_deep_in_the_path_refused(workspace: pathlib.Path) -> None:
    (workspace / "reports" / "deep").symlink_to(workspace.parent / "outside")
    message = assert_refused(workspace, "reports/deep/new.json", "symbolic link")
    assert "'reports/deep'" in message


def test_symlink_at_destination_refused(workspace: pathlib.Path) -> None:
    (workspace / "reports" / "link.json").symlink_to(workspace / "reports" / "old.json")
    (workspace / "reports" / "dangling.json").symlink_to(workspace.parent / "outside" / "new")
    assert_refused(workspace, "reports/link.json", "symbolic link")
    assert_refused(workspace, "reports/dangling.json", "symbolic link")


def test_symlink_swapped_in_between_two_writes(workspace: pathlib.Path) -> None:
    write_text_atomic("out/run.json", "first\n")
    assert (workspace / "out" / "run.json").read_text(encoding="utf-8") == "first\n"
    (workspace / "out").rename(workspace / "moved")
    (workspace / "out").symlink_to(workspace.parent / "outside", target_is_directory=True)
    assert_refused(workspace, "out/run.json", "symbolic link", call=_write)
    assert not (workspace.parent / "outside" / "run.json").exists()


def test_symlink_swapped_in_during_a_write(
    workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-check before the rename catches a link that appeared after path resolution."""
    outside = workspace.parent / "outside"
    before_outside = listing(outside)
    real_fsync = os.fsync
    swapped: list[bool] = []

    def fsync_then_swap(descriptor: int) -> None:
        real_fsync(descriptor)
        if not swapped:
            (workspace / "reports").rename(workspace / "moved")
            (workspace / "reports").symlink_to(outside, target_is_directory=True)
            swapped.append(True)

    monkeypatch.setattr(os, "fsync", fsync_then_swap)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        write_text_atomic("reports/old.json", "new\n")
    assert listing(outside) == before_outside
    assert (workspace / "moved" / "old.json").read_text(encoding="utf-8") == "{}\n"


# --- destination and workspace ----------------------------------------------------------------


def test_destination_is_a_directory_refused(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "reports", "existing directory")


def test_parent_is_a_file_refused(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "reports/old.json/x.json", "not a directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_special_file_destination_refused(workspace: pathlib.Path) -> None:
    os.mkfifo(workspace / "reports" / "pipe")
    assert_refused(workspace, "reports/pipe", "special file")


def test_missing_workspace_refused(tmp_path: pathlib.Path) -> None:
    before = listing(tmp_path)
    with pytest.raises(UnsafePathError, match="does not exist"):
        resolve_output_path("x.json", workspace=tmp_path / "missing")
    with pytest.raises(UnsafePathError, match="does not exist"):
        write_text_atomic("x.json", "x", workspace=tmp_path / "missing")
    assert listing(tmp_path) == before


def test_workspace_that_is_a_file_refused(tmp_path: pathlib.Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UnsafePathError, match="not a directory"):
        resolve_output_path("x.json", workspace=tmp_path / "file")


def test_unsafe_path_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        resolve_output_path("", workspace=".")
    assert issubclass(UnsafePathError, EvalkitError)


# --- resolution -------------------------------------------------------------------------------


def test_resolves_inside_the_current_directory(workspace: pathlib.Path) -> None:
    before = listing(workspace)
    result = resolve_output_path("reports/new.json")
    assert result == workspace / "reports" / "new.json"
    assert result.is_absolute()
    assert listing(workspace) == before  # nothing new: the parent existed


def test_the_check_creates_no_missing_parent(workspace: pathlib.Path) -> None:
    before = listing(workspace)
    result = resolve_output_path(pathlib.Path("a") / "b" / "c" / "run.json")
    assert result == workspace / "a" / "b" / "c" / "run.json"
    assert listing(workspace) == before  # parents are created only when writing


def test_missing_parents_are_created_by_the_write(workspace: pathlib.Path) -> None:
    result = write_text_atomic(pathlib.Path("a") / "b" / "c" / "run.json", "x\n")
    assert result == workspace / "a" / "b" / "c" / "run.json"
    for directory in ("a", "a/b", "a/b/c"):
        info = os.lstat(workspace / directory)
        assert stat.S_ISDIR(info.st_mode)
    assert result.read_bytes() == b"x\n"


def test_explicit_workspace(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert resolve_output_path("x/y.json", workspace=other) == other / "x" / "y.json"
    assert write_text_atomic("x/y.json", "y\n", workspace=other) == other / "x" / "y.json"
    assert (other / "x").is_dir()
    assert not (workspace / "x").exists()


def test_dot_and_empty_components_are_skipped(workspace: pathlib.Path) -> None:
    assert resolve_output_path("./reports//./new.json") == workspace / "reports" / "new.json"


def test_workspace_environment_variable_is_ignored(
    workspace: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_WORKSPACE", str(tmp_path / "outside"))
    assert resolve_output_path("x.json") == workspace / "x.json"


# --- atomic writes ----------------------------------------------------------------------------


def test_write_creates_and_replaces(workspace: pathlib.Path) -> None:
    path = write_text_atomic("reports/run.json", "one\n")
    assert path == workspace / "reports" / "run.json"
    assert path.read_bytes() == b"one\n"
    write_text_atomic("reports/run.json", "two\n")
    assert path.read_bytes() == b"two\n"
    assert sorted(os.listdir(workspace / "reports")) == ["old.json", "run.json"]


def test_unicode_and_newlines_round_trip(workspace: pathlib.Path) -> None:
    text = "中文 · Ελληνικά · emoji 🙂\r\nline two\n"
    path = write_text_atomic("u.txt", text)
    assert path.read_bytes() == text.encode("utf-8")  # no newline translation
    assert path.read_bytes().decode("utf-8") == text


def test_replacing_keeps_the_file_mode(workspace: pathlib.Path) -> None:
    old = workspace / "reports" / "old.json"
    old.chmod(0o640)
    write_text_atomic("reports/old.json", "new\n")
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o640
    assert old.read_bytes() == b"new\n"


@posix_only
def test_new_file_mode_follows_umask(workspace: pathlib.Path) -> None:
    previous = os.umask(0o027)
    try:
        path = write_text_atomic("fresh.json", "x\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640  # 0o666 & ~0o027


def _assert_previous_kept(workspace: pathlib.Path, before: Listing) -> None:
    assert listing(workspace) == before
    assert (workspace / "reports" / "old.json").read_bytes() == b"{}\n"
    assert not [name for name in os.listdir(workspace / "reports") if name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("function", "error", "match"),
    [
        ("replace", OSError(28, "No space left on device"), "No space left"),
        ("fsync", OSError(5, "Input/output error"), "Input/output"),
        ("fsync", KeyboardInterrupt(), None),
    ],
    ids=["failed-rename", "failed-fsync", "interrupt-during-write"],
)
def test_failed_write_keeps_previous_and_removes_temporary(
    workspace: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    function: str,
    error: BaseException,
    match: str | None,
) -> None:
    before = listing(workspace)

    def failing(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(os, function, failing)
    with pytest.raises(type(error), match=match):
        write_text_atomic("reports/old.json", "new content\n")
    _assert_previous_kept(workspace, before)


def test_text_that_cannot_be_encoded_writes_nothing(workspace: pathlib.Path) -> None:
    before = listing(workspace)
    with pytest.raises(InputError, match=r"not valid Unicode.*character 3"):
        write_text_atomic("reports/old.json", "abc\udc80def")
    _assert_previous_kept(workspace, before)


# --- output_path_from_env ---------------------------------------------------------------------


def test_output_path_cli_value_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_OUTPUT", "env.json")
    assert output_path_from_env("cli.json") == "cli.json"
    assert output_path_from_env("") == ""  # explicit, so resolve_output_path refuses it


def test_output_path_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_OUTPUT", "reports/env.json")
    assert output_path_from_env(None) == "reports/env.json"


@pytest.mark.parametrize("value", [None, ""])
def test_output_path_defaults_to_none(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("EVALKIT_OUTPUT", raising=False)
    else:
        monkeypatch.setenv("EVALKIT_OUTPUT", value)
    assert output_path_from_env(None) is None


# --- issue 16: control characters, length limits, unwritable folders, no leftovers -----------


@pytest.mark.parametrize(
    ("character", "code"),
    [
        ("\n", "U+000A"),
        ("\r", "U+000D"),
        ("\x1b", "U+001B"),
        ("\t", "U+0009"),
        ("\x7f", "U+007F"),
        ("\x85", "U+0085"),  # C1 next line
        ("\x9b", "U+009B"),  # C1 control sequence introducer
        ("\u2028", "U+2028"),  # line separator
        ("\u202e", "U+202E"),  # right-to-left override
    ],
)
def test_control_characters_refused(workspace: pathlib.Path, character: str, code: str) -> None:
    message = assert_refused(
        workspace, f"reports/a{character}b.json", rf"{re.escape(code)}.*character 9"
    )
    assert character not in message


def test_control_character_in_a_new_folder_creates_nothing(workspace: pathlib.Path) -> None:
    assert_refused(workspace, "new\x1b[31m/x.json", r"U\+001B")


def test_overlong_file_name_refused(workspace: pathlib.Path) -> None:
    message = assert_refused(workspace, "reports/" + "a" * 300 + ".json", "305 bytes long")
    assert "a" * 50 not in message


def test_overlong_multibyte_name_counts_bytes(workspace: pathlib.Path) -> None:
    # 100 characters of 3 UTF-8 bytes each: 300 bytes, over the 255-byte NAME_MAX of ext4/tmpfs.
    assert_refused(workspace, "中" * 100 + ".json", "305 bytes long")


def test_overlong_whole_path_refused(workspace: pathlib.Path) -> None:
    path = "/".join(["d" * 200] * 25) + "/x.json"  # ~5,000 bytes: over PATH_MAX (4096)
    assert_refused(workspace, path, "full path")


def test_longest_allowed_name_is_written(workspace: pathlib.Path) -> None:
    name = "n" * 250 + ".json"  # 255 bytes: the temporary file's name is cut to fit
    assert write_text_atomic(name, "x\n").read_bytes() == b"x\n"
    assert sorted(os.listdir(workspace)) == sorted(["reports", name])


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux sysfs")
def test_unwritable_folder_refused_even_for_root(tmp_path: pathlib.Path) -> None:
    # sysfs refuses new files to every user, root included (os.access would say "writable").
    for call in (
        lambda: resolve_output_path("x.json", workspace="/sys/kernel"),
        lambda: write_text_atomic("x.json", "x\n", workspace="/sys/kernel"),
    ):
        with pytest.raises(UnsafePathError, match="does not accept new files"):
            call()
    assert not os.path.exists("/sys/kernel/x.json")


@posix_only
def test_read_only_folder_refused(workspace: pathlib.Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write into a read-only folder")
    (workspace / "reports").chmod(0o555)
    try:
        assert_refused(workspace, "reports/new/x.json", "does not accept new files")
    finally:
        (workspace / "reports").chmod(0o755)


def test_failed_write_removes_the_folders_it_created(
    workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = listing(workspace)

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OutputError, match="Permission denied"):
        write_text_atomic("reports/new/deeper/x.json", "x\n")
    assert listing(workspace) == before


def test_output_error_is_an_os_error_and_names_no_path(
    workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(workspace / "reports"))

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="No space left on device") as info:
        write_text_atomic("reports/x.json", "x\n")
    assert isinstance(info.value, OutputError)
    assert isinstance(info.value, EvalkitError)
    assert str(workspace) not in str(info.value)


def test_token_like_component_is_not_echoed(workspace: pathlib.Path) -> None:
    token = "sk-proj-" + "A1b2C3d4" * 4
    (workspace / "target").mkdir()
    (workspace / token).symlink_to(workspace / "target")
    message = assert_refused(workspace, f"{token}/x.json", "symbolic link")
    assert token not in message
    assert "not shown" in message


def test_several_files_are_all_checked_before_any_is_written(workspace: pathlib.Path) -> None:
    before = listing(workspace)
    with pytest.raises(UnsafePathError, match=r"U\+000A"):
        write_texts_atomic([("reports/a.html", "a"), ("new/b\n.ipynb", "b")])
    assert listing(workspace) == before
    written = write_texts_atomic([("reports/a.html", "a"), ("new/b.ipynb", "b")])
    assert [p.read_text() for p in written] == ["a", "b"]


# --- kill -9 in the middle of a write (issue 49) -------------------------------------------

_KILLED_WRITE = """
import os, signal, sys
from evalkit.safety import output
replaced = []
real = os.replace
def replace(source, destination):
    if len(replaced) == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)
    real(source, destination)
    replaced.append(destination)
if sys.argv[1] == "journal":
    real_journal = output._write_journal
    def journal(*args):
        real_journal(*args)
        os.kill(os.getpid(), signal.SIGKILL)
    output._write_journal = journal
else:
    os.replace = replace
output.write_texts_atomic([("reports/r.html", "new html"), ("reports/r.ipynb", "new ipynb")])
"""


def _names(folder: pathlib.Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name != "old.json")  # the workspace's


def _child(workspace: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-c", *args],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


@posix_only
@pytest.mark.parametrize("moment", ["0", "1", "journal"])
def test_a_killed_pair_write_is_completed_by_the_next_write(
    moment: str, workspace: pathlib.Path
) -> None:
    """A report's HTML and notebook are written together; a SIGKILL before the first rename,
    after the journal, or between the two renames (which left a new HTML, an old notebook and a
    stale ``.tmp``) is finished by the next write into the folder, with one line."""
    write_texts_atomic([("reports/r.html", "old html"), ("reports/r.ipynb", "old ipynb")])
    killed = _child(workspace, _KILLED_WRITE, moment)
    assert killed.returncode == -9, killed.stderr
    reports = workspace / "reports"
    assert any(name.endswith(".tmp") for name in _names(reports))  # what the kill left
    after = _child(
        workspace,
        "from evalkit.safety.output import write_text_atomic; "
        "write_text_atomic('reports/other.json', '{}')",
    )
    assert after.returncode == 0, after.stderr
    assert _names(reports) == ["other.json", "r.html", "r.ipynb"]  # no .tmp, journal
    pair = ((reports / "r.html").read_text(), (reports / "r.ipynb").read_text())
    assert pair == ("new html", "new ipynb")  # rolled forward: the journal was committed
    lines = after.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("evalkit: cleaned up after an earlier evalkit process")
    assert "completed 1 interrupted write(s)" in lines[0]
    assert str(workspace) not in lines[0]


@posix_only
def test_a_write_killed_before_its_journal_keeps_the_old_pair(workspace: pathlib.Path) -> None:
    write_texts_atomic([("reports/r.html", "old html"), ("reports/r.ipynb", "old ipynb")])
    script = _KILLED_WRITE.replace(
        "output.write_texts_atomic",
        "output._write_journal = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        "output.write_texts_atomic",
    )
    assert _child(workspace, script, "9").returncode == -9
    reports = workspace / "reports"
    assert len(_names(reports)) == 4  # two temporary files, no journal
    after = _child(
        workspace,
        "from evalkit.safety.output import write_text_atomic; "
        "write_text_atomic('reports/other.json', '{}')",
    )
    assert _names(reports) == ["other.json", "r.html", "r.ipynb"]
    assert (reports / "r.html").read_text() == "old html"
    assert (reports / "r.ipynb").read_text() == "old ipynb"
    assert "2 file(s)" in after.stderr


@posix_only
def test_temporary_files_of_a_live_process_or_another_host_are_kept(
    workspace: pathlib.Path,
) -> None:
    from evalkit.safety.scratch import sweep, temporary_path

    reports = workspace / "reports"
    reports.mkdir(exist_ok=True)
    live = temporary_path(reports / "r.html")  # this process's: alive
    live.write_text("x")
    foreign = reports / ".r.html.0123abcd-1-0-aaaaaaaaaaaa.tmp"  # another host's
    foreign.write_text("x")
    old_style = reports / ".r.html.0123456789ab.tmp"  # from before process tags: unknown owner
    old_style.write_text("x")
    assert not sweep((reports,))
    assert _names(reports) == sorted([live.name, foreign.name, old_style.name])


@posix_only
@pytest.mark.parametrize("path", ["reports/../../x", "reports/sub/../../fx", "reports/a\x1bb"])
def test_dump_fixture_creates_no_folder_before_refusing(
    path: str, workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """Issue 49: dump_fixture checked nothing and made ``reports/`` (and wrote outside the
    workspace) before any check."""
    from conftest import TINY_FIXTURE, write_fixture

    from evalkit.fixtures import dump_fixture, load_fixture

    fixture = load_fixture(write_fixture(tmp_path / "source", TINY_FIXTURE))
    before, outside = listing(workspace), listing(tmp_path)
    with pytest.raises(UnsafePathError):
        dump_fixture(fixture, path)
    assert listing(workspace) == before
    assert listing(tmp_path) == outside


def test_dump_fixture_makes_missing_folders_and_writes_into_existing_ones(
    workspace: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    from conftest import TINY_FIXTURE, write_fixture

    from evalkit.fixtures import dump_fixture, load_fixture

    fixture = load_fixture(write_fixture(tmp_path / "source", TINY_FIXTURE))
    dump_fixture(fixture, "reports/new/fx")
    dump_fixture(fixture, workspace / "reports" / "new" / "fx")  # absolute, existing
    assert load_fixture(workspace / "reports" / "new" / "fx") == fixture
