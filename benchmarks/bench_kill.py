"""``kill -9`` at random moments of ``evalkit import`` and ``evalkit report``, then one normal
run of each: is anything left behind, and are earlier outputs intact? (issue 49)

The larger form of ``tests/test_kill_leftovers.py``: a bigger generated BEIR collection and the
committed fixture's report, ``--kills`` of each (default 100). Each run gets its own TMPDIR,
JUPYTER_RUNTIME_DIR and a git workspace in a temporary folder. It prints, per command, the
normal run's time, the number of kills, what ``git status``, TMPDIR and the runtime folder hold
after the last normal run, the cleanup lines printed, and whether the earlier outputs are
byte-identical; it exits 1 when anything is left.

    .venv/bin/python benchmarks/bench_kill.py                    # ~30 minutes on 2 cores
    .venv/bin/python benchmarks/bench_kill.py --kills 20 --documents 3000   # a quick look
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"
sys.path.insert(0, str(REPO / "tests"))
from kill_harness import EVALKIT, snapshot, start_evalkit, write_beir_collection  # noqa: E402


def _trial(
    base: pathlib.Path, name: str, argv: list[str], first: str, then: str, *, kills: int
) -> bool:
    """Run ``argv + [first]`` once, kill ``argv + [then]`` ``kills`` times, run it once; print
    what is left. True when nothing is."""
    workspace, tmp, runtime = base / name / "ws", base / name / "tmp", base / name / "runtime"
    for folder in (workspace, tmp, runtime):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    env = {**os.environ, "TMPDIR": str(tmp), "JUPYTER_RUNTIME_DIR": str(runtime)}

    def start(output: str) -> subprocess.Popen[str]:
        return start_evalkit([*argv, output], workspace, env)

    began = time.monotonic()
    _, err = start(first).communicate()
    normal_s = time.monotonic() - began
    earlier = snapshot(workspace)
    rng = random.Random(49)
    for _ in range(kills):
        process = start(then)
        time.sleep(rng.uniform(0, normal_s))
        process.send_signal(signal.SIGKILL)
        process.communicate()
    completed = workspace / then
    if completed.is_dir() and any(completed.iterdir()):  # a finished import: it must be whole
        checked = subprocess.run(
            [str(EVALKIT), "validate", then],
            cwd=workspace,
            env=env,
            capture_output=True,
            check=False,
        )
        print(f"{name}: a killed run had finished; it validates: {checked.returncode == 0}")
        shutil.rmtree(completed)
    began = time.monotonic()
    process = start(then)
    _, err = process.communicate()
    last_s = time.monotonic() - began
    time.sleep(5)  # orphan kernels notice their parent is gone
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    stem = pathlib.PurePath(then).with_suffix("").as_posix()
    unexpected = [
        s
        for s in status
        if not any(s.startswith(f"?? {p}") for p in (first.rsplit(".", 1)[0], stem))
    ]
    left_tmp = [p.relative_to(tmp).as_posix() for p in tmp.rglob("*")]
    left_runtime = [p.relative_to(runtime).as_posix() for p in runtime.rglob("*") if p.is_file()]
    now = snapshot(workspace)
    intact = all(now.get(k) == v for k, v in earlier.items())
    lines = [line for line in err.splitlines() if line.startswith("evalkit: cleaned up")]
    print(
        f"{name}: normal run {normal_s:.1f} s; {kills} kills; last run rc {process.returncode} "
        f"({last_s:.1f} s); unexpected git status entries {len(unexpected)}; TMPDIR entries "
        f"{len(left_tmp)}; runtime files {len(left_runtime)}; earlier outputs intact {intact}; "
        f"cleanup lines {len(lines)}"
    )
    for line in lines:
        print(f"  {line}")
    return (
        process.returncode == 0 and not unexpected and not left_tmp and not left_runtime and intact
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--documents", type=int, default=40_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-kill-") as scratch:
        base = pathlib.Path(scratch)
        write_beir_collection(base / "collection", args.documents)
        source = os.path.relpath(base / "collection", base / "import" / "ws")
        clean = _trial(
            base,
            "import",
            ["import", "beir", source, "--license", "CC0-1.0", "--output"],
            "out/a",
            "out/b",
            kills=args.kills,
        )
        clean &= _trial(
            base,
            "report",
            ["report", str(COMMITTED), "-p", "systems", "lexical", "--output"],
            "reports/a.html",
            "reports/b.html",
            kills=args.kills,
        )
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
