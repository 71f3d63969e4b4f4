"""CPU time of the report's first-screen gate verdict with the change against the baseline.

Run from the repository root::

    python benchmarks/bench_change.py                          # this tree, 5 rounds
    python benchmarks/bench_change.py --trees BEFORE . --rounds 5

The inputs are what ``evalkit report`` builds for the committed fixture: ``evaluate`` of
``fixtures/synthetic-bilingual-v1`` with its five reference systems (2 repeats, the report's:
the baseline is stale for another repeat count), its report and per-query frame, evaluated
once with this tree. Each sample is a fresh interpreter (``PYTHONPATH`` the tree) that imports
what the call needs, then times one ``evalkit.report.verdict.fixture_gate_verdict`` call with
the change (the gates of the fixture's ``gates.yaml`` against its ``baseline.json``, as the
notebook's verdict cell makes it): CPU and wall seconds of that call alone, as the report's
kernel pays it once. ``--trees`` alternates the trees within each round; medians are printed
with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "synthetic-bilingual-v1"

_SAMPLE = r"""
import json, os, pickle, sys, time
import scipy.special  # imported by the statistics on first use: not this call's cost
from evalkit.report.verdict import fixture_gate_verdict
from evalkit.stats import compare
inputs = pickle.load(open(sys.argv[1], "rb"))
wall, cpu = time.perf_counter(), time.process_time()
verdict = fixture_gate_verdict(inputs["report"], sys.argv[2], per_query=inputs["per_query"])
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"cpu": cpu, "wall": wall, "rows": len(verdict.change.measures)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", nargs="+", type=Path, default=[REPO])
    options = parser.parse_args()
    trees = [tree.resolve() for tree in options.trees]
    with tempfile.TemporaryDirectory() as scratch:
        inputs = Path(scratch) / "inputs.pkl"
        from evalkit.run import evaluate

        evaluation = evaluate(FIXTURE, None, repeats=2)
        with inputs.open("wb") as out:
            pickle.dump({"report": evaluation.to_report(), "per_query": evaluation.per_query}, out)
        print(f"load average before: {os.getloadavg()}")
        samples: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
        for _ in range(options.rounds):
            for tree in trees:
                done = subprocess.run(
                    [sys.executable, "-c", _SAMPLE, str(inputs), str(FIXTURE)],
                    env={**os.environ, "PYTHONPATH": str(tree)},
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=tree,
                )
                samples[tree].append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"load average after: {os.getloadavg()}")
    for tree, runs in samples.items():
        cpu = statistics.median(r["cpu"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        print(
            f"{tree}: CPU median {cpu:.3f} s (min {min(r['cpu'] for r in runs):.3f}), "
            f"wall median {wall:.3f} s, {runs[0]['rows']:.0f} change rows, {len(runs)} runs"
        )


if __name__ == "__main__":
    main()
