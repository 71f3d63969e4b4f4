"""``evalkit trec-eval`` against trec_eval 10.0's C binary, and the commands' start-up (issue 48).

Run from the repository root::

    python benchmarks/bench_trec_eval_cli.py               # 100k and 1M lines, 5 rounds each
    python benchmarks/bench_trec_eval_cli.py --rounds 3 --sizes 100000

The C binary is built from ``../shared/oracles/trec_eval-10.0`` (or ``TREC_EVAL_10_SOURCE``) in a
temporary folder, as that folder's README says. The run files are generated (seed 0): 1,000
queries, scores with one decimal (ties are common), about 20 judged documents per query. Both
programs run alternately in the same loop (evalkit, then C, per round), so the machine's load
weighs on both alike; each prints the official measures and both outputs are compared byte for
byte. Then the start-up of each cheap command (``--help``, ``validate --help``, ``scan --help``,
``trec-eval -h``) is timed as a whole process, and the modules ``trec-eval`` imports are
checked for pandas, SciPy, matplotlib and pydantic. Medians are printed with the load average
before and after each size.

Python runs as an installed package runs: with its modules' bytecode compiled once (in a
scratch ``PYTHONPYCACHEPREFIX``; a ``PYTHONDONTWRITEBYTECODE`` of the calling shell would
otherwise recompile every evalkit module in every process, about 0.1 s), after one untimed
warm-up run of each program.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = Path(
    os.environ.get("TREC_EVAL_10_SOURCE", REPO.parent / "shared" / "oracles" / "trec_eval-10.0")
)
EVALKIT = [sys.executable, "-m", "evalkit.cli.entry"]
CHEAP = (["--help"], ["validate", "--help"], ["scan", "--help"], ["trec-eval", "-h"])
FORBIDDEN = ("pandas", "scipy", "matplotlib", "pydantic")


def build_c(folder: Path) -> Path:
    """trec_eval 10.0 built from its source in ``folder``."""
    target = folder / "trec_eval-10.0"
    shutil.copytree(SOURCE, target)
    subprocess.run(["make", "-s", "-C", str(target)], check=True, capture_output=True)
    return target / "trec_eval"


def write_files(folder: Path, lines: int, seed: int = 0) -> tuple[Path, Path]:
    """A qrels and a run of ``lines`` result lines over 1,000 queries."""
    rng = random.Random(seed)
    n_q = 1000
    per_query = lines // n_q
    qrels, run = folder / f"{lines}.qrels", folder / f"{lines}.run"
    with qrels.open("w") as q_out, run.open("w") as r_out:
        for q in range(n_q):
            docs = rng.sample(range(per_query * 5), per_query)
            r_out.writelines(
                f"q{q} Q0 d{d} {i + 1} {round(rng.random() * 10, 1)} sys\n"
                for i, d in enumerate(docs)
            )
            judged = set(docs[:: max(1, per_query // 10)]) | set(
                rng.sample(range(per_query * 5), 10)
            )
            q_out.writelines(f"q{q} 0 d{d} {rng.randint(0, 3)}\n" for d in sorted(judged))
    return qrels, run


_CPU: list[float] = []  # CPU seconds (user + system) of each timed process, in order


def timed(command: list[str], root: Path = REPO) -> tuple[float, bytes]:
    """Wall seconds and stdout of ``command``; its CPU seconds are appended to ``_CPU`` (on a
    loaded machine they vary less than the wall time, which waits for a core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # in the tree's folder: ``python -m`` puts the working folder first on the path
    done = subprocess.run(command, capture_output=True, check=False, env=_env(root), cwd=root)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, done.stdout


_PYCACHE = Path(tempfile.gettempdir()) / f"evalkit-bench-pycache-{os.getuid()}"


def _env(root: Path = REPO) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH", "")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as an installed package has it
    env["PYTHONPYCACHEPREFIX"] = str(_PYCACHE)
    return env


def imported_modules(args: list[str]) -> set[str]:
    """The top-level packages ``evalkit ARGS`` imports (``python -X importtime``)."""
    sys.path.insert(0, str(REPO / "tests"))
    from importtime_probe import imported_by_command

    _, modules = imported_by_command(args, env=_env(), timeout=None)
    return {name.split(".")[0] for name in modules}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--before",
        type=Path,
        help="another evalkit tree (e.g. an exported older commit), timed in the same loop",
    )
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        binary = build_c(folder)
        for lines in options.sizes:
            qrels, run = write_files(folder, lines)
            timed([*EVALKIT, "trec-eval", str(qrels), str(run)])  # warm-up (bytecode, cache)
            timed([str(binary), str(qrels), str(run)])
            print(f"load average before {lines:,} lines: {os.getloadavg()}")
            ours, theirs, before = [], [], []
            cpu: dict[str, list[float]] = {"evalkit": [], "C": [], "before": []}
            command = [*EVALKIT, "trec-eval", str(qrels), str(run)]
            if options.before is not None:
                timed(command, options.before)
            for _ in range(options.rounds):
                t_ours, out_ours = timed(command)
                cpu["evalkit"].append(_CPU[-1])
                t_c, out_c = timed([str(binary), str(qrels), str(run)])
                cpu["C"].append(_CPU[-1])
                if out_ours != out_c:
                    raise SystemExit(f"{lines} lines: the outputs differ")
                ours.append(t_ours)
                theirs.append(t_c)
                if options.before is not None:
                    before.append(timed(command, options.before)[0])
                    cpu["before"].append(_CPU[-1])
            a, b = statistics.median(ours), statistics.median(theirs)
            print(
                f"{lines:>9,} lines: evalkit {a:.3f} s, trec_eval (C) {b:.3f} s, "
                f"ratio {a / b:.2f}x (medians of {options.rounds}; identical output); load "
                f"average after: {os.getloadavg()}"
            )
            if before:
                old = statistics.median(before)
                print(f"{lines:>9,} lines: the --before tree {old:.3f} s, ratio {old / b:.2f}x")
            shown = ", ".join(
                f"{name} {statistics.median(times):.3f} s" for name, times in cpu.items() if times
            )
            c_cpu = statistics.median(cpu["C"])
            print(
                f"{lines:>9,} lines, CPU time (user + system): {shown}; evalkit / C "
                f"{statistics.median(cpu['evalkit']) / c_cpu:.2f}x"
            )
        for args in CHEAP:
            times = [timed([*EVALKIT, *args])[0] for _ in range(options.rounds)]
            print(f"start-up of evalkit {' '.join(args)}: {statistics.median(times):.3f} s")
        loaded = imported_modules(["trec-eval", str(qrels), str(run)])
        print(f"trec-eval imports of {FORBIDDEN}: {sorted(loaded & set(FORBIDDEN)) or 'none'}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
