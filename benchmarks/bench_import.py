"""Scale check of ``evalkit import beir`` (issue 13): a generated BEIR corpus, chunked.

Writes a BEIR folder of random-word documents (one in ten is long, 6,000-12,000 characters in
paragraphs, so it is cut into several chunks), 2,000 queries and 3 judgments per query, then
runs ``evalkit import beir ... --chunking paragraphs --size 2000`` in a fresh process and prints
its wall time, peak RSS and the sizes of input and output. It runs at two corpus sizes, so the
memory column shows what grows with the corpus (the document IDs and the judged documents'
chunk offsets) and what does not (the batch buffer).

    .venv/bin/python benchmarks/bench_import.py [--documents 200000] [--queries 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [f"{a}{b}{c}" for a in "bcdfgklmnprst" for b in "aeiou" for c in "nrstlm"]


def _paragraph(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def write_corpus(root: Path, documents: int, queries: int, seed: int = 13) -> int:
    """A BEIR folder under ``root``; returns the corpus size in bytes."""
    rng = random.Random(seed)
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for index in range(documents):
            if index % 10 == 0:
                count = rng.randint(8, 14)
                text = "\n\n".join(_paragraph(rng, rng.randint(80, 160)) for _ in range(count))
            else:
                text = _paragraph(rng, rng.randint(40, 120))
            title = " ".join(rng.choice(WORDS) for _ in range(4))
            corpus.write(json.dumps({"_id": f"doc-{index}", "title": title, "text": text}) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for index in range(queries):
            text = " ".join(rng.choice(WORDS) for _ in range(6))
            handle.write(json.dumps({"_id": f"q-{index}", "text": text}) + "\n")
    with (root / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for index in range(queries):
            for doc in rng.sample(range(documents), 3):
                handle.write(f"q-{index}\tdoc-{doc}\t{rng.randint(1, 3)}\n")
    return (root / "corpus.jsonl").stat().st_size


def measure(documents: int, queries: int) -> dict[str, float]:
    workspace = Path(tempfile.mkdtemp(prefix="evalkit-bench-import-"))
    try:
        corpus_bytes = write_corpus(workspace / "beir", documents, queries)
        command = [sys.executable, "-m", "evalkit.cli.entry", "import", "beir", "beir"]
        command += ["--output", "fixture", "--chunking", "paragraphs", "--size", "2000"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        done = subprocess.run(command, cwd=workspace, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if done.returncode != 0:
            raise SystemExit(f"import failed:\n{done.stderr[-2000:]}")
        summary = done.stdout.splitlines()[0]
        chunks = int(summary.split("-> ")[1].split()[0])
        fixture_bytes = sum(p.stat().st_size for p in (workspace / "fixture").rglob("*.yaml"))
        return {
            "documents": documents,
            "chunks": chunks,
            "corpus_mb": corpus_bytes / 1e6,
            "fixture_mb": fixture_bytes / 1e6,
            "seconds": seconds,
            "docs_per_s": documents / seconds,
            # ru_maxrss of children is the largest child so far; the runs go smallest first
            "peak_rss_mb": max(peak_kb, before) / 1024,
        }
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=2_000)
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sizes = [args.documents // 4, args.documents]
    header = ["documents", "chunks", "corpus MB", "fixture MB", "seconds", "docs/s", "peak MB"]
    print(" ".join(f"{h:>11s}" for h in header))
    for size in sizes:
        row = measure(size, args.queries)
        print(
            f"{row['documents']:>11,.0f} {row['chunks']:>11,.0f} {row['corpus_mb']:>11.1f} "
            f"{row['fixture_mb']:>11.1f} {row['seconds']:>11.1f} {row['docs_per_s']:>11,.0f} "
            f"{row['peak_rss_mb']:>11.0f}"
        )


if __name__ == "__main__":
    main()
