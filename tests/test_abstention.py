"""Abstention as a curve (issue 46): the exact sweep, its summary, and abstention gates."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np
import pandas as pd
import pytest
from abstention_runs import jsonl_run, separating
from sklearn.metrics import roc_auc_score

import evalkit as ek
from evalkit.fixtures import Fixture, load_fixture
from evalkit.gates import check_gates, format_gate_table, load_gates, worst_queries
from evalkit.run import Evaluation, evaluate
from evalkit.stats import ABSTENTION_STATISTICS, NO_NO_ANSWER, abstention_statistics

DEV = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"


@pytest.fixture(scope="module")
def dev() -> Fixture:
    return load_fixture(DEV)


_run_file = jsonl_run
_separating = separating


# --- the sweep against a hand computation ---------------------------------------------------

# Five queries: answerable A1 (0.9, measure 1.0), A2 (0.5, 0.5), A3 (0.2, 1.0); no-answer
# N1 (0.5), N2 (0.1). The worked example of docs/measures.md.
HAND_CONFIDENCE = [0.9, 0.5, 0.2, 0.5, 0.1]
HAND_ANSWERABLE = [True, True, True, False, False]
HAND_VALUE = [1.0, 0.5, 1.0, math.nan, math.nan]


def test_the_sweep_matches_a_hand_computation() -> None:
    got = abstention_statistics(HAND_CONFIDENCE, HAND_ANSWERABLE, HAND_VALUE, max_no_answer_fp=0.5)
    assert got.thresholds.tolist() == [0.1, 0.2, 0.5, 0.9, math.inf]
    # t=0.1 all answered; t=0.2 N2 left empty; t=0.5 A3 too; t=0.9 only A1; inf nothing.
    np.testing.assert_allclose(got.no_answer_fp[0], [1.0, 0.5, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(got.no_result[0], [0.0, 0.0, 1 / 3, 2 / 3, 1.0])
    np.testing.assert_allclose(got.coverage[0], [1.0, 0.8, 0.6, 0.2, 0.0])
    # losses: A1 0, A2 0.5, A3 0, N1 1, N2 1
    np.testing.assert_allclose(got.selective_risk[0][:4], [2.5 / 5, 1.5 / 4, 1.5 / 3, 0.0])
    assert math.isnan(got.selective_risk[0][4])
    np.testing.assert_allclose(got.value[0], [2.5 / 3, 2.5 / 3, 1.5 / 3, 1 / 3, 0.0])
    # pairs (A, N): A1 beats both (2), A2 ties N1 (half) and beats N2 (1.5), A3 beats N2
    # only (1): 4.5 of 6 pairs
    assert got.auc[0] == pytest.approx(4.5 / 6)
    # steps of coverage times the risk on them: 0.2*0.5 + 0.2*0.375 + 0.4*0.5 + 0.2*0
    assert got.aurc[0] == pytest.approx(0.375)
    # NoAnswerFP <= 0.5 first at t=0.2, where NoResult is 0
    assert (got.op_threshold[0], got.op_no_result[0], got.op_no_answer_fp[0]) == (0.2, 0.0, 0.5)
    strict = abstention_statistics(HAND_CONFIDENCE, HAND_ANSWERABLE, max_no_answer_fp=0.34)
    assert strict.op_threshold[0] == 0.9
    assert strict.op_no_result[0] == pytest.approx(2 / 3)


def test_auc_agrees_with_scikit_learn_on_random_ties() -> None:
    rng = np.random.default_rng(46)
    for _ in range(20):
        n = int(rng.integers(4, 60))
        answerable = rng.random(n) < 0.7
        answerable[:2] = [True, False]
        confidence = rng.integers(0, 6, n) / 5.0  # many ties
        got = abstention_statistics(confidence, answerable).auc[0]
        assert got == pytest.approx(roc_auc_score(answerable, confidence), abs=1e-12)


# --- an evaluation --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference(dev: Fixture) -> Evaluation:
    return evaluate(dev, repeats=1)


def test_every_reference_system_has_a_curve_an_auc_with_interval_and_an_operating_point(
    reference: Evaluation,
) -> None:
    result = ek.abstention(reference, n_resamples=200)
    overall = result.summary[result.summary["language"] == "all"].set_index(["system", "statistic"])
    for system in reference.systems:
        rows = result.curve["system"].eq(system) & result.curve["language"].eq("all")
        curve = result.curve[rows]
        assert len(curve) >= 2
        assert curve["threshold"].is_monotonic_increasing
        assert curve["threshold"].iloc[-1] == math.inf
        assert curve["coverage"].iloc[-1] == 0
        auc = overall.loc[(system, "auc")]
        assert 0.0 <= auc["ci_low"] <= auc["value"] <= auc["ci_high"] <= 1.0
        op = overall.loc[(system, "op_no_answer_fp")]
        assert op["value"] <= result.target
        assert not math.isnan(overall.loc[(system, "op_no_result"), "value"])
    assert set(result.curve["language"]) == {"all", "en", "zh"}
    assert list(result.summary["statistic"].unique()) == list(ABSTENTION_STATISTICS)


def test_the_auc_of_a_reference_system_agrees_with_scikit_learn(reference: Evaluation) -> None:
    result = ek.abstention(reference, n_resamples=10)
    queries = reference.per_query.drop_duplicates(["system", "query_id"])
    top = reference.rankings[reference.rankings["rank"] == 1].set_index(["system", "query_id"])
    for system in reference.systems:
        mine = queries[queries["system"] == system]
        scores = [
            top["score"].get((system, q), -1e9)  # no result: below every score
            for q in mine["query_id"]
        ]
        expected = roc_auc_score(mine["answerable"].to_numpy(), scores)
        row = result.summary.query("system == @system and language == 'all' and statistic == 'auc'")
        assert row["value"].iloc[0] == pytest.approx(expected, abs=1e-12)


def test_a_run_that_separates_perfectly_and_a_constant_one(
    dev: Fixture, tmp_path: pathlib.Path
) -> None:
    perfect = _run_file(tmp_path / "perfect.jsonl", dev, _separating)
    constant = _run_file(tmp_path / "constant.jsonl", dev, lambda q: 0.5)
    evaluation = evaluate(dev, [perfect, constant], repeats=1)
    result = ek.abstention(evaluation, max_no_answer_fp=0.0, n_resamples=100)
    summary = result.summary[result.summary["language"] == "all"].set_index(
        ["system", "statistic"]
    )["value"]
    good, flat = evaluation.systems
    assert summary[(good, "auc")] == 1.0
    assert summary[(good, "op_no_answer_fp")] == 0.0
    assert summary[(good, "op_no_result")] == 0.0
    assert summary[(good, "op_threshold")] == 1.0
    assert summary[(flat, "auc")] == 0.5
    # constant scores: one threshold answers everything, the next nothing
    assert summary[(flat, "op_no_result")] == 1.0


def test_a_fixture_without_no_answer_queries_is_not_applicable(make_fixture: Any) -> None:
    def answerable_only(data: dict[str, Any]) -> None:
        # as a collection imported from TREC: no spans required, no no-answer query
        data["fixture.yaml"]["requires_spans"] = False
        data["queries.yaml"] = [q for q in data["queries.yaml"] if q.get("judgments")]

    fixture = load_fixture(make_fixture(answerable_only))
    system = ek.FunctionRetriever(lambda text, k: [("c-en-1", 1.0)], name="one")
    result = ek.abstention(evaluate(fixture, [system], repeats=1), n_resamples=20)
    rows = result.summary[result.summary["language"] == "all"].set_index("statistic")
    assert math.isnan(rows.loc["auc", "value"])
    assert rows.loc["auc", "note"] == NO_NO_ANSWER
    assert math.isnan(rows.loc["op_no_result", "value"])
    assert rows["n_no_answer"].eq(0).all()


def test_intervals_are_seeded(reference: Evaluation) -> None:
    first = ek.abstention(reference, n_resamples=50, seed=3).summary
    again = ek.abstention(reference, n_resamples=50, seed=3).summary
    other = ek.abstention(reference, n_resamples=50, seed=4).summary
    assert first.equals(again)
    assert not first["ci_low"].equals(other["ci_low"])


# --- gates ----------------------------------------------------------------------------------


def _gates(tmp_path: pathlib.Path, system: str) -> Any:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: evalkit.gates/1\n"
        "abstention:\n"
        f"  - id: abstain\n    system: {system}\n"
        "    max_no_answer_fp: 0.34\n    max_no_result: 0.05\n    min_auc: 0.9\n",
        encoding="utf-8",
    )
    return load_gates(path)


def test_an_operating_point_gate_fails_when_confidences_stop_separating(
    dev: Fixture, tmp_path: pathlib.Path
) -> None:
    main_dir, pr_dir = tmp_path / "main", tmp_path / "pr"
    main_dir.mkdir()
    pr_dir.mkdir()
    main = evaluate(dev, [_run_file(main_dir / "mine.jsonl", dev, _separating)], repeats=1)
    pr = evaluate(dev, [_run_file(pr_dir / "mine.jsonl", dev, lambda q: 0.5)], repeats=1)
    system = main.systems[0]
    assert pr.systems == (system,)
    gates = _gates(tmp_path, system)
    passed = check_gates(main.to_report(), gates, known_systems=[system])
    failed = check_gates(pr.to_report(), gates, known_systems=[system])
    assert passed["kind"].eq("abstention").all()
    assert len(passed) == 2
    assert passed["status"].eq("pass").all()
    assert failed["status"].eq("fail").all()
    op = failed.set_index("measure").loc["NoResult@NoAnswerFP<=0.34"]
    assert (op["op"], op["threshold"], op["actual"]) == ("<=", 0.05, 1.0)
    assert failed.set_index("measure").loc["AUC", "actual"] == 0.5
    assert worst_queries(failed, pr.per_query) == [[], []]  # no per-query measure to rank
    table = format_gate_table(failed)
    assert "NoResult@NoAnswerFP<=0.34" in table
    assert "<= 0.0500 " in table
    assert "()" not in table  # an operating point has no reference to name


def test_an_abstention_gate_on_an_old_report_is_not_evaluated(
    dev: Fixture, tmp_path: pathlib.Path
) -> None:
    run = _run_file(tmp_path / "mine.jsonl", dev, _separating)
    report = evaluate(dev, [run], repeats=1).to_report()
    system = report["systems"][0]
    del report["confidence"]
    result = check_gates(report, _gates(tmp_path, system), known_systems=[system])
    assert result["status"].eq("not evaluated").all()
    assert result["note"].str.contains("no confidence section").all()


def test_an_abstention_gate_needs_a_complete_bound(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: evalkit.gates/1\nabstention:\n  - system: mine\n    max_no_answer_fp: 0.3\n",
        encoding="utf-8",
    )
    with pytest.raises(ek.errors.FixtureError, match="together"):
        load_gates(path)


def test_an_abstention_gate_id_is_unique_among_all_gates(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: evalkit.gates/1\n"
        "absolute:\n  - {id: g, system: mine, measure: RR@10, min: 0.5}\n"
        "abstention:\n  - {id: g, system: mine, min_auc: 0.7}\n",
        encoding="utf-8",
    )
    with pytest.raises(ek.errors.FixtureError, match="duplicate gate ID"):
        load_gates(path)


# --- the report's table ---------------------------------------------------------------------


def test_the_report_table_has_one_row_per_system_with_each_interval(
    reference: Evaluation,
) -> None:
    from evalkit.report.tables import ABSTENTION_TABLE_COLUMNS, abstention_table

    summary = ek.abstention(reference, n_resamples=50).summary
    shown = list(reversed(reference.systems))
    table = abstention_table(summary, systems=shown)
    assert tuple(table.columns) == ABSTENTION_TABLE_COLUMNS
    assert table["system"].tolist() == shown
    overall = summary[summary["language"] == "all"].set_index(["system", "statistic"])
    for row in table.to_dict("records"):
        auc = overall.loc[(row["system"], "auc")]
        expected = f"{auc['value']:.3f}\u00a0[{auc['ci_low']:.3f},\u00a0{auc['ci_high']:.3f}]"
        assert row["AUC"] == expected
        assert row["source"] == "top score"
        threshold = overall.loc[(row["system"], "op_threshold"), "value"]
        assert row["threshold"].startswith("inf" if threshold == np.inf else f"{threshold:.3f}")


def test_the_report_table_shows_an_infinite_threshold_and_a_missing_value() -> None:
    from evalkit.report.tables import abstention_table

    rows = [
        ("auc", math.nan, math.nan, math.nan, NO_NO_ANSWER),
        ("aurc", 0.25, 0.125, 0.5, ""),
        ("op_threshold", math.inf, 0.5, math.inf, ""),
        ("op_no_result", 1.0, 1.0, 1.0, ""),
        ("op_no_answer_fp", 0.0, 0.0, 0.0, ""),
        ("op_coverage", 0.0, 0.0, 0.0, ""),
    ]
    summary = pd.DataFrame(
        [
            {
                "system": "s",
                "language": language,
                "statistic": statistic,
                "value": value,
                "ci_low": low,
                "ci_high": high,
                "note": note,
                "source": "declared",
            }
            for language in ("all", "en")
            for statistic, value, low, high, note in rows
        ]
    )
    table = abstention_table(summary, systems=["s", "absent"]).iloc[0]
    assert table["AUC"] == "–"
    assert table["AURC"] == "0.250\u00a0[0.125,\u00a00.500]"
    assert table["threshold"] == "inf\u00a0[0.500,\u00a0inf]"
    assert table["note"] == NO_NO_ANSWER
    assert table["source"] == "declared"
