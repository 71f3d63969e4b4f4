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
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from evalkit.gates import change_sentence, check_digits, threshold_text
from evalkit.report.render import (
    markdown_code,
    markdown_plain,
    markdown_table,
    markdown_text,
    xml_chars,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalkit.gates import Change, GateVerdict
    from evalkit.report.verdict import Verdict

__all__ = [
    "MAX_SUMMARY_LINES",
    "change_lines",
    "definition_notes",
    "gates_error_junit",
    "gates_error_markdown",
    "gates_junit",
    "gates_markdown",
    "probes_junit",
    "probes_markdown",
    "verdict_line",
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
    return f"{row.system} {row.measure} ({row.language}) {threshold_text(row)}"


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


def gates_junit(verdict: GateVerdict, *, suite: str) -> str:
    """JUnit XML of a :class:`~evalkit.gates.GateVerdict`, valid against Jenkins'
    ``junit-10.xsd``.

    Suite ``gates SUITE`` (e.g. the fixture ID): one test case per gate check (classname the
    gate ID, name ``system measure (language)``), failures and skips with ID-only messages (a
    failure's text names the worst queries). Its properties hold the verdict's headline ("N
    of M checks evaluated") and each changed system definition. A run that evaluated no check
    has one more test case, ``gates evaluated``, failing unless ``allow_none_evaluated``.

    Suite ``change SUITE vs baseline`` (with a baseline): one test case per overall (system,
    measure) and per language row that moved differently from the whole, classname
    ``change:SYSTEM``, name ``SYSTEM MEASURE (LANGUAGE)``, its ``<system-out>`` the change
    (before, after, difference with its interval, adjusted p-value, queries worse / better /
    unchanged, worst query IDs); a ``<failure>`` only when a gate check on the same system,
    measure and language failed. An ERROR verdict (a stale baseline) is one
    error case, as :func:`gates_error_junit`."""
    if verdict.outcome == "ERROR" or verdict.results is None:
        return gates_error_junit(suite=suite, message="; ".join(verdict.stale) or verdict.headline)
    results = verdict.results
    counts = verdict.counts
    headline = verdict.headline
    cases = []
    failed: set[tuple[str, str, str]] = set()
    for index, row in enumerate(results.itertuples(index=False)):
        case = _case(str(row.gate), f"{row.system} {row.measure} ({row.language})")
        if row.status == "fail":
            failed.add((str(row.system), str(row.measure), str(row.language)))
            message = f"{_gate_check(row)}: actual {row.actual:.{check_digits(row)}f}"
            failure = ET.SubElement(case, "failure", message=xml_chars(message), type="gate")
            worst = verdict.worst[index] if index < len(verdict.worst) else ()
            if row.query_ids:
                failure.text = xml_chars(f"new failures: {str(row.query_ids).replace(',', ', ')}")
            elif worst:
                failure.text = xml_chars(f"worst queries: {', '.join(worst)}")
        elif row.status == "not evaluated":
            ET.SubElement(case, "skipped", message=xml_chars(f"not evaluated: {row.note}"))
        cases.append(case)
    if counts.get("pass", 0) + counts.get("fail", 0) == 0:
        case = _case("evalkit-gate", "gates evaluated")
        if not verdict.allow_none_evaluated:
            ET.SubElement(case, "failure", message=xml_chars(headline), type="gate")
        cases.append(case)
    properties = [("verdict", headline)]
    properties += [
        (f"definition-changed {system}", f"{_short(old)} -> {_short(new)}")
        for system, (old, new) in verdict.definitions.items()
    ]
    suites = [_suite(f"gates {suite}", cases, properties=properties)]
    change = verdict.change
    if change is not None:
        change_cases = []
        shown_rows = [
            row
            for row in change.measures.itertuples(index=False)
            if row.language == "all" or bool(row.differs)
        ]
        for row in shown_rows:
            system, measure, language = str(row.system), str(row.measure), str(row.language)
            case = _case(f"change:{system}", f"{system} {measure} ({language})")
            text = _change_text(row, change.worst(system, measure) if language == "all" else [])
            if (system, measure, language) in failed:
                ET.SubElement(case, "failure", message=xml_chars(text), type="change")
            ET.SubElement(case, "system-out").text = xml_chars(text)
            change_cases.append(case)
        summary = "; ".join(change_sentence(change, s) for s in change.compared)
        suites.append(
            _suite(
                f"change {suite} vs baseline",
                change_cases,
                properties=[("verdict", headline), ("change", summary)],
            )
        )
    return _suites("evalkit gate", suites)


def _change_text(row: Any, worst: Sequence[str]) -> str:
    """``worse -0.346 [-0.42, -0.27]: 0.585 -> 0.240, p 0.0080 (holm); 28 worse, 3 better,
    10 unchanged of 41; worst: q-zh-001, ...``: one change row in words and numbers."""
    text = (
        f"{row.direction} {float(row.diff):+.3f} [{float(row.ci_low):+.3f}, "
        f"{float(row.ci_high):+.3f}]: {float(row.before):.3f} -> {float(row.after):.3f}, "
        f"p {_number(row.p_adjusted)} ({row.correction}); {int(row.worse)} worse, "
        f"{int(row.better)} better, {int(row.unchanged)} unchanged of {int(row.n)}"
    )
    return text + (f"; worst: {', '.join(worst)}" if worst else "")


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


def _code(name: str) -> str:
    return markdown_code(name)


def change_lines(verdict: GateVerdict) -> list[str]:
    """One plain line per compared system: what changed against the baseline
    (:func:`evalkit.gates.change_sentence`), then the abstention AUC against the baseline of
    each system an abstention gate names (``GateVerdict.abstention_lines``), for a terminal;
    empty without a change."""
    change = verdict.change
    if change is None:
        return []
    return [change_sentence(change, system) for system in change.compared] + (
        verdict.abstention_lines()
    )


def verdict_line(verdict: GateVerdict, *, code: Callable[[str], str] = str) -> str:
    """The one-line verdict: ``FAIL · my-system got worse: ... · 7 of 25 checks failed; 25 of
    25 checks evaluated`` (no outcome word: the caller shows it). ``code`` formats measure
    names."""
    if verdict.outcome == "ERROR":
        return "the baseline was not compared: " + "; ".join(verdict.stale)
    head = verdict.headline.split(": ", 1)[-1]
    change = verdict.change
    if change is None:
        return head
    sentences = [change_sentence(change, system, name=code) for system in change.compared]
    removed = change.systems[change.systems["status"] != "compared"]
    if len(removed):
        sentences.append(
            ", ".join(
                f"{s} {status}"
                for s, status in zip(removed["system"], removed["status"], strict=True)
            )
        )
    failed = verdict.failed_text(name=code)
    return " · ".join([*sentences, head, *([failed] if failed else [])])


def gates_markdown(
    verdict: GateVerdict,
    *,
    title: str,
    ablation: Verdict | None = None,
    max_lines: int = MAX_SUMMARY_LINES,
) -> str:
    """The Markdown summary of a gate run, for a reviewer who reads it in five seconds.

    In order: the verdict line (PASS, FAIL or ERROR; what changed against the baseline per
    system, with the languages and the query counts; "N of M checks evaluated"); the fixture
    ``title``, the baseline and gates files and the test; "What changed" (each compared
    system's significant changes, worst first, else its primary measures: before, after,
    change with interval, adjusted p-value, queries worse / better / unchanged; then the
    abstention AUC against the baseline of each system an abstention gate names); "Where" (the
    languages of those rows, marked where one moved differently from the whole, and the worst
    queries by ID); latency
    before and after; the failing checks; notes (changed definitions, systems left out, checks
    that cannot fail, the refresh advice); then, only with more than one system and labelled
    as not the change, the ablation within this run. Measure names are code spans
    (:func:`~evalkit.report.render.markdown_code`: copied exactly as typed); other text goes
    through :func:`~evalkit.report.render.markdown_plain`, so it reads raw in a CI log. At
    most ``max_lines`` lines (at least 30): a cut table says how many rows it left out."""
    max_lines = max(30, max_lines)
    if verdict.outcome == "ERROR":
        return gates_error_markdown(title=title, message="; ".join(verdict.stale))
    word = {"NONE": "no gates"}.get(verdict.outcome, verdict.outcome)
    line = verdict_line(verdict, code=_code)
    lines = [f"**evalkit gate: {word}** · {line}", ""]
    about = [title]
    if verdict.baseline_path:
        about.append(f"baseline {verdict.baseline_path}")
    if verdict.gates_source:
        about.append(f"gates {verdict.gates_source}")
    change = verdict.change
    if change is not None:
        about.append(change.settings.statement())
    lines += [_plain(" · ".join(about)), ""]
    if change is not None:
        lines += _change_sections(verdict, change, max_lines)
    failing = verdict.failing()
    if len(failing):
        lines += ["### Failing checks", ""]
        rows = []
        for row in failing.itertuples(index=False):
            rows.append(
                [
                    row.system,
                    _code(str(row.measure)),
                    row.language,
                    threshold_text(row),
                    _number(row.actual, check_digits(row)),
                    row.worst or "-",
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
    notes = definition_notes(verdict.definitions)
    if verdict.left_out:
        notes.append(
            f"not evaluated: {', '.join(verdict.left_out)} (gated, but left out of this run "
            "by --systems); their checks were not run"
        )
    if verdict.cannot_fail:
        notes.append(
            f"{verdict.cannot_fail} passing checks cannot fail (their baseline is "
            "already the measure's worst value)"
        )
    if verdict.advice and verdict.passed:
        notes.append(verdict.advice)
    if notes:
        lines += ["### Notes", "", *(f"- {_plain(note)}" for note in notes), ""]
    if ablation is not None and len(ablation.systems) > 1:
        lines += _base_section(ablation, max_lines - len(lines))
    return "\n".join(lines[:max_lines]).rstrip("\n") + "\n"


def _change_sections(verdict: GateVerdict, change: Change, max_lines: int) -> list[str]:
    lines = ["### What changed", ""]
    shown: list[Any] = list(verdict.shown_changes().itertuples(index=False))
    rows = [
        [
            row.system,
            _code(str(row.measure)),
            f"{row.before:.3f}",
            f"{row.after:.3f}",
            f"{_moved(str(row.direction), float(row.diff))} [{row.ci_low:+.3f}, "
            f"{row.ci_high:+.3f}]",
            _number(row.p_adjusted),
            _counts(row),
        ]
        for row in shown
    ]
    lines += _table(
        [
            "system",
            "measure",
            "baseline",
            "this run",
            "change [95% interval]",
            f"p ({change.settings.correction})",
            "queries worse / better / unchanged",
        ],
        rows,
        10,
        "rows",
        "the HTML report lists every measure",
    )
    lines.append("")
    abstaining = verdict.abstention_lines()
    if abstaining:
        lines += [*(f"- {_plain(text)}" for text in abstaining), ""]
    where: list[list[object]] = []
    worst_lines = []
    for row in shown:
        system, measure = str(row.system), str(row.measure)
        records: list[Any] = list(change.by_language(system, measure).itertuples(index=False))
        for lang in records:
            where.append(
                [
                    system,
                    _code(measure),
                    lang.language,
                    f"{lang.before:.3f} -> {lang.after:.3f}",
                    _moved(str(lang.direction), float(lang.diff)),
                    _counts(lang),
                    "yes" if lang.differs else "no",
                ]
            )
        worst = change.worst(system, measure)
        if worst and row.direction != "better":
            worst_lines.append(
                f"- {_plain(system)}, {_code(measure)}: worst queries {_plain(', '.join(worst))}"
            )
    if where or worst_lines:
        lines += ["### Where", ""]
        if where:
            lines += _table(
                [
                    "system",
                    "measure",
                    "language",
                    "baseline -> this run",
                    "change",
                    "worse / better / unchanged",
                    "moved differently from the whole",
                ],
                where,
                8,
                "rows",
                "the HTML report lists every language",
            )
            lines.append("")
        lines += [*worst_lines[:4], ""] if worst_lines else []
    latency = change.latency
    if len(latency):
        lines += ["### Latency (ms)", ""]
        lines += _table(
            ["system", "baseline n / median / p95", "this run n / median / p95", "note"],
            [
                [
                    row.system,
                    _latency_cell(row.count_before, row.median_ms_before, row.p95_ms_before),
                    _latency_cell(row.count_after, row.median_ms_after, row.p95_ms_after),
                    row.note or "-",
                ]
                for row in latency.itertuples(index=False)
            ],
            7,
            "systems",
            "the HTML report lists every system",
        )
        lines.append("")
    return lines


def _moved(direction: str, diff: float) -> str:
    """``worse -0.346`` when significant, else ``-0.192 (not significant)``."""
    if direction == "unchanged":
        return f"{diff:+.3f} (not significant)"
    return f"{direction} {diff:+.3f}"


def _counts(row: Any) -> str:
    """``28 / 3 / 51``: queries worse / better / unchanged of a change row."""
    return f"{int(row.worse)} / {int(row.better)} / {int(row.unchanged)}"


def _latency_cell(count: Any, median: Any, p95: Any) -> str:
    """``180 / 1.20 / 3.40``, or ``-`` when not measured."""
    if median is None or pd.isna(median):
        return "-"
    return f"{int(count)} / {float(median):.2f} / {float(p95):.2f}"


def _base_section(verdict: Verdict, available: int) -> list[str]:
    """The comparison with ``verdict.base`` within this run, labelled, and the ablation table,
    in ``available`` lines (the ablation first to go)."""
    others = [s for s in verdict.systems if s != verdict.base]
    lines = [
        f"### Ablation against {_plain(verdict.base)} (within this run, not the change; --base)",
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
                    _code(str(row.measure)),
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
    header = ["system", *(_code(m) for m in measures)]
    lines += markdown_table(header, table_rows, plain=True).splitlines()
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
