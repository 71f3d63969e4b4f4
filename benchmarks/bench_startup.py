"""Start-up of every ``evalkit`` command, whole process (issue 48: the cheap ones under 0.3 s).

Run from the repository root::

    python benchmarks/bench_startup.py                    # 5 rounds
    python benchmarks/bench_startup.py --rounds 7 --before ../old-tree
    python benchmarks/bench_startup.py --rounds 15 --before ../old-tree --only FIXTURE

One row per command: ``evalkit --help``, ``--version``, ``COMMAND --help`` for every
subcommand (the parser and the dispatch to the command's module, which is the whole of a
command's start-up before it reads its inputs), and two cheap commands on the committed fixture
(``validate FIXTURE`` and ``scan FIXTURE PAGE``, a small generated HTML page): their time
includes the work, which is small there; ``--page PATH`` scans that file instead (an HTML
report of the fixture, with its notebook beside it, as ``evalkit report`` writes them).
``python -c pass`` is the floor (the interpreter alone). Each process is timed from spawn to
exit (``time.perf_counter``), with its CPU seconds (user + system, ``RUSAGE_CHILDREN``); the
commands alternate within a round (and with ``--before DIR``, the same command of the other
tree runs right after, ``PYTHONPATH=DIR``), so the machine's load weighs on all alike; medians
are printed with the load average. Bytecode is written and a first
untimed round warms it, as an installed package has its ``.pyc`` files. The last column lists
the heavy libraries the command imports (``-X importtime``): numpy, pandas, pyarrow, SciPy,
matplotlib, pydantic, PyYAML, nbformat.
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
FIXTURE = REPO / "fixtures" / "synthetic-bilingual-v1"
HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib", "pydantic", "yaml", "nbformat")
TARGET = 0.3
CHEAP = ("--help", "validate --help", "scan --help", "validate FIXTURE", "scan FIXTURE PAGE")


def commands(page: Path) -> dict[str, list[str]]:
    """Row label -> arguments of ``evalkit``."""
    sys.path.insert(0, str(REPO))
    from evalkit.cli import build_parser

    _, handlers = build_parser()
    rows = {"--help": ["--help"], "--version": ["--version"]}
    rows.update({f"{name} --help": [name, "--help"] for name in handlers})
    rows["validate FIXTURE"] = ["validate", str(FIXTURE)]
    rows["scan FIXTURE PAGE"] = ["scan", str(FIXTURE), str(page)]
    return rows


def small_page(folder: Path) -> Path:
    """A small HTML page in ``folder``, without fixture text: what ``scan`` reads by default."""
    page = folder / "report.html"
    page.write_text("<html><body><p>nDCG@10 0.512</p></body></html>\n", encoding="utf-8")
    return page


def environment(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    return env


def timed(args: list[str], tree: Path) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds, exit code)`` of one process, spawn to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, env=environment(tree), cwd=tree, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.returncode


def heavy_imports(args: list[str], tree: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args[1:]],
        env=environment(tree),
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    return [name for name in HEAVY if name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another tree to time alternately")
    parser.add_argument("--page", type=Path, help="the file `scan` reads (default: a small page)")
    parser.add_argument(
        "--only", nargs="+", metavar="TEXT", help="the rows whose label holds one of these"
    )
    options = parser.parse_args()
    trees = {"after": REPO} | ({"before": options.before.resolve()} if options.before else {})
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-startup-") as folder:
        page = options.page.resolve() if options.page else small_page(Path(folder))
        rows = {"python -c pass (floor)": ["-c", "pass"]} | {
            label: ["-m", "evalkit.cli.entry", *args]
            for label, args in commands(page).items()
            if not options.only or any(text in label for text in options.only)
        }
        print(f"load average before: {os.getloadavg()}")
        times: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        for round_index in range(options.rounds + 1):  # round 0 writes and warms the bytecode
            for label, args in rows.items():
                for tree_name, tree in trees.items():
                    seconds = timed([sys.executable, *args], tree)
                    if round_index:
                        times.setdefault((label, tree_name), []).append(seconds)
        print(f"load average after: {os.getloadavg()}")
        header = "| command | " + " | ".join(f"{name} s (CPU s)" for name in trees)
        print(header + " | under 0.3 s | heavy imports (after) |")
        print("| --- |" + " ---: |" * len(trees) + " --- | --- |")
        for label, args in rows.items():
            medians = [
                (
                    statistics.median(wall for wall, _, _ in times[label, name]),
                    statistics.median(cpu for _, cpu, _ in times[label, name]),
                    # a command that failed is timed all the same; its cell says so
                    "".join(sorted({f" exit {rc}" for *_, rc in times[label, name] if rc})),
                )
                for name in trees
            ]
            cheap = "yes" if medians[0][0] <= TARGET else "no"
            cheap = cheap if label in CHEAP else "—"
            heavy = ", ".join(heavy_imports([sys.executable, *args], REPO)) or "none"
            cells = " | ".join(f"{wall:.3f} ({cpu:.3f}){failed}" for wall, cpu, failed in medians)
            print(f"| `{label}` | {cells} | {cheap} | {heavy} |")


if __name__ == "__main__":
    main()
