"""CPU and wall time of the statistics and figures ``evalkit report`` computes, per function.

Run from the repository root::

    python benchmarks/bench_report_stats.py                            # this tree
    python benchmarks/bench_report_stats.py --before DIR --rounds 3    # DIR: an older tree

The inputs are the report's for the committed fixture: ``evaluate`` of
``fixtures/synthetic-bilingual-v1`` with its five reference systems (2 repeats), its report
and per-query frame. One process per tree (``PYTHONPATH`` the tree) evaluates the fixture
once and calls every function once (imports, first calls: not timed), then times one call
per request: the gate verdict with the change against the fixture's baseline
(``fixture_gate_verdict``, which the report makes twice: in the kernel and in the command's
helper), the ablation verdict (``gate_and_judge``), ``stats.abstention``, the report's tables
(``ablation_table`` overall and by language, ``all_pairs_table``) and its figures (drawn and
saved as PNG). With ``--before`` the two processes alternate call by call (``--repeats``
calls of each function per round; which tree goes first alternates by round), so both see
the machine in the same state: on a shared machine the speed of one process against another
varies by 30% and more from minute to minute. Medians over every timed call of a tree are
printed, CPU seconds beside wall seconds, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "synthetic-bilingual-v1"

FUNCTIONS = (
    "fixture_gate_verdict",
    "gate_and_judge",
    "abstention",
    "ablation_table",
    "ablation_table by language",
    "all_pairs_table",
    "paired_difference_figure",
    "abstention_figure",
    "latency_figure",
    "headline_figure",
)

_SAMPLE = r"""
import io, json, sys, time
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from evalkit.fixtures import load_fixture
from evalkit.report import plots, tables
from evalkit.report.verdict import fixture_gate_verdict, gate_and_judge
from evalkit.run import evaluate
from evalkit.stats import abstention

fixture = sys.argv[1]
evaluation = evaluate(load_fixture(fixture), None, k=10, repeats=2, workers=1)
report, per_query = evaluation.to_report(), evaluation.per_query
systems, measures = list(evaluation.systems), list(evaluation.measures)
gate = fixture_gate_verdict(report, fixture, per_query=per_query)
judged = gate_and_judge(
    evaluation, report, fixture, base="hybrid", n_resamples=2000, seed=0, gate=gate
)
abstained = abstention(evaluation, n_resamples=2000, seed=0)


def png(figure):
    figure.savefig(io.BytesIO(), format="png")
    plt.close(figure)


calls = {
    "fixture_gate_verdict": lambda: fixture_gate_verdict(report, fixture, per_query=per_query),
    "gate_and_judge": lambda: gate_and_judge(
        evaluation, report, fixture, base="hybrid", n_resamples=2000, seed=0, gate=gate
    ),
    "abstention": lambda: abstention(evaluation, n_resamples=2000, seed=0),
    "ablation_table": lambda: tables.ablation_table(
        per_query, systems=systems, measures=measures, n_resamples=2000, seed=0
    ),
    "ablation_table by language": lambda: tables.ablation_table(
        per_query, systems=systems, measures=measures, by=["language"], n_resamples=2000, seed=0
    ),
    "all_pairs_table": lambda: tables.all_pairs_table(
        per_query, systems=systems, measures=measures, n_resamples=2000, seed=0
    ),
    "paired_difference_figure": lambda: png(
        plots.paired_difference_figure(
            per_query, base="hybrid", systems=systems, measures=plots.difference_measures(measures)
        )
    ),
    "abstention_figure": lambda: png(
        plots.abstention_figure(
            abstained.curve, abstained.summary, abstained.queries, systems=systems
        )
    ),
    "latency_figure": lambda: png(plots.latency_figure(evaluation.latency, systems=systems)),
    "headline_figure": lambda: png(
        plots.headline_figure(
            judged.verdict.headline, base="hybrid", confidence=judged.verdict.confidence
        )
    ),
}
for call in calls.values():  # warm-up: imports and first calls are not timed
    call()

import evalkit

print(json.dumps({"evalkit": evalkit.__file__}), flush=True)
for line in sys.stdin:  # one function name per line: call it once, answer its times
    name = line.strip()
    wall, cpu = time.perf_counter(), time.process_time()
    calls[name]()
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]), flush=True)
"""


class _Worker:
    """A process that imports ``tree``'s evalkit, evaluates the fixture, warms every call up
    and then times one call per request (a line on its standard input)."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SAMPLE, str(FIXTURE)],
            env={**os.environ, "PYTHONPATH": str(tree)},
            cwd=tree,  # python -c puts the working folder first on sys.path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ready(self) -> None:
        found = json.loads(self._line())["evalkit"]
        if not Path(found).resolve().is_relative_to(self.tree):
            raise SystemExit(f"the sample imported {found}, not the tree {self.tree}")

    def time(self, name: str) -> list[float]:
        assert self.process.stdin is not None
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        times: list[float] = json.loads(self._line())
        return times

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the sample of {self.tree} stopped (exit {self.process.wait()})")
        return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per sample")
    parser.add_argument("--before", type=Path, help="an older tree, alternated with this one")
    parser.add_argument("--only", nargs="+", choices=FUNCTIONS, default=list(FUNCTIONS))
    options = parser.parse_args()
    trees = {"after": REPO}
    if options.before is not None:
        trees = {"before": options.before.resolve(), "after": REPO}
    samples: dict[str, dict[str, list[list[float]]]] = {
        label: {name: [] for name in options.only} for label in trees
    }
    print(f"load average before: {os.getloadavg()}", flush=True)
    workers = {label: _Worker(tree) for label, tree in trees.items()}
    try:
        for worker in workers.values():
            worker.ready()
        for round_number in range(options.rounds):
            order = list(workers.items())
            for name in options.only:
                for _ in range(options.repeats):
                    for label, worker in order[::-1] if round_number % 2 else order:
                        samples[label][name].append(worker.time(name))
            print(f"round {round_number + 1}: load average {os.getloadavg()}", flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    header = f"{'function':28s}" + "".join(
        f" {label + ' wall':>12s} {label + ' CPU':>11s}" for label in trees
    )
    print(header)
    totals = {label: [0.0, 0.0] for label in trees}
    for name in options.only:
        line = f"{name:28s}"
        for label in trees:
            wall = statistics.median(t[0] for t in samples[label][name])
            cpu = statistics.median(t[1] for t in samples[label][name])
            totals[label][0] += wall
            totals[label][1] += cpu
            line += f" {wall:12.3f} {cpu:11.3f}"
        print(line)
    print(
        f"{'sum of medians':28s}"
        + "".join(f" {wall:12.3f} {cpu:11.3f}" for wall, cpu in totals.values())
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
