"""CI-native outputs: JUnit XML for test reporters, a Markdown summary for a pull request.

- :func:`gates_junit` / :func:`probes_junit`: one ``<testcase>`` per gate check (a row of
  :func:`evalkit.gates.check.check_gates`) or per probe, a ``<failure>`` for a failed one, a
  ``<skipped>`` for a gate check that was not evaluated, an ``<error>`` for a probe that could
  not run. Messages hold IDs, measure names and numbers only.
- :func:`gates_markdown` / :func:`probes_markdown`: a GitHub-flavoured Markdown summary fit for
  a pull-request comment or ``$GITHUB_STEP_SUMMARY``, at most ``max_lines`` (60) lines: the
  verdict, the ablation table, the significant changes against the base system and the
  failing gates (probes: the verdict, a table per tool, the failing probes with their
  thresholds, the drops from the baseline). Longer lists are cut with a line saying how many
  rows were left out.

Every ID goes through :mod:`evalkit.report.render` (``markdown_text``/``markdown_table``,
``xml_chars``). The texts are returned, never written: the CLI writes them with
:func:`evalkit.safety.artifacts.write_artifacts`, which path-checks and leak-scans them.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from evalkit.report.render import markdown_table, markdown_text, xml_chars

if TYPE_CHECKING:
    from evalkit.report.verdict import Verdict

__all__ = [
    "MAX_SUMMARY_LINES",
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
    root = ET.Element("testsuites", name=xml_chars(name))
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", "0")
    root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(name: str, cases: Sequence[ET.Element], time_s: float = 0.0) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_chars(name))
    suite.set("tests", str(len(cases)))
    for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(key, str(sum(1 for c in cases if c.find(tag) is not None)))
    suite.set("time", f"{time_s:.3f}")
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


def gates_junit(results: pd.DataFrame, *, suite: str) -> str:
    """JUnit XML of :func:`evalkit.gates.check.check_gates` ``results``: one test suite named
    ``suite`` (e.g. the fixture ID), one test case per row (classname the gate ID, name
    ``system measure (language)``), failures and skips with ID-only messages."""
    cases = []
    for row in results.itertuples(index=False):
        case = _case(str(row.gate), f"{row.system} {row.measure} ({row.language})")
        if row.status == "fail":
            digits = 0 if row.kind == "new-failures" else 4
            message = f"{_gate_check(row)}: actual {row.actual:.{digits}f}"
            failure = ET.SubElement(case, "failure", message=xml_chars(message), type="gate")
            if row.query_ids:
                failure.text = xml_chars(f"new failures: {str(row.query_ids).replace(',', ', ')}")
        elif row.status == "not evaluated":
            ET.SubElement(case, "skipped", message=xml_chars(f"not evaluated: {row.note}"))
        cases.append(case)
    return _suites("evalkit gate", [_suite(f"gates {suite}", cases)])


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


def _budgets(available: int, needs: Sequence[int]) -> list[int]:
    """Lines for each of two tables needing ``needs`` lines within ``available``: each gets
    what it needs when both fit, else at least half the lines (or its need), the other the
    rest."""
    first, second = needs
    if first + second <= available:
        return [first, second]
    half = available // 2
    if first <= half:
        return [first, available - first]
    if second <= half:
        return [available - second, second]
    return [half, available - half]


def gates_markdown(
    verdict: Verdict,
    *,
    title: str,
    max_lines: int = MAX_SUMMARY_LINES,
) -> str:
    """The Markdown summary of a gate run: verdict, ablation, significant changes, failing gates.

    The ablation table has one row per system: every measure's mean (``verdict.means``), with
    the bootstrap interval for the primary measures (``verdict.headline``). ``title`` is an ID
    line such as ``synthetic-bilingual-v1 1.1.0``. At most ``max_lines`` lines (at least 30)."""
    max_lines = max(30, max_lines)
    lines = [f"## evalkit gate: {markdown_text(title)}", "", _verdict_line(verdict), ""]
    lines += _change_counts(verdict)
    measures = list(dict.fromkeys(verdict.means["measure"]))
    means = verdict.means.set_index(["system", "measure"])
    intervals = verdict.headline.set_index(["system", "measure"])
    columns = ["system", *measures]
    rows = []
    for system in verdict.systems:
        cells: list[object] = [f"{system} (base)" if system == verdict.base else system]
        for measure in measures:
            if (system, measure) not in means.index:
                cells.append("-")
                continue
            cell = f"{means.loc[(system, measure), 'mean']:.3f}"
            if (system, measure) in intervals.index:
                low, high = intervals.loc[(system, measure), ["ci_low", "ci_high"]]
                cell += f" [{low:.2f}, {high:.2f}]"
            cells.append(cell)
        rows.append(cells)
    lines += [
        "",
        f"### Ablation: mean per system; {_percent(verdict.confidence)} bootstrap interval "
        "of the primary measures",
        "",
    ]
    lines += markdown_table(columns, rows).splitlines()
    failing = verdict.failing_gates
    changes = verdict.changes
    # worse first: a regression is what a reader must not miss when the list is cut
    changes = changes.sort_values("direction", key=lambda d: d != "worse", kind="stable")
    available = max_lines - len(lines) - 9  # two headings with blank lines, the legend
    change_budget, gate_budget = _budgets(
        max(6, available),
        [len(changes) + 2 if len(changes) else 1, len(failing) + 2 if len(failing) else 1],
    )
    lines += [
        "",
        f"### Significant changes against {markdown_text(verdict.base)}",
        "",
        markdown_text(
            f"{verdict.test} test, {verdict.correction} correction over every system and "
            f"measure, alpha {verdict.alpha:g}, {verdict.n_resamples} resamples, seed "
            f"{verdict.seed}; diff = system - base with its "
            f"{_percent(verdict.confidence)} bootstrap interval."
        ),
        "",
    ]
    if changes.empty:
        lines.append("None\\.")
    else:
        change_rows = [
            [
                row.system,
                row.measure,
                row.direction,
                f"{row.diff:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}]",
                f"{row.p_adjusted:.4f}",
            ]
            for row in changes.itertuples(index=False)
        ]
        lines += _cut(
            ["system", "measure", "direction", "diff [interval]", "p_adjusted"],
            change_rows,
            change_budget,
            "changes",
            "section 6 of the HTML report lists every comparison",
        )
    lines += ["", "### Failing gates", ""]
    if not verdict.gated:
        lines.append("No gates\\.")
    elif failing.empty:
        lines.append("None\\.")
    else:
        gate_rows = [
            [
                row.gate,
                row.system,
                row.measure,
                row.language,
                f"{row.op} {_number(row.threshold, 0 if row.kind == 'new-failures' else 4)}",
                _number(row.actual, 0 if row.kind == "new-failures" else 4),
            ]
            for row in failing.itertuples(index=False)
        ]
        lines += _cut(
            ["gate", "system", "measure", "language", "threshold", "actual"],
            gate_rows,
            max(3, min(gate_budget, max_lines - len(lines))),
            "failing checks",
            "the JUnit report has every check",
        )
    return "\n".join(lines[:max_lines]) + "\n"


def _percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def _verdict_line(verdict: Verdict) -> str:
    if not verdict.gated:
        head = "**Verdict: no gates**"
        gates = "this fixture has no gates"
    elif verdict.passed:
        head = "**Verdict: PASS**"
        gates = f"{verdict.gates_passed} of {verdict.gates_total} gate checks passed"
    else:
        head = "**Verdict: FAIL**"
        failed_systems = ", ".join(dict.fromkeys(verdict.failing_gates["system"]))
        gates = (
            f"{verdict.gates_failed} of {verdict.gates_total} gate checks failed ({failed_systems})"
        )
    if verdict.gates_cannot_fail:
        gates += (
            f"; {verdict.gates_cannot_fail} checks cannot fail (their baseline is already the "
            "measure's worst value)"
        )
    if verdict.gates_not_evaluated:
        gates += f"; {verdict.gates_not_evaluated} not evaluated"
    return f"{head}: {markdown_text(gates)}"


def _change_counts(verdict: Verdict) -> list[str]:
    """One bullet per system against the base: how many significant changes each way."""
    lines = []
    for system in verdict.systems:
        if system == verdict.base:
            continue
        of_system = verdict.changes[verdict.changes["system"] == system]
        better = int((of_system["direction"] == "better").sum())
        worse = int((of_system["direction"] == "worse").sum())
        lines.append(
            "- "
            + markdown_text(
                f"{system} vs {verdict.base}: {better} significantly better, {worse} "
                "significantly worse"
            )
        )
    return lines


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
