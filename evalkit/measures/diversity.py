"""alpha-nDCG and the intent-aware measures over subtopic qrels, as ndeval computes them.

ndeval (Clarke et al.; the C program of the TREC Web track diversity task, inside the
``pyndeval`` package that ir_measures calls) judges each document per *subtopic* (intent) of a
query. The subtopic qrels are a frame with columns ``query_id``, ``subtopic``, ``doc_id``
(strings) and ``relevance`` (int); a document is relevant to a subtopic when its grade there is
``>= rel`` (default 1) and ``>= 0`` (relevance is binary, as in ndeval). A query's subtopics
that no document is relevant to are left out; ``A`` below is the number left.

With ``c_s(i)`` the number of documents ranked above position ``i`` (0-based) that are relevant
to subtopic ``s``, the document at ``i`` gains ``g(i) = sum over its subtopics of
(1 - alpha) ** c_s(i)``. Then, as ndeval (``k`` the cutoff, ``d(i) = log 2 / log(i + 2)``):

* ``alpha_DCG@k`` = sum over i < k of g(i) d(i), divided by the same sum for an "ideal ideal"
  ranking that gains ``A (1 - alpha) ** i`` at each rank (not divided at k = 1, as ndeval);
* ``ERR_IA@k``: the same with ``1 / (i + 1)`` for ``d(i)`` and alpha = 0.5 (ndeval's);
* ``alpha_nDCG@k``, ``nERR_IA@k``: divided instead by the value of ndeval's greedy ideal
  ranking of the qrels (at each rank the doc of largest gain, ties to the largest doc ID);
* ``NRBP`` = (1 - (1 - alpha) beta) / A * sum over every rank of g(i) beta ** i; ``nNRBP``
  divides it by the ideal ranking's NRBP;
* ``AP_IA``: the mean over the A subtopics of the subtopic's average precision;
* ``P_IA@k``: (subtopic, doc) relevant pairs in the top k / (k A);
* ``StRecall@k``: subtopics with a relevant doc in the top k / A.

Every measure is 0.0 for a query with A = 0 (ndeval gives nNRBP NaN there) and for a query
the run does not rank. ndeval stops at rank 20; these kernels compute the same sums at any
cutoff. The run is ranked as by :func:`evalkit.measures.score` (``ties="trec"``: score
descending, then doc ID descending, which is ndeval's ``-traditional`` order; pyndeval itself
breaks ties by doc ID ascending).

Everything is numpy over flattened (query, subtopic, rank) arrays; the greedy ideal ranking is
one vectorized step per rank over every query still choosing, never a loop per query.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Unpack

import numpy as np
import numpy.typing as npt

from evalkit._arrays import BoolArray, FloatArray, IntArray
from evalkit.errors import InputError, MeasureError, RunOnlyQueriesWarning
from evalkit.formats.rules import require_columns
from evalkit.measures._catalog import NONNEGATIVE, REL, ParamValue, SpecOptions, declare
from evalkit.measures.judged import JudgedRanking, ratio
from evalkit.measures.ranking import DEFAULT_OPTIONS, ScoreOptions, judged_ranking
from evalkit.registry import Registry

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evalkit.measures.names import Measure

__all__ = [
    "DIVERSITY_KERNELS",
    "DIVERSITY_MEASURE_NAMES",
    "SUBTOPIC_COLUMNS",
    "DiversityKernel",
    "SubtopicRanking",
    "check_subtopic_qrels",
    "diversity_measures",
    "diversity_values",
    "subtopic_kernel",
    "subtopic_ranking",
]

#: The columns of a subtopic qrels frame.
SUBTOPIC_COLUMNS = ("query_id", "subtopic", "doc_id", "relevance")
_ERR_ALPHA = 0.5  # ndeval's default alpha, which ir_measures uses for ERR_IA, nERR_IA
_ALPHA: tuple[str, ParamValue] = ("alpha", 0.5)  # ndeval's defaults (ir_measures' too)
_BETA: tuple[str, ParamValue] = ("beta", 0.5)
_LOG2 = float(np.log(2.0))


def check_subtopic_qrels(subtopics: pd.DataFrame) -> _Sorted:
    """Raise InputError unless ``subtopics`` has string ``query_id``, ``subtopic``, ``doc_id``
    and integer ``relevance`` columns and judges no (query, subtopic, doc) twice; returns its
    rows sorted by (query, doc, subtopic) (byte order, strcmp's)."""
    # here, not at the top: the kernels' module loads without pandas (evalkit trec-eval)
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalkit.measures._ids import id_array, integer_column

    require_columns(subtopics, "subtopics", SUBTOPIC_COLUMNS)
    arrays = {c: id_array(subtopics, c, "subtopics") for c in ("query_id", "subtopic", "doc_id")}
    grade = integer_column(subtopics, "relevance", "subtopics")
    if grade.size == 0:
        raise InputError("subtopics holds no judgments; expected at least one row")
    table = pa.table({"q": arrays["query_id"], "d": arrays["doc_id"], "s": arrays["subtopic"]})
    order = pc.sort_indices(
        table, sort_keys=[("q", "ascending"), ("d", "ascending"), ("s", "ascending")]
    )
    ordered = table.take(order)
    q = ordered["q"].combine_chunks()
    d = ordered["d"].combine_chunks()
    new_query = _changes(q)
    new_pair = new_query | _changes(d)
    same = ~(new_pair | _changes(ordered["s"].combine_chunks()))
    same[0] = False
    if same.any():
        at = int(np.flatnonzero(same)[0])
        rows = order.to_numpy()[[at - 1, at]]
        raise InputError(
            f"subtopics judges (query, subtopic, doc) ({q[at].as_py()!r}, "
            f"{ordered['s'][at].as_py()!r}, {d[at].as_py()!r}) twice (rows "
            f"{int(rows.min())} and {int(rows.max())}); remove the extra rows"
        )
    # subtopics numbered in order of first appearance of the ID (pyndeval's numbering)
    number = pc.dictionary_encode(arrays["subtopic"].combine_chunks()).indices
    return _Sorted(
        order=order.to_numpy().astype(np.int64),
        query=q,
        doc=d,
        new_query=new_query,
        new_pair=new_pair,
        grade=grade,
        number=number.to_numpy(zero_copy_only=False).astype(np.int64),
    )


def _changes(values: pa.Array) -> BoolArray:
    """True where an entry differs from the one before it (and at the first)."""
    import pyarrow.compute as pc

    out = np.ones(len(values), dtype=bool)
    if len(values) > 1:
        differs = pc.not_equal(values.slice(1), values.slice(0, len(values) - 1))
        out[1:] = differs.to_numpy(zero_copy_only=False)
    return out


class _Sorted(NamedTuple):  # not a dataclass: faster to define at import
    """Subtopic qrels rows sorted by (query, doc, subtopic): ``order`` (their frame rows),
    the sorted query and doc IDs, where a query / a (query, doc) pair starts, and per frame
    row its grade and subtopic number."""

    order: IntArray
    query: pa.Array
    doc: pa.Array
    new_query: BoolArray
    new_pair: BoolArray
    grade: IntArray
    number: IntArray


@dataclass(frozen=True)
class SubtopicRanking:
    """The run's ranking joined with subtopic qrels; the input of every diversity kernel.

    ``ranking``: the judged ranking of the subtopic qrels' (query, doc) pairs (``grade`` holds
    each entry's pair code: the pair's index, or -1 - index when no subtopic grades the doc
    >= 0); pairs are numbered in (query, doc ID) byte order; ``pair_query``: int64[p], the
    query (index into ``ranking.query_ids``) of each pair; ``rows_pair``, ``rows_subtopic``,
    ``rows_grade``: int64[s], one entry per qrels row, sorted by (pair, subtopic order), the
    subtopic as a dense code over (query, subtopic) (numbered in order of first appearance of
    the subtopic ID, as pyndeval numbers them).
    """

    ranking: JudgedRanking
    pair_query: IntArray
    rows_pair: IntArray
    rows_subtopic: IntArray
    rows_grade: IntArray
    n_subtopics: int
    _cache: dict[tuple[Any, ...], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def n_queries(self) -> int:
        return self.ranking.n_queries

    def once(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """``make()``, computed on the first call with this key only."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


#: A diversity kernel: the subtopic ranking and a parsed measure → float64[n], one value per
#: query.
DiversityKernel = Callable[[SubtopicRanking, "Measure"], FloatArray]

#: Measure name → kernel over a :class:`SubtopicRanking`; every diversity measure.
DIVERSITY_KERNELS: Registry[DiversityKernel] = Registry("measure")


def subtopic_kernel(
    name: str, description: str, **spec: Unpack[SpecOptions]
) -> Callable[[DiversityKernel], DiversityKernel]:
    """Declare the measure ``name`` in the catalog (as :func:`evalkit.measures.judged.kernel`
    does) and register the decorated function as its kernel in :data:`DIVERSITY_KERNELS`."""

    def register(function: DiversityKernel) -> DiversityKernel:
        declare(name, description, function.__module__, needs="subtopics", **spec)
        DIVERSITY_KERNELS.register(name, function)
        return function

    return register


def subtopic_ranking(
    subtopics: pd.DataFrame, run: pd.DataFrame, options: ScoreOptions = DEFAULT_OPTIONS
) -> SubtopicRanking:
    """Validate ``subtopics`` and rank ``run`` against it (the same ranking rules and options
    as :func:`evalkit.measures.score`; ``judged_only`` keeps the docs the subtopic qrels grade
    >= 0 for some subtopic)."""
    import pyarrow as pa

    rows = check_subtopic_qrels(subtopics)
    grade = rows.grade[rows.order]  # per sorted row
    number = rows.number[rows.order]
    row_pair = np.cumsum(rows.new_pair) - 1
    pair_first = np.flatnonzero(rows.new_pair)
    n_pairs = pair_first.size
    best = np.maximum.reduceat(grade, pair_first)
    # each pair's code, carried as the "grade" of a derived qrels: >= 0 when some subtopic
    # grades the doc >= 0 (so -J keeps it), else negative
    code = np.arange(n_pairs, dtype=np.int64)
    firsts = pa.array(pair_first)
    derived: pd.DataFrame = pa.table(
        {
            "query_id": rows.query.take(firsts).cast(pa.large_string()),
            "doc_id": rows.doc.take(firsts).cast(pa.large_string()),
            "relevance": np.where(best >= 0, code, -code - 1),
        }
    ).to_pandas()
    with warnings.catch_warnings():
        # the run's queries without judgments were reported by the main ranking already
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        ranking = judged_ranking(derived, run, options)
    if options.max_docs is not None or options.judged_only:
        ranking = ranking.restricted(max_docs=options.max_docs, judged_only=options.judged_only)
    # the query of each row and pair, counted in sorted order: ranking.query_ids holds the
    # same distinct IDs, sorted the same way (pyarrow's byte order)
    query_of_row = np.cumsum(rows.new_query) - 1
    pair_query = query_of_row[pair_first]
    # dense (query, subtopic) codes, ordered by query then subtopic number
    width = int(number.max()) + 1
    unique_keys, row_subtopic = np.unique(query_of_row * width + number, return_inverse=True)
    within = np.lexsort((number, row_pair))  # rows by (pair, subtopic number)
    return SubtopicRanking(
        ranking=ranking,
        pair_query=pair_query,
        rows_pair=row_pair[within],
        rows_subtopic=row_subtopic.astype(np.int64)[within],
        rows_grade=grade[within],
        n_subtopics=int(unique_keys.size),
    )


def _index_in(values: Sequence[str], known: Sequence[str]) -> npt.NDArray[np.float64]:
    """Index of each of ``values`` in ``known`` (float64; NaN where absent)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    index = pc.index_in(
        pa.array(list(values), pa.large_string()),
        value_set=pa.array(list(known), pa.large_string()),
    )
    result: npt.NDArray[np.float64] = index.to_numpy(zero_copy_only=False).astype(np.float64)
    return result


# --- the relevant (pair, subtopic) rows at a relevance level --------------------------------


class _Relevant(NamedTuple):  # not a dataclass: faster to define at import
    """The qrels rows relevant at one ``rel``: per pair (CSR over ``rows_subtopic``), the
    number of subtopics per query (``A``) and of relevant docs per subtopic."""

    start: IntArray  # int64[p + 1]: the pair's first row in rows_subtopic
    rows_subtopic: IntArray  # dense subtopic code of each relevant row, by (pair, order)
    rows_pair: IntArray
    actual: FloatArray  # float64[n]: A, subtopics with a relevant doc per query
    per_subtopic: FloatArray  # float64[n_subtopics]: relevant docs of each subtopic
    subtopic_query: IntArray  # int64[n_subtopics]


def _relevant(sr: SubtopicRanking, rel: int) -> _Relevant:
    def make() -> _Relevant:
        keep = sr.rows_grade >= max(rel, 0)
        pairs = sr.rows_pair[keep]
        subs = sr.rows_subtopic[keep]
        n_pairs = sr.pair_query.size
        start = np.zeros(n_pairs + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs, minlength=n_pairs), out=start[1:])
        per_subtopic = np.bincount(subs, minlength=sr.n_subtopics).astype(np.float64)
        subtopic_query = np.zeros(sr.n_subtopics, dtype=np.int64)
        subtopic_query[subs] = sr.pair_query[pairs]
        actual = np.bincount(subtopic_query[per_subtopic > 0], minlength=sr.n_queries).astype(
            np.float64
        )
        return _Relevant(start, subs, pairs, actual, per_subtopic, subtopic_query)

    result: _Relevant = sr.once(("relevant", max(rel, 0)), make)
    return result


def _expand(start: IntArray, items: IntArray) -> tuple[IntArray, IntArray]:
    """For CSR offsets ``start`` and the selected ``items``: (item index, row) of every row."""
    counts = start[items + 1] - start[items]
    owner = np.repeat(np.arange(items.size, dtype=np.int64), counts)
    offset = np.arange(owner.size, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, start[items][owner] + offset


class _RunGains(NamedTuple):  # not a dataclass: faster to define at import
    """The run side at one (rel, alpha): per relevant (entry, subtopic) row its query,
    position, subtopic, count of earlier docs of that subtopic (``seen``); per judged entry
    its gain."""

    query: IntArray
    position: IntArray
    subtopic: IntArray
    seen: IntArray
    entry_query: IntArray
    entry_position: IntArray
    entry_gain: FloatArray


def _run_gains(sr: SubtopicRanking, rel: int, alpha: float) -> _RunGains:
    def make() -> _RunGains:
        relevant = _relevant(sr, rel)
        r = sr.ranking
        pair = np.where(r.grade >= 0, r.grade, -r.grade - 1)
        owner, row = _expand(relevant.start, pair)
        subtopic = relevant.rows_subtopic[row]
        # rows are in (query, position, subtopic order); a stable sort by subtopic keeps
        # each subtopic's rows in rank order
        by_subtopic = np.argsort(subtopic, kind="stable")
        sorted_sub = subtopic[by_subtopic]
        first = np.ones(sorted_sub.size, dtype=bool)
        first[1:] = sorted_sub[1:] != sorted_sub[:-1]
        starts = np.flatnonzero(first)
        lengths = np.diff(np.r_[starts, sorted_sub.size])
        seen = np.empty(sorted_sub.size, dtype=np.int64)
        seen[by_subtopic] = np.arange(sorted_sub.size) - np.repeat(starts, lengths)
        gain = np.power(1.0 - alpha, seen.astype(np.float64))
        entry_gain = np.bincount(owner, weights=gain, minlength=pair.size).astype(np.float64)
        return _RunGains(
            query=r.query[owner],
            position=r.position[owner],
            subtopic=subtopic,
            seen=seen,
            entry_query=r.query,
            entry_position=r.position,
            entry_gain=entry_gain,
        )

    result: _RunGains = sr.once(("run", max(rel, 0), alpha), make)
    return result


# --- ndeval's greedy ideal ranking -----------------------------------------------------------


def _ideal_gains(sr: SubtopicRanking, rel: int, alpha: float, depth: int | None) -> FloatArray:
    """float64[n, D]: the gain at each rank of ndeval's greedy ideal ranking (D ranks: every
    relevant doc when ``depth`` is None, else at most ``depth``), 0 past a query's relevant
    docs. At each rank every query still choosing takes the doc of largest gain (the sum of
    its subtopics' current weights, 1 times (1 - alpha) per doc of the subtopic already
    chosen), ties to the largest doc ID."""

    def make() -> FloatArray:
        relevant = _relevant(sr, rel)
        # candidate pairs: those relevant to some subtopic, by (query, doc ID descending)
        cand = np.flatnonzero(np.diff(relevant.start) > 0)
        cand = cand[np.lexsort((-cand, sr.pair_query[cand]))]  # pairs in (query, doc) order
        cand_query = sr.pair_query[cand]
        most = int(np.bincount(cand_query, minlength=1).max())
        steps = most if depth is None else min(depth, most)
        out = np.zeros((sr.n_queries, max(steps, 1)), dtype=np.float64)
        weight = np.ones(sr.n_subtopics, dtype=np.float64)
        owner, row = _expand(relevant.start, cand)  # rows by (candidate, subtopic order)
        row_sub = relevant.rows_subtopic[row]
        for step in range(steps):  # one vectorized step per rank, over every query
            if cand.size == 0:
                break
            # each candidate's gain, summed in subtopic order (as ndeval adds it up)
            score = np.bincount(owner, weights=weight[row_sub], minlength=cand.size)
            first = np.ones(cand.size, dtype=bool)
            first[1:] = cand_query[1:] != cand_query[:-1]
            starts = np.flatnonzero(first)
            lengths = np.diff(np.r_[starts, cand.size])
            best = np.repeat(np.maximum.reduceat(score, starts), lengths)
            # per query, the first candidate of largest gain: the largest doc ID among them
            hit = np.flatnonzero(score == best)
            lead = np.ones(hit.size, dtype=bool)
            lead[1:] = cand_query[hit[1:]] != cand_query[hit[:-1]]
            chosen = hit[lead]
            out[cand_query[chosen], step] = score[chosen]
            taken = np.zeros(cand.size, dtype=bool)
            taken[chosen] = True
            weight[row_sub[taken[owner]]] *= 1.0 - alpha
            # drop the chosen candidates and their rows
            left = ~taken
            remap = np.cumsum(left) - 1
            keep_rows = left[owner]
            owner, row_sub = remap[owner[keep_rows]], row_sub[keep_rows]
            cand, cand_query = cand[left], cand_query[left]
        return out

    result: FloatArray = sr.once(("ideal", max(rel, 0), alpha, depth), make)
    return result


# --- the measures ----------------------------------------------------------------------------


def _discount(position: npt.NDArray[Any]) -> FloatArray:
    """ndeval's ``log(2) / log(rank + 2)`` for 0-based ranks (1 at rank 0)."""
    result: FloatArray = _LOG2 / np.log(position.astype(np.float64) + 2.0)
    return result


def _cut_sum(sr: SubtopicRanking, gains: _RunGains, k: int, weights: FloatArray) -> FloatArray:
    mask = gains.entry_position < k
    total: FloatArray = np.bincount(
        gains.entry_query[mask], weights=weights[mask], minlength=sr.n_queries
    ).astype(np.float64)
    return total


def _ideal_ideal(actual: FloatArray, alpha: float, k: int, discount: FloatArray) -> FloatArray:
    """ndeval's "ideal ideal" normalizer at cutoff k: sum over i < k of A (1 - alpha)^i d(i)."""
    factor = np.power(1.0 - alpha, np.arange(k, dtype=np.float64)) * discount[:k]
    result: FloatArray = actual * float(factor.sum())
    return result


def _rel(m: Measure) -> int:
    return int(m.param("rel"))


def _alpha(m: Measure) -> float:
    alpha = float(m.param("alpha"))
    if not 0.0 <= alpha <= 1.0:
        raise MeasureError(f"measure {str(m)!r}: alpha must be in 0..1, got {alpha}")
    return alpha


def _beta(m: Measure) -> float:
    beta = float(m.param("beta"))
    if not 0.0 <= beta <= 1.0:
        raise MeasureError(f"measure {str(m)!r}: beta must be in 0..1, got {beta}")
    return beta


def _cutoff(m: Measure) -> int:
    return int(m.cutoff or 1)  # every cutoff measure requires one (checked by its spec)


def _cumulative(
    sr: SubtopicRanking, m: Measure, alpha: float, kind: str, normalized: bool
) -> FloatArray:
    """alpha_DCG / ERR_IA (``kind`` "dcg" / "err") at the measure's cutoff, and their
    ideal-normalized versions."""
    rel, k = _rel(m), _cutoff(m)
    gains = _run_gains(sr, rel, alpha)
    ranks = np.arange(k, dtype=np.float64)
    discount = _discount(ranks) if kind == "dcg" else 1.0 / (ranks + 1.0)
    at = _discount(gains.entry_position) if kind == "dcg" else 1.0 / (gains.entry_position + 1.0)
    value = _cut_sum(sr, gains, k, gains.entry_gain * at)
    relevant = _relevant(sr, rel)
    if normalized:
        ideal = _ideal_gains(sr, rel, alpha, k)
        width = min(k, ideal.shape[1])
        ideal_value = ideal[:, :width] @ discount[:width]
        return ratio(value, ideal_value)
    if k == 1:  # ndeval leaves its first rank undivided
        return np.where(relevant.actual > 0, value, 0.0)
    return ratio(value, _ideal_ideal(relevant.actual, alpha, k, discount))


@subtopic_kernel(
    "alpha_DCG",
    "alpha-DCG (Clarke et al. 2008), over ndeval's ideal-ideal gain",
    cutoff="required",
    params=(_ALPHA, REL),
    bounds=NONNEGATIVE,
)
def _alpha_dcg(sr: SubtopicRanking, m: Measure) -> FloatArray:
    return _cumulative(sr, m, _alpha(m), "dcg", normalized=False)


@subtopic_kernel(
    "alpha_nDCG",
    "alpha-DCG / alpha-DCG of ndeval's greedy ideal ranking",
    cutoff="required",
    params=(_ALPHA, REL),
)
def _alpha_ndcg(sr: SubtopicRanking, m: Measure) -> FloatArray:
    return _cumulative(sr, m, _alpha(m), "dcg", normalized=True)


@subtopic_kernel(
    "ERR_IA",
    "intent-aware ERR (ndeval, alpha 0.5), over ideal-ideal",
    cutoff="required",
    params=(REL,),
    bounds=NONNEGATIVE,
)
def _err_ia(sr: SubtopicRanking, m: Measure) -> FloatArray:
    return _cumulative(sr, m, _ERR_ALPHA, "err", normalized=False)


@subtopic_kernel(
    "nERR_IA", "intent-aware ERR / ERR-IA of the ideal ranking", cutoff="required", params=(REL,)
)
def _nerr_ia(sr: SubtopicRanking, m: Measure) -> FloatArray:
    return _cumulative(sr, m, _ERR_ALPHA, "err", normalized=True)


def _nrbp_value(sr: SubtopicRanking, rel: int, alpha: float, beta: float) -> FloatArray:
    gains = _run_gains(sr, rel, alpha)
    decay = np.power(beta, gains.entry_position.astype(np.float64))
    total = np.bincount(
        gains.entry_query, weights=gains.entry_gain * decay, minlength=sr.n_queries
    ).astype(np.float64)
    actual = _relevant(sr, rel).actual
    return ratio(total * (1.0 - (1.0 - alpha) * beta), actual)


@subtopic_kernel(
    "NRBP", "novelty- and rank-biased precision (Clarke et al. 2009)", params=(_ALPHA, _BETA, REL)
)
def _nrbp(sr: SubtopicRanking, m: Measure) -> FloatArray:
    return _nrbp_value(sr, _rel(m), _alpha(m), _beta(m))


@subtopic_kernel("nNRBP", "NRBP / NRBP of the ideal ranking", params=(_ALPHA, _BETA, REL))
def _nnrbp(sr: SubtopicRanking, m: Measure) -> FloatArray:
    rel, alpha, beta = _rel(m), _alpha(m), _beta(m)
    ideal = _ideal_gains(sr, rel, alpha, None)
    decay = np.power(beta, np.arange(ideal.shape[1], dtype=np.float64))
    # (1 - (1 - alpha) beta) / A cancels out of the ratio
    gains = _run_gains(sr, rel, alpha)
    run_decay = np.power(beta, gains.entry_position.astype(np.float64))
    total = np.bincount(
        gains.entry_query, weights=gains.entry_gain * run_decay, minlength=sr.n_queries
    ).astype(np.float64)
    return ratio(total, ideal @ decay)


@subtopic_kernel("AP_IA", "mean over the subtopics of their average precision", params=(REL,))
def _ap_ia(sr: SubtopicRanking, m: Measure) -> FloatArray:
    rel = _rel(m)
    gains = _run_gains(sr, rel, _ERR_ALPHA)
    relevant = _relevant(sr, rel)
    precision = (gains.seen + 1.0) / (gains.position + 1.0)
    per_subtopic = np.bincount(gains.subtopic, weights=precision, minlength=sr.n_subtopics).astype(
        np.float64
    )
    ap = ratio(per_subtopic, relevant.per_subtopic)
    total = np.bincount(relevant.subtopic_query, weights=ap, minlength=sr.n_queries)
    return ratio(total.astype(np.float64), relevant.actual)


@subtopic_kernel(
    "P_IA",
    "relevant (subtopic, doc) pairs in the top k / (k * subtopics)",
    cutoff="required",
    params=(REL,),
)
def _p_ia(sr: SubtopicRanking, m: Measure) -> FloatArray:
    rel, k = _rel(m), _cutoff(m)
    gains = _run_gains(sr, rel, _ERR_ALPHA)
    hits = np.bincount(gains.query[gains.position < k], minlength=sr.n_queries)
    return ratio(hits.astype(np.float64), k * _relevant(sr, rel).actual)


@subtopic_kernel(
    "StRecall",
    "subtopics with a relevant doc in the top k / subtopics",
    cutoff="required",
    params=(REL,),
)
def _st_recall(sr: SubtopicRanking, m: Measure) -> FloatArray:
    rel, k = _rel(m), _cutoff(m)
    gains = _run_gains(sr, rel, _ERR_ALPHA)
    new = (gains.seen == 0) & (gains.position < k)
    covered = np.bincount(gains.query[new], minlength=sr.n_queries)
    return ratio(covered.astype(np.float64), _relevant(sr, rel).actual)


#: The measures that need subtopic qrels.
DIVERSITY_MEASURE_NAMES: frozenset[str] = frozenset(DIVERSITY_KERNELS.names())


def diversity_measures(
    measures: Sequence[Measure], subtopics: pd.DataFrame | None
) -> list[Measure]:
    """The diversity measures among ``measures``; raises MeasureError when there are some and
    no ``subtopics``."""
    wanted = [m for m in measures if m.name in DIVERSITY_MEASURE_NAMES]
    if wanted and subtopics is None:
        raise MeasureError(
            f"measure {str(wanted[0])!r} needs subtopic qrels: pass "
            "subtopics=read_subtopic_qrels(path) (on the command line: --subtopic-qrels PATH)"
        )
    return wanted


def diversity_values(
    subtopics: pd.DataFrame | None,
    run: pd.DataFrame,
    measures: Sequence[Measure],
    query_ids: Sequence[str],
    options: ScoreOptions = DEFAULT_OPTIONS,
) -> dict[Measure, FloatArray]:
    """Per-query values (float64[len(query_ids)], in ``query_ids`` order) of each diversity
    measure of ``measures``; 0.0 for a query the subtopic qrels do not judge. Raises
    MeasureError when such a measure is asked for without ``subtopics``."""
    wanted = diversity_measures(measures, subtopics)
    if not wanted or subtopics is None:  # (no subtopics with wanted measures has raised)
        return {}
    sr = subtopic_ranking(subtopics, run, options)
    index = _index_in(query_ids, sr.ranking.query_ids)
    found = ~np.isnan(index)
    at = np.where(found, index, 0).astype(np.int64)
    out: dict[Measure, FloatArray] = {}
    for m in wanted:
        values = DIVERSITY_KERNELS.get(m.name)(sr, m)
        out[m] = np.where(found, values[at] if values.size else 0.0, 0.0)
    return out
