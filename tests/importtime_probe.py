"""Which modules an ``evalkit`` command imports, read from ``python -X importtime``
(tests/test_import_cost.py and benchmarks/bench_trec_eval_cli.py; benchmarks import it with
``tests/`` put on ``sys.path``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

__all__ = ["imported_by_command"]


def imported_by_command(
    args: list[str], *, env: Mapping[str, str] | None = None, timeout: float | None = 120
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``(the finished process, the dotted name of every module it imported)`` for
    ``python -m evalkit.cli.entry ARGS``; ``env`` is the child's environment (None: this one's)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalkit.cli.entry", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env=None if env is None else dict(env),
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    return done, {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # [0]: the header
