"""CI-native outputs: JUnit XML for test reporters, a Markdown summary for a pull request.

- :func:`gates_junit` / :func:`probes_junit`: one ``<testcase>`` per gate check (a row of
  :func:`evalkit.gates.check_gates`) or per probe, a ``<failure>`` for a failed one, a
  ``<skipped>`` for a gate check that was not evaluated, an ``<error>`` for a probe that could
  not run; :func:`gates_error_junit`: one ``<error>`` case for a gate run that could not check
  its gates (a stale baseline, an unknown system). Messages hold IDs, measure names and
  numbers only. The documents are valid against Jenkins' ``junit-10.xsd`` (xunit-plugin), the
  common ground of the Jenkins, GitLab and GitHub test reporters: no ``skipped`` or
  ``timestamp`` on ``<testsuites>``, ``properties`` before the test cases.
- :func:`gates_markdown` / :func:`probes_markdown`: a GitHub-flavoured Markdown summary fit for
  a pull-request comment or ``$GITHUB_STEP_SUMMARY``, at most ``max_lines`` (60) lines (gates:
  the verdict first, then the failing checks, the changes by language, the notes and, labelled,
  the comparison within the run; probes: the verdict, a table per tool, the failing probes
  with their thresholds, the drops from the baseline); :func:`gates_error_markdown` for a run
  that could not check its gates. Longer lists are cut with a line saying how many rows were
  left out.

Every ID goes through :mod:`evalkit.report.render` (``markdown_text``/``markdown_table``,
``xml_chars``). The texts are returned, never written: the CLI writes them with
:func:`evalkit.safety.artifacts.write_artifacts`, which path-checks and leak-scans them.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from evalkit.report.render import markdown_plain, markdown_table, markdown_text, xml_chars

if TYPE_CHECKING:
    from evalkit.report.verdict import Verdict

__all__ = [
    "MAX_SUMMARY_LINES",
    "GateContext",
    "definition_notes",
    "gates_error_junit",
    "gates_error_markdown",
    "gates_junit",
    "gates_markdown",
    "probes_junit",
    "probes_markdown",
]

MAX_SUMMARY_LINES: Final = 60
"""The most lines a Markdown summary has."""


# --- JUnit ------------------------------------------------------------------------------------


def _number(value: Any, digits: int = 4) -> str:
    """``value`` at ``digits`` decimals, ``-`` when missing."""
    if value is None or pd.isna(value):
        return "-"
    return f"{float(value):.{digits}f}"


def _suites(name: str, suites: Sequence[ET.Element]) -> str:
    """The ``<testsuites>`` document: only the attributes Jenkins' ``junit-10.xsd`` allows on
    it (``name, time, tests, failures, errors``; ``skipped`` belongs on each suite)."""
    root = ET.Element("testsuites", name=xml_chars(name))
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", f"{sum(float(s.get('time', '0')) for s in suites):.3f}")
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(
    name: str,
    cases: Sequence[ET.Element],
    time_s: float = 0.0,
    properties: Sequence[tuple[str, str]] = (),
) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_chars(name))
    suite.set("tests", str(len(cases)))
    for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(key, str(sum(1 for c in cases if c.find(tag) is not None)))
    suite.set("time", f"{time_s:.3f}")
    if properties:
        holder = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(holder, "property", name=xml_chars(key), value=xml_chars(value))
    suite.extend(cases)
    return suite


def _case(classname: str, name: str, time_s: float = 0.0) -> ET.Element:
    case = ET.Element("testcase", classname=xml_chars(classname), name=xml_chars(name))
    case.set("time", f"{time_s:.3f}")
    return case


def _gate_check(row: Any) -> str:
    """``hybrid-rerank RR@10 (all) >= 0.7800``-style text of one gate check."""
    digits = 0 if row.kind == "new-failures" else 4
    threshold = f"{row.op} {row.threshold:.{digits}f}"
    reference = "" if row.kind == "absolute" else f" ({row.reference})"
    return f"{row.system} {row.measure} ({row.language}) {threshold}{reference}"


def _short(digest: str) -> str:
    """``sha256:0123456789ab``: a definition hash cut for reading."""
    return digest[: len("sha256:") + 12]


def definition_notes(definitions: Mapping[str, tuple[str, str]]) -> list[str]:
    """One note per system whose definition changed since the baseline (it was compared)."""
    return [
        f"{system}: definition changed since the baseline ({_short(old)} -> {_short(new)}); "
        "compared with the baseline entry of the same name"
        for system, (old, new) in definitions.items()
    ]


def gates_junit(
    results: pd.DataFrame,
    *,
    suite: str,
    headline: str | None = None,
    allow_none_evaluated: bool = False,
    definitions: Mapping[str, tuple[str, str]] | None = None,
    worst: Sequence[Sequence[str]] | None = None,
) -> str:
    """JUnit XML of :func:`evalkit.gates.check_gates` ``results``, valid against Jenkins'
    ``junit-10.xsd``: one test suite named ``gates SUITE`` (e.g. the fixture ID), one test case
    per row (classname the gate ID, name ``system measure (language)``), failures and skips
    with ID-only messages (a failure's text names the worst queries, ``worst`` aligned with
    ``results``). The suite's properties hold the ``headline`` (default
    :func:`evalkit.gates.gate_headline`: "N of M checks evaluated") and each changed
    system definition. A run that evaluated no check has one more test case, ``gates
    evaluated``, failing unless ``allow_none_evaluated``."""
    from evalkit.gates import gate_counts, gate_headline

    counts = gate_counts(results)
    if headline is None:
        headline = gate_headline(counts, allow_none_evaluated=allow_none_evaluated)
    cases = []
    for index, row in enumerate(results.itertuples(index=False)):
        case = _case(str(row.gate), f"{row.system} {row.measure} ({row.language})")
        if row.status == "fail":
            digits = 0 if row.kind == "new-failures" else 4
            message = f"{_gate_check(row)}: actual {row.actual:.{digits}f}"
            failure = ET.SubElement(case, "failure", message=xml_chars(message), type="gate")
            if row.query_ids:
                failure.text = xml_chars(f"new failures: {str(row.query_ids).replace(',', ', ')}")
            elif worst is not None and worst[index]:
                failure.text = xml_chars(f"worst queries: {', '.join(worst[index])}")
        elif row.status == "not evaluated":
            ET.SubElement(case, "skipped", message=xml_chars(f"not evaluated: {row.note}"))
        cases.append(case)
    if counts["pass"] + counts["fail"] == 0:
        case = _case("evalkit-gate", "gates evaluated")
        if not allow_none_evaluated:
            ET.SubElement(case, "failure", message=xml_chars(headline), type="gate")
        cases.append(case)
    properties = [("verdict", headline)]
    properties += [
        (f"definition-changed {system}", f"{_short(old)} -> {_short(new)}")
        for system, (old, new) in (definitions or {}).items()
    ]
    return _suites("evalkit gate", [_suite(f"gates {suite}", cases, properties=properties)])


def gates_error_junit(*, suite: str, message: str) -> str:
    """JUnit XML of a gate run that could not check its gates (a stale baseline, a gate naming
    an unknown system, an input error): one test case ``gates checked`` holding an
    ``<error>`` with ``message`` (ID-only, as printed on stderr)."""
    case = _case("evalkit-gate", "gates checked")
    ET.SubElement(case, "error", message=xml_chars(message), type="input")
    properties = [("verdict", f"ERROR: the gates were not checked: {message}")]
    return _suites("evalkit gate", [_suite(f"gates {suite}", [case], properties=properties)])


def probes_junit(results: pd.DataFrame, *, suite: str, drops: pd.DataFrame | None = None) -> str:
    """JUnit XML of :func:`evalkit.probes.run_probes` ``results``: one test suite named
    ``suite`` (the target), one test case per probe (classname its tool, name its ID), with
    its tool time. A missed threshold or a drop from the baseline
    (:func:`evalkit.probes.baseline_drops`) is a failure; a probe that could not run, an
    error."""
    dropped: dict[str, list[str]] = {}
    if drops is not None:
        for drop in drops.to_dict(orient="records"):
            now = "error" if pd.isna(drop["current"]) else f"{drop['current']:.3f}"
            dropped.setdefault(str(drop["id"]), []).append(
                f"{drop['measure']} {drop['baseline']:.3f} in the baseline, now {now}"
            )
    cases = []
    for row in results.itertuples(index=False):
        milliseconds: Any = row.latency_ms
        milliseconds = float(milliseconds)
        latency = 0.0 if math.isnan(milliseconds) else milliseconds / 1000
        case = _case(str(row.tool), str(row.id), latency)
        if row.status == "error":
            ET.SubElement(case, "error", message=xml_chars(f"could not run: {row.error}"))
        elif row.status == "fail" or row.id in dropped:
            reasons = _missed_thresholds(row) + dropped.get(str(row.id), [])
            ET.SubElement(case, "failure", message=xml_chars("; ".join(reasons)), type="probe")
        cases.append(case)
    total = float(results["latency_ms"].fillna(0).sum()) / 1000
    return _suites("evalkit probes", [_suite(f"probes {suite}", cases, total)])


def _missed_thresholds(row: Any) -> list[str]:
    missed = []
    if not row.pass_recall:
        missed.append(f"recall {row.recall:.3f} < recall_min {row.recall_min:.3f}")
    if not row.pass_precision:
        missed.append(f"precision {row.precision:.3f} < precision_min {row.precision_min:.3f}")
    return missed


# --- Markdown ---------------------------------------------------------------------------------


def _cut(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    budget: int,
    what: str,
    where: str,
) -> list[str]:
    """A Markdown table of at most ``budget`` lines (header and rule included; a last line
    says how many ``what`` were left out and ``where`` they all are)."""
    if len(rows) + 2 <= budget:
        return markdown_table(columns, rows).splitlines()
    shown = max(0, budget - 3)
    lines = markdown_table(columns, rows[:shown]).splitlines()
    left = len(rows) - shown
    return [*lines, markdown_text(f"{left} more {what} not shown; {where}.")]


@dataclass(frozen=True)
class GateContext:
    """What a gate summary shows beside the :class:`~evalkit.report.verdict.Verdict`.

    ``baseline``: the gates compared with a baseline; ``worst``: the worst query IDs of each
    failing check, in ``verdict.failing_gates`` order
    (:func:`evalkit.gates.worst_queries`); ``languages``: a
    :func:`evalkit.gates.language_changes` frame; ``definitions``: ``{system: (old,
    new)}`` definition hashes of systems changed since the baseline; ``left_out``: gated
    systems this run did not evaluate; ``advice``: the line on refreshing the baseline (only
    when the gate passed)."""

    baseline: bool = False
    worst: tuple[tuple[str, ...], ...] = ()
    languages: pd.DataFrame | None = None
    definitions: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()
    advice: str = ""


def _plain(value: object) -> str:
    return markdown_plain(value)


def _table(
    columns: Sequence[str], rows: Sequence[Sequence[object]], budget: int, what: str, where: str
) -> list[str]:
    """A plain (readable raw) Markdown table cut to ``budget`` lines like :func:`_cut`."""
    if len(rows) + 2 <= budget:
        return markdown_table(columns, rows, plain=True).splitlines()
    shown = max(0, budget - 3)
    lines = markdown_table(columns, rows[:shown], plain=True).splitlines()
    return [*lines, _plain(f"{len(rows) - shown} more {what} not shown; {where}.")]


def gates_markdown(
    verdict: Verdict,
    *,
    title: str,
    context: GateContext | None = None,
    max_lines: int = MAX_SUMMARY_LINES,
) -> str:
    """The Markdown summary of a gate run, for a reviewer who reads it in five seconds.

    In order: the verdict line (PASS or FAIL against the baseline and/or the gates, with
    "N of M checks evaluated"); the fixture ``title`` (an ID line such as
    ``synthetic-bilingual-v1 1.1.0``); the failing checks (system, measure, language,
    threshold, actual, worst queries by ID); the changes against the baseline per language
    where a language's change differs from the overall one; notes (changed definitions,
    systems left out, checks that cannot fail, the refresh advice of a passing run); then,
    labelled as such, the comparison with ``verdict.base`` within this run and the ablation
    table. Escaped with :func:`~evalkit.report.render.markdown_plain`, so it reads raw in a CI
    log. At most ``max_lines`` lines (at least 30): a cut table says how many rows it left out.
    """
    context = context or GateContext()
    max_lines = max(30, max_lines)
    if not verdict.gated:
        against, outcome = "", "no gates"
    else:
        against = (
            " against the baseline and the gates" if context.baseline else " against the gates"
        )
        outcome = "PASS" if verdict.passed else "FAIL"
    head = (
        verdict.gates_headline.split(": ", 1)[-1] if verdict.gated else "the fixture has no gates"
    )
    lines = [f"**evalkit gate: {outcome}**{against}: {_plain(head)}", "", _plain(title), ""]
    failing = verdict.failing_gates
    if len(failing):
        lines += ["### Failing checks", ""]
        rows = []
        for index, row in enumerate(failing.itertuples(index=False)):
            digits = 0 if row.kind == "new-failures" else 4
            reference = "" if row.kind == "absolute" else f" ({row.reference})"
            worst = context.worst[index] if index < len(context.worst) else ()
            rows.append(
                [
                    row.system,
                    row.measure,
                    row.language,
                    f"{row.op} {_number(row.threshold, digits)}{reference}",
                    _number(row.actual, digits),
                    ", ".join(worst) or "-",
                    row.gate,
                ]
            )
        lines += _table(
            ["system", "measure", "language", "threshold", "actual", "worst queries", "check"],
            rows,
            max(5, (max_lines - len(lines)) // 2),
            "failing checks",
            "the JUnit report has every check",
        )
        lines.append("")
    languages = context.languages
    if languages is not None and len(languages):
        lines += ["### Against the baseline, by language", ""]
        lines.append(
            _plain(
                "Shown where a language's change differs from the overall one; each cell is "
                "the current mean and its change from the baseline (worse/better beyond the "
                "gate's tolerance)."
            )
        )
        lines.append("")
        measures = list(dict.fromkeys(languages["measure"]))
        cells: dict[tuple[str, str], dict[str, str]] = {}
        for record in languages.to_dict(orient="records"):
            mark = {"worse": " worse", "better": " better"}.get(str(record["change"]), "")
            current, previous = float(record["current"]), float(record["baseline"])
            key = (str(record["system"]), str(record["language"]))
            cells.setdefault(key, {})[str(record["measure"])] = (
                f"{current:.3f} ({current - previous:+.3f}{mark})"
            )
        rows = [
            [system, language, *(values.get(m, "-") for m in measures)]
            for (system, language), values in cells.items()
        ]
        lines += _table(
            ["system", "language", *measures],
            rows,
            max(4, (max_lines - len(lines)) // 2),
            "rows",
            "evalkit diff lists every language",
        )
        lines.append("")
    notes = definition_notes(context.definitions)
    if context.left_out:
        notes.append(
            f"not evaluated: {', '.join(context.left_out)} (gated, but left out of this run "
            "by --systems); their checks were not run"
        )
    if verdict.gates_cannot_fail:
        notes.append(
            f"{verdict.gates_cannot_fail} passing checks cannot fail (their baseline is "
            "already the measure's worst value)"
        )
    if context.advice and verdict.passed:
        notes.append(context.advice)
    if notes:
        lines += ["### Notes", "", *(f"- {_plain(note)}" for note in notes), ""]
    lines += _base_section(verdict, max_lines - len(lines))
    return "\n".join(lines[:max_lines]).rstrip("\n") + "\n"


def _base_section(verdict: Verdict, available: int) -> list[str]:
    """The comparison with ``verdict.base`` within this run, labelled, and the ablation table,
    in ``available`` lines (the ablation first to go)."""
    others = [s for s in verdict.systems if s != verdict.base]
    lines = [
        f"### Within this run: each system against {_plain(verdict.base)} (--base)",
        "",
        _plain(
            "Not the baseline: a paired "
            f"{verdict.test} test, {verdict.correction} correction, alpha {verdict.alpha:g}, "
            f"{verdict.n_resamples} resamples, seed {verdict.seed}; diff = system - base."
        ),
        "",
    ]
    if not others:
        lines.append(_plain(f"Only {verdict.base} was evaluated: nothing to compare."))
    else:
        changes = verdict.changes.sort_values(
            "direction", key=lambda d: d != "worse", kind="stable"
        )
        for system in others:
            of_system = changes[changes["system"] == system]
            better = int((of_system["direction"] == "better").sum())
            worse = int((of_system["direction"] == "worse").sum())
            lines.append(f"- {_plain(f'{system}: {better} significantly better, {worse} worse')}")
        if len(changes):
            rows = [
                [
                    row.system,
                    row.measure,
                    row.direction,
                    f"{row.diff:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}]",
                    f"{row.p_adjusted:.4f}",
                ]
                for row in changes.itertuples(index=False)
            ]
            lines.append("")
            lines += _table(
                ["system", "measure", "direction", "diff [interval]", "p_adjusted"],
                rows,
                max(4, (available - len(lines)) // 2),
                "changes",
                "section 6 of the HTML report lists every comparison",
            )
    measures = list(dict.fromkeys(verdict.means["measure"]))
    means = verdict.means.set_index(["system", "measure"])
    table_rows = []
    for system in verdict.systems:
        cells: list[object] = [f"{system} (base)" if system == verdict.base else system]
        for measure in measures:
            mean = means["mean"].get((system, measure))
            # NaN: the measure does not apply (no spans); absent: not computed for the system
            cells.append("-" if mean is None else "n/a" if math.isnan(mean) else f"{mean:.3f}")
        table_rows.append(cells)
    lines += ["", "### Mean per system in this run", ""]
    lines += markdown_table(["system", *measures], table_rows, plain=True).splitlines()
    return lines


def gates_error_markdown(*, title: str, message: str) -> str:
    """The Markdown summary of a gate run that could not check its gates: the first line says
    so, then ``title`` and the ``message`` (ID-only, as printed on stderr)."""
    return (
        "**evalkit gate: ERROR**: the gates were not checked\n\n"
        f"{_plain(title)}\n\n{_plain(message)}\n"
    )


def probes_markdown(
    results: pd.DataFrame,
    *,
    target: str,
    drops: pd.DataFrame | None = None,
    max_lines: int = MAX_SUMMARY_LINES,
) -> str:
    """The Markdown summary of a probe run on ``target``: verdict, one row per tool (probes,
    passed, mean recall/precision/F1), the failing probes with their thresholds and the drops
    from the baseline. At most ``max_lines`` lines (at least 30)."""
    max_lines = max(30, max_lines)
    failed = results[results["status"] == "fail"]
    errors = results[results["status"] == "error"]
    n_drops = 0 if drops is None else len(drops)
    ok = failed.empty and errors.empty and n_drops == 0
    verdict = (
        f"{len(results)} probes, {int((results['status'] == 'pass').sum())} passed, "
        f"{len(failed)} failed, {len(errors)} could not run, {n_drops} drop(s) from the baseline"
    )
    lines = [
        f"## evalkit probes: {markdown_text(target)}",
        "",
        f"**Verdict: {'PASS' if ok else 'FAIL'}**: {markdown_text(verdict)}",
        "",
    ]
    tool_rows = []
    for tool, group in results.groupby("tool", sort=True):
        tool_rows.append(
            [
                tool,
                len(group),
                int((group["status"] == "pass").sum()),
                _number(group["recall"].mean(), 3),
                _number(group["precision"].mean(), 3),
                _number(group["f1"].mean(), 3),
            ]
        )
    lines += markdown_table(
        ["tool", "probes", "passed", "recall", "precision", "F1"], tool_rows
    ).splitlines()
    lines += ["", "### Failing probes", ""]
    bad = results[results["status"] != "pass"]
    if bad.empty:
        lines.append("None\\.")
    else:
        rows = [
            [
                row.id,
                row.tool,
                row.status,
                _number(row.recall, 3),
                _number(row.recall_min, 3),
                _number(row.precision, 3),
                _number(row.precision_min, 3),
            ]
            for row in bad.itertuples(index=False)
        ]
        budget = max(3, (max_lines - len(lines) - 4) // (2 if n_drops else 1))
        lines += _cut(
            ["probe", "tool", "status", "recall", "recall_min", "precision", "precision_min"],
            rows,
            budget,
            "probes",
            "the JUnit report has every probe",
        )
    if drops is not None and n_drops:
        lines += ["", "### Drops from the baseline", ""]
        drop_rows = [
            [d.id, d.measure, _number(d.baseline, 3), _number(d.current, 3)]
            for d in drops.itertuples(index=False)
        ]
        lines += _cut(
            ["probe", "measure", "baseline", "now"],
            drop_rows,
            max(3, max_lines - len(lines)),
            "drops",
            "evalkit probes prints every drop",
        )
    return "\n".join(lines[:max_lines]) + "\n"
