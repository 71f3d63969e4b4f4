"""Compare two reports: which systems, measures, languages and query IDs got better or worse.

Rules of :func:`diff_reports`:

- Only ``summary``, ``summaryByLanguage`` and ``perQuery`` of the two reports are compared
  (schema ``evalkit.report/1``); both may come from different evaluation definitions (that is
  the point of a diff), and the header of :func:`format_diff` says whether they do.
- ``delta = new - old``. ``change`` is ``better``/``worse`` by the measure's direction (higher
  is better except ``evalkit.measures.LOWER_IS_BETTER``) when ``|delta| > CHANGE_SLACK``, else
  ``same``; ``added``/``removed`` when the value exists on one side only (``delta`` is NaN).
- The summary frame has a row for every (system, measure, language) of either report; the
  per-query frame has rows for changed values only, and only for systems present in both
  reports (a system on one side is visible as ``added``/``removed`` in the summary).
- Row order: systems in old-report order then new-only systems; languages ``all`` first then
  sorted; measures in ``settings.measures`` order (new, then old), then any others in report
  order; query IDs sorted as strings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import numpy as np
import pandas as pd

from evalkit.gates._check import fixed_width_lines
from evalkit.measures import higher_is_better
from evalkit.results import (
    ALL_LANGUAGES,
    report_means,
    report_measure_order,
    report_name,
    report_per_query,
)
from evalkit.safety.canonical import canonical_json

__all__ = [
    "DIFF_SCHEMA",
    "PER_QUERY_DIFF_COLUMNS",
    "SUMMARY_DIFF_COLUMNS",
    "ReportDiff",
    "diff_reports",
    "diff_to_json",
    "format_diff",
]

DIFF_SCHEMA: Final = "evalkit.diff/1"
CHANGE_SLACK: Final = 1e-12
SUMMARY_DIFF_COLUMNS: Final = ["system", "measure", "language", "old", "new", "delta", "change"]
PER_QUERY_DIFF_COLUMNS: Final = ["system", "query_id", "measure", "old", "new", "delta", "change"]
_HEADER_KEYS: Final = ("fixture", "evaluationDefinitionHash", "corpusHash")


class ReportDiff(NamedTuple):
    """``summary``: ``SUMMARY_DIFF_COLUMNS``; ``per_query``: ``PER_QUERY_DIFF_COLUMNS``."""

    summary: pd.DataFrame
    per_query: pd.DataFrame


def diff_reports(old: Mapping[str, Any], new: Mapping[str, Any]) -> ReportDiff:
    """Compare report dicts ``old`` and ``new`` (rules in the module docstring).

    Raises :class:`InputError` naming the side and key when a report is malformed.
    """
    old_means, new_means = report_means(old, "old report"), report_means(new, "new report")
    old_values = report_per_query(old, "old report")
    new_values = report_per_query(new, "new report")
    systems = _union(list(old_means), list(new_means))
    measure_order = _union(
        [*report_measure_order(new), *report_measure_order(old)],
        [*_measures(new_means), *_measures(old_means)],
    )
    summary_rows = []
    for system in systems:
        old_system, new_system = old_means.get(system, {}), new_means.get(system, {})
        languages = [
            ALL_LANGUAGES,
            *sorted((set(old_system) | set(new_system)) - {ALL_LANGUAGES}),
        ]
        for language in languages:
            old_table, new_table = old_system.get(language, {}), new_system.get(language, {})
            for measure in measure_order:
                if measure in old_table or measure in new_table:
                    summary_rows.append(
                        (system, measure, language, *_compare(measure, old_table, new_table))
                    )
    query_rows = []
    for system in systems:
        if system not in old_values or system not in new_values:
            continue
        old_system, new_system = old_values[system], new_values[system]
        for query_id in sorted(set(old_system) | set(new_system)):
            old_query, new_query = old_system.get(query_id, {}), new_system.get(query_id, {})
            for measure in _union(
                [m for m in measure_order if m in new_query or m in old_query],
                [*new_query, *old_query],
            ):
                compared = _compare(measure, old_query, new_query)
                if compared[3] != "same":
                    query_rows.append((system, query_id, measure, *compared))
    return ReportDiff(
        _frame(summary_rows, SUMMARY_DIFF_COLUMNS), _frame(query_rows, PER_QUERY_DIFF_COLUMNS)
    )


def _frame(rows: list[tuple[Any, ...]], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({"old": "float64", "new": "float64", "delta": "float64"})


def _compare(
    measure: str, old: Mapping[str, float], new: Mapping[str, float]
) -> tuple[float, float, float, str]:
    if measure not in new:
        return old[measure], math.nan, math.nan, "removed"
    if measure not in old:
        return math.nan, new[measure], math.nan, "added"
    delta = new[measure] - old[measure]
    if abs(delta) <= CHANGE_SLACK:
        return old[measure], new[measure], delta, "same"
    improved = (delta > 0) == higher_is_better(measure)
    return old[measure], new[measure], delta, "better" if improved else "worse"


def _union(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _measures(means: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[str]:
    return _union([], [m for system in means.values() for table in system.values() for m in table])


# --- presenting -------------------------------------------------------------------------------


def _header(report: Mapping[str, Any]) -> dict[str, Any]:
    return {key: report.get(key) for key in _HEADER_KEYS}


def _records(frame: pd.DataFrame, renames: Mapping[str, str]) -> list[dict[str, Any]]:
    records = []
    for row in frame.to_dict(orient="records"):
        records.append(
            {
                renames.get(str(key), str(key)): (
                    None if isinstance(value, float) and np.isnan(value) else value
                )
                for key, value in row.items()
            }
        )
    return records


def diff_to_json(diff: ReportDiff, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Canonical JSON (schema ``evalkit.diff/1``): headers, ``summary``, ``perQuery`` (IDs only;
    NaN written as ``null``)."""
    return canonical_json(
        {
            "schema": DIFF_SCHEMA,
            "old": _header(old),
            "new": _header(new),
            "summary": _records(diff.summary, {}),
            "perQuery": _records(diff.per_query, {"query_id": "queryId"}),
        }
    )


def _cell(column: str, value: object) -> str:
    if not isinstance(value, float):
        return str(value)
    if np.isnan(value):
        return "-"
    if column != "delta":
        return f"{value:.4f}"
    return f"{value:+.4f}" if value != 0 else "0.0000"


def _table(frame: pd.DataFrame) -> list[str]:
    rows = [tuple(str(column) for column in frame.columns)]
    rows += [
        tuple(_cell(str(column), value) for column, value in row.items())
        for row in frame.to_dict(orient="records")
    ]
    return fixed_width_lines(rows)


def _name(value: object) -> str:
    """A header value read from a report, or ``?`` unless it is name-shaped and not secret-like
    (a report file's other content is never printed)."""
    return report_name(value) or "?"


def format_diff(
    diff: ReportDiff, old: Mapping[str, Any], new: Mapping[str, Any], *, changed_only: bool = False
) -> str:
    """A human-readable diff: headers, the summary table, the per-query changes (IDs only)."""
    lines = []
    for role, report in (("old", old), ("new", new)):
        raw_fixture = report.get("fixture")
        fixture = raw_fixture if isinstance(raw_fixture, dict) else {}
        lines.append(
            f"{role}: fixture {_name(fixture.get('id'))} {_name(fixture.get('version'))}, "
            f"evaluationDefinitionHash {_name(report.get('evaluationDefinitionHash'))[:19]}"
        )
    same = all(old.get(key) == new.get(key) for key in _HEADER_KEYS)
    lines.append(
        "same evaluation definition and corpus"
        if same
        else "the evaluation definitions differ (settings, systems, queries or corpus changed)"
    )
    summary = diff.summary
    if changed_only:
        summary = summary[summary["change"] != "same"]
    lines += ["", f"summary ({len(summary)} row(s); language 'all' = overall mean)"]
    if len(summary):
        lines += _table(summary)
    counts = diff.per_query["change"].value_counts()
    lines += [
        "",
        f"per query: {len(diff.per_query)} changed value(s) "
        f"({int(counts.get('better', 0))} better, {int(counts.get('worse', 0))} worse, "
        f"{int(counts.get('added', 0))} added, {int(counts.get('removed', 0))} removed)",
    ]
    if len(diff.per_query):
        lines += _table(diff.per_query)
    return "\n".join(lines) + "\n"
