"""Indexing at corpus scale (issue 21): each reference system indexes a generated fixture.

Each system runs in its own process (so peak memory is its own), which builds the fixture in
memory with ``evalkit.fixtures.generate_fixture`` (no file form is involved), indexes its
chunks once and reports the wall and CPU seconds of ``index`` and the process's peak RSS
(fixture included; the fixture alone is measured by the ``fixture`` row). A child that fails
(for example out of memory under ``--memory-limit-gb``) is reported as failed, with its exit
code, and the others still run. The target: ``lexical`` (SQLite FTS5) indexes 1,000,000 chunks
in at most 60 s.

    .venv/bin/python benchmarks/bench_index.py [--documents 250000] [--systems lexical ...]

The default is 250,000 documents x 4 chunks = 1,000,000 chunks. ``--aliases DIR`` attaches a
fixture's ``aliases.yaml`` to the generated fixture (default: none, as for a user's corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

SYSTEMS = ("lexical", "token-hash", "alias-vector", "hybrid", "hybrid-rerank")
TARGET_SECONDS = {"lexical": 60.0}  # issue 21, at TARGET_CHUNKS chunks
TARGET_CHUNKS = 1_000_000


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(
    system: str, documents: int, chunks_per_document: int, aliases: str
) -> dict[str, float]:
    from evalkit.fixtures import generate_fixture, load_fixture
    from evalkit.systems.protocol import provide_aliases
    from evalkit.systems.reference import resolve_system

    started = time.perf_counter()
    fixture = generate_fixture(
        1, documents=documents, chunks_per_document=chunks_per_document, queries=10
    )
    if aliases != "none":
        fixture = fixture.model_copy(update={"aliases": load_fixture(aliases).aliases})
    row = {
        "chunks": float(len(fixture.chunks)),
        "generate_s": time.perf_counter() - started,
        "fixture_peak_mb": _peak_mb(),
    }
    if system == "fixture":
        return row
    retriever = resolve_system(system)
    provide_aliases(retriever, fixture.aliases)
    started, cpu_started = time.perf_counter(), time.process_time()
    retriever.index(fixture.chunks)
    row["index_s"] = time.perf_counter() - started
    row["index_cpu_s"] = time.process_time() - cpu_started
    row["peak_mb"] = _peak_mb()
    retriever.close()
    return row


def _limit_memory(gigabytes: float) -> None:
    limit = int(gigabytes * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=250_000)
    parser.add_argument("--chunks-per-document", type=int, default=4)
    parser.add_argument("--systems", nargs="+", default=["fixture", *SYSTEMS])
    parser.add_argument("--aliases", default="none")
    parser.add_argument(
        "--memory-limit-gb", type=float, default=12.0, help="address-space limit per child"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _limit_memory(args.memory_limit_gb)
        print(json.dumps(run_one(args.one, args.documents, args.chunks_per_document, args.aliases)))
        return
    load = os.getloadavg()[0]
    print(f"load average at start {load:.1f} on {os.cpu_count()} CPUs")
    header = ["chunks", "index s", "cpu s", "peak MB", "target"]
    print(f"{'system':14s} " + " ".join(f"{h:>10s}" for h in header))
    for system in args.systems:
        command = [sys.executable, __file__, "--one", system, "--documents", str(args.documents)]
        command += ["--chunks-per-document", str(args.chunks_per_document)]
        command += ["--aliases", args.aliases, "--memory-limit-gb", str(args.memory_limit_gb)]
        out = subprocess.run(command, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            reason = "out of memory" if "MemoryError" in out.stderr else f"exit {out.returncode}"
            print(f"{system:14s} failed: {reason} (limit {args.memory_limit_gb:g} GB)")
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        if system == "fixture":
            print(
                f"{'fixture':14s} {row['chunks']:10.0f} {row['generate_s']:10.1f} "
                f"{'':>10s} {row['fixture_peak_mb']:10.0f}   (generate_fixture alone)"
            )
            continue
        target = TARGET_SECONDS.get(system)
        verdict = ""
        if target is not None:  # the target is for a million chunks
            verdict = "n/a <1M" if row["chunks"] < TARGET_CHUNKS else "met"
            verdict = "missed" if verdict == "met" and row["index_s"] > target else verdict
        print(
            f"{system:14s} {row['chunks']:10.0f} {row['index_s']:10.1f} {row['index_cpu_s']:10.1f} "
            f"{row['peak_mb']:10.0f} {verdict:>10s}"
        )
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
