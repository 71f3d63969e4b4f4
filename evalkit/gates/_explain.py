"""Why a gate run came out as it did: the worst queries of each failing check, and the changes
against the baseline per language.

Rules:

- :func:`worst_queries`: for a failing absolute check, the queries (of its language) with the
  worst values of its measure; for a relative check, those where the system is furthest worse
  than its reference; for a baseline check, those that got most worse than in the baseline
  (queries that did not get worse are never listed); for a new-failures check, its query IDs.
  "Worse" follows the measure's direction; ties are broken by query ID, so the list is
  deterministic. IDs only.
- :func:`language_changes`: for each system a baseline gate compared, the change of each
  measure's mean overall and in each language, each classed ``worse``, ``better`` or ``same``
  by the gate's own tolerance for that measure (a change within the allowance is ``same``).
  A language whose class differs from the overall one on some measure shows that a change
  hides or concentrates somewhere (a regression in one language only, diluted in the overall
  mean); then the system's overall row and every language's row are kept, for the measures
  where some language differs. Nothing here is fitted to a fixture: the classes are the gate's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pandas as pd

from evalkit.gates._check import NEW_FAILURES_MEASURE
from evalkit.gates._spec import BaselineGate
from evalkit.measures import higher_is_better
from evalkit.run.report_json import (
    ALL_LANGUAGES,
    report_means,
    report_measure_order,
    report_per_query,
)

__all__ = ["LANGUAGE_CHANGE_COLUMNS", "language_changes", "worst_queries"]

LANGUAGE_CHANGE_COLUMNS: Final = ("system", "language", "measure", "baseline", "current", "change")
"""Columns of :func:`language_changes`: ``change`` is ``worse``, ``better`` or ``same``."""


def _values(per_query: pd.DataFrame, system: str, measure: str, language: str) -> dict[str, float]:
    rows = per_query[(per_query["system"] == system) & (per_query["measure"] == measure)]
    if language != ALL_LANGUAGES:
        rows = rows[rows["language"] == language]
    return dict(zip(rows["query_id"].astype(str), rows["value"].astype(float), strict=True))


def _ranked(losses: Mapping[str, float], n: int) -> list[str]:
    """IDs of the ``n`` largest positive losses, largest first, ties by ID."""
    ordered = sorted((-loss, query) for query, loss in losses.items() if loss > 0)
    return [query for _, query in ordered[:n]]


def worst_queries(
    results: pd.DataFrame,
    per_query: pd.DataFrame,
    baseline: Mapping[str, Any] | None = None,
    *,
    n: int = 3,
) -> list[list[str]]:
    """For each row of ``results`` (a :func:`evalkit.gates.check_gates` frame), the IDs
    of at most ``n`` worst queries (rules in the module docstring; empty for a row that did
    not fail). ``per_query`` has columns ``system, query_id, measure, value, language`` (the
    evaluation's :attr:`~evalkit.run.Evaluation.per_query`); ``baseline`` is the
    baseline dict the baseline checks compared with."""
    previous = report_per_query(baseline, "baseline") if baseline is not None else {}
    worst: list[list[str]] = []
    for row in results.itertuples(index=False):
        if row.status != "fail":
            worst.append([])
            continue
        if row.kind == "new-failures" or row.measure == NEW_FAILURES_MEASURE:
            worst.append([q for q in str(row.query_ids).split(",") if q][:n])
            continue
        system, measure, language = str(row.system), str(row.measure), str(row.language)
        sign = 1.0 if higher_is_better(measure) else -1.0
        values = _values(per_query, system, measure, language)
        if row.kind == "relative":
            reference = _values(per_query, str(row.reference), measure, language)
            losses = {q: sign * (reference[q] - v) for q, v in values.items() if q in reference}
        elif row.kind == "baseline":
            old = previous.get(system, {})
            losses = {
                q: sign * (old[q][measure] - v)
                for q, v in values.items()
                if measure in old.get(q, {})
            }
        else:  # absolute: the worst values, whatever they are
            ordered = sorted((-sign * v, q) for q, v in values.items())
            worst.append([q for _, q in ordered[:n]])
            continue
        worst.append(_ranked(losses, n))
    return worst


def _change(measure: str, old: float, new: float, allowance: float) -> str:
    gain = (new - old) * (1.0 if higher_is_better(measure) else -1.0)
    if gain < -allowance:
        return "worse"
    if gain > allowance:
        return "better"
    return "same"


def language_changes(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    spec: BaselineGate,
    systems: list[str],
) -> pd.DataFrame:
    """Per-language changes of ``systems`` against ``baseline`` where a language's change
    differs from the overall one (rules in the module docstring): columns
    :data:`LANGUAGE_CHANGE_COLUMNS`, per system the overall row (language ``all``) then each
    differing language (sorted), measures in the evaluation's order."""
    current, previous = report_means(report, "report"), report_means(baseline, "baseline")
    order = report_measure_order(report)
    rows: list[tuple[str, str, str, float, float, str]] = []
    for system in systems:
        now, then = current.get(system, {}), previous.get(system, {})
        if ALL_LANGUAGES not in now or ALL_LANGUAGES not in then:
            continue
        measures = [m for m in order if m in now[ALL_LANGUAGES] and m in then[ALL_LANGUAGES]]
        if spec.measures != "all":
            measures = [m for m in measures if m in spec.measures]
        languages = sorted((set(now) & set(then)) - {ALL_LANGUAGES})

        def change(
            language: str,
            measure: str,
            now: Mapping[str, Mapping[str, float]] = now,
            then: Mapping[str, Mapping[str, float]] = then,
        ) -> str | None:
            old = then.get(language, {}).get(measure)
            new = now.get(language, {}).get(measure)
            if old is None or new is None:
                return None
            allowance = spec.tolerance_for(measure).allowance(old)
            return _change(measure, old, new, allowance)

        differing = {
            (language, measure)
            for language in languages
            for measure in measures
            if change(language, measure) not in (None, change(ALL_LANGUAGES, measure))
        }
        # every language of the system, so the reader sees where the change is, not only
        # where it is not
        kept_measures = [m for m in measures if any(d[1] == m for d in differing)]
        for language in [ALL_LANGUAGES, *languages] if differing else []:
            for measure in kept_measures:
                old, new = then[language].get(measure), now[language].get(measure)
                if old is None or new is None:
                    continue
                rows.append(
                    (system, language, measure, old, new, change(language, measure) or "same")
                )
    return pd.DataFrame(rows, columns=list(LANGUAGE_CHANGE_COLUMNS)).astype(
        {"baseline": "float64", "current": "float64"}
    )
