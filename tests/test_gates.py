"""Tests of evalkit.gates (spec, baseline, check): the gates file schema, baselines, and
checking gates on reports.

Unit tests use small hand-made report dicts whose means are written out by hand; the
integration tests at the bottom evaluate the committed fixture once per module.
"""

from __future__ import annotations

import copy
import json
import math
import pathlib
import re
from typing import Any

import pandas as pd
import pytest
import yaml
from cli_runner import run_cli
from hypothesis import HealthCheck, given, settings, strategies as st
from wrapped_system import WrappedSystem

from evalkit.errors import FixtureError, InputError, StaleBaselineError
from evalkit.gates import (
    GATE_COLUMNS,
    ChangeSettings,
    Gates,
    baseline_from_report,
    check_baseline_fresh,
    check_gates,
    compare_with_baseline,
    format_gate_table,
    gates_to_report,
    load_gates,
    load_report,
    write_baseline,
)
from evalkit.results import deterministic_projection

HASH_A = "sha256:" + "a" * 64
HASH_B = "sha256:" + "b" * 64


def make_report(
    summary: dict[str, dict[str, float]],
    by_language: dict[str, dict[str, dict[str, float]]] | None = None,
    failures: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    *,
    definition: str = HASH_A,
) -> dict[str, Any]:
    """A minimal evalkit.report/1 dict; means are given explicitly, n is a dummy 1."""
    by_language = by_language or {}
    return {
        "schema": "evalkit.report/1",
        "fixture": {"id": "tiny", "version": "1.0.0"},
        "corpusHash": HASH_A,
        "evaluationDefinitionHash": definition,
        "providerDefinitionsHash": HASH_A,
        "settings": {"k": 10, "repeats": 2, "measures": ["RR@10", "NoAnswerFP"]},
        "systems": list(summary),
        "summary": {
            s: {m: {"mean": v, "n": 1} for m, v in measures.items()}
            for s, measures in summary.items()
        },
        "summaryByLanguage": {
            s: {
                lang: {m: {"mean": v, "n": 1} for m, v in measures.items()}
                for lang, measures in languages.items()
            }
            for s, languages in by_language.items()
        },
        "perQuery": {s: {} for s in summary},
        "failures": [
            {"system": s, "queryId": q, "language": "en", "kind": k, "chunkIds": []}
            for s, q, k in failures
        ],
        "determinism": {"verdict": "deterministic", "repeats": 2},
        "latency": {s: {"count": 1, "meanMs": 1.0} for s in summary},
    }


def gates_from(text: str, tmp_path: pathlib.Path) -> Gates:
    path = tmp_path / "gates.yaml"
    path.write_text(text, encoding="utf-8")
    return load_gates(path)


def problems_of(text: str, tmp_path: pathlib.Path) -> list[tuple[str, str, str, str]]:
    with pytest.raises(FixtureError) as caught:
        gates_from(text, tmp_path)
    return [(p.file, p.object_id, p.field, p.message) for p in caught.value.problems]


# --- the gates file -----------------------------------------------------------------------------

VALID = """\
schema: evalkit.gates/1
absolute:
  - id: rerank-rr
    system: hybrid-rerank
    measure: RR@10
    min: 0.78
  - system: hybrid-rerank
    measure: NoAnswerFP
    language: zh
    max: 0.34
relative:
  - system: hybrid-rerank
    reference: hybrid
    measure: RR@10
    max_drop: 0.05
baseline:
  systems: [hybrid, hybrid-rerank]
  tolerance: 0.02
  max_new_failures: 0
"""


def test_valid_file_loads_with_defaults(tmp_path: pathlib.Path) -> None:
    gates = gates_from(VALID, tmp_path)
    assert gates.gate_ids() == ("rerank-rr", "absolute[1]", "relative[0]")
    assert gates.absolute[0].bound() == (">=", 0.78)
    assert gates.absolute[1].bound() == ("<=", 0.34)
    assert gates.absolute[0].language == "all"
    assert gates.baseline is not None
    assert gates.baseline.path == "baseline.json"
    assert gates.baseline.per_language is True
    assert gates.baseline.measures == "all"
    assert gates.baseline.systems == ("hybrid", "hybrid-rerank")


def test_measure_names_are_canonicalised(tmp_path: pathlib.Path) -> None:
    from evalkit.measures import parse_measure

    text = VALID.replace("measure: RR@10\n    min", "measure: nDCG(dcg='exp-log2')@10\n    min")
    gates = gates_from(text, tmp_path)
    assert gates.absolute[0].measure == str(parse_measure("nDCG(dcg='exp-log2')@10"))


def test_unknown_field_names_file_line_gate_and_field(tmp_path: pathlib.Path) -> None:
    text = VALID.replace("    min: 0.78\n", "    min: 0.78\n    minimum: 0.5\n")
    assert problems_of(text, tmp_path) == [
        (
            "gates.yaml:3",
            "rerank-rr",
            "minimum",
            "unknown field; remove it or fix its spelling (see fixtures/README.md)",
        )
    ]


def test_every_problem_is_reported_together(tmp_path: pathlib.Path) -> None:
    text = """\
schema: evalkit.gates/2
absolute:
  - system: lexical
    measure: RR@10
    min: 0.5
    max: 0.9
  - system: lexical
    measure: NotAMeasure@10
    min: 0.5
relative:
  - system: hybrid
    reference: hybrid
    measure: RR@10
    max_drop: -0.1
baseline:
  path: /etc/baseline.json
  tolerance: .inf
"""
    found = {(p[0], p[1], p[2]) for p in problems_of(text, tmp_path)}
    assert found == {
        ("gates.yaml:1", "", "schema"),
        ("gates.yaml:3", "absolute[0]", ""),  # min and max together
        ("gates.yaml:7", "absolute[1]", "measure"),
        ("gates.yaml:11", "relative[0]", "max_drop"),
        ("gates.yaml:15", "baseline", "path"),
        ("gates.yaml:15", "baseline", "tolerance.absolute"),  # a bare number is absolute
    }


def test_problems_never_quote_the_offending_value(tmp_path: pathlib.Path) -> None:
    secret = "sk-live-0123456789abcdefSECRET"
    text = f"schema: evalkit.gates/1\nabsolute:\n  - system: {secret}\n    measure: RR@10\n"
    text += f"    min: 0.5\n    {secret}: 1\n"
    with pytest.raises(FixtureError) as caught:
        gates_from(text, tmp_path)
    # the unknown key is a field name and is named; the bad system value is never quoted
    assert str(caught.value).count(secret) == 1
    assert f"{secret}: unknown field" in str(caught.value)


def test_same_system_twice_and_min_and_max_explain_the_fix(tmp_path: pathlib.Path) -> None:
    text = """\
schema: evalkit.gates/1
relative:
  - system: hybrid
    reference: hybrid
    measure: RR@10
    max_drop: 0.1
"""
    [(_, label, _, message)] = problems_of(text, tmp_path)
    assert label == "relative[0]"
    assert message == "system and reference must be different systems"


def test_duplicate_gate_ids_and_duplicate_keys(tmp_path: pathlib.Path) -> None:
    text = """\
schema: evalkit.gates/1
absolute:
  - id: g1
    system: lexical
    measure: RR@10
    min: 0.5
  - id: g1
    system: lexical
    system: hybrid
    measure: RR@10
    min: 0.5
"""
    found = problems_of(text, tmp_path)
    assert (
        "gates.yaml:9",
        "",
        "system",
        "this key appears twice in one mapping; keep one",
    ) in found
    assert ("gates.yaml:7", "g1", "id", "duplicate gate ID, first used at gates.yaml:3") in found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "",
            (
                "gates.yaml",
                "",
                "",
                "expected a mapping with 'schema: evalkit.gates/1', found nothing",
            ),
        ),
        (
            "- 1\n",
            (
                "gates.yaml",
                "",
                "",
                "expected a mapping with 'schema: evalkit.gates/1', found list",
            ),
        ),
        (
            "schema: [\n",
            (
                "gates.yaml:2",
                "",
                "",
                "is not valid YAML (expected the node content, but found the end of the file, "
                "column 1); fix the syntax",  # end of input
            ),
        ),
        (
            "schema: evalkit.gates/1\n",
            ("gates.yaml", "", "", "defines no gates; add absolute, relative or baseline gates"),
        ),
    ],
)
def test_file_level_problems(
    tmp_path: pathlib.Path, text: str, expected: tuple[str, str, str, str]
) -> None:
    assert problems_of(text, tmp_path) == [expected]


def test_missing_file_is_a_fixture_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FixtureError, match=r"gates.yaml: file not found"):
        load_gates(tmp_path / "gates.yaml")


@pytest.mark.parametrize(
    "path", ["/abs/baseline.json", "../baseline.json", "a/../../b.json", "C:x"]
)
def test_baseline_path_must_stay_relative(tmp_path: pathlib.Path, path: str) -> None:
    text = f"schema: evalkit.gates/1\nbaseline:\n  path: {json.dumps(path)}\n"
    [(_, label, field, _)] = problems_of(text, tmp_path)
    assert (label, field) == ("baseline", "path")


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    section=st.sampled_from(["absolute", "relative", "baseline", "schema", "extra"]),
    value=_JSONISH,
)
def test_any_yaml_value_gives_gates_or_a_fixture_error(
    tmp_path: pathlib.Path, section: str, value: object
) -> None:
    data = {"schema": "evalkit.gates/1", section: value}
    text = yaml.safe_dump(data, allow_unicode=True)
    problems: tuple[object, ...] = ()
    try:
        gates_from(text, tmp_path)
    except FixtureError as error:  # anything else (TypeError, KeyError...) fails the test
        problems = error.problems
    # a rejected file always says why; an accepted one only has a valid schema value
    assert problems or section in ("absolute", "relative", "baseline", "schema")


# --- checking gates on hand-made reports ------------------------------------------------------

REPORT = make_report(
    {
        "hybrid": {"RR@10": 0.80, "NoAnswerFP": 0.25},
        "hybrid-rerank": {"RR@10": 0.75, "NoAnswerFP": 0.50},
    },
    {
        "hybrid": {
            "en": {"RR@10": 0.9, "NoAnswerFP": 0.0},
            "zh": {"RR@10": 0.7, "NoAnswerFP": 0.5},
        },
        "hybrid-rerank": {
            "en": {"RR@10": 0.6, "NoAnswerFP": 0.5},
            "zh": {"RR@10": 0.9, "NoAnswerFP": 0.5},
        },
    },
    failures=[
        ("hybrid", "q-en-1", "missed-relevant"),
        ("hybrid-rerank", "q-zh-9", "answered-no-answer"),
    ],
)


def test_absolute_and_relative_gates(tmp_path: pathlib.Path) -> None:
    gates = gates_from(
        """\
schema: evalkit.gates/1
absolute:
  - {id: rr-min, system: hybrid-rerank, measure: RR@10, min: 0.78}
  - {id: fp-max-zh, system: hybrid-rerank, measure: NoAnswerFP, language: zh, max: 0.5}
  - {id: rr-en, system: hybrid, measure: RR@10, language: en, min: 0.9}
relative:
  - {id: rel-rr, system: hybrid-rerank, reference: hybrid, measure: RR@10, max_drop: 0.05}
  - {id: rel-rr-tight, system: hybrid-rerank, reference: hybrid, measure: RR@10, max_drop: 0.04}
  - {id: rel-fp, system: hybrid-rerank, reference: hybrid, measure: NoAnswerFP, max_drop: 0.2}
""",
        tmp_path,
    )
    results = check_gates(REPORT, gates)
    assert list(results.columns) == GATE_COLUMNS
    rows = {r["gate"]: r for r in results.to_dict(orient="records")}
    # 0.75 >= 0.78 is false
    assert (rows["rr-min"]["op"], rows["rr-min"]["actual"], rows["rr-min"]["passed"]) == (
        ">=",
        0.75,
        False,
    )
    # zh NoAnswerFP 0.5 <= 0.5 (bound inclusive)
    assert (rows["fp-max-zh"]["language"], rows["fp-max-zh"]["passed"]) == ("zh", True)
    # en RR@10 of hybrid is 0.9 >= 0.9
    assert rows["rr-en"]["passed"]
    # 0.80 - 0.05 = 0.75 (float 0.75000000000000011) vs 0.75: passes within the slack
    assert rows["rel-rr"]["passed"]
    assert rows["rel-rr"]["threshold"] == pytest.approx(0.75)
    assert rows["rel-rr"]["reference"] == "hybrid"
    # 0.80 - 0.04 = 0.76 > 0.75
    assert not rows["rel-rr-tight"]["passed"]
    # NoAnswerFP is lower-is-better: threshold 0.25 + 0.2 = 0.45, 0.50 <= 0.45 is false
    assert (rows["rel-fp"]["op"], rows["rel-fp"]["passed"]) == ("<=", False)
    assert rows["rel-fp"]["threshold"] == pytest.approx(0.45)


def test_baseline_gates_per_language_and_new_failures(tmp_path: pathlib.Path) -> None:
    baseline = make_report(
        {"hybrid": {"RR@10": 0.81, "NoAnswerFP": 0.20}},
        {
            "hybrid": {
                "en": {"RR@10": 0.9, "NoAnswerFP": 0.0},
                "zh": {"RR@10": 0.8, "NoAnswerFP": 0.5},
            }
        },
        failures=[("hybrid", "q-zh-2", "missed-relevant")],
    )
    gates = gates_from(
        "schema: evalkit.gates/1\nbaseline:\n  systems: [hybrid]\n  tolerance: 0.02\n"
        "  max_new_failures: 0\n",
        tmp_path,
    )
    results = check_gates(REPORT, gates, baseline)
    got = [
        (
            r["kind"],
            r["language"],
            r["measure"],
            r["op"],
            round(r["threshold"], 9),
            r["actual"],
            r["passed"],
        )
        for r in results.to_dict(orient="records")
    ]
    assert got == [
        # overall: 0.80 >= 0.81 - 0.02; NoAnswerFP 0.25 <= 0.20 + 0.02 is false
        ("baseline", "all", "RR@10", ">=", 0.79, 0.80, True),
        ("baseline", "all", "NoAnswerFP", "<=", 0.22, 0.25, False),
        ("baseline", "en", "RR@10", ">=", 0.88, 0.9, True),
        ("baseline", "en", "NoAnswerFP", "<=", 0.02, 0.0, True),
        # zh: 0.7 >= 0.78 is false
        ("baseline", "zh", "RR@10", ">=", 0.78, 0.7, False),
        ("baseline", "zh", "NoAnswerFP", "<=", 0.52, 0.5, True),
        # q-en-1 fails now and did not before; q-zh-2 failed before and is fixed now
        ("new-failures", "all", "new-failures", "<=", 0.0, 1.0, False),
    ]
    assert results["query_ids"].iloc[-1] == "q-en-1"
    assert set(results["gate"]) == {"baseline:hybrid"}


def test_baseline_overall_only_and_selected_measures(tmp_path: pathlib.Path) -> None:
    gates = gates_from(
        "schema: evalkit.gates/1\nbaseline:\n  measures: [RR@10]\n  per_language: false\n",
        tmp_path,
    )
    results = check_gates(REPORT, gates, REPORT)
    assert list(zip(results["system"], results["language"], results["measure"], strict=True)) == [
        ("hybrid", "all", "RR@10"),
        ("hybrid-rerank", "all", "RR@10"),
    ]
    assert results["passed"].all()  # a report never regresses against itself


def test_stale_baseline_is_refused_with_an_explanation(tmp_path: pathlib.Path) -> None:
    gates = gates_from("schema: evalkit.gates/1\nbaseline:\n  tolerance: 0.0\n", tmp_path)
    stale = copy.deepcopy(REPORT)
    stale["evaluationDefinitionHash"] = HASH_B
    stale["settings"]["k"] = 5
    with pytest.raises(StaleBaselineError) as caught:
        check_gates(REPORT, gates, stale)
    message = str(caught.value)
    assert "stale and was not compared" in message
    assert "evaluationDefinitionHash: baseline 'sha256:bbbbbbbbbbbb...'" in message
    assert "changed since the baseline: settings" in message
    assert "evalkit baseline FIXTURE --output BASELINE.json" in message


def test_stale_when_schema_or_corpus_differs_and_names_the_refresh_command() -> None:
    other_schema = {**REPORT, "schema": "evalkit.report/0"}
    with pytest.raises(StaleBaselineError, match=r"schema: baseline 'evalkit.report/0'"):
        check_baseline_fresh(REPORT, other_schema, fixture="fx", baseline_path="fx/baseline.json")
    other_corpus = {**REPORT, "corpusHash": HASH_B}
    with pytest.raises(
        StaleBaselineError,
        match=r"queries, judgments, corpus .*'evalkit baseline fx --output fx/b.json'",
    ):
        check_baseline_fresh(REPORT, other_corpus, fixture="fx", baseline_path="fx/b.json")
    check_baseline_fresh(REPORT, copy.deepcopy(REPORT))  # fresh: no error
    # the refresh repeats the options that made this evaluation, and says where to run it
    options = ["--systems", "lexical,run:runs/mine.trec", "--k", "5"]
    with pytest.raises(StaleBaselineError) as caught:
        check_baseline_fresh(
            REPORT, other_corpus, fixture="../fx", baseline_path="../fx/b.json", options=options
        )
    message = str(caught.value)
    assert (
        "'evalkit baseline ../fx --systems lexical,run:runs/mine.trec --k 5 --output ../fx/b.json'"
        in message
    )
    assert "below the working directory" in message


def test_baseline_gates_without_a_baseline_are_an_input_error(tmp_path: pathlib.Path) -> None:
    gates = gates_from("schema: evalkit.gates/1\nbaseline: {}\n", tmp_path)
    with pytest.raises(InputError, match="no baseline was given"):
        check_gates(REPORT, gates)


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        (
            "{system: hybrid, measure: R@10, min: 0.5}",
            r"measure 'R@10' was not computed for system 'hybrid'",
        ),
        (
            "{system: hybrid, measure: RR@10, language: fr, min: 0.5}",
            r"language 'fr' has no results for system 'hybrid' .*languages: en, zh",
        ),
    ],
)
def test_unknown_system_measure_language_are_input_errors(
    tmp_path: pathlib.Path, gate: str, message: str
) -> None:
    gates = gates_from(f"schema: evalkit.gates/1\nabsolute:\n  - {gate}\n", tmp_path)
    with pytest.raises(InputError, match=message):
        check_gates(REPORT, gates)


def test_malformed_report_is_an_input_error(tmp_path: pathlib.Path) -> None:
    gates = gates_from(VALID, tmp_path)
    with pytest.raises(InputError, match=r"schema should be 'evalkit.report/1'"):
        check_gates({}, gates)
    broken = {**REPORT, "summary": []}
    with pytest.raises(InputError, match=r"report: summary should be a JSON object, found list"):
        check_gates(broken, gates)


def test_inputs_are_not_modified_and_empty_gates_keep_the_columns(tmp_path: pathlib.Path) -> None:
    before = copy.deepcopy(REPORT)
    gates = gates_from("schema: evalkit.gates/1\nbaseline:\n  max_new_failures: 1\n", tmp_path)
    check_gates(REPORT, gates, REPORT)
    assert before == REPORT
    empty = check_gates(REPORT, Gates.model_validate({"schema": "evalkit.gates/1"}))
    assert list(empty.columns) == GATE_COLUMNS
    assert empty.empty


def test_table_and_report_section(tmp_path: pathlib.Path) -> None:
    baseline = make_report({"hybrid": {"RR@10": 0.9, "NoAnswerFP": 0.25}})
    current = make_report(
        {"hybrid": {"RR@10": 0.8, "NoAnswerFP": 0.25}},
        failures=[("hybrid", "q-2", "missed-relevant"), ("hybrid", "q-1", "missed-relevant")],
    )
    gates = gates_from(
        "schema: evalkit.gates/1\nbaseline:\n  max_new_failures: 1\n  per_language: false\n",
        tmp_path,
    )
    results = check_gates(current, gates, baseline)
    table = format_gate_table(results)
    # The default tolerance min(0.02, 10% of the baseline): 0.9 - 0.02 and 0.25 + 0.02.
    assert table.splitlines() == [
        "gate             system  measure       language  threshold             actual  result",
        "---------------  ------  ------------  --------  --------------------  ------  ------",
        "baseline:hybrid  hybrid  RR@10         all       >= 0.8800 (baseline)  0.8000  FAIL",
        "baseline:hybrid  hybrid  NoAnswerFP    all       <= 0.2700 (baseline)  0.2500  pass",
        "baseline:hybrid  hybrid  new-failures  all       <= 1 (baseline)       2       FAIL",
        "new failures of hybrid: q-1, q-2",
        "FAIL: 2 of 3 evaluated check(s) failed; 3 of 3 checks evaluated",
    ]
    failed_only = format_gate_table(results, failed_only=True).splitlines()
    assert [line.split()[2] for line in failed_only[2:4]] == ["RR@10", "new-failures"]
    assert failed_only[-1] == "FAIL: 2 of 3 evaluated check(s) failed; 3 of 3 checks evaluated"
    assert len(failed_only) == 6
    section = gates_to_report(results)
    assert section[2]["queryIds"] == ["q-1", "q-2"]
    assert section[0] == {
        "gate": "baseline:hybrid",
        "kind": "baseline",
        "system": "hybrid",
        "measure": "RR@10",
        "language": "all",
        "reference": "baseline",
        "op": ">=",
        "threshold": pytest.approx(0.88),
        "actual": 0.8,
        "passed": False,
        "queryIds": [],
        "status": "fail",
    }


# --- baselines on disk --------------------------------------------------------------------------


def test_write_baseline_is_canonical_without_gates_with_latency(tmp_path: pathlib.Path) -> None:
    report = {**REPORT, "gates": [{"gate": "x"}]}
    written = write_baseline(report, "fx/baseline.json", private=(), workspace=tmp_path)
    assert written == tmp_path / "fx" / "baseline.json"
    loaded = load_report(written)
    # latency (issue #42: before and after in a pull request) is kept, outside every hash
    assert loaded.get("latency") == REPORT.get("latency")
    assert "gates" not in loaded
    assert loaded == baseline_from_report(REPORT)
    text = written.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text.index('"corpusHash"') < text.index('"schema"')  # keys sorted


def test_load_report_errors_name_the_file_and_line(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "schema": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json' line 3: not valid JSON"):
        load_report(bad)
    listed = tmp_path / "list.json"
    listed.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match=r"expected a JSON object, found list"):
        load_report(listed)
    with pytest.raises(InputError, match=r"does not exist.*evalkit baseline"):
        load_report(tmp_path / "missing.json")


def test_nan_is_never_a_mean() -> None:
    broken = copy.deepcopy(REPORT)
    broken["summary"]["hybrid"]["RR@10"]["mean"] = math.nan
    gates = Gates.model_validate(
        {
            "schema": "evalkit.gates/1",
            "absolute": [{"system": "hybrid", "measure": "RR@10", "min": 0.1}],
        }
    )
    finite = r"summary\['hybrid'\]\['RR@10'\].mean should be a finite number"
    with pytest.raises(InputError, match=finite):
        check_gates(broken, gates)


@pytest.mark.parametrize(
    ("measure", "mean", "accepted"),
    [
        ("RR@10", 5.0, False),  # a rate above 1: an edited or damaged file
        ("RR@10", -0.1, False),
        ("RR@10", 1.0 + 1e-12, True),  # float rounding of a perfect mean
        ("NumRet", 37.0, True),  # a count has no upper end
        ("NumRet", -1.0, False),
        ("utility(p1=1,p4=-1)", -3.0, True),  # utility is unbounded
    ],
)
def test_a_mean_outside_its_measures_range_is_refused(
    measure: str, mean: float, accepted: bool
) -> None:
    broken = copy.deepcopy(REPORT)
    broken["summary"]["hybrid"][measure] = {"mean": mean, "n": 4}
    gates = Gates.model_validate(
        {
            "schema": "evalkit.gates/1",
            "absolute": [{"system": "hybrid", "measure": "RR@10", "min": 0.1}],
        }
    )
    if accepted:
        check_gates(broken, gates)
        return
    outside = rf"summary\['hybrid'\]\[{re.escape(repr(measure))}\].mean is {mean!r}, outside"
    with pytest.raises(InputError, match=outside):
        check_gates(broken, gates)


# --- the committed fixture: real evaluation, real gates, a deliberately degraded system ----------
# Two full evaluations per module (the committed systems, and the same systems with
# hybrid-rerank degraded), each run once through the real CLI and shared by the tests below.

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "synthetic-bilingual-v1"
DEGRADED_PER_LANGUAGE = 3


def degraded_ids() -> frozenset[str]:
    """The first three query IDs per language (sorted) that hybrid-rerank answers perfectly
    (RR@10 = 1.0) in the committed baseline. Returning nothing for them drops RR@10 by 1.0 each,
    so each language's mean falls by 3 / 41 = 0.073 (41 answerable queries per language) and
    the overall mean by 6 / 82: beyond the 0.02 baseline tolerance and the absolute floors."""
    rr = load_report(FIXTURE_DIR / "baseline.json")["perQuery"]["hybrid-rerank"]
    perfect = sorted(q for q, values in rr.items() if values.get("RR@10") == 1.0)
    chosen = [q for q in perfect if q.startswith("q-en-")][:DEGRADED_PER_LANGUAGE]
    chosen += [q for q in perfect if q.startswith("q-zh-")][:DEGRADED_PER_LANGUAGE]
    return frozenset(chosen)


class WronglyAbstains(WrappedSystem):
    """A regression the system definition does not show: same name and definition as the wrapped
    system, but it returns nothing ("no answer") for the queries in ``query_ids``."""

    def search(self, query: Any, k: int) -> Any:
        return [] if query.id in self.query_ids else self.inner.search(query, k)


def degraded_hybrid_rerank() -> WronglyAbstains:
    """Factory named on the command line as ``test_gates:degraded_hybrid_rerank``."""
    from evalkit.systems import resolve_system

    return WronglyAbstains(resolve_system("hybrid-rerank"), degraded_ids())


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    """``evalkit gate`` on the committed fixture: (exit code, stdout, written report)."""
    workspace = tmp_path_factory.mktemp("passing")
    code, out, err = run_cli(["gate", str(FIXTURE_DIR), "--output", "report.json"], workspace)
    if code == 2:
        pytest.fail(f"evalkit gate could not check the gates:\n{err}")
    return code, out, load_report(workspace / "report.json")


@pytest.fixture(scope="module")
def degraded(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    """``evalkit gate`` with hybrid-rerank degraded: (exit code, stdout, written report)."""
    from evalkit.systems import REFERENCE_SYSTEMS

    workspace = tmp_path_factory.mktemp("degraded")
    systems = ",".join(
        "test_gates:degraded_hybrid_rerank" if name == "hybrid-rerank" else name
        for name in REFERENCE_SYSTEMS
    )
    argv = ["gate", str(FIXTURE_DIR), "--systems", systems, "--output", "report.json"]
    code, out, err = run_cli(argv, workspace)
    if code == 2:
        pytest.fail(f"evalkit gate could not check the gates:\n{err}")
    return code, out, load_report(workspace / "report.json")


def test_committed_gates_pass_and_committed_baseline_is_current(
    passing: tuple[int, str, dict[str, Any]],
) -> None:
    code, out, report = passing
    assert code == 0, out
    assert out.rstrip().endswith(
        "PASS: all 134 evaluated check(s) passed; 134 of 134 checks evaluated"
    )
    assert "FAIL" not in out
    assert {g["kind"] for g in report["gates"]} == {
        "absolute",
        "relative",
        "baseline",
        "new-failures",
    }
    assert all(g["passed"] for g in report["gates"])
    committed = load_report(FIXTURE_DIR / "baseline.json")
    # latency and machine differ from run to run: the projection is what must be current
    assert deterministic_projection(committed) == deterministic_projection(
        baseline_from_report(report)
    ), "refresh baseline.json (see README)"


def test_enough_queries_to_degrade() -> None:
    chosen = degraded_ids()
    assert len(chosen) == 2 * DEGRADED_PER_LANGUAGE, "the baseline has too few perfect queries"


def test_degraded_system_fails_the_gates_with_a_table(
    degraded: tuple[int, str, dict[str, Any]],
) -> None:
    code, out, report = degraded
    assert code == 1
    assert out.splitlines()[-1].startswith("FAIL: ")
    fail_lines = [line for line in out.splitlines() if line.endswith("FAIL")]
    assert fail_lines
    assert all(line.split()[1] == "hybrid-rerank" for line in fail_lines)
    failed = [g for g in report["gates"] if not g["passed"]]
    assert len(failed) == len(fail_lines)
    # RR@10 falls overall and in each language (see degraded_ids) and every degraded query
    # newly fails (missed-relevant).
    rr = {(g["kind"], g["language"]) for g in failed if g["measure"] == "RR@10"}
    assert {("baseline", "all"), ("baseline", "en"), ("baseline", "zh")} <= rr
    [new_failures] = [g for g in failed if g["kind"] == "new-failures"]
    assert set(new_failures["queryIds"]) == degraded_ids()
    assert f"new failures of hybrid-rerank: {', '.join(sorted(degraded_ids()))}" in out


def test_diff_names_exactly_the_degraded_queries(
    passing: tuple[int, str, dict[str, Any]], degraded: tuple[int, str, dict[str, Any]]
) -> None:
    from evalkit.gates import diff_reports

    changed = diff_reports(passing[2], degraded[2]).per_query
    assert set(changed["system"]) == {"hybrid-rerank"}
    assert set(changed["query_id"]) == degraded_ids()
    worse_rr = changed[(changed["measure"] == "RR@10") & (changed["change"] == "worse")]
    assert set(worse_rr["query_id"]) == degraded_ids()
    assert (worse_rr["new"] == 0.0).all()
    assert set(changed["change"]) == {"worse"}


def test_cli_diff_of_the_written_reports(
    passing: tuple[int, str, dict[str, Any]],
    degraded: tuple[int, str, dict[str, Any]],
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "old.json").write_text(json.dumps(passing[2]), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(degraded[2]), encoding="utf-8")
    code, out, _ = run_cli(["diff", "old.json", "new.json", "--json"], tmp_path)
    assert code == 0
    rows = json.loads(out)["perQuery"]
    assert {row["queryId"] for row in rows if row["change"] == "worse"} == degraded_ids()


def test_cli_refuses_a_stale_baseline(tmp_path: pathlib.Path) -> None:
    # one repeat instead of two changes the evaluation settings, so the baseline is stale
    code, out, err = run_cli(["gate", str(FIXTURE_DIR), "--repeats", "1"], tmp_path)
    assert code == 2
    assert "FAIL" not in out
    assert "stale and was not compared" in err
    assert "changed since the baseline: settings" in err
    # the refresh repeats --repeats; the absolute paths given are placeholders in it
    assert "'evalkit baseline FIXTURE --repeats 1 --output BASELINE.json'" in err
    assert str(FIXTURE_DIR) not in err
    # a gate on a subset suggests a baseline of every system the baseline has, never the subset
    argv = ["gate", str(FIXTURE_DIR), "--systems", "lexical", "--repeats", "1"]
    code, _, err = run_cli(argv, tmp_path)
    assert code == 2
    assert "'evalkit baseline FIXTURE --repeats 1 --output BASELINE.json'" in err


def test_cli_baseline_needs_an_output(tmp_path: pathlib.Path) -> None:
    # argparse refuses the call (usage error, exit 2) before anything is evaluated.
    with pytest.raises(SystemExit) as refused:
        run_cli(["baseline", str(FIXTURE_DIR)], tmp_path)
    assert refused.value.code == 2
    assert list(tmp_path.iterdir()) == []


def test_a_baseline_whose_corpus_or_fixture_record_was_edited_is_stale() -> None:
    # definitionHashes agree (they cover fixture and corpus), the visible records do not: the
    # baseline was edited by hand and is refused, never compared
    parts = {"shared": "sha256:" + "c" * 64, "systems": {"lexical": "sha256:" + "d" * 64}}
    current = {**copy.deepcopy(REPORT), "definitionHashes": parts}
    check_baseline_fresh(current, copy.deepcopy(current))
    for key, value in (("corpusHash", HASH_B), ("fixture", {"id": "other", "version": "1.0.0"})):
        edited = {**copy.deepcopy(current), key: value}
        with pytest.raises(StaleBaselineError, match=rf"{key}: baseline"):
            check_baseline_fresh(current, edited)


def test_what_the_baseline_lacks_is_not_evaluated_never_dropped(tmp_path: pathlib.Path) -> None:
    gates = gates_from("schema: evalkit.gates/1\nbaseline:\n  systems: [hybrid]\n", tmp_path)
    full = check_gates(REPORT, gates, REPORT)
    baseline = copy.deepcopy(REPORT)
    del baseline["summary"]["hybrid"]["RR@10"]
    del baseline["summaryByLanguage"]["hybrid"]["zh"]
    results = check_gates(REPORT, gates, baseline)
    lacking = results[results["status"] == "not evaluated"]
    assert list(zip(lacking["measure"], lacking["language"], strict=True)) == [
        ("RR@10", "all"),
        ("all", "zh"),
    ]
    assert lacking["note"].str.contains("the baseline has no value for").all()
    # of the 6 checks (2 measures x all, en, zh) NoAnswerFP overall and in en are left, and
    # the 2 rows say what went missing
    assert len(full) == 6
    assert list(zip(results["measure"], results["language"], results["status"], strict=True)) == [
        ("RR@10", "all", "not evaluated"),
        ("all", "zh", "not evaluated"),
        ("NoAnswerFP", "all", "pass"),
        ("NoAnswerFP", "en", "pass"),
    ]


def test_change_reads_query_languages_through_the_report_reader() -> None:
    """A damaged ``queryLanguages`` (a language that is not a string) is an InputError, as in
    the language gates, not a language row."""
    report = {"systems": [], "queryLanguages": {"q-1": 5}}
    with pytest.raises(InputError, match=r"queryLanguages\[.*\] should be a language code"):
        compare_with_baseline(report, {"systems": []})


def test_each_system_s_change_is_the_one_it_has_alone() -> None:
    """The systems are compared with their baselines in one call where their rows match
    (``compare``'s ``pairs``): each gets the numbers a comparison of it alone gives, also
    when one system's queries differ (compared apart)."""
    folder = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"
    baseline = json.loads((folder / "baseline.json").read_text(encoding="utf-8"))
    report = copy.deepcopy(baseline)
    systems = list(report["systems"])
    for index, system in enumerate(systems):
        for position, values in enumerate(report["perQuery"][system].values()):
            for measure in values:
                if (position + index) % 3 == 0:
                    values[measure] = 1.0 - values[measure]
    del report["perQuery"][systems[1]][next(iter(report["perQuery"][systems[1]]))]
    settings = ChangeSettings(n_resamples=300)
    stable = ["n", "before", "after", "diff", "ci_low", "ci_high", "p_value"]
    stable += ["worse", "better", "unchanged"]
    together = compare_with_baseline(report, baseline, settings=settings)
    for system in systems:
        alone = compare_with_baseline(
            {**report, "systems": [system]}, {**baseline, "systems": [system]}, settings=settings
        )
        rows = together.measures[together.measures["system"] == system]
        assert len(alone.measures) == len(rows) > 0
        pd.testing.assert_frame_equal(
            alone.measures[stable], rows[stable].reset_index(drop=True), check_exact=True
        )
