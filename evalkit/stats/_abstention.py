"""Abstention as a curve: "answer nothing below a confidence threshold", over every threshold.

A query's **confidence** is the one its system declares (a Retriever's optional
``confidence(query, hits)``, a JSONL run's ``confidence`` field, an ``http:`` response's
``confidence`` pointer: :meth:`evalkit.run.Evaluation.confidences`), else its top result's
score (rank 1); a query with no result has confidence ``-inf`` and is never answered. At a
threshold ``t`` a query is *answered* when its confidence is ``>= t`` and returns nothing
otherwise. The thresholds are every distinct finite
confidence, ascending, then ``+inf`` (nothing answered): the sweep is exact, not a grid.
Confidences are compared as given (exact float equality: equal scores are one threshold).

With ``A`` the answerable and ``N`` the no-answer queries, ``m_q`` a query's primary measure
(answered as the system answered it) and ``ans_t(q) = [c_q >= t]``:

- ``NoAnswerFP(t) = #{q in N: ans_t(q)} / |N|``; ``NoResult(t) = #{q in A: not ans_t(q)} / |A|``;
- ``coverage(t) = #{q: ans_t(q)} / (|A| + |N|)``;
- ``selective_risk(t)``: the mean loss over answered queries, the loss being 1 for a no-answer
  query and ``1 - m_q`` for an answerable one (NaN when nothing is answered);
- ``value(t) = sum_{q in A} m_q ans_t(q) / |A|``: the primary measure over answerable queries
  with abstained queries scored 0.

Summary statistics (:data:`ABSTENTION_STATISTICS`):

- ``auc``: the ROC AUC of confidence separating answerable (positive) from no-answer queries,
  ``P(c_a > c_n) + 0.5 P(c_a = c_n)`` over all pairs (ties, ``-inf`` included, count half):
  the area under "no-answer queries left empty" (``1 - NoAnswerFP``) against "answerable
  queries answered" (``1 - NoResult``);
- ``aurc``: the area under the risk-coverage curve, the step function that takes
  ``selective_risk(t_j)`` on the coverages ``(coverage(t_{j+1}), coverage(t_j)]``; with
  distinct confidences it is the mean selective risk at coverages ``1/n, 2/n, ..., 1`` (the
  usual AURC); lower is better;
- the **operating point** at a target ``x``: the lowest ``NoResult(t)`` with
  ``NoAnswerFP(t) <= x``, at the lowest such threshold (``NoResult`` rises and ``NoAnswerFP``
  falls with ``t``, and ``t = +inf`` always qualifies): ``op_no_result``,
  ``op_no_answer_fp``, ``op_threshold``, ``op_coverage``.

Intervals: percentile bootstrap over queries, resampled within each class (answerable,
no-answer: the class sizes stay fixed, as ``pROC``'s stratified bootstrap), ``n_resamples``
resamples as count vectors drawn from a generator derived from ``seed`` and the (system,
language) key (:func:`evalkit.stats._resampling.group_seed`), so the same inputs and seed give
identical frames; the threshold's interval takes observed thresholds (``inverted_cdf``; it may
be ``inf``), the others interpolate linearly. Every statistic of a resample is computed at
once, in numpy (no Python loop per threshold or per resample). Without no-answer queries
(most TREC collections) every statistic but ``aurc`` is NaN and ``note`` is
:data:`NO_NO_ANSWER`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit._arrays import FloatArray
from evalkit.errors import InputError
from evalkit.measures.abstention import MAX_FP, abstention_measure
from evalkit.stats._resampling import BLOCK_VALUES, group_seed, random_generator

if TYPE_CHECKING:
    from collections.abc import Iterator

    from evalkit.run import Evaluation

__all__ = [
    "ABSTENTION_STATISTICS",
    "ALL_LANGUAGES",
    "CURVE_COLUMNS",
    "DEFAULT_MAX_NO_ANSWER_FP",
    "NO_NO_ANSWER",
    "SUMMARY_COLUMNS_ABSTENTION",
    "Abstention",
    "AbstentionStatistics",
    "AucChange",
    "abstention",
    "abstention_statistics",
    "auc_change",
]


ALL_LANGUAGES: Final = "all"
"""The ``language`` of a system's rows over all its queries."""

DEFAULT_MAX_NO_ANSWER_FP: Final = MAX_FP[1]
"""The default target of the operating point (0.1: at most one no-answer query in ten
answered), the ``max_fp`` default of the ``Op*`` measures (:mod:`evalkit.measures.abstention`)."""

NO_NO_ANSWER: Final = "n/a: no no-answer queries"
"""The ``note`` of a summary row whose queries include no no-answer query."""

NO_ANSWERABLE: Final = "n/a: no answerable queries"

ABSTENTION_STATISTICS: Final[tuple[str, ...]] = (
    "auc",
    "aurc",
    "op_no_result",
    "op_no_answer_fp",
    "op_threshold",
    "op_coverage",
)
"""The summary statistics, in the order of :func:`abstention`'s summary frame."""

CURVE_COLUMNS: Final[list[str]] = [
    "system",
    "language",
    "threshold",
    "coverage",
    "NoAnswerFP",
    "NoResult",
    "selective_risk",
    "measure",
    "value",
]
"""Columns of :attr:`Abstention.curve` (module docstring)."""

SUMMARY_COLUMNS_ABSTENTION: Final[list[str]] = [
    "system",
    "language",
    "statistic",
    "measure",
    "value",
    "ci_low",
    "ci_high",
    "target",
    "n_answerable",
    "n_no_answer",
    "note",
    "source",
]
"""Columns of :attr:`Abstention.summary` (module docstring)."""

_FP_SLACK = 1e-12  # NoAnswerFP <= x with room for the rounding of a ratio


@dataclass(frozen=True)
class AbstentionStatistics:
    """The sweep of one group of queries, for ``B`` weightings of them (``B = 1``: observed).

    ``thresholds`` ``(T,)`` ascending, the last ``+inf``; ``no_answer_fp``, ``no_result``,
    ``coverage``, ``selective_risk``, ``value`` ``(B, T)``; ``auc``, ``aurc``,
    ``op_no_result``, ``op_no_answer_fp``, ``op_threshold``, ``op_coverage`` ``(B,)``.
    """

    thresholds: FloatArray
    no_answer_fp: FloatArray
    no_result: FloatArray
    coverage: FloatArray
    selective_risk: FloatArray
    value: FloatArray
    auc: FloatArray
    aurc: FloatArray
    op_no_result: FloatArray
    op_no_answer_fp: FloatArray
    op_threshold: FloatArray
    op_coverage: FloatArray

    def statistic(self, name: str) -> FloatArray:
        """One of :data:`ABSTENTION_STATISTICS` by name, ``(B,)``."""
        value: FloatArray = getattr(self, name)
        return value


def abstention_statistics(
    confidence: npt.ArrayLike,
    answerable: npt.ArrayLike,
    value: npt.ArrayLike | None = None,
    *,
    max_no_answer_fp: float = DEFAULT_MAX_NO_ANSWER_FP,
    weights: npt.ArrayLike | None = None,
) -> AbstentionStatistics:
    """The exact sweep of ``n`` queries (module docstring).

    ``confidence`` ``(n,)`` float (``-inf``: no result), ``answerable`` ``(n,)`` bool,
    ``value`` ``(n,)`` the primary measure of answerable queries (ignored for no-answer ones;
    default 0), ``weights`` ``(B, n)`` how often each query counts (a bootstrap resample's
    counts; default one row of ones).
    """
    conf = np.asarray(confidence, dtype=np.float64)
    positive = np.asarray(answerable, dtype=bool)
    n = conf.shape[0]
    if positive.shape != (n,) or np.isnan(conf).any() or np.isposinf(conf).any():
        raise InputError(
            "abstention: confidence must be n finite scores (or -inf for no result) and "
            "answerable n flags"
        )
    measure = np.zeros(n) if value is None else np.nan_to_num(np.asarray(value, dtype=float))
    w = np.ones((1, n)) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    return _sweep(conf, positive, measure, w, max_no_answer_fp=max_no_answer_fp)


def _sweep(
    conf: FloatArray,
    positive: npt.NDArray[np.bool_],
    measure: FloatArray,
    w: FloatArray,
    *,
    max_no_answer_fp: float,
    value_curve: bool = True,
) -> AbstentionStatistics:
    """:func:`abstention_statistics` of checked arrays (``measure`` without NaN, ``w``
    ``(B, n)``); ``value_curve=False`` leaves the ``value`` curve out (NaN), which no summary
    statistic reads (the resamples' sweeps)."""
    n = conf.shape[0]
    levels, level_of = np.unique(conf, return_inverse=True)
    thresholds = np.concatenate([levels[np.isfinite(levels)], [np.inf]])
    starts = np.searchsorted(levels, thresholds)  # answered at threshold j: level >= starts[j]
    order = np.argsort(level_of, kind="stable")
    first = np.searchsorted(level_of[order], np.arange(levels.shape[0]))
    loss = np.where(positive, 1.0 - measure, 1.0)
    ordered = w[:, order]  # gathered once for the per-level sums (the same products)
    rows = w.shape[0]

    def per_level(column: FloatArray) -> FloatArray:
        if n == 0:
            return np.zeros((rows, 0))
        summed: FloatArray = np.add.reduceat(ordered * column[order], first, axis=1)
        return summed

    def suffix(sums: FloatArray) -> FloatArray:
        # the sums from each level up (a cumulative sum of the reversed levels, written
        # reversed in place), then 0 for +inf; read at the thresholds' levels (a gather, whose
        # column-major layout the later sums over thresholds add in)
        out = np.zeros((rows, sums.shape[1] + 1))
        np.cumsum(sums[:, ::-1], axis=1, out=out[:, -2::-1])  # no levels: an empty view
        picked: FloatArray = out[:, starts]
        return picked

    pos, neg = per_level(positive.astype(float)), per_level((~positive).astype(float))
    total_pos, total_neg = pos.sum(axis=1, keepdims=True), neg.sum(axis=1, keepdims=True)
    answered_pos, answered_neg = suffix(pos), suffix(neg)
    with np.errstate(invalid="ignore", divide="ignore"):
        no_answer_fp = answered_neg / total_neg
        no_result = 1.0 - answered_pos / total_pos
        coverage = (answered_pos + answered_neg) / (total_pos + total_neg)
        risk = suffix(per_level(loss)) / (answered_pos + answered_neg)
        mean_value = (
            suffix(per_level(np.where(positive, measure, 0.0))) / total_pos
            if value_curve
            else np.broadcast_to(np.nan, no_result.shape)
        )
    auc = _level_auc(pos, neg)
    steps = coverage[:, :-1] - coverage[:, 1:]
    aurc = np.where(steps > 0, steps * np.nan_to_num(risk[:, :-1]), 0.0).sum(axis=1)
    aurc = np.where(coverage[:, 0] > 0, aurc, np.nan)
    every_row = np.arange(rows)
    chosen = np.argmax(no_answer_fp <= max_no_answer_fp + _FP_SLACK, axis=1)
    has_neg = total_neg[:, 0] > 0
    op = {
        name: np.where(has_neg, curve[every_row, chosen], np.nan)
        for name, curve in (
            ("no_result", no_result),
            ("no_answer_fp", no_answer_fp),
            ("threshold", np.broadcast_to(thresholds, no_result.shape)),
            ("coverage", coverage),
        )
    }
    return AbstentionStatistics(
        thresholds=thresholds,
        no_answer_fp=no_answer_fp,
        no_result=no_result,
        coverage=coverage,
        selective_risk=risk,
        value=mean_value,
        auc=auc,
        aurc=aurc,
        op_no_result=op["no_result"],
        op_no_answer_fp=op["no_answer_fp"],
        op_threshold=op["threshold"],
        op_coverage=op["coverage"],
    )


def weighted_auc(
    confidence: FloatArray, positive: npt.NDArray[np.bool_], weights: FloatArray
) -> FloatArray:
    """``(B,)``: the ``auc`` of :func:`abstention_statistics` for each row of ``weights``
    ``(B, n)``, computed alone (what :func:`auc_change` needs for each resample, without the
    rest of the sweep).

    Each answerable query ``a`` counts ``w_a (W_<(a) + W_<=(a)) / 2``, the no-answer weight
    strictly below and up to its confidence: a cumulative sum over the no-answer queries in
    confidence order, read at two ``searchsorted`` positions, so each resample costs a few
    passes over its ``n`` weights (no per-level grouping of the whole ``(B, n)`` matrix). With
    integer weights (bootstrap counts) every sum is an exact integer or half-integer, so the
    AUC is the sweep's bit for bit; other weights agree up to float rounding."""
    conf = np.asarray(confidence, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    negatives = np.flatnonzero(~pos)
    negative_conf = conf[negatives]
    order = np.argsort(negative_conf, kind="stable")
    ascending = negative_conf[order]
    positive_conf = conf[pos]
    below = np.searchsorted(ascending, positive_conf, side="left")
    upto = np.searchsorted(ascending, positive_conf, side="right")
    cumulative = np.zeros((w.shape[0], negatives.size + 1), dtype=np.float64)
    np.cumsum(w[:, negatives[order]], axis=1, out=cumulative[:, 1:])
    positive_weights = w[:, pos]
    pairs = (positive_weights * (cumulative[:, below] + cumulative[:, upto])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc: FloatArray = (0.5 * pairs) / (positive_weights.sum(axis=1) * cumulative[:, -1])
    return auc


def _level_auc(pos: FloatArray, neg: FloatArray) -> FloatArray:
    """``(B,)``: the ROC AUC from the weight of each class at each confidence level, ``(B, L)``
    with levels ascending (a no-answer query at the same level counts half; NaN without both
    classes)."""
    below = np.cumsum(neg, axis=1) - neg
    with np.errstate(invalid="ignore", divide="ignore"):
        auc: FloatArray = (pos * (below + 0.5 * neg)).sum(axis=1) / (
            pos.sum(axis=1) * neg.sum(axis=1)
        )
    return auc


def stratified_counts(
    answerable: npt.ArrayLike, rng: np.random.Generator, n_resamples: int
) -> FloatArray:
    """``(n_resamples, n)`` bootstrap counts, each class resampled to its own size."""
    positive = np.asarray(answerable, dtype=bool)
    counts = np.zeros((n_resamples, positive.shape[0]))
    for members in (np.flatnonzero(positive), np.flatnonzero(~positive)):
        if members.size:
            counts[:, members] = rng.multinomial(
                members.size, np.full(members.size, 1.0 / members.size), size=n_resamples
            )
    return counts


def stratified_blocks(
    answerable: npt.NDArray[np.bool_], rng: np.random.Generator, n_resamples: int
) -> Iterator[FloatArray]:
    """:func:`stratified_counts` of ``n_resamples`` resamples in blocks of about
    ``BLOCK_VALUES`` counts (``(rows, n)`` each), so memory stays bounded for many queries."""
    rows = max(1, BLOCK_VALUES // max(1, answerable.shape[0]))
    for start in range(0, n_resamples, rows):
        yield stratified_counts(answerable, rng, min(rows, n_resamples - start))


def _resampled_statistics(
    confidence: FloatArray,
    answerable: npt.NDArray[np.bool_],
    value: FloatArray,
    *,
    max_no_answer_fp: float,
    rng: np.random.Generator,
    n_resamples: int,
) -> dict[str, FloatArray]:
    """Each summary statistic over ``n_resamples`` stratified resamples, ``(n_resamples,)``
    (drawn by :func:`stratified_blocks`); ``confidence``, ``answerable`` and ``value`` as
    :func:`abstention_statistics` accepted them for the observed sweep."""
    parts: dict[str, list[FloatArray]] = {name: [] for name in ABSTENTION_STATISTICS}
    measure = np.nan_to_num(np.asarray(value, dtype=float))
    for counts in stratified_blocks(answerable, rng, n_resamples):
        block = _sweep(
            confidence,
            answerable,
            measure,
            counts,
            max_no_answer_fp=max_no_answer_fp,
            value_curve=False,
        )
        for name in ABSTENTION_STATISTICS:
            parts[name].append(block.statistic(name))
    return {name: np.concatenate(arrays) for name, arrays in parts.items()}


@dataclass(frozen=True)
class AucChange:
    """The AUC of a change against its baseline (:func:`auc_change`): ``before``, ``after``,
    ``diff = after - before`` and its percentile interval ``ci_low``, ``ci_high`` (NaN
    without both classes), the class sizes ``n_answerable``, ``n_no_answer``, and ``note``
    (:data:`NO_NO_ANSWER` or :data:`NO_ANSWERABLE` where it applies, else "")."""

    before: float
    after: float
    diff: float
    ci_low: float
    ci_high: float
    n_answerable: int
    n_no_answer: int
    note: str


def auc_change(
    before: npt.ArrayLike,
    after: npt.ArrayLike,
    answerable: npt.ArrayLike,
    *,
    system: str = "",
    language: str = ALL_LANGUAGES,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> AucChange:
    """The AUC of ``after`` against ``before`` on the same ``n`` queries, paired.

    ``before``, ``after`` ``(n,)``: each query's confidence in the baseline and in the
    change (``-inf``: no result); ``answerable`` ``(n,)``. The queries are resampled
    *jointly*: one stratified bootstrap resample (each class to its own size, as
    :func:`abstention`'s intervals) weighs both sides alike, and the interval is the
    percentile interval of the resampled ``AUC(after) - AUC(before)``. The generator is
    derived from ``seed`` and the (``system``, ``language``) key under the name
    ``"abstention-change"``, as every seeded statistic of :mod:`evalkit.stats`."""
    if not 0.0 < confidence < 1.0 or n_resamples < 1:
        raise InputError("auc_change: confidence must be in (0, 1) and n_resamples >= 1")
    positive = np.asarray(answerable, dtype=bool)
    old, new = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    if old.shape != positive.shape or new.shape != positive.shape:
        raise InputError("auc_change: before, after and answerable must be n values each")
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    first = float(abstention_statistics(old, positive).auc[0])
    second = float(abstention_statistics(new, positive).auc[0])
    note = NO_NO_ANSWER if n_neg == 0 else NO_ANSWERABLE if n_pos == 0 else ""
    low = high = np.nan
    if not note:
        rng = random_generator(
            group_seed(seed, "abstention-change", ("system", "language"), (system, language))
        )
        diffs = [
            weighted_auc(new, positive, counts) - weighted_auc(old, positive, counts)
            for counts in stratified_blocks(positive, rng, n_resamples)
        ]
        tail = (1.0 - confidence) / 2.0
        low, high = (float(v) for v in np.quantile(np.concatenate(diffs), [tail, 1.0 - tail]))
    return AucChange(
        before=first,
        after=second,
        diff=second - first,
        ci_low=low,
        ci_high=high,
        n_answerable=n_pos,
        n_no_answer=n_neg,
        note=note,
    )


@dataclass(frozen=True)
class Abstention:
    """The result of :func:`abstention`.

    - ``curve``: columns :data:`CURVE_COLUMNS`, one row per (system, language, threshold):
      ``system``, ``language`` (``"all"`` or a query language), ``threshold`` (float, the last
      ``inf``: nothing answered), ``coverage``, ``NoAnswerFP`` (NaN without no-answer
      queries), ``NoResult``, ``selective_risk`` (NaN when nothing is answered), ``measure``
      (the primary measure's name), ``value`` (its mean over answerable queries, abstained
      queries scored 0).
    - ``summary``: columns :data:`SUMMARY_COLUMNS_ABSTENTION`, one row per (system, language,
      statistic in :data:`ABSTENTION_STATISTICS`): ``measure`` (the statistic's name in the
      measure catalog, :mod:`evalkit.measures.abstention`: ``AbstentionAUC``, ``AURC``,
      ``OpNoResult(max_fp=0.34)``, ...), ``value``, its percentile bootstrap
      interval ``ci_low``, ``ci_high``, ``target`` (the operating point's ``NoAnswerFP``
      target), the class sizes, ``note`` (:data:`NO_NO_ANSWER` where it applies, else "") and
      ``source``: where the system's confidences came from, ``"declared"`` by the system or
      its ``"top score"`` (:meth:`evalkit.run.Evaluation.confidences`).
    - ``queries``: one row per (system, query): ``system, query_id, language`` (str),
      ``answerable`` (bool), ``confidence`` (float, ``-inf`` without a result), ``source``.
    """

    curve: pd.DataFrame
    summary: pd.DataFrame
    queries: pd.DataFrame
    measure: str
    target: float


def _primary(measures: tuple[str, ...]) -> str:
    ranking = [m for m in measures if m not in ("NoAnswerFP", "NoResult")]
    ranking = [m for m in ranking if not m.startswith("Context")] or list(measures)
    return next((m for m in ranking if m.startswith("nDCG")), ranking[0])


def abstention(
    evaluation: Evaluation,
    *,
    measure: str | None = None,
    max_no_answer_fp: float = DEFAULT_MAX_NO_ANSWER_FP,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Abstention:
    """Abstention of every system of ``evaluation`` over every threshold (module docstring).

    ``measure`` is the primary ranking measure (default: the first nDCG, else the first
    ranking measure); ``max_no_answer_fp`` the operating point's target ``x``. Rows per system
    (evaluation order) for ``"all"`` and then each query language (sorted).
    """
    if not 0.0 <= max_no_answer_fp <= 1.0 or not 0.0 < confidence < 1.0 or n_resamples < 1:
        raise InputError(
            "abstention: max_no_answer_fp must be in [0, 1], confidence in (0, 1) and "
            "n_resamples >= 1"
        )
    primary = measure or _primary(evaluation.measures)
    if primary not in evaluation.measures:
        raise InputError(f"abstention: {primary!r} is not a measure of this evaluation")
    per_query = evaluation.per_query
    values = per_query.loc[per_query["measure"] == primary, ["system", "query_id", "value"]]
    frame = evaluation.confidences().merge(values, on=["system", "query_id"], how="left")
    sources = evaluation.confidence_sources()
    measures = {name: abstention_measure(name, max_no_answer_fp) for name in ABSTENTION_STATISTICS}
    tail = (1.0 - confidence) / 2.0
    curves: list[pd.DataFrame] = []
    summaries: list[dict[str, object]] = []
    for system in evaluation.systems:
        rows = frame[frame["system"] == system]
        groups = [(ALL_LANGUAGES, rows)] + [
            (str(lang), part) for lang, part in rows.groupby("language", sort=True)
        ]
        for language, part in groups:
            conf = part["confidence"].to_numpy(dtype=float)
            answerable = part["answerable"].to_numpy(dtype=bool)
            value = part["value"].to_numpy(dtype=float)
            observed = abstention_statistics(
                conf, answerable, value, max_no_answer_fp=max_no_answer_fp
            )
            rng = random_generator(
                group_seed(seed, "abstention", ("system", "language"), (system, language))
            )
            resampled = _resampled_statistics(
                conf,
                answerable,
                value,
                max_no_answer_fp=max_no_answer_fp,
                rng=rng,
                n_resamples=n_resamples,
            )
            curves.append(
                pd.DataFrame(
                    {
                        "system": system,
                        "language": language,
                        "threshold": observed.thresholds,
                        "coverage": observed.coverage[0],
                        "NoAnswerFP": observed.no_answer_fp[0],
                        "NoResult": observed.no_result[0],
                        "selective_risk": observed.selective_risk[0],
                        "measure": primary,
                        "value": observed.value[0],
                    }
                )
            )
            n_pos, n_neg = int(answerable.sum()), int((~answerable).sum())
            note = NO_NO_ANSWER if n_neg == 0 else NO_ANSWERABLE if n_pos == 0 else ""
            for name in ABSTENTION_STATISTICS:
                draws = resampled[name]
                kept = draws[~np.isnan(draws)]  # a threshold may be inf: nothing answered
                low, high = (
                    np.quantile(
                        kept,
                        [tail, 1.0 - tail],
                        method="inverted_cdf" if name == "op_threshold" else "linear",
                    )
                    if kept.size
                    else (np.nan, np.nan)
                )
                summaries.append(
                    {
                        "system": system,
                        "language": language,
                        "statistic": name,
                        "measure": measures[name],
                        "value": float(observed.statistic(name)[0]),
                        "ci_low": float(low),
                        "ci_high": float(high),
                        "target": max_no_answer_fp if name.startswith("op_") else np.nan,
                        "n_answerable": n_pos,
                        "n_no_answer": n_neg,
                        "note": note if name != "aurc" or n_pos == 0 else "",
                        "source": sources[system],
                    }
                )
    curve = (
        pd.concat(curves, ignore_index=True)
        if curves
        else pd.DataFrame({c: pd.Series(dtype=object) for c in CURVE_COLUMNS})
    )
    summary = pd.DataFrame(summaries, columns=SUMMARY_COLUMNS_ABSTENTION)
    queries_frame = frame[["system", "query_id", "language", "answerable", "confidence", "source"]]
    return Abstention(
        curve=curve[CURVE_COLUMNS],
        summary=summary,
        queries=queries_frame.reset_index(drop=True),
        measure=primary,
        target=max_no_answer_fp,
    )
