"""The pull-request loop for a team's own system (issue 34), end to end through the CLI.

A held-out scenario: a generated fixture (seed 34, never committed, nothing tuned on it), the
team's system as a run file made by the lexical reference system. On main, ``evalkit baseline
--systems run:main/my-system.trec``; on the pull request, ``evalkit gate --systems
run:pr/my-system.trec``: the same system name, another run. Every gate run writes JUnit and
Markdown, and the JUnit keeps the rules of Jenkins' junit-10.xsd (``junit10.py``) and reads in
junitparser.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from cli_runner import run_cli
from junit10 import junit10_problems
from junitparser import Error, Failure, JUnitXml

from evalkit.fixtures import dump_fixture, generate_fixture
from evalkit.formats import write_run
from evalkit.run import evaluate

GATES = "schema: evalkit.gates/1\nbaseline:\n  path: baseline.json\n  systems: [my-system]\n"
CI = ["--junit", "ci/gates.xml", "--markdown", "ci/summary.md"]

# junit-10.xsd refuses this header: what `evalkit gate --junit` wrote before issue 34
OLD_HEADER = (
    "<?xml version='1.0' encoding='utf-8'?>\n"
    '<testsuites name="evalkit gate" tests="1" failures="0" errors="0" skipped="1" time="0">\n'
    '  <testsuite name="gates tiny" tests="1" failures="0" errors="0" skipped="1" time="0.000">\n'
    '    <testcase classname="g1" name="s RR@10 (all)" time="0.000">\n'
    '      <skipped message="not evaluated: system s not in the evaluation" />\n'
    "    </testcase>\n  </testsuite>\n</testsuites>\n"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """fx/ (the fixture), main/ and pr/ runs of my-system, gates.yaml and baseline.json."""
    root = tmp_path_factory.mktemp("pr-loop")
    fixture = generate_fixture(34, documents=24, queries=40)
    dump_fixture(fixture, root / "fx")
    rankings = evaluate(fixture, ["lexical"], k=10, repeats=1).rankings
    run = rankings[["query_id", "chunk_id", "rank", "score"]].rename(columns={"chunk_id": "doc_id"})
    (root / "main").mkdir()
    (root / "pr").mkdir()
    write_run(run, root / "main" / "my-system.trec", run_id="main")
    # the pull request reverses the top 10 of every Chinese query: a regression in zh only
    language = {query.id: query.language for query in fixture.queries}
    reversed_run = run.copy()
    zh = reversed_run["query_id"].map(language) == "zh"
    assert zh.any()
    assert (~zh).any()
    top = reversed_run.groupby("query_id")["rank"].transform("max")
    reversed_run.loc[zh, "rank"] = top[zh] + 1 - reversed_run.loc[zh, "rank"]
    reversed_run.loc[zh, "score"] = -reversed_run.loc[zh, "rank"].astype(float)
    write_run(reversed_run, root / "pr" / "my-system.trec", run_id="pr")
    (root / "gates.yaml").write_text(GATES, encoding="utf-8")
    argv = ["baseline", "fx", "--systems", "run:main/my-system.trec", "--repeats", "1"]
    code, _, err = run_cli([*argv, "--output", "baseline.json"], root)
    assert code == 0, err
    return root


def gate(workspace: pathlib.Path, run: str, *extra: str) -> tuple[int, str, str]:
    for name in ("gates.xml", "summary.md"):
        (workspace / "ci" / name).unlink(missing_ok=True)
    argv = ["gate", "fx", "--systems", f"run:{run}", "--repeats", "1", "--gates", "gates.yaml"]
    return run_cli([*argv, *CI, *extra], workspace)


def outputs(workspace: pathlib.Path) -> tuple[str, str, Any]:
    """(JUnit text, Markdown text, the JUnit as junitparser reads it); both files must exist
    and the JUnit must keep junit-10.xsd's rules."""
    junit = (workspace / "ci" / "gates.xml").read_text(encoding="utf-8")
    markdown = (workspace / "ci" / "summary.md").read_text(encoding="utf-8")
    assert junit10_problems(junit) == []
    return junit, markdown, JUnitXml.fromfile(str(workspace / "ci" / "gates.xml"))


def test_the_validator_refuses_what_evalkit_wrote_before() -> None:
    problems = junit10_problems(OLD_HEADER)
    assert problems == ["<testsuites> has attribute 'skipped', which junit-10.xsd does not allow"]
    bad_time = OLD_HEADER.replace(' skipped="1" time="0">', ' time="1 s">', 1)
    assert junit10_problems(bad_time) == [
        "<testsuites> time '1 s' does not match junit-10.xsd's pattern"
    ]
    assert junit10_problems(OLD_HEADER.replace(' skipped="1" time="0">', ">", 1)) == []


def test_a_regression_of_my_system_fails_the_gate_and_names_it(workspace: pathlib.Path) -> None:
    code, out, err = gate(workspace, "pr/my-system.trec")
    assert code == 1, out + err
    assert "my-system: definition changed since the baseline (sha256:" in out
    assert out.splitlines()[-1].startswith("FAIL: ")
    assert "evalkit baseline" not in out  # never advise blessing a regression
    _, markdown, xml = outputs(workspace)
    failures = [
        (case.name, result.message)
        for suite in xml
        for case in suite
        for result in case.result
        if isinstance(result, Failure)
    ]
    assert failures
    assert all(name.startswith("my-system ") for name, _ in failures)
    measures = {name.split()[1] for name, _ in failures}
    assert measures & {"RR@10", "nDCG(dcg='exp-log2')@10"}
    assert all(name.endswith(("(zh)", "(all)")) for name, _ in failures)  # en is unchanged
    lines = markdown.splitlines()
    assert lines[0].startswith("**evalkit gate: FAIL** · my-system")
    assert "zh; worst q-zh" in lines[0]  # where it got worse, and the worst queries
    assert "checks evaluated" in lines[0]
    assert "\u2060" not in markdown  # measure names are code spans, copied as typed
    failing = lines.index("### Failing checks")
    assert "| my-system | `RR@10` | zh |" in markdown  # readable raw, with its worst queries
    row = next(line for line in lines[failing:] if line.startswith("| my-system | `RR@10` | zh |"))
    assert "q-" in row.split("|")[6]
    where = lines[lines.index("### Where") : lines.index("### Latency (ms)")]
    zh_row = next(line for line in where if line.startswith("| my-system | `RR@10` | zh |"))
    en_row = next(line for line in where if line.startswith("| my-system | `RR@10` | en |"))
    # zh got worse (its queries worse / better / unchanged), en did not move
    assert int(zh_row.split("|")[6].split("/")[0]) > 0
    assert "-0." in zh_row.split("|")[5]
    assert int(en_row.split("|")[6].split("/")[0]) == 0


def test_the_same_run_as_main_passes(workspace: pathlib.Path) -> None:
    code, out, err = gate(workspace, "main/my-system.trec")
    assert code == 0, out + err
    assert "definition changed" not in out
    _, markdown, xml = outputs(workspace)
    assert markdown.startswith("**evalkit gate: PASS** · my-system: no significant change")
    assert "evaluated check(s) passed" in markdown.splitlines()[0]
    assert not [r for suite in xml for case in suite for r in case.result]


def test_a_gate_naming_a_misspelt_system_is_an_error_in_both_files(
    workspace: pathlib.Path,
) -> None:
    typo = workspace / "typo.yaml"
    typo.write_text(
        "schema: evalkit.gates/1\nabsolute:\n  - {system: my-sytem, measure: RR@10, min: 0.1}\n",
        encoding="utf-8",
    )
    argv = ["gate", "fx", "--systems", "run:main/my-system.trec", "--repeats", "1"]
    code, out, err = run_cli([*argv, "--gates", "typo.yaml", *CI], workspace)
    assert code == 2, out + err
    assert "'my-sytem' (did you mean 'my-system'?)" in err
    _, markdown, xml = outputs(workspace)
    errors = [r for suite in xml for case in suite for r in case.result if isinstance(r, Error)]
    assert len(errors) == 1
    assert "my-sytem" in errors[0].message
    assert markdown.startswith("**evalkit gate: ERROR**: the gates were not checked")


def test_a_stale_baseline_still_writes_both_files(workspace: pathlib.Path) -> None:
    code, _, err = gate(workspace, "pr/my-system.trec", "--k", "5")
    assert code == 2
    assert "stale and was not compared" in err
    assert "first review it with 'evalkit diff" in err  # before any refresh command
    _, markdown, xml = outputs(workspace)
    errors = [r for suite in xml for case in suite for r in case.result if isinstance(r, Error)]
    assert len(errors) == 1
    assert "stale" in errors[0].message
    assert "stale" in markdown


def test_no_check_evaluated_fails_unless_allowed(workspace: pathlib.Path) -> None:
    # my-system is known (the baseline has it) but this run evaluates another system only
    other = workspace / "other"
    other.mkdir(exist_ok=True)
    (other / "their-system.trec").write_bytes((workspace / "main" / "my-system.trec").read_bytes())
    code, out, _ = gate(workspace, "other/their-system.trec")
    assert code == 1
    assert "not evaluated: my-system (gated, but left out by --systems)" in out
    assert out.splitlines()[-1].startswith("FAIL: no check was evaluated")
    junit, _, _ = outputs(workspace)
    assert 'name="gates evaluated"' in junit
    code, out, _ = gate(workspace, "other/their-system.trec", "--allow-none-evaluated")
    assert code == 0
    assert "0 of " in out.splitlines()[-1]
    outputs(workspace)
