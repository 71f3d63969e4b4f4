"""The measures' test oracles shared by the differential tests, and the inputs they read.

Every value a differential test expects comes from one of these, never from evalkit:

- trec_eval 9.0.8 through pytrec_eval (:func:`pytrec_eval_values`), and the comparison of its
  per-query values with evalkit's (:func:`assert_trec_eval_values`);
- trec_eval 10.0 (the binary of ``trec_eval_oracle``; the ``trec_eval10`` fixtures of
  ``conftest``): the batches of small qrels/run pairs it scores in one call (:func:`pair`,
  :func:`batch`, :data:`BATCHES`), its values of two frames (:func:`trec_eval_values`, through
  the TREC files of :func:`write_trec_files`) and their comparison, per query and ``all``, with
  evalkit's (:func:`assert_equal_to_trec_eval`);
- the measures evalkit and trec_eval both name (:func:`trec_eval_measures`,
  :func:`trec_eval_arguments`); trec_eval's ``-m`` arguments and printed lines are
  ``trec_eval_oracle``'s (:func:`measure_arguments`, :func:`read_trec_eval_output`);
- ir_measures' default providers (:func:`ir_measures_values`) and its pyndeval provider
  (:func:`pyndeval_values`).

evalkit's side of a comparison: :func:`quiet_score` (``score`` without the run-only-queries
warning the generated runs raise) and :func:`score_values` (its values by query and measure).
The statistics tests' oracles are ``stats_oracles``'.
"""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import ir_measures
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytrec_eval
from hypothesis import strategies as st
from trec_eval_oracle import TrecEval10

from evalkit.errors import RunOnlyQueriesWarning
from evalkit.measures import parse_measure, score, trec_name

Values = dict[tuple[str, str], float]
"""``{(query_id, measure): value}``."""

QrelsRows = list[tuple[str, str, int]]
RunRows = list[tuple[str, str, float]]
Pair = tuple[QrelsRows, RunRows]
"""Qrels rows ``(query_id, doc_id, relevance)`` and run rows ``(query_id, doc_id, score)``."""
Frames = tuple[pd.DataFrame, pd.DataFrame]
"""A qrels frame (query_id, doc_id, relevance) and a run frame (query_id, doc_id, score)."""

QRELS_COLUMNS = ["query_id", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "doc_id", "score"]


def qrels_frame(rows: Iterable[tuple[str, str, int]]) -> pd.DataFrame:
    """A qrels frame (query_id, doc_id, relevance) of ``rows``, in their order."""
    return pd.DataFrame(list(rows), columns=QRELS_COLUMNS)


def run_frame(rows: Iterable[tuple[str, str, float]]) -> pd.DataFrame:
    """A run frame (query_id, doc_id, score) of ``rows``, in their order."""
    return pd.DataFrame(list(rows), columns=RUN_COLUMNS)


def frames(pair: Pair) -> Frames:
    """The qrels and run frames of ``pair``'s rows."""
    return qrels_frame(pair[0]), run_frame(pair[1])


# --- evalkit's side ---------------------------------------------------------------------------


def quiet_score(qrels: pd.DataFrame, run: Any, measures: list[str], **options: Any) -> pd.DataFrame:
    """``score(qrels, run, measures, **options)`` without the run-only-queries warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        return score(qrels, run, measures, **options)


def score_values(
    qrels: pd.DataFrame, run: pd.DataFrame, measures: list[str], **options: Any
) -> Values:
    """:func:`quiet_score`'s values as ``{(query_id, measure): value}``."""
    frame = quiet_score(qrels, run, measures, **options)
    return {(q, m): v for q, m, v in frame.itertuples(index=False)}


def assert_per_query_values(per_query: pd.DataFrame, expected: Values, *, tol: float) -> None:
    """Every row of ``per_query`` (query_id, measure, value) equals the oracle's value of its
    query and measure within ``tol`` (a missing oracle value fails)."""
    for query, measure, value in zip(
        per_query["query_id"], per_query["measure"], per_query["value"], strict=True
    ):
        assert value == pytest.approx(expected[(query, measure)], abs=tol), (query, measure)


# --- TREC files and trec_eval's command line --------------------------------------------------


def write_trec_qrels(qrels: pd.DataFrame, path: Path) -> Path:
    """The qrels frame as TREC lines (``q 0 doc grade``) in the frame's row order."""
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels[QRELS_COLUMNS].itertuples(index=False))
    )
    return path


def write_trec_run(run: pd.DataFrame, path: Path, *, tag: str = "run") -> Path:
    """The run frame as TREC lines (``q Q0 doc rank score tag``) in the frame's row order
    (evalkit's ``write_run`` would sort them); the rank is the frame's ``rank`` column, 0
    without one. ``repr()`` writes every double so that it reads back exactly (trec_eval 10.0's
    ``atof``); a ``.gz`` path is gzipped."""
    ranks = run["rank"] if "rank" in run.columns else [0] * len(run)
    lines = [
        f"{q} Q0 {d} {r} {s!r} {tag}\n"
        for q, d, r, s in zip(run["query_id"], run["doc_id"], ranks, run["score"], strict=True)
    ]
    with (gzip.open if path.suffix == ".gz" else open)(path, "wt") as out:
        out.writelines(lines)
    return path


def write_trec_files(qrels: pd.DataFrame, run: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    """``folder/qrels`` and ``folder/run``: :func:`write_trec_qrels` and :func:`write_trec_run`."""
    return write_trec_qrels(qrels, folder / "qrels"), write_trec_run(run, folder / "run")


def write_parquet_run(run: pd.DataFrame, path: Path, *, row_group_size: int = 37) -> Path:
    """The run frame as a Parquet file of small row groups, in the frame's row order."""
    table = pa.Table.from_pandas(run, preserve_index=False)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


#: trec_eval's name (its ``-m`` argument and printed name) of each measure evalkit names
#: without a cutoff, written here by hand from trec_eval's measures.c.
TREC_EVAL_WHOLE = {
    "RR": "recip_rank",
    "AP": "map",
    "nDCG": "ndcg",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetF": "set_F",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
#: trec_eval's name of each measure family evalkit names with a cutoff (``P@5`` is ``P.5``).
TREC_EVAL_FAMILIES = {
    "P": "P",
    "R": "recall",
    "Success": "success",
    "AP": "map_cut",
    "nDCG": "ndcg_cut",
}


def trec_eval_measures(
    cutoffs: Iterable[int],
    *,
    families: Iterable[str] = TREC_EVAL_FAMILIES,
    whole: Iterable[str] = TREC_EVAL_WHOLE,
) -> list[str]:
    """evalkit's names: each of ``families`` at each cutoff, then the ``whole`` measures."""
    cutoffs = list(cutoffs)
    return [*(f"{f}@{k}" for f in families for k in cutoffs), *whole]


def trec_eval_arguments(
    cutoffs: Iterable[int],
    *,
    families: Iterable[str] = TREC_EVAL_FAMILIES,
    whole: Iterable[str] = TREC_EVAL_WHOLE,
) -> list[str]:
    """trec_eval's ``-m`` arguments of the :func:`trec_eval_measures` of the same arguments:
    one a family (``P.1,2,3,5``), one a ``whole`` measure (``recip_rank``)."""
    written = ",".join(str(k) for k in cutoffs)
    return [
        *(f"{TREC_EVAL_FAMILIES[f]}.{written}" for f in families),
        *(TREC_EVAL_WHOLE[m] for m in whole),
    ]


# --- trec_eval 9.0.8: pytrec_eval -------------------------------------------------------------


def pytrec_eval_values(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: set[str],
    *,
    relevance_level: int = 1,
) -> dict[str, dict[str, float]]:
    """``{query_id: {trec_eval name: value}}`` of trec_eval 9.0.8 (pytrec_eval) for every
    qrels query, as ``trec_eval -c`` gives them.

    pytrec_eval only evaluates queries with a non-empty ranking (it can crash on empty ones),
    so a qrels query with no ranking gets trec_eval's -c value of an empty ranking: 0 for every
    measure, except num_rel, which counts the query's docs graded >= the relevance level.
    """
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(docs) for q, docs in qrels.items()}, measures, relevance_level=relevance_level
    )
    ranked = {q: dict(docs) for q, docs in run.items() if q in qrels and docs}
    values: dict[str, dict[str, float]] = evaluator.evaluate(ranked) if ranked else {}
    for q, docs in qrels.items():
        if q not in values:
            num_rel = sum(1 for g in docs.values() if g >= max(relevance_level, 0))
            values[q] = _EmptyRanking(num_rel)
    return values


class _EmptyRanking(dict[str, float]):
    """trec_eval -c values of a query with no ranking: 0.0 except num_rel."""

    def __init__(self, num_rel: int) -> None:
        super().__init__()
        self.num_rel = float(num_rel)

    def __missing__(self, key: str) -> float:
        return self.num_rel if key == "num_rel" else 0.0


def assert_trec_eval_values(
    ours: Values,
    expected: Mapping[str, Mapping[str, float]],
    queries: Iterable[str],
    measures: Iterable[str],
) -> None:
    """Our value of each of ``queries`` and ``measures`` equals trec_eval's (``expected``, as
    :func:`pytrec_eval_values` gives it, by trec_eval name) at 1e-9."""
    measures = list(measures)
    for q in queries:
        for m in measures:
            want = expected[q][trec_name(m)]
            assert ours[q, str(parse_measure(m))] == pytest.approx(want, abs=1e-9), (q, m)


# --- trec_eval 10.0: batches of small pairs in one call ---------------------------------------

QUERY_IDS = ("001", "1", "q2", "Q10")
DOC_IDS = ("d0", "d1", "d10", "d2", "a", "bb", "B", "zz9", "0", "doc-7", "x", "doc-70000001")
# Near-equal doubles: 1.0, 1.0 + 1e-9 and 1.0 + 2e-9 are one float32; so are 0.3 and 0.1 + 0.2.
SCORES = (0.0, -0.0, 0.3, 0.1 + 0.2, 1.0, 1.0 + 1e-9, 1.0 + 2e-9, 1.0 - 1e-12, 2.0, -1.5, 3.25)
#: trec_eval's ``all`` value of these is the sum over queries, not the mean
SUMMED = {"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ"}
SUMMARY_ONLY = {"NumQ"}  # trec_eval prints num_q in the "all" line only


@st.composite
def pair(draw: st.DrawFn) -> Pair:
    """A small qrels/run pair: scores that tie, near-equal doubles, -0.0; grades -2..3; queries
    missing from the run and from the qrels."""
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


def batch(pairs: list[Pair]) -> Frames:
    """One qrels and one run frame for all ``pairs``: pair i's queries become ``p{i}-{q}``,
    plus a query in both (trec_eval stops when no query is in both)."""
    qrels_rows: QrelsRows = [("zz-both", "d0", 1)]
    run_rows: RunRows = [("zz-both", "d0", 1.0)]
    for i, (qrels, run) in enumerate(pairs):
        qrels_rows += [(f"p{i}-{q}", d, g) for q, d, g in qrels]
        run_rows += [(f"p{i}-{q}", d, s) for q, d, s in run]
    return qrels_frame(qrels_rows), run_frame(run_rows)


#: 20 pairs as one :func:`batch`: one trec_eval call checks them all
BATCHES = st.lists(pair(), min_size=20, max_size=20).map(batch)


def trec_eval_values(
    trec_eval: TrecEval10,
    qrels: pd.DataFrame,
    run: pd.DataFrame,
    folder: Path,
    measures: Iterable[str],
    *options: str,
) -> dict[tuple[str, str], float]:
    """:meth:`TrecEval10.values` of the frames, written to ``folder`` by
    :func:`write_trec_files`."""
    qrels_path, run_path = write_trec_files(qrels, run, folder)
    return trec_eval.values(qrels_path, run_path, measures, *options)


def assert_equal_to_trec_eval(
    oracle: dict[tuple[str, str], float],
    frame: pd.DataFrame,
    measures: list[str],
    names: dict[str, str] | None = None,
) -> None:
    """evalkit's ``frame`` (query_id, measure, value) has trec_eval's queries, and each value,
    per query and ``all`` (the mean, or the sum of :data:`SUMMED`), equals trec_eval's at 1e-9.

    ``oracle`` is :meth:`TrecEval10.values`; ``names`` maps each measure to trec_eval's printed
    name (by default :func:`evalkit.measures.trec_name`)."""
    names = names or {m: trec_name(m) for m in measures}
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


# --- ir_measures ------------------------------------------------------------------------------


def ir_measures_values(
    measures: list[str],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
) -> Values:
    """``{(query_id, measure as given): value}`` of ir_measures' default providers."""
    parsed = [ir_measures.parse_measure(m) for m in measures]
    names = {str(p): m for p, m in zip(parsed, measures, strict=True)}
    return {
        (metric.query_id, names[str(metric.measure)]): metric.value
        for metric in ir_measures.iter_calc(parsed, qrels, run)
    }


def pyndeval_values(measures: list[str], qrels: pd.DataFrame, run: pd.DataFrame) -> Values:
    """``{(query_id, measure as given): value}`` of ir_measures' pyndeval provider (ndeval.c;
    the qrels' ``iteration`` column is the subtopic), one measure per call: ir_measures 0.4.3
    hands the run to its first pyndeval invocation only, so measures of a second (rel, alpha,
    beta) group would read 0."""
    out = {}
    for measure in measures:
        parsed = ir_measures.parse_measure(measure)
        for metric in ir_measures.pyndeval.iter_calc([parsed], qrels, run):
            out[(metric.query_id, measure)] = float(metric.value)
    return out
