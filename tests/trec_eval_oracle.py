"""trec_eval 10.0 as a test oracle: built from source into a temporary folder, once per session.

The source is NIST's trec_eval 10.0 (``shared/oracles/trec_eval-10.0`` beside the repository,
read-only; its licence is ``LICENSE.md`` there). The copy built here is a modified work: its
print format is widened from ``%6.4f`` to ``%.17g`` in ``meas_print_single.c`` and
``meas_print_final.c`` so values compare at 1e-9, not 4 decimals; nothing else changes. Tests
that use it skip cleanly when the source, ``make`` or a C compiler is missing.

The ``trec_eval10`` fixture (``conftest``) gives a :class:`TrecEval10`; ``trec_eval10_plain``
is the release's own output (4 decimals) and ``trec_eval10_rbp_fixed`` the same with
:data:`RBP_FIX` (both modified works only as stated). :func:`read_trec_eval_output` reads the
``-q`` lines that trec_eval (and ``evalkit trec-eval``) print. This module imports no evalkit
code: the comparisons with evalkit's values are ``oracles``'.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

# shared/ lies beside the repository (a session's checkout and CI's clone alike).
_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "oracles" / "trec_eval-10.0"
SOURCE = Path(os.environ.get("TREC_EVAL_10_SOURCE", _BESIDE))
#: trec_eval 9.0.8 (the release inside pytrec-eval-terrier), beside 10.0's source
SOURCE_9 = Path(os.environ.get("TREC_EVAL_9_SOURCE", _BESIDE.parent / "trec_eval-9.0.8"))
TEST_DIR = SOURCE / "test"
HOW_TO_ENABLE = (
    "set TREC_EVAL_10_SOURCE to a trec_eval 10.0 source folder (the project's copy is "
    "shared/oracles/trec_eval-10.0 beside the repository) to run the trec_eval oracle tests"
)


@dataclass(frozen=True)
class TrecEval10:
    """The built (widened-output) trec_eval 10.0 binary."""

    binary: Path

    def run(self, args: Iterable[str]) -> subprocess.CompletedProcess[str]:
        """``trec_eval *args``; never raises on a non-zero exit."""
        return subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, check=False, timeout=120
        )

    def values(
        self, qrels: Path, run: Path, measures: Iterable[str], *options: str
    ) -> dict[tuple[str, str], float]:
        """``{(trec measure name, query_id or "all"): value}`` of ``trec_eval -q``."""
        args = ["-q", *options, *measure_arguments(measures), str(qrels), str(run)]
        done = self.run(args)
        if done.returncode != 0:
            raise RuntimeError(f"trec_eval exited {done.returncode}: {done.stderr.strip()}")
        printed = read_trec_eval_output(done.stdout)
        return {key: float(value) for key, value in printed.items() if key[0] != "runid"}


def measure_arguments(measures: Iterable[str]) -> list[str]:
    """``["-m", m1, "-m", m2, ...]``: each measure as its own ``-m`` argument."""
    return [arg for measure in measures for arg in ("-m", measure)]


def read_trec_eval_output(text: str) -> dict[tuple[str, str], str]:
    """``{(measure, query_id): value}`` of trec_eval's ``-q`` lines (``name<padding>\\tquery\\t
    value``), the value as printed."""
    values = {}
    for line in text.splitlines():
        name, query, value = line.split("\t")
        values[(name.rstrip(), query)] = value
    return values


def _compiler() -> str | None:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


#: m_rbp.c reads ``min`` and ``max`` before setting them (rbp after other measures prints
#: whatever the stack held); the fixed program starts both at 0.
RBP_FIX = {"m_rbp.c": ("double sum, min, max;", "double sum, min = 0, max = 0;")}


def build_trec_eval10(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    patches: dict[str, tuple[str, str]],
    *,
    source: Path = SOURCE,
    version: str = "10.0",
) -> TrecEval10:
    """Copy the source to a temporary folder, replace ``{file: (old, new)}`` in it (each
    ``old`` must occur) and build it; skip when the source, make or a C compiler is missing.
    ``source`` and ``version``: another release's source (9.0.8's, beside 10.0's)."""
    compiler = _compiler()
    if not (source / "Makefile").is_file():
        pytest.skip(f"trec_eval {version} source not found at {source}; {HOW_TO_ENABLE}")
    if compiler is None or shutil.which("make") is None:
        pytest.skip(
            "no C compiler or make: cannot build the trec_eval 10.0 oracle; install a C "
            "compiler and make (Debian: apt-get install build-essential)"
        )
    folder = tmp_path_factory.mktemp(name) / "src"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("test"))
    for file, (old, new) in patches.items():
        path = folder / file
        text = path.read_text()
        if old not in text:
            raise RuntimeError(f"{file} of {source} has no {old!r} to patch")
        path.write_text(text.replace(old, new))
    # -O1 and no debug info: a faster build than the Makefile's -g on a busy machine
    done = subprocess.run(
        [
            "make",
            "-C",
            str(folder),
            f"CC={compiler}",
            f'CFLAGS=-O1 -I. -w -DVERSIONID=\\"{version}\\"',
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    binary = folder / "trec_eval"
    if done.returncode != 0 or not binary.is_file():
        pytest.skip(f"building trec_eval {version} failed: {done.stderr[-500:]}")
    return TrecEval10(binary)
