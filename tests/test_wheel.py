"""The wheel is the product (issue 44): built, checked, installed into a fresh virtual
environment outside the repository, and the main job run there on fixtures copied out.

One slow test, because the steps share one build and one environment. The fresh environment
gets the wheel alone (``pip install --no-deps``); its dependencies are this environment's
installed distributions, exactly the closure of the wheel's ``Requires-Dist`` and no more:
each declared requirement and its own requirements, linked into a folder the fresh
environment's ``.pth`` file names (their data files, such as nbconvert's templates, linked
under the fresh prefix). So an import of an undeclared package fails there as after an install
from the package index, and the test does not spend minutes downloading. What the index would
resolve is the cheap test's business: every requirement of ``pyproject.toml`` resolves to an
installed version within its specifier, and the wheel declares exactly those requirements.
Each command is checked by its exit code and its output files; the HTML report and the
executed notebook are then scanned by ``evalkit scan`` and must be clean. The printed log
(``-s``) is what the pull request shows.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

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


def _declared_requirements() -> list[Requirement]:
    """``[project].dependencies`` of ``pyproject.toml``: what the wheel must declare."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project["dependencies"]]


def _wheel_requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` entries that apply without an extra."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))
    requirements = [Requirement(text) for text in metadata.get_all("Requires-Dist") or []]
    return [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]


def _dependency_closure(
    requirements: list[Requirement],
) -> tuple[list[importlib.metadata.Distribution], list[str]]:
    """The installed distributions the requirements need, transitively (markers evaluated for
    this interpreter and the requested extras), and the problems: a requirement that is not
    installed or whose installed version is outside its specifier."""
    found: dict[str, importlib.metadata.Distribution] = {}
    problems: list[str] = []
    pending = [(r, "") for r in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        try:
            distribution = importlib.metadata.distribution(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{requirement}: not installed")
            continue
        if not requirement.specifier.contains(distribution.version, prereleases=True):
            problems.append(f"{requirement}: installed {distribution.version}")
        key = f"{distribution.metadata['Name'].lower()}[{','.join(sorted(requirement.extras))}]"
        if key in found:
            continue
        found[key] = distribution
        for text in distribution.requires or []:
            pending += [(Requirement(text), e) for e in ("", *requirement.extras)]
    unique = {d.metadata["Name"].lower(): d for d in found.values()}
    return list(unique.values()), problems


def _link_dependencies(
    distributions: list[importlib.metadata.Distribution], folder: Path, prefix: Path
) -> None:
    """Each distribution's top-level entries (packages, modules, their ``.libs`` and
    ``.dist-info``) linked into ``folder``, and its data files (``share/``, ``etc/``: templates,
    kernel specs) under ``prefix``; scripts are not linked (the main job runs evalkit's own)."""
    folder.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for distribution in distributions:
        for file in distribution.files or []:
            parts = Path(file).parts
            if parts[0] != "..":
                source, target = here / parts[0], folder / parts[0]
                skipped = parts[0].endswith(".pth") or parts[0] == "__pycache__"
                if skipped or target.exists() or not source.exists():
                    continue
                target.symlink_to(source)
                continue
            located = Path(os.path.normpath(distribution.locate_file(file)))
            relative = (
                located.relative_to(sys.prefix) if located.is_relative_to(sys.prefix) else None
            )
            if relative is None or relative.parts[0] not in ("share", "etc"):
                continue
            target = prefix / relative
            if located.is_file() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(located)


def test_the_declared_dependencies_resolve_to_installed_versions() -> None:
    requirements = _declared_requirements()
    assert {r.name.lower() for r in requirements} >= {"pandas", "numpy", "pydantic"}
    distributions, problems = _dependency_closure(requirements)
    assert problems == []
    assert len(distributions) > len(requirements)  # their own requirements came along


@pytest.mark.slow
def test_the_wheel_runs_the_main_job_in_a_fresh_environment(tmp_path: Path) -> None:
    import evalkit

    env = _clean_environment()
    dist = tmp_path / "dist"
    outside = tmp_path / "outside"
    outside.mkdir()
    assert not outside.resolve().is_relative_to(REPO)
    venv = outside / "venv"
    # the fresh environment (without pip: this environment's pip installs into it) is created
    # while the artifacts build
    creating = subprocess.Popen(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=outside, env=env
    )
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
    declared = sorted(map(str, _declared_requirements()))
    assert sorted(map(str, _wheel_requirements(wheels[0]))) == declared

    # 2. a fresh virtual environment outside the repository: the wheel alone (no
    # byte-compiling: the commands compile what they use), and its dependencies' closure linked
    # from this environment (the module docstring)
    assert creating.wait(timeout=600) == 0
    bin_ = venv / "bin"
    python = str(bin_ / "python")
    install = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet"]
    _check([*install, "--no-deps", "--no-compile", str(wheels[0])], outside, env)
    distributions, problems = _dependency_closure(_wheel_requirements(wheels[0]))
    assert problems == []
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, env=env, cwd=outside,
    ).stdout.strip()  # fmt: skip
    _link_dependencies(distributions, outside / "dependencies", venv)
    (Path(site) / "evalkit-test-dependencies.pth").write_text(f"{outside / 'dependencies'}\n")
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
    # only the declared dependencies are there: a development tool is not importable
    _check([python, "-c", "import pytest"], work, env, code=1)
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
