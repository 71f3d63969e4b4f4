"""Measures of graded gain: each one declared next to its vectorized kernel.

Like :mod:`evalkit.measures.binary`, each kernel takes a
:class:`~evalkit.measures.judged.JudgedRanking` and a parsed measure and returns float64[n] (one
value per qrels query); no Python loop runs per query or document (the gain-table kernels loop
over the distinct numbers of grade levels, at most the largest grade + 1). The definitions, and
where each follows its reference:

* ``nDCG(dcg)@k``: trec_eval's ndcg / ndcg_cut_k: sum of gain / log2(rank + 1) over the docs
  with grade > 0 in the top k, divided by the same sum over the qrels' grades sorted descending
  (top k of them); gain = grade, or 2 ** grade - 1 with ``dcg='exp-log2'``.
* ``G``, ``ndcg_rel``, ``Rndcg``: trec_eval's m_G.c, m_ndcg_rel.c, m_Rndcg.c (gain = grade).
* ``rbp(p, gains)``: trec_eval 10.0's m_rbp.c. The gain of a judged doc is taken from the
  query's gain table (grades ``0 .. L-1``, L = the query's largest grade >= 0 plus 1, gain =
  grade unless ``gains`` maps it, plus every mapped grade); when a gain of that table lies
  outside 0..1, every gain g becomes ``(g - min) / (max - min)`` over the table (unjudged docs
  keep 0; min and max include 0: m_rbp.c leaves them uninitialized, and trec_eval 10.0 built
  with gcc, optimized or not, starts them at 0). Value: ``(1 - p) * sum of gain * p ** i``
  over the 0-based ranks i.
* ``rbp_resid(p)``: m_rbp_resid.c: ``p ** n + (1 - p) * sum of p ** i`` over the unjudged
  retrieved docs (not in the qrels or graded < 0), n the number retrieved; 0 when no retrieved
  doc is unjudged. A qrels query the run lacks gets 0, but 1 with a non-default p (trec_eval
  -c scores a placeholder unjudged doc and clears only the measure named ``rbp_resid``).
* ``nDCG(gains=...)``: m_ndcg.c with a gain map. DCG sums gain / log2(i + 2) over every
  retrieved doc (negative gains included). The ideal walks the gain table from its last entry
  down, after trec_eval's ``qsort`` of it by ``(int)(gain1 - gain2)`` (a comparison that calls
  gains less than 1 apart equal): glibc's merge sort is reproduced on the table (mapped grades
  first, by grade, then the other grades ascending). The walk skips grades no doc has, and stops
  at the first grade with docs and a gain <= 0 (at once when the last entry's gain is <= 0).
  0 when the ideal DCG is 0.
* ``RBP(p, rel)@k`` (ir_measures; default p = 0.8): ``(1 - p) * sum of gain * p ** i`` over
  the top k, gain = grade (grades > 0) or, with ``rel`` >= 1, 1 for grades >= rel. ir_measures'
  providers (trectools graded, cwl_eval with rel) agree when no scores tie (trectools averages
  the weights of tied docs instead of breaking ties).
* ``ERR@k``: gdeval.pl (bundled with ir_measures): ``sum over i < k of R_i / (i + 1) * prod over
  j < i of (1 - R_j)``, ``R = (2 ** grade - 1) / 16`` for grades 1..4 (0 for grades <= 0 and
  unjudged docs); gdeval rejects grades above 4, and so does this kernel (InputError).
* ``Compat(p, normalize)``: ir_measures' compat provider (Clarke, Vtyurina & Smucker 2021):
  the rank-biased overlap, to depth ``max(retrieved, K)``, of the ranking with the ideal ranking
  of the K docs graded > 0 (by grade descending; equal grades in the order the run ranks them,
  unretrieved ones last), divided by the ideal's own overlap (``normalize``) or by
  ``sum of p ** i`` over the depth. The provider orders equal grades by the run's score, with
  unretrieved docs as score 0: the same order unless the run ties or has scores <= 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray, IntArray
from evalkit.errors import InputError
from evalkit.measures._catalog import NONNEGATIVE, REL, parse_gains
from evalkit.measures.judged import JudgedRanking, group_runs, grouped_accumulate, kernel, ratio

if TYPE_CHECKING:
    from evalkit.measures.names import Measure

__all__ = ["gain_table_order"]


@kernel(
    "nDCG",
    "normalized discounted cumulative gain (of the top k)",
    cutoff="optional",
    params=(("dcg", "log2"), ("gains", "")),
    choices=(("dcg", ("log2", "exp-log2")),),
)
def _ndcg(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval ndcg / ndcg_cut_k: sum of gain / log2(rank + 1) over docs with grade > 0 in the
    # top k, divided by the same sum over the qrels' grades sorted descending (top k of them).
    if m.param("gains"):
        return _trec_ndcg_gains(r, m)
    dcg = m.param("dcg")
    mask = (r.grade > 0) & r.top(m.cutoff)
    weights = np.zeros(r.position.size, dtype=np.float64)
    weights[mask] = _dcg_gain(r.grade[mask], dcg) / np.log2(r.position[mask] + 2.0)
    actual = r.total(mask, weights)
    ideal_pos = r.ideal_positions()
    positive = ideal_pos >= 0
    if m.cutoff is not None:
        positive &= ideal_pos < m.cutoff
    ideal_weights = _dcg_gain(r.qrels_grade[positive], dcg) / np.log2(ideal_pos[positive] + 2.0)
    ideal: FloatArray = np.bincount(
        r.qrels_query[positive], weights=ideal_weights, minlength=r.n_queries
    ).astype(np.float64, copy=False)
    return ratio(actual, ideal)


@kernel(
    "G",
    "trec_eval's normalized gain: gain / log2(2 + ideal cost - gain so far), summed, / ideal gain",
    bounds=NONNEGATIVE,
    trec="G",
)
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
    return ratio(r.total(mask, weights), total_ideal.astype(np.float64, copy=False))


@kernel("ndcg_rel", "mean nDCG at the ranks of the docs graded > 0 (trec_eval)", trec="ndcg_rel")
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
    total = total + missed * ratio(final, full_ideal)
    return ratio(np.where(total > 0, total, 0.0), k.astype(np.float64))


@kernel(
    "Rndcg",
    "mean nDCG at the cutoffs where the ideal gain changes (trec_eval)",
    params=(REL,),
    trec="Rndcg",
)
def _rndcg(r: JudgedRanking, m: Measure) -> FloatArray:
    # trec_eval Rndcg (gain = grade): the mean of nDCG@c over the cutoffs c where the ideal
    # gain changes (after each run of equal grades among the K docs graded > 0, c = K
    # included), plus c = the number retrieved when that is >= K + 2 (and K > 0); DCG cut at c
    # covers at most what was retrieved. 0 for a query without a relevant doc (grade >= rel),
    # NaN for one whose relevant docs all have gain 0 (-l0: no cutoff to average over).
    query, gain, pos, start = _ideal_rows(r)
    ideal = _exclusive_cumsum(gain / np.log2(pos + 2.0))
    k = np.bincount(query, minlength=r.n_queries)
    last = np.ones(gain.size, dtype=bool)  # last row of a run of equal gains in its query
    last[:-1] = (query[1:] != query[:-1]) | (gain[1:] != gain[:-1])
    b_query, cut = query[last], pos[last] + 1
    weights = _dcg_weights(r)
    ratios = _dcg_before(r, weights, b_query, cut) / (
        ideal[start[b_query] + cut] - ideal[start[b_query]]
    )
    total = np.bincount(b_query, weights=ratios, minlength=r.n_queries).astype(np.float64)
    count = np.bincount(b_query, minlength=r.n_queries).astype(np.float64)
    extra = (r.num_ret >= k + 2) & (k > 0)  # trec_eval counts it only when ideal DCG > 0
    full_ideal = ideal[start + k] - ideal[start]
    final = r.total(r.grade > 0, weights)
    total = total + np.where(extra, ratio(final, full_ideal), 0.0)
    count = count + extra
    out = ratio(total, count)
    num_rel = r.num_rel(int(m.param("rel")))
    out[num_rel == 0] = 0.0
    # trec_eval's 0 / 0: relevant docs (-l0 counts grade 0) but none with a gain above 0
    out[(count == 0) & (num_rel > 0)] = np.nan
    return out


@kernel(
    "RBP",
    "rank-biased precision (Moffat & Zobel 2008): (1 - p) * sum of gain * p ** (rank - 1); "
    "gain = grade, or 1 for grades >= rel when rel is given",
    cutoff="optional",
    params=(("p", 0.8), ("rel", 0)),
    bounds=NONNEGATIVE,
)
def _rbp(r: JudgedRanking, m: Measure) -> FloatArray:
    p = float(m.param("p"))
    rel = int(m.param("rel"))
    mask = (r.grade >= rel) & (r.grade > 0)
    if m.cutoff is not None:
        mask &= r.position < m.cutoff
    gain = np.ones(r.grade.size) if rel >= 1 else r.grade.astype(np.float64)
    powers = _powers(p, int(r.position.max(initial=0)) + 1)
    return (1.0 - p) * r.total(mask, gain * powers[r.position])


@kernel(
    "rbp",
    "trec_eval 10.0's rbp: RBP with each query's gains scaled into 0..1",
    params=(("gains", ""), ("p", 0.9)),
)
def _trec_rbp(r: JudgedRanking, m: Measure) -> FloatArray:
    p = float(m.param("p"))
    gains = parse_gains(str(m.param("gains")))
    levels = _levels(r)
    low = np.zeros(r.n_queries, dtype=np.float64)
    high = np.zeros(r.n_queries, dtype=np.float64)
    for count in np.unique(levels).tolist():  # one pass per distinct number of levels
        # m_rbp.c never sets min and max before its loop; the built binary starts both at 0
        values = [0.0, *(gain for _, gain in _gain_table(int(count), gains))]
        low[levels == count], high[levels == count] = min(values), max(values)
    judged = r.grade >= 0
    gain = np.zeros(r.grade.size, dtype=np.float64)
    gain[judged] = _table_gain(r, gains, r.grade[judged])
    q = r.query
    scale = (low < 0) | (high > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = (gain - low[q]) / (high[q] - low[q])
    gain = np.where(judged & scale[q], scaled, gain)
    powers = _powers(p, int(r.position.max(initial=0)) + 1)
    weights = gain * powers[r.position]
    mask = gain != 0
    return (1.0 - p) * r.total(mask, weights)


@kernel(
    "rbp_resid",
    "trec_eval 10.0's rbp_resid: the RBP weight of unjudged retrieved docs and of the "
    "ranks past the run (0 without an unjudged retrieved doc)",
    params=(("p", 0.9),),
    higher_is_better=False,
)
def _trec_rbp_resid(r: JudgedRanking, m: Measure) -> FloatArray:
    p = float(m.param("p"))
    n = r.num_ret
    powers = _powers(p, int(n.max(initial=0)))
    below = np.concatenate(([0.0], np.cumsum(powers)))  # below[n] = sum of p ** i, i < n
    judged = r.grade >= 0
    judged_weight = r.total(judged, powers[r.position])
    unjudged = n - r.count(judged)
    value = powers[n] + (1.0 - p) * (below[n] - judged_weight)
    out: FloatArray = np.where(unjudged > 0, value, 0.0)
    if r.unranked is not None and r.emptied is None and m.params:
        # trec_eval -c ranks one unjudged placeholder doc for a query the run lacks and resets
        # the value to 0 afterwards only under the name "rbp_resid", i.e. with the default p
        out[r.unranked] = p + (1.0 - p) * 1.0
    return out


@kernel(
    "ERR",
    "expected reciprocal rank (Chapelle et al. 2009), gdeval's: grades 0..4, "
    "stop probability (2 ** grade - 1) / 16",
    cutoff="optional",
)
def _err(r: JudgedRanking, m: Measure) -> FloatArray:
    too_high = np.flatnonzero(r.qrels_grade > _ERR_MAX_GRADE)
    if too_high.size:
        query = r.query_ids[int(r.qrels_query[too_high[0]])]
        raise InputError(
            f"ERR follows gdeval, whose grades are at most {_ERR_MAX_GRADE}; the qrels grade "
            f"a doc of query {query!r} {int(r.qrels_grade[too_high[0]])}. Map the grades to "
            f"0..{_ERR_MAX_GRADE} first"
        )
    mask = r.grade > 0
    if m.cutoff is not None:
        mask &= r.position < m.cutoff
    q, pos = r.query[mask], r.position[mask]
    stop = (np.exp2(r.grade[mask].astype(np.float64)) - 1.0) / 2.0**_ERR_MAX_GRADE
    # the chance to get past each entry: a running product within the query (exclusive)
    kept = grouped_accumulate(np.multiply, 1.0 - stop, q)
    before = np.ones(q.size, dtype=np.float64)
    same = np.zeros(q.size, dtype=bool)
    same[1:] = q[1:] == q[:-1]
    before[1:] = np.where(same[1:], kept[:-1], 1.0)
    total = np.bincount(q, weights=stop * before / (pos + 1.0), minlength=r.n_queries)
    return total.astype(np.float64, copy=False)


@kernel(
    "Compat",
    "compatibility (Clarke et al. 2021): rank-biased overlap with the ideal ranking",
    params=(("normalize", True), ("p", 0.95)),
)
def _compat(r: JudgedRanking, m: Measure) -> FloatArray:
    p = float(m.param("p"))
    normalize = bool(m.param("normalize"))
    positive = r.qrels_grade > 0
    num_ideal = np.bincount(r.qrels_query[positive], minlength=r.n_queries)
    depth = np.maximum(r.num_ret, num_ideal)
    longest = int(depth.max(initial=0))
    powers = _powers(p, longest)
    i = np.arange(longest + 1, dtype=np.float64)
    # s[j] = sum over i < j of p ** i / (i + 1); g[j] = sum over i < j of p ** i
    s = np.concatenate(([0.0], np.cumsum(powers[:-1] / (i[:-1] + 1.0)))) if longest else [0.0]
    s = np.asarray(s, dtype=np.float64)
    g = np.concatenate(([0.0], np.cumsum(powers[:-1]))) if longest else np.zeros(1)
    # the ideal place of each retrieved doc graded > 0: docs of higher grade, then the docs of
    # its grade ranked above it
    hit = r.grade > 0
    hq, hg, hpos = r.query[hit], r.grade[hit], r.position[hit]
    higher = _count_higher(r, hq, hg)
    order = np.lexsort((hpos, -hg, hq))
    same_group = np.zeros(order.size, dtype=bool)
    sq, sg = hq[order], hg[order]
    same_group[1:] = (sq[1:] == sq[:-1]) & (sg[1:] == sg[:-1])
    run_start = np.flatnonzero(~same_group)
    lengths = np.diff(run_start, append=order.size)
    within = np.empty(order.size, dtype=np.int64)
    within[order] = np.arange(order.size) - np.repeat(run_start, lengths)
    ideal_pos = higher + within
    start = np.maximum(hpos, ideal_pos)
    d = depth[hq]
    overlap = np.bincount(hq, weights=s[d] - s[start], minlength=r.n_queries)
    if normalize:
        k = num_ideal.astype(np.int64)
        best = g[np.minimum(k, depth)] + k * (s[depth] - s[np.minimum(k, depth)])
    else:
        best = g[depth]
    out = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(overlap, best, out=out, where=best > 0)
    return out


# --- helpers of the kernels above ------------------------------------------------------------


def _dcg_gain(grades: IntArray, dcg: object) -> FloatArray:
    g = grades.astype(np.float64)
    return np.exp2(g) - 1.0 if dcg == "exp-log2" else g


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


def _gain_table(levels: int, gains: dict[int, float]) -> list[tuple[int, float]]:
    """trec_eval's setup_gains for a query with grades ``0 .. levels - 1``: the mapped grades in
    the order given (ascending here: the canonical order), then the other grades ascending."""
    table = list(gains.items())
    table += [(level, float(level)) for level in range(levels) if level not in gains]
    return table


def _c_compare(a: tuple[int, float], b: tuple[int, float]) -> int:
    """trec_eval's comp_rel_gain: the gain difference converted to int (truncated)."""
    return int(a[1] - b[1])


def _glibc_msort(items: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """glibc's qsort merge sort (msort_with_tmp): halves ``n // 2`` and ``n - n // 2``, the left
    element taken while ``compare(left, right) <= 0``."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _glibc_msort(items[:half]), _glibc_msort(items[half:])
    out: list[tuple[int, float]] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if _c_compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def gain_table_order(levels: int, gains: dict[int, float]) -> list[tuple[int, float]]:
    """The gain table of a query with ``levels`` grade levels, as trec_eval 10.0 sorts it
    (ascending by its truncating comparison): ``[(grade, gain), ...]``."""
    return _glibc_msort(_gain_table(levels, gains))


def _levels(r: JudgedRanking) -> IntArray:
    """Per query, trec_eval's number of grade levels: the largest grade >= 0 plus 1 (0: none)."""
    out = np.zeros(r.n_queries, dtype=np.int64)
    judged = r.qrels_grade >= 0
    np.maximum.at(out, r.qrels_query[judged], r.qrels_grade[judged] + 1)
    return out


def _table_gain(r: JudgedRanking, gains: dict[int, float], grade: IntArray) -> FloatArray:
    """The table gain of each grade (>= 0): the mapped gain, else the grade."""
    out = grade.astype(np.float64)
    for level, gain in gains.items():  # one pass per mapped grade
        out[grade == level] = gain
    return out


def _powers(p: float, n: int) -> FloatArray:
    """``p ** i`` for i = 0 .. n (by repeated multiplication, as trec_eval's loops)."""
    out = np.full(n + 1, p, dtype=np.float64)
    out[0] = 1.0
    result: FloatArray = np.cumprod(out, dtype=np.float64)
    return result


def _ideal_ranks(levels: int, gains: dict[int, float], present: set[int]) -> dict[int, int]:
    """trec_eval's ideal walk of a query's sorted gain table: ``{grade: order}`` for the grades
    whose docs fill the ideal ranking, in that order (``present``: grades the query has)."""
    table = gain_table_order(levels, gains)
    if not table or table[-1][1] <= 0:
        return {}
    order: dict[int, int] = {}
    for level, gain in reversed(table):
        if level not in present:
            continue  # skipped whatever its gain
        if gain <= 0:
            break
        order[level] = len(order)
    return order


def _trec_ndcg_gains(r: JudgedRanking, m: Measure) -> FloatArray:
    gains = parse_gains(str(m.param("gains")))
    levels = _levels(r)
    judged = r.grade >= 0
    weights = np.zeros(r.grade.size, dtype=np.float64)
    weights[judged] = _table_gain(r, gains, r.grade[judged]) / np.log2(r.position[judged] + 2.0)
    actual = r.total(judged, weights)
    # the ideal: qrels rows (grade >= 0) ordered by their grade's place in the walk
    rows = np.flatnonzero(r.qrels_grade >= 0)
    row_query, row_grade = r.qrels_query[rows], r.qrels_grade[rows]
    top = int(levels.max(initial=0))
    present = np.zeros((r.n_queries, max(top, 1)), dtype=bool)
    present[row_query, row_grade] = True
    place = np.full(row_grade.size, -1, dtype=np.int64)
    # the walk depends on the query's levels and on which grades it has: once per distinct pair
    signature = _signatures(levels, present)
    for code in np.unique(signature).tolist():
        queries = np.flatnonzero(signature == code)
        first = int(queries[0])
        grades_here = set(np.flatnonzero(present[first]).tolist())
        ranks = _ideal_ranks(int(levels[first]), gains, grades_here)
        lookup = np.full(max(top, 1), -1, dtype=np.int64)
        for level, rank in ranks.items():
            lookup[level] = rank
        mine = np.isin(row_query, queries)
        place[mine] = lookup[row_grade[mine]]
    kept = place >= 0
    k_query, k_place, k_grade = row_query[kept], place[kept], row_grade[kept]
    order = np.lexsort((k_place, k_query))
    k_query, k_grade = k_query[order], k_grade[order]
    starts = np.searchsorted(k_query, np.arange(r.n_queries))
    position = np.arange(k_query.size) - starts[k_query]
    ideal_weights = _table_gain(r, gains, k_grade) / np.log2(position + 2.0)
    ideal = np.bincount(k_query, weights=ideal_weights, minlength=r.n_queries)
    out = np.zeros(r.n_queries, dtype=np.float64)
    np.divide(actual, ideal, out=out, where=ideal > 0)
    return out


def _signatures(levels: IntArray, present: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """An integer code per query, equal for queries with the same levels and grades present."""
    packed = np.packbits(present, axis=1)
    keys = np.concatenate([levels[:, None].view(np.uint8), packed], axis=1)
    _, codes = np.unique(keys, axis=0, return_inverse=True)
    return np.asarray(codes, dtype=np.int64).reshape(-1)


_ERR_MAX_GRADE = 4  # gdeval.pl's $MAX_JUDGMENT


def _count_higher(r: JudgedRanking, query: IntArray, grade: IntArray) -> IntArray:
    """For each (query, grade) pair, the number of the query's qrels rows with a larger grade."""
    qq, qg = r.qrels_query, r.qrels_grade  # sorted by (query, grade descending)
    width = int(qg.max(initial=0)) + 1
    key = qq * width + (width - 1 - np.maximum(qg, 0))  # ascending
    wanted = query * width + (width - 1 - grade)  # rows of a larger grade have smaller keys
    first = np.searchsorted(key, query * width, side="left")
    result: IntArray = np.searchsorted(key, wanted, side="left") - first
    return result
