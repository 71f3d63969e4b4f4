"""The ``evalkit`` command.

Exit codes: 0 success; 1 a check failed (invalid fixture, failed gate, failed probe threshold,
leak found); 2 a usage or input error (bad arguments, unreadable file, unsafe output path).
Each subcommand is one ``_add_<name>`` function (its arguments) and one ``_run_<name>`` function.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.evaluate import Evaluation

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _print_error(error: BaseException) -> None:
    print(f"evalkit: error: {error}", file=sys.stderr)


# --- validate -------------------------------------------------------------------------------


def _add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("validate", help="check a fixture directory against the strict schema")
    p.add_argument("path", help="fixture directory")
    return _run_validate


def _run_validate(args: argparse.Namespace) -> int:
    from collections import Counter
    from pathlib import Path

    from evalkit.errors import FixtureError
    from evalkit.fixtures import load_fixture

    path = Path(args.path)
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory"
        _print_error(EvalkitError(f"fixture directory {args.path!r} {what}"))
        return 2
    try:
        fixture = load_fixture(path)
    except FixtureError as error:
        for problem in error.problems:
            print(problem)
        print(f"{args.path}: invalid — {len(error.problems)} problem(s)")
        return 1
    per_language = Counter(q.language for q in fixture.queries)
    no_answer = sum(1 for q in fixture.queries if not q.answerable)
    languages = ", ".join(f"{lang}: {per_language[lang]}" for lang in sorted(per_language))
    print(
        f"{fixture.meta.id} {fixture.meta.version}: valid — {len(fixture.documents)} documents, "
        f"{len(fixture.chunks)} chunks, {len(fixture.queries)} queries "
        f"({languages}; {no_answer} no-answer)"
    )
    return 0


# --- run ------------------------------------------------------------------------------------


def _add_evaluation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("fixture", help="fixture directory")
    p.add_argument(
        "--systems",
        default=None,
        help="comma-separated system names or package.module:factory specs (default: all five "
        "reference systems)",
    )
    p.add_argument("--k", type=int, default=10, help="ranking cutoff (default 10)")
    p.add_argument("--repeats", type=int, default=2, help="determinism repeats (default 2)")


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("run", help="evaluate systems on a fixture; print summary and latency")
    _add_evaluation_options(p)
    p.add_argument(
        "--output",
        default=None,
        help="workspace-relative path of the JSON report (or set EVALKIT_OUTPUT); "
        "by default nothing is written",
    )
    return _run_run


def _split_systems(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [part.strip() for part in value.split(",") if part.strip()]
    return names or None


def _evaluate_fixture(args: argparse.Namespace, *, progress: bool = False) -> Evaluation:
    """Load ``args.fixture`` and evaluate it with ``args.systems``, ``args.k``, ``args.repeats``."""
    from evalkit.evaluate import evaluate
    from evalkit.fixtures import load_fixture

    fixture = load_fixture(args.fixture)
    systems = _split_systems(args.systems)
    return evaluate(fixture, systems, k=args.k, repeats=args.repeats, progress=progress)


def _checked_output(cli_value: str | None) -> str | None:
    """``--output`` or ``$EVALKIT_OUTPUT`` (None: write nothing), refused early if unsafe."""
    from evalkit.output import output_path_from_env, resolve_output_path

    output = output_path_from_env(cli_value)
    if output is not None:
        resolve_output_path(output)  # refuse an unsafe path before spending time evaluating
    return output


def _run_run(args: argparse.Namespace) -> int:
    from evalkit.report import write_report

    output = _checked_output(args.output)
    evaluation = _evaluate_fixture(args, progress=sys.stderr.isatty())
    fixture = evaluation.fixture
    table = evaluation.summary().pivot(index="system", columns="measure", values="value")
    table = table.loc[list(evaluation.systems), [m for m in evaluation.measures if m in table]]
    print(f"{fixture.meta.id} {fixture.meta.version}: {len(fixture.queries)} queries, k={args.k}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print()
    latency = evaluation.latency_summary().set_index("system")
    print(latency.to_string(float_format=lambda v: f"{v:.3f}"))
    report = evaluation.to_report()
    print()
    print(f"corpusHash: {report['corpusHash']}")
    print(f"evaluationDefinitionHash: {report['evaluationDefinitionHash']}")
    print(f"determinism: {report['determinism']['verdict']} ({evaluation.repeats} repeats)")
    if output is not None:
        write_report(report, output)
        print(f"report: {output}")
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
    return _run_probes


def _run_probes(args: argparse.Namespace) -> int:
    import json

    from evalkit.canonical import canonical_json
    from evalkit.errors import InputError
    from evalkit.output import resolve_output_path, write_text_atomic
    from evalkit.probes import (
        baseline_drops,
        format_table,
        get_target,
        load_probes,
        probes_report,
        run_probes,
    )

    output = args.output
    if output is not None:
        resolve_output_path(output)  # refuse an unsafe path before running anything
    baseline = None
    if args.baseline is not None:
        try:
            with open(args.baseline, encoding="utf-8") as handle:
                baseline = json.load(handle)
        except (OSError, ValueError) as error:
            raise InputError(
                f"cannot read baseline {args.baseline!r} ({type(error).__name__}); expected a "
                "JSON file written by `evalkit probes ... --output PATH`"
            ) from None
        if not isinstance(baseline, dict):
            raise InputError(f"baseline {args.baseline!r} is not a JSON object")
    target = get_target(args.target)
    probes = load_probes(args.fixtures, tools=target.tools.names())
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
    if baseline is not None:
        drops = baseline_drops(report, baseline)
        drops_found = not drops.empty
        if baseline.get("target", {}).get("fingerprint") != target.fingerprint:
            print("baseline: note: made from different target data (e.g. another Python)")
        if drops_found:
            print("baseline: dropped below the baseline:")
            print(drops.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-"))
        else:
            print(f"baseline: no recall/precision drop against {args.baseline}")
    if output is not None:
        write_text_atomic(output, canonical_json(report))
        print(f"report: {output}")
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
    return _run_gate


def _run_gate(args: argparse.Namespace) -> int:
    import pathlib

    from evalkit.errors import InputError
    from evalkit.gates import (
        check_baseline_fresh,
        check_gates,
        format_gate_table,
        gates_to_report,
        load_gates,
        load_report,
    )
    from evalkit.report import write_report

    output = _checked_output(args.output)
    gates_path = pathlib.Path(args.gates or pathlib.Path(args.fixture) / "gates.yaml")
    gates = load_gates(gates_path)
    baseline_path: pathlib.Path | None = None
    if args.baseline is not None:
        if gates.baseline is None:
            raise InputError(
                f"--baseline was given but gates file {str(gates_path)!r} has no baseline "
                "section; add 'baseline:' (see fixtures/README.md) or drop --baseline"
            )
        baseline_path = pathlib.Path(args.baseline)
    elif gates.baseline is not None:
        baseline_path = gates_path.parent / gates.baseline.path
    baseline = load_report(baseline_path) if baseline_path is not None else None
    evaluation = _evaluate_fixture(args)
    fixture = evaluation.fixture
    report = evaluation.to_report()
    if baseline is not None:
        check_baseline_fresh(
            report, baseline, fixture=args.fixture, baseline_path=str(baseline_path)
        )
    results = check_gates(report, gates, baseline)
    if output is not None:
        write_report({**report, "gates": gates_to_report(results)}, output)
        print(f"report: {output}")
    print(f"{fixture.meta.id} {fixture.meta.version}: gates {gates_path}", end="")
    print(f", baseline {baseline_path}" if baseline_path is not None else "")
    print(format_gate_table(results, failed_only=args.failed_only), end="")
    return 0 if bool(results["passed"].all()) else 1


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
    from evalkit.gates import write_baseline
    from evalkit.output import resolve_output_path

    output = args.output
    resolve_output_path(output)  # refuse an unsafe path before spending time evaluating
    report = _evaluate_fixture(args).to_report()
    write_baseline(report, output)
    print(f"baseline: {output} (evaluationDefinitionHash {report['evaluationDefinitionHash']})")
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
    from evalkit.diff import diff_reports, diff_to_json, format_diff
    from evalkit.gates import load_report

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
        "n_resamples, worst (see the notebook's parameters cell). With '-p redact false' the "
        "report shows query and chunk text: it is refused unless --allow-unredacted is given, "
        "and is then written unscanned with a 'do not publish' banner.",
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
    from evalkit.notebooks import (
        DEFAULT_REPORT_NOTEBOOK,
        coerce_parameters,
        notebook_parameters,
        render_report,
        write_rendered_report,
    )
    from evalkit.output import resolve_output_path

    notebook = args.notebook or DEFAULT_REPORT_NOTEBOOK
    resolve_output_path(args.output)  # refuse an unsafe path before executing anything
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
    p.add_argument("kind", choices=("fixture", "documents", "chunks", "queries"))
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
    p.add_argument("run", help="TREC run file (.gz allowed)")
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

    from evalkit.formats import read_qrels, read_run
    from evalkit.measures import parse_measures, score, trec_name
    from evalkit.measures.engine import trec_summary

    measures = parse_measures(args.measures)
    qrels = read_qrels(args.qrels)
    run = read_run(args.run, rank=False)  # trec_eval ranks by score and ignores the rank field
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_query = score(
            qrels,
            run,
            measures,
            trec_version=args.trec_version,
            max_docs=args.max_docs,
            judged_only=args.judged_only,
            complete=not args.no_complete,
            num_docs=args.num_docs,
        )
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
    except EvalkitError as error:
        _print_error(error)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
