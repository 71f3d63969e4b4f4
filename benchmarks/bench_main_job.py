"""The main job on a collection as a user runs it: ``evalkit run`` and ``report`` (issue 48).

Run from the repository root::

    python benchmarks/bench_main_job.py                 # run only, 3 rounds each
    python benchmarks/bench_main_job.py --report        # and report with two systems

A generated collection (seed 1, zipf text, English and Chinese): 10,000 documents of one chunk
each, 100 queries, written once to a temporary folder. Each whole process is timed (median of
``--rounds``): ``evalkit run FIXTURE --systems lexical --k 1000`` with the default two repeats
and with ``--repeats 1`` (the cost of the determinism check is the difference), and with
``--report``, ``evalkit report FIXTURE -p systems lexical,token-hash -p k 1000``. Targets:
run <= 3 s, report with two systems <= 10 s. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVALKIT = [sys.executable, "-m", "evalkit.cli.entry"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [*EVALKIT, *args], capture_output=True, text=True, cwd=cwd, env=_env(), check=False
    )
    if done.returncode not in (0, 1):  # 1: a gate or leak check refused, still a full run
        raise SystemExit(f"evalkit {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--report", action="store_true")
    options = parser.parse_args()
    from evalkit.fixtures import dump_fixture, generate_fixture

    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        fixture = generate_fixture(
            1, documents=options.documents, chunks_per_document=1, queries=options.queries
        )
        dump_fixture(fixture, folder / "collection")
        commands = {
            "run, 2 repeats": ["run", "collection", "--systems", "lexical", "--k", "1000"],
            "run, 1 repeat": [
                *("run", "collection", "--systems", "lexical", "--k", "1000"),
                *("--repeats", "1"),
            ],
        }
        if options.report:
            commands["report, 2 systems"] = ["report", "collection", "--output", "report.html"]
            commands["report, 2 systems"] += [
                "-p",
                "systems",
                "lexical,token-hash",
                "-p",
                "k",
                "1000",
            ]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(options.rounds):  # alternately, so the load weighs on each alike
            for name, args in commands.items():
                times[name].append(timed(args, folder))
        for name, values in times.items():
            print(
                f"{name}: median {statistics.median(values):.2f} s, min {min(values):.2f} s "
                f"({options.documents:,} documents, {options.queries} queries, k=1000)"
            )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
