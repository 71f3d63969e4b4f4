"""Probe scoring: the set scores of evalkit.probes.scoring, and the RR and nDCG a ranked answer
gets from the measures engine (evalkit.measures.score_list, as evalkit.probes.runner calls it):
hand-computed values and oracles."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import pytest
import pytrec_eval
from hypothesis import example, given, settings, strategies as st

from evalkit.measures import score_list
from evalkit.probes.runner import RANKING_MEASURES
from evalkit.probes.scoring import score_symbols


def reciprocal_rank(ranking: Sequence[str], expected: Collection[str]) -> float:
    """A probe's RR: the engine's, each expected name graded 1 (as the runner scores it)."""
    assert RANKING_MEASURES["rr"] == "RR"
    return score_list(ranking, dict.fromkeys(expected, 1), ["RR"])["RR"]


def ndcg(ranking: Sequence[str], expected: Collection[str]) -> float:
    """A probe's nDCG: the engine's, each expected name graded 1 (as the runner scores it)."""
    assert RANKING_MEASURES["ndcg"] == "nDCG"
    return score_list(ranking, dict.fromkeys(expected, 1), ["nDCG"])["nDCG"]


# -- set scores: every documented edge case -------------------------------------------------


def test_nothing_returned_scores_zero_everywhere() -> None:
    score = score_symbols(["a", "b"], [])
    assert (score.recall, score.precision, score.f1) == (0.0, 0.0, 0.0)
    assert score.missing == ("a", "b")
    assert score.extra == ()


def test_perfect_match_scores_one_everywhere() -> None:
    score = score_symbols(["b", "a"], ["a", "b"])
    assert (score.recall, score.precision, score.f1) == (1.0, 1.0, 1.0)
    assert score.missing == ()
    assert score.extra == ()


def test_partial_overlap_hand_computed() -> None:
    # expected {a,b,c,d}, returned {a,b,x}: hits 2 -> recall 2/4, precision 2/3,
    # F1 = 2 * (2/3) * (1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7
    score = score_symbols(["a", "b", "c", "d"], ["x", "b", "a"])
    assert score.recall == 0.5
    assert score.precision == pytest.approx(2 / 3)
    assert score.f1 == pytest.approx(4 / 7)
    assert score.missing == ("c", "d")
    assert score.extra == ("x",)


def test_no_overlap_scores_zero_and_lists_both_sides() -> None:
    score = score_symbols(["a"], ["z", "y"])
    assert (score.recall, score.precision, score.f1) == (0.0, 0.0, 0.0)
    assert score.missing == ("a",)
    assert score.extra == ("y", "z")  # sorted


def test_duplicates_are_counted_once_on_both_sides() -> None:
    # returned [a, a, x] is the set {a, x}: precision 1/2 (not 2/3); expected [a, a] is {a}
    score = score_symbols(["a", "a"], ["a", "a", "x"])
    assert score.recall == 1.0
    assert score.precision == 0.5
    assert score.extra == ("x",)


def test_empty_expected_is_defined_as_zero() -> None:
    score = score_symbols([], ["a"])
    assert (score.recall, score.precision, score.f1) == (0.0, 0.0, 0.0)
    assert score.extra == ("a",)
    both_empty = score_symbols([], [])
    assert (both_empty.recall, both_empty.precision, both_empty.f1) == (0.0, 0.0, 0.0)


def test_superset_returned_has_full_recall_and_lower_precision() -> None:
    score = score_symbols(["a"], ["a", "b", "c", "d"])
    assert score.recall == 1.0
    assert score.precision == 0.25
    assert score.f1 == pytest.approx(2 * 0.25 / 1.25)  # = 0.4


def test_inputs_are_not_modified() -> None:
    expected, returned = ["b", "a"], ["a", "c"]
    score_symbols(expected, returned)
    reciprocal_rank(returned, expected)
    ndcg(returned, expected)
    assert expected == ["b", "a"]
    assert returned == ["a", "c"]


# -- ranking: RR and nDCG (the measures engine's), hand-computed -------------------------------


def test_rr_hand_computed() -> None:
    assert reciprocal_rank(["a", "b"], {"a"}) == 1.0
    assert reciprocal_rank(["x", "y", "b"], {"b", "a"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "y"], {"a"}) == 0.0
    assert reciprocal_rank([], {"a"}) == 0.0


def test_rr_ignores_repeats_when_counting_ranks() -> None:
    # [x, x, a] ranks a second once the repeated x is dropped
    assert reciprocal_rank(["x", "x", "a"], {"a"}) == 0.5


def test_ndcg_hand_computed() -> None:
    # ranking [x, a, y, b], expected {a, b, c}:
    # DCG  = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
    # IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
    # nDCG = 1.061606 / 2.130930 = 0.498190
    value = ndcg(["x", "a", "y", "b"], {"a", "b", "c"})
    assert value == pytest.approx(0.498190, abs=1e-6)


def test_ndcg_edge_cases() -> None:
    assert ndcg(["a", "b"], {"a", "b"}) == 1.0
    assert ndcg(["b", "a"], {"a", "b"}) == 1.0  # binary gain: any order of relevant is ideal
    assert ndcg([], {"a"}) == 0.0
    assert ndcg(["x"], {"a"}) == 0.0
    assert ndcg(["a"], set()) == 0.0


def test_ndcg_repeated_relevant_name_earns_gain_once() -> None:
    # [a, a] is [a]: DCG 1, IDCG 1 + 1/log2(3) for {a, b}; a repeat must not reach 1.0
    assert ndcg(["a", "a"], {"a", "b"}) == pytest.approx(1 / (1 + 1 / math.log2(3)))


# -- trec_eval as an oracle (pytrec-eval-terrier) -----------------------------------------


def _trec_eval(ranking: list[str], expected: set[str]) -> dict[str, float]:
    qrels = {"q": dict.fromkeys(expected, 1)}
    # decreasing scores keep the given order under trec_eval's sort (score desc, docid desc)
    run = {"q": {name: float(len(ranking) - i) for i, name in enumerate(ranking)}}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg", "set_P", "set_recall"})
    result: dict[str, float] = evaluator.evaluate(run)["q"]
    return result


names = st.sampled_from([f"s{i}" for i in range(8)])


@settings(max_examples=60, deadline=None)
@given(
    ranking=st.lists(names, min_size=1, max_size=8, unique=True),
    expected=st.sets(names, min_size=1, max_size=8),
)
def test_rr_ndcg_and_set_scores_agree_with_trec_eval(
    ranking: list[str], expected: set[str]
) -> None:
    oracle = _trec_eval(ranking, expected)  # trec_eval: recip_rank, ndcg, set_P, set_recall
    assert reciprocal_rank(ranking, expected) == pytest.approx(oracle["recip_rank"], abs=1e-9)
    assert ndcg(ranking, expected) == pytest.approx(oracle["ndcg"], abs=1e-9)
    score = score_symbols(expected, ranking)
    assert score.precision == pytest.approx(oracle["set_P"], abs=1e-9)
    assert score.recall == pytest.approx(oracle["set_recall"], abs=1e-9)


@settings(max_examples=60, deadline=None)
@example(  # P = R = 0.8: F1 as 2PR / (P + R) came out 0.8000000000000002
    expected=["s0", "s1", "s2", "s3", "s4"], returned=["s0", "s1", "s2", "s3", "s5"]
)
@given(expected=st.lists(names, max_size=8), returned=st.lists(names, max_size=8))
def test_set_scores_are_in_range_and_order_invariant(
    expected: list[str], returned: list[str]
) -> None:
    score = score_symbols(expected, returned)
    for value in (score.recall, score.precision, score.f1):
        assert 0.0 <= value <= 1.0
    assert score == score_symbols(reversed(expected), reversed(returned))
    assert set(score.missing) | (set(expected) & set(returned)) == set(expected)
    assert set(score.extra).isdisjoint(expected)
    assert min(score.recall, score.precision) <= score.f1 <= max(score.recall, score.precision)
