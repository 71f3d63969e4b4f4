"""Measure names, hand-computed values, the score/aggregate API and a common test over every
registered measure."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError, MeasureError, RunOnlyQueriesWarning
from evalkit.measures import KERNELS, Measure, aggregate, parse_measure, score, trec_name


def _qrels(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def _run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def _values(qrels: pd.DataFrame, run: pd.DataFrame, measures: list[str], **kw: str) -> dict:
    frame = score(qrels, run, measures, **kw)
    return {(q, m): v for q, m, v in frame.itertuples(index=False)}


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "P@10",
        "R@100",
        "RR",
        "RR@10",
        "AP",
        "AP@5",
        "nDCG",
        "nDCG@10",
        "nDCG(dcg='exp-log2')@10",
        "Rprec",
        "Success@1",
        "Bpref",
        "Judged@10",
        "SetP",
        "SetR",
        "SetF",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "R(rel=2)@10",
        "AP(rel=3)",
        "ContextPrecision@5",
        "ContextRecall@5",
        "NoAnswerFP",
    ],
)
def test_names_round_trip(text: str) -> None:
    measure = parse_measure(text)
    assert str(measure) == text
    assert parse_measure(str(measure)) == measure


def test_parse_normalizes_defaults_spacing_and_quotes() -> None:
    assert str(parse_measure('nDCG(dcg="log2")@10')) == "nDCG@10"
    assert str(parse_measure(" R( rel = 1 ) @ 5 ")) == "R@5"
    assert parse_measure("nDCG(dcg='exp-log2')@3") == Measure("nDCG", (("dcg", "exp-log2"),), 3)
    assert parse_measure("R(rel=2)@5").param("rel") == 2
    assert parse_measure("R@5").param("rel") == 1


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("nDGC@10", "Did you mean 'nDCG'?"),
        ("Precision@10", "known measures: P, R, RR"),
        ("nDCG(gain=2)@10", "its parameters: dcg"),
        ("R(rell=2)@10", "Did you mean 'rel'?"),
        ("nDCG(dcg='exp')@10", "'log2', 'exp-log2'"),
        ("P", "needs a cutoff"),
        ("Rprec@10", "takes no cutoff"),
        ("P@0", "cutoff must be >= 1"),
        ("R(rel='2')@5", "rel must be int"),
        ("nDCG@", "cannot parse measure"),
        ("nDCG(dcg=)@10", "cannot parse the parameters"),
    ],
)
def test_bad_names_explain_what_exists(text: str, fragment: str) -> None:
    with pytest.raises(MeasureError, match=None) as info:
        parse_measure(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nDCG@10", "ndcg_cut_10"),
        ("nDCG", "ndcg"),
        ("AP", "map"),
        ("AP@100", "map_cut_100"),
        ("RR", "recip_rank"),
        ("P@10", "P_10"),
        ("R(rel=2)@5", "recall_5"),
        ("Success@1", "success_1"),
        ("Rprec", "Rprec"),
        ("Bpref", "bpref"),
        ("SetP", "set_P"),
        ("SetR", "set_recall"),
        ("SetF", "set_F"),
        ("NumRet", "num_ret"),
        ("NumRel", "num_rel"),
        ("NumRelRet", "num_rel_ret"),
    ],
)
def test_trec_names(text: str, expected: str) -> None:
    assert trec_name(text) == expected


@pytest.mark.parametrize("text", ["RR@10", "Judged@10", "nDCG(dcg='exp-log2')@10", "NoAnswerFP"])
def test_measures_without_a_trec_name(text: str) -> None:
    with pytest.raises(MeasureError, match="no trec_eval equivalent"):
        trec_name(text)


# --- hand-computed values ---------------------------------------------------------------------

# q1 judges a=3, b=2, c=0, d=1 (x is unjudged); the run ranks c, a, x, d.
Q1 = _qrels([("q1", "a", 3), ("q1", "b", 2), ("q1", "c", 0), ("q1", "d", 1)])
R1 = _run([("q1", "c", 4.0), ("q1", "a", 3.0), ("q1", "x", 2.0), ("q1", "d", 1.0)])


def test_ndcg_linear_gain_by_hand() -> None:
    # DCG = sum gain / log2(rank + 1) over ranks 1..4 with gains 0, 3, 0, 1:
    #   3 / log2(3) + 1 / log2(5); ideal: gains 3, 2, 1 at ranks 1..3: 3 + 2 / log2(3) + 1 / 2.
    v = _values(Q1, R1, ["nDCG", "nDCG@2"])
    assert v["q1", "nDCG"] == pytest.approx(
        (3 / math.log2(3) + 1 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / 2), abs=1e-12
    )
    # top 2 only: 3 / log2(3) over the ideal 3 + 2 / log2(3)
    assert v["q1", "nDCG@2"] == pytest.approx(
        (3 / math.log2(3)) / (3 + 2 / math.log2(3)), abs=1e-12
    )


def test_ndcg_exponential_gain_by_hand() -> None:
    # gains 2^g - 1: a=7, b=3, c=0, d=1. DCG = 7 / log2(3) + 1 / log2(5);
    # ideal = 7 + 3 / log2(3) + 1 / 2.
    v = _values(Q1, R1, ["nDCG(dcg='exp-log2')", "nDCG(dcg='exp-log2')@1"])
    assert v["q1", "nDCG(dcg='exp-log2')"] == pytest.approx(
        (7 / math.log2(3) + 1 / math.log2(5)) / (7 + 3 / math.log2(3) + 1 / 2), abs=1e-12
    )
    assert v["q1", "nDCG(dcg='exp-log2')@1"] == 0.0  # rank 1 is c (grade 0)


def test_ap_and_rr_by_hand() -> None:
    # relevant (grade >= 1): a, b, d (R = 3). Retrieved relevant: a at rank 2 (precision 1/2),
    # d at rank 4 (precision 2/4). AP = (1/2 + 2/4) / 3 = 1/3.
    # rel=2: relevant a, b (R = 2); a at rank 2 -> AP = (1/2) / 2 = 1/4.
    # AP@2 = (1/2) / 3. RR = 1/2 (a at rank 2); RR@1 = 0.
    v = _values(Q1, R1, ["AP", "AP(rel=2)", "AP@2", "RR", "RR@1", "RR@2"])
    assert v["q1", "AP"] == pytest.approx(1 / 3, abs=1e-12)
    assert v["q1", "AP(rel=2)"] == pytest.approx(1 / 4, abs=1e-12)
    assert v["q1", "AP@2"] == pytest.approx(1 / 6, abs=1e-12)
    assert v["q1", "RR"] == 0.5
    assert v["q1", "RR@1"] == 0.0
    assert v["q1", "RR@2"] == 0.5


def test_bpref_by_hand() -> None:
    # relevant a, b (R = 2); judged non-relevant c, e, z (N = 3); min(N, R) = 2.
    # ranking c, a, e, b: a has 1 non-relevant above it -> 1 - 1/2; b has 2 -> 1 - 2/2.
    # bpref = (0.5 + 0) / 2 = 0.25
    qrels = _qrels([("q", "a", 1), ("q", "b", 1), ("q", "c", 0), ("q", "e", 0), ("q", "z", 0)])
    run = _run([("q", "c", 4.0), ("q", "a", 3.0), ("q", "e", 2.0), ("q", "b", 1.0)])
    assert _values(qrels, run, ["Bpref"])["q", "Bpref"] == pytest.approx(0.25, abs=1e-12)


def test_counts_precision_recall_set_measures_by_hand() -> None:
    # ranks: c(0) a(3) x(-) d(1); relevant retrieved a, d of R = 3 relevant; 4 retrieved.
    v = _values(
        Q1,
        R1,
        [
            *("P@2", "P@10", "R@2", "Success@1", "Success@2", "Rprec", "Judged@3", "Judged@10"),
            *("SetP", "SetR", "SetF", "NumRet", "NumRel", "NumRelRet"),
        ],
    )
    assert v["q1", "P@2"] == 0.5  # a in the top 2
    assert v["q1", "P@10"] == 0.2  # 2 relevant / 10, even though only 4 were retrieved
    assert v["q1", "R@2"] == pytest.approx(1 / 3)
    assert (v["q1", "Success@1"], v["q1", "Success@2"]) == (0.0, 1.0)
    assert v["q1", "Rprec"] == pytest.approx(1 / 3)  # top R = 3: c, a, x -> 1 relevant
    assert v["q1", "Judged@3"] == pytest.approx(2 / 3)  # c, a judged; x not
    assert v["q1", "Judged@10"] == 0.75  # 3 judged of the 4 retrieved
    assert v["q1", "SetP"] == 0.5
    assert v["q1", "SetR"] == pytest.approx(2 / 3)
    assert v["q1", "SetF"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert (v["q1", "NumRet"], v["q1", "NumRel"], v["q1", "NumRelRet"]) == (4.0, 3.0, 2.0)


def test_negative_grades_are_pooled_but_unjudged() -> None:
    # trec_eval: a negative grade is neither relevant nor judged non-relevant, with zero gain.
    qrels = _qrels([("q", "a", -1), ("q", "b", 1), ("q", "c", 0)])
    run = _run([("q", "a", 3.0), ("q", "c", 2.0), ("q", "b", 1.0)])
    v = _values(qrels, run, ["NumRel", "P@1", "Bpref", "nDCG", "Judged@1"])
    assert v["q", "NumRel"] == 1.0
    assert v["q", "P@1"] == 0.0
    # b has one judged non-relevant doc (c) above it; N = 1, R = 1 -> 1 - 1/1 = 0
    assert v["q", "Bpref"] == 0.0
    assert v["q", "nDCG"] == pytest.approx(1 / math.log2(4))  # b at rank 3, ideal 1 at rank 1
    assert v["q", "Judged@1"] == 1.0  # a is in the qrels (ir_measures counts it as judged)


# --- tie rules, duplicates, completeness -------------------------------------------------------

QT = _qrels([("q", "d1", 1)])


def test_trec_ties_break_by_doc_id_descending() -> None:
    run = _run([("q", "d1", 1.0), ("q", "d2", 1.0)])
    assert _values(QT, run, ["RR"])["q", "RR"] == 0.5  # d2 > d1, so d2 ranks first


def test_trec_9_ties_compare_scores_as_float32() -> None:
    # 1.0 + 1e-9 == 1.0 in float32 (trec_eval 9.0.8 stores scores as C floats): a tie, so d2
    # first; trec_eval 10.0 stores C doubles: d1 first.
    run = _run([("q", "d1", 1.0 + 1e-9), ("q", "d2", 1.0)])
    assert _values(QT, run, ["RR"], trec_version="9")["q", "RR"] == 0.5
    assert _values(QT, run, ["RR"], trec_version="10")["q", "RR"] == 1.0
    assert _values(QT, run, ["RR"])["q", "RR"] == 1.0  # 10 is the default
    run = _run([("q", "d1", 1.0 + 1e-6), ("q", "d2", 1.0)])
    assert _values(QT, run, ["RR"], trec_version="9")["q", "RR"] == 1.0


def test_given_ties_use_rank_then_row_order() -> None:
    run = _run([("q", "d1", 1.0), ("q", "d2", 1.0)])
    assert _values(QT, run, ["RR"], ties="given")["q", "RR"] == 1.0  # row order
    ranked = run.assign(rank=[2, 1])
    assert _values(QT, ranked, ["RR"], ties="given")["q", "RR"] == 0.5  # rank column
    # the trec rule ignores the rank column and the row order
    assert _values(QT, ranked.iloc[::-1], ["RR"])["q", "RR"] == 0.5


def test_duplicate_docs_raise_or_keep_first() -> None:
    run = _run([("q", "d2", 5.0), ("q", "d1", 1.0), ("q", "d2", 0.5), ("q", "d3", 0.1)])
    with pytest.raises(InputError, match=r"doc 'd2' more than once for query 'q'"):
        score(QT, run, ["NumRet"])
    v = _values(QT, run, ["NumRet", "RR"], duplicates="keep-first")
    assert (v["q", "NumRet"], v["q", "RR"]) == (3.0, 0.5)  # d2 (score 5) kept, then d1


def test_duplicate_qrels_pairs_are_rejected() -> None:
    qrels = _qrels([("q", "d1", 1), ("q", "d1", 2)])
    with pytest.raises(InputError, match="qrels judges doc 'd1' more than once for query 'q'"):
        score(qrels, _run([("q", "d1", 1.0)]), ["AP"])


def test_every_qrels_query_gets_every_measure_and_run_only_queries_warn() -> None:
    qrels = _qrels([("b", "x", 1), ("a", "y", 0), ("c", "z", 2)])
    run = _run([("b", "x", 1.0), ("zz", "x", 1.0), ("zz2", "x", 1.0)])
    with pytest.warns(RunOnlyQueriesWarning, match="2 queries that the qrels do not judge"):
        frame = score(qrels, run, ["NumRel", "P@1", "AP"])
    assert list(frame.columns) == ["query_id", "measure", "value"]
    assert frame["query_id"].tolist() == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert frame["measure"].tolist() == ["NumRel", "P@1", "AP"] * 3
    assert str(frame["query_id"].dtype) == "str"
    assert frame["value"].dtype == np.float64
    # c was not retrieved: 0.0 except NumRel (trec_eval -c)
    assert frame["value"].tolist()[6:] == [1.0, 0.0, 0.0]


def test_ids_stay_strings_and_non_strings_are_rejected() -> None:
    qrels = _qrels([("001", "d", 1), ("1", "d", 0)])
    frame = score(qrels, _run([("001", "d", 1.0)]), ["P@1"])
    assert frame["query_id"].tolist() == ["001", "1"]
    assert frame["value"].tolist() == [1.0, 0.0]
    bad = pd.DataFrame({"query_id": [1], "doc_id": ["d"], "relevance": [1]})
    with pytest.raises(InputError, match=r"qrels.query_id must hold strings"):
        score(bad, _run([("1", "d", 1.0)]), ["P@1"])


@pytest.mark.parametrize(
    ("qrels", "run", "fragment"),
    [
        (
            _qrels([("q", "d", 1)]),
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"]}),
            "run is missing column(s) score",
        ),
        (
            _qrels([("q", "d", 1)]),
            _run([("q", "d", float("nan"))]),
            "NaN value(s) (first at row 0, query 'q')",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [0.5]}),
            _run([("q", "d", 1.0)]),
            "qrels.relevance must hold integers",
        ),
        (
            pd.DataFrame({"query_id": ["q", None], "doc_id": ["d", "e"], "relevance": [1, 1]}),
            _run([("q", "d", 1.0)]),
            "qrels.query_id has 1 missing value(s) (first at row 1)",
        ),
    ],
)
def test_bad_frames_get_clear_errors(qrels: pd.DataFrame, run: pd.DataFrame, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        score(qrels, run, ["P@1"])
    assert fragment in str(info.value)


def test_span_measures_parse_but_are_not_scored_here() -> None:
    with pytest.raises(MeasureError, match=r"computed by evalkit\.run\.evaluate"):
        score(QT, _run([("q", "d1", 1.0)]), ["ContextRecall@5"])


def test_inputs_are_not_modified() -> None:
    run = _run([("q", "d2", 1.0), ("q", "d1", 1.0)])
    before_run, before_qrels = run.copy(), QT.copy()
    score(QT, run, ["AP", "nDCG@10"])
    pd.testing.assert_frame_equal(run, before_run)
    pd.testing.assert_frame_equal(QT, before_qrels)


def test_empty_qrels_give_an_empty_frame_with_the_same_columns() -> None:
    frame = score(
        _qrels([]).astype({"relevance": "int64"}), _run([]).astype({"score": "float64"}), ["AP"]
    )
    assert list(frame.columns) == ["query_id", "measure", "value"]
    assert len(frame) == 0


def test_aggregate_means_per_measure_and_group() -> None:
    per_query = pd.DataFrame(
        {
            "system": ["s1", "s1", "s1", "s1", "s2", "s2"],
            "query_id": ["a", "a", "b", "b", "a", "a"],
            "measure": ["P@1", "AP", "P@1", "AP", "P@1", "AP"],
            "value": [1.0, 0.5, 0.0, 0.25, 1.0, 1.0],
            "language": ["en"] * 6,
        }
    )
    overall = aggregate(per_query)
    assert overall.to_dict("list") == {"measure": ["P@1", "AP"], "value": [2 / 3, 1.75 / 3]}
    by_system = aggregate(per_query, by=["system"])
    assert list(by_system.columns) == ["system", "measure", "value"]
    assert by_system.values.tolist() == [
        ["s1", "P@1", 0.5],
        ["s1", "AP", 0.375],
        ["s2", "P@1", 1.0],
        ["s2", "AP", 1.0],
    ]
    with pytest.raises(InputError, match="missing column"):
        aggregate(per_query, by=["split"])


# --- common test over every registered measure ------------------------------------------------

DEFAULT_INSTANCES = {
    "P": "P@5",
    "R": "R@5",
    "RR": "RR",
    "AP": "AP",
    "nDCG": "nDCG@5",
    "Rprec": "Rprec",
    "Success": "Success@5",
    "Bpref": "Bpref",
    "Judged": "Judged@5",
    "SetP": "SetP",
    "SetR": "SetR",
    "SetF": "SetF",
    "NumRet": "NumRet",
    "NumRel": "NumRel",
    "NumRelRet": "NumRelRet",
    "IPrec": "IPrec@0.3",
    "11pt_avg": "11pt_avg",
    "SetAP": "SetAP",
    "set_relative_P": "set_relative_P",
    "relative_P": "relative_P@5",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "NumQ": "NumQ",
    "Rprec_mult": "Rprec_mult@0.6",
    "infAP": "infAP",
    "unjudged": "unjudged@5",
    "utility": "utility",
    "G": "G",
    "binG": "binG",
    "yaap": "yaap",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "Rndcg",
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "RBP": "RBP(rel=1)",  # graded RBP (the default) exceeds 1 with grades above 1
    "ERR": "ERR@10",
    "Compat": "Compat",
}
COUNTS = {"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ", "utility", "yaap"}
SIGNED = {"utility", "yaap"}  # may be negative
# the value of every query when nothing was retrieved, where not 0
EMPTY_VALUE = {"NumQ": 1.0}


def _random_case(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels = [
        (f"q{q}", d, int(rng.integers(-1, 4)))
        for q in range(6)
        for d in rng.choice(docs, 8, replace=False)
    ]
    run = [
        (f"q{q}", d, float(rng.integers(0, 4)))
        for q in range(5)
        for d in rng.choice(docs, 12, replace=False)
    ]
    return _qrels(qrels), _run(run)


def test_common_cases_cover_every_registered_measure() -> None:
    assert set(DEFAULT_INSTANCES) == set(KERNELS.names())


@pytest.mark.parametrize("name", sorted(DEFAULT_INSTANCES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_measure_is_complete_bounded_and_order_invariant(name: str, seed: int) -> None:
    qrels, run = _random_case(seed)
    measure = DEFAULT_INSTANCES[name]
    frame = score(qrels, run, [measure])
    assert frame["query_id"].tolist() == sorted(set(qrels["query_id"]))
    assert np.isfinite(frame["value"]).all()
    assert name in SIGNED or (frame["value"] >= 0).all()
    if name not in COUNTS:
        assert (frame["value"] <= 1).all()
    shuffled = score(
        qrels.sample(frac=1, random_state=seed), run.sample(frac=1, random_state=seed), [measure]
    )
    pd.testing.assert_frame_equal(frame, shuffled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = score(qrels, run.iloc[:0], [measure])
    expected_empty = (
        qrels[qrels["relevance"] >= 1]
        .groupby("query_id")
        .size()
        .reindex(frame["query_id"], fill_value=0)
        if name == "NumRel"
        else None
    )
    if name == "yaap":  # trec_eval m_yaap.c: log((1 + 0) / (1 + R - 0)) without a retrieved doc
        relevant = (
            qrels[qrels["relevance"] >= 1]
            .groupby("query_id")
            .size()
            .reindex(frame["query_id"], fill_value=0)
        )
        expected_empty = np.log(1.0 / (1.0 + relevant))
    if expected_empty is None:
        assert (empty["value"] == EMPTY_VALUE.get(name, 0.0)).all()
    else:
        assert empty["value"].tolist() == expected_empty.astype(float).tolist()
