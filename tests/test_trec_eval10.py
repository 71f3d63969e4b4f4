"""Differential tests against the trec_eval 10.0 binary (built by ``trec_eval_oracle``).

Hypothesis draws batches of small qrels/run pairs; each batch is written as one qrels file and
one run file (query IDs prefixed by the pair's index) so that one trec_eval call checks many
pairs. Scores include near-equal doubles (equal as float32, different as float64), exact ties,
-0.0; grades run -2..3; queries are missing from the run and from the qrels. Every per-query
value (``-q``) and every ``all`` value is compared at 1e-9.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trec_eval_oracle import TrecEval10, trec_eval10  # noqa: F401  (fixture)

from evalkit.errors import RunOnlyQueriesWarning
from evalkit.measures import aggregate, parse_measure, score, trec_name

QUERY_IDS = ("001", "1", "q2", "Q10")
DOC_IDS = ("d0", "d1", "d10", "d2", "a", "bb", "B", "zz9", "0", "doc-7", "x", "doc-70000001")
# Near-equal doubles: 1.0, 1.0 + 1e-9 and 1.0 + 2e-9 are one float32; so are 0.3 and 0.1 + 0.2.
SCORES = (0.0, -0.0, 0.3, 0.1 + 0.2, 1.0, 1.0 + 1e-9, 1.0 + 2e-9, 1.0 - 1e-12, 2.0, -1.5, 3.25)

CUTOFFS = (1, 2, 3, 5)
MEASURES = [
    *(f"P@{k}" for k in CUTOFFS),
    *(f"R@{k}" for k in CUTOFFS),
    *(f"Success@{k}" for k in CUTOFFS),
    *(f"AP@{k}" for k in CUTOFFS),
    *(f"nDCG@{k}" for k in CUTOFFS),
    "RR",
    "AP",
    "nDCG",
    "Rprec",
    "Bpref",
    "SetP",
    "SetR",
    "SetF(beta=0.5)",  # the default beta = 1 is checked against trec_eval's expected files
    "NumRet",
    "NumRel",
    "NumRelRet",
    *(f"IPrec@{r}" for r in (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 1.0)),
    "11pt_avg",
    "SetAP",
    "set_relative_P",
    *(f"relative_P@{k}" for k in CUTOFFS),
    "num_nonrel_judged_ret",
    "NumQ",
    *(f"Rprec_mult@{m}" for m in (0.2, 0.5, 1.0, 1.5, 2.0)),
    "infAP",
    *(f"unjudged@{k}" for k in CUTOFFS),
    "utility(p1=2,p3=-0.5,p4=0.25)",
    "G",
    "binG",
    "yaap",
    "ndcg_rel",
    "Rndcg",
    "rbp(p=0.7)",
    "rbp_resid(p=0.7)",
]
TREC_ARGS = [
    "P.1,2,3,5",
    "recall.1,2,3,5",
    "success.1,2,3,5",
    "map_cut.1,2,3,5",
    "ndcg_cut.1,2,3,5",
    "recip_rank",
    "map",
    "ndcg",
    "Rprec",
    "bpref",
    "set_P",
    "set_recall",
    "set_F.0.5",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "iprec_at_recall.0,.1,.25,.3,.5,.7,1",
    "11pt_avg",
    "set_map",
    "set_relative_P",
    "relative_P.1,2,3,5",
    "num_nonrel_judged_ret",
    "num_q",
    "Rprec_mult.0.2,0.5,1.0,1.5,2.0",
    "infAP",
    "unj.1,2,3,5",
    "utility.2,-1,-0.5,0.25",
    "G",
    "binG",
    "yaap",
    "ndcg_rel",
    "Rndcg",
    "rbp.p=0.7",
    "rbp_resid.p=0.7",
]
# trec_eval names a measure given parameters by them, as written on its command line
TREC_NAMES = {
    "utility(p1=2,p3=-0.5,p4=0.25)": "utility_2,-1,-0.5,0.25",
    "utility(p1=2,p3=-0.5,p4=0.25,rel=2)": "utility_2,-1,-0.5,0.25",
}
SUMMED = {"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ"}
SUMMARY_ONLY = {"NumQ"}  # trec_eval prints num_q in the "all" line only


@st.composite
def pair(draw: st.DrawFn) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]:
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=3, unique=True))
    qrels = []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=8, unique=True))
        grades = draw(st.lists(st.integers(-2, 3), min_size=len(docs), max_size=len(docs)))
        # trec_eval cannot evaluate a query whose grades are all negative (it fails to size its
        # grade table): keep one grade >= 0 per query
        grades[0] = max(grades[0], 0)
        qrels += [(q, d, g) for d, g in zip(docs, grades, strict=True)]
    run_queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    run = []
    for q in run_queries:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=12, unique=True))
        run += [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
    return qrels, run


def _batch(
    pairs: list[tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One qrels and one run frame for all ``pairs``: pair i's queries become ``p{i}-{q}``,
    plus a query in both (trec_eval stops when no query is in both)."""
    qrels_rows: list[tuple[str, str, int]] = [("zz-both", "d0", 1)]
    run_rows: list[tuple[str, str, float]] = [("zz-both", "d0", 1.0)]
    for i, (qrels, run) in enumerate(pairs):
        qrels_rows += [(f"p{i}-{q}", d, g) for q, d, g in qrels]
        run_rows += [(f"p{i}-{q}", d, s) for q, d, s in run]
    qrels_frame = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return qrels_frame, run_frame


def _write(qrels: pd.DataFrame, run: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    qrels_path, run_path = folder / "qrels", folder / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    # repr() round-trips every double; trec_eval 10.0 reads it back exactly (atof)
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} run\n" for q, d, s in run.itertuples(index=False))
    )
    return qrels_path, run_path


def _evalkit(qrels: pd.DataFrame, run: pd.DataFrame, measures: list[str], **options: object):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        return score(qrels, run, measures, **options)  # type: ignore[arg-type]


def _compare(
    oracle: dict[tuple[str, str], float],
    frame: pd.DataFrame,
    measures: list[str],
    names: dict[str, str] | None = None,
) -> None:
    names = names or {m: TREC_NAMES.get(m) or trec_name(m) for m in measures}
    queries = set(frame["query_id"])
    oracle_queries = {q for _, q in oracle if q != "all"}
    assert queries == oracle_queries
    for q, m, v in frame.itertuples(index=False):
        if parse_measure(m).name not in SUMMARY_ONLY:
            assert v == pytest.approx(oracle[(names[m], q)], abs=1e-9, nan_ok=True), (q, m)
    for m, group in frame.groupby("measure", sort=False)["value"]:
        if m == "NumRel(rel=2)":
            # trec_eval -c sums num_rel over qrels rows graded > 0 whatever -l says (its
            # m_num_rel.c); the per-query values above follow -l
            continue
        values = group.to_numpy()  # a NaN makes trec_eval's sum NaN: no skipping
        expected = values.sum() if parse_measure(str(m)).name in SUMMED else values.mean()
        oracle_all = oracle[(names[str(m)], "all")]
        assert expected == pytest.approx(oracle_all, abs=1e-9, nan_ok=True), m


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(pair(), min_size=20, max_size=20))
def test_per_query_values_equal_trec_eval_10(
    trec_eval10: TrecEval10,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    pairs: list[tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]],
) -> None:
    qrels, run = _batch(pairs)
    folder = tmp_path_factory.mktemp("pairs")
    qrels_path, run_path = _write(qrels, run, folder)
    oracle = trec_eval10.values(qrels_path, run_path, TREC_ARGS, "-c")
    _compare(oracle, _evalkit(qrels, run, MEASURES, trec_version="10"), MEASURES)


@pytest.mark.parametrize(
    ("options", "flags"),
    [
        ({"max_docs": 3}, ["-c", "-M3"]),
        ({"judged_only": True}, ["-c", "-J"]),
        ({"max_docs": 4, "judged_only": True}, ["-c", "-M4", "-J"]),
        ({"complete": False}, []),
        ({"trec_version": "10", "complete": True}, ["-c", "-l2"]),
        ({"num_docs": 50}, ["-c", "-N50"]),
    ],
)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(pair(), min_size=20, max_size=20))
def test_options_equal_trec_eval_10(
    trec_eval10: TrecEval10,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    pairs: list[tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]],
    options: dict[str, object],
    flags: list[str],
) -> None:
    qrels, run = _batch(pairs)
    if "-c" not in flags:
        # trec_eval 10.0 without -c stops ("result qid ... not found") at a qrels query the
        # run lacks (9.0.8 skipped it): give the oracle a qrels file without those queries
        oracle_qrels = qrels[qrels["query_id"].isin(set(run["query_id"]))]
    else:
        oracle_qrels = qrels
    folder = tmp_path_factory.mktemp("pairs")
    qrels_path, run_path = _write(oracle_qrels, run, folder)
    oracle = trec_eval10.values(qrels_path, run_path, TREC_ARGS, *flags)
    measures = MEASURES
    if "-l2" in flags:
        measures = [_with_rel2(m) for m in MEASURES]
    names = {m: TREC_NAMES.get(m) or trec_name(m) for m in measures}
    frame = _evalkit(qrels, run, measures, **options)
    _compare(oracle, frame, measures, names)


NO_REL = {
    "nDCG",
    "NumRet",
    "NumQ",
    "unjudged",
    "G",
    "ndcg_rel",
    "rbp",
    "rbp_resid",
}  # measures without a relevance level


def _with_rel2(measure: str) -> str:
    """``measure`` at relevance level 2 (trec_eval -l2), where it takes one."""
    base, _, cut = measure.partition("@")
    if base.partition("(")[0] in NO_REL:
        return measure
    if base.endswith(")"):  # parameters: rel sorts after p1..p4
        return base[:-1] + ",rel=2)" + (f"@{cut}" if cut else "")
    return f"{base}(rel=2)" + (f"@{cut}" if cut else "")


def test_near_equal_scores_rank_as_doubles_in_10_and_as_floats_in_9() -> None:
    # float32(1 + 1e-9) == float32(1.0): 9.0.8 breaks the tie by doc ID descending ("b" first),
    # 10.0 ranks "a" (the larger double) first.
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1 + 1e-9, 1.0]})
    v10 = score(qrels, run, ["RR"], trec_version="10")["value"].tolist()
    v9 = score(qrels, run, ["RR"], trec_version="9")["value"].tolist()
    assert (v10, v9) == ([1.0], [0.5])


def test_large_tie_groups_rank_as_doubles(trec_eval10: TrecEval10, tmp_path: Path) -> None:  # noqa: F811
    # one float32 tie group of 3,000 docs (sorted tie path), doubles all different
    rng = np.random.default_rng(5)
    n = 3000
    docs = [f"d{i}" for i in rng.permutation(n)]
    scores = 1.0 + rng.integers(0, 40, n) * 1e-10
    run = pd.DataFrame({"query_id": "q", "doc_id": docs, "score": scores})
    qrels = pd.DataFrame(
        {"query_id": "q", "doc_id": docs[::7], "relevance": rng.integers(0, 3, len(docs[::7]))}
    )
    qrels_path, run_path = _write(qrels, run, tmp_path)
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    oracle = trec_eval10.values(qrels_path, run_path, ["map", "ndcg_cut.10", "P.5", "recip_rank"])
    _compare(oracle, _evalkit(qrels, run, measures), measures)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(pair(), min_size=20, max_size=20))
def test_geometric_means_equal_trec_eval_10(
    trec_eval10: TrecEval10,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    pairs: list[tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]],
) -> None:
    qrels, run = _batch(pairs)
    qrels_path, run_path = _write(qrels, run, tmp_path_factory.mktemp("pairs"))
    oracle = trec_eval10.values(qrels_path, run_path, ["gm_map", "gm_bpref"], "-c")
    means = aggregate(_evalkit(qrels, run, ["AP", "Bpref"]), geometric=["AP", "Bpref"])
    got = dict(zip(means["measure"], means["value"], strict=True))
    assert got["gm_map"] == pytest.approx(oracle[("gm_map", "all")], abs=1e-9)
    assert got["gm_bpref"] == pytest.approx(oracle[("gm_bpref", "all")], abs=1e-9)


def test_geometric_means_by_group() -> None:
    # exp(mean(log(max(v, 1e-5)))) per group; 0.0 counts as 1e-5 (trec_eval's MIN_GEO_MEAN)
    per_query = pd.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "query_id": ["1", "2", "1", "2"],
            "measure": "AP",
            "value": [0.25, 1.0, 0.0, 0.5],
        }
    )
    out = aggregate(per_query, by=["system"], geometric=["AP"])
    got = {(s, m): v for s, m, v in out.itertuples(index=False)}
    assert got[("a", "gm_map")] == pytest.approx(0.5)
    assert got[("b", "gm_map")] == pytest.approx((1e-5 * 0.5) ** 0.5)
    assert got[("a", "AP")] == pytest.approx(0.625)
