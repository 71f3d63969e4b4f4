"""The hooks of ``.pre-commit-hooks.yaml``, run by ``pre-commit try-repo`` on a temporary git
repository (issue 44): a notebook with a planted leak is refused, a clean one passes; a valid
fixture and gates file pass, broken ones are refused.

The offline equivalent: pre-commit builds a ``language: python`` hook's environment by
installing this repository and its dependencies from the package index. The test gives
try-repo a copy of the hooks file whose hooks are ``language: system`` with the same IDs,
file patterns and ``evalkit hook ...`` commands, run by this environment's evalkit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
HOOK_IDS = ("evalkit-scan", "evalkit-validate", "evalkit-gates-check")

pytest.importorskip("pre_commit", reason="install the dev extra: pip install -e '.[dev]'")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _hooks_repo(tmp_path: Path) -> Path:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == list(HOOK_IDS)
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["entry"].startswith("evalkit hook ")
        hook["language"] = "system"
        hook["entry"] = f"{sys.executable} -m {hook['entry']}"
    repo = tmp_path / "hooks"
    repo.mkdir()
    (repo / ".pre-commit-hooks.yaml").write_text(yaml.safe_dump(hooks), encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "hooks")
    return repo


def _notebook(text: str) -> str:
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "a1",
        "metadata": {},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": [text]}],
        "source": ["print(top_chunk)"],
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """A team's repository with a fixture in eval/fixture; the hooks repository; a chunk's
    text (private) of the fixture."""
    for name, value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.invalid")):
        monkeypatch.setenv(name, value)
        monkeypatch.setenv(name.replace("AUTHOR", "COMMITTER"), value)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    hooks = _hooks_repo(tmp_path)
    root = tmp_path / "project"
    shutil.copytree(REPO / "fixtures" / "synthetic-bilingual-dev-v1", root / "eval" / "fixture")
    _git(root, "init", "-q")
    from evalkit.fixtures import load_fixture

    chunk = max((c.text for c in load_fixture(root / "eval" / "fixture").chunks), key=len)
    return root, hooks, chunk


def _try(root: Path, hooks: Path, hook_id: str, *files: str) -> subprocess.CompletedProcess[str]:
    _git(root, "add", "-A")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(hooks),
            hook_id,
            "--verbose",
            "--files",
            *files,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ},
    )


def test_the_scan_hook_refuses_a_notebook_with_fixture_text(
    project: tuple[Path, Path, str],
) -> None:
    root, hooks, chunk = project
    (root / "clean.ipynb").write_text(_notebook("nDCG@10 0.91 q-001"), encoding="utf-8")
    (root / "leaky.ipynb").write_text(_notebook(chunk), encoding="utf-8")
    clean = _try(root, hooks, "evalkit-scan", "clean.ipynb")
    assert clean.returncode == 0, clean.stdout
    assert "Passed" in clean.stdout
    leaky = _try(root, hooks, "evalkit-scan", "clean.ipynb", "leaky.ipynb")
    assert leaky.returncode == 1, leaky.stdout
    assert "fixture text found: leaky.ipynb" in leaky.stdout
    assert chunk[:40] not in leaky.stdout + leaky.stderr  # IDs only


def test_the_validate_hook_checks_the_fixture_of_a_staged_file(
    project: tuple[Path, Path, str],
) -> None:
    root, hooks, _ = project
    good = _try(root, hooks, "evalkit-validate", "eval/fixture/queries.yaml")
    assert good.returncode == 0, good.stdout
    assert "valid: eval/fixture" in good.stdout
    queries = root / "eval" / "fixture" / "queries.yaml"
    queries.write_text(queries.read_text(encoding="utf-8") + "\n- id: [unclosed\n", "utf-8")
    bad = _try(root, hooks, "evalkit-validate", "eval/fixture/queries.yaml")
    assert bad.returncode == 1, bad.stdout


def test_the_gates_hook_checks_a_staged_gates_file(project: tuple[Path, Path, str]) -> None:
    root, hooks, _ = project
    good = _try(root, hooks, "evalkit-gates-check", "eval/fixture/gates.yaml")
    assert good.returncode == 0, good.stdout
    gates = root / "eval" / "fixture" / "gates.yaml"
    gates.write_text(gates.read_text(encoding="utf-8") + "unknown_section: 1\n", "utf-8")
    bad = _try(root, hooks, "evalkit-gates-check", "eval/fixture/gates.yaml")
    assert bad.returncode == 1, bad.stdout
    assert "unknown field" in bad.stdout
