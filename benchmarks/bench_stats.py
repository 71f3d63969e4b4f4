"""Time evalkit.stats on a synthetic per-query frame and report peak traced memory.

Usage: ``.venv/bin/python benchmarks/bench_stats.py [--queries 1000] [--systems 5]
[--measures 4] [--resamples 10000]``. The frame holds a base system plus ``systems`` others
(values drawn from Beta distributions with small shifts, seed 7), so ``compare`` produces
``systems * measures`` rows, each with a 10,000-resample bootstrap interval and test.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from evalkit.stats import compare, summarize_with_ci

MEASURES = ("nDCG@10", "R@5", "RR@10", "AP", "P@10", "Success@10")


def synthetic_frame(n_queries: int, n_systems: int, n_measures: int) -> pd.DataFrame:
    """Tidy frame: ``system, query_id, measure, value, language`` with ``n_systems + 1`` systems."""
    rng = np.random.Generator(np.random.PCG64(7))
    query_ids = np.array([f"q{i:05d}" for i in range(n_queries)])
    languages = np.where(np.arange(n_queries) % 2 == 0, "en", "de")
    parts = []
    for s in range(n_systems + 1):
        for measure in MEASURES[:n_measures]:
            values = np.clip(rng.beta(2.0, 3.0, n_queries) + 0.01 * s, 0.0, 1.0)
            parts.append(
                pd.DataFrame(
                    {
                        "system": "base" if s == 0 else f"system-{s}",
                        "query_id": query_ids,
                        "measure": measure,
                        "value": values,
                        "language": languages,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def timed(label: str, run: Callable[[], pd.DataFrame]) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<44} {seconds:7.2f} s  peak {peak / 2**20:6.1f} MiB  rows {len(result)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--measures", type=int, default=4, choices=range(1, len(MEASURES) + 1))
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    frame = synthetic_frame(args.queries, args.systems, args.measures)
    print(
        f"{args.queries} queries x {args.systems} systems (+ base) x {args.measures} measures, "
        f"{args.resamples} resamples"
    )
    for test in ("randomization", "ttest", "wilcoxon"):
        timed(
            f"compare(test={test!r})",
            partial(compare, frame, "base", test=test, n_resamples=args.resamples),
        )
    timed(
        "compare(by='language')",
        lambda: compare(frame, "base", by="language", n_resamples=args.resamples),
    )
    timed(
        "summarize_with_ci(by=(system, measure))",
        lambda: summarize_with_ci(frame, n_resamples=args.resamples),
    )
    timed(
        "summarize_with_ci(method='bca')",
        lambda: summarize_with_ci(frame, n_resamples=args.resamples, method="bca"),
    )


if __name__ == "__main__":
    main()
