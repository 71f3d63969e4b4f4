"""alpha-nDCG and the intent-aware measures against ir_measures' ndeval provider (pyndeval).

pyndeval wraps ndeval.c; ir_measures reads the qrels' ``iteration`` field as the subtopic. It
breaks score ties by doc ID ascending, evalkit (like trec_eval and ndeval ``-traditional``) by
doc ID descending: the oracle gets each query's ranking as computed here, independently, by
Python's sort on (score descending, doc ID descending), with strictly decreasing scores.
"""

from __future__ import annotations

import math
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from oracles import pyndeval_values, run_frame

from evalkit.errors import InputError, MeasureError
from evalkit.measures import parse_measure, score
from evalkit.measures.diversity import DIVERSITY_MEASURE_NAMES
from evalkit.measures.names import measure_range

Row = tuple[str, str, str, int]


def _subtopics(rows: list[Row]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["query_id", "subtopic", "doc_id", "relevance"])
    for column in ("query_id", "subtopic", "doc_id"):
        frame[column] = frame[column].astype("str")
    frame["relevance"] = frame["relevance"].astype("int64")
    return frame


def _run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    for column in ("query_id", "doc_id"):
        frame[column] = frame[column].astype("str")
    frame["score"] = frame["score"].astype("float64")
    return frame


def _topic_qrels(sub: pd.DataFrame, extra_queries: tuple[str, ...] = ()) -> pd.DataFrame:
    """Ordinary qrels for score()'s rows: each (query, doc) of the subtopic qrels at its best
    grade, plus one judged doc for each of ``extra_queries``."""
    best = sub.groupby(["query_id", "doc_id"], as_index=False)["relevance"].max()
    extra = pd.DataFrame(
        {"query_id": list(extra_queries), "doc_id": ["x"] * len(extra_queries), "relevance": 1}
    )
    frame = pd.concat([best, extra], ignore_index=True)
    for column in ("query_id", "doc_id"):
        frame[column] = frame[column].astype("str")
    return frame


def _oracle(
    sub_rows: list[Row], run_rows: list[tuple[str, str, float]], measures: list[str]
) -> dict[tuple[str, str], float]:
    """(query, measure) → value from ir_measures' pyndeval provider, the run re-ranked by
    trec_eval's rule (score descending, doc ID descending) and given as scores -rank."""
    by_query: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in run_rows:
        by_query.setdefault(q, []).append((d, s))
    ranked = []
    for q, docs in by_query.items():
        docs.sort(key=lambda x: x[0].encode(), reverse=True)  # doc ID descending (strcmp)
        docs.sort(key=lambda x: -x[1])  # then score descending (stable)
        ranked += [(q, d, -float(rank)) for rank, (d, _) in enumerate(docs)]
    qrels = pd.DataFrame(sub_rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    return pyndeval_values(measures, qrels, run_frame(ranked))


def _values(frame: pd.DataFrame) -> dict[tuple[str, str], float]:
    return {
        (str(q), str(m)): float(v)
        for q, m, v in frame[["query_id", "measure", "value"]].itertuples(index=False)
    }


def _assert_agree(ours: dict[tuple[str, str], float], oracle: dict[tuple[str, str], float]) -> None:
    for (q, m), value in ours.items():
        expected = oracle.get((q, m))
        if expected is None:  # a query pyndeval leaves out (the run does not rank it): 0.0
            assert value == 0.0, (q, m, value)
        elif math.isnan(expected):  # pyndeval's 0/0 (nNRBP without a relevant doc)
            assert m.startswith("nNRBP"), (q, m)
            assert value == 0.0
        else:
            assert value == pytest.approx(expected, abs=1e-9, rel=1e-9), (q, m, value, expected)


# --- ndeval's own examples ------------------------------------------------------------------


def test_pyndeval_readme_example() -> None:
    # Expected values: pyndeval's tests/test_pyndeval.py (ndeval.c's output, 4 decimals).
    sub = _subtopics(
        [("0", "a", "A", 1), ("0", "b", "B", 1), ("0", "b", "D", 1), ("0", "c", "C", 1)]
    )
    run = _run([("0", "A", 9.3), ("0", "D", 8.4), ("0", "E", 8.1), ("0", "B", 7.6)])
    expected = {
        "ERR_IA@5": 0.3933,
        "ERR_IA@10": 0.3907,
        "ERR_IA@20": 0.3907,
        "nERR_IA@5": 0.8297,
        "nERR_IA@20": 0.8297,
        "alpha_DCG@5": 0.4052,
        "alpha_DCG@10": 0.3998,
        "alpha_DCG@20": 0.3997,
        "alpha_nDCG@5": 0.7868,
        "alpha_nDCG@20": 0.7868,
        "NRBP": 0.3906,
        "nNRBP": 0.8620,
        "AP_IA": 0.5000,
        "P_IA@5": 0.2000,
        "P_IA@10": 0.1000,
        "P_IA@20": 0.0500,
        "StRecall@5": 0.6666,
        "StRecall@20": 0.6666,
    }
    values = _values(score(_topic_qrels(sub), run, list(expected), subtopics=sub))
    for measure, value in expected.items():
        assert values["0", measure] == pytest.approx(value, abs=1e-4), measure


def test_ir_measures_err_ia_example() -> None:
    # Expected values: ir_measures' test/test_pyndeval.py (ERR_IA@20 of queries 0 and 1).
    text = (
        "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 1 D2 1\n0 1 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 1 D5 2"
    )
    sub = _subtopics([tuple(line.split()) for line in text.splitlines()])  # type: ignore[misc]
    sub["relevance"] = sub["relevance"].astype("int64")
    run = _run(
        [
            ("0", "D0", 0.8),
            ("0", "D2", 0.7),
            ("0", "D1", 0.3),
            ("0", "D3", 0.4),
            ("0", "D4", 0.1),
            ("1", "D1", 0.8),
            ("1", "D3", 0.7),
            ("1", "D4", 0.3),
            ("1", "D2", 0.4),
        ]
    )
    values = _values(score(_topic_qrels(sub), run, ["ERR_IA@20"], subtopics=sub))
    assert values["0", "ERR_IA@20"] == pytest.approx(0.4659, abs=1e-4)
    assert values["1", "ERR_IA@20"] == pytest.approx(0.1803, abs=1e-4)


# --- differential tests -----------------------------------------------------------------------

DOCS = ["d1", "d10", "d2", "D3", "d4", "e", "ee", "d11"]
SUBTOPIC_IDS = ["1", "2", "3", "10"]
QUERIES = ["q1", "q2", "q3", "q10"]
SCORES = [0.0, 0.5, 1.0, 1.0 + 2.0**-40, 2.0, -1.0]  # ties and near-equal doubles


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Row], list[tuple[str, str, float]]]:
    sub_rows: list[Row] = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3, unique=True)):
        # topics with one subtopic, and docs relevant to several subtopics
        subtopics = draw(
            st.lists(st.sampled_from(SUBTOPIC_IDS), min_size=1, max_size=3, unique=True)
        )
        for s in subtopics:
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
            sub_rows += [(q, s, d, draw(st.integers(-1, 2))) for d in docs]
    run_rows: list[tuple[str, str, float]] = []
    # queries missing on either side: the run may skip judged queries and rank unjudged ones
    for q in draw(st.lists(st.sampled_from(QUERIES), max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from([*DOCS, "u1", "u2"]), max_size=10, unique=True))
        run_rows += [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
    return sub_rows, run_rows


MEASURES = st.lists(
    st.one_of(
        st.builds(
            lambda name, k, alpha, rel: f"{name}({alpha}{rel})@{k}",
            st.sampled_from(["alpha_DCG", "alpha_nDCG"]),
            st.integers(1, 20),
            st.sampled_from(["", "alpha=0.25,", "alpha=0.1,", "alpha=1.0,", "alpha=0.0,"]),
            st.sampled_from(["rel=1", "rel=2", "rel=0"]),
        ),
        st.builds(
            lambda name, k, rel: f"{name}({rel})@{k}",
            st.sampled_from(["ERR_IA", "nERR_IA", "P_IA", "StRecall"]),
            st.integers(1, 20),
            st.sampled_from(["rel=1", "rel=2", "rel=0"]),
        ),
        st.builds(
            lambda name, alpha, beta, rel: f"{name}({alpha}{beta}{rel})",
            st.sampled_from(["NRBP", "nNRBP"]),
            st.sampled_from(["", "alpha=0.3,", "alpha=1.0,"]),
            st.sampled_from(["", "beta=0.8,", "beta=1.0,", "beta=0.0,"]),
            st.sampled_from(["rel=1", "rel=2"]),
        ),
        st.builds(lambda rel: f"AP_IA({rel})", st.sampled_from(["rel=1", "rel=2", "rel=0"])),
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda m: str(parse_measure(m)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), measures=MEASURES)
def test_agrees_with_pyndeval_per_query(
    case: tuple[list[Row], list[tuple[str, str, float]]], measures: list[str]
) -> None:
    sub_rows, run_rows = case
    names = [str(parse_measure(m)) for m in measures]
    sub = _subtopics(sub_rows)
    run = _run(run_rows)
    judged = set(sub["query_id"])
    run = run[run["query_id"].isin(judged)]  # run-only queries warn; the oracle skips them
    ours = _values(score(_topic_qrels(sub, ("q99",)), run, names, subtopics=sub))
    oracle = _oracle(sub_rows, list(run.itertuples(index=False, name=None)), names)
    _assert_agree(ours, oracle)
    assert {q for q, _ in ours} == judged | {"q99"}


@settings(max_examples=30, deadline=None)
@given(case=cases(), max_docs=st.integers(0, 6))
def test_max_docs_is_ndeval_minus_m(
    case: tuple[list[Row], list[tuple[str, str, float]]], max_docs: int
) -> None:
    # ndeval -M: the run cut at depth N before scoring; the oracle gets the cut ranking
    sub_rows, run_rows = case
    sub = _subtopics(sub_rows)
    run = _run(run_rows)
    run = run[run["query_id"].isin(set(sub["query_id"]))]
    names = ["alpha_nDCG@10", "NRBP", "AP_IA", "StRecall@5"]
    ours = _values(score(_topic_qrels(sub), run, names, subtopics=sub, max_docs=max_docs))
    cut: list[tuple[str, str, float]] = []
    for q, group in run.groupby("query_id"):
        ordered = sorted(
            group.itertuples(index=False, name=None), key=lambda r: r[1].encode(), reverse=True
        )
        ordered.sort(key=lambda r: -r[2])  # (score desc, doc desc), as _oracle ranks
        cut += [(str(q), r[1], r[2]) for r in ordered[:max_docs]]
    oracle = _oracle(sub_rows, cut, names)
    _assert_agree(ours, oracle)


def test_alpha_ndcg_of_the_ideal_ranking_is_one() -> None:
    # a run that lists the docs in ndeval's greedy ideal order scores 1.0; here the ideal
    # order is worked out by hand: d1 covers a and b, then d3 the new subtopic c
    sub = _subtopics(
        [
            ("q", "a", "d1", 1),
            ("q", "b", "d1", 1),
            ("q", "a", "d2", 1),
            ("q", "c", "d3", 1),
        ]
    )
    run = _run([("q", "d1", 3.0), ("q", "d3", 2.0), ("q", "d2", 1.0)])
    values = _values(
        score(_topic_qrels(sub), run, ["alpha_nDCG@3", "nERR_IA@3", "nNRBP"], subtopics=sub)
    )
    assert values == {("q", "alpha_nDCG@3"): 1.0, ("q", "nERR_IA@3"): 1.0, ("q", "nNRBP"): 1.0}


# --- API errors -------------------------------------------------------------------------------


def test_measures_need_subtopics() -> None:
    sub = _subtopics([("q", "a", "d1", 1)])
    with pytest.raises(MeasureError, match=r"needs subtopic qrels.*--subtopic-qrels"):
        score(_topic_qrels(sub), _run([("q", "d1", 1.0)]), ["alpha_nDCG@10"])


def test_subtopics_judged_twice_is_an_input_error() -> None:
    sub = _subtopics([("q", "a", "d1", 1), ("q", "a", "d1", 0)])
    with pytest.raises(InputError, match=r"twice \(rows 0 and 1\)"):
        score(_topic_qrels(sub), _run([("q", "d1", 1.0)]), ["AP_IA"], subtopics=sub)


@pytest.mark.parametrize(
    ("measure", "message"),
    [("NRBP(beta=1.5)", "beta must be in 0..1"), ("alpha_nDCG(alpha=-0.5)@5", "alpha must be")],
)
def test_parameters_out_of_range(measure: str, message: str) -> None:
    sub = _subtopics([("q", "a", "d1", 1)])
    with pytest.raises(MeasureError, match=message):
        score(_topic_qrels(sub), _run([("q", "d1", 1.0)]), [measure], subtopics=sub)


def test_names_follow_ir_measures() -> None:
    for name in DIVERSITY_MEASURE_NAMES:
        text = f"{name}@10" if name not in {"NRBP", "nNRBP", "AP_IA"} else name
        assert str(ir_measures.parse_measure(text)) == str(parse_measure(text))


def test_queries_without_subtopics_get_zero(tmp_path: Any) -> None:
    sub = _subtopics([("q", "a", "d1", 1), ("none", "a", "d1", 0)])
    run = _run([("q", "d1", 1.0), ("none", "d1", 1.0), ("extra", "d1", 1.0)])
    qrels = _topic_qrels(sub, ("extra",))
    values = score(qrels, run, ["alpha_nDCG@5", "nNRBP", "AP_IA"], subtopics=sub)
    by = _values(values)
    assert by["q", "alpha_nDCG@5"] == 1.0
    assert np.all([by[q, m] == 0.0 for q in ("none", "extra") for m in ("nNRBP", "AP_IA")])


@settings(max_examples=30, deadline=None)
@given(case=cases())
def test_judged_only_ranks_the_docs_the_subtopic_qrels_grade(
    case: tuple[list[Row], list[tuple[str, str, float]]],
) -> None:
    # -J (judged_only): the oracle gets the run without the docs that no subtopic grades >= 0
    sub_rows, run_rows = case
    sub = _subtopics(sub_rows)
    run = _run(run_rows)
    run = run[run["query_id"].isin(set(sub["query_id"]))]
    names = ["alpha_nDCG@5", "nNRBP", "AP_IA", "P_IA@3", "ERR_IA@10"]
    ours = _values(score(_topic_qrels(sub), run, names, subtopics=sub, judged_only=True))
    graded = {(q, d) for q, _, d, r in sub_rows if r >= 0}
    kept = [row for row in run.itertuples(index=False, name=None) if (row[0], row[1]) in graded]
    _assert_agree(ours, _oracle(sub_rows, kept, names))


def test_alpha_dcg_and_err_ia_at_cutoff_one_exceed_one() -> None:
    # ndeval does not divide them at cutoff 1: one doc relevant to three subtopics scores 3, and
    # measure_range must allow what score() computes (reports holding it are read back)
    sub = _subtopics([("0", s, "A", 1) for s in ("a", "b", "c")])
    run = _run([("0", "A", 1.0)])
    values = _values(score(_topic_qrels(sub), run, ["alpha_DCG@1", "ERR_IA@1"], subtopics=sub))
    for measure in ("alpha_DCG@1", "ERR_IA@1"):
        low, high = measure_range(measure)
        assert values["0", measure] > 1.0
        assert low <= values["0", measure] <= high
