"""The abstention AUC of a change against its baseline (issue 46): the paired comparison
(:func:`evalkit.stats.auc_change`, ``Change.abstention``), the first screen's line, the
``max_auc_drop`` gate, older baselines without ``confidence``, and per-language abstention
gates."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np
import pytest
from abstention_runs import jsonl_run, separating
from sklearn.metrics import roc_auc_score

import evalkit as ek
from evalkit.errors import FixtureError, InputError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.gates import (
    NOT_EVALUATED,
    ChangeSettings,
    baseline_from_report,
    check_gates,
    compare_with_baseline,
    gate_verdict,
    load_gates,
)
from evalkit.run import evaluate
from evalkit.stats import auc_change

DEV = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"
SETTINGS = ChangeSettings(n_resamples=200)


@pytest.fixture(scope="module")
def dev() -> Fixture:
    return load_fixture(DEV)


# --- the paired comparison on a hand-made pair -----------------------------------------------

# The worked example of docs/measures.md (AUC 4.5/6) against a change that swaps A3 and N1:
# A1 0.9, A2 0.5, A3 0.5 | N1 0.2, N2 0.1: every answerable above every no-answer (AUC 1).
ANSWERABLE = [True, True, True, False, False]
BEFORE = [0.9, 0.5, 0.2, 0.5, 0.1]
AFTER = [0.9, 0.5, 0.5, 0.2, 0.1]


def test_the_auc_change_of_a_hand_made_pair() -> None:
    result = auc_change(BEFORE, AFTER, ANSWERABLE, system="mine", n_resamples=500)
    assert result.before == pytest.approx(4.5 / 6)  # hand: docs/measures.md's worked example
    assert result.after == 1.0  # hand: 6 of 6 pairs in order
    assert result.before == pytest.approx(roc_auc_score(ANSWERABLE, BEFORE))
    assert result.diff == pytest.approx(1.5 / 6)
    assert (result.n_answerable, result.n_no_answer, result.note) == (3, 2, "")
    assert result.ci_low <= result.diff <= result.ci_high
    # resampled jointly: no resample can make the change worse, A3 and N1 only trade places
    assert result.ci_low >= 0.0
    assert auc_change(BEFORE, AFTER, ANSWERABLE, system="mine", n_resamples=500) == result


def test_the_interval_is_seeded_by_seed_system_and_language() -> None:
    rng = np.random.default_rng(46)
    answerable = rng.random(60) < 0.6
    before, after = rng.random(60) + answerable, rng.random(60) + 0.5 * answerable
    first = auc_change(before, after, answerable, system="a", n_resamples=300)
    assert auc_change(before, after, answerable, system="a", n_resamples=300) == first
    for other in (
        auc_change(before, after, answerable, system="a", n_resamples=300, seed=1),
        auc_change(before, after, answerable, system="b", n_resamples=300),
        auc_change(before, after, answerable, system="a", language="en", n_resamples=300),
    ):
        assert other.diff == first.diff
        assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)


def test_an_unchanged_system_has_a_zero_difference_and_a_zero_interval() -> None:
    rng = np.random.default_rng(46)
    answerable = rng.random(40) < 0.6
    scores = rng.random(40)
    result = auc_change(scores, scores, answerable, n_resamples=100)
    assert (result.diff, result.ci_low, result.ci_high) == (0.0, 0.0, 0.0)
    only_answerable = auc_change(scores, scores, np.ones(40, dtype=bool), n_resamples=10)
    assert math.isnan(only_answerable.before)
    assert math.isnan(only_answerable.ci_low)
    assert only_answerable.note == ek.stats.NO_NO_ANSWER


# --- a change against its baseline ---------------------------------------------------------


def _run(folder: pathlib.Path, fixture: Fixture, score: Any) -> str:
    """A JSONL run named ``mine`` in ``folder`` (:func:`abstention_runs.jsonl_run`)."""
    folder.mkdir(exist_ok=True)
    return jsonl_run(folder / "mine.jsonl", fixture, score)


_separating = separating


def _zh_only(query: Any) -> float:
    """Separates the Chinese queries; every English query at one score."""
    return _separating(query) if query.language == "zh" else 0.5


@pytest.fixture(scope="module")
def pair(dev: Fixture, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """``(main's baseline, the PR's report)``: main separates, the PR only in Chinese."""
    root = tmp_path_factory.mktemp("pair")
    main = evaluate(dev, [_run(root / "main", dev, _separating)], repeats=1)
    pr = evaluate(dev, [_run(root / "pr", dev, _zh_only)], repeats=1)
    return baseline_from_report(main.to_report()), pr.to_report()


def test_the_change_compares_the_auc_with_the_baseline_per_language(
    dev: Fixture, pair: tuple[Any, Any]
) -> None:
    baseline, report = pair
    change = compare_with_baseline(report, baseline, settings=SETTINGS)
    rows = change.abstention.set_index("language")
    assert list(rows.index) == ["all", "en", "zh"]
    assert (rows["system"] == "mine").all()
    assert rows.loc["all", "before"] == 1.0
    assert rows.loc["zh", "diff"] == 0.0
    assert rows.loc["en", "after"] == 0.5  # constant English scores
    # the overall "after" is what ek.abstention gives on the PR's evaluation (same queries)
    queries = sorted(report["perQuery"]["mine"])
    answerable = ["NoAnswerFP" not in report["perQuery"]["mine"][q] for q in queries]
    scores = [report["confidence"]["mine"].get(q, -1e9) for q in queries]
    assert rows.loc["all", "after"] == pytest.approx(roc_auc_score(answerable, scores))
    overall = rows.loc["all"]
    assert overall["ci_low"] <= overall["diff"] <= overall["ci_high"] < 0
    assert rows["source_before"].eq("top score").all()
    assert rows["note"].eq("").all()
    sentence = change.auc_sentence("mine")
    assert sentence.startswith("abstention AUC 1.000 -> ")
    assert "[95% " in sentence


def _gates(tmp_path: pathlib.Path, text: str) -> Any:
    path = tmp_path / "gates.yaml"
    path.write_text("schema: evalkit.gates/1\n" + text, encoding="utf-8")
    return load_gates(path)


BASELINE_SECTION = "baseline: {path: baseline.json, systems: []}\n"
AUC_DROP = BASELINE_SECTION + "abstention:\n  - {id: auc, system: mine, max_auc_drop: 0.1}\n"


def test_a_max_auc_drop_gate_fails_on_the_pr_and_passes_on_main(
    pair: tuple[Any, Any], tmp_path: pathlib.Path
) -> None:
    baseline, report = pair
    gates = _gates(tmp_path, AUC_DROP)
    failed = check_gates(report, gates, baseline, known_systems=["mine"])
    row = failed[failed["kind"] == "abstention"].iloc[0]
    assert (row["status"], row["reference"], row["op"]) == ("fail", "baseline", ">=")
    assert row["threshold"] == pytest.approx(0.9)  # the baseline's AUC 1.0 minus 0.1
    assert row["actual"] < 0.9
    passed = check_gates(dict(baseline), gates, baseline, known_systems=["mine"])
    assert passed.loc[passed["kind"] == "abstention", "status"].eq("pass").all()
    verdict = gate_verdict(report, gates=gates, baseline=baseline, settings=SETTINGS)
    assert verdict.abstention_lines()[0].startswith("mine: abstention AUC 1.000 -> ")


def test_a_max_auc_drop_gate_needs_a_baseline_section(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FixtureError, match="no baseline section"):
        _gates(tmp_path, "abstention:\n  - {system: mine, max_auc_drop: 0.1}\n")


def test_an_older_baseline_without_confidence_still_works_and_says_n_a(
    pair: tuple[Any, Any], tmp_path: pathlib.Path
) -> None:
    baseline, report = pair
    older = {k: v for k, v in baseline.items() if k not in ("confidence", "queryLanguages")}
    change = compare_with_baseline(report, older, settings=SETTINGS)
    assert len(change.measures)  # the rest of the comparison is unchanged
    row = change.abstention.iloc[0]
    assert math.isnan(row["diff"])
    assert row["note"].startswith("n/a: the baseline has no confidence section")
    assert change.auc_sentence("mine").startswith("abstention AUC: n/a")
    gates = _gates(tmp_path, AUC_DROP)
    result = check_gates(report, gates, older, known_systems=["mine"])
    row = result[result["kind"] == "abstention"].iloc[0]
    assert row["status"] == NOT_EVALUATED
    assert "baseline has no confidence section" in row["note"]


# --- per-language abstention gates ----------------------------------------------------------


def test_an_abstention_gate_per_language(pair: tuple[Any, Any], tmp_path: pathlib.Path) -> None:
    _, report = pair
    gates = _gates(
        tmp_path,
        "abstention:\n"
        "  - {id: zh, system: mine, language: zh, min_auc: 0.9}\n"
        "  - {id: en, system: mine, language: en, min_auc: 0.9}\n"
        "  - {id: all, system: mine, max_no_answer_fp: 0.0, max_no_result: 0.0}\n",
    )
    result = check_gates(report, gates, known_systems=["mine"]).set_index("gate")
    assert result.loc["zh", "language"] == "zh"
    assert (result.loc["zh", "status"], result.loc["zh", "actual"]) == ("pass", 1.0)
    assert (result.loc["en", "status"], result.loc["en", "actual"]) == ("fail", 0.5)
    assert result.loc["all", "status"] == "fail"  # English queries spoil the whole


def test_a_per_language_gate_on_an_unknown_language_or_an_old_report(
    pair: tuple[Any, Any], tmp_path: pathlib.Path
) -> None:
    _, report = pair
    gates = _gates(
        tmp_path, "abstention:\n  - {id: fr, system: mine, language: fr, min_auc: 0.5}\n"
    )
    with pytest.raises(InputError, match=r"language 'fr' has no queries .* \(languages: en, zh\)"):
        check_gates(report, gates, known_systems=["mine"])
    old = {k: v for k, v in report.items() if k != "queryLanguages"}
    zh = _gates(tmp_path, "abstention:\n  - {id: zh, system: mine, language: zh, min_auc: 0.5}\n")
    row = check_gates(old, zh, known_systems=["mine"]).iloc[0]
    assert row["status"] == NOT_EVALUATED
    assert "no query languages" in row["note"]


def test_the_resampled_auc_is_the_sweep_s_auc() -> None:
    from evalkit.stats._abstention import stratified_counts, weighted_auc

    rng = np.random.default_rng(7)
    answerable = rng.random(50) < 0.5
    confidence = rng.integers(0, 8, 50) / 7.0  # ties
    counts = stratified_counts(answerable, rng, 30)
    expected = ek.stats.abstention_statistics(confidence, answerable, weights=counts).auc
    np.testing.assert_allclose(weighted_auc(confidence, answerable, counts), expected, rtol=1e-12)


def test_the_resampled_auc_of_counts_is_the_sweep_s_bit_for_bit() -> None:
    from evalkit.stats._abstention import stratified_counts, weighted_auc

    rng = np.random.default_rng(11)
    for _ in range(50):
        n = int(rng.integers(2, 60))
        answerable = rng.random(n) < rng.random()
        confidence = np.where(rng.random(n) < 0.2, -np.inf, rng.integers(0, 6, n) / 5.0)
        counts = stratified_counts(answerable, rng, 40)
        expected = ek.stats.abstention_statistics(confidence, answerable, weights=counts).auc
        found = weighted_auc(confidence, answerable, counts)
        assert found.tobytes() == expected.tobytes()


def test_the_markdown_summary_and_the_first_screen_show_the_auc_change(
    pair: tuple[Any, Any], tmp_path: pathlib.Path
) -> None:
    from evalkit.report.ci import change_lines, gates_markdown
    from evalkit.report.verdict_view import first_screen

    baseline, report = pair
    gates = _gates(tmp_path, AUC_DROP)
    verdict = gate_verdict(report, gates=gates, baseline=baseline, settings=SETTINGS)
    (line,) = verdict.abstention_lines()
    assert line in change_lines(verdict)
    # Markdown and HTML escape the line's "->" and brackets; its numbers are there as written
    after = line.split("-> ")[1].split(",")[0]
    for shown in (gates_markdown(verdict, title="dev"), first_screen(verdict, base="mine")):
        assert "mine: abstention AUC 1.000 " in shown
        assert after in shown
    without = _gates(tmp_path, BASELINE_SECTION)  # no abstention gate: no AUC line
    quiet = gate_verdict(report, gates=without, baseline=baseline, settings=SETTINGS)
    assert quiet.abstention_lines() == []
    assert "abstention AUC" not in gates_markdown(quiet, title="dev")
