"""Gates that can fail (issue 17, item 3): tolerances per measure, absolute or relative,
thresholds kept inside each measure's range, absolute bounds that could never fail refused.

Unit tests use hand-made report dicts (every expected threshold is worked out by hand in a
comment); the must-show test degrades a real reference system on the committed fixture.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pandas as pd
import pytest
from test_gates import make_report
from wrapped_system import WrappedSystem

from evalkit.errors import FixtureError
from evalkit.gates import DEFAULT_TOLERANCE, Gates, Tolerance, check_gates, load_gates, load_report
from evalkit.measures import score
from evalkit.measures.names import measure_range

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURE_DIR = REPO / "fixtures" / "synthetic-bilingual-v1"


def report(means: dict[str, float], by_language: dict[str, dict[str, float]] | None = None) -> Any:
    """A minimal evalkit.report/1 dict of one system ``s`` with the given means."""
    return make_report({"s": means}, {"s": by_language or {}})


def gates(baseline: dict[str, Any]) -> Gates:
    return Gates.model_validate({"schema": "evalkit.gates/1", "baseline": baseline})


def rows(results: Any) -> dict[tuple[str, str], tuple[str, float, str, str]]:
    return {
        (r.measure, r.language): (r.op, round(r.threshold, 6), r.status, r.note)
        for r in results.itertuples(index=False)
    }


def test_default_tolerance_is_the_smaller_of_absolute_and_relative() -> None:
    old = report({"RR@10": 0.8, "ContextPrecision@10": 0.0199, "NoResult": 0.05})
    new = report({"RR@10": 0.785, "ContextPrecision@10": 0.0170, "NoResult": 0.07})
    found = rows(check_gates(new, gates({"per_language": False}), old))
    # RR@10: min(0.02, 0.1 * 0.8 = 0.08) = 0.02 -> 0.78; 0.785 passes.
    assert found["RR@10", "all"][:3] == (">=", 0.78, "pass")
    # ContextPrecision@10: min(0.02, 0.1 * 0.0199) = 0.00199 -> 0.01791; 0.0170 fails. A fixed
    # 0.02 gave -0.0001, which no value can fail.
    assert found["ContextPrecision@10", "all"][:3] == (">=", 0.01791, "fail")
    # NoResult (lower is better): min(0.02, 0.1 * 0.05 = 0.005) -> 0.055; 0.07 fails.
    assert found["NoResult", "all"][:3] == ("<=", 0.055, "fail")


def test_a_bare_number_is_an_absolute_tolerance() -> None:
    spec = gates({"tolerance": 0.05})
    assert spec.baseline is not None
    assert spec.baseline.tolerance == Tolerance(absolute=0.05)
    assert gates({}).baseline.tolerance == DEFAULT_TOLERANCE  # type: ignore[union-attr]


def test_per_measure_tolerances_exact_measure_before_name_before_default() -> None:
    means = {"RR@10": 0.5, "RR@5": 0.5, "R@10": 0.5}
    spec = gates(
        {
            "per_language": False,
            "tolerance": {"absolute": 0.01},
            "tolerances": {"RR": {"relative": 0.5}, "RR@10": {"absolute": 0.1}},
        }
    )
    found = rows(check_gates(report(means), spec, report(means)))
    assert found["RR@10", "all"][1] == 0.4  # the exact key: 0.5 - 0.1
    assert found["RR@5", "all"][1] == 0.25  # the name: 0.5 - 0.5 * 0.5
    assert found["R@10", "all"][1] == 0.49  # the default: 0.5 - 0.01


def test_thresholds_stay_inside_the_range_and_say_when_they_cannot_fail() -> None:
    old = report({"NoAnswerFP": 1.0, "R@10": 0.01}, {"en": {"NoAnswerFP": 0.99, "R@10": 0.0}})
    found = rows(check_gates(old, gates({"tolerance": 0.02}), old))
    # NoAnswerFP 1.0 + 0.02 would be 1.02, above the measure's range: clamped to 1.0, which
    # nothing can exceed, so the check says it cannot fail.
    assert found["NoAnswerFP", "all"][:3] == ("<=", 1.0, "pass")
    assert found["NoAnswerFP", "all"][3].startswith("cannot fail")
    assert found["NoAnswerFP", "en"][:2] == ("<=", 1.0)  # 0.99 + 0.02 clamped as well
    assert found["R@10", "all"][:2] == (">=", 0.0)  # 0.01 - 0.02 clamped to 0
    assert found["R@10", "en"][3].startswith("cannot fail")  # the baseline is 0 already
    # With the default tolerance the 0.01 baseline keeps a live threshold: 0.01 - 0.001.
    live = rows(check_gates(old, gates({}), old))
    assert live["R@10", "all"][1] == 0.009
    assert live["R@10", "all"][3] == ""


def test_measure_ranges() -> None:
    assert measure_range("nDCG(dcg='exp-log2')@10") == (0.0, 1.0)
    assert measure_range("NoAnswerFP") == (0.0, 1.0)
    assert measure_range("NumRet")[1] == float("inf")
    assert measure_range("utility") == (float("-inf"), float("inf"))


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ("measure: R@10\n    min: 0.0", "min 0 can never fail: R@10 is never below 0"),
        ("measure: R@10\n    min: -0.5", "min -0.5 can never fail"),
        ("measure: NoAnswerFP\n    max: 1.0", "max 1 can never fail: NoAnswerFP is never above 1"),
        ("measure: RR@10\n    min: 1.2", "min 1.2 can never pass"),
    ],
)
def test_absolute_bounds_that_cannot_fail_are_refused(
    tmp_path: pathlib.Path, gate: str, message: str
) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        f"schema: evalkit.gates/1\nabsolute:\n  - id: g1\n    system: s\n    {gate}\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError) as info:
        load_gates(path)
    assert message in str(info.value)
    assert "gates.yaml:3" in str(info.value)


def test_unknown_tolerance_measure_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: evalkit.gates/1\nbaseline:\n  tolerances:\n    nDGC@10: {absolute: 0.1}\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError, match="unknown measure 'nDGC'"):
        load_gates(path)


def test_a_tolerance_needs_an_allowance(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text("schema: evalkit.gates/1\nbaseline:\n  tolerance: {}\n", encoding="utf-8")
    with pytest.raises(FixtureError, match="give absolute, relative or both"):
        load_gates(path)


# --- must show: a system degraded by 0.03 on a primary measure fails a default gate -------


class DemotesTopHit(WrappedSystem):
    """A regression its definition does not show: the wrapped system, but for the queries in
    ``query_ids`` its first hit is moved to the end of its list."""

    def search(self, query: Any, k: int) -> Any:
        hits = list(self.inner.search(query, k))
        return hits[1:] + hits[:1] if query.id in self.query_ids else hits


def demoted_queries(count: int) -> frozenset[str]:
    """The first ``count`` query IDs (sorted) with exactly one relevant chunk that the committed
    baseline's hybrid-rerank ranks first (RR@10 = 1.0): demoting that hit to rank 10 costs
    0.9 of RR@10 each, so 3 of the 82 answerable queries cost 3 * 0.9 / 82 = 0.033."""
    from evalkit.fixtures import load_fixture

    fixture = load_fixture(FIXTURE_DIR)
    per_query = load_report(FIXTURE_DIR / "baseline.json")["perQuery"]["hybrid-rerank"]
    single = {q.id for q in fixture.queries if sum(1 for j in q.judgments if j.grade >= 1) == 1}
    perfect = sorted(q for q in single if per_query.get(q, {}).get("RR@10") == 1.0)
    return frozenset(perfect[:count])


@pytest.fixture(scope="module")
def degraded_runs() -> dict[int, tuple[Any, Any]]:
    """``{queries demoted: (report, baseline)}`` of hybrid-rerank on the committed fixture."""
    from evalkit.fixtures import load_fixture
    from evalkit.run import evaluate
    from evalkit.systems import resolve_system

    fixture = load_fixture(FIXTURE_DIR)
    baseline = load_report(FIXTURE_DIR / "baseline.json")
    runs = {}
    for count in (1, 3):
        system = DemotesTopHit(resolve_system("hybrid-rerank"), demoted_queries(count))
        runs[count] = (evaluate(fixture, [system], repeats=2).to_report(), baseline)
    return runs


def _rr_row(report: Any, baseline: Any, spec: Gates) -> Any:
    results = check_gates(report, spec, baseline)
    row = results[
        (results["kind"] == "baseline")
        & (results["measure"] == "RR@10")
        & (results["language"] == "all")
    ]
    assert len(row) == 1
    return row.iloc[0]


def test_a_system_degraded_by_003_fails_a_default_gate(
    degraded_runs: dict[int, tuple[Any, Any]],
) -> None:
    report, baseline = degraded_runs[3]
    before = baseline["summary"]["hybrid-rerank"]["RR@10"]["mean"]
    after = report["summary"]["hybrid-rerank"]["RR@10"]["mean"]
    assert 0.03 <= before - after < 0.04  # degraded by 0.03 (0.033, see demoted_queries)
    default = gates({"systems": ["hybrid-rerank"]})  # every tolerance at its default
    row = _rr_row(report, baseline, default)
    assert row["status"] == "fail"
    assert row["threshold"] == pytest.approx(before - 0.02)  # min(0.02, 10% of 0.80)
    committed = load_gates(FIXTURE_DIR / "gates.yaml")  # the fixture's own gates fail too
    assert _rr_row(report, baseline, committed)["status"] == "fail"


def test_a_smaller_degradation_passes_the_default_gate(
    degraded_runs: dict[int, tuple[Any, Any]],
) -> None:
    report, baseline = degraded_runs[1]
    before = baseline["summary"]["hybrid-rerank"]["RR@10"]["mean"]
    after = report["summary"]["hybrid-rerank"]["RR@10"]["mean"]
    assert 0.0 < before - after < 0.02  # 0.9 / 82 = 0.011
    assert _rr_row(report, baseline, gates({"systems": ["hybrid-rerank"]}))["status"] == "pass"


def test_measure_ranges_hold_what_the_measures_compute() -> None:
    # graded gains above 1 (cwl_eval's RBP) and a negative gain (trec_eval's ndcg gain map) give
    # values outside [0, 1]; their ranges must allow what score() computes
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [3, 3, 1]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    for name in ["RBP(p=0.8)", "nDCG(gains={1:-2,3:1})", "nDCG@10", "rbp(p=0.8)", "ERR@20"]:
        low, high = measure_range(name)
        (value,) = score(qrels, run, [name]).value
        assert low <= value <= high, (name, value)
    assert score(qrels, run, ["RBP(p=0.8)"]).value.item() > 1.0  # the case the range allows
    worst_first = run.assign(score=[1.0, 2.0, 3.0])  # the negative-gain doc on top
    negative = score(qrels, worst_first, ["nDCG(gains={1:-2,3:1})"]).value.item()
    assert negative < 0.0
    assert measure_range("nDCG(gains={1:-2,3:1})")[0] <= negative
