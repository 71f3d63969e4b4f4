"""The ranking builder's internal fast paths against trec_eval 9.0.8 (pytrec-eval-terrier).

Document fingerprints are only candidates: every match and duplicate is confirmed on the ID
strings. Here a weak fingerprint (the ID's length) makes almost every document of a query
collide, so the confirmation paths (several candidates per judged pair, candidate duplicates
that are not duplicates) decide every result. Runs mix query-grouped blocks, a run-only query
between two blocks of one query, and many score ties.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import InputError, RunOnlyQueriesWarning
from evalkit.measures import ranking, score, trec_name

MEASURES = ["nDCG@10", "AP", "RR", "P@5", "R@20", "NumRet", "NumRelRet"]
PYTREC_MEASURES = {"ndcg_cut.10", "map", "recip_rank", "P.5", "recall.20", "num_ret", "num_rel_ret"}


def _length_fingerprint(strings: pa.ChunkedArray) -> np.ndarray:
    """Colliding fingerprints: the same value for every ID of the same length."""
    lengths = pc.binary_length(strings).to_numpy(zero_copy_only=False).astype(np.uint64)
    return lengths << np.uint64(40)


def _data(layout: str) -> tuple[pd.DataFrame, pd.DataFrame, dict, dict]:
    rng = np.random.default_rng(11)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    rows: list[tuple[str, str, float]] = []
    for q in range(40):
        qid = f"q{q}"
        n_docs = int(rng.integers(5, 60))
        # IDs of one or two lengths: d0..d9 and d10..d99 collide among themselves
        docs = [f"d{d}" for d in rng.choice(100, n_docs, replace=False)]
        scores = np.round(rng.random(n_docs) * 6) / 2  # heavy ties
        order = np.argsort(-scores, kind="stable")
        run[qid] = {docs[i]: float(scores[i]) for i in order}
        rows += [(qid, docs[i], float(scores[i])) for i in order]
        judged = [*rng.choice(docs, min(8, n_docs), replace=False).tolist(), "d100", "zz"]
        qrels[qid] = {d: int(rng.integers(-1, 4)) for d in judged}
        qrels[qid][judged[0]] = max(qrels[qid][judged[0]], 0)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if layout == "split":
        # q0's rows in two blocks with a run-only query between them
        q0 = frame[frame["query_id"] == "q0"]
        rest = frame[frame["query_id"] != "q0"]
        extra = pd.DataFrame({"query_id": ["unjudged"] * 2, "doc_id": ["d1", "d2"], "score": 1.0})
        half = len(q0) // 2
        frame = pd.concat([q0.iloc[:half], extra, rest, q0.iloc[half:]], ignore_index=True)
    elif layout == "shuffled":
        frame = frame.sample(frac=1, random_state=3).reset_index(drop=True)
    qrels_frame = pd.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    return qrels_frame, frame.astype({"query_id": "str", "doc_id": "str"}), qrels, run


@pytest.mark.parametrize("layout", ["grouped", "split", "shuffled"])
def test_colliding_fingerprints_give_trec_eval_values(
    layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels_frame, run_frame, qrels, run = _data(layout)
    monkeypatch.setattr(ranking, "_fingerprint", _length_fingerprint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        frame = score(qrels_frame, run_frame, MEASURES)
    ours = {(q, m): v for q, m, v in frame.itertuples(index=False)}
    expected = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    assert set(frame["query_id"]) == set(qrels)
    for q in qrels:
        for m in MEASURES:
            assert ours[q, m] == pytest.approx(expected[q][trec_name(m)], abs=1e-9), (q, m)


def test_colliding_fingerprints_still_find_only_real_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranking, "_fingerprint", _length_fingerprint)
    qrels = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    run = pd.DataFrame(
        {"query_id": ["a", "a", "a", "b"], "doc_id": ["d1", "d2", "d3", "d1"], "score": 1.0}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        # d1, d2, d3 share a fingerprint but are distinct: no duplicate
        frame = score(qrels, run, ["NumRet"])
        assert frame["value"].tolist() == [3.0]
        with pytest.raises(InputError, match="more than once for query 'a'"):
            score(qrels, pd.concat([run, run.iloc[[1]]], ignore_index=True), ["NumRet"])


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(-(2**62), 2**62)), max_size=40),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_combined_key_sort_equals_numpy_lexsort(pairs: list[tuple[int, int]], small: bool) -> None:
    major = np.array([p[0] for p in pairs], dtype=np.int64)
    minor = np.array([p[1] % 5 - 2 if small else p[1] for p in pairs], dtype=np.int64)
    assert ranking._lexsort(major, minor).tolist() == np.lexsort((minor, major)).tolist()
