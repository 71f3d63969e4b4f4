"""Span measures on fixtures without answer spans are n/a, never 0.0 (issue 33, Build 5).

A generated fixture is stripped of its spans (``requires_spans: false``, as a TREC, BEIR or
SMART import is), wholly or for some queries only; the span measures must then be NaN in the
frames, "n/a" in tables, the Markdown and the CLI, absent from the JSON report, not evaluated
by gates, and skipped by the statistics and the verdict. Ranking measures are untouched.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_runner import run_cli

from evalkit.errors import InputError
from evalkit.fixtures import Fixture
from evalkit.fixtures.dump import dump_fixture
from evalkit.fixtures.generate import generate_fixture
from evalkit.gates import Gates, GateVerdict, baseline_from_report, check_gates, diff_reports
from evalkit.report.ci import gates_markdown
from evalkit.report.tables import ablation_table, all_pairs_table, query_measures, style_ablation
from evalkit.report.verdict import build_verdict, change_matrix
from evalkit.run import Evaluation, evaluate
from evalkit.safety.canonical import canonical_json
from evalkit.stats import compare, summarize_with_ci

SPAN_MEASURES = ("ContextPrecision@10", "ContextRecall@10")
SYSTEMS = ["lexical", "hybrid", "token-hash"]


def _without_spans(fixture: Fixture, keep: frozenset[str] = frozenset()) -> Fixture:
    """``fixture`` with the spans of every query not in ``keep`` removed."""
    queries = tuple(
        q
        if q.id in keep
        else q.model_copy(
            update={"judgments": tuple(j.model_copy(update={"spans": ()}) for j in q.judgments)}
        )
        for q in fixture.queries
    )
    meta = fixture.meta.model_copy(update={"requires_spans": False})
    return fixture.model_copy(update={"queries": queries, "meta": meta})


@pytest.fixture(scope="module")
def spanned() -> Fixture:
    return generate_fixture(seed=5, documents=12, chunks_per_document=3, queries=24)


@pytest.fixture(scope="module")
def plain(spanned: Fixture) -> Evaluation:
    return evaluate(_without_spans(spanned), SYSTEMS, repeats=1)


def _span_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["measure"].isin(SPAN_MEASURES)]


def test_span_measures_are_nan_in_every_frame(plain: Evaluation) -> None:
    answerable = sum(q.answerable for q in plain.fixture.queries)
    rows = _span_rows(plain.per_query)
    # a row per system, answerable query and span measure, each NaN; nothing else is NaN
    assert len(rows) == len(SYSTEMS) * answerable * 2
    assert rows["value"].isna().all()
    assert plain.per_query.drop(rows.index)["value"].notna().all()
    for by in ((), ("language",)):
        summary = plain.summary(by=by)
        spans = _span_rows(summary)
        assert len(spans)
        assert spans["value"].isna().all()
        assert (spans["n"] == 0).all()
        assert summary.drop(spans.index)["value"].notna().all()
    overall = plain.summary()
    assert set(overall.loc[overall["measure"] == "R@10", "n"]) == {answerable}
    assert plain.wide()[list(SPAN_MEASURES)].isna().all().all()


def test_the_json_report_leaves_them_out_and_stays_canonical(plain: Evaluation) -> None:
    report = plain.to_report()
    canonical_json(report)  # NaN is refused there
    for system in SYSTEMS:
        assert not set(SPAN_MEASURES) & set(report["summary"][system])
        for values in report["perQuery"][system].values():
            assert not set(SPAN_MEASURES) & set(values)
        assert "nDCG(dcg='exp-log2')@10" in report["summary"][system]
    assert set(SPAN_MEASURES) <= set(report["settings"]["measures"])  # still evaluated


def test_gates_do_not_evaluate_them(plain: Evaluation) -> None:
    report = plain.to_report()
    baseline = baseline_from_report(report)
    gates = Gates.model_validate(
        {
            "schema": "evalkit.gates/1",
            "absolute": [
                {"id": "cp", "system": "lexical", "measure": "ContextPrecision@10", "min": 0.1},
                {"id": "ndcg", "system": "lexical", "measure": "nDCG(dcg='exp-log2')@10", "min": 0},
            ],
            "relative": [
                {
                    "id": "cr",
                    "system": "hybrid",
                    "reference": "lexical",
                    "measure": "ContextRecall@10",
                    "max_drop": 0.0,
                }
            ],
            "baseline": {
                "path": "baseline.json",
                "systems": ["lexical"],
                "measures": ["R@10", "ContextRecall@10"],
            },
        }
    )
    results = check_gates(report, gates, baseline)
    keys = zip(results["gate"], results["measure"], strict=True)
    status = dict(zip(keys, results["status"], strict=True))
    assert status[("cp", "ContextPrecision@10")] == "not evaluated"
    assert status[("cr", "ContextRecall@10")] == "not evaluated"
    assert status[("baseline:lexical", "ContextRecall@10")] == "not evaluated"
    assert status[("ndcg", "nDCG(dcg='exp-log2')@10")] == "pass"
    assert status[("baseline:lexical", "R@10")] == "pass"
    notes = results.loc[results["status"] == "not evaluated", "note"]
    assert all("n/a" in note for note in notes)
    # diff: nothing to compare on either side, no row, no crash
    diff = diff_reports(baseline, report)
    assert not set(SPAN_MEASURES) & set(diff.summary["measure"])
    assert (diff.summary["change"] == "same").all()


def test_statistics_skip_them(plain: Evaluation) -> None:
    per_query = plain.per_query
    compared = compare(per_query, "lexical", n_resamples=200)
    assert not set(SPAN_MEASURES) & set(compared["measure"])
    assert "R@10" in set(compared["measure"])
    summarized = summarize_with_ci(per_query, n_resamples=200)
    assert not set(SPAN_MEASURES) & set(summarized["measure"])
    with pytest.raises(InputError, match="not applicable"):
        compare(per_query, "lexical", ["ContextRecall@10"], n_resamples=200)
    # a NaN beside finite values of the same query and measure is still an error
    broken = per_query.copy()
    broken.loc[broken.index[0], "value"] = np.nan
    with pytest.raises(InputError, match="NaN"):
        compare(broken, "lexical", n_resamples=200)


def test_the_verdict_never_counts_them(plain: Evaluation) -> None:
    verdict = build_verdict(plain, base="lexical", n_resamples=200)
    assert not set(SPAN_MEASURES) & set(verdict.primary)
    assert not set(SPAN_MEASURES) & set(verdict.comparisons["measure"])
    assert not set(SPAN_MEASURES) & set(verdict.changes["measure"])
    assert not set(SPAN_MEASURES) & set(verdict.headline["measure"])
    matrix = change_matrix(verdict)
    assert (matrix[list(SPAN_MEASURES)] == "n/a").all().all()
    assert "n/a" not in matrix.drop(columns=list(SPAN_MEASURES)).to_numpy()
    with pytest.raises(InputError, match="not applicable"):
        build_verdict(plain, base="lexical", primary=["ContextPrecision@10"], n_resamples=200)
    none = GateVerdict("NONE", "no gates and no baseline", None)
    markdown = gates_markdown(none, title="generated", ablation=verdict)
    header, _, *rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    columns = [c.strip().strip("`") for c in header.strip("|").split("|")]  # code spans
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
        assert [cells[m] for m in SPAN_MEASURES] == ["n/a", "n/a"]
    assert "nan" not in markdown.lower().replace("n/a", "")


def test_report_tables_show_n_a(plain: Evaluation) -> None:
    table = ablation_table(
        plain.per_query, systems=SYSTEMS, measures=plain.measures, n_resamples=200
    )
    spans = _span_rows(table)
    assert len(spans) == len(SYSTEMS) * 2
    assert (spans["n"] == 0).all()
    assert spans["mean"].isna().all()
    assert not spans["best"].any()
    html = style_ablation(table).to_html()
    assert html.count(">n/a<") == len(SYSTEMS) * 2
    letters, _ = all_pairs_table(
        plain.per_query, systems=SYSTEMS, measures=plain.measures, n_resamples=200
    )
    assert (letters[list(SPAN_MEASURES)] == "n/a").all().all()
    query = next(q.id for q in plain.fixture.queries if q.answerable)
    values = query_measures(plain.per_query, query, systems=SYSTEMS, measures=plain.measures)
    assert values.loc[list(SPAN_MEASURES)].isna().all().all()  # the notebook shows "n/a"


def test_only_the_queries_without_spans_are_n_a(spanned: Fixture) -> None:
    answerable = [q.id for q in spanned.queries if q.answerable]
    keep = frozenset(answerable[::2])
    full = evaluate(spanned, ["lexical", "hybrid"], repeats=1).per_query
    mixed = evaluate(_without_spans(spanned, keep), ["lexical", "hybrid"], repeats=1)
    rows = _span_rows(mixed.per_query)
    assert set(rows.loc[rows["value"].notna(), "query_id"]) == keep
    # the annotated queries keep the values they had with every query annotated
    kept = _span_rows(full)[_span_rows(full)["query_id"].isin(keep)]
    merged = kept.merge(rows, on=["system", "query_id", "measure"], suffixes=("_full", ""))
    assert len(merged) == len(kept)
    np.testing.assert_array_equal(merged["value"], merged["value_full"])
    summary = mixed.summary().set_index(["system", "measure"])
    for system in ("lexical", "hybrid"):
        for measure in SPAN_MEASURES:
            of = kept[(kept["system"] == system) & (kept["measure"] == measure)]["value"]
            assert summary.loc[(system, measure), "n"] == len(keep)
            assert math.isclose(summary.loc[(system, measure), "value"], of.mean())
    # compare pairs the annotated queries only
    compared = compare(mixed.per_query, "lexical", list(SPAN_MEASURES), n_resamples=200)
    assert set(compared["n"]) == {len(keep)}


def test_evalkit_run_prints_n_a(spanned: Fixture, tmp_path: Path) -> None:
    dump_fixture(_without_spans(spanned), tmp_path / "plain")
    argv = ["run", "plain", "--systems", "lexical", "--repeats", "1", "--output", "r.json"]
    code, out, err = run_cli(argv, tmp_path)
    assert code == 0, out + err
    header, row = out.splitlines()[1], out.splitlines()[3]
    assert header.split()[5:7] == list(SPAN_MEASURES)
    assert row.split()[5:7] == ["n/a", "n/a"]
    assert (tmp_path / "r.json").is_file()
