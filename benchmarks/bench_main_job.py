"""The main job on a collection as a user runs it: ``evalkit run`` and ``report`` (issue 48).

Run from the repository root::

    python benchmarks/bench_main_job.py                      # run only, 3 rounds each
    python benchmarks/bench_main_job.py --report             # and report with two systems
    python benchmarks/bench_main_job.py --fixture-report     # the committed fixture's report
    python benchmarks/bench_main_job.py --trees OLD NEW      # two source trees, alternately
    python benchmarks/bench_main_job.py --report --collection cranfield-fixture
    python benchmarks/bench_main_job.py --repeat-cost        # evaluate, 1 and 2 repeats
    python benchmarks/bench_main_job.py --workers --only run # and run with --workers 2

A generated collection (seed 1, zipf text, English and Chinese): 10,000 documents of one chunk
each (about 55 words, the length of a web passage), 100 queries, written once to a temporary
folder. Each whole process is timed: ``evalkit run FIXTURE --systems lexical --k 1000`` with
the default two repeats and with ``--repeats 1`` (the cost of the determinism check is the
difference); with ``--report``, ``evalkit report FIXTURE -p systems lexical,token-hash -p k
1000``; with ``--workers``, ``run`` with ``--workers 2`` (the repeat forked onto the second
core); with ``--fixture-report``, ``make report``'s command on the committed fixture
(``evalkit report fixtures/synthetic-bilingual-v1 -p probes fixtures/probes``). Targets: run
<= 3 s, report with two systems <= 10 s, the committed fixture's report <= 3 s.

``--trees`` times each command with each source tree on ``PYTHONPATH`` (e.g. an exported
older commit and this one), the trees alternating within each round so that the machine's
load weighs on each alike; the committed fixture is read from each tree. Each line gives the
median and minimum wall time over ``--rounds``, the median CPU seconds of the command and its
children (the report's kernel and helper included: less inflated by other processes than the
wall time), and the load average (``os.getloadavg()``, 1 minute) before each round. Each
tree's ``evalkit`` is byte-compiled first and ``PYTHONDONTWRITEBYTECODE`` is unset for the
commands, as for an installed package (compiling evalkit's modules costs 0.2-0.5 s a start).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVALKIT = [sys.executable, "-m", "evalkit.cli.entry"]


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the bytecode is cached
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH", "")]))
    return env


def timed(args: list[str], cwd: Path, tree: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its children) of ``evalkit ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*EVALKIT, *args], capture_output=True, text=True, cwd=cwd, env=_env(tree), check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: a gate or leak check refused, still a full run
        raise SystemExit(f"evalkit {' '.join(args)} exited {done.returncode}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def commands(options: argparse.Namespace, tree: Path) -> dict[str, list[str]]:
    """The timed commands (name: arguments), run in the scratch folder."""
    lexical = ["run", "collection", "--systems", "lexical", "--k", "1000"]
    chosen = {"run, 2 repeats": lexical, "run, 1 repeat": [*lexical, "--repeats", "1"]}
    if options.workers:  # the repeat on the second core (latency measured beside it)
        chosen["run, 2 repeats, 2 workers"] = [*lexical, "--workers", "2"]
    if options.report:
        chosen["report, 2 systems"] = [
            *("report", "collection", "--output", "report.html"),
            *("-p", "systems", "lexical,token-hash", "-p", "k", "1000"),
        ]
    if options.fixture_report:
        chosen["committed fixture's report"] = [
            *("report", str(tree / "fixtures" / "synthetic-bilingual-v1")),
            *("-p", "probes", str(tree / "fixtures" / "probes"), "--output", "fixture.html"),
        ]
    if options.only:
        chosen = {name: args for name, args in chosen.items() if options.only in name}
    return chosen


def repeat_cost(fixture_dir: Path, rounds: int) -> None:
    """The determinism repeat's cost, in this process: ``evaluate`` of lexical at k=1000 with
    1 and 2 repeats, alternately, the fixture loaded once and a first run untimed (tables,
    caches); wall and CPU medians."""
    from evalkit.fixtures import load_fixture
    from evalkit.run import evaluate

    fixture = load_fixture(fixture_dir)
    evaluate(fixture, ["lexical"], k=1000, repeats=1)
    seen: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
    for _ in range(rounds):
        for repeats in (1, 2):
            load, wall, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
            evaluate(fixture, ["lexical"], k=1000, repeats=repeats)
            seen[repeats].append((time.perf_counter() - wall, time.process_time() - cpu, load))
    for repeats, values in seen.items():
        print(
            f"evaluate, {repeats} repeat(s): wall median "
            f"{statistics.median(v[0] for v in values):.2f} s, CPU median "
            f"{statistics.median(v[1] for v in values):.2f} s; load "
            f"{', '.join(f'{v[2]:.1f}' for v in values)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--fixture-report", action="store_true")
    parser.add_argument(
        "--workers",
        action="store_true",
        help="also time run with --workers 2 (the determinism repeat in a second process)",
    )
    parser.add_argument("--only", default="", help="only the commands whose name holds this")
    parser.add_argument("--trees", nargs="+", type=Path, default=[REPO])
    parser.add_argument(
        "--collection",
        type=Path,
        default=None,
        help="a fixture folder to time instead of the generated collection (e.g. Cranfield or "
        "CISI imported as their READMEs say)",
    )
    parser.add_argument(
        "--repeat-cost",
        action="store_true",
        help="instead: evaluate with 1 and 2 repeats in this process (the check's own cost)",
    )
    options = parser.parse_args()
    from evalkit.fixtures import dump_fixture, generate_fixture

    trees = [tree.resolve() for tree in options.trees]
    for tree in trees:  # as pip installs it: compiled once, not on every start
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "evalkit")],
            check=True,
            env=_env(tree),
        )
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if options.collection is not None:
            (folder / "collection").symlink_to(options.collection.resolve())
        else:
            fixture = generate_fixture(
                1, documents=options.documents, chunks_per_document=1, queries=options.queries
            )
            dump_fixture(fixture, folder / "collection")
        if options.repeat_cost:
            repeat_cost(folder / "collection", options.rounds)
            return
        names = list(commands(options, trees[0]))
        wall: dict[tuple[str, Path], list[float]] = {}
        cpu: dict[tuple[str, Path], list[float]] = {}
        loads: dict[tuple[str, Path], list[float]] = {}
        for _ in range(options.rounds):  # alternately, so the load weighs on each alike
            for name in names:
                for tree in trees:
                    load = os.getloadavg()[0]
                    seconds, cpu_seconds = timed(commands(options, tree)[name], folder, tree)
                    for table, value in ((wall, seconds), (cpu, cpu_seconds), (loads, load)):
                        table.setdefault((name, tree), []).append(value)
                    print(f"  {name} [{tree.name}]: {seconds:.2f} s (load {load:.1f})", flush=True)
        shown = (
            options.collection.name
            if options.collection is not None
            else f"{options.documents:,} documents, {options.queries} queries"
        )
        print(f"{shown}, k=1000; {options.rounds} rounds")
        for name in names:
            for tree in trees:
                key = (name, tree)
                print(
                    f"{name} [{tree.name}]: median {statistics.median(wall[key]):.2f} s, "
                    f"min {min(wall[key]):.2f} s, CPU median {statistics.median(cpu[key]):.2f} s; "
                    f"load {', '.join(f'{v:.1f}' for v in loads[key])}"
                )


if __name__ == "__main__":
    main()
