"""Differential tests: evalkit's per-query values equal trec_eval 9.0.8's (pytrec-eval-terrier).

Hypothesis generates small qrels and runs with heavy score ties (including scores that differ
in float64 but tie in float32, as trec_eval stores them), grades -1..3, empty rankings, qrels
queries missing from the run, run-only queries and runs longer than every cutoff.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from oracles import (
    assert_trec_eval_values,
    pytrec_eval_values,
    qrels_frame,
    run_frame,
    score_values,
    trec_eval_arguments,
    trec_eval_measures,
)

CUTOFFS = (1, 2, 3, 5)
QUERY_IDS = ("001", "1", "q2", "Q10")
DOC_IDS = ("d0", "d1", "d10", "d2", "a", "bb", "B", "zz9", "é1", "0", "doc-7", "x")
# 1.0 and 1.0 + 1e-9 are equal as float32: trec_eval breaks that tie by doc ID.
SCORES = (0.0, -0.0, 0.5, 1.0, 1.0 + 1e-9, 2.0, -1.5, 3.25)

TREC_MEASURES = trec_eval_measures(CUTOFFS)
PYTREC_MEASURES = set(trec_eval_arguments(CUTOFFS))


@st.composite
def qrels_and_runs(
    draw: st.DrawFn,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=3, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=8, unique=True))
        grades = draw(st.lists(st.integers(-1, 3), min_size=len(docs), max_size=len(docs)))
        # trec_eval reads past an array for a query whose grades are all negative (undefined
        # behaviour, pytrec_eval can hang); keep one grade >= 0 per query for the oracle.
        grades[0] = max(grades[0], 0)
        qrels[q] = dict(zip(docs, grades, strict=True))
    run_queries = draw(st.lists(st.sampled_from(QUERY_IDS), max_size=4, unique=True))
    run: dict[str, dict[str, float]] = {}
    for q in run_queries:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), max_size=len(DOC_IDS), unique=True))
        run[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return qrels, run


def _frames(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    qrels_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    run_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    # row order must not matter: shuffle it
    rng = np.random.default_rng(seed)
    run_rows = [run_rows[i] for i in rng.permutation(len(run_rows))]
    run = run_frame(run_rows).astype({"query_id": "str", "doc_id": "str", "score": "float64"})
    # arrow-backed columns in several chunks, as read_run returns them
    cut = len(run) // 2
    chunked = pa.concat_tables(
        [pa.Table.from_pandas(part, preserve_index=False) for part in (run[:cut], run[cut:])]
    )
    return qrels_frame(qrels_rows), chunked.to_pandas()


def _trec_order(ranking: dict[str, float]) -> list[str]:
    """trec_eval's order, written independently: float32 score desc, then doc ID desc."""
    by_doc = sorted(ranking, reverse=True)
    return sorted(by_doc, key=lambda d: -float(np.float32(ranking[d]) + np.float32(0.0)))


@pytest.mark.parametrize("rel", [1, 2])
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_and_runs(), seed=st.integers(0, 2**16))
def test_per_query_values_equal_trec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], seed: int, rel: int
) -> None:
    qrels, run = data
    measures = [
        m if rel == 1 or m.startswith(("nDCG", "NumRet")) else _with_rel(m, rel)
        for m in TREC_MEASURES
    ]
    ours = score_values(*_frames(qrels, run, seed), measures, trec_version="9")
    expected = pytrec_eval_values(qrels, run, PYTREC_MEASURES, relevance_level=rel)
    assert {q for q, _ in ours} == set(qrels)
    assert_trec_eval_values(ours, expected, qrels, measures)


def _with_rel(measure: str, rel: int) -> str:
    name, _, cutoff = measure.partition("@")
    return f"{name}(rel={rel})" + (f"@{cutoff}" if cutoff else "")


@settings(max_examples=150, deadline=None)
@given(data=qrels_and_runs(), seed=st.integers(0, 2**16))
def test_exp_gain_ndcg_equals_trec_eval_on_exponentiated_grades(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], seed: int
) -> None:
    # nDCG(dcg='exp-log2') uses gain 2^g - 1; trec_eval's linear gain on grades replaced by
    # 2^g - 1 (negative grades unchanged) is the same computation.
    qrels, run = data
    measures = ["nDCG(dcg='exp-log2')", *(f"nDCG(dcg='exp-log2')@{k}" for k in CUTOFFS)]
    ours = score_values(*_frames(qrels, run, seed), measures, trec_version="9")
    exp_qrels = {
        q: {d: (2**g - 1 if g >= 0 else g) for d, g in docs.items()} for q, docs in qrels.items()
    }
    expected = pytrec_eval_values(exp_qrels, run, {"ndcg", "ndcg_cut.1,2,3,5"})
    for q in qrels:
        assert ours[q, measures[0]] == pytest.approx(expected[q]["ndcg"], abs=1e-9)
        for k, m in zip(CUTOFFS, measures[1:], strict=True):
            assert ours[q, m] == pytest.approx(expected[q][f"ndcg_cut_{k}"], abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(data=qrels_and_runs(), seed=st.integers(0, 2**16))
def test_rr_at_k_equals_trec_eval_recip_rank_of_the_top_k(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], seed: int
) -> None:
    qrels, run = data
    measures = [f"RR@{k}" for k in CUTOFFS]
    ours = score_values(*_frames(qrels, run, seed), measures, trec_version="9")
    for k, m in zip(CUTOFFS, measures, strict=True):
        top_k = {
            q: {d: float(len(docs) - i) for i, d in enumerate(_trec_order(docs)[:k])}
            for q, docs in run.items()
        }
        expected = pytrec_eval_values(qrels, top_k, {"recip_rank"})
        for q in qrels:
            assert ours[q, m] == pytest.approx(expected[q]["recip_rank"], abs=1e-9)


@pytest.mark.parametrize("layout", ["fixed-depth", "variable-depth", "shuffled"])
def test_large_runs_equal_trec_eval(layout: str) -> None:
    # > 2**17 rows: the sort paths for big inputs (per-query matrix, query-aligned chunks, one
    # global sort) and the presorted shortcut, against pytrec_eval on the same data.
    rng = np.random.default_rng(7)
    n_queries, depth = 300, 500
    depths = rng.integers(1, 2 * depth, n_queries) if layout == "variable-depth" else None
    rows = []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        n_docs = depth if depths is None else int(depths[q])
        docs = [f"d{d}" for d in rng.choice(5000, n_docs, replace=False)]
        scores = np.sort(np.round(rng.random(n_docs) * 20) / 2)[::-1]  # many ties
        run[qid] = dict(zip(docs, scores.tolist(), strict=True))
        rows += [(qid, d, s) for d, s in run[qid].items()]
        judged = [*rng.choice(docs, min(10, n_docs), replace=False).tolist(), "missing"]
        qrels[qid] = {d: int(rng.integers(-1, 4)) for d in judged}
        qrels[qid][judged[0]] = max(qrels[qid][judged[0]], 0)
    frame = run_frame(rows)
    if layout == "shuffled":
        frame = frame.sample(frac=1, random_state=1)
    judged = qrels_frame((q, d, g) for q, docs in qrels.items() for d, g in docs.items())
    assert len(frame) > 2**17
    measures = ["nDCG@10", "AP", "RR", "P@10", "R@100", "Bpref", "NumRet"]
    ours = score_values(judged, frame, measures, trec_version="9")
    expected = pytrec_eval_values(
        qrels, run, {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100", "bpref", "num_ret"}
    )
    assert_trec_eval_values(ours, expected, qrels, measures)
