"""trec_eval 10.0 as a test oracle: built from source into a temporary folder, once per session.

The source is NIST's trec_eval 10.0 (``shared/oracles/trec_eval-10.0`` beside the repository,
read-only; its licence is ``LICENSE.md`` there). The copy built here is a modified work: its
print format is widened from ``%6.4f`` to ``%.17g`` in ``meas_print_single.c`` and
``meas_print_final.c`` so values compare at 1e-9, not 4 decimals; nothing else changes. Tests
that use it skip cleanly when the source, ``make`` or a C compiler is missing.

Use the ``trec_eval10`` fixture (import it into a test module), which gives a
:class:`TrecEval10`; ``trec_eval10_plain`` is the release's own output (4 decimals) and
``trec_eval10_rbp_fixed`` the same with :data:`RBP_FIX` (both modified works only as stated).
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
        args = ["-q", *options]
        for m in measures:
            args += ["-m", m]
        done = self.run([*args, str(qrels), str(run)])
        if done.returncode != 0:
            raise RuntimeError(f"trec_eval exited {done.returncode}: {done.stderr.strip()}")
        out: dict[tuple[str, str], float] = {}
        for line in done.stdout.splitlines():
            name, query, value = (part.strip() for part in line.split("\t"))
            if name == "runid":
                continue
            out[(name, query)] = float(value)
        return out


def _compiler() -> str | None:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


@pytest.fixture(scope="session")
def trec_eval10(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """Build trec_eval 10.0 with widened output in a temporary folder (skip if impossible)."""
    widened = dict.fromkeys(("meas_print_single.c", "meas_print_final.c"), ("%6.4f", "%.17g"))
    return build_trec_eval10(tmp_path_factory, "trec_eval10", widened)


#: m_rbp.c reads ``min`` and ``max`` before setting them (rbp after other measures prints
#: whatever the stack held); the fixed program starts both at 0.
RBP_FIX = {"m_rbp.c": ("double sum, min, max;", "double sum, min = 0, max = 0;")}


@pytest.fixture(scope="session")
def trec_eval10_plain(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """trec_eval 10.0 as released (4-decimal output), built in a temporary folder."""
    return build_trec_eval10(tmp_path_factory, "trec_eval10_plain", {})


@pytest.fixture(scope="session")
def trec_eval10_rbp_fixed(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """trec_eval 10.0 as released but with :data:`RBP_FIX` (a modified work: the two
    uninitialized variables of m_rbp.c set to 0), 4-decimal output."""
    return build_trec_eval10(tmp_path_factory, "trec_eval10_rbp_fixed", RBP_FIX)


def build_trec_eval10(
    tmp_path_factory: pytest.TempPathFactory, name: str, patches: dict[str, tuple[str, str]]
) -> TrecEval10:
    """Copy the source to a temporary folder, replace ``{file: (old, new)}`` in it (each
    ``old`` must occur) and build it; skip when the source, make or a C compiler is missing."""
    compiler = _compiler()
    if not (SOURCE / "Makefile").is_file():
        pytest.skip(f"trec_eval 10.0 source not found at {SOURCE}; {HOW_TO_ENABLE}")
    if compiler is None or shutil.which("make") is None:
        pytest.skip(
            "no C compiler or make: cannot build the trec_eval 10.0 oracle; install a C "
            "compiler and make (Debian: apt-get install build-essential)"
        )
    folder = tmp_path_factory.mktemp(name) / "src"
    shutil.copytree(SOURCE, folder, ignore=shutil.ignore_patterns("test"))
    for file, (old, new) in patches.items():
        path = folder / file
        text = path.read_text()
        if old not in text:
            raise RuntimeError(f"{file} of {SOURCE} has no {old!r} to patch")
        path.write_text(text.replace(old, new))
    # -O1 and no debug info: a faster build than the Makefile's -g on a busy machine
    done = subprocess.run(
        ["make", "-C", str(folder), f"CC={compiler}", 'CFLAGS=-O1 -I. -w -DVERSIONID=\\"10.0\\"'],
        capture_output=True,
        text=True,
        check=False,
    )
    binary = folder / "trec_eval"
    if done.returncode != 0 or not binary.is_file():
        pytest.skip(f"building trec_eval 10.0 failed: {done.stderr[-500:]}")
    return TrecEval10(binary)
