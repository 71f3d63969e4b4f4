"""Issue 17: the report's legends (resamples, seed, interval method, effect size, correction),
probe thresholds, compact intervals, and the per-query drill-down chosen with ``query_id``."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evalkit.fixtures import dump_fixture, generate_fixture, load_fixture
from evalkit.probes import get_target, load_probes, run_probes
from evalkit.report import render_report
from evalkit.report.tables import (
    COMPARISON_VIEW_COLUMNS,
    PROBE_COLUMNS,
    ablation_legend,
    comparison_legend,
    comparison_view,
    interval_text,
    paired_comparisons,
    probe_legend,
    probe_table,
    query_measures,
    text_hash,
)
from evalkit.safety.privacy import find_leaks, private_texts

REPO = Path(__file__).resolve().parent.parent
NBSP = "\u00a0"


def _per_query() -> pd.DataFrame:
    """Three systems, two measures, six queries; values written by hand."""
    rows = []
    values = {
        "base": [0.5, 0.4, 0.3, 0.6, 0.2, 0.1],
        "better": [0.9, 0.8, 0.7, 0.9, 0.6, 0.5],
        "same": [0.5, 0.4, 0.3, 0.6, 0.2, 0.1],
    }
    for system, scores in values.items():
        for index, score in enumerate(scores):
            for measure in ("nDCG@10", "NoAnswerFP"):
                rows.append(
                    {
                        "system": system,
                        "query_id": f"q{index}",
                        "language": "en",
                        "answerable": True,
                        "measure": measure,
                        "value": score,
                    }
                )
    return pd.DataFrame(rows)


def test_interval_text_is_one_line() -> None:
    assert interval_text(0.81, 0.74, 0.87, digits=2) == f"0.81{NBSP}[0.74,{NBSP}0.87]"
    assert interval_text(0.8123, 0.7, 0.9) == f"0.812{NBSP}[0.700,{NBSP}0.900]"
    assert " " not in interval_text(0.5, 0.25, 0.75)  # nothing a browser may wrap at
    assert interval_text(math.nan, 0.1, 0.2) == "–"
    assert interval_text(0.5, math.nan, 0.7, digits=1) == f"0.5{NBSP}[–]"
    assert interval_text(0.5, 0.25, math.inf, digits=1) == f"0.5{NBSP}[–]"  # inf: missing
    # unless inf is a value (a threshold that answers nothing)
    assert interval_text(math.inf, 2.0, math.inf, digits=1, infinite=True) == (
        f"inf{NBSP}[2.0,{NBSP}inf]"
    )
    assert interval_text(-math.inf, 0.1, 0.2, infinite=True) == "–"


def test_ablation_legend_states_method_level_resamples_and_seed() -> None:
    legend = ablation_legend(n_resamples=2000, seed=7)
    assert "percentile bootstrap" in legend
    assert "95% interval" in legend
    assert "2,000 resamples" in legend
    assert "seed 7" in legend


def _comparisons(per_query: pd.DataFrame, n_resamples: int) -> pd.DataFrame:
    """``better`` and ``same`` against ``base`` on nDCG@10 and NoAnswerFP, seed 3."""
    systems = ["base", "better", "same"]
    measures = ["nDCG@10", "NoAnswerFP"]
    return paired_comparisons(
        per_query, "base", systems=systems, measures=measures, n_resamples=n_resamples, seed=3
    )


def test_comparison_legend_explains_every_shown_column() -> None:
    per_query = _per_query()
    comparisons = _comparisons(per_query, 500)
    view = comparison_view(comparisons)
    assert list(view.columns) == list(COMPARISON_VIEW_COLUMNS)
    legend = comparison_legend(comparisons, n_resamples=500, seed=3)
    explained = {name for cell in legend["column"] for name in cell.split(", ")}
    assert explained == set(view.columns)
    meaning = dict(zip(legend["column"], legend["meaning"], strict=True))
    assert "Cohen's d_z" in meaning["effect_size"]
    assert "percentile bootstrap" in meaning["diff [95% CI]"]
    assert "500 resamples" in meaning["diff [95% CI]"]
    assert "seed 3" in meaning["diff [95% CI]"]
    assert "randomization" in meaning["p_value"]
    # a handful of queries: 2^n <= 500, every sign flip enumerated, the p-value is exact
    assert set(comparisons["p_method"]) == {"exact"}
    assert "exact: every one of the 2^n sign flips" in meaning["p_value"]
    sampled = _comparisons(per_query, 7)
    assert "monte-carlo" in set(sampled["p_method"])
    sampled_legend = comparison_legend(sampled, n_resamples=7, seed=3)
    sampled_meaning = dict(zip(sampled_legend["column"], sampled_legend["meaning"], strict=True))
    assert "7 resamples, seed 3" in sampled_meaning["p_value"]
    # Monte Carlo standard error of p at 0.05 with 7 resamples: sqrt(0.05 * 0.95 / 7)
    # = 0.0824 (binomial standard error, by hand)
    assert "about 0.082" in sampled_meaning["p_value"]
    assert (
        "2 systems against base 'base' x 2 measures: 4 tests, correction holm"
        in (meaning["p_adjusted"])
    )
    assert meaning["system"].endswith("base")
    # the diff cell holds the frame's own numbers, on one line
    row = comparisons.iloc[0]
    assert view["diff [95% CI]"].iloc[0] == interval_text(
        row["diff"], row["ci_low"], row["ci_high"]
    )


def test_probe_table_shows_thresholds_and_why_a_zero_threshold_probe_passes() -> None:
    target = get_target("stdlib")
    results = run_probes(
        target.tools, load_probes(REPO / "fixtures" / "probes", tools=target.tools.names())
    )
    table = probe_table(results)
    assert list(table.columns) == list(PROBE_COLUMNS)
    by_id = table.set_index("id")
    # The two probes with recall 0 that pass: both thresholds are 0 in their probe files
    # (fixtures/probes/callers_of.yaml and search_symbols.yaml: "thresholds are 0").
    for probe in ("callers-jsondecoder-decode-blind-spot", "search-parse-date-compound-words"):
        row = by_id.loc[probe]
        assert row["recall"] == 0.0
        assert row["status"] == "pass"
        assert (row["recall_min"], row["precision_min"]) == (0.0, 0.0)
        assert row["note"].startswith("thresholds 0")
    assert (by_id.loc["callers-decode-uxxxx", ["recall_min", "precision_min"]] == 1.0).all()
    assert by_id.loc["callers-decode-uxxxx", "note"] == ""
    assert all(isinstance(v, int) for v in table["missing"])  # redacted: set sizes only
    assert "2 of" in probe_legend(results)


def test_probe_table_names_the_missed_threshold(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "- id: wants-too-much\n"
        "  probe: {tool: find_symbol, args: {name: JSONDecoder}}\n"
        "  scoring: {recall_min: 1.0, precision_min: 0.0}\n"
        "  expected:\n"
        "    symbols: [json.decoder.JSONDecoder, json.not_a_symbol]\n",
        encoding="utf-8",
    )
    target = get_target("stdlib")
    results = run_probes(target.tools, load_probes(tmp_path, tools=target.tools.names()))
    (row,) = probe_table(results, redact=False).to_dict("records")
    assert row["status"] == "fail"
    assert row["note"] == "recall below its threshold"
    assert row["missing"] == "json.not_a_symbol"


def test_query_measures_is_measures_by_system() -> None:
    table = query_measures(
        _per_query(), "q1", systems=["better", "base"], measures=["NoAnswerFP", "nDCG@10", "X"]
    )
    assert list(table.index) == ["NoAnswerFP", "nDCG@10"]
    assert list(table.columns) == ["better", "base"]
    assert table.loc["nDCG@10", "better"] == 0.8
    assert table.loc["nDCG@10", "base"] == 0.4


# --- the query_id parameter, on a real kernel (papermill) -------------------------------------


@pytest.fixture(scope="module")
def small_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("query-id") / "fixture"
    dump_fixture(generate_fixture(11, documents=8, queries=6), directory)
    return directory


def _chosen(fixture_dir: Path) -> tuple[str, str]:
    """A query ID and its text: the first answerable query of the fixture."""
    query = next(q for q in load_fixture(fixture_dir).queries if q.answerable)
    return query.id, query.text


@pytest.mark.slow
def test_query_id_drills_into_one_query_with_its_text_only_unredacted(
    small_fixture: Path,
) -> None:
    query_id, text = _chosen(small_fixture)
    base = {
        "fixture": str(small_fixture),
        "systems": "lexical,token-hash",
        "base_system": "lexical",
        "n_resamples": 200,
        "worst": 0,
        "probes": "",
        "query_id": query_id,
    }
    private = private_texts(load_fixture(small_fixture))

    unredacted = render_report({**base, "redact": False}, allow_unredacted=True)
    section = unredacted.html.split(f"Chosen query {query_id}", 1)
    assert len(section) == 2  # the chosen query's own drill-down
    detail = section[1].split("Baseline and gates", 1)[0]
    assert text in detail  # with redact = False: the query text itself
    assert "R@5" in detail  # the query's measures per system

    redacted = render_report({**base, "redact": True})
    section = redacted.html.split(f"Chosen query {query_id}", 1)
    assert len(section) == 2
    detail = section[1].split("Baseline and gates", 1)[0]
    assert f"sha256:{text_hash(text)}" in detail  # the hash stands in for the text
    assert text not in redacted.html
    assert find_leaks(redacted.html, private) == []
    assert find_leaks(redacted.notebook, private) == []


@pytest.mark.slow
def test_an_unknown_query_id_is_said_so(small_fixture: Path) -> None:
    # refused before the notebook runs (the notebook itself says so in JupyterLab)
    from evalkit.errors import InputError

    with pytest.raises(InputError, match="query_id 'q-none-such' is not a query of the fixture"):
        render_report(
            {
                "fixture": str(small_fixture),
                "systems": "lexical",
                "base_system": "lexical",
                "n_resamples": 50,
                "worst": 0,
                "probes": "",
                "query_id": "q-none-such",
            }
        )
