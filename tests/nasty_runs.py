"""Generated nasty runs for the streaming and Dask equality tests, and every registered measure.

A run here has: many tied scores (one decimal, a few values), tied docs in random order,
queries of very different lengths (1 to 60 rows), queries the qrels do not judge (run-only),
qrels queries the run lacks, negative grades (pooled but unjudged), a rank column with ties
(for ``ties="given"``), IDs of different lengths sharing prefixes; rows grouped by query (as a
TREC file lists them) or shuffled across queries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.errors import MeasureError
from evalkit.measures import KERNELS, parse_measure


def nasty(
    seed: int, *, n_queries: int = 40, grouped: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(qrels, run)`` DataFrames (columns as :func:`evalkit.measures.score` takes them)."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i:0{1 + i % 3}d}" for i in range(n_queries)]  # "q0", "q01", "q002", ...
    docs = [f"d{i}" if i % 2 else f"doc-{i:05d}" for i in range(300)]
    run_rows, qrels_rows = [], []
    for i, query in enumerate(queries):
        depth = int(rng.integers(1, 61))
        chosen = rng.choice(len(docs), size=depth, replace=False)
        scores = np.round(rng.choice([0.5, 1.0, 1.5, 2.0, 7.25], size=depth) * 1.0, 1)
        ranks = rng.integers(1, max(2, depth // 2), size=depth)  # rank ties too
        in_run = i % 7 != 3  # some qrels queries have no run rows
        if in_run:
            run_rows += [
                (query, docs[d], float(s), int(r))
                for d, s, r in zip(chosen, scores, ranks, strict=True)
            ]
        if i % 11 == 5:
            continue  # a run-only query: the qrels do not judge it
        judged = rng.choice(len(docs), size=int(rng.integers(1, 25)), replace=False)
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=judged.size)
        qrels_rows += [(query, docs[d], int(g)) for d, g in zip(judged, grades, strict=True)]
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score", "rank"])
    if not grouped:
        run = run.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    qrels = qrels.sample(frac=1.0, random_state=seed + 1).reset_index(drop=True)
    return qrels.astype({"query_id": "str", "doc_id": "str"}), run.astype(
        {"query_id": "str", "doc_id": "str"}
    )


def nasty_for_trec_eval(seed: int, *, n_queries: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`nasty` made harder for trec_eval comparisons: about 5 % of the grades 12 and 5 %
    -2, the run's ``rank`` column dropped, and each score moved by 0, ±1e-12 or 3e-9 (ties a
    float comparison keeps or breaks). ``(qrels, run)`` as :func:`nasty` gives them."""
    qrels, run = nasty(seed, n_queries=n_queries)
    rng = np.random.default_rng(seed)
    qrels = qrels.copy()
    pick = rng.random(len(qrels))
    qrels.loc[pick < 0.05, "relevance"] = 12
    qrels.loc[(pick >= 0.05) & (pick < 0.1), "relevance"] = -2
    run = run.drop(columns=["rank"])
    run["score"] = run["score"] + rng.choice([0.0, 1e-12, -1e-12, 3e-9], size=len(run))
    return qrels, run


def every_measure() -> list[str]:
    """One measure string for each name the kernel registry computes (a cutoff where one is
    required), and a few with parameters."""
    measures = []
    for name in KERNELS.names():
        for text in (name, f"{name}@5", f"{name}@0.5"):
            try:
                measures.append(str(parse_measure(text)))
                break
            except MeasureError:
                continue
        else:
            raise AssertionError(f"no measure string parses for registered kernel {name!r}")
    measures += ["nDCG(dcg='exp-log2')@10", "R(rel=2)@10", "AP(rel=2)", "nDCG@3", "P@20"]
    return measures
