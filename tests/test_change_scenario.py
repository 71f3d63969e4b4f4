"""Issue 42's held-out scenario: "did my change make retrieval better or worse, where, and at
what latency?", answered the same by ``evalkit gate``, its Markdown and JUnit, and the report.

A generated fixture (seed 42, never committed, nothing tuned on it); the team's system is a run
file made by the lexical reference system. Main's baseline comes from that run; then three pull
requests under the same system name: a **regressing** run (every Chinese query's top 10
reversed), an **improving** run (against a baseline of the reversed run, the original run) and
an **identical** run. The expected query counts are computed here from the per-query values of
the two files (pytrec_eval's nDCG@10 on the run files), not taken from the code under test.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
from typing import Any

import pandas as pd
import pytest
import pytrec_eval
from cli_runner import run_cli
from junit10 import junit10_problems
from junitparser import Failure, JUnitXml

from evalkit.fixtures import dump_fixture, generate_fixture
from evalkit.formats import write_run
from evalkit.run import evaluate

GATES = "schema: evalkit.gates/1\nbaseline:\n  path: baseline.json\n  systems: [my-system]\n"
CI = ["--junit", "ci/gates.xml", "--markdown", "ci/summary.md"]
NDCG = "nDCG(dcg='exp-log2')@10"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """fx/ (the fixture), runs/{main,regress}.trec, main/baseline.json (from main) and
    reversed/baseline.json (from the regressing run), the queries' languages and qrels."""
    root = tmp_path_factory.mktemp("change")
    fixture = generate_fixture(42, documents=40, queries=120)
    dump_fixture(fixture, root / "fx")
    rankings = evaluate(fixture, ["lexical"], k=10, repeats=1).rankings
    run = rankings[["query_id", "chunk_id", "rank", "score"]].rename(columns={"chunk_id": "doc_id"})
    language = {query.id: query.language for query in fixture.queries}
    reversed_run = run.copy()
    zh = reversed_run["query_id"].map(language) == "zh"
    top = reversed_run.groupby("query_id")["rank"].transform("max")
    reversed_run.loc[zh, "rank"] = top[zh] + 1 - reversed_run.loc[zh, "rank"]
    reversed_run.loc[zh, "score"] = -reversed_run.loc[zh, "rank"].astype(float)
    (root / "runs").mkdir()
    write_run(run, root / "runs" / "main.trec", run_id="main")
    write_run(reversed_run, root / "runs" / "regress.trec", run_id="pr")
    for folder, source in (("main", "main"), ("reversed", "regress")):
        (root / folder).mkdir()
        (root / folder / "gates.yaml").write_text(GATES, encoding="utf-8")
        shutil.copy(root / "runs" / f"{source}.trec", root / "runs" / "my-system.trec")
        argv = ["baseline", "fx", "--systems", "run:runs/my-system.trec"]
        code, _, err = run_cli([*argv, "--output", f"{folder}/baseline.json"], root)
        assert code == 0, err
    qrels: dict[str, dict[str, int]] = {}
    for query in fixture.queries:
        graded = {j.chunk_id: int(j.grade) for j in query.judgments if j.grade > 0}
        if graded:
            qrels[query.id] = graded
    return {
        "root": root,
        "language": language,
        "qrels": qrels,
        "runs": {"main": run, "regress": reversed_run},
    }


def _ndcg(scenario: dict[str, Any], name: str) -> dict[str, float]:
    """pytrec_eval's ndcg_cut_10 per answerable query of run ``name`` (the oracle)."""
    frame: pd.DataFrame = scenario["runs"][name]
    run: dict[str, dict[str, float]] = {}
    for row in frame.itertuples(index=False):
        run.setdefault(str(row.query_id), {})[str(row.doc_id)] = float(row.score)
    evaluator = pytrec_eval.RelevanceEvaluator(scenario["qrels"], {"ndcg_cut.10"})
    values = {q: v["ndcg_cut_10"] for q, v in evaluator.evaluate(run).items()}
    # an answerable query the run returned nothing for scores 0 (pytrec_eval leaves it out)
    return {q: values.get(q, 0.0) for q in scenario["qrels"]}


def _gate(scenario: dict[str, Any], pr: str, against: str) -> tuple[int, str, str, Any]:
    root: pathlib.Path = scenario["root"]
    shutil.copy(root / "runs" / f"{pr}.trec", root / "runs" / "my-system.trec")
    for name in ("gates.xml", "summary.md"):
        (root / "ci" / name).unlink(missing_ok=True)
    argv = ["gate", "fx", "--systems", "run:runs/my-system.trec"]
    argv += ["--gates", f"{against}/gates.yaml", "--baseline", f"{against}/baseline.json", *CI]
    code, out, err = run_cli(argv, root)
    junit = (root / "ci" / "gates.xml").read_text(encoding="utf-8")
    assert junit10_problems(junit) == []
    markdown = (root / "ci" / "summary.md").read_text(encoding="utf-8")
    return code, out + err, markdown, JUnitXml.fromfile(str(root / "ci" / "gates.xml"))


def _counts(before: dict[str, float], after: dict[str, float]) -> tuple[int, int, int]:
    """(worse, better, unchanged) queries of nDCG@10, by the oracle's values."""
    shared = sorted(set(before) & set(after))
    worse = sum(after[q] < before[q] - 1e-9 for q in shared)
    better = sum(after[q] > before[q] + 1e-9 for q in shared)
    return worse, better, len(shared) - worse - better


def _ndcg_row(markdown: str) -> str:
    """The gate summary's table row of my-system's nDCG@10."""
    return next(
        line for line in markdown.splitlines() if line.startswith(f"| my-system | `{NDCG}` |")
    )


def test_a_regressing_pull_request_fails_and_names_system_measure_language_and_queries(
    scenario: dict[str, Any],
) -> None:
    code, out, markdown, xml = _gate(scenario, "regress", "main")
    assert code == 1, out
    first = markdown.splitlines()[0]
    assert first.startswith("**evalkit gate: FAIL** · my-system got worse: ")
    assert f"`{NDCG}`" in first
    assert "(zh -" in first  # the language that moved
    assert "\u2060" not in markdown
    before, after = _ndcg(scenario, "main"), _ndcg(scenario, "regress")
    worse, better, unchanged = _counts(before, after)
    assert f"{worse} / {better} / {unchanged}" in _ndcg_row(markdown)
    # the worst queries, worst first by the oracle's loss, are Chinese queries
    losses = sorted((after[q] - before[q], q) for q in before if after[q] < before[q] - 1e-9)
    worst_oracle = [q for _, q in losses[:3]]
    assert all(scenario["language"][q] == "zh" for q in worst_oracle)
    assert f"worst queries {', '.join(worst_oracle)}" in markdown
    # the JUnit agrees: the change suite fails on the same system, measure and language
    change = next(suite for suite in xml if suite.name.startswith("change "))
    failing = {c.name for c in change for r in c.result if isinstance(r, Failure)}
    assert f"my-system {NDCG} (zh)" in failing
    assert not any(name.endswith("(en)") for name in failing)


def test_an_improving_pull_request_passes_and_says_what_improved_where(
    scenario: dict[str, Any],
) -> None:
    code, out, markdown, _ = _gate(scenario, "main", "reversed")
    assert code == 0, out
    first = markdown.splitlines()[0]
    assert first.startswith("**evalkit gate: PASS** · my-system got better: ")
    assert f"`{NDCG}` +" in first
    assert "(zh +" in first
    before, after = _ndcg(scenario, "regress"), _ndcg(scenario, "main")
    worse, better, unchanged = _counts(before, after)
    row = _ndcg_row(markdown)
    assert f"{worse} / {better} / {unchanged}" in row
    assert "better +" in row


def test_an_identical_pull_request_passes_with_no_significant_change(
    scenario: dict[str, Any],
) -> None:
    code, out, markdown, _ = _gate(scenario, "main", "main")
    assert code == 0, out
    assert markdown.startswith("**evalkit gate: PASS** · my-system: no significant change")
    assert "no significant change" in out


@pytest.fixture(scope="module")
def regress_report(scenario: dict[str, Any]) -> tuple[pathlib.Path, str]:
    """The HTML report of the regressing run against main's baseline, and the gate's Markdown."""
    root: pathlib.Path = scenario["root"]
    code, _, markdown, _ = _gate(scenario, "regress", "main")
    assert code == 1
    argv = ["report", "fx", "-p", "systems", "run:runs/my-system.trec", "-p", "base_system"]
    argv += ["my-system", "--gates", "main/gates.yaml", "--baseline", "main/baseline.json"]
    code, out, err = run_cli([*argv, "--output", "reports/regress.html"], root)
    assert code == 0, out + err
    return root / "reports" / "regress.html", markdown


@pytest.mark.slow
def test_the_report_first_screen_shows_the_same_verdict(
    regress_report: tuple[pathlib.Path, str],
) -> None:
    from bs4 import BeautifulSoup

    path, markdown = regress_report
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    verdict = soup.select_one('[data-evalkit="verdict"]')
    assert verdict is not None
    text = verdict.get_text(" ")
    assert "FAIL" in text
    assert "my-system got worse" in text
    assert NDCG in text
    assert "(zh -" in text
    assert "my-system got worse" in markdown.splitlines()[0]  # the same verdict
    change = soup.select_one('[data-evalkit="change"]')
    assert change is not None
    assert NDCG in change.get_text(" ")
    where = soup.select_one('[data-evalkit="where"]')
    assert where is not None
    worst = markdown.split("worst queries ", 1)[1].split(",")[0]
    assert worst in where.get_text(" ")
    latency = soup.select_one('[data-evalkit="latency"]')
    assert latency is not None
    assert "my-system" in latency.get_text(" ")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FOLD_PX = 1000
_RECTS = """<pre id="evalkit-rects"></pre><script>
const out = {};
for (const name of ["verdict", "change", "where", "latency"]) {
  const node = document.querySelector(`[data-evalkit="${name}"]`);
  out[name] = node ? node.getBoundingClientRect().bottom : null;
}
document.getElementById("evalkit-rects").textContent = JSON.stringify(out);
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="chromium is not installed (CI installs it: .ci/run)",
)
def test_the_verdict_change_and_latency_are_on_the_first_1000_pixels(
    regress_report: tuple[pathlib.Path, str], tmp_path: pathlib.Path
) -> None:
    """Headless Chromium at 1280x1000: the bottoms of the verdict, the change table and the
    latency table are within the first 1,000 pixels. The layout is read from a copy without the
    CSP and with a script that writes the boxes into the page (the report itself runs none);
    a screenshot of the report goes to $EVALKIT_SCREENSHOTS when set."""
    assert CHROMIUM is not None, "CI must have chromium (.ci/run installs it)"
    path, _ = regress_report
    html = path.read_text(encoding="utf-8")
    meta = re.compile(r'<meta[^>]*http-equiv="Content-Security-Policy"[^>]*>')
    assert len(meta.findall(html)) == 1
    probe = tmp_path / "probe.html"
    probe.write_text(meta.sub("", html).replace("</body>", _RECTS + "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags.append(f"--window-size=1280,{FOLD_PX}")
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'<pre id="evalkit-rects">([^<]*)</pre>', dom)
    assert found is not None
    bottoms = json.loads(found.group(1))
    for name in ("verdict", "change", "latency"):
        assert bottoms[name] is not None, name
        assert 0 < bottoms[name] <= FOLD_PX, (name, bottoms)
    shots = os.environ.get("EVALKIT_SCREENSHOTS")
    if shots:
        pathlib.Path(shots).mkdir(parents=True, exist_ok=True)
        target = pathlib.Path(shots) / "regress-first-screen.png"
        subprocess.run(
            [CHROMIUM, *flags, f"--screenshot={target}", path.as_uri()],
            capture_output=True,
            timeout=120,
            check=True,
        )


@pytest.mark.slow
def test_a_stale_baseline_is_the_same_error_in_the_gate_and_the_report(
    scenario: dict[str, Any],
) -> None:
    from bs4 import BeautifulSoup

    root: pathlib.Path = scenario["root"]
    shutil.copy(root / "runs" / "main.trec", root / "runs" / "my-system.trec")
    argv = ["gate", "fx", "--systems", "run:runs/my-system.trec", "--k", "5", *CI]
    argv += ["--gates", "main/gates.yaml", "--baseline", "main/baseline.json"]
    code, out, err = run_cli(argv, root)
    assert code == 2, out + err
    assert "is stale and was not compared" in err
    markdown = (root / "ci" / "summary.md").read_text(encoding="utf-8")
    assert markdown.startswith("**evalkit gate: ERROR**")
    argv = ["report", "fx", "-p", "systems", "run:runs/my-system.trec", "-p", "k", "5"]
    argv += ["-p", "base_system", "my-system", "-p", "n_resamples", "200"]
    argv += ["--gates", "main/gates.yaml", "--baseline", "main/baseline.json"]
    code, out, err = run_cli([*argv, "--output", "reports/stale.html"], root)
    assert code == 0, out + err
    soup = BeautifulSoup(
        (root / "reports" / "stale.html").read_text(encoding="utf-8"), "html.parser"
    )
    verdict = soup.select_one('[data-evalkit="verdict"]')
    assert verdict is not None
    text = verdict.get_text(" ")
    assert "ERROR" in text
    assert "is stale and was not compared" in text
