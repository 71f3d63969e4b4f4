"""Gate commands: ``gate`` (quality gates against a baseline, with CI outputs) and ``diff`` (two
reports or baselines compared).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.cli.common import (
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

    from evalkit.run.evaluate import Evaluation


# --- gate -----------------------------------------------------------------------------------


def _add_gate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "gate",
        help="evaluate a fixture and check its quality gates; exit 1 when a gate fails, 2 on a "
        "usage or input error (including a stale baseline)",
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
        "--output",
        default=None,
        help="workspace-relative path of the JSON report with a 'gates' section (or set "
        "EVALKIT_OUTPUT); by default nothing is written",
    )
    add_ci_options(p, "gate check")
    p.add_argument(
        "--base",
        default=None,
        help="the system the Markdown summary compares every other system with (default: the "
        "first system evaluated)",
    )
    return _run_gate


def _run_gate(args: argparse.Namespace) -> int:
    import pathlib

    from evalkit.errors import InputError
    from evalkit.gates.baseline import baseline_systems, check_baseline_fresh, load_report
    from evalkit.gates.check import check_gates, format_gate_table, gates_failed, gates_to_report
    from evalkit.gates.spec import load_gates
    from evalkit.run.report_json import write_report

    output = checked_output(args.output)
    check_ci_outputs(args, output)
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
    fixture = evaluation.fixture
    report = evaluation.to_report()
    if baseline is not None and gates.baseline is not None:
        check_baseline_fresh(
            report,
            baseline,
            systems=baseline_systems(report, baseline, gates.baseline),
            fixture=args.fixture,
            baseline_path=str(baseline_path),
            options=_refresh_options(args, evaluation.systems, baseline),
        )
    results = check_gates(report, gates, baseline)
    if output is not None:
        gated = {**report, "gates": gates_to_report(results)}
        write_report(gated, output, private=evaluation.private_texts())
        print(f"report: {shown(output)}")
    print(f"{fixture.meta.id} {fixture.meta.version}: gates {shown(gates_path)}", end="")
    print(f", baseline {shown(baseline_path)}" if baseline_path is not None else "")
    print(format_gate_table(results, failed_only=args.failed_only), end="")
    _write_gate_ci(args, evaluation, results)
    return 1 if gates_failed(results) else 0


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


def _write_gate_ci(args: argparse.Namespace, evaluation: Evaluation, results: pd.DataFrame) -> None:
    """``evalkit gate --junit/--markdown``: the gate checks as JUnit, the verdict as Markdown."""
    from evalkit.report.ci import gates_junit, gates_markdown
    from evalkit.report.verdict import build_verdict

    fixture = evaluation.fixture

    def markdown() -> str:
        base = args.base or evaluation.systems[0]
        verdict = build_verdict(evaluation, results, base=base)
        return gates_markdown(verdict, title=f"{fixture.meta.id} {fixture.meta.version}")

    write_ci_outputs(
        args,
        lambda: gates_junit(results, suite=fixture.meta.id),
        markdown,
        evaluation.private_texts(),
    )


# --- diff -----------------------------------------------------------------------------------


def _add_diff(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
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
    from evalkit.gates.baseline import load_report
    from evalkit.gates.diff import diff_reports, diff_to_json, format_diff

    old, new = load_report(args.old), load_report(args.new)
    diff = diff_reports(old, new)
    if args.json:
        print(diff_to_json(diff, old, new), end="")
    else:
        print(format_diff(diff, old, new, changed_only=args.changed_only), end="")
    return 0
