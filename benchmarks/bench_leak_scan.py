"""Time the leak scan of one report-sized artifact against a large fixture's private text.

Usage: ``.venv/bin/python benchmarks/bench_leak_scan.py [--chunks 20000] [--queries 2000]``.
The private side is ``chunks`` random-word texts of 80 words (seed 7), like chunk texts; the
artifact is the JSON of a ``perQuery`` section for 5 systems x ``queries`` queries x 7 measures.
It prints the scan time of :func:`evalkit.safety.privacy.find_leaks` and, for comparison measured in
the same run, the time of the plain rule (one substring search per needle), extrapolated from
the needles of the first 200 texts.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import time

from evalkit.safety.privacy import PrivateText, _needles, artifact_text, find_leaks

MEASURES = ("R@5", "R@10", "RR@10", "nDCG@10", "ContextPrecision@10", "ContextRecall@10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=2_000)
    args = parser.parse_args()
    rng = random.Random(7)
    words = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(5_000)
    ]
    private = [
        PrivateText(f"chunk:c{i}", " ".join(rng.choice(words) for _ in range(80)))
        for i in range(args.chunks)
    ]
    per_query = {
        f"system-{s}": {
            f"q-{q:05d}": {m: rng.random() for m in (*MEASURES, "NoAnswerFP")}
            for q in range(args.queries)
        }
        for s in range(5)
    }
    artifact = json.dumps({"perQuery": per_query})
    needles = sum(len(_needles(p.text)) for p in private)
    started = time.perf_counter()
    leaks = find_leaks(artifact, private)
    scan_s = time.perf_counter() - started
    haystack = artifact_text(artifact)
    sample = [n for p in private[:200] for n in _needles(p.text)]
    started = time.perf_counter()
    found = any(n in haystack for n in sample)
    naive_s = (time.perf_counter() - started) / len(sample) * needles
    print(f"artifact {len(artifact) / 1e6:.1f} MB, {needles:,} needles, leaks {leaks or found}")
    print(f"find_leaks: {scan_s:.1f} s; one search per needle (extrapolated): {naive_s:.0f} s")


if __name__ == "__main__":
    main()
