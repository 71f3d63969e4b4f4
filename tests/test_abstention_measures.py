"""The abstention summaries in the measure catalog (issue 46): names, direction, range and
description like every measure, the ``measure`` column of ``ek.abstention``'s summary, and
refused where a per-query value is expected."""

from __future__ import annotations

import math
import pathlib

import pandas as pd
import pytest

import evalkit as ek
from evalkit.errors import FixtureError, InputError, MeasureError
from evalkit.gates import load_gates
from evalkit.measures import (
    LOWER_IS_BETTER,
    MEASURE_NAMES,
    describe_measure,
    higher_is_better,
    measure_range,
    parse_measure,
    score,
)
from evalkit.measures.abstention import ABSTENTION_MEASURES
from evalkit.stats import ABSTENTION_STATISTICS

DEV = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"
SUMMARIES = ("AbstentionAUC", "AURC", "OpNoResult", "OpNoAnswerFP", "OpThreshold", "OpCoverage")


def test_every_abstention_statistic_is_a_declared_measure() -> None:
    assert tuple(ABSTENTION_MEASURES) == ABSTENTION_STATISTICS
    assert set(ABSTENTION_MEASURES.values()) == set(SUMMARIES)
    assert set(SUMMARIES) <= set(MEASURE_NAMES)
    assert {"AURC", "OpNoResult", "OpNoAnswerFP"} <= LOWER_IS_BETTER
    assert higher_is_better("AbstentionAUC")
    assert higher_is_better("OpCoverage(max_fp=0.2)")
    assert measure_range("AbstentionAUC") == (0.0, 1.0)
    assert measure_range("OpThreshold") == (-math.inf, math.inf)
    assert describe_measure("AbstentionAUC").startswith("ROC AUC of confidence")
    # the operating point's target is a parameter; its default (0.1) is left out
    assert str(parse_measure("OpNoResult(max_fp=0.1)")) == "OpNoResult"
    assert str(parse_measure("OpNoResult(max_fp=0.34)")) == "OpNoResult(max_fp=0.34)"
    with pytest.raises(MeasureError, match=r"max_fp must be in \[0, 1\]"):
        parse_measure("OpNoResult(max_fp=1.5)")


def test_the_summary_names_each_row_by_its_measure() -> None:
    evaluation = ek.evaluate(DEV, ["lexical"], repeats=1)
    summary = ek.abstention(evaluation, max_no_answer_fp=0.34, n_resamples=20).summary
    names = dict(zip(summary["statistic"], summary["measure"], strict=False))
    assert names == {
        "auc": "AbstentionAUC",
        "aurc": "AURC",
        "op_no_result": "OpNoResult(max_fp=0.34)",
        "op_no_answer_fp": "OpNoAnswerFP(max_fp=0.34)",
        "op_threshold": "OpThreshold(max_fp=0.34)",
        "op_coverage": "OpCoverage(max_fp=0.34)",
    }
    for name in names.values():
        assert str(parse_measure(name)) == name  # canonical: parses back to itself
    default = ek.abstention(evaluation, n_resamples=20).summary
    assert "OpNoResult" in set(default["measure"])  # the default target 0.1 is left out


def test_a_summary_measure_has_no_per_query_value() -> None:
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    with pytest.raises(MeasureError, match=r"evalkit\.abstention"):
        score(qrels, run, ["AbstentionAUC"])
    with pytest.raises(InputError, match="has no per-query value"):
        ek.evaluate(DEV, ["lexical"], measures=["R@10", "AURC"], repeats=1)


def test_an_absolute_gate_on_a_summary_measure_points_to_abstention_gates(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: evalkit.gates/1\n"
        "absolute:\n  - {system: lexical, measure: AbstentionAUC, min: 0.6}\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError, match="bound it with an abstention: gate"):
        load_gates(path)
