"""Measures of binary relevance: each one declared next to its vectorized kernel.

A kernel takes the :class:`~evalkit.measures.judged.JudgedRanking` and a parsed measure and
returns a float64 array with one value per query of the qrels (``ranking.query_ids`` order).
Kernels only look at the *judged* retrieved documents (their 0-based position and grade) plus
per-query counts, so their cost does not depend on the length of the run. Semantics follow
trec_eval 9.0.8:

* a document is relevant when its grade is ``>= rel`` (default 1) and ``>= 0``;
* negative grades mean "in the pool but unjudged": never relevant, never judged non-relevant,
  zero gain (they do count as judged for ``Judged``, as in ir_measures);
* a query with no relevant documents gets 0.0 from every ratio measure (never NaN);
* a query the run returned nothing for gets 0.0 from every measure except ``NumRel``;
  (with ``-J``, a query without a judged retrieved doc gets NaN from ``IPrec@0`` and
  ``11pt_avg``, as trec_eval 10.0's 0 / 0).

``P(judged_only=True)@k`` is trec_eval's P_k with ``-J`` (pytrec_eval's
``judged_docs_only_flag``, ir_measures' pytrec_eval provider): relevant docs among the first k
docs graded >= 0, divided by k.

The graded measures (nDCG, G, RBP, ERR, ...) are in :mod:`evalkit.measures.gain`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray, IntArray
from evalkit.measures._catalog import NONNEGATIVE, REL, UNBOUNDED
from evalkit.measures.judged import JudgedRanking, group_runs, grouped_accumulate, kernel, ratio

if TYPE_CHECKING:
    from evalkit.measures.names import Measure

__all__: list[str] = []  # the kernels are registered in evalkit.measures.KERNELS


@kernel(
    "P",
    "precision at k: relevant docs in the top k / k (judged_only: of the judged docs)",
    cutoff="required",
    params=(REL, ("judged_only", False)),
    trec="P",
)
def _precision(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval P_k: relevant in the top k divided by k, even when fewer than k were retrieved.
    if m.param("judged_only"):
        return _precision_judged_only(r, m)
    k = m.cutoff or 1  # P always has a cutoff (checked by its spec)
    return r.count(r.relevant(_rel(m)) & (r.position < k)) / k


@kernel(
    "R",
    "recall at k: relevant docs in the top k / relevant docs",
    cutoff="required",
    params=(REL,),
    trec="recall",
)
def _recall(r: JudgedRanking, m: Measure) -> FloatArray:
    hits = r.count(r.relevant(_rel(m)) & r.top(m.cutoff))
    return ratio(hits, r.num_rel(_rel(m)))


@kernel(
    "RR", "reciprocal rank of the first relevant doc (within k)", cutoff="optional", params=(REL,)
)
def _reciprocal_rank(r: JudgedRanking, m: Measure) -> FloatArray:
    mask = r.relevant(_rel(m)) & r.top(m.cutoff)
    first = r.rank_in_query(mask) == 1
    q = r.query[mask][first]
    pos = r.position[mask][first]
    out = np.zeros(r.n_queries, dtype=np.float64)
    out[q] = 1.0 / (pos + 1.0)
    return out


@kernel("AP", "average precision (of the top k)", cutoff="optional", params=(REL,))
def _average_precision(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval map / map_cut_k: sum over relevant retrieved (in the top k) of
    # (relevant so far / rank), divided by the number of relevant docs.
    mask = r.relevant(_rel(m)) & r.top(m.cutoff)
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = r.rank_in_query(mask) / (r.position[mask] + 1.0)
    return ratio(r.total(mask, weights), r.num_rel(_rel(m)))


@kernel("Rprec", "precision at rank R, R = number of relevant docs", params=(REL,), trec="Rprec")
def _rprec(r: JudgedRanking, m: Measure) -> FloatArray:
    num_rel = r.num_rel(_rel(m))
    mask = r.relevant(_rel(m)) & (r.position < num_rel[r.query])
    return ratio(r.count(mask), num_rel)


@kernel(
    "Success",
    "1 if a relevant doc is in the top k, else 0",
    cutoff="required",
    params=(REL,),
    trec="success",
)
def _success(r: JudgedRanking, m: Measure) -> FloatArray:
    return (r.count(r.relevant(_rel(m)) & r.top(m.cutoff)) > 0).astype(np.float64)


@kernel("Bpref", "binary preference (Buckley & Voorhees 2004)", params=(REL,), trec="bpref")
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
    return ratio(total.astype(np.float64, copy=False), num_rel)


@kernel("Judged", "fraction of the top k that is in the qrels", cutoff="optional")
def _judged(r: JudgedRanking, m: Measure) -> FloatArray:
    # ir_measures Judged@k: judged docs in the top k / min(k, retrieved).
    judged = r.count(r.top(m.cutoff))
    shown = r.num_ret.astype(np.float64)
    if m.cutoff is not None:
        shown = np.minimum(shown, float(m.cutoff))
    return ratio(judged, shown)


@kernel("SetP", "relevant retrieved / retrieved", params=(REL,), trec="set_P")
def _set_precision(r: JudgedRanking, m: Measure) -> FloatArray:
    return ratio(_num_rel_ret(r, m), r.num_ret.astype(np.float64))


@kernel("SetR", "relevant retrieved / relevant", params=(REL,), trec="set_recall")
def _set_recall(r: JudgedRanking, m: Measure) -> FloatArray:
    return ratio(_num_rel_ret(r, m), r.num_rel(_rel(m)))


@kernel(
    "SetF",
    "(1 + beta) * SetP * SetR / (beta * SetP + SetR) (trec_eval's set_F weighting)",
    params=(("beta", 1.0), REL),
    trec="set_F",
)
def _set_f(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval set_F.beta: (beta + 1) * P * R / (beta * P + R), 0 without a relevant
    # retrieved doc (beta weighs linearly, not squared as in van Rijsbergen's F).
    beta = float(m.param("beta"))
    p = _set_precision(r, m)
    rec = _set_recall(r, m)
    value = ratio((beta + 1.0) * p * rec, beta * p + rec)
    value[_num_rel_ret(r, m) == 0] = 0.0
    return value


@kernel("NumRet", "number of retrieved docs", bounds=NONNEGATIVE, trec="num_ret")
def _num_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.num_ret.astype(np.float64)


@kernel(
    "NumRel",
    "number of relevant docs in the qrels",
    params=(REL,),
    bounds=NONNEGATIVE,
    trec="num_rel",
)
def _num_rel(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.num_rel(_rel(m))


@kernel(
    "NumRelRet",
    "number of relevant retrieved docs",
    params=(REL,),
    bounds=NONNEGATIVE,
    trec="num_rel_ret",
)
def _num_rel_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.count(r.relevant(_rel(m)))


@kernel(
    "IPrec",
    "interpolated precision at a recall level (0..1)",
    cutoff="required",
    params=(REL,),
    fraction=True,
)
def _iprec(r: JudgedRanking, m: Measure) -> FloatArray:
    return _iprec_values(r, _rel(m), float(m.cutoff or 0.0))


@kernel(
    "11pt_avg",
    "mean interpolated precision at recall 0, 0.1, ..., 1",
    params=(REL,),
    trec="11pt_avg",
)
def _eleven_point(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval 11pt_avg: the mean of iprec_at_recall at 0.0, 0.1, ..., 1.0
    total = np.zeros(r.n_queries, dtype=np.float64)
    for i in range(11):  # 11 recall levels, each vectorized over every query
        total += _iprec_values(r, _rel(m), i / 10)
    return total / 11.0


@kernel("SetAP", "relevant retrieved ** 2 / (retrieved * relevant)", params=(REL,), trec="set_map")
def _set_ap(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval set_map: relevant retrieved ** 2 / (retrieved * relevant)
    hits = _num_rel_ret(r, m)
    return ratio(hits * hits, r.num_ret.astype(np.float64) * r.num_rel(_rel(m)))


@kernel(
    "set_relative_P",
    "relevant retrieved / min(retrieved, relevant)",
    params=(REL,),
    trec="set_relative_P",
)
def _set_relative_p(r: JudgedRanking, m: Measure) -> FloatArray:
    denominator = np.minimum(r.num_ret.astype(np.float64), r.num_rel(_rel(m)))
    return ratio(_num_rel_ret(r, m), denominator)


@kernel(
    "relative_P",
    "relevant docs in the top k / min(k, relevant docs)",
    cutoff="required",
    params=(REL,),
    trec="relative_P",
)
def _relative_p(r: JudgedRanking, m: Measure) -> FloatArray:
    k = float(m.cutoff or 1)
    hits = r.count(r.relevant(_rel(m)) & (r.position < k))
    return ratio(hits, np.minimum(k, r.num_rel(_rel(m))))


@kernel(
    "num_nonrel_judged_ret",
    "number of judged non-relevant retrieved docs",
    params=(REL,),
    bounds=NONNEGATIVE,
    trec="num_nonrel_judged_ret",
)
def _num_nonrel_judged_ret(r: JudgedRanking, m: Measure) -> FloatArray:
    return r.count((r.grade >= 0) & ~r.relevant(_rel(m)))


@kernel("NumQ", "number of queries (1 per query; summed)", bounds=NONNEGATIVE, trec="num_q")
def _num_q(r: JudgedRanking, m: Measure) -> FloatArray:
    return np.ones(r.n_queries, dtype=np.float64)


@kernel(
    "infAP",
    "inferred AP (Yilmaz & Aslam 2006): negative grades are sampled-out",
    params=(REL,),
    trec="infAP",
)
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
    return ratio(total.astype(np.float64, copy=False), r.num_rel(_rel(m)))


@kernel("unjudged", "docs in the top k not graded >= 0, / k", cutoff="required", trec="unj")
def _unjudged(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval unj_k: docs in the top k without a grade >= 0, divided by k
    k = float(m.cutoff or 1)
    shown = np.minimum(r.num_ret.astype(np.float64), k)
    judged = r.count((r.grade >= 0) & (r.position < k))
    return (shown - judged) / k


@kernel(
    "utility",
    "p1 * rel. retrieved + p2 * nonrel. retrieved + p3 * rel. missed + p4 * nonrel. missed",
    params=(REL, ("p1", 1.0), ("p2", -1.0), ("p3", 0.0), ("p4", 0.0)),
    bounds=UNBOUNDED,
    trec="utility",
)
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


@kernel(
    "Rprec_mult",
    "precision at rank m * R, R = number of relevant docs",
    cutoff="required",
    params=(REL,),
    fraction=True,
)
def _rprec_mult(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval Rprec_mult_m: precision at rank c = (long)(m * R + 0.9) (both versions), with
    # nonrelevant docs filling a ranking shorter than c; 0 when c = 0.
    num_rel = r.num_rel(_rel(m))
    count = np.floor(float(m.cutoff or 0.0) * num_rel + 0.9)
    hits = r.count(r.relevant(_rel(m)) & (r.position < count[r.query]))
    return ratio(hits, count)


@kernel(
    "binG",
    "mean over relevant docs of 1 / log2(2 + non-relevant above)",
    params=(REL,),
    trec="binG",
)
def _bin_g(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval binG: each relevant doc at 0-based position i, the r-th relevant one, adds
    # 1 / log2(3 + i - r); the sum is divided by the number of relevant docs.
    mask = r.relevant(_rel(m))
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = 1.0 / np.log2(3.0 + r.position[mask] - r.rank_in_query(mask))
    return ratio(r.total(mask, weights), r.num_rel(_rel(m)))


@kernel(
    "yaap",
    "Robertson's yet another AP: log((1 + S) / (1 + R - S)), S = AP * R",
    params=(REL,),
    bounds=UNBOUNDED,
    trec="yaap",
)
def _yaap(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval yaap: log((1 + S) / (1 + R - S)), S the sum of the precisions at the relevant
    # retrieved docs, R the number of relevant docs.
    mask = r.relevant(_rel(m))
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = r.rank_in_query(mask) / (r.position[mask] + 1.0)
    total = r.total(mask, weights)
    result: FloatArray = np.log((1.0 + total) / (1.0 + r.num_rel(_rel(m)) - total))
    return result


# --- helpers of the kernels above ------------------------------------------------------------


def _rel(measure: Measure) -> int:
    return int(measure.param("rel"))  # an int, checked by the measure's spec


def _running_count(sorted_groups: IntArray, flags: npt.NDArray[np.bool_]) -> IntArray:
    """Within each group (input sorted by group), the running count of ``flags`` (inclusive)."""
    total = np.cumsum(flags, dtype=np.int64)
    starts, lengths = group_runs(sorted_groups)
    before = total[starts] - flags[starts]
    return total - np.repeat(before, lengths)


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
        reversed_max = grouped_accumulate(np.maximum, precision[::-1], r.query[mask][::-1])
        return np.ascontiguousarray(reversed_max[::-1])

    return r.relevant(rel), r.once(("interpolated", max(rel, 0)), make)


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


_INFAP_EPSILON = 0.00001  # trec_eval.h


def _precision_judged_only(r: JudgedRanking, m: Measure) -> FloatArray:
    k = m.cutoff or 1
    rel = max(int(m.param("rel")), 0)
    judged = r.grade >= 0
    place = r.rank_in_query(judged) - 1  # rank among the judged docs
    hits = (r.grade[judged] >= rel) & (place < k)
    counted = np.bincount(r.query[judged][hits], minlength=r.n_queries).astype(np.float64)
    return counted / k
