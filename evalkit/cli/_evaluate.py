"""Evaluation commands: ``run`` (summary and latency), ``baseline`` (the deterministic projection
as a committed baseline), ``report`` (the executed report notebook as offline HTML) and
``notebook`` (a copy of the report notebook to open in JupyterLab or edit).
"""

from __future__ import annotations

import argparse
import sys
from typing import Final

from evalkit.cli._common import (
    Handler,
    add_evaluation_options,
    checked_output,
    evaluate_fixture,
    print_error,
    quoted,
    shown,
)

# --- run ------------------------------------------------------------------------------------


def add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("run", help="evaluate systems on a fixture; print summary and latency")
    add_evaluation_options(p)
    p.add_argument(
        "--output",
        default=None,
        help="workspace-relative path of the JSON report (or set EVALKIT_OUTPUT); "
        "by default nothing is written",
    )
    p.add_argument(
        "--rankings",
        default=None,
        metavar="PATH",
        help="workspace-relative path of one TREC run file with every system's ranking "
        "(query_id Q0 chunk_id rank score system), for trec_eval, ir_measures or evalkit trec-eval",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the systems on the Dask cluster of this scheduler (e.g. tcp://HOST:8786); "
        "needs pip install 'evalkit[dask]' here and on the workers",
    )
    return _run_run


def _run_run(args: argparse.Namespace) -> int:
    from evalkit.results import write_report
    from evalkit.safety.artifacts import check_distinct, check_output, write_artifact

    output = checked_output(args.output)
    if args.rankings is not None:
        check_output(args.rankings)  # refuse an unsafe path before any work
        check_distinct([("--output", output), ("--rankings", args.rankings)])
    evaluation = evaluate_fixture(args, progress=sys.stderr.isatty())
    fixture = evaluation.fixture
    table = evaluation.summary().pivot(index="system", columns="measure", values="value")
    table = table.loc[list(evaluation.systems), [m for m in evaluation.measures if m in table]]
    print(f"{fixture.meta.id} {fixture.meta.version}: {len(fixture.queries)} queries, k={args.k}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}", na_rep="n/a"))  # n/a: no spans
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
        print(f"report: {shown(output)}")
    if args.rankings is not None:
        write_artifact(
            args.rankings, evaluation.trec_run(), kind="text", private=evaluation.private_texts()
        )
        print(f"rankings: {shown(args.rankings)}")
    return 0


# --- baseline -------------------------------------------------------------------------------


def add_baseline(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "baseline",
        help="evaluate a fixture and write its deterministic projection (no latency) as a "
        "canonical JSON baseline",
    )
    add_evaluation_options(p)
    p.add_argument(
        "--output",
        default=None,
        required=True,
        help="workspace-relative path of the baseline, e.g. fixtures/<id>/baseline.json",
    )
    return _run_baseline


def _run_baseline(args: argparse.Namespace) -> int:
    from evalkit.gates import write_baseline
    from evalkit.safety.artifacts import check_output

    output = args.output
    check_output(output, baseline=True)  # refuse an unsafe path before any work
    evaluation = evaluate_fixture(args)
    report = evaluation.to_report()
    write_baseline(report, output, private=evaluation.private_texts())
    hash_ = report["evaluationDefinitionHash"]
    print(f"baseline: {shown(output)} (evaluationDefinitionHash {hash_})")
    return 0


# --- report ---------------------------------------------------------------------------------

#: The parameters of evalkit's report notebook, in the order of its parameters cell (written
#: out so that building the parser reads no file; a test compares them with the notebook).
REPORT_PARAMETERS: Final = (
    "fixture",
    "systems",
    "k",
    "measures",
    "base_system",
    "redact",
    "baseline",
    "gates",
    "history",
    "seed",
    "n_resamples",
    "worst",
    "query_id",
    "probes",
    "probe_target",
    "concurrency",
    "evaluation_dir",
)
_REPORT_DEFAULT_FIXTURE = "fixtures/synthetic-bilingual-v1"
_REPORT_DEFAULT_OUTPUT = "reports/retrieval-report.html"


def add_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "report",
        help="execute the report notebook headless and write scrubbed, offline HTML (and the "
        "executed .ipynb beside it); exit 1 when the notebook fails or the leak scan finds "
        "fixture text (nothing is written), 2 on a usage error",
        description="Execute evalkit's report notebook with papermill on a kernel of this "
        "Python, scrub it (no absolute paths, no tracebacks, no papermill environment), export "
        "HTML without code and without external resources, scan both for fixture text and "
        f"write them. Parameters: {', '.join(REPORT_PARAMETERS)} (see the notebook's "
        "parameters cell; 'evalkit notebook --output FILE' writes a copy to read or edit); "
        "systems may include run:PATH and http:NAME. They are checked first: an unknown system, a "
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
        "--baseline",
        default=None,
        help="main's baseline (report or baseline JSON): the first screen shows the change "
        "against it and the gate verdict (same as -p baseline PATH)",
    )
    p.add_argument(
        "--gates",
        default=None,
        help="gates file (default: FIXTURE/gates.yaml when it exists; same as -p gates PATH)",
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
        help="report notebook to execute (default: evalkit's own retrieval_report.ipynb)",
    )
    return _run_report


def _run_report(args: argparse.Namespace) -> int:
    import os

    from evalkit.errors import LeakError, NotebookError
    from evalkit.report import (
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
    pairs += [
        (name, value)
        for name, value in (("baseline", args.baseline), ("gates", args.gates))
        if value
    ]
    parameters = coerce_parameters(pairs, notebook_parameters(notebook))
    try:
        rendered = render_report(
            parameters,
            notebook=notebook,
            allow_unredacted=args.allow_unredacted,
            output=args.output,
        )
    except (LeakError, NotebookError) as error:
        print_error(error)
        return 1
    html_path, notebook_path = write_rendered_report(rendered, args.output)
    if not rendered.redacted:
        print("warning: this report contains private fixture text; do not publish it")
    print(f"notebook: {notebook_path.relative_to(os.getcwd()).as_posix()}")
    print(f"report: {html_path.relative_to(os.getcwd()).as_posix()}")
    return 0


# --- notebook -------------------------------------------------------------------------------


def add_notebook(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "notebook",
        help="write a copy of evalkit's report notebook to open in JupyterLab or edit (then "
        "'evalkit report --notebook FILE' executes your copy)",
        description="The report notebook is part of the installed package; this writes a "
        "copy of it to a workspace-relative .ipynb path. An existing file is not replaced.",
    )
    p.add_argument(
        "--output",
        required=True,
        help="workspace-relative .ipynb path of the copy, e.g. notebooks/my-report.ipynb",
    )
    return _run_notebook


def _run_notebook(args: argparse.Namespace) -> int:
    import os

    from evalkit.errors import UnsafePathError
    from evalkit.report import DEFAULT_REPORT_NOTEBOOK
    from evalkit.safety.artifacts import check_output, write_artifact

    target = check_output(args.output, suffixes=(".ipynb",))
    if target.exists():
        raise UnsafePathError(
            f"{quoted(args.output)} exists; give another --output path or remove the file "
            "first (nothing was written)"
        )
    text = DEFAULT_REPORT_NOTEBOOK.read_text(encoding="utf-8")
    written = write_artifact(args.output, text, kind="notebook", private=())
    print(f"notebook: {written.relative_to(os.getcwd()).as_posix()}")
    print(f"execute it with: evalkit report --notebook {shown(args.output)}")
    return 0
