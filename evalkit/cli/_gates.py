"""Gate commands: ``gate`` (quality gates against a baseline, with CI outputs) and ``diff`` (two
reports or baselines compared).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.cli._common import (
    DEFAULT_K,
    DEFAULT_REPEATS,
    Handler,
    add_ci_options,
    add_evaluation_options,
    check_ci_outputs,
    checked_output,
    evaluate_fixture,
    shown,
    split_systems,
    write_ci_outputs,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.gates import BaselineGate
    from evalkit.run import Evaluation


# --- gate -----------------------------------------------------------------------------------


def add_gate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "gate",
        help="evaluate a fixture and check its quality gates; exit 1 when a gate fails or no "
        "check was evaluated, 2 on a usage or input error (a stale baseline, a gate naming an "
        "unknown system); --junit and --markdown are written in every case but a leak",
    )
    add_evaluation_options(p)
    p.add_argument("--gates", default=None, help="gates file (default: FIXTURE/gates.yaml)")
    p.add_argument(
        "--baseline",
        default=None,
        help="baseline JSON file (default: the gates file's baseline.path, relative to it)",
    )
    p.add_argument(
        "--failed-only", action="store_true", help="list only failing checks in the table"
    )
    p.add_argument(
        "--allow-none-evaluated",
        action="store_true",
        help="pass when no gate check could be evaluated (e.g. every gated system left out by "
        "--systems); by default such a run fails, since it checked nothing",
    )
    p.add_argument(
        "--output",
        default=None,
        help="workspace-relative path of the JSON report with a 'gates' section (or set "
        "EVALKIT_OUTPUT); by default nothing is written",
    )
    add_ci_options(p, "gate check")
    p.add_argument(
        "--base",
        default=None,
        help="the system the Markdown summary compares every other system with, within this "
        "run (default: the first system evaluated); the verdict is against the gates and the "
        "baseline",
    )
    return _run_gate


def _run_gate(args: argparse.Namespace) -> int:
    """``evalkit gate``; on an input error (a stale baseline, an unknown gated system, a bad
    gates file) the --junit/--markdown files still get one error test case saying why."""
    from evalkit.errors import EvalkitError, LeakError, OutputError, UnsafePathError

    output = checked_output(args.output)
    check_ci_outputs(args, output)
    state: dict[str, Any] = {}
    try:
        return _gate(args, output, state)
    except EvalkitError as error:
        unwritable = isinstance(error, LeakError | OutputError | UnsafePathError)
        if unwritable or state.get("ci_written") or not (args.junit or args.markdown):
            raise
        try:
            _write_gate_error(args, error, state.get("evaluation"))
        except (LeakError, OutputError, UnsafePathError) as unwritten:
            note = f"evalkit: the --junit/--markdown files were not written: {unwritten}"
            print(note, file=sys.stderr)
        raise  # the first real error, whatever happened to the CI files


def _gate(args: argparse.Namespace, output: str | None, state: dict[str, Any]) -> int:
    import pathlib

    from evalkit.errors import InputError
    from evalkit.gates import (
        baseline_systems,
        changed_definitions,
        check_baseline_fresh,
        check_gates,
        format_gate_table,
        gate_counts,
        gate_outcome,
        gate_systems,
        gates_to_report,
        load_gates,
        load_report,
        refresh_advice,
    )
    from evalkit.report.ci import definition_notes
    from evalkit.run.report_json import write_report

    gates_path = pathlib.Path(args.gates or pathlib.Path(args.fixture) / "gates.yaml")
    gates = load_gates(gates_path)
    baseline_path: pathlib.Path | None = None
    if args.baseline is not None:
        if gates.baseline is None:
            raise InputError(
                f"--baseline was given but gates file {shown(gates_path)} has no baseline "
                "section; add 'baseline:' (see fixtures/README.md) or drop --baseline"
            )
        baseline_path = pathlib.Path(args.baseline)
    elif gates.baseline is not None:
        baseline_path = gates_path.parent / gates.baseline.path
    baseline = load_report(baseline_path) if baseline_path is not None else None
    evaluation = evaluate_fixture(args)
    state["evaluation"] = evaluation
    fixture = evaluation.fixture
    report = evaluation.to_report()
    options = _refresh_options(args, evaluation.systems, baseline) if baseline else []
    if baseline is not None and gates.baseline is not None:
        check_baseline_fresh(
            report,
            baseline,
            fixture=args.fixture,
            baseline_path=str(baseline_path),
            options=options,
        )
    results = check_gates(report, gates, baseline)
    compared: list[str] = []
    if baseline is not None and gates.baseline is not None:
        compared = baseline_systems(report, baseline, gates.baseline)
    definitions = changed_definitions(report, baseline, compared) if baseline else {}
    gated = gate_systems(gates)
    if baseline is not None and gates.baseline is not None and gates.baseline.systems == "all":
        gated += [str(s) for s in baseline.get("systems") or [] if s not in gated]
    left_out = [s for s in gated if s not in evaluation.systems]
    passed = gate_outcome(gate_counts(results), allow_none_evaluated=args.allow_none_evaluated)
    advice = ""
    if passed and definitions:
        advice = (
            f"the gates pass and {', '.join(definitions)} changed since the baseline: to make "
            f"this run the new baseline, "
            + refresh_advice(args.fixture, str(baseline_path), options)
        )
    if output is not None:
        gated_report = {**report, "gates": gates_to_report(results)}
        write_report(gated_report, output, private=evaluation.private_texts())
        print(f"report: {shown(output)}")
    print(f"{fixture.meta.id} {fixture.meta.version}: gates {shown(gates_path)}", end="")
    print(f", baseline {shown(baseline_path)}" if baseline_path is not None else "")
    for note in definition_notes(definitions):
        print(note)
    if left_out:
        print(f"not evaluated: {', '.join(left_out)} (gated, but left out by --systems)")
    if advice:
        print(advice[0].upper() + advice[1:])
    table = format_gate_table(
        results, failed_only=args.failed_only, allow_none_evaluated=args.allow_none_evaluated
    )
    *rows, headline = table.splitlines()
    print("\n".join(rows))
    state["ci_written"] = True  # an error while writing them is not written into them
    _write_gate_ci(
        args,
        evaluation,
        results,
        baseline=baseline,
        spec=gates.baseline,
        compared=compared,
        definitions=definitions,
        left_out=left_out,
        advice=advice,
    )
    print(headline)  # the verdict last, after the files written
    return 0 if passed else 1


def _refresh_options(
    args: argparse.Namespace, evaluated: Sequence[str], baseline: Mapping[str, Any]
) -> list[str]:
    """The options of an ``evalkit baseline`` command that refreshes ``baseline`` for this
    evaluation: ``--k`` and ``--repeats`` as given (when not the defaults), and ``--systems``
    for every system of the baseline and of this evaluation, so a gate on a subset never
    suggests a baseline of the subset (left out when that is the five reference systems). A
    system's spec is the one it was given here, or its name for a reference system, else a
    placeholder to fill in."""
    from evalkit.systems.reference import REFERENCE_SYSTEMS

    specs = split_systems(args.systems) or []
    spec_of = dict(zip(evaluated, specs or REFERENCE_SYSTEMS, strict=False))
    previous = [str(name) for name in baseline.get("systems", []) if isinstance(name, str)]
    names = [*previous, *(name for name in evaluated if name not in previous)]
    wanted = [
        spec_of.get(name) or (name if name in REFERENCE_SYSTEMS else f"<spec of {name}>")
        for name in names
    ]
    options: list[str] = []
    if wanted != list(REFERENCE_SYSTEMS):
        options += ["--systems", ",".join(wanted)]
    if args.k != DEFAULT_K:
        options += ["--k", str(args.k)]
    if args.repeats != DEFAULT_REPEATS:
        options += ["--repeats", str(args.repeats)]
    return options


def _write_gate_ci(
    args: argparse.Namespace,
    evaluation: Evaluation,
    results: pd.DataFrame,
    *,
    baseline: Mapping[str, Any] | None,
    spec: BaselineGate | None,
    compared: list[str],
    definitions: Mapping[str, tuple[str, str]],
    left_out: list[str],
    advice: str,
) -> None:
    """``evalkit gate --junit/--markdown``: the gate checks as JUnit, the verdict as Markdown,
    each failing check with its worst queries."""
    from evalkit.gates import language_changes, worst_queries
    from evalkit.report.ci import GateContext, gates_junit, gates_markdown
    from evalkit.report.verdict import build_verdict

    if not (args.junit or args.markdown):
        return
    fixture = evaluation.fixture
    worst = worst_queries(results, evaluation.per_query, baseline)

    def markdown() -> str:
        base = args.base or evaluation.systems[0]
        verdict = build_verdict(
            evaluation, results, base=base, allow_none_evaluated=args.allow_none_evaluated
        )
        languages = None
        if baseline is not None and spec is not None:
            languages = language_changes(evaluation.to_report(), baseline, spec, compared)
        failing = [
            tuple(w) for w, status in zip(worst, results["status"], strict=True) if status == "fail"
        ]
        context = GateContext(
            baseline=baseline is not None,
            worst=tuple(failing),
            languages=languages,
            definitions=definitions,
            left_out=tuple(left_out),
            advice=advice,
        )
        return gates_markdown(
            verdict, title=f"{fixture.meta.id} {fixture.meta.version}", context=context
        )

    def junit() -> str:
        return gates_junit(
            results,
            suite=fixture.meta.id,
            allow_none_evaluated=args.allow_none_evaluated,
            definitions=definitions,
            worst=worst,
        )

    write_ci_outputs(args, junit, markdown, evaluation.private_texts())


def _write_gate_error(
    args: argparse.Namespace, error: BaseException, evaluation: Evaluation | None
) -> None:
    """--junit/--markdown of a gate run that could not check its gates: one error test case
    and a Markdown line saying why (the error's message, which is ID-only as on stderr)."""
    import pathlib

    from evalkit.report.ci import gates_error_junit, gates_error_markdown
    from evalkit.safety.names import safe_id

    if evaluation is not None:
        suite = evaluation.fixture.meta.id
        title = f"{suite} {evaluation.fixture.meta.version}"
        private = evaluation.private_texts()
    else:
        suite = safe_id(pathlib.Path(args.fixture).name) or "fixture"
        title, private = suite, []
    message = _ci_message(args, str(error))
    write_ci_outputs(
        args,
        lambda: gates_error_junit(suite=suite, message=message),
        lambda: gates_error_markdown(title=title, message=message),
        private,
    )


def _ci_message(args: argparse.Namespace, message: str) -> str:
    """``message`` with each path given on the command line (as given, absolute or resolved,
    quoted or not; longest first) replaced by what it is, so a CI file never holds a path."""
    import os

    given = {
        args.fixture: "the fixture folder",
        args.gates: "the --gates file",
        args.baseline: "the --baseline file",
    }
    if args.gates is not None:
        given[os.path.dirname(os.path.abspath(args.gates))] = "the --gates file's folder"
    forms = {
        form: label
        for path, label in given.items()
        if path
        for form in (str(path), os.path.abspath(path), os.path.realpath(path))
    }
    for form in sorted(forms, key=len, reverse=True):
        message = message.replace(repr(form), forms[form]).replace(form, forms[form])
    return message


# --- diff -----------------------------------------------------------------------------------


def add_diff(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "diff",
        help="compare two reports or baselines: per system/measure/language and per query ID",
    )
    p.add_argument("old", help="old report or baseline JSON file")
    p.add_argument("new", help="new report or baseline JSON file")
    p.add_argument("--json", action="store_true", help="print canonical JSON instead of tables")
    p.add_argument("--changed-only", action="store_true", help="leave unchanged summary rows out")
    return _run_diff


def _run_diff(args: argparse.Namespace) -> int:
    from evalkit.gates import diff_reports, diff_to_json, format_diff, load_report

    old, new = load_report(args.old), load_report(args.new)
    diff = diff_reports(old, new)
    if args.json:
        print(diff_to_json(diff, old, new), end="")
    else:
        print(format_diff(diff, old, new, changed_only=args.changed_only), end="")
    return 0
