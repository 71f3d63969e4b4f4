"""The abstention signals added for issue 14's last round (``unseen_share``, ``rare_coverage``,
``top_overlap``, ``self_score_ratio``, ``score_dispersion``, ``same_language``) and the logistic
combination of ``benchmarks/abstention_signals.py``.

Expected values are worked out by hand from ``AbstentionSignals``'s docstring over the
hand-written chunks of ``test_rerank_abstention`` (real SQLite, real tokenizer): which chunks
contain which words. Scores that come from another component (BM25 of the lexical retriever,
the reranked scores of ``search``) are read from that component, not from the signal code.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest
from conftest import load_benchmark
from scipy.optimize import check_grad
from system_inputs import Query
from test_abstention_signals import _idf
from test_rerank_abstention import _reranker


def test_unseen_share_weighs_an_unknown_word_at_the_largest_idf() -> None:
    reranker = _reranker()
    try:
        # kayak is in no chunk (weight idf(0)); librari is in a4 only (idf(1)); is, there, a,
        # at, the are stop words.
        signals = reranker.abstention_signals("Is there a kayak at the library?", "en")
        assert signals.unseen_share == pytest.approx(_idf(0) / (_idf(0) + _idf(1)))
        # Every content word known: nothing unseen.
        assert reranker.abstention_signals("library books", "en").unseen_share == 0.0
    finally:
        reranker.close()


def test_rare_coverage_asks_the_best_candidate_for_the_rarest_known_terms() -> None:
    reranker = _reranker()
    try:
        # borrow (a5) and librari (a4) have df 1, book (a4, a5) df 2: the two rarest are borrow
        # and librari. The best candidate is a4 (the library concept's cosine), which holds
        # librari but not borrow.
        text = "borrow books library"
        assert reranker.search(Query("q", text), 10)[0].chunk_id == "a4"
        assert reranker.abstention_signals(text, "en").rare_coverage == 0.5
        # ferri and ticket (a1 only) are rarer than book (a4, a5): a1, the best candidate,
        # holds both of the two rarest, and the commoner word it lacks does not count.
        text = "ferry ticket book"
        assert reranker.search(Query("q", text), 10)[0].chunk_id == "a1"
        assert reranker.abstention_signals(text, "en").rare_coverage == 1.0
        # kayak is unseen and does not count; the only known term, librari, is in a4.
        signals = reranker.abstention_signals("Is there a kayak at the library?", "en")
        assert signals.rare_coverage == 1.0
    finally:
        reranker.close()


def test_top_overlap_of_the_lexical_and_the_vector_lists() -> None:
    with_table, without_table = _reranker(), _reranker({})
    try:
        # BM25 returns a5 (borrow, book), a4 (book), a1 (ferri); the vector component only the
        # chunks of the ferry concept, a1 and a3: one of the three lexical hits.
        assert with_table.abstention_signals("borrow books ferry", "en").top_overlap == (
            pytest.approx(1 / 3)
        )
        # BM25 returns a1 only (ferri, ticket), which the vector list holds too.
        assert with_table.abstention_signals("ferry ticket", "en").top_overlap == 1.0
        # Without a table the vector component returns nothing: undefined.
        assert without_table.abstention_signals("ferry ticket", "en").top_overlap == 0.5
    finally:
        with_table.close()
        without_table.close()


def test_self_score_ratio_divides_the_best_bm25_score_by_the_idf_sum() -> None:
    reranker = _reranker({})
    try:
        text = "ferry ticket"
        lexical = reranker.first_stage.components[0].search_text(text, 5)
        # ferri and ticket are both in a1 only: the self-score is 2 idf(1).
        expected = lexical[0].score / (2 * _idf(1))
        assert reranker.abstention_signals(text, "en").self_score_ratio == pytest.approx(expected)
        assert expected > 0
    finally:
        reranker.close()


def test_score_dispersion_is_the_spread_of_the_reranked_scores() -> None:
    reranker = _reranker()
    try:
        text = "Can I borrow books at the library?"
        scores = np.array([hit.score for hit in reranker.search(Query("q", text), 10)])
        assert len(scores) >= 2
        signals = reranker.abstention_signals(text, "en")
        assert signals.score_dispersion == pytest.approx(scores.std() / scores.mean())
        assert signals.score_dispersion > 0
    finally:
        reranker.close()


def test_same_language_compares_the_best_candidate_with_the_query() -> None:
    reranker = _reranker()
    try:
        # The best candidate for "ferry ticket" is a1, an English chunk.
        assert reranker.abstention_signals("ferry ticket", "en").same_language == 1.0
        assert reranker.abstention_signals("ferry ticket", "zh").same_language == 0.0
        assert reranker.abstention_signals("ferry ticket").same_language == 0.5
    finally:
        reranker.close()


def _set(bench: ModuleType, signals: np.ndarray, answerable: np.ndarray) -> object:
    n = len(answerable)
    return bench._Set(answerable, np.zeros(n, dtype=bool), signals, np.array(["en"] * n))


def test_logistic_combination_follows_the_informative_signal() -> None:
    bench = load_benchmark("abstention_signals.py")
    rng = np.random.default_rng(0)
    answerable = np.arange(200) % 3 != 0
    # Column 0 tells the classes apart up to noise; column 1 is noise.
    informative = answerable + rng.normal(0, 0.5, 200)
    signals = np.column_stack([informative, rng.normal(0, 1, 200)])
    model = bench._fit_logistic([_set(bench, signals, answerable)], [0, 1])
    log_odds = model(_set(bench, signals, answerable))
    # The fitted log-odds orders queries as the informative column does (same AUC) ...
    assert bench._auc(log_odds, answerable) == pytest.approx(
        bench._auc(informative, answerable), abs=0.02
    )
    # ... and grows with it.
    probe = np.array([[0.0, 0.0], [1.0, 0.0]])
    two = model(_set(bench, probe, np.array([True, False])))
    assert two[1] > two[0]


def test_logistic_combination_weighs_every_set_the_same() -> None:
    bench = load_benchmark("abstention_signals.py")
    # A large set where the signal points one way and a small one where it points the other:
    # weighed per query the large set would win; weighed per set they cancel.
    large_y = np.arange(400) % 2 == 0
    small_y = np.arange(40) % 2 == 0
    large = _set(bench, large_y[:, None].astype(float), large_y)
    small = _set(bench, (~small_y)[:, None].astype(float), small_y)
    model = bench._fit_logistic([large, small], [0])
    probe = _set(bench, np.array([[0.0], [1.0]]), np.array([True, False]))
    low, high = model(probe)
    assert high - low == pytest.approx(0.0, abs=1e-4)


def test_logistic_gradient_matches_the_loss() -> None:
    # The L-BFGS fit takes an analytic gradient; check it against finite differences through
    # the same objective (scipy.optimize.check_grad).
    bench = load_benchmark("abstention_signals.py")
    rng = np.random.default_rng(1)
    z = rng.normal(0, 1, (50, 3))
    y = (rng.random(50) < 0.5).astype(float)
    w = rng.random(50)
    loss = bench._loss(z, y, w)
    for b in (np.zeros(4), rng.normal(0, 1, 4)):
        assert check_grad(lambda v: loss(v)[0], lambda v: loss(v)[1], b) < 1e-5


def test_folds_are_balanced() -> None:
    bench = load_benchmark("abstention_signals.py")
    # (dev and dev-noalias, the same 85 queries in the same order, get the same folds by
    # construction: _folds takes a length, so no query is fitted on through its copy.)
    folds = bench._folds(85)
    counts = np.bincount(folds, minlength=bench.FOLDS)
    assert len(counts) == bench.FOLDS
    assert counts.min() == 85 // bench.FOLDS


def test_out_of_fold_log_odds_come_from_models_that_did_not_see_the_query() -> None:
    bench = load_benchmark("abstention_signals.py")
    # Fold 0's labels are told by signal A alone, the other folds' by signal B alone (each 0
    # elsewhere). A model fitted on every query scores fold 0 perfectly through A; the models
    # that score fold 0 out of fold never saw A vary (0 on their rows), so they give all of
    # fold 0 the same log-odds (AUC exactly 0.5).
    n = 100
    answerable = np.arange(n) % 2 == 0
    width = len(bench.FIELDS)
    folds = bench._folds(n)
    held = folds == 0
    signals = np.zeros((n, width))
    a, b = bench.FIELDS.index("top_score"), bench.FIELDS.index("margin")
    signals[held, a] = answerable[held]
    signals[~held, b] = answerable[~held]
    s = _set(bench, signals, answerable)
    name = "logistic: no question form"
    fitting = dict.fromkeys(bench.LOGISTIC[name], s)
    in_sample = bench._fit_model(name, list(fitting.values()))(s)
    assert bench._auc(in_sample[held], answerable[held]) == 1.0
    for values in bench._out_of_fold(name, fitting).values():
        assert bench._auc(values[held], answerable[held]) == 0.5
        assert bench._auc(values[~held], answerable[~held]) == 1.0
