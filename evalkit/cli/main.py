"""The ``evalkit`` command.

Exit codes: 0 success; 1 a check failed (invalid fixture, failed gate, failed probe threshold,
leak found); 2 a usage or input error (bad arguments, unreadable file, unsafe output path).
Each subcommand is one ``_add_<name>`` function (its arguments) and one ``_run_<name>`` function.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from evalkit.errors import EvalkitError, LeakError, SystemFailedError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd

    from evalkit.fixtures import Fixture
    from evalkit.run.evaluate import Evaluation
    from evalkit.safety.privacy import PrivateText

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _print_error(error: BaseException) -> None:
    print(f"evalkit: error: {error}", file=sys.stderr)


# --- validate -------------------------------------------------------------------------------


def _add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("validate", help="check a fixture directory against the strict schema")
    p.add_argument("path", help="fixture directory")
    p.add_argument(
        "--since",
        default=None,
        metavar="OLD",
        help="also check the version rule (fixtures/CONTRIBUTING.md) against OLD: a fixture "
        "directory, or a release record such as fixtures/releases.json (its last release of "
        "this fixture); exit 1 when the content changed more than the version bump allows",
    )
    return _run_validate


def _run_validate(args: argparse.Namespace) -> int:
    from collections import Counter
    from pathlib import Path

    from evalkit.errors import FixtureError
    from evalkit.fixtures import load_fixture

    path = Path(args.path)
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory"
        _print_error(EvalkitError(f"fixture directory {_quoted(args.path)} {what}"))
        return 2
    try:
        fixture = load_fixture(path)
    except FixtureError as error:
        for problem in error.problems:
            print(problem)
        print(f"{_shown(args.path)}: invalid — {len(error.problems)} problem(s)")
        return 1
    per_language = Counter(q.language for q in fixture.queries)
    no_answer = sum(1 for q in fixture.queries if not q.answerable)
    languages = ", ".join(f"{lang}: {per_language[lang]}" for lang in sorted(per_language))
    print(
        f"{fixture.meta.id} {fixture.meta.version}: valid — {len(fixture.documents)} documents, "
        f"{len(fixture.chunks)} chunks, {len(fixture.queries)} queries "
        f"({languages}; {no_answer} no-answer)"
    )
    if args.since is not None:
        return _check_since(fixture, args.since)
    return 0


def _check_since(fixture: Fixture, since: str) -> int:
    """``validate --since``: the version rule against an old directory or a release record."""
    import os

    from evalkit.fixtures.diff import fixture_outline, scan_output
    from evalkit.fixtures.versioning import check_releases, check_version, read_releases

    new = fixture_outline(fixture)
    if os.path.isdir(since):
        old_fixture = _load_old_fixture(since)
        check = check_version(fixture_outline(old_fixture), new)
        lines = [
            f"version rule against {since}: {check.bump} bump, {len(check.changes)} change(s), "
            f"needs {check.required}: {'ok' if check.ok else 'FAILED'}",
            *check.problems(),
        ]
        failed, others = not check.ok, [old_fixture]
    else:
        summary, problems = check_releases(read_releases(since), new)
        lines = [f"version rule against {since} ({summary}): {'FAILED' if problems else 'ok'}"]
        lines += problems
        failed, others = bool(problems), []
    text = "\n".join(lines) + "\n"
    scan_output(text, [fixture, *others])
    print(text, end="")
    return 1 if failed else 0


def _load_old_fixture(path: str, side: str = "old") -> Fixture:
    """One side of a comparison; an invalid one is an input error (exit 2)."""
    from evalkit.errors import FixtureError, InputError
    from evalkit.fixtures import load_fixture

    try:
        return load_fixture(path)
    except FixtureError as error:
        raise InputError(
            f"the {side} fixture {path!r} does not load ({len(error.problems)} problem(s)); "
            f"expected a valid fixture directory — run `evalkit validate {path}`"
        ) from None


# --- run ------------------------------------------------------------------------------------


DEFAULT_K: Final = 10
DEFAULT_REPEATS: Final = 2


def _add_evaluation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("fixture", help="fixture directory")
    p.add_argument(
        "--systems",
        default=None,
        help="comma-separated system names, package.module:factory specs, run:PATH (a TREC or "
        "JSONL run file) or http:NAME (a service at $EVALKIT_HTTP_<NAME>_URL) (default: all "
        "five reference systems)",
    )
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"ranking cutoff (default {DEFAULT_K})")
    p.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"determinism repeats (default {DEFAULT_REPEATS})",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="most search calls in flight at once for systems that allow it, e.g. http:NAME "
        "(default 1); latency is still measured per call and results stay in query order",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run the systems and repeats in up to this many processes of this machine "
        "(default 1); the same results, but latency is measured beside the other workers",
    )


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

    specs = _split_systems(args.systems) or []
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


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("run", help="evaluate systems on a fixture; print summary and latency")
    _add_evaluation_options(p)
    p.add_argument(
        "--output",
        default=None,
        help="workspace-relative path of the JSON report (or set EVALKIT_OUTPUT); "
        "by default nothing is written",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the systems on the Dask cluster of this scheduler (e.g. tcp://HOST:8786); "
        "needs pip install 'evalkit[dask]' here and on the workers",
    )
    return _run_run


def _split_systems(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [part.strip() for part in value.split(",") if part.strip()]
    return names or None


def _evaluate_fixture(args: argparse.Namespace, *, progress: bool = False) -> Evaluation:
    """Load ``args.fixture`` and evaluate it with ``args.systems``, ``args.k``, ``args.repeats``."""
    from evalkit.fixtures import load_fixture
    from evalkit.run.evaluate import evaluate

    fixture = load_fixture(args.fixture)
    systems = _split_systems(args.systems)
    from evalkit.systems.reference import no_aliases_notice

    notice = no_aliases_notice(fixture.aliases, systems)
    if notice:
        print(notice, file=sys.stderr)
    scheduler = getattr(args, "scheduler", None)
    with contextlib.ExitStack() as stack:
        client = None
        if scheduler is not None:
            from evalkit.measures.cluster import connect

            client = stack.enter_context(connect(scheduler))
        return evaluate(
            fixture,
            systems,
            k=args.k,
            repeats=args.repeats,
            progress=progress,
            concurrency=args.concurrency,
            client=client,
            workers=args.workers,
        )


def _checked_output(cli_value: str | None) -> str | None:
    """``--output`` or ``$EVALKIT_OUTPUT`` (None: write nothing), refused early if unsafe."""
    from evalkit.safety.artifacts import check_output
    from evalkit.safety.output import output_path_from_env

    output = output_path_from_env(cli_value)
    if output is not None:
        check_output(output)  # refuse an unsafe path before any work; creates nothing
    return output


def _shown(path: object) -> str:
    """A path for a printed line: as given, or a note when it must not be shown."""
    from evalkit.safety.output import unshown_reason

    text = str(path)
    reason = unshown_reason(text)
    return text if reason is None else f"(path not shown: {reason})"


def _quoted(path: object) -> str:
    """A path for an error message: quoted, or a note when it must not be shown."""
    from evalkit.safety.output import shown_path

    return shown_path(str(path))


def _run_run(args: argparse.Namespace) -> int:
    from evalkit.run.report_json import write_report

    output = _checked_output(args.output)
    evaluation = _evaluate_fixture(args, progress=sys.stderr.isatty())
    fixture = evaluation.fixture
    table = evaluation.summary().pivot(index="system", columns="measure", values="value")
    table = table.loc[list(evaluation.systems), [m for m in evaluation.measures if m in table]]
    print(f"{fixture.meta.id} {fixture.meta.version}: {len(fixture.queries)} queries, k={args.k}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print()
    latency = evaluation.latency_summary().set_index("system").drop(columns="measured")
    print(latency.to_string(float_format=lambda v: f"{v:.3f}", na_rep="not measured"))
    for name, notes in evaluation.notes.items():
        if "queriesMissing" in notes:
            print(
                f"run {name}: latency not measured; {notes['queriesMissing']} of "
                f"{notes['queries']} queries not in the run (scored as returning nothing)"
            )
    report = evaluation.to_report()
    print()
    print(f"corpusHash: {report['corpusHash']}")
    print(f"evaluationDefinitionHash: {report['evaluationDefinitionHash']}")
    print(f"determinism: {report['determinism']['verdict']} ({evaluation.repeats} repeats)")
    if output is not None:
        write_report(report, output, private=evaluation.private_texts())
        print(f"report: {_shown(output)}")
    return 0


# --- probes ---------------------------------------------------------------------------------


def _add_probes(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "probes",
        help="run tool probes against a target; exit 1 on a failed threshold or a drop from "
        "the baseline, 2 when a probe could not run",
    )
    p.add_argument("fixtures", help="directory of probe .yaml files")
    p.add_argument("--target", required=True, help="target name, e.g. stdlib")
    p.add_argument(
        "--output",
        default=None,
        help="workspace-relative path of the canonical JSON report; by default nothing is "
        "written (EVALKIT_OUTPUT is for evaluation reports and is not read here)",
    )
    p.add_argument(
        "--baseline", default=None, help="a committed probes report to compare recall/precision"
    )
    _add_ci_options(p, "probe")
    return _run_probes


def _run_probes(args: argparse.Namespace) -> int:
    import warnings

    from evalkit.probes import (
        baseline_drops,
        format_table,
        get_target,
        load_probes,
        probes_report,
        run_probes,
    )
    from evalkit.run.report_json import read_json_object
    from evalkit.safety.artifacts import check_output, write_artifact
    from evalkit.safety.canonical import canonical_json

    output = args.output
    if output is not None:
        check_output(output)  # refuse an unsafe path before running anything; creates nothing
    _check_ci_outputs(args, output)
    baseline = None
    if args.baseline is not None:
        baseline = read_json_object(
            args.baseline,
            "baseline",
            "expected a JSON file written by `evalkit probes ... --output PATH`",
        )
    target = get_target(args.target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probes = load_probes(args.fixtures, tools=target.tools.names())
    for warning in caught:
        print(f"evalkit: warning: {warning.message}", file=sys.stderr)
    results = run_probes(target.tools, probes)
    report = probes_report(
        results, target=target.name, fingerprint=target.fingerprint, probes=probes
    )
    print(format_table(results))
    summary = report["summary"]
    print(
        f"\n{target.name}: {summary['probes']} probes, {summary['passed']} passed, "
        f"{summary['failed']} failed, {summary['errors']} could not run; "
        f"total tool time {results['latency_ms'].sum():.1f} ms"
    )
    for row in results[results["status"] == "error"].itertuples():
        print(f"error: {row.error}", file=sys.stderr)
    drops_found = False
    drops = None
    if baseline is not None:
        drops = baseline_drops(report, baseline)
        drops_found = not drops.empty
        if baseline.get("target", {}).get("fingerprint") != target.fingerprint:
            print("baseline: note: made from different target data (e.g. another Python)")
        if drops_found:
            print("baseline: dropped below the baseline:")
            print(drops.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-"))
        else:
            print(f"baseline: no recall/precision drop against {_shown(args.baseline)}")
    if output is not None:
        # A probe run has no private text (probes name public code symbols): the artifact gets
        # the path check and the shape scan (no path, endpoint or credential in any string).
        write_artifact(output, canonical_json(report), kind="json", private=())
        print(f"report: {_shown(output)}")
    from evalkit.report.ci import probes_junit, probes_markdown

    _write_ci_outputs(
        args,
        lambda: probes_junit(results, suite=target.name, drops=drops),
        lambda: probes_markdown(results, target=target.name, drops=drops),
        (),
    )
    if summary["errors"]:
        return 2
    return 1 if summary["failed"] or drops_found else 0


# --- gate, baseline, diff -------------------------------------------------------------------


def _add_gate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "gate",
        help="evaluate a fixture and check its quality gates; exit 1 when a gate fails, 2 on a "
        "usage or input error (including a stale baseline)",
    )
    _add_evaluation_options(p)
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
    _add_ci_options(p, "gate check")
    p.add_argument(
        "--base",
        default=None,
        help="the system the Markdown summary compares every other system with (default: the "
        "first system evaluated)",
    )
    return _run_gate


def _add_ci_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--junit",
        default=None,
        metavar="PATH",
        help=f"workspace-relative path of a JUnit XML report (one test case per {what})",
    )
    p.add_argument(
        "--markdown",
        default=None,
        metavar="PATH",
        help="workspace-relative path of an ID-only Markdown summary (at most 60 lines), e.g. "
        "for a pull-request comment or $GITHUB_STEP_SUMMARY",
    )


def _check_ci_outputs(args: argparse.Namespace, output: str | None) -> None:
    """Refuse unsafe --junit/--markdown paths, and any two of the JSON ``output`` (--output
    or $EVALKIT_OUTPUT), --junit and --markdown on one file, before any work (creates
    nothing)."""
    from evalkit.safety.artifacts import check_distinct, check_output

    for path in (args.junit, args.markdown):
        if path is not None:
            check_output(path)
    check_distinct([("--output", output), ("--junit", args.junit), ("--markdown", args.markdown)])


def _write_ci_outputs(
    args: argparse.Namespace,
    junit: Callable[[], str],
    markdown: Callable[[], str],
    private: Iterable[PrivateText],
) -> None:
    """Write --junit and --markdown together through the artifact writer (leak-scanned)."""
    from evalkit.safety.artifacts import Artifact, write_artifacts

    artifacts = [
        Artifact(path, make(), "text")
        for path, make in ((args.junit, junit), (args.markdown, markdown))
        if path is not None
    ]
    if artifacts:
        write_artifacts(artifacts, private=private)
        for artifact in artifacts:
            print(
                f"{'junit' if artifact.path == args.junit else 'markdown'}: {_shown(artifact.path)}"
            )


def _run_gate(args: argparse.Namespace) -> int:
    import pathlib

    from evalkit.errors import InputError
    from evalkit.gates.check import (
        baseline_systems,
        check_baseline_fresh,
        check_gates,
        format_gate_table,
        gates_failed,
        gates_to_report,
        load_gates,
        load_report,
    )
    from evalkit.run.report_json import write_report

    output = _checked_output(args.output)
    _check_ci_outputs(args, output)
    gates_path = pathlib.Path(args.gates or pathlib.Path(args.fixture) / "gates.yaml")
    gates = load_gates(gates_path)
    baseline_path: pathlib.Path | None = None
    if args.baseline is not None:
        if gates.baseline is None:
            raise InputError(
                f"--baseline was given but gates file {_shown(gates_path)} has no baseline "
                "section; add 'baseline:' (see fixtures/README.md) or drop --baseline"
            )
        baseline_path = pathlib.Path(args.baseline)
    elif gates.baseline is not None:
        baseline_path = gates_path.parent / gates.baseline.path
    baseline = load_report(baseline_path) if baseline_path is not None else None
    evaluation = _evaluate_fixture(args)
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
        print(f"report: {_shown(output)}")
    print(f"{fixture.meta.id} {fixture.meta.version}: gates {_shown(gates_path)}", end="")
    print(f", baseline {_shown(baseline_path)}" if baseline_path is not None else "")
    print(format_gate_table(results, failed_only=args.failed_only), end="")
    _write_gate_ci(args, evaluation, results)
    return 1 if gates_failed(results) else 0


def _write_gate_ci(args: argparse.Namespace, evaluation: Evaluation, results: pd.DataFrame) -> None:
    """``evalkit gate --junit/--markdown``: the gate checks as JUnit, the verdict as Markdown."""
    from evalkit.report.ci import gates_junit, gates_markdown
    from evalkit.report.verdict import build_verdict

    fixture = evaluation.fixture

    def markdown() -> str:
        base = args.base or evaluation.systems[0]
        verdict = build_verdict(evaluation, results, base=base)
        return gates_markdown(verdict, title=f"{fixture.meta.id} {fixture.meta.version}")

    _write_ci_outputs(
        args,
        lambda: gates_junit(results, suite=fixture.meta.id),
        markdown,
        evaluation.private_texts(),
    )


def _add_baseline(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "baseline",
        help="evaluate a fixture and write its deterministic projection (no latency) as a "
        "canonical JSON baseline",
    )
    _add_evaluation_options(p)
    p.add_argument(
        "--output",
        default=None,
        required=True,
        help="workspace-relative path of the baseline, e.g. fixtures/<id>/baseline.json",
    )
    return _run_baseline


def _run_baseline(args: argparse.Namespace) -> int:
    from evalkit.gates.check import write_baseline
    from evalkit.safety.artifacts import check_output

    output = args.output
    check_output(output, baseline=True)  # refuse an unsafe path before any work
    evaluation = _evaluate_fixture(args)
    report = evaluation.to_report()
    write_baseline(report, output, private=evaluation.private_texts())
    hash_ = report["evaluationDefinitionHash"]
    print(f"baseline: {_shown(output)} (evaluationDefinitionHash {hash_})")
    return 0


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
    from evalkit.gates.check import load_report
    from evalkit.gates.diff import diff_reports, diff_to_json, format_diff

    old, new = load_report(args.old), load_report(args.new)
    diff = diff_reports(old, new)
    if args.json:
        print(diff_to_json(diff, old, new), end="")
    else:
        print(format_diff(diff, old, new, changed_only=args.changed_only), end="")
    return 0


# --- report ---------------------------------------------------------------------------------

_REPORT_DEFAULT_FIXTURE = "fixtures/synthetic-bilingual-v1"
_REPORT_DEFAULT_OUTPUT = "reports/retrieval-report.html"


def _add_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "report",
        help="execute the report notebook headless and write scrubbed, offline HTML (and the "
        "executed .ipynb beside it); exit 1 when the notebook fails or the leak scan finds "
        "fixture text (nothing is written), 2 on a usage error",
        description="Execute notebooks/retrieval_report.ipynb with papermill on a kernel of this "
        "Python, scrub it (no absolute paths, no tracebacks, no papermill environment), export "
        "HTML without code and without external resources, scan both for fixture text and "
        "write them. Parameters: fixture, systems, k, base_system, redact, baseline, seed, "
        "n_resamples, worst, concurrency (see the notebook's parameters cell); systems may "
        "include run:PATH and http:NAME. They are checked first: an unknown system, a "
        "base_system not among the systems (when given; else the first system is the base if "
        "hybrid is not evaluated) or k < 1 exits 2 before the notebook runs. With "
        "'-p redact false' the report shows query and chunk text: it is refused unless "
        "--allow-unredacted is given, and is then written unscanned with a 'do not publish' "
        "banner.",
    )
    p.add_argument(
        "fixture",
        nargs="?",
        default=None,
        help=f"fixture directory (default: the notebook's, {_REPORT_DEFAULT_FIXTURE})",
    )
    p.add_argument(
        "--output",
        default=_REPORT_DEFAULT_OUTPUT,
        help=f"workspace-relative .html path (default {_REPORT_DEFAULT_OUTPUT}); the executed "
        "notebook goes beside it as .ipynb",
    )
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="set a notebook parameter, e.g. -p systems lexical,hybrid -p k 5 (repeatable)",
    )
    p.add_argument(
        "--allow-unredacted",
        action="store_true",
        help="allow '-p redact false': the report then contains private fixture text, is not "
        "leak-scanned and must not be published",
    )
    p.add_argument(
        "--notebook",
        default=None,
        help="report notebook to execute (default: notebooks/retrieval_report.ipynb)",
    )
    return _run_report


def _run_report(args: argparse.Namespace) -> int:
    import os

    from evalkit.errors import LeakError, NotebookError
    from evalkit.report.notebook import (
        DEFAULT_REPORT_NOTEBOOK,
        check_report_output,
        coerce_parameters,
        notebook_parameters,
        render_report,
        write_rendered_report,
    )

    notebook = args.notebook or DEFAULT_REPORT_NOTEBOOK
    check_report_output(args.output)  # suffix, HTML and sibling .ipynb: before executing
    pairs = [(str(name), str(value)) for name, value in args.parameter]
    if args.fixture is not None:
        pairs.insert(0, ("fixture", args.fixture))
    parameters = coerce_parameters(pairs, notebook_parameters(notebook))
    try:
        rendered = render_report(
            parameters, notebook=notebook, allow_unredacted=args.allow_unredacted
        )
    except (LeakError, NotebookError) as error:
        _print_error(error)
        return 1
    html_path, notebook_path = write_rendered_report(rendered, args.output)
    if not rendered.redacted:
        print("warning: this report contains private fixture text; do not publish it")
    print(f"notebook: {notebook_path.relative_to(os.getcwd()).as_posix()}")
    print(f"report: {html_path.relative_to(os.getcwd()).as_posix()}")
    return 0


# --- schema ---------------------------------------------------------------------------------


def _add_schema(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of a fixture file (committed in evalkit/schema/ too)",
    )
    p.add_argument("kind", choices=("fixture", "documents", "chunks", "queries", "aliases"))
    return _run_schema


def _run_schema(args: argparse.Namespace) -> int:
    import json

    from evalkit.fixtures import fixture_json_schema

    print(json.dumps(fixture_json_schema(args.kind), indent=2, ensure_ascii=False))
    return 0


# --- trec-eval ------------------------------------------------------------------------------


def _add_trec_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "trec-eval",
        help="score a TREC run against TREC qrels, printing trec_eval-style lines",
        description="Print 'measure<TAB>query_id|all<TAB>value' lines. Every qrels query counts "
        "in 'all' (trec_eval -c) unless --no-complete; counts (NumRet, NumRel, NumRelRet) are "
        "summed, others averaged.",
    )
    p.add_argument("qrels", help="TREC qrels file (.gz allowed)")
    p.add_argument(
        "run",
        help="TREC run file (.gz allowed) or Parquet file or dataset, of any size: read in "
        "blocks of whole queries, with a progress bar on a terminal",
    )
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        required=True,
        dest="measures",
        metavar="MEASURE",
        help="measure in ir_measures syntax, e.g. nDCG@10, AP, 'R(rel=2)@100' (repeatable)",
    )
    p.add_argument("-q", action="store_true", dest="per_query", help="also print per-query lines")
    p.add_argument(
        "--trec-names",
        action="store_true",
        help="print trec_eval's measure names (ndcg_cut_10, map, P_10, ...) where one exists",
    )
    p.add_argument(
        "--trec-version",
        choices=("9", "10"),
        default="10",
        help="trec_eval release to reproduce: 10 (default) ranks by float64 scores, 9 (9.0.8, "
        "pytrec-eval-terrier) by float32 scores",
    )
    p.add_argument(
        "-M",
        type=_non_negative,
        default=None,
        dest="max_docs",
        metavar="N",
        help="use at most N ranked docs per query (trec_eval -M)",
    )
    p.add_argument(
        "-J",
        action="store_true",
        dest="judged_only",
        help="drop the docs the qrels do not grade, then rank the rest (trec_eval -J)",
    )
    p.add_argument(
        "-N",
        type=_non_negative,
        default=None,
        dest="num_docs",
        metavar="N",
        help="number of docs in the collection, for Utility (trec_eval -N)",
    )
    p.add_argument(
        "--no-complete",
        action="store_true",
        help="average only over queries in both files (trec_eval without -c); by default "
        "every qrels query counts, like trec_eval -c",
    )
    p.add_argument(
        "--duplicates",
        choices=("error", "keep-first"),
        default="error",
        help="a document listed twice for one query in the run: an error (default), or keep "
        "the occurrence ranked first",
    )
    p.add_argument(
        "--subtopic-qrels",
        default=None,
        metavar="PATH",
        help="subtopic qrels ('query_id subtopic doc_id relevance' lines, as ndeval reads) for "
        "the diversity measures: alpha_nDCG@k, ERR_IA@k, NRBP, AP_IA, P_IA@k, StRecall@k, ...",
    )
    return _run_trec_eval


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _run_trec_eval(args: argparse.Namespace) -> int:
    import warnings

    from evalkit.errors import InputError
    from evalkit.formats import read_qrels, read_subtopic_qrels
    from evalkit.measures import parse_measures, score, trec_name
    from evalkit.measures.engine import trec_summary
    from evalkit.measures.stream import read_source

    measures = parse_measures(args.measures)
    qrels = read_qrels(args.qrels)
    subtopics = None if args.subtopic_qrels is None else read_subtopic_qrels(args.subtopic_qrels)
    # the diversity measures rank an in-memory run; every other measure streams the run file
    # in blocks of whole queries (trec_eval ranks by score and ignores the rank field)
    run = args.run if subtopics is None else read_source(args.run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            per_query = score(
                qrels,
                run,
                measures,
                trec_version=args.trec_version,
                max_docs=args.max_docs,
                judged_only=args.judged_only,
                complete=not args.no_complete,
                num_docs=args.num_docs,
                subtopics=subtopics,
                duplicates=args.duplicates,
            )
        except InputError as error:  # e.g. a doc judged twice: name the file it came from
            source = args.qrels if str(error).startswith("qrels") else args.run
            message = str(error).replace("duplicates='keep-first'", "--duplicates keep-first")
            raise InputError(
                f"{source}: {message} (rows count the file's data lines from 0)"
            ) from None
    for warning in caught:
        print(f"evalkit: warning: {warning.message}", file=sys.stderr)
    names = {}
    for m in measures:
        try:
            names[str(m)] = trec_name(m) if args.trec_names else str(m)
        except EvalkitError:
            names[str(m)] = str(m)
    lines = []
    for query_id, measure, text in trec_summary(per_query, per_query_lines=args.per_query):
        lines.append(f"{names[measure]}\t{query_id}\t{text}")
    print("\n".join(lines))
    return 0


# --- fixture diff, locate, release ----------------------------------------------------------


def _add_fixture(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "fixture",
        help="fixture governance: diff two versions by ID, locate a span, record a release",
    )
    group = p.add_subparsers(dest="fixture_command", required=True, metavar="FIXTURE_COMMAND")
    d = group.add_parser(
        "diff",
        help="what changed between two fixture directories, IDs only (no text unless "
        "--show-text --allow-text); exit 1 if the output would contain fixture text",
    )
    d.add_argument(
        "old",
        help="old fixture directory, or a release record (fixtures/releases.json: the last "
        "recorded release of the new fixture's ID; its text is not available to --show-text)",
    )
    d.add_argument("new", help="new fixture directory")
    d.add_argument("--json", action="store_true", help="print canonical JSON instead of tables")
    d.add_argument(
        "--show-text",
        action="store_true",
        help="also show the text of each change (private: needs --allow-text)",
    )
    d.add_argument(
        "--allow-text",
        action="store_true",
        help="allow --show-text: the output then contains private fixture text, is not "
        "leak-scanned and must not leave the team",
    )
    d.set_defaults(fixture_handler=_run_fixture_diff)
    loc = group.add_parser(
        "locate",
        help="find ANSWER in a chunk: the verbatim span and its offsets, or the closest "
        "candidates. Prints fixture text by design (it is for the span's author); logs nothing",
        description="Print where ANSWER occurs in CHUNK_ID's text as a span to paste into the "
        "judgment of QUERY_ID: exact matches first, then matches ignoring white space, case "
        "and compatibility forms (NFKC), else the closest fuzzy candidates. The output shows "
        "fixture text on purpose: it is for the person authoring the span. Nothing is logged "
        "or written. Exit 0 with a match, 1 with candidates only or none.",
    )
    loc.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    loc.add_argument("query_id", help="the query the span is for")
    loc.add_argument("chunk_id", help="the chunk to search")
    loc.add_argument("answer", help="the answer words, as you remember them")
    loc.add_argument("--limit", type=int, default=5, help="fuzzy candidates to show (default 5)")
    loc.set_defaults(fixture_handler=_run_fixture_locate)
    rel = group.add_parser(
        "release",
        help="record the fixture's current version in the release record (after checking "
        "the version rule against the last recorded release)",
    )
    rel.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    rel.add_argument(
        "--releases",
        default=None,
        help="workspace-relative release record (default: releases.json beside the fixture "
        "directory, e.g. fixtures/releases.json)",
    )
    rel.set_defaults(fixture_handler=_run_fixture_release)
    conv = group.add_parser(
        "convert",
        help="write a fixture in another form (yaml, or jsonl/parquet for documents, chunks "
        "and queries) to a new directory; lossless, same content hash",
    )
    conv.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    conv.add_argument("--to", required=True, choices=("yaml", "jsonl", "parquet"), dest="form")
    conv.add_argument(
        "--output", required=True, help="new workspace-relative directory (must not exist)"
    )
    conv.set_defaults(fixture_handler=_run_fixture_convert)
    return _run_fixture


def _run_fixture_convert(args: argparse.Namespace) -> int:
    from evalkit.errors import FixtureError
    from evalkit.fixtures.convert import convert_fixture
    from evalkit.fixtures.diff import fixture_content_hash
    from evalkit.safety.output import shown_path

    try:
        fixture = convert_fixture(args.fixture_dir, args.form, args.output)
    except FixtureError as error:
        _print_error(error)
        return 1
    print(
        f"{fixture.meta.id} {fixture.meta.version}: written as {args.form} to "
        f"{shown_path(args.output, label='output')} ({len(fixture.documents)} documents, "
        f"{len(fixture.chunks)} chunks, {len(fixture.queries)} queries; content hash "
        f"{fixture_content_hash(fixture)})"
    )
    return 0


def _run_fixture(args: argparse.Namespace) -> int:
    handler: Handler = args.fixture_handler
    return handler(args)


def _run_fixture_diff(args: argparse.Namespace) -> int:
    import os

    from evalkit.errors import InputError, LeakError
    from evalkit.fixtures.diff import (
        fixture_diff_json,
        fixture_outline,
        format_fixture_diff,
        scan_output,
        with_text,
    )
    from evalkit.fixtures.versioning import check_version, last_release, read_releases

    if args.show_text and not args.allow_text:
        raise InputError(
            "--show-text prints private fixture text; add --allow-text to confirm that the "
            "output stays inside the team, or drop --show-text for the ID-only diff"
        )
    new_fixture = _load_old_fixture(args.new, "new")
    new = fixture_outline(new_fixture)
    if os.path.isdir(args.old):
        loaded = _load_old_fixture(args.old)
        old, old_fixture = fixture_outline(loaded), loaded
    else:
        old_fixture = None
        release = last_release(read_releases(args.old), new_fixture.meta.id)
        if release is None:
            raise InputError(
                f"release record {args.old!r} has no release of fixture "
                f"{new_fixture.meta.id!r}; pass the old fixture directory instead"
            )
        old = release["outline"]
    check = check_version(old, new)
    changes = check.changes
    if args.show_text:
        changes = with_text(changes, old_fixture, new_fixture)
    if args.json:
        text = fixture_diff_json(changes, old, new, required_bump=check.required)
    else:
        text = format_fixture_diff(changes, old, new, required_bump=check.required)
    if args.show_text:
        print(
            "warning: this output contains private fixture text; do not publish it", file=sys.stderr
        )
    else:
        try:
            scan_output(text, [f for f in (old_fixture, new_fixture) if f is not None])
        except LeakError as error:
            _print_error(error)
            return 1
    print(text, end="")
    return 0


def _run_fixture_locate(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.fixtures.locate import locate_span, read_span_context

    if args.limit < 1:
        raise InputError(f"--limit must be at least 1, found {args.limit}")
    if not args.answer.strip():
        raise InputError("the answer to locate is empty; give its words, e.g. 'at 08:15'")
    context = read_span_context(args.fixture_dir, args.query_id, args.chunk_id)
    candidates = locate_span(context.chunk_text, args.answer, limit=args.limit)
    if not context.query_found:
        print(f"note: query {args.query_id} is not in the fixture yet; add it before the span")
    if context.grade is not None:
        spans = ", ".join(f"{a}:{b}" for a, b in context.spans) or "none"
        print(f"current judgment of {args.chunk_id}: grade {context.grade}, spans {spans}")
    matched = bool(candidates) and candidates[0].match != "fuzzy"
    if not candidates:
        print(f"no passage of {args.chunk_id} resembles the answer; try fewer or other words")
        return 1
    heading = "match" if matched else "no exact match; closest candidates"
    print(f"{heading} in {args.chunk_id} ({len(candidates)}):")
    for c in candidates:
        known = "  (already a span)" if (c.start, c.end) in context.spans else ""
        print(f"  [{c.match}, score {c.score:.2f}] start {c.start}, end {c.end}{known}")
        print(f"    text: {_yaml_scalar(c.text)}")
    best = candidates[0]
    print("\nspan to paste under the judgment's spans:")
    print(f"  - text: {_yaml_scalar(best.text)}\n    start: {best.start}\n    end: {best.end}")
    return 0 if matched else 1


def _yaml_scalar(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def _run_fixture_release(args: argparse.Namespace) -> int:
    import os

    from evalkit.fixtures import load_fixture
    from evalkit.fixtures.diff import fixture_outline, outline_content_hash, scan_output
    from evalkit.fixtures.versioning import (
        add_release,
        check_version,
        last_release,
        read_releases,
        releases_json,
    )
    from evalkit.safety.artifacts import check_output
    from evalkit.safety.output import write_text_atomic

    fixture = load_fixture(args.fixture_dir)
    default = os.path.join(os.path.dirname(os.path.normpath(args.fixture_dir)), "releases.json")
    target = args.releases or os.path.relpath(default)
    check_output(target)  # refuse an unsafe path before reading anything else
    releases = read_releases(target, missing_ok=True)
    outline = fixture_outline(fixture)
    content = outline_content_hash(outline)
    meta = fixture.meta
    same = [r for r in releases if r["fixture"] == meta.id and r["version"] == meta.version]
    if same:
        if same[0]["contentHash"] == content:
            print(f"{meta.id} {meta.version} is already recorded in {target}; nothing to do")
            return 0
        print(
            f"{meta.id} {meta.version} was released with content {same[0]['contentHash']}, "
            f"now {content}: the content changed but the version did not; bump version in "
            "fixture.yaml (fixtures/CONTRIBUTING.md, version rules)"
        )
        return 1
    previous = last_release(releases, meta.id)
    if previous is not None:
        check = check_version(previous["outline"], outline)
        if not check.ok:
            print(f"version rule against {target} ({previous['version']}): FAILED")
            print("\n".join(check.problems()))
            return 1
    text = releases_json(add_release(releases, outline))
    scan_output(text, [fixture])
    write_text_atomic(target, text)
    print(f"recorded {meta.id} {meta.version} (contentHash {content}) in {target}")
    return 0


# --- import ---------------------------------------------------------------------------------


def _add_import(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "import",
        help="turn a BEIR folder, TREC files or tables (JSONL/CSV/Parquet) into a fixture that "
        "'evalkit validate' accepts; prints what was imported and dropped (IDs and counts)",
        description="Rules for IDs, chunking, judgments and answer spans: evalkit.importers.core "
        "and evalkit.fixtures.chunking (and README, 'Evaluate your own system').",
    )
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    beir = formats.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("folder", help="BEIR dataset folder")
    beir.add_argument("--split", default="test", help="qrels split (default test)")
    trec = formats.add_parser("trec", help="TREC qrels, topics and a corpus")
    trec.add_argument("--qrels", required=True, help="qrels file")
    trec.add_argument("--topics", required=True, help="topics: TREC <top> format or id<TAB>text")
    trec.add_argument("--corpus", required=True, help="corpus: JSONL or TREC <DOC> SGML")
    trec.add_argument("--topic-field", default="title", choices=("title", "desc"))
    table = formats.add_parser("table", help="tables of documents, queries and judgments")
    table.add_argument("--documents", required=True, help=".jsonl, .csv or .parquet")
    table.add_argument("--queries", required=True, help=".jsonl, .csv or .parquet")
    table.add_argument("--judgments", required=True, help=".jsonl, .csv or .parquet")
    from evalkit.importers.columns import TableColumns

    for name, column in TableColumns().__dict__.items():
        table.add_argument(
            f"--{name.replace('_', '-')}",
            dest=f"column_{name}",
            default=column,
            help=f"column name (default {column!r}{', none' if not column else ''})",
        )
    for each in (beir, trec, table):
        each.add_argument("--output", required=True, help="new, workspace-relative fixture dir")
        each.add_argument("--id", default=None, help="fixture ID (default: from --output)")
        each.add_argument("--language", default="en", help="language of every object without one")
        each.add_argument("--license", default="NOASSERTION", help="SPDX license expression")
        each.add_argument("--version", default="1.0.0", help="fixture version (semver)")
        each.add_argument(
            "--chunking",
            default="paragraphs",
            choices=("none", "characters", "paragraphs"),
            help="how long documents are cut (default paragraphs)",
        )
        each.add_argument("--size", type=int, default=4000, help="max chunk characters (4000)")
        each.add_argument(
            "--overlap",
            type=int,
            default=0,
            help="overlap: characters (characters) or paragraphs (paragraphs); default 0",
        )
    return _run_import


def _run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evalkit.importers import (
        ChunkingPolicy,
        TableColumns,
        beir_source,
        fixture_id,
        import_collection,
        table_source,
        trec_source,
    )

    policy = ChunkingPolicy(args.chunking, args.size, args.overlap)
    if args.format == "beir":
        sources = beir_source(args.folder, args.split)
        origin = f"a BEIR collection (split {args.split})"
    elif args.format == "trec":
        sources = trec_source(args.qrels, args.topics, args.corpus, topic_field=args.topic_field)
        origin = "TREC qrels, topics and corpus"
    else:
        columns = TableColumns(
            **{name: getattr(args, f"column_{name}") for name in TableColumns().__dict__}
        )
        sources = table_source(args.documents, args.queries, args.judgments, columns)
        origin = "tables of documents, queries and judgments"
    name = args.id or fixture_id(Path(args.output).name) or "imported"
    summary = import_collection(
        *sources,
        args.output,
        fixture_name=name,
        description=f"Imported by evalkit import from {origin}.",
        policy=policy,
        language=args.language,
        version=args.version,
        license=args.license,
        progress=sys.stderr.isatty(),
    )
    print("\n".join(summary.lines()))
    print(f"fixture: {args.output} (check it with 'evalkit validate {args.output}')")
    return 0


# --- end of subcommands ---------------------------------------------------------------------

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], Handler]

_SUBCOMMANDS: tuple[Registrar, ...] = (
    _add_validate,
    _add_run,
    _add_probes,
    _add_gate,
    _add_baseline,
    _add_diff,
    _add_schema,
    _add_report,
    _add_trec_eval,
    _add_fixture,
    _add_import,
)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser and the handler of each subcommand."""
    parser = argparse.ArgumentParser(
        prog="evalkit", description="Offline, deterministic evaluation of search and RAG retrieval."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    for add in _SUBCOMMANDS:
        handler = add(sub)
        handlers[list(sub.choices)[-1]] = handler
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except (LeakError, SystemFailedError) as error:  # a failed check or evaluation, not usage
        _print_error(error)
        return 1
    except EvalkitError as error:
        _print_error(error)
        return 2


def console() -> int:
    """The ``evalkit`` command (the console script): :func:`main`, then a quick exit.

    The process ends right after, so its objects are frozen out of the interpreter's final
    garbage collections (``gc.freeze``): after a report (pandas, matplotlib, an executed
    notebook in memory) those took about half a second and free nothing the operating system
    does not reclaim anyway. Exit handlers and finalizers still run; everything evalkit writes
    is closed before :func:`main` returns. In-process callers (tests) call :func:`main`.
    """
    code = main()
    import gc

    gc.freeze()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
