"""``evalkit history``: a committed baseline across commits, read from git (issue 42).

A real git repository in ``tmp_path`` with five commits of a baseline: c1 the baseline of
my-system; c2 the file moved (``git mv``) and a latency-only refresh; c3 one query's top two
swapped (a move within the interval); c4 the planted regression (every Chinese query's top 10
reversed); c5 a rerun of c4 (latency differs, the projection is equal). The commit that moved
nDCG beyond the interval of the commit before it must be c4, named by its hash from
``git rev-parse``.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import pytest
from cli_runner import run_cli

from evalkit.fixtures import dump_fixture, generate_fixture
from evalkit.formats import write_run
from evalkit.gates import baseline_history
from evalkit.run import evaluate
from evalkit.safety.canonical import canonical_json

NDCG = "nDCG(dcg='exp-log2')@10"
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


def _git(repo: pathlib.Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, list[str]]:
    """The repository and its five commits' hashes, oldest first."""
    root = tmp_path_factory.mktemp("history")
    fixture = generate_fixture(42, documents=40, queries=120)
    dump_fixture(fixture, root / "fx")
    run = (
        evaluate(fixture, ["lexical"], k=10, repeats=1)
        .rankings[["query_id", "chunk_id", "rank", "score"]]
        .rename(columns={"chunk_id": "doc_id"})
    )
    language = {q.id: q.language for q in fixture.queries}
    swapped = run.copy()
    first = sorted(set(swapped["query_id"]))[0]
    one = (swapped["query_id"] == first) & swapped["rank"].isin([1, 2])
    swapped.loc[one, "rank"] = 3 - swapped.loc[one, "rank"]
    swapped.loc[one, "score"] = -swapped.loc[one, "rank"].astype(float)
    reversed_run = run.copy()
    zh = reversed_run["query_id"].map(language) == "zh"
    top = reversed_run.groupby("query_id")["rank"].transform("max")
    reversed_run.loc[zh, "rank"] = top[zh] + 1 - reversed_run.loc[zh, "rank"]
    reversed_run.loc[zh, "score"] = -reversed_run.loc[zh, "rank"].astype(float)
    _git(root, "init", "-q", "-b", "main")
    (root / "runs").mkdir()
    commits: list[str] = []

    def baseline(frame: object, output: str, message: str) -> None:
        write_run(frame, root / "runs" / "my-system.trec", run_id="x")  # type: ignore[arg-type]
        argv = ["baseline", "fx", "--systems", "run:runs/my-system.trec", "--output", output]
        code, _, err = run_cli(argv, root)
        assert code == 0, err
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", message)
        commits.append(_git(root, "rev-parse", "HEAD"))

    baseline(run, "baseline.json", "c1")
    (root / "eval").mkdir()
    _git(root, "mv", "baseline.json", "eval/baseline.json")
    data = json.loads((root / "eval" / "baseline.json").read_text(encoding="utf-8"))
    data["latency"] = {"my-system": {"count": 1, "measured": False}}
    (root / "eval" / "baseline.json").write_text(canonical_json(data), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "c2")
    commits.append(_git(root, "rev-parse", "HEAD"))
    baseline(swapped, "eval/baseline.json", "c3")
    baseline(reversed_run, "eval/baseline.json", "c4")
    data = json.loads((root / "eval" / "baseline.json").read_text(encoding="utf-8"))
    data["machine"] = {"os": "other"}
    (root / "eval" / "baseline.json").write_text(canonical_json(data), encoding="utf-8")
    _git(root, "commit", "-q", "-am", "c5")
    commits.append(_git(root, "rev-parse", "HEAD"))
    return root, commits


def test_history_names_the_commit_of_the_planted_regression(
    repo: tuple[pathlib.Path, list[str]],
) -> None:
    root, commits = repo
    history = baseline_history(root / "eval" / "baseline.json", n_resamples=500)
    assert list(dict.fromkeys(history["commit"])) == commits  # five versions, oldest first
    ndcg = history[(history["system"] == "my-system") & (history["measure"] == NDCG)]
    assert list(ndcg["commit"]) == commits
    first = ndcg[ndcg["first_move"]]
    assert list(first["commit"]) == [commits[3]]
    assert list(first["moved"]) == ["worse"]
    assert list(ndcg["moved"]) == ["", "", "", "worse", ""]  # the swap stays in the interval


def test_the_cli_prints_the_first_move_and_writes_csv(
    repo: tuple[pathlib.Path, list[str]],
) -> None:
    root, commits = repo
    argv = ["history", "eval/baseline.json", "--measures", NDCG, "--csv", "out/history.csv"]
    code, out, err = run_cli(argv, root)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("first move: my-system"))
    assert f"got worse at {commits[3][:12]}" in line
    assert f"of {commits[2][:12]}" in line
    assert (root / "out" / "history.csv").read_text(encoding="utf-8").startswith("order,commit")


def test_outside_a_repository_or_uncommitted_is_an_input_error(
    repo: tuple[pathlib.Path, list[str]], tmp_path: pathlib.Path
) -> None:
    root, _ = repo
    (tmp_path / "b.json").write_text("{}", encoding="utf-8")
    code, _, err = run_cli(["history", "b.json"], tmp_path)
    assert code == 2
    assert str(tmp_path) not in err
    (root / "new.json").write_text("{}", encoding="utf-8")
    code, _, err = run_cli(["history", "new.json"], root)
    assert code == 2
    assert "never committed" in err


@pytest.mark.slow
def test_the_report_shows_the_trend_with_p_history(
    repo: tuple[pathlib.Path, list[str]],
) -> None:
    root, commits = repo
    argv = ["report", "fx", "-p", "systems", "run:runs/my-system.trec", "-p", "n_resamples"]
    argv += ["200", "-p", "history", "eval/baseline.json", "--output", "reports/trend.html"]
    code, out, err = run_cli(argv, root)
    assert code == 0, out + err
    html = (root / "reports" / "trend.html").read_text(encoding="utf-8")
    assert "Trend across commits" in html
    assert f"got worse at {commits[3][:12]}" in html
