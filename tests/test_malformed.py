"""The malformed-input corpus: one case per rule in ``tests/malformed/<case>/``, each run through
the real command line (:func:`evalkit.cli.main`).

A case directory holds its input files and ``case.yaml``::

    rule:     what the case breaks (one rule per case)
    command:  evalkit's argv, run in a copy of the case directory
    exit:     the exit code (1 a failed check, 2 a usage or input error)
    expect:   fragments the output must contain: the file and the place (line, column, ID)
    never:    fragments that must not appear (secret or fixture text from the input)
    absent:   fragments that must not appear (false follow-up problems)
    fixture:  true: the tiny fixture of conftest is written to fixture/ first, then the case's
              fixture/ files replace its files
    remove:   paths removed after that
    setup:    {fifo: [path], directory: [path], symlink: {link: target}} made at run time
              (git cannot hold a FIFO)

Every case also asserts: no traceback, a single paragraph of output (no blank line), no file
created, changed or removed, no text of the tiny fixture echoed, and no hang (a 20 s alarm; the
FIFO cases run in a subprocess with a 60 s timeout, since a read blocked in C ignores alarms).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from badinput import run_cli, snapshot
from conftest import TINY_FIXTURE, write_fixture

CORPUS = Path(__file__).parent / "malformed"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "case.yaml").is_file())


def _fixture_texts() -> list[str]:
    texts = [TINY_FIXTURE["fixture.yaml"]["description"]]
    for name in ("documents.yaml", "chunks.yaml", "queries.yaml"):
        for item in TINY_FIXTURE[name]:
            texts += [item[key] for key in ("title", "text") if key in item]
    return texts


FIXTURE_TEXTS = _fixture_texts()


def prepare(name: str, work: Path) -> dict[str, Any]:
    """Copy case ``name`` to ``work`` and apply its fixture/remove/setup keys; its spec."""
    source = CORPUS / name
    spec: dict[str, Any] = yaml.safe_load((source / "case.yaml").read_text(encoding="utf-8"))
    work.mkdir()
    if spec.get("fixture"):
        write_fixture(work / "fixture", TINY_FIXTURE)
    shutil.copytree(source, work, dirs_exist_ok=True, symlinks=True)
    (work / "case.yaml").unlink()
    for path in spec.get("remove", []):
        (work / path).unlink()
    setup = spec.get("setup", {})
    for path in setup.get("fifo", []):
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(work / path)
    for path in setup.get("directory", []):
        (work / path).mkdir(parents=True)
    for link, target in setup.get("symlink", {}).items():
        (work / link).parent.mkdir(parents=True, exist_ok=True)
        (work / link).symlink_to(target)
    return spec


class Hung(Exception):
    """The command did not finish in time."""


def _alarm(signum: int, frame: object) -> None:
    raise Hung


@pytest.fixture
def no_hang() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_output(output: str, *, never: list[str]) -> None:
    """The assertions every malformed input shares (beyond its own fragments)."""
    assert "Traceback" not in output
    assert output.strip(), "a malformed input must produce a message"
    assert "\n\n" not in output.strip(), f"more than one paragraph:\n{output}"
    for text in [*FIXTURE_TEXTS, *never]:
        assert text not in output, f"echoed input text {text!r}"


def setup_fifos(spec: dict[str, Any]) -> bool:
    return bool(spec.get("setup", {}).get("fifo"))


def run_subprocess(argv: list[str], work: Path) -> tuple[int, str]:
    """``python -m evalkit.cli.entry argv`` in ``work`` with a timeout: a reader blocked on a FIFO
    in C code (pyarrow's CSV reader) would not see the in-process alarm."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evalkit.cli.entry", *argv],
            check=False,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != "EVALKIT_OUTPUT"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"evalkit {' '.join(argv)} hung on a FIFO")
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("name", CASES)
def test_malformed_case(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_hang: None,
) -> None:
    work = tmp_path / "work"
    spec = prepare(name, work)
    monkeypatch.chdir(work)
    monkeypatch.delenv("EVALKIT_OUTPUT", raising=False)
    before = snapshot(work)
    if setup_fifos(spec):
        code, output = run_subprocess(spec["command"], work)
    else:
        code, output = run_cli(spec["command"], capsys)
    assert code == spec["exit"], output
    assert code in (1, 2)
    for fragment in spec["expect"]:
        assert fragment in output, f"{fragment!r} not in:\n{output}"
    for fragment in spec.get("absent", []):
        assert fragment not in output, output
    check_output(output, never=spec.get("never", []))
    assert snapshot(work) == before, "a failed command must write nothing"


def test_the_corpus_has_a_case_per_input_format() -> None:
    commands = {
        yaml.safe_load((CORPUS / name / "case.yaml").read_text(encoding="utf-8"))["command"][0]
        for name in CASES
    }
    assert commands >= {"validate", "trec-eval", "gate", "diff", "probes"}
    prefixes = {name.split("-")[0] for name in CASES}
    assert prefixes >= {"fixture", "qrels", "run", "gates", "baseline", "report", "probe"}
