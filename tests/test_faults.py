"""Faults outside the HTTP client: hostile YAML in every kind of file, inputs that are not
regular files or have one huge line, a full disk during import, and SIGINT/SIGTERM at several
moments of ``run``, ``baseline``, ``report`` and ``import`` (what is left behind is listed).

The hostile inputs are generated in ``tmp_path`` (a 100 MB scalar is written once per kind).
"""

from __future__ import annotations

import errno
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from cli_runner import run_cli
from kill_harness import EVALKIT, start_evalkit, write_beir_collection

from evalkit.errors import EvalkitError, Interrupted
from evalkit.fixtures import load_fixture
from evalkit.gates import load_gates
from evalkit.probes.load import load_probes
from evalkit.systems.http import load_http_config

REPO = pathlib.Path(__file__).resolve().parent.parent
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"

# Nine anchors, each a list of nine aliases of the one before: 9**9 (387 million) leaves.
ALIAS_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)
DEEP = "key: " + "[" * 10_000 + "]" * 10_000 + "\n"


def huge_scalar(path: pathlib.Path, key: str = "key") -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.write(f"{key}: ")
        for _ in range(100):
            handle.write("x" * 1_000_000)
        handle.write("\n")


PAYLOADS: dict[str, Callable[[pathlib.Path], None]] = {
    "alias bomb": lambda p: p.write_text(ALIAS_BOMB, encoding="utf-8"),
    "10,000 levels": lambda p: p.write_text(DEEP, encoding="utf-8"),
    "100 MB scalar": huge_scalar,
}
EXPECTED = {
    "alias bomb": "aliases",
    "10,000 levels": "nest",  # "nested more than 64 levels", libyaml's "maximum nesting depth"
    "100 MB scalar": "",  # each kind names its own size rule, checked below
}


def _gates(tmp: pathlib.Path, write: Callable[[pathlib.Path], None]) -> None:
    path = tmp / "gates.yaml"
    write(path)
    load_gates(path)


def _probes(tmp: pathlib.Path, write: Callable[[pathlib.Path], None]) -> None:
    (tmp / "probes").mkdir()
    write(tmp / "probes" / "p.yaml")
    load_probes(tmp / "probes")


def _http(tmp: pathlib.Path, write: Callable[[pathlib.Path], None]) -> None:
    write(tmp / "svc.yaml")
    load_http_config(tmp / "svc.yaml", "svc")


def _fixture_file(name: str) -> Callable[[pathlib.Path, Callable[[pathlib.Path], None]], None]:
    def load(tmp: pathlib.Path, write: Callable[[pathlib.Path], None]) -> None:
        from conftest import TINY_FIXTURE, write_fixture

        target = write_fixture(tmp / "fixture", TINY_FIXTURE)
        write(target / name)
        load_fixture(target)

    return load


KINDS: dict[str, Callable[[pathlib.Path, Callable[[pathlib.Path], None]], None]] = {
    "gates": _gates,
    "probes": _probes,
    "http config": _http,
    "fixture": _fixture_file("fixture.yaml"),
    "aliases": _fixture_file("aliases.yaml"),
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_yaml_file_refuses_hostile_yaml_quickly(
    kind: str, payload: str, tmp_path: pathlib.Path
) -> None:
    started = time.monotonic()
    with pytest.raises(EvalkitError) as caught:
        KINDS[kind](tmp_path, PAYLOADS[payload])
    elapsed = time.monotonic() - started
    message = str(caught.value)
    assert EXPECTED[payload] in message
    if payload == "100 MB scalar":
        assert re.search(r"larger than \d+ bytes|longer than 10000000 characters", message)
    assert "Traceback" not in message
    assert elapsed < 30  # the alias bomb ran without end; the scalar is parsed at most twice


def test_an_alias_bomb_in_gates_yaml_is_exit_2_within_seconds(tmp_path: pathlib.Path) -> None:
    gates = tmp_path / "gates.yaml"
    gates.write_text(ALIAS_BOMB, encoding="utf-8")
    started = time.monotonic()
    code, _, err = run_cli(
        ["gate", str(COMMITTED), "--gates", str(gates), "--systems", "lexical"], tmp_path
    )
    assert code == 2
    assert time.monotonic() - started < 10
    assert "aliases" in err


def test_a_10000_level_http_config_is_exit_2_without_a_traceback(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "svc.yaml"
    config.write_text(DEEP, encoding="utf-8")
    result = subprocess.run(
        [str(EVALKIT), "run", str(COMMITTED), "--systems", "http:svc", "--repeats", "1"],
        cwd=tmp_path,
        env={
            **os.environ,
            "EVALKIT_HTTP_SVC_URL": "http://127.0.0.1:9/search",
            "EVALKIT_HTTP_SVC_CONFIG": str(config),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "line 1, column" in result.stderr
    assert "nested more than 64 levels deep" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_run_path_refuses_a_fifo_and_a_device_within_seconds(
    kind: str, tmp_path: pathlib.Path
) -> None:
    if kind == "fifo":
        path = tmp_path / "run.trec"
        os.mkfifo(path)
        what = "is a FIFO (named pipe), not a regular file"
    else:
        path = pathlib.Path("/dev/zero")
        what = "is a character device, not a regular file"
    started = time.monotonic()
    code, _, err = run_cli(
        ["run", str(COMMITTED), "--systems", f"run:{path}", "--repeats", "1"], tmp_path
    )
    assert code == 2
    assert time.monotonic() - started < 10
    assert what in err
    assert str(tmp_path) not in err


def test_one_huge_line_is_an_error_naming_the_line(tmp_path: pathlib.Path) -> None:
    """3 MB without a newline after one good line: refused at line 2, read in 1 MiB blocks."""
    run = tmp_path / "run.trec"
    with run.open("w", encoding="utf-8") as handle:
        handle.write("q1 Q0 c1 1 1.0 r\n")
        handle.write("q2 Q0 " + "x" * 3_000_000)
    code, _, err = run_cli(["trec-eval", "-m", "AP", str(run), str(run)], tmp_path)
    assert code == 2
    assert "line 2 is longer than 1048576 bytes" in err


def test_import_on_a_full_disk_is_an_output_error_leaving_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    source = tmp_path / "collection"
    source.mkdir()
    (source / "corpus.jsonl").write_text('{"_id": "d1", "text": "tides"}\n', "utf-8")
    (source / "queries.jsonl").write_text('{"_id": "q1", "text": "tides"}\n', "utf-8")
    (source / "qrels").mkdir()
    (source / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "utf-8")

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run_cli(
        ["import", "beir", str(source), "--output", "imported", "--license", "CC0-1.0"], tmp_path
    )
    assert code == 2, err
    assert "No space left on device" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no target, no staging


# --- signals ----------------------------------------------------------------------------------


def _leftovers(tmp: pathlib.Path, workspace: pathlib.Path) -> list[str]:
    left = [f"TMPDIR/{p.name}" for p in tmp.iterdir()]
    left += [
        str(p.relative_to(workspace))
        for p in workspace.rglob("*")
        if p.name.endswith(".tmp") or p.name.startswith(".") or p.name.startswith("evalkit-")
    ]
    return left


COMMANDS = {
    "run": ["run", str(COMMITTED), "--repeats", "16", "--output", "out/run.json"],
    "baseline": ["baseline", str(COMMITTED), "--repeats", "4", "--output", "out/baseline.json"],
    "report": ["report", str(COMMITTED), "--output", "out/report.html"],
    "import": [
        "import",
        "beir",
        "../collection",
        "--output",
        "out/imported",
        "--license",
        "CC0-1.0",
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("moment", [0.5, 1.5, 3.0])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_signal_at_any_moment_leaves_nothing_behind(
    command: str, signum: int, moment: float, tmp_path: pathlib.Path
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if command == "import":
        write_beir_collection(tmp_path / "collection", documents=40_000)  # a few seconds
    process = start_evalkit(
        COMMANDS[command], workspace, {**os.environ, "TMPDIR": str(private_tmp)}
    )
    time.sleep(moment)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err
    if process.returncode == -signum and not err:
        pass  # the signal came before the interpreter had run any of evalkit: nothing made
    elif process.returncode != 0:  # the command may have finished before the signal
        assert process.returncode == 128 + signum, err
        name = signal.Signals(signum).name
        assert err.strip().splitlines()[-1].startswith(f"evalkit: interrupted ({name}); ")
        assert not (workspace / "out").exists() or command == "report"
    assert _leftovers(private_tmp, workspace) == []
    outputs = sorted(p.name for p in (workspace / "out").glob("*")) if command == "report" else []
    assert outputs in ([], ["report.html", "report.ipynb"])  # a report pair, or nothing


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
@pytest.mark.parametrize("command", ["import", "report"])
def test_sighup_is_handled_like_sigterm(command: str, tmp_path: pathlib.Path) -> None:
    """Issue 49: a closed terminal (SIGHUP) unwinds like SIGTERM: exit 129, one line, nothing
    left. The signal comes once the command has made its temporary state."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if command == "import":
        write_beir_collection(tmp_path / "collection", documents=40_000)  # a few seconds
    made = workspace / "out" / ".evalkit-staging" if command == "import" else private_tmp
    process = start_evalkit(
        COMMANDS[command], workspace, {**os.environ, "TMPDIR": str(private_tmp)}
    )
    deadline = time.monotonic() + 60
    while not any(made.glob("*/*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 129, err
    assert err.strip().splitlines()[-1].startswith("evalkit: interrupted (SIGHUP); ")
    assert _leftovers(private_tmp, workspace) == []


_FINALIZER_SIGNAL = """
import gc, os, signal, time, weakref
from evalkit.errors import Interrupted
from evalkit.safety.interrupts import handle_signals

def signalled():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.01)

class SignalledWhileFinalized:  # like a progress bar whose __del__ runs when the signal comes
    def __del__(self):
        signalled()

class Referenced:
    pass

try:
    with handle_signals():
        if KIND == "finalizer":
            SignalledWhileFinalized()
        else:  # a weak reference's callback (importlib's module-lock callback, seen under load)
            target = Referenced()
            reference = weakref.ref(target, lambda _: signalled())
            del target
        gc.collect()
        for _ in range(200):
            time.sleep(0.01)
        print("finished")
except Interrupted as stop:
    print(f"interrupted: {stop}")
"""


@pytest.mark.parametrize("kind", ["finalizer", "weakref callback"])
def test_a_signal_inside_a_finalizer_still_interrupts_the_command(kind: str) -> None:
    """An exception raised in ``__del__`` or a weak reference's callback is printed
    ("Exception ignored in") and dropped: raised there, a Ctrl-C was lost and the command ran
    on (seen with tqdm's ``__del__``, and with importlib's module-lock callback under load). The
    signal is sent again, and raised once the finalizer has returned."""
    done = subprocess.run(
        [sys.executable, "-c", f"KIND = {kind!r}\n{_FINALIZER_SIGNAL}"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "interrupted: SIGINT", done.stderr
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_an_ordinary_finalizer_error_inside_nested_signal_blocks_reaches_the_users_hook() -> None:
    """``console()`` and ``main()`` each open ``handle_signals``: an exception that is not an
    interrupt, raised where Python drops it, goes to the hook installed before the outer block
    (it recursed through the inner block's hook before)."""
    import gc

    from evalkit.safety.interrupts import handle_signals

    seen: list[str] = []

    class Failing:
        def __del__(self) -> None:
            raise ValueError("dropped")

    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: seen.append(type(unraisable.exc_value).__name__)
    try:
        with handle_signals(), handle_signals():
            Failing()
            gc.collect()
    finally:
        sys.unraisablehook = previous
    assert seen == ["ValueError"]


class _PanicException(BaseException):
    """What PyO3 raises when a Python exception reaches Rust code that expected none: a
    ``BaseException``, not an ``Exception`` (seen as a Rust extension's panic when SIGINT
    came during ``evalkit import`` under load)."""


def test_a_signal_a_library_turned_into_a_panic_still_interrupts_the_command() -> None:
    from evalkit.safety.interrupts import handle_signals, signal_surfaces_as_interrupt

    def library_call() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except Interrupted as error:  # the library's own handling of the Python error
            raise _PanicException("called `Result::unwrap()` on an `Err` value") from error

    with pytest.raises(Interrupted) as caught, handle_signals(), signal_surfaces_as_interrupt():
        library_call()
    assert caught.value.exit_code == 128 + signal.SIGINT
    # without a signal, the same error passes unchanged
    with pytest.raises(_PanicException), handle_signals(), signal_surfaces_as_interrupt():
        raise _PanicException("a real panic")
