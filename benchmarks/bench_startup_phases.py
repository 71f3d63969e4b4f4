"""Where the start-up of ``evalkit validate FIXTURE`` and ``evalkit scan FIXTURE PAGE`` goes.

Run from the repository root::

    python benchmarks/bench_startup_phases.py --rounds 5
    python benchmarks/bench_startup_phases.py --rounds 5 --page reports/r.html

Each round runs, in fresh processes: ``python -c pass`` (the interpreter and its site
packages), the two commands whole, and a script that does what each command does, one phase
at a time, timed with ``time.perf_counter``: the console script's modules and the
temporary-state sweep, the parser, ``importlib.metadata`` (which pydantic imports to look up
its plugins), pydantic's import, PyYAML's import, the fixture models, the rules and the
loader, the fixture's load; for ``scan``, the leak scan's module, the private texts, the
needle index and the search of the page. The cyclic collector is paused from pydantic's
import to the end of the load (for ``scan``, to its private texts), as the commands pause
it. Pydantic's plugin lookup (the scan of the ``pydantic`` entry-point group of every
installed distribution, done while it builds the first model) is timed again at the end: its
row is part of the models' row, not added twice. Medians per phase are printed in
milliseconds, with "the rest" (the whole command less the interpreter and the phases:
printing, exit, what the phases do not split) and the load
average. The phases are the commands' own steps through public names, not a profile: the sum
is close to what the command takes, not equal to it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from bench_startup import FIXTURE, REPO, environment, small_page, timed

NOTE = "of the models' row"  # part of another row, not added to the sum

PHASES = textwrap.dedent(
    """
    import gc, sys, time
    marks = [("start", time.perf_counter())]
    def mark(name):
        marks.append((name, time.perf_counter()))
    import evalkit.cli.entry
    from evalkit.safety.scratch import sweep
    sweep(); mark("console script's modules, sweep")
    from evalkit.cli import build_parser
    parser, _ = build_parser(sys.argv[1]); parser.parse_args(sys.argv[1:]); mark("parser")
    gc.disable()
    import importlib.metadata; mark("importlib.metadata (for pydantic's plugin lookup)")
    import pydantic
    from pydantic import BaseModel, Field, TypeAdapter; mark("pydantic's import")
    import yaml; mark("PyYAML's import")
    import evalkit.fixtures.schema; mark("fixture models (pydantic builds them)")
    from evalkit.fixtures import load_fixture; mark("rules, loader")
    fixture = load_fixture(sys.argv[2]); mark("the fixture's load")
    if sys.argv[1] == "scan":  # which keeps the collector paused to its private texts
        from evalkit.safety.privacy import find_leaks, find_leaks_in_stream, private_texts
        mark("leak scan's module")
        private = private_texts(fixture); mark("private texts")
    gc.freeze(); gc.enable()
    if sys.argv[1] == "scan":
        find_leaks("", private); mark("needle index")
        with open(sys.argv[3], "rb") as handle:
            find_leaks_in_stream(handle, private)
        mark("the page's search")
    start = time.perf_counter()
    importlib.metadata.entry_points(group="pydantic")  # again: what the models' row holds
    lookup = time.perf_counter() - start
    for (_, before), (name, after) in zip(marks, marks[1:]):
        print(f"{name}\\t{after - before}")
    print(f"of the models' row: pydantic's plugin lookup\\t{lookup}")
    """
)


def wall(args: list[str]) -> float:
    return timed(args, REPO)[0]


def phases(args: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PHASES, *args],
        env=environment(REPO),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        name: float(seconds)
        for name, seconds in (line.split("\t") for line in done.stdout.splitlines())
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--page", type=Path, help="the file `scan` reads (default: a small page)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-phases-") as folder:
        page = options.page.resolve() if options.page else small_page(Path(folder))
        commands = {
            "validate": ["validate", str(FIXTURE)],
            "scan": ["scan", str(FIXTURE), str(page)],
        }
        print(f"load average before: {os.getloadavg()}")
        floor: list[float] = []
        whole: dict[str, list[float]] = {name: [] for name in commands}
        split: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        for round_index in range(options.rounds + 1):  # round 0 writes and warms the bytecode
            seconds = wall([sys.executable, "-c", "pass"])
            for name, args in commands.items():
                command = wall([sys.executable, "-m", "evalkit.cli.entry", *args])
                parts = phases(args)
                if round_index:
                    whole[name].append(command)
                    split[name].append(parts)
            if round_index:
                floor.append(seconds)
        print(f"load average after: {os.getloadavg()}")
        interpreter = statistics.median(floor)
        for name in commands:
            total = statistics.median(whole[name])
            print(f"\n`{name}`: {1000 * total:.0f} ms whole (median of {options.rounds})")
            print("| phase | ms |\n| --- | ---: |")
            print(f"| interpreter, site packages (`python -c pass`) | {1000 * interpreter:.0f} |")
            medians = {
                phase: statistics.median(parts[phase] for parts in split[name])
                for phase in split[name][0]
            }
            for phase, seconds in medians.items():
                print(f"| {phase} | {1000 * seconds:.0f} |")
            summed = sum(seconds for phase, seconds in medians.items() if NOTE not in phase)
            rest = total - interpreter - summed
            print(f"| the rest (output, exit; noise can make it negative) | {1000 * rest:.0f} |")


if __name__ == "__main__":
    main()
