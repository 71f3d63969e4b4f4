"""Gate commands: ``gate`` (quality gates against a baseline, with CI outputs) and ``diff`` (two
reports or baselines compared).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from evalkit.cli._common import (
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
    from evalkit.gates import GateVerdict
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
    p.add_argument(
        "--gates",
        default=None,
        help="gates file (default: FIXTURE/gates.yaml; when there is none, a --baseline alone "
        "is checked by the default baseline gate)",
    )
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

    from evalkit.errors import InputError, StaleBaselineError
    from evalkit.gates import (
        DEFAULT_GATE_SOURCE,
        format_gate_table,
        gate_verdict,
        gates_to_report,
        load_gates,
        load_report,
        refresh_options,
    )
    from evalkit.report.ci import change_lines, definition_notes
    from evalkit.results import write_report

    gates_path = pathlib.Path(args.gates or pathlib.Path(args.fixture) / "gates.yaml")
    # A baseline alone (no --gates, no FIXTURE/gates.yaml: a collection just imported) is
    # checked by the default baseline gate, as `evalkit report --baseline` checks it.
    default_gate = args.gates is None and args.baseline is not None and not gates_path.exists()
    gates = None if default_gate else load_gates(gates_path)
    gates_source = DEFAULT_GATE_SOURCE if gates is None else shown(gates_path)
    baseline_path: pathlib.Path | None = None
    if gates is None:
        baseline_path = pathlib.Path(args.baseline)
    elif args.baseline is not None:
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
    options = (
        refresh_options(
            split_systems(args.systems) or [],
            evaluation.systems,
            baseline,
            k=args.k,
            repeats=args.repeats,
        )
        if baseline
        else []
    )
    verdict = gate_verdict(
        report,
        gates=gates,
        gates_source=gates_source,
        baseline=baseline,
        baseline_path=str(baseline_path),
        fixture=args.fixture,
        refresh_options=options,
        per_query=evaluation.per_query,
        allow_none_evaluated=args.allow_none_evaluated,
    )
    if verdict.outcome == "ERROR":
        raise StaleBaselineError(verdict.stale[0])
    results = verdict.results
    assert results is not None  # PASS or FAIL always has results
    if output is not None:
        gated_report = {**report, "gates": gates_to_report(results), "verdict": verdict.to_record()}
        write_report(gated_report, output, private=evaluation.private_texts())
        print(f"report: {shown(output)}")
    print(f"{fixture.meta.id} {fixture.meta.version}: gates {gates_source}", end="")
    print(f", baseline {shown(baseline_path)}" if baseline_path is not None else "")
    for note in definition_notes(verdict.definitions):
        print(note)
    if verdict.left_out:
        print(f"not evaluated: {', '.join(verdict.left_out)} (gated, but left out by --systems)")
    if verdict.advice:
        print(verdict.advice[0].upper() + verdict.advice[1:])
    table = format_gate_table(
        results, failed_only=args.failed_only, allow_none_evaluated=args.allow_none_evaluated
    )
    *rows, headline = table.splitlines()
    print("\n".join(rows))
    for line in change_lines(verdict):
        print(line)
    state["ci_written"] = True  # an error while writing them is not written into them
    _write_gate_ci(args, evaluation, verdict)
    print(headline)  # the verdict last, after the files written
    return 0 if verdict.passed else 1


def _write_gate_ci(args: argparse.Namespace, evaluation: Evaluation, verdict: GateVerdict) -> None:
    """``evalkit gate --junit/--markdown``: the verdict (gate checks and the change against the
    baseline) as JUnit and as Markdown, each failing check with its worst queries."""
    from evalkit.report.ci import gates_junit, gates_markdown
    from evalkit.report.verdict import build_verdict

    if not (args.junit or args.markdown):
        return
    fixture = evaluation.fixture
    title = f"{fixture.meta.id} {fixture.meta.version}"

    def markdown() -> str:
        ablation = None
        if len(evaluation.systems) > 1:
            base = args.base or evaluation.systems[0]
            ablation = build_verdict(evaluation, None, base=base)
        return gates_markdown(verdict, title=title, ablation=ablation)

    def junit() -> str:
        return gates_junit(verdict, suite=fixture.meta.id)

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


# --- history ---------------------------------------------------------------------------------


def add_history(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "history",
        help="a committed baseline across commits (git log --follow, git show): mean and "
        "interval per system and measure, and the first commit that moved a mean beyond the "
        "interval of the commit before it",
    )
    p.add_argument("baseline", help="the baseline JSON file, committed in a git work tree")
    p.add_argument("--systems", default=None, help="comma-separated systems (default: all)")
    p.add_argument("--measures", default=None, help="comma-separated measures (default: all)")
    p.add_argument(
        "--all-commits",
        action="store_true",
        help="follow every parent, not only the first (merged branches' states too)",
    )
    p.add_argument("--csv", default=None, help="also write the tidy table as CSV here")
    return _run_history


def _run_history(args: argparse.Namespace) -> int:
    from evalkit.gates import baseline_history, format_history

    history = baseline_history(
        args.baseline,
        systems=split_systems(args.systems),
        measures=[m.strip() for m in args.measures.split(",")] if args.measures else None,
        first_parent=not args.all_commits,
    )
    print(format_history(history), end="")
    if args.csv:
        from evalkit.safety.artifacts import write_artifact

        write_artifact(args.csv, history.to_csv(index=False), kind="text", private=())
        print(f"csv: {shown(args.csv)}")
    return 0


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
