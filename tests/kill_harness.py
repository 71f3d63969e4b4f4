"""What the signal and ``kill -9`` checks share (tests/test_faults.py, tests/test_kill_leftovers.py,
benchmarks/bench_kill.py): a generated BEIR collection, the ``evalkit`` command started in a
workspace, and a byte snapshot of a folder.

Benchmarks import it with ``tests/`` put on ``sys.path``.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
from collections.abc import Mapping

__all__ = ["EVALKIT", "snapshot", "start_evalkit", "write_beir_collection"]

EVALKIT = pathlib.Path(sys.executable).with_name("evalkit")
"""The ``evalkit`` entry point of the running interpreter's environment."""

_WORDS = ["tide", "ferry", "harbour", "moon", "current", "sea", "wind", "coast"]


def write_beir_collection(root: pathlib.Path, documents: int, *, words: int = 60) -> None:
    """A BEIR collection under ``root``: ``documents`` documents of ``words`` words each, one
    query (``q1``) and one qrel (``q1`` → ``d1``)."""
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(documents):
            text = " ".join(_WORDS[(i + j) % len(_WORDS)] for j in range(words))
            handle.write(f'{{"_id": "d{i}", "title": "t{i}", "text": "{text}"}}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "tide"}\n', "utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "utf-8")


def snapshot(folder: pathlib.Path) -> dict[str, bytes]:
    """Every file under ``folder``: its POSIX path relative to ``folder`` → its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def start_evalkit(
    argv: list[str], workspace: pathlib.Path, env: Mapping[str, str]
) -> subprocess.Popen[str]:
    """``evalkit *argv`` started in ``workspace`` with ``env``: stdout dropped, stderr piped
    as text."""
    return subprocess.Popen(
        [str(EVALKIT), *argv],
        cwd=workspace,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
