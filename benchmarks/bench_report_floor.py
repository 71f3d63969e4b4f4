"""The floor under ``evalkit report``: what executing any notebook this way costs (issue 48).

Run from the repository root::

    python benchmarks/bench_report_floor.py --rounds 3

Three whole processes, alternately in each round, each started with this interpreter:

- ``empty``: :func:`evalkit.report.execute_notebook` (papermill on the report's own kernel
  manager and client) of a one-cell notebook (``1 + 1``);
- ``imports + 1 figure``: the same, of a notebook whose one cell imports what the report
  notebook's setup cell imports (pandas, ``%matplotlib inline``, evalkit's plots and tables)
  and shows one small matplotlib figure as PNG;
- ``evalkit report``: ``make report``'s command on the committed fixture
  (``evalkit report fixtures/synthetic-bilingual-v1 -p probes fixtures/probes``).

The second is the least any report notebook with a table library and one figure costs when a
kernel executes it, before it evaluates, tests or draws anything of its own; the report's
target (3 s for the committed fixture) is compared with it. For the two notebooks the time
counted ends with their last cell (papermill's ``end_time``): the kernel's shutdown, which
``evalkit report`` does not wait for, is left out, so the floor is if anything too low.
Medians of wall and CPU seconds (the process and its children: the kernel; the CPU includes
the shutdown), and the load average before each round.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from bench_report import TARGETS_S

REPO = Path(__file__).resolve().parent.parent

_NOTEBOOK_RUN = textwrap.dedent(
    """
    import time
    started = time.time()
    import sys
    from datetime import datetime
    from evalkit.report import execute_notebook
    executed = execute_notebook(sys.argv[1], {})
    ended = datetime.fromisoformat(executed.cells[-1].metadata.papermill.end_time).timestamp()
    print(f"to the last cell's end: {ended - started:.3f}")
    """
)
_IMPORTS_AND_FIGURE = textwrap.dedent(
    """
    %matplotlib inline
    import pandas as pd
    from IPython.display import Markdown, display
    from evalkit.report import plots
    from evalkit.report import tables as report_tables
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4, 3))
    figure.add_subplot().plot([1, 2, 3], [2, 1, 3])
    figure
    """
)


def _notebook(folder: Path, name: str, source: str) -> Path:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source.strip())]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = folder / name
    nbformat.write(notebook, path)
    return path


def _timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds (to the last cell's end when the process prints it) and CPU seconds (the
    process and its children) of ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    for line in done.stdout.splitlines():
        if line.startswith("to the last cell's end: "):
            wall = float(line.rsplit(" ", 1)[1])
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        commands = {
            "empty": [
                sys.executable,
                "-c",
                _NOTEBOOK_RUN,
                str(_notebook(folder, "empty.ipynb", "1 + 1")),
            ],
            "imports + 1 figure": [
                sys.executable,
                "-c",
                _NOTEBOOK_RUN,
                str(_notebook(folder, "figure.ipynb", _IMPORTS_AND_FIGURE)),
            ],
            "evalkit report": [
                *(sys.executable, "-m", "evalkit.cli.entry", "report"),
                str(REPO / "fixtures" / "synthetic-bilingual-v1"),
                *("-p", "probes", str(REPO / "fixtures" / "probes")),
                *("--output", "reports/report.html"),
            ],
        }
        seen: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for _ in range(options.rounds):
            for name, args in commands.items():
                load = os.getloadavg()[0]
                wall, cpu = _timed(args, folder)
                seen[name].append((wall, cpu, load))
                print(f"  {name}: {wall:.2f} s (CPU {cpu:.2f} s, load {load:.1f})", flush=True)
    medians = {name: statistics.median(v[0] for v in values) for name, values in seen.items()}
    for name, values in seen.items():
        print(
            f"{name}: median {medians[name]:.2f} s, CPU median "
            f"{statistics.median(v[1] for v in values):.2f} s; load "
            f"{', '.join(f'{v[2]:.1f}' for v in values)}"
        )
    floor, target = medians["imports + 1 figure"], TARGETS_S["issue 48"]
    print(
        f"evalkit report / floor: {medians['evalkit report'] / floor:.2f}x; the floor alone is "
        f"{floor / target:.2f}x the {target:g} s target"
    )


if __name__ == "__main__":
    main()
