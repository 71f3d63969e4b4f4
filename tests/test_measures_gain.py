"""ir_measures' families against ir_measures' own providers, per query.

The oracles are the providers ir_measures would pick for each measure (``ir_measures.<name>``):
gdeval (``ERR@k``, ``nDCG(dcg='exp-log2')@k``; its perl script ships inside ir_measures, and
a copy widened from ``%.5f`` to ``%.17g`` gives 1e-9 comparisons), judged (``Judged@k``),
compat (``Compat``), cwl_eval (``RBP(rel=...)``) and pytrec_eval (``P(judged_only=True)@k``,
``SetAP``, ``NumQ``, ``nDCG(gains=...)`` with integer gains >= 0, which ir_measures computes by
relabelling the qrels). Hypothesis draws small qrels/run batches with grades -2..4 and queries
missing on either side; scores tie and are near-equal doubles for gdeval (which ranks as
trec_eval 10.0 does), and are distinct where a provider breaks ties its own way (judged,
compat, cwl_eval sort ties by doc ID ascending).
"""

from __future__ import annotations

import importlib.resources
import shutil
import subprocess
import warnings
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from oracles import Pair, frames, score_values, write_trec_files

from evalkit.errors import InputError
from evalkit.measures import parse_measure, score

DOC_IDS = ("d0", "d1", "d10", "d2", "a", "bb", "B", "zz9", "0", "doc-7", "x", "y")
# 1.0, 1.0 + 1e-9 and 1.0 + 2e-9 differ as doubles (gdeval and trec_eval 10.0 compare doubles)
TIED_SCORES = (0.0, 0.3, 0.1 + 0.2, 1.0, 1.0 + 1e-9, 1.0 + 2e-9, 2.0, -1.5, 3.25)


@st.composite
def batch(draw: st.DrawFn, *, ties: bool, max_grade: int = 4, trec: bool = False) -> Pair:
    """Qrels and run rows of up to 6 numeric queries (gdeval reads numeric topics only).

    ``trec``: every query has a grade >= 0 (trec_eval, inside pytrec_eval, reads past an array
    for a query whose grades are all negative)."""
    # query 9 is in both, with a relevant doc: every oracle has something to say
    qrels: list[tuple[str, str, int]] = [("9", "d0", 2), ("9", "d1", 1)]
    run: list[tuple[str, str, float]] = [("9", "d1", 2.0), ("9", "x", 1.5), ("9", "d0", 1.0)]
    queries = [str(q) for q in range(1, 7)]
    for q in draw(st.lists(st.sampled_from(queries), min_size=1, max_size=6, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=8, unique=True))
        grades = draw(st.lists(st.integers(-2, max_grade), min_size=len(docs), max_size=len(docs)))
        if trec:
            grades[0] = max(grades[0], 0)
        qrels += [(q, d, g) for d, g in zip(docs, grades, strict=True)]
    for q in draw(st.lists(st.sampled_from(queries), min_size=1, max_size=6, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=12, unique=True))
        if ties:
            scores = [draw(st.sampled_from(TIED_SCORES)) for _ in docs]
        else:  # distinct scores: every provider ranks them alike
            scores = [float(s) for s in draw(st.permutations(range(1, len(docs) + 1)))]
        run += [(q, d, s) for d, s in zip(docs, scores, strict=True)]
    return qrels, run


def _provider(name: str, measures: list[object], qrels: pd.DataFrame, run: pd.DataFrame) -> dict:
    """The provider's per-query values of the run's queries (ir_measures gives the qrels
    queries the run lacks 0 for every measure, NumQ included, where evalkit counts them)."""
    provider = getattr(ir_measures, name)
    ranked = set(run["query_id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            (m.query_id, _name(m.measure)): float(m.value)
            for m in provider.iter_calc(measures, qrels, run)
            if m.query_id in ranked
        }


def _name(measure: object) -> str:
    """evalkit's canonical string of an ir_measures measure (parameters sorted by name)."""
    return str(parse_measure(str(measure)))


def _agree(oracle: dict, ours: dict, *, tol: float = 1e-9) -> None:
    assert oracle, "the oracle gave no value"
    for key, value in oracle.items():
        assert ours[key] == pytest.approx(value, abs=tol), key


# --- gdeval: ERR@k and nDCG@k -------------------------------------------------------------


@pytest.fixture(scope="module")
def gdeval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ir_measures' bundled gdeval.pl with its output widened from %.5f to %.17g."""
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed: gdeval cannot run")
    source = importlib.resources.files("ir_measures") / "bin" / "gdeval.pl"
    text = source.read_text()
    assert '"$runid,$topicCurrent,%.5f,%.5f\\n"' in text
    path = tmp_path_factory.mktemp("gdeval") / "gdeval.pl"
    path.write_text(text.replace("%.5f,%.5f", "%.17g,%.17g"))
    return path


def _run_gdeval(script: Path, qrels: pd.DataFrame, run: pd.DataFrame, k: int, folder: Path):
    qrels_path, run_path = write_trec_files(qrels, run, folder)
    done = subprocess.run(
        ["perl", str(script), str(qrels_path), str(run_path), str(k)],
        capture_output=True,
        text=True,
        check=True,
    )
    out = {}
    for line in done.stdout.splitlines()[1:]:
        _, query, ndcg, err = line.split(",")
        out[(query, f"nDCG(dcg='exp-log2')@{k}")] = float(ndcg)
        out[(query, f"ERR@{k}")] = float(err)
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch(ties=True), k=st.sampled_from([1, 2, 3, 5, 20]))
def test_err_and_ndcg_equal_gdeval(
    gdeval: Path, tmp_path_factory: pytest.TempPathFactory, pair: Pair, k: int
) -> None:
    qrels, run = frames(pair)
    oracle = _run_gdeval(gdeval, qrels, run, k, tmp_path_factory.mktemp("gd"))
    ours = score_values(qrels, run, [f"ERR@{k}", f"nDCG(dcg='exp-log2')@{k}"])
    # gdeval prints the run's queries that have a doc graded > 0
    expected = {
        q for q in set(run["query_id"]) if (qrels[qrels["query_id"] == q]["relevance"] > 0).any()
    }
    assert "9" in expected
    assert {q for q, _ in oracle} == expected
    _agree(oracle, ours)


def test_ir_measures_gdeval_provider_agrees() -> None:
    # the provider itself (5 decimals): ERR@k and nDCG@k as ir_measures computes them
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "1", "2", "2", "3"],
            "doc_id": ["a", "b", "c", "d", "a", "b", "a"],
            "relevance": [3, 1, 0, 4, 1, -1, 2],
        }
    )
    run = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "1", "2", "2"],
            "doc_id": ["a", "b", "z", "d", "a", "y"],
            "score": [5.0, 4.0, 3.0, 3.0, 3.0, 2.0],
        }
    )
    measures = [ir_measures.ERR @ 3, ir_measures.nDCG(dcg="exp-log2") @ 3]
    oracle = _provider("gdeval", measures, qrels, run)
    _agree(oracle, score_values(qrels, run, [str(m) for m in measures]), tol=6e-6)


def test_err_rejects_grades_gdeval_rejects() -> None:
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [5]})
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="at most 4"):
        score(qrels, run, ["ERR@10"])


# --- judged, compat, cwl_eval, pytrec_eval ------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch(ties=False))
def test_judged_and_compat_equal_their_providers(pair: Pair) -> None:
    qrels, run = frames(pair)
    judged = [ir_measures.Judged @ k for k in (1, 2, 5, 20)]
    compat = [
        ir_measures.Compat,
        ir_measures.Compat(p=0.5),
        ir_measures.Compat(normalize=False),
        ir_measures.Compat(p=0.8, normalize=False),
    ]
    ours = score_values(qrels, run, [_name(m) for m in judged + compat])
    _agree(_provider("judged", judged, qrels, run), ours)
    _agree(_provider("compat", compat, qrels, run), ours)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch(ties=False))
def test_binary_rbp_equals_cwl_eval(pair: Pair) -> None:
    qrels, run = frames(pair)
    measures = [ir_measures.RBP(rel=1), ir_measures.RBP(rel=2, p=0.5), ir_measures.RBP(rel=3)]
    oracle = _provider("cwl_eval", measures, qrels, run)
    ours = score_values(qrels, run, [_name(m) for m in measures])
    # cwl_eval scores only the run's queries; evalkit gives the others 0
    _agree(oracle, ours)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch(ties=True, max_grade=3, trec=True))
def test_pytrec_eval_provider_families(pair: Pair) -> None:
    qrels, run = frames(pair)
    measures = [
        *(ir_measures.P(judged_only=True) @ k for k in (1, 2, 5)),
        ir_measures.P(judged_only=True, rel=2) @ 3,
        ir_measures.SetAP,
        ir_measures.SetAP(rel=2),
        ir_measures.NumQ,
        ir_measures.nDCG(gains={0: 0, 1: 3, 2: 9, 3: 1}),
        ir_measures.nDCG(gains={0: 1, 1: 1, 2: 0, 3: 5}),
    ]
    oracle = _provider("pytrec_eval", measures, qrels, run)
    # pytrec_eval reads scores as float32 (trec_eval 9.0.8): trec_version="9"
    _agree(oracle, score_values(qrels, run, [_name(m) for m in measures], trec_version="9"))


def test_rbp_by_hand() -> None:
    # RBP (Moffat & Zobel 2008, eq. 5): (1 - p) * sum of gain * p ** (rank - 1); the ranking
    # a(3), z (unjudged), b(1): graded (1 - 0.5) * (3 + 0.25 * 1) = 1.625; rel=2: 0.5 * 1
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [3, 1]})
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "z", "b"], "score": [3.0, 2, 1]})
    values = score_values(qrels, run, ["RBP(p=0.5)", "RBP(p=0.5,rel=2)", "RBP(p=0.5)@2"])
    assert values[("1", "RBP(p=0.5)")] == pytest.approx(1.625)
    assert values[("1", "RBP(p=0.5,rel=2)")] == pytest.approx(0.5)
    assert values[("1", "RBP(p=0.5)@2")] == pytest.approx(1.5)
