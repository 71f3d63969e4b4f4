"""The wheel is the product (issue 44): built, checked, installed into a fresh virtual
environment outside the repository, and the main job run there on fixtures copied out.

One test, because the steps share one build and one environment (the environment's install
downloads evalkit's dependencies from the package index: most of the test's time). Each
command is checked by its exit code and its output files; the HTML report and the executed
notebook are then scanned by ``evalkit scan`` and must be clean. The printed log (``-s``) is
what the pull request shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DISTRIBUTION = "evalkit-ir"
# the only top-level entries a wheel of evalkit may hold
WHEEL_TOP_LEVEL = {"evalkit", "evalkit_ir-{version}.dist-info"}
# package data evalkit reads at run time (importlib.resources)
PACKAGE_DATA = (
    "evalkit/report/notebooks/retrieval_report.ipynb",
    "evalkit/systems/data/stopwords-en-lucene.txt",
    "evalkit/systems/data/stopwords-en-nltk.txt",
    "evalkit/schema/fixture.schema.json",
    "evalkit/py.typed",
)
# What never belongs in the wheel: the repository's tests, fixtures, benchmarks and data (the
# top-level folders are checked by WHEEL_TOP_LEVEL; evalkit.fixtures is code, not fixtures).
FORBIDDEN_FOLDERS = {"tests", "benchmarks", "examples", "reports", "synthetic-bilingual-v1"}
FORBIDDEN_SUFFIXES = (".yaml", ".yml", ".jsonl", ".trec", ".csv", ".parquet", ".gz", ".db")


def _clean_environment() -> dict[str, str]:
    """This process's environment without anything pointing at the repository or the dev venv."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))
    )
    return env


def _check(command: list[str], cwd: Path, env: dict[str, str], *, code: int = 0) -> str:
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    took = time.perf_counter() - started
    shown = " ".join(Path(command[0]).name if i == 0 else part for i, part in enumerate(command))
    print(f"$ {shown}  -> exit {done.returncode} ({took:.1f} s)")
    assert done.returncode == code, f"{shown}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _wheel_problems(wheel: Path, version: str) -> list[str]:
    """What the wheel holds that it must not, and the package data it lacks."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    problems = []
    top = {name.split("/", 1)[0] for name in names}
    if top != {t.format(version=version) for t in WHEEL_TOP_LEVEL}:
        problems.append(f"top-level entries {sorted(top)}")
    for name in names:
        folders, file_name = name.split("/")[:-1], name.rsplit("/", 1)[-1]
        test_file = file_name.startswith("test_") or file_name == "conftest.py"
        if set(folders) & FORBIDDEN_FOLDERS or name.endswith(FORBIDDEN_SUFFIXES) or test_file:
            problems.append(name)
    problems += [f"missing {data}" for data in PACKAGE_DATA if data not in names]
    return problems


@pytest.mark.slow
def test_the_wheel_runs_the_main_job_in_a_fresh_environment(tmp_path: Path) -> None:
    import evalkit

    env = _clean_environment()
    dist = tmp_path / "dist"
    outside = tmp_path / "outside"
    outside.mkdir()
    assert not outside.resolve().is_relative_to(REPO)
    venv = outside / "venv"
    # the fresh environment is created while the artifacts build (both take most of a minute)
    creating = subprocess.Popen([sys.executable, "-m", "venv", str(venv)], cwd=outside, env=env)
    # 1. sdist and wheel, as a release builds them; then their metadata
    _check([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)], REPO, env)
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    assert [w.name for w in wheels] == [f"evalkit_ir-{evalkit.__version__}-py3-none-any.whl"]
    assert len(sdists) == 1
    _check(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)], REPO, env
    )
    assert _wheel_problems(wheels[0], evalkit.__version__) == []

    # 2. a fresh virtual environment outside the repository, nothing but the wheel and its
    # dependencies from the package index (no byte-compiling: the commands compile what they use)
    assert creating.wait(timeout=600) == 0
    bin_ = venv / "bin"
    python = str(bin_ / "python")
    install = [python, "-m", "pip", "install", "--quiet", "--no-compile", str(wheels[0])]
    _check(install, outside, env)
    env["PATH"] = os.pathsep.join([str(bin_), env["PATH"]])
    cli = str(bin_ / "evalkit")

    # 3. the main job, in a working directory holding copies of the inputs only
    work = outside / "work"
    work.mkdir()
    shutil.copytree(REPO / "examples" / "own-data", work / "own-data")
    shutil.copytree(REPO / "fixtures" / "synthetic-bilingual-dev-v1", work / "dev-fixture")
    where = _check(
        [python, "-c", "import evalkit, sys; print(evalkit.__file__); print(evalkit.__version__)"],
        work,
        env,
    ).split()
    assert Path(where[0]).is_relative_to(venv)
    assert where[1] == evalkit.__version__
    assert _check([cli, "--version"], work, env).startswith(f"evalkit {evalkit.__version__}")
    _check([python, "-m", "evalkit", "--help"], work, env)
    systems = "lexical,run:own-data/my-system.trec"
    _check(
        [cli, "import", "table", "--documents", "own-data/documents.jsonl", "--queries",
         "own-data/queries.jsonl", "--judgments", "own-data/judgments.csv", "--doc-title",
         "title", "--judgment-grade", "grade", "--judgment-answers", "answer", "--output",
         "my-fixture"],
        work,
        env,
    )  # fmt: skip
    _check([cli, "validate", "my-fixture"], work, env)
    _check(
        [cli, "run", "my-fixture", "--systems", systems, "--measures", "AP,P@5,nDCG@10",
         "--output", "reports/run.json", "--rankings", "reports/rankings.trec"],
        work,
        env,
    )  # fmt: skip
    assert (work / "reports" / "run.json").is_file()
    _check(
        [cli, "report", "my-fixture", "-p", "systems", systems, "-p", "base_system",
         "my-system", "--output", "reports/report.html"],
        work,
        env,
    )  # fmt: skip
    html = work / "reports" / "report.html"
    assert html.stat().st_size > 10_000
    assert "<html" in html.read_text(encoding="utf-8")[:500]
    out = _check(
        [cli, "scan", "my-fixture", "reports/report.html", "reports/report.ipynb"], work, env
    )
    assert out.count("clean: ") == 2
    _check(
        [cli, "gate", "dev-fixture", "--junit", "ci/gates.xml", "--markdown", "ci/gates.md"],
        work,
        env,
    )
    assert "<testsuite" in (work / "ci" / "gates.xml").read_text(encoding="utf-8")
    assert (work / "ci" / "gates.md").read_text(encoding="utf-8").strip()
    _check([python, "-c", _WRITE_QRELS, "my-fixture", "reports/qrels.txt"], work, env)
    assert (work / "reports" / "rankings.trec").stat().st_size > 0
    scores = _check(
        [cli, "trec-eval", "-c", "-m", "map", "-m", "P.5", "reports/qrels.txt",
         "own-data/my-system.trec"],
        work,
        env,
    )  # fmt: skip
    assert "map" in scores
    assert "P_5" in scores
    # nothing was written next to the repository
    assert not (REPO / "my-fixture").exists()


# The fixture's judgments as TREC qrels, through the installed package's public API.
_WRITE_QRELS = """
import sys
import pandas as pd
import evalkit as ek
fixture = ek.load_fixture(sys.argv[1])
rows = [(q.id, j.chunk_id, j.grade) for q in fixture.queries for j in q.judgments]
ek.write_qrels(pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]), sys.argv[2])
"""
