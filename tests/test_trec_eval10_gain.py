"""trec_eval 10.0's gain-map measures against the 10.0 binary (built by ``trec_eval_oracle``).

``ndcg`` and ``rbp`` take a gain map (``-m ndcg.1=3,2=9``, ``-m rbp.p=0.8,1=-1``) and ``rbp``,
``rbp_resid`` a persistence ``p``; one trec_eval call takes one parameter set per measure, so
hypothesis draws the parameters with each batch (the batches of ``oracles.batch``: near-equal
doubles, ties, grades -2..3, queries missing on either side). Gains include negative values,
0, and values less than 1 apart, which trec_eval's gain sort treats as equal. Per-query and
``all`` values are compared at 1e-9, with and without ``-c``, ``-M`` and ``-J``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from oracles import BATCHES, Frames, assert_equal_to_trec_eval, quiet_score, trec_eval_values
from trec_eval_oracle import TrecEval10

from evalkit.measures import parse_measure, trec_name

GAINS = (-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.5, 9.0)
PERSISTENCE = (0.5, 0.8, 0.9, 0.95)


@st.composite
def gain_map(draw: st.DrawFn) -> dict[int, float]:
    levels = draw(st.lists(st.integers(0, 4), max_size=4, unique=True))
    return {level: draw(st.sampled_from(GAINS)) for level in sorted(levels)}


def _measures(gains: dict[int, float], p: float) -> list[str]:
    written = ",".join(f"{k}={v!r}" for k, v in gains.items())
    measures = ["rbp_resid" if p == 0.9 else f"rbp_resid(p={p})"]
    if gains:
        measures.append(f"nDCG(gains='{written}')")
        measures.append(f"rbp(p={p},gains='{written}')")
    else:
        measures.append(f"rbp(p={p})")
    return [str(parse_measure(m)) for m in measures]


def _trec_args(measures: list[str]) -> list[str]:
    """``-m`` arguments: trec_eval's printed name with the parameters after a dot."""
    args = []
    for m in measures:
        name = trec_name(m)
        for base in ("rbp_resid", "rbp", "ndcg"):
            if name == base:
                break
            if name.startswith(base + "_"):
                name = base + "." + name[len(base) + 1 :]
                break
        args.append(name)
    return args


OPTIONS = [  # (score() options, trec_eval flags)
    ({}, ["-c"]),
    ({"complete": False}, []),
    ({"max_docs": 3}, ["-c", "-M3"]),
    ({"judged_only": True}, ["-c", "-J"]),
]


@pytest.mark.parametrize("case", OPTIONS, ids=["c", "no-c", "M3", "J"])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batch=BATCHES,
    params=st.tuples(gain_map(), st.sampled_from(PERSISTENCE)),
)
def test_gain_measures_equal_trec_eval_10(
    trec_eval10: TrecEval10,
    tmp_path_factory: pytest.TempPathFactory,
    batch: Frames,
    params: tuple[dict[int, float], float],
    case: tuple[dict[str, object], list[str]],
) -> None:
    options, flags = case
    qrels, run = batch
    oracle_qrels = qrels if "-c" in flags else qrels[qrels["query_id"].isin(set(run["query_id"]))]
    folder = tmp_path_factory.mktemp("gain")
    measures = _measures(*params)
    oracle = trec_eval_values(trec_eval10, oracle_qrels, run, folder, _trec_args(measures), *flags)
    assert_equal_to_trec_eval(oracle, quiet_score(qrels, run, measures, **options), measures)


def test_gain_sort_quirk_is_reproduced(trec_eval10: TrecEval10, tmp_path: Path) -> None:
    # gains 0.5 (grade 3) and 0 (grade 0) are "equal" to trec_eval's (int)(a - b) comparison;
    # its sort leaves 0 above 0.5, so the ideal ranking stops before the grade-3 doc
    qrels = pd.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c", "d"], "relevance": [3, 1, 0, 2]}
    )
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "z", "d"], "score": [4.0, 3, 2, 1]})
    measure = "nDCG(gains='1=3,2=9,3=0.5')"
    oracle = trec_eval_values(trec_eval10, qrels, run, tmp_path, ["ndcg.1=3,2=9,3=0.5"])
    got = quiet_score(qrels, run, [measure])["value"].iloc[0]
    assert got == pytest.approx(oracle[("ndcg_1=3,2=9,3=0.5", "q")], abs=1e-12)
    # the ideal DCG without the 0.5 doc: 9 + 3 / log2(3); DCG 0.5 + 3 / log2(3) + 9 / log2(5)
    dcg = 0.5 + 3 / math.log2(3) + 9 / math.log2(5)
    assert got == pytest.approx(dcg / (9 + 3 / math.log2(3)), abs=1e-12)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=BATCHES)
def test_p_judged_only_equals_trec_eval_10_with_j(
    trec_eval10: TrecEval10,
    tmp_path_factory: pytest.TempPathFactory,
    batch: Frames,
) -> None:
    # ir_measures' P(judged_only=True)@k is trec_eval's P_k under -J, without -J for the rest
    qrels, run = batch
    folder = tmp_path_factory.mktemp("judged")
    oracle = trec_eval_values(trec_eval10, qrels, run, folder, ["P.1,2,3,5"], "-c", "-J")
    measures = [f"P(judged_only=True)@{k}" for k in (1, 2, 3, 5)]
    names = {m: f"P_{m.rsplit('@', 1)[1]}" for m in measures}
    assert_equal_to_trec_eval(oracle, quiet_score(qrels, run, measures), measures, names)
