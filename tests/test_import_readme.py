"""The README's "Evaluate your own system" commands work as written, on the shipped examples.

The commands are read from README.md itself and run through ``evalkit.cli.main`` in a fresh
workspace holding a copy of ``examples/``; the HTTP example starts the shipped stand-in service
(on a free port instead of 8765, so parallel runs do not collide).
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from cli_runner import run_cli

REPO = pathlib.Path(__file__).resolve().parent.parent


def _blocks(path: pathlib.Path, heading: str) -> list[list[str]]:
    """The ``sh`` code blocks of the section under ``heading``, as lists of command lines."""
    text = path.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    return [[line.strip() for line in block.splitlines() if line.strip()] for block in blocks]


def readme_blocks() -> list[list[str]]:
    """The own-data blocks: the README quick start's three commands (the block that starts
    with ``evalkit import``), then the ``http:`` example of ``docs/own-data.md``."""
    quick = _blocks(REPO / "README.md", "## Your own data")
    three = next(b for b in quick if b[0].startswith("evalkit import"))
    guide = _blocks(REPO / "docs" / "own-data.md", "# Your own data")
    return [three, guide[1]]


def test_the_guide_starts_with_the_readmes_three_commands() -> None:
    guide = _blocks(REPO / "docs" / "own-data.md", "# Your own data")
    assert [shlex.split(line)[1] for line in guide[0]] == ["import", "run", "report"]


def run_readme_line(line: str, workspace: pathlib.Path, env: dict[str, str] | None = None) -> str:
    """Run one README command line (it must start with ``evalkit``); its stdout."""
    words = shlex.split(line)
    assert words[0] == "evalkit", line
    code, out, err = run_cli(words[1:], workspace, env)
    assert code == 0, f"{line}\n{out}{err}"
    return out


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    return tmp_path


def test_the_section_has_the_three_commands() -> None:
    first = readme_blocks()[0]
    assert [shlex.split(line)[1] for line in first] == ["import", "run", "report"]


@pytest.mark.slow
def test_three_commands_from_data_to_report(workspace: pathlib.Path) -> None:
    imported, ran, reported = (run_readme_line(line, workspace) for line in readme_blocks()[0])
    assert "5 queries" in imported
    assert "run my-system: latency not measured; 1 of 5 queries not in the run" in ran
    assert reported.splitlines()[-1] == "report: reports/my-report.html"
    html = (workspace / "reports" / "my-report.html").read_text(encoding="utf-8")
    assert "my-system" in html
    assert "not measured" in html
    assert "Code-intelligence probes" not in html  # no probe directory named: no probe section


def test_http_example_with_the_stand_in_service(workspace: pathlib.Path) -> None:
    import_line = readme_blocks()[0][0]
    run_readme_line(import_line, workspace)
    serve, evaluate_line = readme_blocks()[1]
    words = shlex.split(serve.rstrip("&").strip())
    assert words[:2] == ["python", "examples/own-data/serve_run.py"]
    command = [sys.executable, *words[1:-2], "--port", "0"]  # a free port instead of 8765
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        command, cwd=workspace, stdout=subprocess.PIPE, text=True, env=env
    ) as server:
        try:
            assert server.stdout is not None
            port = server.stdout.readline().split("port ")[1].strip()
            assignment, rest = evaluate_line.split(" ", 1)
            name, url = assignment.split("=", 1)
            assert name == "EVALKIT_HTTP_MY_SEARCH_URL"
            out = run_readme_line(rest, workspace, {name: url.replace("8765", port)})
        finally:
            server.terminate()
    assert "my-search" in out
    assert url.replace("8765", port) not in out
