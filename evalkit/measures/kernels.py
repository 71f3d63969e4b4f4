"""Vectorized per-query measure kernels over a :class:`JudgedRanking`.

Every kernel takes the judged ranking and a parsed :class:`Measure` and returns a float64 array
with one value per query of the qrels (``ranking.query_ids`` order). Kernels only look at the
*judged* retrieved documents (their 0-based position and grade) plus per-query counts, so their
cost does not depend on the length of the run. Semantics follow trec_eval 9.0.8:

* a document is relevant when its grade is ``>= rel`` (default 1) and ``>= 0``;
* negative grades mean "in the pool but unjudged": never relevant, never judged non-relevant,
  zero gain (they do count as judged for ``Judged``, as in ir_measures);
* a query with no relevant documents gets 0.0 from every ratio measure (never NaN);
* a query the run returned nothing for gets 0.0 from every measure except ``NumRel``;
  (with ``-J``, a query without a judged retrieved doc gets NaN from ``IPrec@0`` and
  ``11pt_avg``, as trec_eval 10.0's 0 / 0).

The registry :data:`KERNELS` maps each measure name that :func:`evalkit.measures.score` computes
to its kernel.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit.measures import kernels_gain
from evalkit.measures.names import Measure
from evalkit.registry import Registry

__all__ = ["KERNELS", "JudgedRanking", "Kernel"]

from evalkit.measures.judged import (
    FloatArray,
    IntArray,
    JudgedRanking,
    Kernel,
    group_runs,
)

_Array = TypeVar("_Array", bound=npt.NDArray[Any])


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator, 0.0 where the denominator is 0."""
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _rel(measure: Measure) -> int:
    return int(measure.param("rel"))  # an int, checked by the measure's spec


def _cutoff_mask(r: JudgedRanking, measure: Measure) -> npt.NDArray[np.bool_]:
    if measure.cutoff is None:
        return np.ones(r.position.size, dtype=bool)
    return r.position < measure.cutoff


def _precision(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval P_k: relevant in the top k divided by k, even when fewer than k were retrieved.
    if m.param("judged_only"):
        return kernels_gain.precision_judged_only(r, m)
    k = m.cutoff or 1  # P always has a cutoff (checked by its spec)
    return r.count(r.relevant(_rel(m)) & (r.position < k)) / k


def _recall(r: JudgedRanking, m: Measure) -> FloatArray:
    hits = r.count(r.relevant(_rel(m)) & _cutoff_mask(r, m))
    return _ratio(hits, r.num_rel(_rel(m)))


def _success(r: JudgedRanking, m: Measure) -> FloatArray:
    return (r.count(r.relevant(_rel(m)) & _cutoff_mask(r, m)) > 0).astype(np.float64)


def _reciprocal_rank(r: JudgedRanking, m: Measure) -> FloatArray:
    mask = r.relevant(_rel(m)) & _cutoff_mask(r, m)
    first = r.rank_in_query(mask) == 1
    q = r.query[mask][first]
    pos = r.position[mask][first]
    out = np.zeros(r.n_queries, dtype=np.float64)
    out[q] = 1.0 / (pos + 1.0)
    return out


def _average_precision(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval map / map_cut_k: sum over relevant retrieved (in the top k) of
    # (relevant so far / rank), divided by the number of relevant docs.
    mask = r.relevant(_rel(m)) & _cutoff_mask(r, m)
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = r.rank_in_query(mask) / (r.position[mask] + 1.0)
    return _ratio(r.total(mask, weights), r.num_rel(_rel(m)))


def _gain(grades: IntArray, dcg: object) -> FloatArray:
    g = grades.astype(np.float64)
    return np.exp2(g) - 1.0 if dcg == "exp-log2" else g


def _ndcg(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval ndcg / ndcg_cut_k: sum of gain / log2(rank + 1) over docs with grade > 0 in the
    # top k, divided by the same sum over the qrels' grades sorted descending (top k of them).
    if m.param("gains"):
        return kernels_gain.ndcg_with_gains(r, m)
    dcg = m.param("dcg")
    mask = (r.grade > 0) & _cutoff_mask(r, m)
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = _gain(r.grade[mask], dcg) / np.log2(r.position[mask] + 2.0)
    actual = r.total(mask, weights)
    ideal_pos = r.ideal_positions()
    positive = ideal_pos >= 0
    if m.cutoff is not None:
        positive &= ideal_pos < m.cutoff
    ideal_weights = _gain(r.qrels_grade[positive], dcg) / np.log2(ideal_pos[positive] + 2.0)
    ideal: FloatArray = np.bincount(
        r.qrels_query[positive], weights=ideal_weights, minlength=r.n_queries
    ).astype(np.float64, copy=False)
    return _ratio(actual, ideal)


def _rprec(r: JudgedRanking, m: Measure) -> FloatArray:
    num_rel = r.num_rel(_rel(m))
    mask = r.relevant(_rel(m)) & (r.position < num_rel[r.query])
    return _ratio(r.count(mask), num_rel)


def _bpref(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval bpref: for each relevant retrieved doc, 1 - min(n, R) / min(N, R), where n counts
    # the judged non-relevant docs ranked above it, R the relevant and N the judged non-relevant
    # docs of the query (1 when n = 0); the sum is divided by R.
    rel = _rel(m)
    relevant = r.relevant(rel)
    nonrel = (r.grade >= 0) & ~relevant
    num_rel = r.num_rel(rel)
    num_nonrel = r.count((r.qrels_grade >= 0) & (r.qrels_grade < max(rel, 0)), r.qrels_query)
    # judged non-relevant entries ranked above each relevant one (within its query)
    n = _running_count(r.query, nonrel)[relevant].astype(np.float64)
    q = r.query[relevant]
    big_r = num_rel[q]
    denom = np.minimum(num_nonrel[q], big_r)
    safe = np.where(denom > 0, denom, 1.0)
    contribution = np.where(n > 0, 1.0 - np.minimum(n, big_r) / safe, 1.0)
    total = np.bincount(q, weights=contribution, minlength=r.n_queries)
    return _ratio(total.astype(np.float64, copy=False), num_rel)


def _running_count(sorted_groups: IntArray, flags: npt.NDArray[np.bool_]) -> IntArray:
    """Within each group (input sorted by group), the running count of ``flags`` (inclusive)."""
    total = np.cumsum(flags, dtype=np.int64)
    starts, lengths = group_runs(sorted_groups)
    before = total[starts] - flags[starts]
    return total - np.repeat(before, lengths)


def _judged(r: JudgedRanking, m: Measure) -> FloatArray:
    # ir_measures Judged@k: judged docs in the top k / min(k, retrieved).
    judged = r.count(_cutoff_mask(r, m))
    shown = r.num_ret.astype(np.float64)
    if m.cutoff is not None:
        shown = np.minimum(shown, float(m.cutoff))
    return _ratio(judged, shown)


def _num_rel_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.count(r.relevant(_rel(m)))


def _set_precision(r: JudgedRanking, m: Measure) -> FloatArray:
    return _ratio(_num_rel_ret(r, m), r.num_ret.astype(np.float64))


def _set_recall(r: JudgedRanking, m: Measure) -> FloatArray:
    return _ratio(_num_rel_ret(r, m), r.num_rel(_rel(m)))


def _set_f(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval set_F.beta: (beta + 1) * P * R / (beta * P + R), 0 without a relevant
    # retrieved doc (beta weighs linearly, not squared as in van Rijsbergen's F).
    beta = float(m.param("beta"))
    p = _set_precision(r, m)
    rec = _set_recall(r, m)
    value = _ratio((beta + 1.0) * p * rec, beta * p + rec)
    value[_num_rel_ret(r, m) == 0] = 0.0
    return value


def _num_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.num_ret.astype(np.float64)


def _num_rel(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.num_rel(_rel(m))


# --- trec_eval's other measures ------------------------------------------------------------


def _recall_count(fraction: float, num_rel: FloatArray, trec_version: str) -> FloatArray:
    """A recall level as a number of relevant docs: trec_eval 10.0 rounds (half away from
    zero, ``lround``); 9.0.8 adds 0.9 and truncates."""
    product = fraction * num_rel
    return np.floor(product + 0.5) if trec_version == "10" else np.floor(product + 0.9)


def _interpolated(r: JudgedRanking, rel: int) -> tuple[npt.NDArray[np.bool_], FloatArray]:
    """Mask of the relevant retrieved entries and, for each, the interpolated precision at its
    recall (max precision at it or any later relevant entry of its query)."""

    def make() -> FloatArray:
        mask = r.relevant(rel)
        precision = r.rank_in_query(mask) / (r.position[mask] + 1.0)
        # suffix maximum within each query: a cumulative max over the reversed entries
        reversed_max = pd.Series(precision[::-1]).groupby(r.query[mask][::-1], sort=False).cummax()
        values = np.asarray(reversed_max.to_numpy(), dtype=np.float64)
        return np.ascontiguousarray(values[::-1])

    return r.relevant(rel), r._once(("interpolated", max(rel, 0)), make)


def _iprec_values(r: JudgedRanking, rel: int, fraction: float) -> FloatArray:
    # trec_eval iprec_at_recall: the interpolated precision at the c-th relevant doc, c the
    # recall level as a count; 0 when c > relevant retrieved; c = 0 takes the first relevant
    # doc's (0 without one; NaN, trec_eval's 0 / 0, when -J emptied the ranking).
    mask, interpolated = _interpolated(r, rel)
    num_rel = r.num_rel(rel)
    count = _recall_count(fraction, num_rel, r.trec_version)
    nth = r.rank_in_query(mask)
    q = r.query[mask]
    wanted = nth == np.maximum(count[q], 1.0)
    out = np.zeros(r.n_queries, dtype=np.float64)
    out[q[wanted]] = interpolated[wanted]
    if r.emptied is not None:
        out[(count == 0) & r.emptied] = np.nan
    return out


def _iprec(r: JudgedRanking, m: Measure) -> FloatArray:
    return _iprec_values(r, _rel(m), float(m.cutoff or 0.0))


def _eleven_point(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval 11pt_avg: the mean of iprec_at_recall at 0.0, 0.1, ..., 1.0
    total = np.zeros(r.n_queries, dtype=np.float64)
    for i in range(11):  # 11 recall levels, each vectorized over every query
        total += _iprec_values(r, _rel(m), i / 10)
    return total / 11.0


def _set_ap(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval set_map: relevant retrieved ** 2 / (retrieved * relevant)
    hits = _num_rel_ret(r, m)
    return _ratio(hits * hits, r.num_ret.astype(np.float64) * r.num_rel(_rel(m)))


def _set_relative_p(r: JudgedRanking, m: Measure) -> FloatArray:
    denominator = np.minimum(r.num_ret.astype(np.float64), r.num_rel(_rel(m)))
    return _ratio(_num_rel_ret(r, m), denominator)


def _relative_p(r: JudgedRanking, m: Measure) -> FloatArray:
    k = float(m.cutoff or 1)
    hits = r.count(r.relevant(_rel(m)) & (r.position < k))
    return _ratio(hits, np.minimum(k, r.num_rel(_rel(m))))


def _num_nonrel_judged_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.count((r.grade >= 0) & ~r.relevant(_rel(m)))


def _num_q(r: JudgedRanking, m: Measure) -> FloatArray:
    return np.ones(r.n_queries, dtype=np.float64)


def _rprec_mult(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval Rprec_mult_m: precision at rank c = (long)(m * R + 0.9) (both versions), with
    # nonrelevant docs filling a ranking shorter than c; 0 when c = 0.
    num_rel = r.num_rel(_rel(m))
    count = np.floor(float(m.cutoff or 0.0) * num_rel + 0.9)
    hits = r.count(r.relevant(_rel(m)) & (r.position < count[r.query]))
    return _ratio(hits, count)


_INFAP_EPSILON = 0.00001  # trec_eval.h


def _inf_ap(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval infAP: for the relevant doc at 0-based position j > 0, with R relevant (itself
    # included), N judged non-relevant and U negative-grade (pooled, unjudged) docs at or above
    # it: 1/(j+1) + j/(j+1) * ((R-1+N+U)/j) * ((R-1+eps)/(R-1+N+2 eps)); 1 at j = 0. Docs not
    # in the qrels count only through j. The sum is divided by the number of relevant docs.
    relevant = r.relevant(_rel(m))
    nonrel = (r.grade >= 0) & ~relevant
    big_r = _running_count(r.query, relevant)[relevant].astype(np.float64)
    big_n = _running_count(r.query, nonrel)[relevant].astype(np.float64)
    big_u = _running_count(r.query, r.grade < 0)[relevant].astype(np.float64)
    j = r.position[relevant].astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    eps = _INFAP_EPSILON
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((big_r - 1 + big_n + big_u) / safe_j) * (
        (big_r - 1 + eps) / (big_r - 1 + big_n + 2 * eps)
    )
    term = np.where(j == 0, 1.0, later)
    total = np.bincount(r.query[relevant], weights=term, minlength=r.n_queries)
    return _ratio(total.astype(np.float64, copy=False), r.num_rel(_rel(m)))


def _unjudged(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval unj_k: docs in the top k without a grade >= 0, divided by k
    k = float(m.cutoff or 1)
    shown = np.minimum(r.num_ret.astype(np.float64), k)
    judged = r.count((r.grade >= 0) & (r.position < k))
    return (shown - judged) / k


def _utility(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval utility.p1,p2,p3,p4 over the contingency table (relevant/non-relevant x
    # retrieved/not); "non-relevant not retrieved" needs the collection size (-N, else 0).
    # trec_eval -c ranks one unjudged placeholder doc for a query the run lacks (dropped by
    # -J) and resets the value to 0 afterwards, but only under the name "utility", i.e. with
    # the default p1..p4 (trec_eval.c).
    p1, p2, p3, p4 = (float(m.param(name)) for name in ("p1", "p2", "p3", "p4"))
    hits = _num_rel_ret(r, m)
    ret = r.num_ret.astype(np.float64)
    default = not any(key != "rel" for key, _ in m.params)
    if r.unranked is not None and not default and r.emptied is None:
        ret[r.unranked] = 1.0  # the placeholder doc
    num_rel = r.num_rel(_rel(m))
    n_docs = float(r.num_docs or 0)
    value = p1 * hits + p2 * (ret - hits) + p3 * (num_rel - hits)
    value = value + p4 * (n_docs + hits - ret - num_rel)
    if r.unranked is not None and default:
        value[r.unranked] = 0.0
    return value


def _g(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval G (gain = grade, 0 for grades <= 0): the doc at 0-based position i with gain g
    # adds g / log2(2 + C(i) - S(i)), S(i) the gain retrieved up to i (inclusive), C(i) the
    # sum over j <= i of max(ideal(j), 1), ideal(j) the j-th largest positive gain of the
    # qrels (0 past them); the sum is divided by the qrels' total positive gain.
    gain = np.where(r.grade > 0, r.grade, 0).astype(np.float64)
    ideal_pos = r.ideal_positions()
    positive = ideal_pos >= 0
    ideal_query = r.qrels_query[positive]
    ideal_gain = r.qrels_grade[positive].astype(np.float64)
    # C(i) = i + 1 + sum over the query's first min(i + 1, K) ideal docs of max(gain - 1, 0)
    excess = np.concatenate(([0.0], np.cumsum(np.maximum(ideal_gain - 1.0, 0.0))))
    k = np.bincount(ideal_query, minlength=r.n_queries)
    start = np.cumsum(k) - k  # first ideal row of each query
    q = r.query
    end = start[q] + np.minimum(r.position + 1, k[q])
    cost = r.position + 1.0 + excess[end] - excess[start[q]]
    so_far = np.cumsum(gain)
    starts, lengths = group_runs(q)
    so_far = so_far - np.repeat(so_far[starts] - gain[starts], lengths)
    mask = gain != 0
    weights = np.zeros(gain.size, dtype=np.float64)
    weights[mask] = gain[mask] / np.log2(2.0 + cost[mask] - so_far[mask])
    total_ideal = np.bincount(ideal_query, weights=ideal_gain, minlength=r.n_queries)
    return _ratio(r.total(mask, weights), total_ideal.astype(np.float64, copy=False))


def _bin_g(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval binG: each relevant doc at 0-based position i, the r-th relevant one, adds
    # 1 / log2(3 + i - r); the sum is divided by the number of relevant docs.
    mask = r.relevant(_rel(m))
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = 1.0 / np.log2(3.0 + r.position[mask] - r.rank_in_query(mask))
    return _ratio(r.total(mask, weights), r.num_rel(_rel(m)))


def _yaap(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval yaap: log((1 + S) / (1 + R - S)), S the sum of the precisions at the relevant
    # retrieved docs, R the number of relevant docs.
    mask = r.relevant(_rel(m))
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = r.rank_in_query(mask) / (r.position[mask] + 1.0)
    total = r.total(mask, weights)
    result: FloatArray = np.log((1.0 + total) / (1.0 + r.num_rel(_rel(m)) - total))
    return result


def _ideal_rows(r: JudgedRanking) -> tuple[IntArray, FloatArray, IntArray, IntArray]:
    """The qrels' positive grades sorted descending per query: their query, gain and 0-based
    ideal position, and each query's first row among them (int64[n])."""
    ideal_pos = r.ideal_positions()
    positive = ideal_pos >= 0
    query = r.qrels_query[positive]
    count = np.bincount(query, minlength=r.n_queries)
    start = np.cumsum(count) - count
    return query, r.qrels_grade[positive].astype(np.float64), ideal_pos[positive], start


def _exclusive_cumsum(values: FloatArray) -> FloatArray:
    """``out[i]`` = sum of ``values[:i]`` (length ``values.size + 1``)."""
    return np.concatenate(([0.0], np.cumsum(values)))


def _dcg_weights(r: JudgedRanking) -> FloatArray:
    """grade / log2(position + 2) for the judged retrieved entries graded > 0, else 0."""
    weights = np.zeros(r.position.size, dtype=np.float64)
    positive = r.grade > 0
    weights[positive] = r.grade[positive] / np.log2(r.position[positive] + 2.0)
    return weights


def _dcg_before(
    r: JudgedRanking, weights: FloatArray, query: IntArray, cut: IntArray
) -> FloatArray:
    """For each (query, cut) pair, the sum of ``weights`` over the query's entries ranked above
    ``cut`` (position < cut); pairs and entries both sorted by query."""
    width = int(r.position.max(initial=0)) + 2
    keys = r.query * width + r.position
    wanted = query * width + np.minimum(cut, width - 1)
    total = _exclusive_cumsum(weights)
    first = np.searchsorted(keys, query * width, side="left")
    return total[np.searchsorted(keys, wanted, side="left")] - total[first]


def _ndcg_rel(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval ndcg_rel (gain = grade): the mean, over the K docs graded > 0 in the qrels, of
    # an nDCG value each: at a retrieved one, DCG / ideal DCG with both cut at its rank; for
    # one not retrieved, DCG of the whole ranking / the full ideal DCG; 0 when that sum is 0.
    query, gain, pos, start = _ideal_rows(r)
    ideal = _exclusive_cumsum(gain / np.log2(pos + 2.0))
    k = np.bincount(query, minlength=r.n_queries)
    weights = _dcg_weights(r)
    dcg = _exclusive_cumsum(weights)[1:]  # inclusive running sum ...
    starts, lengths = group_runs(r.query)
    dcg = dcg - np.repeat(dcg[starts] - weights[starts], lengths)  # ... within each query
    hit = r.grade > 0
    q = r.query[hit]
    cut_ideal = ideal[start[q] + np.minimum(r.position[hit] + 1, k[q])] - ideal[start[q]]
    total = np.bincount(q, weights=dcg[hit] / cut_ideal, minlength=r.n_queries).astype(np.float64)
    full_ideal = ideal[start + k] - ideal[start]
    final = r.total(hit, weights)
    missed = k - np.bincount(q, minlength=r.n_queries)
    total = total + missed * _ratio(final, full_ideal)
    return _ratio(np.where(total > 0, total, 0.0), k.astype(np.float64))


def _rndcg(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval Rndcg (gain = grade): the mean of nDCG@c over the cutoffs c where the ideal
    # gain changes (after each run of equal grades among the K docs graded > 0, c = K
    # included), plus c = the number retrieved when that is >= K + 2; DCG cut at c covers at
    # most what was retrieved. 0 for a query without a relevant doc (grade >= rel).
    query, gain, pos, start = _ideal_rows(r)
    ideal = _exclusive_cumsum(gain / np.log2(pos + 2.0))
    k = np.bincount(query, minlength=r.n_queries)
    last = np.ones(gain.size, dtype=bool)  # last row of a run of equal gains in its query
    last[:-1] = (query[1:] != query[:-1]) | (gain[1:] != gain[:-1])
    b_query, cut = query[last], pos[last] + 1
    weights = _dcg_weights(r)
    ratio = _dcg_before(r, weights, b_query, cut) / (
        ideal[start[b_query] + cut] - ideal[start[b_query]]
    )
    total = np.bincount(b_query, weights=ratio, minlength=r.n_queries).astype(np.float64)
    count = np.bincount(b_query, minlength=r.n_queries).astype(np.float64)
    extra = r.num_ret >= k + 2
    full_ideal = ideal[start + k] - ideal[start]
    final = r.total(r.grade > 0, weights)
    total = total + np.where(extra, _ratio(final, full_ideal), 0.0)
    count = count + extra
    out = _ratio(total, count)
    out[r.num_rel(_rel(m)) == 0] = 0.0
    return out


#: Measure name → kernel; every measure :func:`evalkit.measures.score` computes.
KERNELS: Registry[Kernel] = Registry("measure")
for _name, _kernel in (
    ("P", _precision),
    ("R", _recall),
    ("RR", _reciprocal_rank),
    ("AP", _average_precision),
    ("nDCG", _ndcg),
    ("Rprec", _rprec),
    ("Success", _success),
    ("Bpref", _bpref),
    ("Judged", _judged),
    ("SetP", _set_precision),
    ("SetR", _set_recall),
    ("SetF", _set_f),
    ("NumRet", _num_ret),
    ("NumRel", _num_rel),
    ("NumRelRet", _num_rel_ret),
    ("IPrec", _iprec),
    ("11pt_avg", _eleven_point),
    ("SetAP", _set_ap),
    ("set_relative_P", _set_relative_p),
    ("relative_P", _relative_p),
    ("num_nonrel_judged_ret", _num_nonrel_judged_ret),
    ("NumQ", _num_q),
    ("Rprec_mult", _rprec_mult),
    ("infAP", _inf_ap),
    ("unjudged", _unjudged),
    ("utility", _utility),
    ("G", _g),
    ("binG", _bin_g),
    ("yaap", _yaap),
    ("ndcg_rel", _ndcg_rel),
    ("Rndcg", _rndcg),
):
    KERNELS.register(_name, _kernel)

# the gain-based measures (rbp, rbp_resid, RBP, ERR, Compat) live in their own module

for _gain_name, _gain_kernel in kernels_gain.GAIN_KERNELS.items():
    KERNELS.register(_gain_name, _gain_kernel)
