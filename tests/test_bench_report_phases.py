"""``benchmarks/bench_report.py``'s phases still run against the report's code: the script
reaches into the report's private parts to time them one by one, so a rename or a new
argument there must fail here, not first in the next person's benchmark run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import load_benchmark

REPO = Path(__file__).resolve().parent.parent


def test_the_phases_run_on_the_committed_fixture() -> None:
    bench = load_benchmark("bench_report.py")
    done = subprocess.run(
        [sys.executable, "-c", bench._PHASES, "fixtures/synthetic-bilingual-v1", ""],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    times = json.loads(done.stdout.strip().splitlines()[-1])
    expected = ["kernel start", "imports", "evaluation", "helper", "kernel statistics", "plots"]
    assert list(times) == expected  # the export is timed only with an executed notebook
    assert all(wall > 0 and cpu > 0 for wall, cpu in times.values())
