"""One gate run, one verdict: :func:`gate_verdict` checks the gates and compares with the baseline.

``evalkit gate``, ``evalkit report``, the Markdown, the JUnit and the Python API all take their
verdict from :func:`gate_verdict`, so they never disagree:

- the gates are the given :class:`~evalkit.gates.Gates` (``gates_source`` names their file);
  with no gates but a baseline, the default baseline gate (``BaselineGate()``: every system,
  the default tolerance, per language);
- the baseline is the given one (its path as the user gave it in ``baseline_path``);
- a **stale** baseline (made for another evaluation definition) is an ``ERROR`` verdict with
  the reasons and the refresh advice, and no change; ``evalkit gate`` exits 2 on it and the
  report shows the same reasons;
- otherwise ``PASS``/``FAIL`` with "N of M checks evaluated" (:func:`gate_headline`) and the
  :class:`~evalkit.gates.Change` against the baseline (:func:`compare_with_baseline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import pandas as pd

from evalkit.errors import StaleBaselineError
from evalkit.gates._baseline import (
    baseline_systems,
    changed_definitions,
    check_baseline_fresh,
    refresh_advice,
    shown_baseline_path,
)
from evalkit.gates._change import Change, ChangeSettings, compare_with_baseline
from evalkit.gates._check import (
    check_gates,
    gate_cannot_fail,
    gate_counts,
    gate_headline,
    gate_outcome,
    gate_systems,
)
from evalkit.gates._explain import worst_queries
from evalkit.gates._spec import GATES_SCHEMA, BaselineGate, Gates

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

__all__ = ["DEFAULT_GATE_SOURCE", "GateVerdict", "gate_verdict"]

DEFAULT_GATE_SOURCE: Final = "default baseline gate"
"""``gates_source`` of a verdict whose gates were not given: the default baseline gate."""


@dataclass(frozen=True)
class GateVerdict:
    """The verdict of one gate run (module docs); IDs, names, hashes and numbers only.

    ``outcome`` is ``PASS``, ``FAIL``, ``ERROR`` (a stale baseline: ``stale``
    holds the reasons) or ``NONE`` (no gates and no baseline); ``headline`` the
    ``PASS: ...; N of M checks evaluated`` line; ``results`` the
    :func:`~evalkit.gates.check_gates` frame (None on ERROR/NONE) with ``worst`` (the worst
    query IDs of each row, empty for a row that did not fail); ``change`` the comparison with
    the baseline (None without one or on ERROR); ``definitions`` ``{system: (old, new)}``
    hashes of systems changed since the baseline; ``left_out`` gated systems this run did not
    evaluate; ``advice`` the refresh command (on PASS with changed definitions, and on ERROR);
    ``baseline_path`` as given; ``gates_source`` the gates file or
    :data:`DEFAULT_GATE_SOURCE`."""

    outcome: Literal["PASS", "FAIL", "ERROR", "NONE"]
    headline: str
    results: pd.DataFrame | None
    worst: tuple[tuple[str, ...], ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    stale: tuple[str, ...] = ()
    change: Change | None = None
    definitions: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()
    advice: str = ""
    baseline_path: str = ""
    gates_source: str = ""
    allow_none_evaluated: bool = False

    @classmethod
    def from_checks(
        cls, results: pd.DataFrame, *, allow_none_evaluated: bool = False
    ) -> GateVerdict:
        """The verdict of :func:`~evalkit.gates.check_gates` ``results`` alone (no baseline
        change, no worst queries): PASS or FAIL with its headline."""
        counts = gate_counts(results)
        passed = gate_outcome(counts, allow_none_evaluated=allow_none_evaluated)
        return cls(
            "PASS" if passed else "FAIL",
            gate_headline(counts, allow_none_evaluated=allow_none_evaluated),
            results,
            worst=tuple(() for _ in range(len(results))),
            counts=counts,
            allow_none_evaluated=allow_none_evaluated,
        )

    def abstention_lines(self) -> list[str]:
        """``system: abstention AUC 0.912 -> 0.634, -0.278 [95% -0.410, -0.150]`` for each
        compared system that an abstention gate names (:meth:`Change.auc_sentence`, the AUC
        against the baseline with its paired interval); empty without a change or such a
        gate."""
        if self.change is None or self.results is None or self.results.empty:
            return []
        gated = set(self.results.loc[self.results["kind"] == "abstention", "system"])
        lines = []
        for system in self.change.compared:
            sentence = self.change.auc_sentence(system) if system in gated else ""
            if sentence:
                lines.append(f"{system}: {sentence}")
        return lines

    @property
    def passed(self) -> bool:
        """True on PASS (and NONE: nothing was gated)."""
        return self.outcome in ("PASS", "NONE")

    @property
    def cannot_fail(self) -> int:
        """Passing checks whose threshold is the measure's worst value."""
        if self.results is None or self.results.empty:
            return 0
        return gate_cannot_fail(self.results)

    def failing(self) -> pd.DataFrame:
        """The failing checks, with a ``worst`` column (comma-separated query IDs)."""
        if self.results is None:
            return pd.DataFrame()
        rows = self.results.assign(worst=[", ".join(w) for w in self.worst])
        return rows[rows["status"] == "fail"].reset_index(drop=True)

    def failed_text(self, *, name: Callable[[str], str] = str, limit: int = 3) -> str:
        """``failed: my-system RR@10 (all, zh; worst q-zh-001, q-zh-018), ...``: the failing
        checks in a line, one entry per system and measure with its failing languages (at most
        ``limit`` entries), ``""`` when none failed. ``name`` formats measure names."""
        failing = self.failing()
        if failing.empty:
            return ""
        groups: dict[tuple[str, str], tuple[list[str], str]] = {}
        records: list[Any] = list(failing.itertuples(index=False))
        for row in records:
            languages, worst = groups.setdefault((str(row.system), str(row.measure)), ([], ""))
            languages.append(str(row.language))
            if row.worst and not worst:
                groups[(str(row.system), str(row.measure))] = (languages, str(row.worst))
        parts = [
            f"{system} {name(measure)} ({', '.join(languages)}"
            + (f"; worst {worst})" if worst else ")")
            for (system, measure), (languages, worst) in list(groups.items())[:limit]
        ]
        if len(groups) > limit:
            parts.append(f"{len(groups) - limit} more")
        return "failed: " + ", ".join(parts)

    def shown_changes(self, limit: int = 6) -> pd.DataFrame:
        """The overall change rows a summary shows (at most ``limit``): the significant ones,
        worse first; else those of the measures with a failing check; else each compared
        system's first two measures. Empty without a change."""
        if self.change is None:
            return pd.DataFrame()
        rows = self.change.significant()
        if rows.empty:
            overall = self.change.overall()
            failing = self.failing()
            if len(failing):
                keys = set(zip(failing["system"], failing["measure"], strict=True))
                pairs = zip(overall["system"], overall["measure"], strict=True)
                rows = overall[[pair in keys for pair in pairs]]
            if rows.empty:
                rows = overall.groupby("system", sort=False).head(2)
        return rows.head(limit).reset_index(drop=True)

    def to_record(self) -> dict[str, Any]:
        """A JSON-able summary (outcome, headline, counts, stale reasons, changed rows)."""
        changed: list[dict[str, Any]] = []
        if self.change is not None:
            for row in self.change.significant().itertuples(index=False):
                changed.append(
                    {
                        "system": str(row.system),
                        "measure": str(row.measure),
                        "direction": str(row.direction),
                        "diff": float(row.diff),  # type: ignore[arg-type]
                    }
                )
        return {
            "outcome": self.outcome,
            "headline": self.headline,
            "counts": dict(self.counts),
            "stale": list(self.stale),
            "changed": changed,
            "gates": self.gates_source,
            "baseline": self.baseline_path,
        }


def gate_verdict(
    report: Mapping[str, Any],
    *,
    gates: Gates | None = None,
    gates_source: str = "",
    baseline: Mapping[str, Any] | None = None,
    baseline_path: str = "BASELINE.json",
    fixture: str = "FIXTURE",
    refresh_options: Sequence[str] = (),
    known_systems: Collection[str] | None = None,
    per_query: pd.DataFrame | None = None,
    query_languages: Mapping[str, str] | None = None,
    allow_none_evaluated: bool = False,
    settings: ChangeSettings | None = None,
    with_change: bool = True,
) -> GateVerdict:
    """The one verdict of ``report`` against ``gates`` and ``baseline`` (module docs).

    ``with_change=False`` leaves ``change`` out (None): for a caller that needs the checks and
    the outcome only, which do not depend on it (the comparison with the baseline is the
    verdict's costly part: a paired comparison per system and a permutation test per
    language row).

    ``fixture``, ``baseline_path`` and ``refresh_options`` fill in the refresh advice;
    ``per_query`` (``system, query_id, measure, value, language``, the evaluation's) gives the
    worst queries of failing absolute and relative checks; ``query_languages`` the language
    rows of the change (default: from ``per_query``). A baseline given with gates that have
    no baseline section is compared by the default baseline gate (``evalkit gate`` refuses
    that combination before calling this). Raises what :func:`~evalkit.gates.check_gates`
    raises for bad gates (unknown systems or measures).
    """
    if query_languages is None and per_query is not None and "language" in per_query:
        pairs = per_query[["query_id", "language"]].drop_duplicates("query_id")
        query_languages = dict(
            zip(pairs["query_id"].astype(str), pairs["language"].astype(str), strict=True)
        )
    # an absolute path, an endpoint or a secret is never shown (the Markdown is published)
    shown_path = shown_baseline_path(baseline_path) if baseline is not None else ""
    if gates_source and shown_baseline_path(gates_source) != gates_source:
        gates_source = "GATES.yaml"
    if gates is None:
        if baseline is None:
            return GateVerdict("NONE", "no gates and no baseline", None)
        gates = Gates.model_validate({"schema": GATES_SCHEMA, "baseline": BaselineGate()})
        gates_source = DEFAULT_GATE_SOURCE
    elif baseline is not None and gates.baseline is None:
        # a baseline given with gates that have none: compared by the default baseline gate
        gates = gates.model_copy(update={"baseline": BaselineGate()})
        gates_source = f"{gates_source or 'gates'} + {DEFAULT_GATE_SOURCE}"
    advice = refresh_advice(fixture, baseline_path, refresh_options)
    if baseline is not None:
        reasons = _stale_reasons(report, baseline, fixture, baseline_path, refresh_options)
        if reasons:
            return GateVerdict(
                "ERROR",
                f"ERROR: {reasons[0]}",
                None,
                stale=reasons,
                advice=advice,
                baseline_path=shown_path,
                gates_source=gates_source,
            )
    results = check_gates(report, gates, baseline, known_systems=known_systems)
    compared: list[str] = []
    if baseline is not None and gates.baseline is not None:
        compared = baseline_systems(report, baseline, gates.baseline)
    definitions = changed_definitions(report, baseline, compared) if baseline else {}
    gated = gate_systems(gates)
    if baseline is not None and gates.baseline is not None and gates.baseline.systems == "all":
        gated += [str(s) for s in baseline.get("systems") or [] if s not in gated]
    evaluated = [str(s) for s in report.get("systems") or []]
    left_out = tuple(s for s in gated if s not in evaluated)
    counts = gate_counts(results)
    passed = gate_outcome(counts, allow_none_evaluated=allow_none_evaluated)
    worst: list[list[str]] = (
        worst_queries(results, per_query, baseline)
        if per_query is not None
        else [[] for _ in range(len(results))]
    )
    change = (
        compare_with_baseline(report, baseline, query_languages=query_languages, settings=settings)
        if baseline is not None and with_change
        else None
    )
    return GateVerdict(
        "PASS" if passed else "FAIL",
        gate_headline(counts, allow_none_evaluated=allow_none_evaluated),
        results,
        worst=tuple(tuple(w) for w in worst),
        counts=counts,
        change=change,
        definitions=definitions,
        left_out=left_out,
        advice=(
            f"the gates pass and {', '.join(definitions)} changed since the baseline: to make "
            f"this run the new baseline, {advice}"
            if passed and definitions
            else ""
        ),
        allow_none_evaluated=allow_none_evaluated,
        baseline_path=shown_path,
        gates_source=gates_source,
    )


def _stale_reasons(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    fixture: str,
    baseline_path: str,
    options: Sequence[str],
) -> tuple[str, ...]:
    """Why ``baseline`` cannot be compared with ``report`` (stale: made for another evaluation
    definition). A baseline with no system in common is compared: nothing is, and the gate
    says that no check was evaluated."""
    try:
        check_baseline_fresh(
            report, baseline, fixture=fixture, baseline_path=baseline_path, options=options
        )
    except StaleBaselineError as error:
        return (str(error),)
    return ()
