"""Probe commands: ``probes`` (tool probes against a target, compared with a baseline)."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli._common import (
    Handler,
    add_ci_options,
    check_ci_outputs,
    shown,
    write_ci_outputs,
)

# --- probes ---------------------------------------------------------------------------------


def add_probes(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
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
    add_ci_options(p, "probe")
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
    from evalkit.results import read_json_object
    from evalkit.safety.artifacts import check_output, write_artifact
    from evalkit.safety.canonical import canonical_json

    output = args.output
    if output is not None:
        check_output(output)  # refuse an unsafe path before running anything; creates nothing
    check_ci_outputs(args, output)
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
            print(f"baseline: no recall/precision drop against {shown(args.baseline)}")
    if output is not None:
        # A probe run has no private text (probes name public code symbols): the artifact gets
        # the path check and the shape scan (no path, endpoint or credential in any string).
        write_artifact(output, canonical_json(report), kind="json", private=())
        print(f"report: {shown(output)}")
    from evalkit.report.ci import probes_junit, probes_markdown

    write_ci_outputs(
        args,
        lambda: probes_junit(results, suite=target.name, drops=drops),
        lambda: probes_markdown(results, target=target.name, drops=drops),
        (),
    )
    if summary["errors"]:
        return 2
    return 1 if summary["failed"] or drops_found else 0
