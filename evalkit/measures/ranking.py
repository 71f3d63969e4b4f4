"""Turn qrels and a run into a :class:`JudgedRanking` (the kernels' input), by the options of
:class:`ScoreOptions`; and the kernels' values on it (:func:`measure_values`).

:func:`rank_columns` is the core: it takes the columns as numpy arrays (IDs as
:class:`~evalkit.formats.strings.Strings`: bytes and bounds), imports neither pandas nor
pyarrow, and is what ``evalkit trec-eval`` ranks a TREC file read by
:mod:`evalkit.formats.trec_arrays` with. :func:`judged_ranking` is the DataFrame layer over
it: it checks the frames and views their columns as such arrays (:mod:`evalkit.measures._ids`).

Everything is vectorized (numpy over query-grouped arrays); no Python loop runs per document,
and one only per query ID block (a dictionary lookup). The steps:

1. query IDs become integer codes (the qrels' sorted query IDs, :mod:`evalkit.measures._codes`),
   looked up once per block of consecutive run rows with the same query ID; run rows of other
   queries are dropped and counted in a :class:`~evalkit.errors.RunOnlyQueriesWarning`. A run
   whose queries' rows are not each in one block (rows sorted by score across queries, say) is
   ranked through a stable radix sort of its rows by query;
2. each document ID gets a 64-bit fingerprint; one sort of packed (query, fingerprint, row)
   integers finds duplicate (query, doc) pairs and the run rows that the qrels judge, each
   confirmed on the ID strings (:mod:`evalkit.measures._join`);
3. the ranking order: score descending, then doc ID descending, or the run's own order, by the
   ``ties`` and ``trec_version`` policies (:mod:`evalkit.measures._order`).

Large arrays are built block by block (small temporaries, fewer page faults) and reused where
possible. Every core is used: the qrels' fingerprints are computed while the query codes are
worked out, and a large run grouped by query is ranked in parts of whole queries of about a
million rows (at least one per core), each computing its own rows' fingerprints and sort keys:
memory holds the parts being ranked, not such arrays for every row. Neither thread count nor
parts change a result: each thread ranks or sorts its own whole queries
(:mod:`evalkit.measures._sorting`).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray, IntArray
from evalkit.errors import InputError, RunOnlyQueriesWarning
from evalkit.formats.rules import require_columns
from evalkit.formats.strings import Strings
from evalkit.formats.trec_arrays import QrelsColumns, RunColumns
from evalkit.measures import _join
from evalkit.measures._codes import query_blocks, quote_ids, raise_duplicates, sorted_codes
from evalkit.measures._join import (
    Judgments,
    SlicedFingerprints,
    confirmed_duplicates,
    join,
    local_rows,
    packed_sort,
    prepare_qrels,
)
from evalkit.measures._order import given_positions, keep_first, trec_positions
from evalkit.measures._sorting import jobs, lexsort, stable_order, threads
from evalkit.measures.judged import KERNELS, JudgedRanking

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.measures.names import Measure

__all__ = [
    "DEFAULT_OPTIONS",
    "Duplicates",
    "ScoreOptions",
    "Ties",
    "TrecVersion",
    "judged_ranking",
    "measure_values",
    "rank_columns",
]

Ties = Literal["trec", "given"]
TrecVersion = Literal["9", "10"]
Duplicates = Literal["error", "keep-first"]


@dataclass(frozen=True)
class ScoreOptions:
    """How a run is ranked and scored: the options of :func:`evalkit.measures.score` (whose
    docstring says what each does), taken together by the ranking builders and the kernels.

    ``ties``, ``duplicates`` and ``trec_version`` build each query's ranking; ``max_docs`` and
    ``judged_only`` (trec_eval's ``-M``, ``-J``) cut it before the kernels run; ``num_docs``
    (``-N``) is the collection size ``utility`` may use; ``complete=False`` leaves out the
    qrels queries the run does not rank. Raises InputError for a value outside these.
    """

    ties: Ties = "trec"
    duplicates: Duplicates = "error"
    trec_version: TrecVersion = "10"
    max_docs: int | None = None
    judged_only: bool = False
    complete: bool = True
    num_docs: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("max_docs", self.max_docs), ("num_docs", self.num_docs)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise InputError(f"{name} must be a non-negative integer or None, got {value!r}")
        if self.ties not in ("trec", "given"):
            raise InputError(f"ties must be 'trec' or 'given', got {self.ties!r}")
        if self.trec_version not in ("9", "10"):
            raise InputError(f"trec_version must be '9' or '10', got {self.trec_version!r}")
        if self.duplicates not in ("error", "keep-first"):
            raise InputError(f"duplicates must be 'error' or 'keep-first', got {self.duplicates!r}")


#: The options :func:`evalkit.measures.score` uses by default.
DEFAULT_OPTIONS: Final = ScoreOptions()


def measure_values(
    ranking: JudgedRanking,
    parsed: Sequence[Measure],
    options: ScoreOptions = DEFAULT_OPTIONS,
    precomputed: Mapping[Measure, FloatArray] | None = None,
) -> FloatArray:
    """float64[queries, measures]: the kernels' values on ``ranking`` cut and set by
    ``options`` (``max_docs``, ``judged_only``, ``trec_version``, ``num_docs``; a query the run
    does not rank is told apart for the kernels that need it), with the ``precomputed``
    columns (per query, in ``ranking.query_ids`` order) taken as they are."""
    ranked = ranking.num_ret > 0
    if options.max_docs is not None or options.judged_only:
        ranking = ranking.restricted(max_docs=options.max_docs, judged_only=options.judged_only)
    ranking = ranking.with_options(
        trec_version=options.trec_version, num_docs=options.num_docs, unranked=~ranked
    )
    diverse = precomputed or {}
    values = [diverse[m] if m in diverse else KERNELS.get(m.name)(ranking, m) for m in parsed]
    matrix: FloatArray = np.column_stack(values).astype(np.float64, copy=False)
    return matrix


def judged_ranking(
    qrels: pd.DataFrame, run: pd.DataFrame, options: ScoreOptions = DEFAULT_OPTIONS
) -> JudgedRanking:
    """Validate ``qrels`` and ``run`` and build the judged ranking the kernels work on, by the
    ranking ``options`` (``ties``, ``duplicates``, ``trec_version``; the others are applied to
    the ranking afterwards, :func:`measure_values`).

    Raises InputError for missing columns, non-string or missing IDs, non-integer grades,
    NaN scores, a (query, doc) pair judged twice, or (with ``duplicates="error"``) a doc listed
    twice in one query's ranking.
    """
    from evalkit.measures._ids import as_strings, id_array, integer_column, score_column

    require_columns(qrels, "qrels", ("query_id", "doc_id", "relevance"))
    require_columns(run, "run", ("query_id", "doc_id", "score"))
    qrels_q = as_strings(id_array(qrels, "query_id", "qrels"))
    qrels_d = as_strings(id_array(qrels, "doc_id", "qrels"))
    grades = integer_column(qrels, "relevance", "qrels")
    run_q = as_strings(id_array(run, "query_id", "run"))
    run_d = as_strings(id_array(run, "doc_id", "run"))
    scores = score_column(run, run_q)
    given = options.ties == "given" and "rank" in run
    ranks = integer_column(run, "rank", "run") if given else None
    return rank_columns(
        QrelsColumns(qrels_q, qrels_d, grades), RunColumns(run_q, run_d, scores, ranks), options
    )


def rank_columns(
    qrels: QrelsColumns, run: RunColumns, options: ScoreOptions = DEFAULT_OPTIONS
) -> JudgedRanking:
    """The judged ranking of ``run`` against ``qrels``, checked columns (numpy arrays, IDs as
    :class:`~evalkit.formats.strings.Strings`), by the ranking ``options``: what
    :func:`judged_ranking` builds of the frames they come from. ``run.rank`` is read with
    ``ties="given"`` only. Raises InputError for a (query, doc) pair judged twice, or (with
    ``duplicates="error"``) a doc listed twice in one query's ranking."""
    ties, duplicates, trec_version = options.ties, options.duplicates, options.trec_version
    qrels_q, qrels_d, grades = qrels
    run_q, run_d, scores, ranks = run
    if ties != "given":
        ranks = None
    # a small ranking is built on this thread alone (starting threads would cost more)
    threaded = len(run_q) + len(qrels_q) >= _PARALLEL_MIN_ROWS
    cores = threads() if threaded else 1
    with jobs(max(2, cores) if threaded else 1) as pool:
        # The run's doc fingerprints (in slices, on every core for a large run), and the
        # qrels' fingerprints, duplicate check and orders, are computed on other threads while
        # this one prepares the run (numpy and pyarrow release the GIL); ranking the run waits
        # for them only where it uses them.
        # query IDs are hashed once per block of consecutive rows of one query, not per row
        qrels_start, qrels_length = query_blocks(qrels_q)
        query_ids, head_qidx = sorted_codes(qrels_q.to_list(qrels_start))
        n_queries = len(query_ids)
        qrels_qidx = np.repeat(head_qidx, qrels_length)
        prepared = pool.submit(prepare_qrels, qrels_qidx, qrels_d, grades)
        # likewise, run query codes are looked up once per block of consecutive rows with the
        # same query ID (a run file lists each query's rows together)
        block_start, block_length = query_blocks(run_q)
        block_ids = run_q.to_list(block_start)
        code_of = {query: i for i, query in enumerate(query_ids)}
        block_query = np.array([code_of.get(q, -1) for q in block_ids], dtype=np.int64)
        if bool((block_query < 0).any()):
            unknown = list(dict.fromkeys(q for q in block_ids if q not in code_of))
            warnings.warn(
                f"the run has {len(unknown)} queries that the qrels do not judge (e.g. "
                f"{quote_ids(unknown)}); they were ignored",
                RunOnlyQueriesWarning,
                stacklevel=4,
            )
        # The rows ranked: every run row of a judged query, grouped by query. A run lists each
        # query's rows together (then the rows are taken as they are, without the run-only
        # queries); otherwise they are taken in query order (keeping their order within a query).
        rows, block_query, block_length = _grouped_rows(block_query, block_length)
        # The doc fingerprints: each part of a run taken in run order computes its own rows'
        # (_RunSide.rank); the rows of a run that is not, every row's at once, in slices.
        run_fp = (
            None
            if rows is None
            else SlicedFingerprints(
                run_d, pool, slices=cores if threaded and len(run_d) >= _PARALLEL_MIN_ROWS else 1
            )
        )
        # Internal query codes: in order of first appearance (then every sort below meets
        # presorted query blocks).
        code_of_query = _grouped_code_order(block_query, n_queries)
        qrels_code = code_of_query[qrels_qidx]
        # block i holds the rows of query code i: rows per query code
        num_ret = np.zeros(n_queries, dtype=np.int64)
        num_ret[: block_length.size] = block_length
        query_of_code = np.empty(n_queries, dtype=np.int64)
        query_of_code[code_of_query] = np.arange(n_queries, dtype=np.int64)
        side = _RunSide(
            query_first=np.concatenate([[0], np.cumsum(num_ret)]).astype(np.int64),
            rows=rows,
            row_index=None if rows is None else _inverse(rows, len(run_d)),
            docs=run_d,
            fp=run_fp,
            scores=scores if rows is None else scores[rows],
            ranks=ranks if ranks is None or rows is None else ranks[rows],
            ties=ties,
            double=trec_version == "10",
            qrels=Judgments(code=qrels_code, docs=qrels_d, grades=grades, prepared=prepared),
        )
        parts = side.ranked_parts()
        qrels_dup = prepared.result().duplicates
    if qrels_dup.size:
        raise_duplicates("qrels", "judges", (qrels_q, qrels_d), qrels_dup, "remove the extra rows")
    dup = np.sort(np.concatenate([part.duplicates for part in parts]))
    if dup.size:
        if duplicates == "error":
            raise_duplicates(
                "run",
                "lists",
                (run_q, run_d),
                dup,
                "remove them or pass duplicates='keep-first'",
            )
        keep = keep_first(
            dup,
            run_q=run_q,
            run_d=run_d,
            scores=scores,
            ranks=ranks,
            ties=ties,
            n_rows=len(run_q),
            double=trec_version == "10",
        )
        rows = np.flatnonzero(keep)
        kept = RunColumns(
            run_q.take(rows),
            run_d.take(rows),
            scores[rows],
            None if ranks is None else ranks[rows],
        )
        return rank_columns(qrels, kept, replace(options, duplicates="error"))

    jq = query_of_code[np.concatenate([part.code for part in parts])]
    position = np.concatenate([part.position for part in parts])
    order = lexsort(jq, position)
    return JudgedRanking(
        query_ids=query_ids,
        num_ret=num_ret[code_of_query],
        query=jq[order],
        position=position[order],
        grade=np.concatenate([part.grade for part in parts])[order],
        qrels_query=qrels_qidx[prepared.result().by_grade],
        qrels_grade=grades[prepared.result().by_grade],
    )


_PARALLEL_MIN_ROWS = 1 << 18  # runs of fewer rows are ranked in one part
_PART_ROWS = 1 << 20  # rows per part of a larger run (whole queries)


class _RankedPart(NamedTuple):
    """The judged run rows of some whole queries: query code, 0-based position in the query's
    ranking and grade of each; or, when some doc is listed twice for a query, only the run rows
    of those duplicates."""

    code: IntArray
    position: IntArray
    grade: IntArray
    duplicates: IntArray


class _RunSide(NamedTuple):
    """The run's kept rows, the rows of each query code together and in code order, with what
    ranking them needs. Arrays named per row hold the kept rows (``rows``: their run row
    numbers; None: every run row, in run order)."""

    query_first: IntArray  # first kept row of each query code, then the number of kept rows
    fp: SlicedFingerprints | None  # of every run row's doc ID; None: each part computes its own
    rows: IntArray | None
    row_index: IntArray | None  # run row -> kept row (-1: not kept); None: rows is None
    docs: Strings  # doc IDs of every run row
    scores: npt.NDArray[np.float64]  # per row
    ranks: IntArray | None  # per row (ties="given" with a rank column)
    ties: Ties
    double: bool  # compare tied float32 scores as float64 (trec_version="10")
    qrels: Judgments

    def ranked_parts(self) -> list[_RankedPart]:
        """Rank every query: one part, or (a large run ranked in run order) parts of whole
        queries of about :data:`_PART_ROWS` rows, at least one per core, ranked on every core.
        A part computes its own arrays (fingerprints, sort keys), so memory holds the parts
        being ranked, not such arrays for every row. Parts never change a result."""
        n_queries = self.query_first.size - 1
        n_rows = int(self.query_first[-1])
        if self.rows is not None or n_rows < _PARALLEL_MIN_ROWS:
            return [self.rank(0, n_queries, workers=None)]
        cores = threads()
        n_parts = max(cores, -(-n_rows // _PART_ROWS))
        targets = np.arange(1, n_parts, dtype=np.int64) * n_rows // n_parts
        cuts = np.unique(np.searchsorted(self.query_first, targets)).tolist()
        bounds = [0, *[c for c in cuts if 0 < c < n_queries], n_queries]
        spans = list(itertools.pairwise(bounds))
        with jobs(min(cores, len(spans))) as pool:
            pending = [pool.submit(self.rank_one_thread, first, last) for first, last in spans]
            return [part.result() for part in pending]

    def rank_one_thread(self, first: int, last: int) -> _RankedPart:
        """:meth:`rank` on this thread alone (one part of :meth:`ranked_parts`)."""
        return self.rank(first, last, workers=1)

    def rank(self, first: int, last: int, *, workers: int | None) -> _RankedPart:
        """Rank the rows of query codes ``first .. last - 1``."""
        lo, hi = int(self.query_first[first]), int(self.query_first[last])
        whole = first == 0 and last == self.query_first.size - 1
        sizes = np.diff(self.query_first[first : last + 1])
        qidx = np.repeat(np.arange(first, last, dtype=np.int64), sizes)
        # doc IDs and row numbers as the part sees them: a slice (rows None), or every run row
        docs = self.docs if whole else self.docs.slice(lo, hi - lo)
        # rows None: the part's rows are run rows lo .. hi - 1, fingerprinted here
        fp = _join.fingerprint(docs) if self.fp is None else self.fp.result()[self.rows]
        packed = packed_sort(
            qidx,
            fp,
            self.rows,
            self.query_first.size - 1,
            len(docs),
            query_sizes=sizes,
            workers=workers,
        )
        dup = confirmed_duplicates(packed, self.row_index, qidx, docs)
        empty = np.zeros(0, dtype=np.int64)
        if dup.size:
            return _RankedPart(empty, empty, empty, dup + lo)
        qrels_rows = self.qrels.prepared.result().by_pair
        if not whole:
            code = self.qrels.code[qrels_rows]
            qrels_rows = qrels_rows[(code >= first) & (code < last)]
        judged_rows, grade = join(
            packed,
            qrels_rows=qrels_rows,
            qrels=self.qrels,
            run_d=docs,
        )
        judged = local_rows(self.row_index, judged_rows)  # indices into the part's rows
        query_start = self.query_first[:-1] - lo
        if self.ties == "trec":
            position = trec_positions(
                qidx,
                self.scores[lo:hi],
                docs=docs,
                rows=self.rows,
                judged=judged,
                query_start=query_start,
                query_sizes=sizes,
                out=packed.keys,  # no longer needed: reused for the ranking keys
                workers=workers,
                double=self.double,
            )
        else:
            ranks = None if self.ranks is None else self.ranks[lo:hi]
            position = given_positions(qidx, ranks, judged, query_start)
        return _RankedPart(qidx[judged], position, grade, empty)


def _inverse(rows: IntArray, n: int) -> IntArray:
    """``row_index`` for the kept ``rows`` out of ``n``: run row -> its index in ``rows``,
    -1 for the rows not kept."""
    index = np.full(n, -1, dtype=np.int64)
    index[rows] = np.arange(rows.size, dtype=np.int64)
    return index


def _grouped_rows(
    block_query: IntArray, block_length: IntArray
) -> tuple[IntArray | None, IntArray, IntArray]:
    """The run rows to rank, one block of consecutive rows per query: ``(rows, block_query,
    block_length)``, ``rows`` the run row numbers (None: every row, in run order).

    ``block_query``: the query index of each block of consecutive run rows of one query (-1:
    a query the qrels do not judge, dropped). When each query has one block, the blocks keep
    their order; else the rows are put in query index order, stably (a query's rows keep
    their order).
    """
    known = block_query >= 0
    kept_query = block_query[known]
    if int(np.bincount(kept_query).max(initial=0)) <= 1:  # one block per query
        if bool(known.all()):
            return None, block_query, block_length
        return np.flatnonzero(np.repeat(known, block_length)), kept_query, block_length[known]
    row_query = np.repeat(block_query, block_length)
    if bool(known.all()):
        rows = stable_order(row_query)
    else:
        kept = np.flatnonzero(row_query >= 0)
        rows = kept[stable_order(row_query[kept])]
    counts = np.bincount(kept_query, weights=block_length[known]).astype(np.int64)
    present = np.flatnonzero(counts)
    return rows, present, counts[present]


def _grouped_code_order(block_query: IntArray, n_queries: int) -> IntArray:
    """Query index → code in order of first appearance (``block_query``: the query index of
    each block, one block per query); queries without a block get the codes after."""
    code = np.full(n_queries, -1, dtype=np.int64)
    code[block_query] = np.arange(block_query.size, dtype=np.int64)
    absent = code < 0
    code[absent] = np.arange(block_query.size, n_queries, dtype=np.int64)
    return code
