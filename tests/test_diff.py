"""Tests of evalkit.gates._diff on hand-made report dicts (deltas written out by hand)."""

from __future__ import annotations

import copy
import json
import math
import pathlib
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from evalkit.errors import InputError
from evalkit.gates import (
    PER_QUERY_DIFF_COLUMNS,
    SUMMARY_DIFF_COLUMNS,
    diff_reports,
    diff_to_json,
    format_diff,
)


def make_report(
    per_query: dict[str, dict[str, dict[str, float]]],
    summary: dict[str, dict[str, float]],
    by_language: dict[str, dict[str, dict[str, float]]] | None = None,
    definition: str = "sha256:" + "a" * 64,
) -> dict[str, Any]:
    """A minimal evalkit.report/1 dict with the given per-query values and means."""
    return {
        "schema": "evalkit.report/1",
        "fixture": {"id": "tiny", "version": "1.0.0"},
        "corpusHash": "sha256:" + "c" * 64,
        "evaluationDefinitionHash": definition,
        "systems": list(per_query),
        "summary": {
            s: {m: {"mean": v, "n": 2} for m, v in ms.items()} for s, ms in summary.items()
        },
        "summaryByLanguage": {
            s: {lang: {m: {"mean": v, "n": 1} for m, v in ms.items()} for lang, ms in langs.items()}
            for s, langs in (by_language or {}).items()
        },
        "perQuery": per_query,
        "failures": [],
    }


OLD = make_report(
    {
        "lexical": {
            "q-en-1": {"RR@10": 1.0},
            "q-en-2": {"RR@10": 0.5},
            "q-zh-1": {"NoAnswerFP": 1.0},
            "q-gone": {"RR@10": 0.25},
        },
        "vector": {"q-en-1": {"RR@10": 0.5}},
    },
    {"lexical": {"RR@10": 0.75, "NoAnswerFP": 1.0}, "vector": {"RR@10": 0.5}},
    {"lexical": {"en": {"RR@10": 0.75}, "zh": {"NoAnswerFP": 1.0}}},
)
NEW = make_report(
    {
        "lexical": {
            "q-en-1": {"RR@10": 0.5},
            "q-en-2": {"RR@10": 0.5},
            "q-zh-1": {"NoAnswerFP": 0.0},
            "q-new": {"RR@10": 1.0},
        },
        "hybrid": {"q-en-1": {"RR@10": 1.0}},
    },
    {"lexical": {"RR@10": 0.5, "NoAnswerFP": 0.0}, "hybrid": {"RR@10": 1.0}},
    {"lexical": {"en": {"RR@10": 0.5}, "zh": {"NoAnswerFP": 0.0}}},
    definition="sha256:" + "b" * 64,
)


def rows(frame: Any) -> list[tuple[Any, ...]]:
    return [
        tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
        for row in frame.itertuples(index=False)
    ]


def test_summary_rows_directions_and_sides() -> None:
    diff = diff_reports(OLD, NEW)
    assert list(diff.summary.columns) == SUMMARY_DIFF_COLUMNS
    assert rows(diff.summary) == [
        # RR@10 0.75 -> 0.5: delta -0.25, worse
        ("lexical", "RR@10", "all", 0.75, 0.5, -0.25, "worse"),
        # NoAnswerFP is lower-is-better: 1.0 -> 0.0 is better
        ("lexical", "NoAnswerFP", "all", 1.0, 0.0, -1.0, "better"),
        ("lexical", "RR@10", "en", 0.75, 0.5, -0.25, "worse"),
        ("lexical", "NoAnswerFP", "zh", 1.0, 0.0, -1.0, "better"),
        ("vector", "RR@10", "all", 0.5, None, None, "removed"),
        ("hybrid", "RR@10", "all", None, 1.0, None, "added"),
    ]


def test_per_query_rows_name_exactly_the_changed_ids() -> None:
    diff = diff_reports(OLD, NEW)
    assert list(diff.per_query.columns) == PER_QUERY_DIFF_COLUMNS
    # q-en-2 is unchanged; vector/hybrid exist on one side only and stay in the summary
    assert rows(diff.per_query) == [
        ("lexical", "q-en-1", "RR@10", 1.0, 0.5, -0.5, "worse"),
        ("lexical", "q-gone", "RR@10", 0.25, None, None, "removed"),
        ("lexical", "q-new", "RR@10", None, 1.0, None, "added"),
        ("lexical", "q-zh-1", "NoAnswerFP", 1.0, 0.0, -1.0, "better"),
    ]


def test_tiny_float_noise_is_not_a_change() -> None:
    new = copy.deepcopy(OLD)
    new["perQuery"]["lexical"]["q-en-2"]["RR@10"] = 0.5 + 1e-15
    new["summary"]["lexical"]["RR@10"]["mean"] = 0.75 + 1e-15
    diff = diff_reports(OLD, new)
    assert diff.per_query.empty
    assert set(diff.summary["change"]) == {"same"}


def test_inputs_are_not_modified_and_empty_reports_keep_columns() -> None:
    before_old, before_new = copy.deepcopy(OLD), copy.deepcopy(NEW)
    diff_reports(OLD, NEW)
    assert (before_old, before_new) == (OLD, NEW)
    empty = make_report({}, {})
    diff = diff_reports(empty, empty)
    assert list(diff.summary.columns) == SUMMARY_DIFF_COLUMNS
    assert list(diff.per_query.columns) == PER_QUERY_DIFF_COLUMNS
    assert diff.summary.empty
    assert diff.per_query.empty


def test_json_output_uses_null_for_missing_sides() -> None:
    diff = diff_reports(OLD, NEW)
    data = json.loads(diff_to_json(diff, OLD, NEW))
    assert data["schema"] == "evalkit.diff/1"
    assert data["old"]["evaluationDefinitionHash"] == "sha256:" + "a" * 64
    assert data["perQuery"][1] == {
        "system": "lexical",
        "queryId": "q-gone",
        "measure": "RR@10",
        "old": 0.25,
        "new": None,
        "delta": None,
        "change": "removed",
    }
    assert len(data["summary"]) == 6


def test_human_output_lists_ids_and_counts() -> None:
    text = format_diff(diff_reports(OLD, NEW), OLD, NEW, changed_only=True)
    assert "the evaluation definitions differ" in text
    assert "per query: 4 changed value(s) (1 better, 1 worse, 1 added, 1 removed)" in text
    line = next(x for x in text.splitlines() if x.startswith("lexical  q-en-1"))
    assert line.split() == ["lexical", "q-en-1", "RR@10", "1.0000", "0.5000", "-0.5000", "worse"]
    same = format_diff(diff_reports(OLD, OLD), OLD, OLD)
    assert "same evaluation definition and corpus" in same
    assert "per query: 0 changed value(s)" in same


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda r: r.update(schema="other"),
            r"new report: schema should be 'evalkit.report/1'",
        ),
        (
            lambda r: r.pop("perQuery"),
            r"new report: perQuery should be a JSON object, found missing",
        ),
        (
            lambda r: r["perQuery"]["lexical"]["q-en-1"].update({"RR@10": "x"}),
            r"new report: perQuery\['lexical'\]\['q-en-1'\]\['RR@10'\] should be a finite number",
        ),
        (
            lambda r: r["summary"]["lexical"]["RR@10"].update(mean=math.inf),
            r"new report: summary\['lexical'\]\['RR@10'\].mean should be a finite number",
        ),
        (
            lambda r: r["summary"]["lexical"]["RR@10"].update(mean=5.0),
            r"new report: summary\['lexical'\]\['RR@10'\].mean is 5.0, outside the range of "
            r"'RR@10' \[0, 1\]; the file was edited or damaged: write it again",
        ),
        (  # shown exactly, not rounded into the range
            lambda r: r["summary"]["lexical"]["RR@10"].update(mean=1.0000001),
            r"summary\['lexical'\]\['RR@10'\].mean is 1.0000001, outside",
        ),
        (
            lambda r: r["perQuery"]["lexical"]["q-en-1"].update({"RR@10": -0.25}),
            r"new report: perQuery\['lexical'\]\['q-en-1'\]\['RR@10'\] is -0.25, outside the "
            r"range of 'RR@10' \[0, 1\]",
        ),
    ],
)
def test_malformed_reports_are_input_errors(mutate: Any, message: str) -> None:
    broken = copy.deepcopy(NEW)
    mutate(broken)
    with pytest.raises(InputError, match=message):
        diff_reports(OLD, broken)


_values = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(
        st.sampled_from(["RR@10", "NoAnswerFP"]),
        st.floats(0, 1, allow_nan=False),
        min_size=1,
        max_size=2,
    ),
    max_size=3,
)


@settings(max_examples=80, deadline=None)
@given(old_values=_values, new_values=_values)
def test_swapping_sides_mirrors_the_diff(
    old_values: dict[str, dict[str, float]], new_values: dict[str, dict[str, float]]
) -> None:
    old = make_report({"s": old_values}, {})
    new = make_report({"s": new_values}, {})
    forward = diff_reports(old, new).per_query
    backward = diff_reports(new, old).per_query
    mirror = {"better": "worse", "worse": "better", "added": "removed", "removed": "added"}
    assert len(forward) == len(backward)
    for a, b in zip(rows(forward), rows(backward), strict=True):
        assert a[:3] == b[:3]
        assert (a[3], a[4]) == (b[4], b[3])
        assert a[6] == mirror[b[6]]
        if a[5] is not None:
            assert a[5] == -b[5]
    assert diff_reports(old, old).per_query.empty


def test_cli_diff_tables_and_json(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json.dumps(OLD), encoding="utf-8")
    new_path.write_text(json.dumps(NEW), encoding="utf-8")
    assert main(["diff", str(old_path), str(new_path)]) == 0
    text = capsys.readouterr().out
    assert "lexical  q-gone" in text
    assert main(["diff", str(old_path), str(new_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [row["queryId"] for row in data["perQuery"]] == ["q-en-1", "q-gone", "q-new", "q-zh-1"]


def test_cli_diff_bad_file_exits_2(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["diff", str(bad), str(bad)]) == 2
    assert "line 1: not valid JSON" in capsys.readouterr().err
