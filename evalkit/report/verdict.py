"""The verdict a reader needs before merging: gates, significant changes, headline numbers.

:func:`build_verdict` turns an :class:`~evalkit.run.Evaluation`, its gate results
(:func:`evalkit.gates.check_gates`) and the paired comparisons of every system against a base
system (:func:`evalkit.stats.compare`, randomization test, corrected over all rows) into a
frozen :class:`Verdict` of tidy frames. Everything in it is an ID, a measure name or a number.

- **Gates**: counts of passing, failing and not-evaluated checks, every failing check, and
  the headline that says how many checks were evaluated
  (:func:`evalkit.gates.gate_headline`); a gated run that evaluated no check fails
  unless ``allow_none_evaluated``.
- **Significant changes** against ``base``: the comparisons whose corrected p-value is at most
  ``alpha``, labelled ``better`` or ``worse`` in the measure's direction
  (:func:`evalkit.measures.higher_is_better`: for ``NoAnswerFP`` a decrease is better).
- **Headline**: each system's mean of the primary measures with a percentile bootstrap
  interval (:func:`evalkit.stats.summarize_with_ci`, the same numbers as the report's
  ablation table for the same ``n_resamples`` and ``seed``).
- **Not applicable** measures (NaN for every query: the span measures on a fixture without
  spans, :func:`evalkit.run.evaluate`) are never counted: they are not compared, so never a
  significant change, and never a primary measure; :func:`change_matrix` shows them as
  ``n/a``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.gates import (
    GATE_COLUMNS,
    ChangeSettings,
    GateVerdict,
    gate_cannot_fail,
    gate_counts,
    gate_headline,
    gate_outcome,
    gate_verdict,
    load_gates,
    load_report,
)
from evalkit.measures import parse_measure
from evalkit.measures.names import higher_is_better
from evalkit.registry import did_you_mean
from evalkit.safety.output import unshown_reason
from evalkit.stats import SUMMARY_COLUMNS, compare, summarize_with_ci

if TYPE_CHECKING:
    from evalkit.run import Evaluation

__all__ = [
    "CHANGE_COLUMNS",
    "FAILING_GATE_COLUMNS",
    "HEADLINE_COLUMNS",
    "MEAN_COLUMNS",
    "PRIMARY_NAMES",
    "GatedVerdict",
    "Verdict",
    "build_verdict",
    "change_matrix",
    "fixture_gate_verdict",
    "gate_and_judge",
    "primary_measures",
]

PRIMARY_NAMES: Final = ("nDCG", "RR", "R")
"""Measure names of the headline, in this order (:func:`primary_measures`)."""

FAILING_GATE_COLUMNS: Final = tuple(GATE_COLUMNS[: GATE_COLUMNS.index("actual") + 1])
"""Columns of :attr:`Verdict.failing_gates` (their meaning:
:func:`evalkit.gates.check_gates`)."""

CHANGE_COLUMNS: Final = (
    "system",
    "base",
    "measure",
    "direction",
    "base_mean",
    "mean",
    "diff",
    "ci_low",
    "ci_high",
    "p_adjusted",
    "correction",
    "test",
    "n_resamples",
    "seed",
    "n",
)
"""Columns of :attr:`Verdict.changes`: ``direction`` is ``better`` or ``worse`` (the measure's
direction), ``diff = mean - base_mean`` with its bootstrap interval ``ci_low, ci_high``,
``p_adjusted`` the corrected p-value of the paired ``test`` (``correction`` over every system and
measure compared), ``n_resamples`` and ``seed`` of the test and the interval, ``n`` paired
queries."""

HEADLINE_COLUMNS: Final = ("system", "measure", *SUMMARY_COLUMNS, "higher_is_better", "is_base")
"""Columns of :attr:`Verdict.headline`: one row per (system, primary measure), systems in the
evaluation's order; ``n`` queries averaged, ``ci_low, ci_high`` a percentile bootstrap
interval of the mean."""

MEAN_COLUMNS: Final = ("system", "measure", "n", "mean")
"""Columns of :attr:`Verdict.means`: every measure's mean per system (the ablation table's
means, :meth:`evalkit.run.Evaluation.summary`), systems and measures in evaluation
order."""


@dataclass(frozen=True)
class Verdict:
    """The verdict of one evaluation against ``base`` (frames are tidy; IDs only).

    ``gated`` is False when there were no gate results; ``gates_passed``, ``gates_failed`` and
    ``gates_not_evaluated`` count checks (rows of :func:`evalkit.gates.check_gates`);
    ``gates_cannot_fail`` counts the passing checks whose threshold is the measure's worst
    value (their baseline is already as bad as the measure gets).
    ``failing_gates`` has :data:`FAILING_GATE_COLUMNS`, ``changes`` :data:`CHANGE_COLUMNS`
    (sorted by system in evaluation order, ``worse`` before ``better``, then measure order),
    ``headline`` :data:`HEADLINE_COLUMNS`, ``means`` :data:`MEAN_COLUMNS`; ``comparisons`` is
    the whole :func:`evalkit.stats.compare` frame the changes were taken from (every system
    against the base on every measure), for a report to show without computing it again.
    ``confidence`` is that of every interval; ``allow_none_evaluated`` lets a gated run that
    evaluated no check pass (``evalkit gate --allow-none-evaluated``).
    """

    base: str
    systems: tuple[str, ...]
    primary: tuple[str, ...]
    gated: bool
    gates_passed: int
    gates_failed: int
    gates_not_evaluated: int
    gates_cannot_fail: int
    failing_gates: pd.DataFrame
    changes: pd.DataFrame
    headline: pd.DataFrame
    means: pd.DataFrame
    comparisons: pd.DataFrame
    test: str
    correction: str
    alpha: float
    n_resamples: int
    seed: int
    confidence: float = 0.95
    allow_none_evaluated: bool = False

    @property
    def gates_total(self) -> int:
        """Checks that were evaluated (passed + failed)."""
        return self.gates_passed + self.gates_failed

    def _counts(self) -> dict[str, int]:
        return {
            "pass": self.gates_passed,
            "fail": self.gates_failed,
            "not evaluated": self.gates_not_evaluated,
        }

    @property
    def passed(self) -> bool:
        """True when there are no gates, or no evaluated check failed and at least one was
        evaluated (or ``allow_none_evaluated``)."""
        if not self.gated:
            return True
        return gate_outcome(self._counts(), allow_none_evaluated=self.allow_none_evaluated)

    @property
    def gates_headline(self) -> str:
        """``PASS: all 30 evaluated check(s) passed; 30 of 39 checks evaluated, 9 not
        evaluated`` (:func:`evalkit.gates.gate_headline`), or ``no gates``."""
        if not self.gated:
            return "no gates"
        return gate_headline(self._counts(), allow_none_evaluated=self.allow_none_evaluated)

    def worse(self) -> pd.DataFrame:
        """The rows of ``changes`` that are significantly worse than the base."""
        return self.changes[self.changes["direction"] == "worse"].reset_index(drop=True)


@dataclass(frozen=True)
class GatedVerdict:
    """The report's verdict section: ``gate_results`` (a :func:`evalkit.gates.check_gates`
    frame; None when nothing is gated or the baseline could not be compared),
    ``stale_baseline`` (True when the baseline was stale or had no system in common: the
    verdict is then ERROR, as in ``evalkit gate``) and the ablation :class:`Verdict` built
    from them."""

    gate_results: pd.DataFrame | None
    stale_baseline: bool
    verdict: Verdict


def _shown(path: object) -> str:
    """A path as given, or a placeholder when it must not be shown (absolute, a secret)."""
    text = str(path)
    return text if unshown_reason(text) is None and not os.path.isabs(text) else "(not shown)"


def fixture_gate_verdict(
    report: Mapping[str, Any],
    fixture_dir: str | os.PathLike[str],
    *,
    baseline: Mapping[str, Any] | None = None,
    baseline_path: str = "",
    gates_path: str | os.PathLike[str] | None = None,
    per_query: pd.DataFrame | None = None,
    refresh_options: Sequence[str] = (),
    settings: ChangeSettings | None = None,
    with_change: bool = True,
) -> GateVerdict:
    """The report's :func:`evalkit.gates.gate_verdict`: the gates of ``gates_path`` (default:
    ``fixture_dir/gates.yaml`` when it exists), against ``baseline`` (given as
    ``baseline_path``) or else the baseline the gates file names. The same call as
    ``evalkit gate``'s, so the report and the gate agree, on a stale baseline too.
    ``with_change=False``: without the comparison with the baseline (``change`` is None)."""
    from evalkit.safety.inputs import find_input

    if gates_path:
        gates_file, source = find_input(str(gates_path)), _shown(gates_path)
    else:
        gates_file, source = Path(fixture_dir) / "gates.yaml", "the fixture's gates.yaml"
    gates = load_gates(gates_file) if gates_path or gates_file.exists() else None
    if baseline is None and gates is not None and gates.baseline is not None:
        found = gates_file.parent / gates.baseline.path
        baseline, baseline_path = load_report(found), _shown(found)
    return gate_verdict(
        report,
        gates=gates,
        gates_source=source if gates is not None else "",
        baseline=baseline,
        baseline_path=baseline_path or "BASELINE.json",
        fixture=str(fixture_dir),
        refresh_options=refresh_options,
        per_query=per_query,
        settings=settings,
        with_change=with_change,
    )


def gate_and_judge(
    evaluation: Evaluation,
    report: Mapping[str, Any],
    fixture_dir: str | os.PathLike[str],
    *,
    baseline: Mapping[str, Any] | None = None,
    baseline_path: str = "",
    gates_path: str | os.PathLike[str] | None = None,
    base: str,
    n_resamples: int = 2000,
    seed: int = 0,
    gate: GateVerdict | None = None,
) -> GatedVerdict:
    """The gate checks of :func:`fixture_gate_verdict` and the ablation verdict against
    ``base``: what the report notebook's ablation cells show, and what ``evalkit report``
    computes for them while the kernel starts. A stale baseline is not compared (the gate
    verdict is ERROR); the ablation is then built without gate results. ``gate``: that gate
    verdict, when already computed; else it is computed without the comparison with the
    baseline, which neither the checks nor the outcome depend on (the notebook's first screen
    computes that)."""
    gated = gate or fixture_gate_verdict(
        report,
        fixture_dir,
        baseline=baseline,
        baseline_path=baseline_path,
        gates_path=gates_path,
        per_query=evaluation.per_query,
        settings=ChangeSettings(n_resamples=n_resamples, seed=seed),
        with_change=False,
    )
    verdict = build_verdict(
        evaluation, gated.results, base=base, n_resamples=n_resamples, seed=seed
    )
    return GatedVerdict(gated.results, gated.outcome == "ERROR", verdict)


def primary_measures(measures: Sequence[str], k: int) -> tuple[str, ...]:
    """The headline measures among ``measures``: for each name of :data:`PRIMARY_NAMES` the
    measures of that name at cutoff ``k`` (or without a cutoff), in ``measures`` order within
    a name; the first measure when none matches."""
    parsed = [(m, parse_measure(m)) for m in measures]
    chosen = [
        m
        for name in PRIMARY_NAMES
        for m, measure in parsed
        if measure.name == name and measure.cutoff in (k, None)
    ]
    return tuple(chosen) or tuple(measures[:1])


def build_verdict(
    evaluation: Evaluation,
    gate_results: pd.DataFrame | None = None,
    *,
    base: str,
    primary: Sequence[str] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    allow_none_evaluated: bool = False,
) -> Verdict:
    """The :class:`Verdict` of ``evaluation`` against system ``base``.

    ``gate_results`` is a :func:`evalkit.gates.check_gates` frame (None: not gated).
    Comparisons run :func:`evalkit.stats.compare` (two-sided paired randomization test, the
    ``correction`` over every other system and every measure of the evaluation, significant at
    ``alpha``) with ``n_resamples`` and ``seed``; these are the numbers of the report's paired
    comparisons for the same settings. ``primary`` defaults to :func:`primary_measures`.
    Raises :class:`InputError` when ``base`` or a primary measure is not in the evaluation.
    """
    systems = tuple(evaluation.systems)
    if base not in systems:
        raise InputError(
            f"base system {base!r} is not among the evaluated systems "
            f"({', '.join(systems)});{did_you_mean(base, systems)} choose one of them"
        )
    measures = tuple(evaluation.measures)
    chosen = tuple(primary) if primary is not None else primary_measures(measures, evaluation.k)
    per_query = evaluation.per_query
    applicable = _applicable_measures(per_query, measures)
    unknown = [m for m in chosen if m not in applicable]
    if unknown:
        raise InputError(
            f"primary measure(s) {', '.join(unknown)} not in the evaluation or not applicable "
            f"(n/a for every query; measures with values: {', '.join(applicable)}); choose "
            "measures it computed"
        )
    comparisons = compare_with_base(
        per_query,
        base,
        systems,
        measures,
        n_resamples=n_resamples,
        seed=seed,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
    )
    passed, failed, not_evaluated, cannot_fail, failing = _gates(gate_results)
    return Verdict(
        base=base,
        systems=systems,
        primary=chosen,
        gated=gate_results is not None,
        gates_passed=passed,
        gates_failed=failed,
        gates_not_evaluated=not_evaluated,
        gates_cannot_fail=cannot_fail,
        failing_gates=failing,
        changes=_significant(
            comparisons,
            systems=systems,
            measures=measures,
            correction=correction,
            n_resamples=n_resamples,
            seed=seed,
        ),
        comparisons=comparisons,
        headline=_headline(
            per_query,
            base,
            systems,
            chosen,
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
        ),
        means=evaluation.summary()
        .rename(columns={"value": "mean"})[list(MEAN_COLUMNS)]
        .reset_index(drop=True),
        test="randomization",
        correction=correction,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        allow_none_evaluated=allow_none_evaluated,
    )


def _gates(results: pd.DataFrame | None) -> tuple[int, int, int, int, pd.DataFrame]:
    if results is None or results.empty:
        empty = pd.DataFrame({c: pd.Series(dtype=_GATE_DTYPES[c]) for c in FAILING_GATE_COLUMNS})
        return 0, 0, 0, 0, empty
    counts = gate_counts(results)
    failing = results.loc[results["status"] == "fail", list(FAILING_GATE_COLUMNS)]
    return (
        counts["pass"],
        counts["fail"],
        counts["not evaluated"],
        gate_cannot_fail(results),
        failing.reset_index(drop=True),
    )


_GATE_DTYPES: Final = {
    "gate": "object",
    "kind": "object",
    "system": "object",
    "measure": "object",
    "language": "object",
    "reference": "object",
    "op": "object",
    "threshold": "float64",
    "actual": "float64",
}


def compare_with_base(
    per_query: pd.DataFrame,
    base: str,
    systems: Sequence[str],
    measures: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Every other of ``systems`` against ``base`` on the ``measures`` present, by the
    verdict's test (two-sided paired randomization, ``correction`` over all of them):
    :func:`evalkit.stats.compare`'s frame, no rows for a single system. The report's paired
    comparisons (:func:`evalkit.report.tables.paired_comparisons`) are these."""
    selected = per_query[per_query["system"].isin(list(systems))]
    present = _applicable_measures(selected, measures)
    return compare(
        selected,
        base,
        present,
        test="randomization",
        correction=correction,
        n_resamples=n_resamples,
        confidence=confidence,
        alpha=alpha,
        seed=seed,
    )


def _applicable_measures(per_query: pd.DataFrame, measures: Sequence[str]) -> tuple[str, ...]:
    """The ``measures`` with at least one value in ``per_query`` (present and not all NaN)."""
    valued = set(per_query.loc[per_query["value"].notna(), "measure"].unique())
    return tuple(m for m in measures if m in valued)


def _significant(
    result: pd.DataFrame,
    *,
    systems: Sequence[str],
    measures: Sequence[str],
    correction: str,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """The significant rows of a comparison frame, with ``direction`` (``CHANGE_COLUMNS``)."""
    significant = result[result["significant"]].copy()
    if significant.empty:
        return pd.DataFrame({c: pd.Series(dtype=_CHANGE_DTYPES[c]) for c in CHANGE_COLUMNS})
    better = np.where(
        [higher_is_better(str(m)) for m in significant["measure"]],
        significant["diff"] > 0,
        significant["diff"] < 0,
    )
    significant["direction"] = np.where(better, "better", "worse")
    significant["correction"] = correction
    significant["n_resamples"] = n_resamples
    significant["seed"] = seed
    system_rank = {s: i for i, s in enumerate(systems)}
    measure_rank = {m: i for i, m in enumerate(measures)}
    significant = significant.assign(
        _s=significant["system"].map(system_rank),
        _d=(significant["direction"] == "better").astype(int),
        _m=significant["measure"].map(measure_rank),
    ).sort_values(["_s", "_d", "_m"], kind="stable")
    return significant[list(CHANGE_COLUMNS)].astype(_CHANGE_DTYPES).reset_index(drop=True)


_CHANGE_DTYPES: Final = {
    "system": "object",
    "base": "object",
    "measure": "object",
    "direction": "object",
    "base_mean": "float64",
    "mean": "float64",
    "diff": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "p_adjusted": "float64",
    "correction": "object",
    "test": "object",
    "n_resamples": "int64",
    "seed": "int64",
    "n": "int64",
}


def _headline(
    per_query: pd.DataFrame,
    base: str,
    systems: Sequence[str],
    primary: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> pd.DataFrame:
    selected = per_query[
        per_query["system"].isin(list(systems)) & per_query["measure"].isin(list(primary))
    ]
    table = summarize_with_ci(
        selected[["system", "query_id", "measure", "value"]],
        by=("system", "measure"),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    system_rank = {s: i for i, s in enumerate(systems)}
    measure_rank = {m: i for i, m in enumerate(primary)}
    table = (
        table.assign(_s=table["system"].map(system_rank), _m=table["measure"].map(measure_rank))
        .sort_values(["_s", "_m"], kind="stable")
        .drop(columns=["_s", "_m"])
        .reset_index(drop=True)
    )
    table["higher_is_better"] = [higher_is_better(str(m)) for m in table["measure"]]
    table["is_base"] = table["system"] == base
    return table[list(HEADLINE_COLUMNS)].astype({"system": "object", "measure": "object"})


def change_matrix(verdict: Verdict) -> pd.DataFrame:
    """The significant changes at a glance: one row per system other than the base (index
    ``system``), one column per measure compared (evaluation order), cells ``"▲ +0.247"``
    (significantly better), ``"▼ -0.131"`` (significantly worse; the sign is that of ``diff``),
    ``"–"`` (no significant change) or ``"n/a"`` (the measure does not apply: NaN means)."""
    measures = list(dict.fromkeys(verdict.means["measure"]))
    others = [s for s in verdict.systems if s != verdict.base]
    cells = pd.DataFrame("–", index=pd.Index(others, name="system"), columns=measures)
    means = verdict.means.set_index(["system", "measure"])["mean"]
    for system in others:
        for measure in measures:
            base_mean = means.get((verdict.base, measure), np.nan)
            if np.isnan(means.get((system, measure), np.nan)) or np.isnan(base_mean):
                cells.at[system, measure] = "n/a"
    for row in verdict.changes.itertuples(index=False):
        mark = "▲" if row.direction == "better" else "▼"
        diff: Any = row.diff
        cells.at[str(row.system), str(row.measure)] = f"{mark} {float(diff):+.3f}"
    return cells
