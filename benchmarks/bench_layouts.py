"""evalkit's compute time on one run in three row layouts, with pytrec-eval-terrier's beside it.

Usage::

    .venv/bin/python benchmarks/bench_layouts.py            # the 10,000 x 100 files
    .venv/bin/python benchmarks/bench_layouts.py --size 10k-1000

The run of ``bench_measures.py`` (generated there once, cached in benchmarks/data/) is scored
as a DataFrame in three layouts: as the file lists it (query by query, by score), with each
query's rows shuffled, and with all rows shuffled (each query's rows scattered over the frame,
as in a frame sorted by score across queries). The numbers are medians of ``--repeats`` calls
of ``evalkit.score`` for nDCG@10, R@10, R@100, RR@10, AP and P@10 after one untimed call;
pytrec-eval-terrier's evaluator, which reads dicts, does not depend on the row layout.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from bench_measures import EVALKIT_MEASURES, SIZES, generate


def _median_seconds(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10k-100", choices=list(SIZES))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import pytrec_eval

    from evalkit.formats import read_qrels, read_run
    from evalkit.measures import score

    run_path, qrels_path = generate(args.size)
    qrels, run = read_qrels(qrels_path), read_run(run_path, rank=False)
    shuffled = run.sample(frac=1, random_state=0).reset_index(drop=True)
    layouts = {
        "as listed (query by query, by score)": run,
        "each query's rows shuffled": shuffled.sort_values("query_id", kind="stable"),
        "all rows shuffled": shuffled,
    }
    print(f"| layout ({args.size}) | evalkit score s |")
    print("| --- | ---: |")
    for name, frame in layouts.items():
        seconds = _median_seconds(lambda f=frame: score(qrels, f, EVALKIT_MEASURES), args.repeats)
        print(f"| {name} | {seconds:.3f} |")

    with open(qrels_path) as q, open(run_path) as r:
        trec_qrels, trec_run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    measures = {"ndcg_cut.10", "recall.10,100", "P.10", "map", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(trec_qrels, measures)
    seconds = _median_seconds(lambda: evaluator.evaluate(trec_run), args.repeats)
    print(f"| pytrec-eval-terrier evaluate (any layout) | {seconds:.3f} |")


if __name__ == "__main__":
    main()
