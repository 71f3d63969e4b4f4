"""Time evalkit's statistics on all pairs of systems, next to ranx's ``compare`` in the same run.

Usage: ``.venv/bin/python benchmarks/bench_stats.py [--queries 1000] [--systems 8]
[--resamples 10000]``. The data: generated qrels (100 candidate documents per query, 10 of
them relevant with grades 1-3) and ``systems`` runs whose scores mix the grade with noise at
slightly different strengths (seed 7). ranx evaluates nDCG@10, R@5, RR@10 and AP@100 on them
and compares every pair (``ranx.compare``); evalkit takes *ranx's own per-query values* of the
four measures (the same data) and compares every pair with ``compare(base=None)``, then runs
the multi-system tests. ranx's numba kernels are compiled on a tiny input first, so its time
excludes compilation. ranx uses every core (numba ``parallel=True``); evalkit one.

What each side computes, per pair and measure (28 pairs x 4 measures = 112 comparisons at 8
systems): ranx ``stat_test="fisher"`` runs its randomization test on each *ordered* pair
(56 x 4, each pair twice), with no interval; evalkit ``test="randomization"`` runs the
sign-flip test and a percentile bootstrap interval of the difference, both with
``resamples`` draws, plus t statistic, t interval, d_z and Holm over the family.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from evalkit.stats import anova, compare, randomized_tukey_hsd, tukey_hsd

RANX_METRICS = {"ndcg@10": "nDCG@10", "recall@5": "R@5", "mrr@10": "RR@10", "map@100": "AP@100"}


def generated(n_queries: int, n_systems: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Plain-dict qrels and runs (ranx's input format): query IDs q00000.., docs d000.."""
    rng = np.random.Generator(np.random.PCG64(7))
    docs = np.array([f"d{j:03d}" for j in range(100)])
    qrels: dict[str, Any] = {}
    grades = np.zeros((n_queries, 100))
    for i in range(n_queries):
        relevant = rng.choice(100, size=10, replace=False)
        grades[i, relevant] = rng.integers(1, 4, size=10)
        qrels[f"q{i:05d}"] = {docs[j]: int(grades[i, j]) for j in relevant}
    runs = []
    for s in range(n_systems):
        strength = 0.6 + 0.02 * s
        scores = strength * grades + rng.normal(0.0, 1.0, grades.shape)
        runs.append(
            {
                f"q{i:05d}": dict(zip(docs.tolist(), scores[i].tolist(), strict=True))
                for i in range(n_queries)
            }
        )
    return qrels, runs


def timed(label: str, run: Callable[[], Any], times: dict[str, float]) -> Any:
    start = time.perf_counter()
    result = run()
    times[label] = time.perf_counter() - start
    rows = f"  rows {len(result)}" if hasattr(result, "__len__") else ""
    print(f"{label:<58} {times[label]:7.2f} s{rows}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()

    import ranx
    from ranx.statistical_tests import compute_statistical_significance

    qrels_dict, run_dicts = generated(args.queries, args.systems)
    names = [f"system-{s}" for s in range(args.systems)]
    metrics = list(RANX_METRICS)
    pairs = args.systems * (args.systems - 1) // 2
    print(
        f"{args.queries} queries x {args.systems} systems ({pairs} pairs) x {len(metrics)} "
        f"measures, {args.resamples} resamples"
    )

    tiny = ranx.Qrels({"q1": {"d1": 1}, "q2": {"d2": 1}})
    warm = [
        ranx.Run({"q1": {"d1": 1.0, "d2": w}, "q2": {"d1": w, "d2": 0.5}}, name=n)
        for n, w in (("a", 0.3), ("b", 0.7))
    ]
    for test in ("fisher", "student", "tukey"):  # compile numba kernels outside the timing
        ranx.compare(tiny, warm, metrics, stat_test=test, n_permutations=10)
    ranx.evaluate(tiny, warm[0], metrics, return_mean=False)

    times: dict[str, float] = {}
    qrels = ranx.Qrels(qrels_dict)
    runs = [ranx.Run(d, name=n) for d, n in zip(run_dicts, names, strict=True)]
    scores = timed(
        "ranx: evaluate (the 4 measures, every run)",
        lambda: {r.name: ranx.evaluate(qrels, r, metrics, return_mean=False) for r in runs},
        times,
    )
    for test in ("fisher", "student", "tukey"):
        timed(
            f"ranx: tests of compare(stat_test={test!r}) (no measures)",
            lambda test=test: compute_statistical_significance(
                names, scores, stat_test=test, n_permutations=args.resamples, max_p=0.05
            ),
            times,
        )
    report = timed(
        "ranx: compare(stat_test='student'), measures + tests",
        lambda: ranx.compare(qrels, runs, metrics, stat_test="student", max_p=0.05),
        times,
    )
    student = {
        (a, b, metric): report.comparisons[a, b][metric]["p_value"]
        for a, b in itertools.combinations(names, 2)
        for metric in metrics
    }

    frame = pd.DataFrame(
        [
            {"system": run.name, "query_id": query, "measure": ours, "value": float(value)}
            for run in runs
            for metric, ours in RANX_METRICS.items()
            for query, value in run.scores[metric].items()
        ]
    )
    result = timed(
        "evalkit: compare(base=None, test='randomization')",
        lambda: compare(frame, None, n_resamples=args.resamples),
        times,
    )
    ttest = timed(
        "evalkit: compare(base=None, test='ttest', interval='t')",
        lambda: compare(frame, None, test="ttest", interval="t", n_resamples=args.resamples),
        times,
    )
    timed(
        "evalkit: compare(base=None, test='bootstrap')",
        lambda: compare(frame, None, test="bootstrap", n_resamples=args.resamples),
        times,
    )
    timed("evalkit: anova", lambda: anova(frame), times)
    timed("evalkit: tukey_hsd (paired)", lambda: tukey_hsd(frame), times)
    timed(
        "evalkit: randomized_tukey_hsd",
        lambda: randomized_tukey_hsd(frame, n_resamples=args.resamples),
        times,
    )

    reverse = {ours: metric for metric, ours in RANX_METRICS.items()}
    gap = max(
        abs(row["p_value"] - student[row["system"], row["base"], reverse[row["measure"]]])
        for row in ttest.to_dict("records")
    )
    ranx_tests = times["ranx: tests of compare(stat_test='fisher') (no measures)"]
    ours = times["evalkit: compare(base=None, test='randomization')"]
    print(f"same data: evalkit t-test vs ranx student p-values, max |difference| {gap:.1e}")
    print(
        f"randomization tests of all pairs: ranx {ranx_tests:.2f} s (its tests only), evalkit "
        f"{ours:.2f} s (tests, bootstrap intervals, t, Holm): ranx / evalkit = "
        f"{ranx_tests / ours:.1f}x; {len(result)} rows"
    )
    tukey_ranx = times["ranx: tests of compare(stat_test='tukey') (no measures)"]
    tukey_ours = times["evalkit: tukey_hsd (paired)"]
    print(f"Tukey HSD: ranx (scipy one-way) / evalkit (paired) = {tukey_ranx / tukey_ours:.1f}x")


if __name__ == "__main__":
    main()
