"""Scale check of ``evaluate`` (issue 9): a generated fixture of 20,000 chunks and 2,000 queries.

Runs each reference system in its own process (so peak memory is per system), with the default
two determinism repeats, and prints seconds and peak RSS per system. The generated fixture gets
the concept table of ``--aliases`` (default: the committed synthetic-bilingual-v1's
``aliases.yaml``, the table the package shipped before issue 14), so the alias code paths do
real work; ``--aliases none`` runs without a table.

    .venv/bin/python benchmarks/bench_evaluate.py [--documents 5000] [--queries 2000]

At corpus scale (issue 21), one system, one repeat, with progress bars for indexing and for the
queries on stderr (``--progress``; counts only):

    .venv/bin/python benchmarks/bench_evaluate.py --documents 250000 --queries 10000 \
        --systems lexical --repeats 1 --aliases none --progress --cached

``--cached`` generates the fixture once (seed 1) into ``benchmarks/data/`` in Parquet form (the
directory ``bench_index.py`` uses) and each child loads it with ``load_fixture`` (chunks kept as
Arrow columns) instead of generating a million chunks as models (about 4 minutes and 4.4 GB);
the fixture's content is the same either way. The load is not part of the timed ``evaluate``.
Measured with that command (load average 1.0): 746.4 s wall (about 175 s indexing, 540 s for
the 10,000 searches), 2,172 MB peak RSS; both progress bars shown.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_ALIASES = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"


def run_one(  # noqa: PLR0917 - a benchmark's flat argument list
    system: str,
    documents: int,
    chunks_per_document: int,
    queries: int,
    aliases: str,
    repeats: int = 2,
    progress: bool = False,
    fixture_dir: str | None = None,
) -> dict[str, float]:
    from evalkit.fixtures import generate_fixture, load_fixture
    from evalkit.run import evaluate

    if fixture_dir is not None:
        fixture = load_fixture(fixture_dir)
    else:
        fixture = generate_fixture(
            1, documents=documents, chunks_per_document=chunks_per_document, queries=queries
        )
    if aliases != "none":
        fixture = fixture.model_copy(update={"aliases": load_fixture(aliases).aliases})
    started, cpu_started = time.perf_counter(), time.process_time()
    evaluation = evaluate(fixture, [system], repeats=repeats, progress=progress)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ndcg = evaluation.summary().set_index("measure").loc["nDCG(dcg='exp-log2')@10", "value"]
    return {
        "chunks": len(fixture.chunks),
        "queries": len(fixture.queries),
        "seconds": seconds,
        "per_query_ms": seconds * 1000 / (repeats * len(fixture.queries)),
        # CPU time of this process: steadier than wall time on a shared machine.
        "cpu_per_query_ms": cpu_seconds * 1000 / (repeats * len(fixture.queries)),
        "peak_rss_mb": peak_mb,
        "ndcg": float(ndcg),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--chunks-per-document", type=int, default=4)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--aliases", default=str(DEFAULT_ALIASES))
    parser.add_argument(
        "--systems",
        nargs="+",
        default=["lexical", "token-hash", "alias-vector", "hybrid", "hybrid-rerank"],
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--progress", action="store_true", help="progress bars on stderr")
    parser.add_argument(
        "--cached", action="store_true", help="generate once into benchmarks/data (Parquet)"
    )
    parser.add_argument("--fixture", help=argparse.SUPPRESS)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        row = run_one(
            args.one,
            args.documents,
            args.chunks_per_document,
            args.queries,
            args.aliases,
            args.repeats,
            args.progress,
            args.fixture,
        )
        print(json.dumps(row))
        return
    systems = args.systems
    cached: list[str] = []
    if args.cached:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_index import cached_fixture

        directory = cached_fixture(args.documents, args.chunks_per_document, args.queries)
        cached = ["--fixture", str(directory)]
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    header = ["chunks", "queries", "seconds", "ms/query", "cpu ms/q", "peak MB"]
    print(f"{'system':14s} " + " ".join(f"{h:>9s}" for h in header))
    for system in systems:
        command = [sys.executable, __file__, "--one", system, "--documents", str(args.documents)]
        command += ["--chunks-per-document", str(args.chunks_per_document)]
        command += ["--queries", str(args.queries), "--aliases", args.aliases]
        command += ["--repeats", str(args.repeats)] + (["--progress"] if args.progress else [])
        command += cached
        # stderr stays the terminal's, so the children's progress bars show.
        out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{system:14s} {row['chunks']:9d} {row['queries']:9d} {row['seconds']:9.1f} "
            f"{row['per_query_ms']:9.2f} {row['cpu_per_query_ms']:9.2f} {row['peak_rss_mb']:9.0f}"
        )
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
