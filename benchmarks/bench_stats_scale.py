"""A thousand systems: time and peak memory of the all-pairs statistics.

Usage: ``.venv/bin/python benchmarks/bench_stats_scale.py --part tukey|ttest|defaults
[--systems 1000] [--topics 50]``. One part per process, so that the peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) printed at the end is that part's.

The data (seed 7): a topic effect U(0.1, 0.9), a system effect N(0, 0.03) and noise
N(0, 0.1), clipped to [0, 1]: continuous values, so every pair has its own q (the worst case
for Tukey's tail, which is computed once per distinct q). Parts:

* ``tukey``: :func:`evalkit.stats.tukey_hsd` over all ``k(k-1)/2`` pairs; target <= 60 s.
* ``ttest``: ``compare(per_query, None, test="ttest", interval="t")``; target <= 60 s.
* ``defaults``: ``compare(per_query, None)`` with its defaults (randomization test and
  percentile bootstrap, 10,000 resamples); target <= 60 s (issue 48: 359 s before the pairs'
  resamples were taken from per-system sums). Bounded memory (it held 37 GB before the pairs
  were processed in blocks).

Each prints ``seconds``, ``target`` and their ratio (<= 1 meets it), the rows, the peak RSS
and the load average before and after (``os.getloadavg()``: the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import pandas as pd

from evalkit.stats import compare, tukey_hsd

TARGETS = {"tukey": 60.0, "ttest": 60.0, "defaults": 60.0}


def generated(n_topics: int, n_systems: int) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(7))
    topic = rng.uniform(0.1, 0.9, size=(n_topics, 1))
    system = rng.normal(0.0, 0.03, size=(1, n_systems))
    noise = rng.normal(0.0, 0.1, size=(n_topics, n_systems))
    matrix = np.clip(topic + system + noise, 0.0, 1.0)
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{j:04d}" for j in range(n_systems)], n_topics),
            "query_id": np.tile([f"q{t:03d}" for t in range(n_topics)], n_systems),
            "measure": "nDCG@10",
            "value": matrix.T.ravel(),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=sorted(TARGETS), required=True)
    parser.add_argument("--systems", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=50)
    args = parser.parse_args()
    frame = generated(args.topics, args.systems)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    if args.part == "tukey":
        result = tukey_hsd(frame)
    elif args.part == "ttest":
        result = compare(frame, None, test="ttest", interval="t")
    else:
        result = compare(frame, None)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    target = TARGETS[args.part]
    print(
        f"part={args.part} systems={args.systems} topics={args.topics} rows={len(result)} "
        f"seconds={seconds:.1f} target={target:.0f} ratio={seconds / target:.2f} "
        f"peak_rss_mb={peak_mb:.0f} load={load_before:.1f}->{os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
