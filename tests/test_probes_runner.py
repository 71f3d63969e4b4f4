"""run_probes, the probes report and baseline comparison."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalkit.errors import InputError, StaleBaselineError
from evalkit.probes import (
    RESULT_COLUMNS,
    Probe,
    Tool,
    baseline_drops,
    probes_report,
    run_probes,
)
from evalkit.probes.report import DROP_COLUMNS
from evalkit.registry import Registry
from evalkit.safety.canonical import canonical_json

CATALOGUE = ["alpha", "beta", "gamma", "delta"]


def ranked(query: str, limit: int = 10) -> list[str]:
    """Catalogue names containing the query's first letter, in catalogue order."""
    return [name for name in CATALOGUE if query[0] in name][:limit]


def listed(prefix: str) -> list[str]:
    return sorted(name for name in CATALOGUE if name.startswith(prefix))


def broken(prefix: str) -> list[str]:
    raise RuntimeError("tool failure")


@pytest.fixture
def tools() -> Registry[Tool]:
    registry: Registry[Tool] = Registry("tool")
    registry.register("ranked", Tool.from_function(ranked, ordered=True))
    registry.register("listed", Tool.from_function(listed, ordered=False))
    registry.register("broken", Tool.from_function(broken, ordered=False))
    return registry


def make_probe(
    probe_id: str,
    tool: str,
    args: dict[str, object],
    symbols: list[str],
    *,
    recall_min: float = 0.0,
    precision_min: float = 0.0,
) -> Probe:
    return Probe.model_validate(
        {
            "id": probe_id,
            "description": "a test probe",
            "probe": {"tool": tool, "args": args},
            "expected": {"symbols": symbols},
            "scoring": {"recall_min": recall_min, "precision_min": precision_min},
        }
    )


def test_columns_and_dtypes_do_not_depend_on_input_size(tools: Registry[Tool]) -> None:
    empty = run_probes(tools, [])
    one = run_probes(tools, [make_probe("p", "listed", {"prefix": "a"}, ["alpha"])])
    assert list(empty.columns) == list(RESULT_COLUMNS) == list(one.columns)
    assert empty.dtypes.equals(one.dtypes)
    assert len(empty) == 0


def test_rows_keep_input_order_and_scores_are_hand_checked(tools: Registry[Tool]) -> None:
    probes = [
        # ranked("a") -> [alpha, beta, gamma, delta] (all contain "a"); expected {gamma, zeta}
        # recall 1/2, precision 1/4, F1 = 2*(1/4)*(1/2)/(3/4) = 1/3, RR = 1/3,
        # nDCG = (1/log2(4)) / (1 + 1/log2(3)) = 0.5 / 1.630930 = 0.306574
        make_probe(
            "z-ranked",
            "ranked",
            {"query": "a"},
            ["gamma", "zeta"],
            recall_min=0.5,
            precision_min=0.25,
        ),
        # listed("b") -> [beta]; expected {beta}: perfect, unordered -> no RR/nDCG
        make_probe(
            "a-listed", "listed", {"prefix": "b"}, ["beta"], recall_min=1.0, precision_min=1.0
        ),
    ]
    frame = run_probes(tools, probes)
    assert frame["id"].tolist() == ["z-ranked", "a-listed"]
    first, second = frame.iloc[0], frame.iloc[1]
    assert first["recall"] == 0.5
    assert first["precision"] == 0.25
    assert first["f1"] == pytest.approx(1 / 3)
    assert first["rr"] == pytest.approx(1 / 3)
    assert first["ndcg"] == pytest.approx(0.306574, abs=1e-6)
    assert first["missing"] == ("zeta",)
    assert first["extra"] == ("alpha", "beta", "delta")
    assert (first["n_expected"], first["n_returned"]) == (2, 4)
    assert bool(first["pass_recall"])
    assert bool(first["pass_precision"])
    assert first["status"] == "pass"
    assert math.isnan(second["rr"])
    assert math.isnan(second["ndcg"])
    assert second["status"] == "pass"
    assert pd.isna(second["error"])
    assert (frame["latency_ms"] >= 0).all()


def test_threshold_misses_fail_each_flag_separately(tools: Registry[Tool]) -> None:
    probe = make_probe(
        "p", "listed", {"prefix": "a"}, ["alpha", "beta"], recall_min=0.6, precision_min=1.0
    )
    row = run_probes(tools, [probe]).iloc[0]
    assert row["recall"] == 0.5  # {alpha} of {alpha, beta}
    assert not row["pass_recall"]
    assert row["pass_precision"]
    assert row["status"] == "fail"


def test_a_probe_that_cannot_run_is_an_error_row_not_a_zero_score(
    tools: Registry[Tool],
) -> None:
    probes = [
        make_probe("unknown-tool", "lsted", {"prefix": "a"}, ["alpha"]),
        make_probe("bad-args", "listed", {"prefix": 3}, ["alpha"]),
        make_probe("raises", "broken", {"prefix": "a"}, ["alpha"]),
        make_probe("fine", "listed", {"prefix": "q"}, ["alpha"]),  # ran, scored zero
    ]
    frame = run_probes(tools, probes).set_index("id")
    for probe_id in ("unknown-tool", "bad-args", "raises"):
        row = frame.loc[probe_id]
        assert row["status"] == "error"
        assert math.isnan(row["recall"])
        assert math.isnan(row["precision"])
        assert not row["pass_recall"]
        assert not row["pass_precision"]
        assert row["error"].startswith(f"probe {probe_id!r}: ")
    assert "Did you mean 'listed'?" in frame.loc["unknown-tool", "error"]
    assert "argument 'prefix' must be str, found int" in frame.loc["bad-args", "error"]
    assert "raised RuntimeError" in frame.loc["raises", "error"]
    assert frame.loc["fine", "status"] == "pass"  # thresholds 0.0: a zero score still passes
    assert frame.loc["fine", "recall"] == 0.0
    assert pd.isna(frame.loc["fine", "error"])


# -- report -----------------------------------------------------------------------------------


def _report(tools: Registry[Tool], probes: list[Probe]) -> dict[str, object]:
    frame = run_probes(tools, probes)
    return probes_report(frame, target="toy", fingerprint="sha256:00", probes=probes)


def test_report_shape_summary_and_nulls(tools: Registry[Tool]) -> None:
    probes = [
        make_probe(
            "a", "listed", {"prefix": "a"}, ["alpha", "beta"], recall_min=0.6
        ),  # fail: recall 0.5
        make_probe("b", "ranked", {"query": "b"}, ["beta"]),  # pass: recall 1, precision 1
        make_probe("c", "nope", {}, ["beta"]),  # error
    ]
    report = _report(tools, probes)
    assert report["schema"] == "evalkit.probes/1"
    assert report["target"] == {"name": "toy", "fingerprint": "sha256:00"}
    rows = report["probes"]
    assert isinstance(rows, list)
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert set(rows[0]) == {
        "id", "tool", "status", "recall", "precision", "f1", "rr", "ndcg", "recall_min",
        "precision_min", "pass_recall", "pass_precision", "missing", "extra", "got", "error",
    }  # fmt: skip
    assert rows[0]["rr"] is None  # unordered tool
    assert rows[0]["missing"] == ["beta"]
    assert rows[2]["recall"] is None
    assert rows[2]["error"].startswith("probe 'c': unknown tool 'nope'")
    # means over the two probes that ran: recall (0.5 + 1) / 2, precision (1 + 1) / 2
    assert report["summary"] == {
        "probes": 3,
        "passed": 1,
        "failed": 1,
        "errors": 1,
        "mean_recall": 0.75,
        "mean_precision": 1.0,
        "mean_f1": pytest.approx((2 / 3 + 1.0) / 2),
    }


def test_report_json_is_byte_identical_across_runs(tools: Registry[Tool]) -> None:
    probes = [make_probe("a", "ranked", {"query": "a"}, ["gamma"])]
    first = canonical_json(_report(tools, probes))
    second = canonical_json(_report(tools, probes))
    assert first == second
    assert "latency" not in first


def test_report_of_no_probes_has_null_means(tools: Registry[Tool]) -> None:
    report = _report(tools, [])
    assert report["probes"] == []
    assert report["summary"]["mean_recall"] is None  # type: ignore[index]


# -- baseline comparison ------------------------------------------------------------------


def _row(probe_id: str, recall: float | None, precision: float | None) -> dict[str, object]:
    return {"id": probe_id, "recall": recall, "precision": precision}


def _doc(rows: list[dict[str, object]], target: str = "toy") -> dict[str, object]:
    return {"schema": "evalkit.probes/1", "target": {"name": target}, "probes": rows}


def test_drops_are_reported_and_improvements_are_not() -> None:
    baseline = _doc([_row("a", 1.0, 0.5), _row("b", 0.5, 0.5), _row("c", 1.0, 1.0)])
    current = _doc([_row("a", 0.75, 1.0), _row("b", 1.0, 1.0), _row("d", 0.0, 0.0)])
    drops = baseline_drops(current, baseline)
    assert list(drops.columns) == list(DROP_COLUMNS)
    records = drops.to_dict(orient="records")
    assert [(r["id"], r["measure"]) for r in records] == [
        ("a", "recall"),
        ("c", "precision"),  # c is gone: both measures dropped to NaN
        ("c", "recall"),
    ]
    assert records[0]["current"] == 0.75
    assert math.isnan(records[1]["current"])


def test_a_probe_that_now_errors_counts_as_a_drop_and_baseline_errors_are_skipped() -> None:
    baseline = _doc([_row("a", 1.0, 1.0), _row("b", None, None)])
    current = _doc([_row("a", None, None), _row("b", 0.0, 0.0)])
    drops = baseline_drops(current, baseline)
    assert drops["id"].tolist() == ["a", "a"]


def test_no_drop_gives_an_empty_frame_with_the_columns() -> None:
    doc = _doc([_row("a", 1.0, 1.0)])
    drops = baseline_drops(doc, doc)
    assert drops.empty
    assert list(drops.columns) == list(DROP_COLUMNS)


def test_baseline_of_another_schema_or_target_is_stale() -> None:
    current = _doc([_row("a", 1.0, 1.0)])
    with pytest.raises(StaleBaselineError, match="schema"):
        baseline_drops(current, {"schema": "other/1"})
    with pytest.raises(StaleBaselineError, match="another target"):
        baseline_drops(current, _doc([], target="other"))


def test_malformed_baseline_is_an_input_error() -> None:
    current = _doc([_row("a", 1.0, 1.0)])
    broken_doc = _doc([])
    broken_doc["probes"] = [{"recall": 1.0}]
    with pytest.raises(InputError, match="'probes' must be a list of objects with an 'id'"):
        baseline_drops(current, broken_doc)
