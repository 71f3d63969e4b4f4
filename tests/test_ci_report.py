"""CI-native outputs (issue 17, item 6): JUnit XML that a JUnit parser reads, a Markdown summary
of at most 60 lines on the committed fixture, both written through the leak-scanned artifact
writer; and the verdict they are built from (item 1).

The committed fixture is evaluated once per module, in-process; the CLI tests use the tiny
fixture and the committed probes.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from cli_runner import run_cli
from junit10 import junit10_problems
from junitparser import Error, Failure, JUnitXml, Skipped
from markdown_it import MarkdownIt

from evalkit.gates import GateVerdict, check_gates, load_gates, load_report
from evalkit.report.ci import (
    MAX_SUMMARY_LINES,
    gates_junit,
    gates_markdown,
    probes_junit,
    probes_markdown,
)
from evalkit.report.verdict import CHANGE_COLUMNS, HEADLINE_COLUMNS, build_verdict

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURE_DIR = REPO / "fixtures" / "synthetic-bilingual-v1"
PROBES = REPO / "fixtures" / "probes"


def tree(root: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture(scope="module")
def committed() -> tuple[Any, Any, Any]:
    """(evaluation, gate results, baseline) of the five reference systems, committed fixture."""
    from evalkit.fixtures import load_fixture
    from evalkit.run import evaluate

    evaluation = evaluate(load_fixture(FIXTURE_DIR), repeats=2)
    baseline = load_report(FIXTURE_DIR / "baseline.json")
    gates = load_gates(FIXTURE_DIR / "gates.yaml")
    return evaluation, check_gates(evaluation.to_report(), gates, baseline), baseline


@pytest.fixture(scope="module")
def all_failing(committed: tuple[Any, Any, Any]) -> Any:
    """Gate results where most checks fail: the baseline's means of every higher-is-better
    measure raised by 0.1, at most to 1 (a mean cannot be higher, and a baseline claiming one is
    refused), so each current mean below 0.9 is 0.1 below it, beyond any tolerance."""
    from evalkit.measures.names import higher_is_better

    evaluation, _, baseline = committed
    raised = copy.deepcopy(baseline)
    for section in ("summary",):
        for measures in raised[section].values():
            for name, value in measures.items():
                if higher_is_better(name):
                    value["mean"] = min(value["mean"] + 0.1, 1.0)
    for languages in raised["summaryByLanguage"].values():
        for measures in languages.values():
            for name, value in measures.items():
                if higher_is_better(name):
                    value["mean"] = min(value["mean"] + 0.1, 1.0)
    gates = load_gates(FIXTURE_DIR / "gates.yaml")
    return check_gates(evaluation.to_report(), gates, raised)


# --- the verdict ---------------------------------------------------------------------------


def test_verdict_counts_gates_and_lists_direction_aware_changes(
    committed: tuple[Any, Any, Any], all_failing: Any
) -> None:
    evaluation, results, _ = committed
    verdict = build_verdict(evaluation, results, base="hybrid")
    assert verdict.passed
    assert verdict.gates_total == len(results)  # every committed check is evaluated
    assert verdict.failing_gates.empty
    assert tuple(verdict.changes.columns) == CHANGE_COLUMNS
    assert tuple(verdict.headline.columns) == HEADLINE_COLUMNS
    # A row is "better" exactly when the system's mean is better in the measure's direction.
    from evalkit.measures.names import higher_is_better

    for row in verdict.changes.itertuples(index=False):
        up = row.mean > row.base_mean
        assert (row.direction == "better") == (up if higher_is_better(row.measure) else not up)
        assert row.p_adjusted <= 0.05
        assert row.base == "hybrid"
    assert set(verdict.changes["system"]) <= set(evaluation.systems) - {"hybrid"}
    failing = build_verdict(evaluation, all_failing, base="hybrid")
    assert not failing.passed
    assert failing.gates_failed == int((all_failing["status"] == "fail").sum()) > 50


def test_verdict_headline_matches_the_ablation_intervals(committed: tuple[Any, Any, Any]) -> None:
    from evalkit.report.tables import ablation_table

    evaluation, results, _ = committed
    verdict = build_verdict(evaluation, results, base="hybrid", n_resamples=500, seed=3)
    ablation = ablation_table(
        evaluation.per_query,
        systems=list(evaluation.systems),
        measures=list(verdict.primary),
        n_resamples=500,
        seed=3,
    )
    merged = verdict.headline.merge(ablation, on=["system", "measure"], suffixes=("", "_a"))
    assert len(merged) == len(verdict.headline) == 5 * len(verdict.primary)
    for column in ("mean", "ci_low", "ci_high"):
        assert (merged[column] == merged[f"{column}_a"]).all()


def test_verdict_refuses_an_unknown_base(committed: tuple[Any, Any, Any]) -> None:
    from evalkit.errors import InputError

    evaluation, results, _ = committed
    with pytest.raises(InputError, match=r"base system 'hybird'.*hybrid"):
        build_verdict(evaluation, results, base="hybird")


# --- Markdown ------------------------------------------------------------------------------


def _tables(markdown: str) -> list[list[list[str]]]:
    """Every table of ``markdown`` as rendered by markdown-it (GFM tables): rows of cell text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(token.content)
        elif token.type == "tr_close" and row is not None:
            tables[-1].append(row)
            row = None
    return tables


@pytest.mark.parametrize("case", ["passing", "failing"])
def test_markdown_stays_within_60_lines_on_the_committed_fixture(
    committed: tuple[Any, Any, Any], all_failing: Any, case: str
) -> None:
    evaluation, results, _ = committed
    gate_results = results if case == "passing" else all_failing
    verdict = build_verdict(evaluation, gate_results, base="hybrid")
    gated = GateVerdict.from_checks(gate_results)
    text = gates_markdown(gated, title="synthetic-bilingual-v1 1.1.0", ablation=verdict)
    lines = text.splitlines()
    assert len(lines) <= MAX_SUMMARY_LINES == 60
    # the first line is the verdict, with counts
    outcome = "PASS" if case == "passing" else "FAIL"
    assert lines[0].startswith(f"**evalkit gate: {outcome}** · ")
    evaluated = int(gate_results["status"].isin(["pass", "fail"]).sum())
    assert f"{evaluated} of {len(gate_results)} checks evaluated" in lines[0]
    headings = [line for line in lines if line.startswith("### ")]
    if case == "failing":
        assert headings[0] == "### Failing checks"
        assert "more failing checks not shown" in text
    else:
        assert "### Failing checks" not in headings
    # the comparison with --base comes after the verdict, labelled as not the baseline
    within = next(i for i, line in enumerate(lines) if line.startswith("### Ablation against"))
    assert "--base)" in lines[within]
    assert lines[within + 2].startswith("Not the baseline")


def test_markdown_without_gates_or_changes_says_so(committed: tuple[Any, Any, Any]) -> None:
    evaluation, _, _ = committed
    verdict = build_verdict(evaluation, None, base="hybrid", primary=["NoAnswerFP"])
    text = gates_markdown(GateVerdict("NONE", "no gates and no baseline", None), title="x")
    assert text.startswith("**evalkit gate: no gates** · no gates")
    assert (
        "Ablation"
        not in gates_markdown(
            GateVerdict("NONE", "no gates and no baseline", None), title="x", ablation=verdict
        ).split("### Ablation")[0]
    )


# --- JUnit ---------------------------------------------------------------------------------


def test_gate_junit_parses_as_junit(all_failing: Any, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "gates.xml"
    path.write_text(
        gates_junit(GateVerdict.from_checks(all_failing), suite="synthetic-bilingual-v1"),
        encoding="utf-8",
    )
    assert junit10_problems(path.read_text(encoding="utf-8")) == []
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    failed = int((all_failing["status"] == "fail").sum())
    assert suite.tests == len(all_failing)
    assert suite.failures == failed
    cases = list(suite)
    assert len(cases) == len(all_failing)
    outcomes = [type(r) for case in cases for r in case.result]
    assert outcomes.count(Failure) == failed
    first = next(case for case in cases if case.result)
    assert first.classname in set(all_failing["gate"])
    message = first.result[0].message
    assert "actual" in message
    assert ">=" in message


def test_skipped_gate_checks_are_skipped_cases(tmp_path: pathlib.Path) -> None:
    import pandas as pd

    from evalkit.gates import GATE_COLUMNS

    frame = pd.DataFrame(
        [
            [
                "g1",
                "absolute",
                "s",
                "RR@10",
                "all",
                "",
                "",
                float("nan"),
                float("nan"),
                pd.NA,
                "",
                "not evaluated",
                "system s not in the evaluation",
            ],
            [
                "g2",
                "new-failures",
                "s",
                "new-failures",
                "all",
                "baseline",
                "<=",
                0.0,
                2.0,
                False,
                "q-1,q-2",
                "fail",
                "",
            ],
        ],
        columns=GATE_COLUMNS,
    )
    path = tmp_path / "g.xml"
    path.write_text(gates_junit(GateVerdict.from_checks(frame), suite="tiny"), encoding="utf-8")
    cases = list(next(iter(JUnitXml.fromfile(str(path)))))
    assert isinstance(cases[0].result[0], Skipped)
    assert "not evaluated" in cases[0].result[0].message
    assert isinstance(cases[1].result[0], Failure)
    assert cases[1].result[0].text == "new failures: q-1, q-2"


# --- the CLI -------------------------------------------------------------------------------


def test_gate_cli_writes_junit_and_markdown(tiny_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gates = workspace / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\nabsolute:\n"
        "  - {id: high-bar, system: lexical, measure: ContextPrecision@10, min: 0.999}\n"
        "  - {id: low-bar, system: lexical, measure: ContextPrecision@10, min: 0.001}\n",
        encoding="utf-8",
    )
    argv = ["gate", str(tiny_dir), "--systems", "lexical,hybrid", "--repeats", "1"]
    argv += ["--gates", str(gates), "--junit", "ci/gates.xml", "--markdown", "ci/summary.md"]
    code, _, err = run_cli(argv, workspace)
    assert code == 1, err  # the high bar fails: exit 1, both files still written
    cases = list(next(iter(JUnitXml.fromfile(str(workspace / "ci" / "gates.xml")))))
    assert [(c.classname, bool(c.result)) for c in cases] == [
        ("high-bar", True),
        ("low-bar", False),
    ]
    summary = (workspace / "ci" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("**evalkit gate: FAIL** · 1 of 2 evaluated")
    assert "| high-bar |" in summary  # readable raw: IDs are not escaped
    assert "low-bar" not in summary
    assert "lexical (base)" in summary  # the default base: the first system


def test_gate_cli_refuses_a_leak_and_writes_nothing(
    make_fixture: Callable[..., pathlib.Path], tmp_path: pathlib.Path
) -> None:
    def mutate(data: dict[str, Any]) -> None:  # a title equal to the fixture ID, which the
        data["fixture.yaml"]["id"] = "ferry-guide-v1"  # JUnit suite and the summary carry
        data["documents.yaml"][0]["title"] = "ferry-guide-v1"

    leaky = make_fixture(mutate)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gates = workspace / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\nabsolute:\n  - {system: lexical, measure: R@5, min: 0.001}\n",
        encoding="utf-8",
    )
    for option, name in (("--junit", "gates.xml"), ("--markdown", "summary.md")):
        argv = ["gate", str(leaky), "--systems", "lexical", "--repeats", "1", "--gates"]
        code, _, err = run_cli([*argv, str(gates), option, f"ci/{name}"], workspace)
        assert code == 1
        assert "nothing" in err
        assert "ferry-guide" not in err.split("error:", 1)[1]
        assert tree(workspace) == ["gates.yaml"]


def test_probes_cli_writes_junit_and_markdown(tmp_path: pathlib.Path) -> None:
    argv = [
        "probes",
        str(PROBES),
        "--target",
        "stdlib",
        "--baseline",
        str(PROBES / "baseline.json"),
    ]
    argv += ["--junit", "p.xml", "--markdown", "p.md"]
    code, _, _ = run_cli(argv, tmp_path)
    assert code == 0
    assert junit10_problems((tmp_path / "p.xml").read_text(encoding="utf-8")) == []
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "p.xml"))))
    from evalkit.probes import get_target, load_probes

    target = get_target("stdlib")
    probes = load_probes(PROBES, tools=target.tools.names())
    cases = list(suite)
    assert sorted(c.name for c in cases) == sorted(p.id for p in probes)
    assert suite.failures == suite.errors == 0
    summary = (tmp_path / "p.md").read_text(encoding="utf-8")
    assert len(summary.splitlines()) <= 60
    assert "**Verdict: PASS**" in summary


def test_probe_outputs_show_thresholds_and_errors() -> None:
    import pandas as pd

    from evalkit.probes import RESULT_COLUMNS

    row = dict.fromkeys(RESULT_COLUMNS)
    failing = {
        **row,
        "id": "p-1",
        "tool": "find_symbol",
        "status": "fail",
        "recall": 0.0,
        "precision": 1.0,
        "f1": 0.0,
        "recall_min": 0.5,
        "precision_min": 0.0,
        "pass_recall": False,
        "pass_precision": True,
        "latency_ms": 2.0,
    }
    broken = {
        **row,
        "id": "p-2",
        "tool": "find_symbol",
        "status": "error",
        "error": "tool 'find_symbol': missing argument(s) 'name'",
        "latency_ms": float("nan"),
        "pass_recall": False,
        "pass_precision": False,
    }
    frame = pd.DataFrame([failing, broken])
    suite = next(iter(JUnitXml.fromstring(probes_junit(frame, suite="stdlib").encode())))
    first, second = list(suite)
    assert first.result[0].message == "recall 0.000 < recall_min 0.500"
    assert isinstance(second.result[0], Error)
    text = probes_markdown(frame, target="stdlib")
    assert "**Verdict: FAIL**" in text
    rows = _tables(text)[1]
    assert rows[0] == [
        "probe",
        "tool",
        "status",
        "recall",
        "recall\\_min",
        "precision",
        "precision\\_min",
    ]
    assert rows[1][:5] == ["p\\-1", "find\\_symbol", "fail", "0\\.000", "0\\.500"]


def test_probes_cli_refuses_a_path_shaped_message(tmp_path: pathlib.Path) -> None:
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "p.yaml").write_text(
        "- id: path-arg\n"
        "  description: an argument named like an absolute path, which the error names\n"
        "  probe: {tool: find_symbol, args: {name: decode, /etc/passwd: 1}}\n"
        "  expected: {symbols: [json.decoder.JSONDecoder.decode]}\n",
        encoding="utf-8",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv = ["probes", str(probes), "--target", "stdlib", "--junit", "p.xml", "--markdown", "p.md"]
    code, _, err = run_cli(argv, workspace)
    assert code == 1, err
    assert "POSIX path" in err
    assert tree(workspace) == []


class AbstainsOnNoAnswer:
    """The lexical system, except that it returns nothing for the queries in ``query_ids``
    (the generated fixture's no-answer queries): NoAnswerFP falls from 1 to 0 on them."""

    name = "abstainer"

    def __init__(self, query_ids: frozenset[str]) -> None:
        from evalkit.systems import resolve_system

        self.inner = resolve_system("lexical")
        self.query_ids = query_ids

    def definition(self) -> dict[str, Any]:
        return {**self.inner.definition(), "abstains": "no-answer"}

    def index(self, chunks: Any) -> None:
        self.inner.index(chunks)

    def search(self, query: Any, k: int) -> Any:
        return [] if query.id in self.query_ids else self.inner.search(query, k)

    def close(self) -> None:
        self.inner.close()


def test_a_lower_no_answer_fp_is_a_significant_improvement() -> None:
    from evalkit.fixtures.generate import generate_fixture
    from evalkit.run import evaluate

    fixture = generate_fixture(7, queries=80, no_answer_fraction=0.4)
    no_answer = frozenset(q.id for q in fixture.queries if not q.answerable)
    assert len(no_answer) >= 20
    evaluation = evaluate(fixture, ["lexical", AbstainsOnNoAnswer(no_answer)], repeats=1)
    verdict = build_verdict(evaluation, None, base="lexical", n_resamples=500)
    row = verdict.changes[verdict.changes["measure"] == "NoAnswerFP"]
    assert len(row) == 1
    assert row["diff"].iloc[0] < 0  # fewer false answers ...
    assert row["direction"].iloc[0] == "better"  # ... is better
    assert row["p_adjusted"].iloc[0] <= 0.05


@pytest.mark.parametrize("case", ["bad gates file", "missing baseline", "bad gates in fixture"])
def test_absolute_paths_and_ci_files_keep_the_real_error(
    case: str, tiny_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """Issue 49: with absolute paths, the real error (exit 2) is reported and still written to
    the CI files, its paths named by what they are, not hidden by a shape-scan refusal."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gates = workspace / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\nbaseline: {path: base.json}\nabsolute:\n"
        "  - {id: low-bar, system: lexical, measure: R@5, min: 0.001}\n",
        encoding="utf-8",
    )
    argv = ["gate", str(tiny_dir.resolve()), "--systems", "lexical", "--repeats", "1"]
    if case == "bad gates file":
        gates.write_text("schema: evalkit.gates/1\nabsolute: [{nonsense: 1}]\n", "utf-8")
        argv += ["--gates", str(gates)]
    elif case == "missing baseline":
        argv += ["--gates", str(gates), "--baseline", str(workspace / "nope.json")]
    else:
        (tiny_dir / "gates.yaml").write_text("schema: evalkit.gates/1\nabsolute: 3\n", "utf-8")
    code, _, err = run_cli([*argv, "--junit", "ci/j.xml", "--markdown", "ci/s.md"], workspace)
    assert code == 2, err
    assert "absolute POSIX path" not in err
    assert "not written" not in err
    junit = (workspace / "ci" / "j.xml").read_text(encoding="utf-8")
    markdown = (workspace / "ci" / "s.md").read_text(encoding="utf-8")
    error = next(iter(next(iter(JUnitXml.fromstring(junit.encode()))))).result[0]
    assert isinstance(error, Error)
    for text in (junit, markdown):
        assert str(tmp_path) not in text
        assert str(tmp_path.resolve()) not in text
    if case == "missing baseline":
        assert "the --baseline file" in markdown
