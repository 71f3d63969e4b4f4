"""Checking a report against its gates (:func:`check_gates`), and presenting the results.

The gates come from ``gates.yaml`` (``_spec``: the three kinds of gate, their
tolerances, the measures' ranges); a baseline gate compares with a committed baseline
(``_baseline``, which also decides when one is stale).

Rules of :func:`check_gates`:

- "Worse" follows the measure's direction from the measures registry
  (:func:`evalkit.measures.higher_is_better`): higher is better except for the measures in
  ``LOWER_IS_BETTER`` (``NoAnswerFP``, ``NoResult``). For a higher-is-better measure the
  threshold is ``reference - max_drop`` (or ``baseline - allowance``) and the gate passes when
  ``actual >= threshold``; for a lower-is-better one it is ``reference + max_drop`` and
  ``actual <= threshold``. Comparisons allow ``COMPARISON_SLACK`` for float rounding.
- A baseline or relative threshold beyond the measure's worst value (:func:`measure_range`) is
  clamped to it; a check whose threshold is the worst value cannot fail (the baseline is
  already as bad as the measure gets) and says so in its ``note``.
- ``language == "all"`` means the overall mean (``summary``), any other value the mean within
  that language (``summaryByLanguage``).
- A new failure is a (query ID, failure kind) pair of a system in the report's ``failures`` that
  the baseline does not have; the gate counts the distinct query IDs (``query_ids`` lists them).
- A stale baseline (:func:`evalkit.gates.check_baseline_fresh`: another fixture
  version, corpus, k or measures) is a :class:`~evalkit.errors.StaleBaselineError`, never a
  silent comparison. A system whose definition changed since the baseline is compared
  (:func:`evalkit.gates.changed_definitions` names it).
- **Unknown systems.** A gate naming a system that is neither in the report nor a known system
  (``known_systems``: by default the registered systems, plus every system of the baseline)
  is an :class:`~evalkit.errors.InputError` naming it with a did-you-mean: a typo or a
  renamed system would otherwise leave its gates silently unchecked.
- **Not evaluated.** A gate naming a known system that is not in the report (left out by
  ``--systems``), or a measure whose cutoff is above the report's k, is a row with status
  ``not evaluated``: neither passed nor failed (``passed`` is NA), counted separately. So any
  subset of systems and any k can be gated; :func:`gate_headline` says how many checks were
  evaluated, and :func:`gate_outcome` fails a run that evaluated none. A measure that does
  not apply (listed in the report's ``settings.measures`` but without a mean for that system
  and language: a span measure on a fixture without spans, see
  :mod:`evalkit.run.report_json`) is ``not evaluated`` too, in every kind of gate, on either
  side of a baseline gate. A measure the report lacks otherwise (at a cutoff within k), or a
  language a system has no results in, is an :class:`~evalkit.errors.InputError`.
- Rows come in order: absolute gates (file order), relative gates (file order), then per
  baseline system: a ``not evaluated`` row for each measure and language the report has and
  the baseline lacks, every measure overall, then per language (sorted), then its new-failure
  row (a baseline system not in the report: one ``not evaluated`` row).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any, Final

import pandas as pd

from evalkit.errors import InputError
from evalkit.gates._baseline import check_baseline_fresh
from evalkit.gates._spec import (
    AbsoluteGate,
    AbstentionGate,
    BaselineGate,
    Gates,
    RelativeGate,
    abstention_gate_ids,
)
from evalkit.measures import higher_is_better, parse_measure
from evalkit.measures.names import measure_range
from evalkit.registry import did_you_mean
from evalkit.results import (
    ALL_LANGUAGES,
    report_confidence,
    report_list,
    report_means,
    report_measure_order,
    report_per_query,
    report_query_languages,
)
from evalkit.safety.names import safe_id

__all__ = [
    "COMPARISON_SLACK",
    "FAIL",
    "GATE_COLUMNS",
    "NEW_FAILURES_MEASURE",
    "NOT_EVALUATED",
    "PASS",
    "GateCheck",
    "check_digits",
    "check_gates",
    "fixed_width_lines",
    "format_gate_table",
    "gate_cannot_fail",
    "gate_counts",
    "gate_headline",
    "gate_outcome",
    "gate_systems",
    "gates_failed",
    "gates_to_report",
    "threshold_text",
]

COMPARISON_SLACK: Final = 1e-9
NEW_FAILURES_MEASURE: Final = "new-failures"
PASS: Final = "pass"
FAIL: Final = "fail"
NOT_EVALUATED: Final = "not evaluated"


@dataclass(frozen=True)
class CheckSubject:
    """What one check is about: the first six columns of :data:`GATE_COLUMNS`."""

    gate: str
    kind: str
    system: str
    measure: str
    language: str
    reference: str


@dataclass(frozen=True)
class GateCheck(CheckSubject):
    """One check of a gate: a row of :func:`check_gates`' frame (its columns, in order:
    :data:`GATE_COLUMNS`, the :class:`CheckSubject`'s first). Built by :meth:`checked` or
    :meth:`not_evaluated`, whose keyword arguments beyond their own are the subject's fields.

    ``kind`` is ``absolute``, ``relative``, ``baseline`` or ``new-failures``; ``language`` is
    ``"all"`` for the overall mean; ``reference`` is ``""``, the reference system or
    ``"baseline"``; ``op`` is ``">="``, ``"<="`` or ``""`` when not evaluated; ``passed`` is
    None (NA in the frame) when not evaluated, when ``threshold`` and ``actual`` are NaN;
    ``query_ids`` lists new failures, comma-separated; ``status`` is :data:`PASS`,
    :data:`FAIL` or :data:`NOT_EVALUATED`; ``note`` says why a check was not evaluated, or why
    it cannot fail (its threshold is the measure's worst value), else ``""``.
    """

    op: str
    threshold: float
    actual: float
    passed: bool | None
    query_ids: str
    status: str
    note: str

    @classmethod
    def checked(
        cls,
        *,
        op: str,
        threshold: float,
        actual: float,
        query_ids: Sequence[str] = (),
        **subject: str,
    ) -> GateCheck:
        """An evaluated check of ``subject``: ``actual`` against ``threshold`` by ``op``, with
        :data:`COMPARISON_SLACK` for float rounding."""
        if op == ">=":
            passed = actual >= threshold - COMPARISON_SLACK
        else:
            passed = actual <= threshold + COMPARISON_SLACK
        relative = subject["kind"] in ("relative", "baseline")
        return cls(
            **subject,
            op=op,
            threshold=float(threshold),
            actual=float(actual),
            passed=bool(passed),
            query_ids=",".join(query_ids),
            status=PASS if passed else FAIL,
            note=_cannot_fail(subject["measure"], threshold) if relative else "",
        )

    @classmethod
    def not_evaluated(cls, *, note: str, **subject: str) -> GateCheck:
        """A check of ``subject`` the report cannot answer: neither passed nor failed; ``note``
        says why."""
        return cls(
            **subject,
            op="",
            threshold=math.nan,
            actual=math.nan,
            passed=None,
            query_ids="",
            status=NOT_EVALUATED,
            note=note,
        )


GATE_COLUMNS: Final[list[str]] = [f.name for f in fields(GateCheck)]
"""The columns of :func:`check_gates`' frame: :class:`GateCheck`'s fields, in order."""
_SUBJECT_COLUMNS: Final = tuple(f.name for f in fields(CheckSubject))


def _worst_value(measure: str) -> float:
    low, high = measure_range(measure)
    return low if higher_is_better(measure) else high


# --- checking ---------------------------------------------------------------------------------


class _Means:
    """Lookup of a report's means (``summary`` and ``summaryByLanguage``), for gates."""

    def __init__(self, report: Mapping[str, Any], role: str) -> None:
        self.role = role
        self.means = report_means(report, role)  # checks the schema and every mean
        self.systems = report_list(report, "systems", role)
        self.measure_order = report_measure_order(report)

    def measures(self, system: str) -> list[str]:
        """The system's measures, in the evaluation's measure order (``settings.measures``)."""
        known = list(self.means.get(system, {}).get(ALL_LANGUAGES, {}))
        return [m for m in self.measure_order if m in known] + sorted(
            m for m in known if m not in self.measure_order
        )

    def languages(self, system: str) -> list[str]:
        return sorted(k for k in self.means.get(system, {}) if k != ALL_LANGUAGES)

    def not_applicable(self, system: str, measure: str, language: str) -> bool:
        """True when ``measure`` is an evaluated measure (``settings.measures``) without a mean
        for ``system`` in ``language`` (the report leaves out what does not apply)."""
        tables = self.means.get(system, {})
        if system not in self.systems or (language != ALL_LANGUAGES and language not in tables):
            return False
        return measure in self.measure_order and measure not in tables.get(language, {})

    def get(self, system: str, measure: str, language: str, gate: str) -> float:
        if system not in self.systems:
            known = [safe_id(s) or "(a name not shown)" for s in self.systems]
            shown_system = repr(system) if safe_id(system) else "(not shown)"
            shown_gate = repr(gate) if safe_id(gate) else "(not shown)"
            hint = did_you_mean(system, known) if safe_id(system) else ""
            raise InputError(
                f"gate {shown_gate}: system {shown_system} is not in the "
                f"{self.role} (systems: {', '.join(known) or 'none'});{hint} evaluate that "
                "system or fix the gate"
            )
        tables = self.means.get(system, {})
        if language != ALL_LANGUAGES and language not in tables:
            raise InputError(
                f"gate {gate!r}: language {language!r} has no results for system {system!r} "
                f"in the {self.role} (languages: "
                f"{', '.join(self.languages(system)) or 'none'}); fix the gate's language"
            )
        table = tables.get(language, {})
        if measure not in table:
            known = list(table)
            raise InputError(
                f"gate {gate!r}: measure {measure!r} was not computed for system {system!r} in "
                f"the {self.role} (measures: {', '.join(known) or 'none'});"
                f"{did_you_mean(measure, known)} fix the gate or evaluate that measure"
            )
        return table[measure]


def _worse_bound(measure: str, value: float, slack: float) -> tuple[str, float]:
    """(op, threshold) for "at most ``slack`` worse than ``value``", clamped to the measure's
    worst value (:func:`measure_range`)."""
    worst = _worst_value(measure)
    if higher_is_better(measure):
        return ">=", max(value - slack, worst)
    return "<=", min(value + slack, worst)


def _cannot_fail(measure: str, threshold: float) -> str:
    """The note of a check whose threshold is the measure's worst value, else ""."""
    worst = _worst_value(measure)
    if math.isinf(worst) or not math.isclose(threshold, worst, rel_tol=0.0, abs_tol=1e-12):
        return ""
    return f"cannot fail: the threshold is the worst value of {measure} ({worst:g})"


def _report_k(report: Mapping[str, Any]) -> int | None:
    settings = report.get("settings")
    k = settings.get("k") if isinstance(settings, Mapping) else None
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _why_not_evaluated(
    current: _Means, k: int | None, systems: Sequence[str], measure: str
) -> str | None:
    """Why a gate on ``systems`` and ``measure`` cannot be checked on this report, or None."""
    known = [str(s) for s in current.systems]
    missing = [s for s in systems if s not in known]
    if missing:
        hint = "".join(did_you_mean(s, known) for s in missing)
        return f"system {', '.join(missing)} not in the evaluation ({', '.join(known)}).{hint}"
    cutoff = parse_measure(measure).cutoff if measure not in ("", NEW_FAILURES_MEASURE) else None
    if k is not None and cutoff is not None and cutoff > k:
        return f"cutoff {cutoff} of {measure} is above the evaluation's k={k}"
    return None


def _why_not_applicable(
    means: _Means, systems: Sequence[str], measure: str, language: str
) -> str | None:
    """Why ``measure`` has no value to gate for one of ``systems`` in ``means``, or None."""
    lacking = [s for s in systems if means.not_applicable(s, measure, language)]
    if not lacking:
        return None
    where = "" if language == ALL_LANGUAGES else f" in language {language}"
    return (
        f"{measure} is n/a for {', '.join(lacking)}{where} in the {means.role}: it applies "
        "to no query (span measures need answer spans in the judgments)"
    )


def gate_systems(gates: Gates) -> list[str]:
    """Every system the absolute, relative and (listed) baseline gates name, in file order."""
    named: list[str] = []
    for gate in (*gates.absolute, *gates.relative):
        named += [gate.system, *([gate.reference] if isinstance(gate, RelativeGate) else [])]
    named += [gate.system for gate in gates.abstention]
    if gates.baseline is not None and gates.baseline.systems != "all":
        named += list(gates.baseline.systems)
    return list(dict.fromkeys(named))


def _hint(did_you_mean: str) -> str:
    """`` (did you mean 'x'?)`` of a :func:`did_you_mean` text, or ""."""
    text = did_you_mean.strip()
    return f" ({text[0].lower()}{text[1:]})" if text else ""


def _check_known(
    report: Mapping[str, Any],
    gates: Gates,
    baseline: Mapping[str, Any] | None,
    known_systems: Collection[str] | None,
) -> None:
    """InputError naming each gated system that is neither in the report nor known (the
    registered systems, or ``known_systems``, and the baseline's systems), with a
    did-you-mean among those."""
    if known_systems is None:
        from evalkit.systems.reference import SYSTEMS

        known_systems = SYSTEMS.names()
    evaluated = [str(s) for s in report_list(report, "systems", "report")]
    in_baseline = [] if baseline is None else [str(s) for s in baseline.get("systems") or []]
    choices = list(dict.fromkeys([*evaluated, *in_baseline, *known_systems]))
    unknown = [s for s in gate_systems(gates) if s not in choices]
    if not unknown:
        return
    named = "; ".join(
        f"{s!r}{_hint(did_you_mean(s, choices))}" if safe_id(s) else "(a name not shown)"
        for s in unknown
    )
    raise InputError(
        f"the gates name system(s) that are neither evaluated nor known: {named} (evaluated: "
        f"{', '.join(safe_id(s) or '(not shown)' for s in evaluated) or 'none'}); fix the "
        "gate's system name, or evaluate that system with --systems"
    )


def check_gates(
    report: Mapping[str, Any],
    gates: Gates,
    baseline: Mapping[str, Any] | None = None,
    *,
    known_systems: Collection[str] | None = None,
) -> pd.DataFrame:
    """Check every gate against ``report`` (and ``baseline``); one row per check.

    Columns ``GATE_COLUMNS``: ``gate, kind (absolute|relative|baseline|new-failures), system,
    measure, language ("all" = overall), reference ("" | reference system | "baseline"), op
    (">=" | "<=" | "" when not evaluated), threshold, actual (NaN when not evaluated), passed
    (nullable boolean: NA when not evaluated), query_ids`` (comma-separated, new failures
    only), ``status`` (pass | fail | not evaluated), ``note`` (why not evaluated, or why a
    check cannot fail: its threshold is the measure's worst value; else "").
    Raises :class:`InputError` for unknown systems (``known_systems``, module docstring),
    measures or languages or a missing baseline, and :class:`StaleBaselineError` for a stale
    one. Inputs are not modified.
    """
    current = _Means(report, "report")
    _check_known(report, gates, baseline, known_systems)
    k = _report_k(report)
    rows: list[GateCheck] = []
    measure_gates: tuple[AbsoluteGate | RelativeGate, ...] = (*gates.absolute, *gates.relative)
    for gate, gate_id in zip(measure_gates, gates.gate_ids(), strict=True):
        if isinstance(gate, AbsoluteGate):
            kind, reference, involved = "absolute", "", [gate.system]
        else:
            kind, reference, involved = "relative", gate.reference, [gate.system, gate.reference]
        where = {
            "gate": gate_id,
            "kind": kind,
            "system": gate.system,
            "measure": gate.measure,
            "language": gate.language,
            "reference": reference,
        }
        why = _why_not_evaluated(current, k, involved, gate.measure) or _why_not_applicable(
            current, involved, gate.measure, gate.language
        )
        if why is not None:
            rows.append(GateCheck.not_evaluated(**where, note=why))
            continue
        actual = current.get(gate.system, gate.measure, gate.language, gate_id)
        if isinstance(gate, AbsoluteGate):
            op, threshold = gate.bound()
        else:
            reference_mean = current.get(gate.reference, gate.measure, gate.language, gate_id)
            op, threshold = _worse_bound(gate.measure, reference_mean, gate.max_drop)
        rows.append(GateCheck.checked(**where, op=op, threshold=threshold, actual=actual))
    rows += _abstention_rows(report, gates, baseline)
    if gates.baseline is not None:
        if baseline is None:
            raise InputError(
                "the gates define baseline gates but no baseline was given; commit one with "
                "'evalkit baseline FIXTURE --output FIXTURE/baseline.json' or remove the "
                "baseline section"
            )
        check_baseline_fresh(report, baseline)
        rows += _baseline_rows(report, current, gates.baseline, baseline)
    return pd.DataFrame([astuple(row) for row in rows], columns=GATE_COLUMNS).astype(
        {"threshold": "float64", "actual": "float64", "passed": "boolean"}
    )


AUC_MEASURE: Final = "AUC"
"""The ``measure`` of an abstention gate's AUC check (:func:`evalkit.stats.abstention`)."""


def operating_point_measure(max_no_answer_fp: float) -> str:
    """The ``measure`` of an abstention gate's operating-point check, e.g.
    ``NoResult@NoAnswerFP<=0.34``."""
    return f"NoResult@NoAnswerFP<={max_no_answer_fp:g}"


def _abstention_rows(
    report: Mapping[str, Any], gates: Gates, baseline: Mapping[str, Any] | None
) -> list[GateCheck]:
    """One check per bound of each abstention gate (operating point, AUC, then the AUC
    against the baseline), computed from the report's ``confidence`` and ``perQuery`` (a
    query with ``NoAnswerFP`` is a no-answer query) over the gate's language's queries
    (``queryLanguages``) by :func:`evalkit.stats.abstention_statistics`; ``max_auc_drop``
    compares with the same statistic of the baseline's ``confidence`` on the queries both
    files have."""
    from evalkit.stats import abstention_statistics

    rows: list[GateCheck] = []
    for gate, gate_id in zip(gates.abstention, abstention_gate_ids(gates), strict=True):
        where = {
            "gate": gate_id,
            "kind": "abstention",
            "system": gate.system,
            "language": gate.language,
        }
        side = _AbstentionSide(report, "report", gate)
        for measure, op, bound, statistic in _abstention_bounds(gate):
            why, queries, threshold = side.why, side.queries, bound
            reference = "baseline" if statistic == "auc-drop" else ""
            before: _AbstentionSide | None = None
            if why is None and statistic == "auc-drop":
                before = _AbstentionSide(baseline or {}, "baseline", gate)
                shared = set(before.queries)
                queries = [q for q in side.queries if q in shared]
                why = before.why
            if why is None and all(side.answerable[q] for q in queries):
                why = "n/a: no no-answer queries"
            if why is None and not any(side.answerable[q] for q in queries):
                why = "n/a: no answerable queries"
            if why is not None:
                rows.append(
                    GateCheck.not_evaluated(**where, measure=measure, reference=reference, note=why)
                )
                continue
            answerable = [side.answerable[q] for q in queries]
            target = gate.max_no_answer_fp or 0.0
            name = "auc" if statistic == "auc-drop" else statistic
            statistics = abstention_statistics(
                side.scores(queries), answerable, max_no_answer_fp=target
            )
            actual = float(statistics.statistic(name)[0])
            if before is not None:
                old = abstention_statistics(before.scores(queries), answerable).auc[0]
                threshold = max(0.0, float(old) - bound)
            rows.append(
                GateCheck.checked(
                    **where,
                    measure=measure,
                    reference=reference,
                    op=op,
                    threshold=threshold,
                    actual=actual,
                )
            )
    return rows


class _AbstentionSide:
    """One file's side of an abstention gate: its confidences and no-answer flags of the
    gate's system on the queries of the gate's language (sorted IDs), or ``why`` it has
    none."""

    def __init__(self, report: Mapping[str, Any], role: str, gate: AbstentionGate) -> None:
        self.queries: list[str] = []
        self.answerable: dict[str, bool] = {}
        self.confidence: dict[str, float] = {}
        read = report_confidence(report, role) if report else None
        self.why = self._why_none(report, read, role, gate.system)
        if read is None or self.why is not None:
            return
        self.confidence = read[0][gate.system]
        per_query = report_per_query(report, role).get(gate.system, {})
        self.answerable = {q: "NoAnswerFP" not in values for q, values in per_query.items()}
        queries = sorted(per_query)
        if gate.language != ALL_LANGUAGES:
            languages = report_query_languages(report, role)
            if languages is None:
                self.why = (
                    f"the {role} has no query languages (written by an older evalkit); "
                    "evaluate again to check a per-language abstention gate"
                )
                return
            queries = [q for q in queries if languages.get(q) == gate.language]
            if not queries:
                known = sorted({languages[q] for q in per_query if q in languages})
                raise InputError(
                    f"abstention gate {gate.id or gate.system!r}: language {gate.language!r} "
                    f"has no queries for system {gate.system!r} in the {role} (languages: "
                    f"{', '.join(known) or 'none'}); fix the gate's language"
                )
        self.queries = queries

    @staticmethod
    def _why_none(
        report: Mapping[str, Any],
        read: tuple[dict[str, dict[str, float]], dict[str, str]] | None,
        role: str,
        system: str,
    ) -> str | None:
        if not report:
            return "no baseline was given"
        if read is None:
            if role == "baseline":
                return (
                    "n/a: the baseline has no confidence section (written before baselines "
                    "kept it); refresh it to compare the AUC"
                )
            return (
                "the report has no confidence section (written by an older evalkit); evaluate "
                "again to check abstention gates"
            )
        if system not in read[0]:
            return f"the system is not in the {role}"
        return None

    def scores(self, queries: Sequence[str]) -> list[float]:
        """The confidences of ``queries`` (``-inf``: no result)."""
        return [float(self.confidence.get(q, -math.inf)) for q in queries]


def _abstention_bounds(gate: AbstentionGate) -> list[tuple[str, str, float, str]]:
    """``(measure, op, threshold, statistic)`` of each bound of ``gate``; the AUC against
    the baseline has statistic ``auc-drop`` and threshold ``max_auc_drop`` (the caller
    subtracts it from the baseline's AUC)."""
    bounds: list[tuple[str, str, float, str]] = []
    if gate.max_no_answer_fp is not None and gate.max_no_result is not None:
        measure = operating_point_measure(gate.max_no_answer_fp)
        bounds.append((measure, "<=", gate.max_no_result, "op_no_result"))
    if gate.min_auc is not None:
        bounds.append((AUC_MEASURE, ">=", gate.min_auc, "auc"))
    if gate.max_auc_drop is not None:
        bounds.append((AUC_MEASURE, ">=", gate.max_auc_drop, "auc-drop"))
    return bounds


def _baseline_rows(
    report: Mapping[str, Any],
    current: _Means,
    spec: BaselineGate,
    baseline: Mapping[str, Any],
) -> list[GateCheck]:
    previous = _Means(baseline, "baseline")
    systems = [str(s) for s in previous.systems] if spec.systems == "all" else list(spec.systems)
    k = _report_k(report)
    rows: list[GateCheck] = []
    failures: list[dict[str, set[tuple[str, str]]]] = []  # the report's, the baseline's
    for system in systems:
        gate = f"baseline:{system}"
        if system not in previous.systems:
            previous.get(system, "", ALL_LANGUAGES, gate)  # raises: names the known systems
        check = {"gate": gate, "kind": "baseline", "system": system, "reference": "baseline"}
        why = _why_not_evaluated(current, k, [system], "")
        if why is not None:
            rows.append(
                GateCheck.not_evaluated(**check, measure="all", language=ALL_LANGUAGES, note=why)
            )
            continue
        known_measures, known_languages = previous.measures(system), previous.languages(system)
        measures = known_measures if spec.measures == "all" else list(spec.measures)
        languages = [ALL_LANGUAGES, *(known_languages if spec.per_language else [])]
        # what the evaluation has and the baseline lacks is shown, never silently unchecked
        lacking: list[tuple[str, str, str]] = []  # (measure, language, what)
        if spec.measures == "all":
            lacking += [
                (m, ALL_LANGUAGES, f"measure {m}")
                for m in current.measures(system)
                if m not in known_measures
            ]
            lacking += [
                ("all", language, f"language {language}")
                for language in (current.languages(system) if spec.per_language else [])
                if language not in known_languages
            ]
        for measure, language, what in lacking:
            note = f"the baseline has no value for {what}; refresh it to gate this"
            rows.append(
                GateCheck.not_evaluated(**check, measure=measure, language=language, note=note)
            )
        for language in languages:
            for measure in measures:
                where = {**check, "measure": measure, "language": language}
                why = _why_not_applicable(
                    previous, [system], measure, language
                ) or _why_not_applicable(current, [system], measure, language)
                if why is not None:
                    rows.append(GateCheck.not_evaluated(**where, note=why))
                    continue
                old = previous.get(system, measure, language, gate)
                actual = current.get(system, measure, language, gate)
                allowed = spec.tolerance_for(measure).allowance(old)
                op, threshold = _worse_bound(measure, old, allowed)
                rows.append(GateCheck.checked(**where, op=op, threshold=threshold, actual=actual))
        if spec.max_new_failures is not None:
            if not failures:  # read once, for every system, when a system first needs them
                failures = [_failure_keys(report, "report"), _failure_keys(baseline, "baseline")]
            new = _new_failures(failures[0], failures[1], system)
            rows.append(
                GateCheck.checked(
                    gate=gate,
                    kind="new-failures",
                    system=system,
                    measure=NEW_FAILURES_MEASURE,
                    language=ALL_LANGUAGES,
                    reference="baseline",
                    op="<=",
                    threshold=spec.max_new_failures,
                    actual=len(new),
                    query_ids=new,
                )
            )
    return rows


def _failure_keys(report: Mapping[str, Any], role: str) -> dict[str, set[tuple[str, str]]]:
    """``{system: {(query ID, kind)}}`` of the report's failures, each checked."""
    keys: dict[str, set[tuple[str, str]]] = {}
    for index, failure in enumerate(report_list(report, "failures", role)):
        if not isinstance(failure, dict) or not all(
            isinstance(failure.get(k), str) for k in ("system", "queryId", "kind")
        ):
            raise InputError(
                f"{role}: failures[{index}] should be an object with string system, queryId and "
                "kind; expected a report written by evalkit"
            )
        keys.setdefault(failure["system"], set()).add((failure["queryId"], failure["kind"]))
    return keys


def _new_failures(
    report: Mapping[str, set[tuple[str, str]]],
    baseline: Mapping[str, set[tuple[str, str]]],
    system: str,
) -> list[str]:
    """Sorted IDs of queries with a (query, kind) failure in ``report`` but not in ``baseline``
    (:func:`_failure_keys` of each)."""
    new = report.get(system, set()) - baseline.get(system, set())
    return sorted({query_id for query_id, _ in new})


# --- presenting -------------------------------------------------------------------------------


def gates_to_report(results: pd.DataFrame) -> list[dict[str, Any]]:
    """The gate results as the report's ``gates`` section (camelCase keys, IDs only); a gate
    that was not evaluated has ``passed: null``, ``threshold``/``actual`` null and a ``note``
    (so has a check that cannot fail)."""
    records = []
    for row in results.to_dict(orient="records"):
        evaluated = row["status"] != NOT_EVALUATED
        record: dict[str, Any] = {
            **{column: str(row[column]) for column in (*_SUBJECT_COLUMNS, "op")},
            "threshold": float(row["threshold"]) if evaluated else None,
            "actual": float(row["actual"]) if evaluated else None,
            "passed": bool(row["passed"]) if evaluated else None,
            "queryIds": str(row["query_ids"]).split(",") if row["query_ids"] else [],
            "status": str(row["status"]),
        }
        if row["note"]:
            record["note"] = str(row["note"])
        records.append(record)
    return records


def gate_counts(results: pd.DataFrame) -> dict[str, int]:
    """``{"pass": n, "fail": n, "not evaluated": n}`` of a :func:`check_gates` frame."""
    counts = results["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in (PASS, FAIL, NOT_EVALUATED)}


def gate_cannot_fail(results: pd.DataFrame) -> int:
    """Passing checks of a :func:`check_gates` frame that cannot fail: their threshold is the
    measure's worst value (the baseline is already as bad as the measure gets; their ``note``
    says so)."""
    return int(((results["status"] == PASS) & (results["note"] != "")).sum())


def gates_failed(results: pd.DataFrame) -> bool:
    """True when an evaluated gate check failed (not-evaluated checks never fail)."""
    return bool((results["status"] == FAIL).any())


def gate_outcome(counts: Mapping[str, int], *, allow_none_evaluated: bool = False) -> bool:
    """True (pass) when no evaluated check failed and at least one check was evaluated (or
    ``allow_none_evaluated``); ``counts`` as :func:`gate_counts` gives them. A run that checked
    nothing passes nothing: a misspelt ``--systems`` or a k below every cutoff would otherwise
    turn every gate into a silent pass."""
    evaluated = counts.get(PASS, 0) + counts.get(FAIL, 0)
    return counts.get(FAIL, 0) == 0 and (evaluated > 0 or allow_none_evaluated)


def gate_headline(counts: Mapping[str, int], *, allow_none_evaluated: bool = False) -> str:
    """The one-line verdict of a gate run, always with "N of M checks evaluated":
    ``PASS: all 30 evaluated checks passed; 30 of 39 checks evaluated, 9 not evaluated``,
    ``FAIL: 2 of 30 evaluated checks failed; ...`` or ``FAIL: no check was evaluated; 0 of 3
    checks evaluated, 3 not evaluated``; ``counts`` as :func:`gate_counts` gives them."""
    passed, failed = counts.get(PASS, 0), counts.get(FAIL, 0)
    skipped = counts.get(NOT_EVALUATED, 0)
    evaluated = passed + failed
    ok = gate_outcome(counts, allow_none_evaluated=allow_none_evaluated)
    if failed:
        what = f"{failed} of {evaluated} evaluated check(s) failed"
    elif evaluated:
        what = f"all {evaluated} evaluated check(s) passed"
    elif ok:
        what = "no check was evaluated (allowed by --allow-none-evaluated)"
    else:
        what = "no check was evaluated, so nothing was checked"
    tail = f", {skipped} not evaluated" if skipped else ""
    return (
        f"{'PASS' if ok else 'FAIL'}: {what}; {evaluated} of {evaluated + skipped} checks "
        f"evaluated{tail}"
    )


def check_digits(check: Any) -> int:
    """Decimals of a check's threshold and value: 0 for a count of new failures, else 4."""
    return 0 if check.kind == "new-failures" else 4


def threshold_text(check: Any) -> str:
    """``">= 0.7800 (baseline)"``: a check's operator and threshold, with what the threshold
    is relative to when there is one (not for an absolute check or an operating point)."""
    text = f"{check.op} {check.threshold:.{check_digits(check)}f}"
    return f"{text} ({check.reference})" if check.reference else text


def format_gate_table(
    results: pd.DataFrame, *, failed_only: bool = False, allow_none_evaluated: bool = False
) -> str:
    """A fixed-width table of gate results, new-failure IDs, notes on checks that were not
    evaluated, and a last line :func:`gate_headline` (IDs only); ``failed_only`` lists only
    failing checks (the headline still counts all)."""
    header = ("gate", "system", "measure", "language", "threshold", "actual", "result")
    lines: list[tuple[str, ...]] = [header]
    notes: list[str] = []
    shown = results[results["status"] == FAIL] if failed_only else results
    for row in shown.itertuples(index=False):
        if row.status == NOT_EVALUATED:
            lines.append(
                (
                    str(row.gate),
                    str(row.system),
                    str(row.measure),
                    str(row.language),
                    "-",
                    "-",
                    "not evaluated",
                )
            )
            notes.append(f"not evaluated: {row.gate}: {row.note}")
            continue
        digits = check_digits(row)
        threshold = threshold_text(row)
        lines.append(
            (
                str(row.gate),
                str(row.system),
                str(row.measure),
                str(row.language),
                threshold,
                f"{row.actual:.{digits}f}",
                "pass" if row.status == PASS else "FAIL",
            )
        )
        if row.query_ids:
            notes.append(f"new failures of {row.system}: {str(row.query_ids).replace(',', ', ')}")
    cannot = shown[(shown["status"] == PASS) & (shown["note"] != "")]
    if len(cannot):
        listed = sorted({f"{row.measure} ({row.gate})" for row in cannot.itertuples(index=False)})
        notes.append(
            f"{len(cannot)} check(s) cannot fail, their threshold being the measure's worst "
            f"value: {', '.join(listed)}"
        )
    text = fixed_width_lines(lines) + notes
    text.append(gate_headline(gate_counts(results), allow_none_evaluated=allow_none_evaluated))
    return "\n".join(text) + "\n"


def fixed_width_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` (header first) as left-aligned columns two spaces apart, trailing spaces
    stripped, with a dashed rule under the header (also used by ``_diff``)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    text.insert(1, "  ".join("-" * width for width in widths))
    return text
