"""Turn qrels and run DataFrames into a :class:`JudgedRanking` (the kernels' input).

Everything here is vectorized (numpy over query-grouped arrays, pyarrow for string work); no
Python loop runs per query or per document. The steps:

1. query IDs become integer codes (the qrels' sorted query IDs), looked up once per block of
   consecutive run rows with the same query ID; run rows of other queries are dropped and
   counted in a :class:`~evalkit.errors.RunOnlyQueriesWarning`. A run whose queries' rows are
   not each in one block (rows sorted by score across queries, say) is ranked through a stable
   radix sort of its rows by query;
2. each document ID gets a 64-bit fingerprint; one sort of packed (query, fingerprint, row)
   integers finds duplicate (query, doc) pairs and the run rows that the qrels judge. A
   fingerprint match is only a candidate: every match and duplicate is confirmed by comparing
   the ID strings, so a fingerprint collision can never change a result;
3. the ranking order: with ``ties="trec"`` score descending, then doc ID descending (byte
   order, like ``strcmp``); scores compare as float64 with ``trec_version="10"`` (trec_eval
   10.0 stores them as C doubles) and as float32 with ``"9"`` (trec_eval 9.0.8's C floats);
   with ``ties="given"`` the ``rank`` column ascending when present, else the row order within
   each query (rows of equal rank keep their row order). A run already sorted by query block
   and score is not sorted again: only tie groups holding a judged document are ordered by doc
   ID.

Large arrays are built block by block (small temporaries, fewer page faults) and reused where
possible. Every core is used: the run's and the qrels' fingerprints are computed while the query
codes are worked out, and a large run grouped by query is ranked in parts of whole queries, one
per core. Thread count never changes a result: each thread writes its own slice, or ranks or
sorts its own whole queries.

Ties (``ties="trec"``) are broken by doc ID only within the tie groups that hold a judged
document. The sort key holds the float32 score; float32 rounding keeps the order of float64
values, so with ``trec_version="10"`` only those same tie groups compare the float64 scores
before the doc IDs (no extra cost on runs without float32 ties). Small groups compare each
judged doc with every member of its group, by the IDs' first 8 bytes and lengths (the ID
strings only when those cannot tell); large groups are sorted by ID.
"""

from __future__ import annotations

import itertools
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalkit.errors import InputError, RunOnlyQueriesWarning
from evalkit.formats.trec import require_columns
from evalkit.measures.kernels import JudgedRanking

__all__ = ["Duplicates", "Ties", "TrecVersion", "judged_ranking"]

Ties = Literal["trec", "given"]
TrecVersion = Literal["9", "10"]
Duplicates = Literal["error", "keep-first"]

IntArray = npt.NDArray[np.int64]
U64Array = npt.NDArray[np.uint64]

_U64 = np.uint64
_FNV_OFFSET = _U64(0xCBF29CE484222325)
_FNV_PRIME = _U64(0x100000001B3)
_MIX_1 = _U64(0xFF51AFD7ED558CCD)
_MIX_2 = _U64(0xC4CEB9FE1A85EC53)


#: The most threads a ranking uses (its sorts and fingerprints).
MAX_THREADS = 8


def _threads() -> int:
    """Threads for the parallel parts: the cores this process may run on (its CPU affinity, which
    taskset, a cpuset or a job scheduler narrows; not the machine's count), at most
    ``MAX_THREADS``."""
    from evalkit.forking import usable_cores  # here: ranking needs no multiprocessing import

    return min(usable_cores(), MAX_THREADS)


def judged_ranking(
    qrels: pd.DataFrame,
    run: pd.DataFrame,
    *,
    ties: Ties = "trec",
    duplicates: Duplicates = "error",
    trec_version: TrecVersion = "10",
) -> JudgedRanking:
    """Validate ``qrels`` and ``run`` and build the judged ranking the kernels work on.

    Raises InputError for missing columns, non-string or missing IDs, non-integer grades,
    NaN scores, a (query, doc) pair judged twice, or (with ``duplicates="error"``) a doc listed
    twice in one query's ranking.
    """
    if ties not in ("trec", "given"):
        raise InputError(f"ties must be 'trec' or 'given', got {ties!r}")
    if trec_version not in ("9", "10"):
        raise InputError(f"trec_version must be '9' or '10', got {trec_version!r}")
    if duplicates not in ("error", "keep-first"):
        raise InputError(f"duplicates must be 'error' or 'keep-first', got {duplicates!r}")
    require_columns(qrels, "qrels", ("query_id", "doc_id", "relevance"))
    require_columns(run, "run", ("query_id", "doc_id", "score"))

    qrels_q = _id_array(qrels, "query_id", "qrels")
    qrels_d = _id_array(qrels, "doc_id", "qrels")
    grades = _integer_column(qrels, "relevance", "qrels")
    run_q = _id_array(run, "query_id", "run")
    run_d = _id_array(run, "doc_id", "run")
    cores = _threads()
    with ThreadPoolExecutor(max_workers=max(2, cores)) as pool:
        # The run's doc fingerprints (in slices, on every core for a large run), and the
        # qrels' fingerprints, duplicate check and orders, are computed on other threads while
        # this one prepares the run (numpy and pyarrow release the GIL); ranking the run waits
        # for them only where it uses them.
        run_fp = _SlicedFingerprints(
            run_d, pool, slices=cores if len(run_d) >= _PARALLEL_MIN_ROWS else 1
        )
        # query IDs are hashed once per block of consecutive rows of one query, not per row
        qrels_start, qrels_length = _query_blocks(qrels_q)
        query_ids, head_qidx = _sorted_codes(_take(qrels_q, qrels_start))
        n_queries = len(query_ids)
        qrels_qidx = np.repeat(head_qidx, qrels_length)
        prepared = pool.submit(_prepare_qrels, qrels_qidx, qrels_d, grades)
        # likewise, run query codes are looked up once per block of consecutive rows with the
        # same query ID (a run file lists each query's rows together)
        block_start, block_length = _query_blocks(run_q)
        block_ids = _take(run_q, block_start)
        block_code = pc.index_in(block_ids, value_set=query_ids)
        scores = _score_column(run, run_q)
        ranks = _integer_column(run, "rank", "run") if ties == "given" and "rank" in run else None
        block_query = pc.fill_null(block_code, -1).to_numpy(zero_copy_only=False)
        block_query = block_query.astype(np.int64)
        if block_code.null_count:
            unknown = pc.unique(pc.filter(block_ids, pc.is_null(block_code)))
            warnings.warn(
                f"the run has {len(unknown)} queries that the qrels do not judge (e.g. "
                f"{_quote_ids(unknown)}); they were ignored",
                RunOnlyQueriesWarning,
                stacklevel=3,
            )
        # The rows ranked: every run row of a judged query, grouped by query. A run lists each
        # query's rows together (then the rows are taken as they are, without the run-only
        # queries); otherwise they are taken in query order (keeping their order within a query).
        rows, block_query, block_length = _grouped_rows(block_query, block_length)
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
            qrels=_Judgments(code=qrels_code, docs=qrels_d, grades=grades, prepared=prepared),
        )
        parts = side.ranked_parts()
        qrels_dup = prepared.result().duplicates
    if qrels_dup.size:
        _raise_duplicates("qrels", "judges", (qrels_q, qrels_d), qrels_dup, "remove the extra rows")
    dup = np.sort(np.concatenate([part.duplicates for part in parts]))
    if dup.size:
        if duplicates == "error":
            _raise_duplicates(
                "run",
                "lists",
                (run_q, run_d),
                dup,
                "remove them or pass duplicates='keep-first'",
            )
        keep = _keep_first(
            dup,
            run_q=run_q,
            run_d=run_d,
            scores=scores,
            ranks=ranks,
            ties=ties,
            n_rows=len(run),
            double=trec_version == "10",
        )
        return judged_ranking(
            qrels, run.iloc[keep], ties=ties, duplicates="error", trec_version=trec_version
        )

    jq = query_of_code[np.concatenate([part.code for part in parts])]
    position = np.concatenate([part.position for part in parts])
    order = _lexsort(jq, position)
    return JudgedRanking(
        query_ids=tuple(query_ids.to_pylist()),
        num_ret=num_ret[code_of_query],
        query=jq[order],
        position=position[order],
        grade=np.concatenate([part.grade for part in parts])[order],
        qrels_query=qrels_qidx[prepared.result().by_grade],
        qrels_grade=grades[prepared.result().by_grade],
    )


_PARALLEL_MIN_ROWS = 1 << 18  # runs of fewer rows are ranked in one part


class _Judgments(NamedTuple):
    """The qrels, as the join needs them."""

    code: IntArray  # query code of each row
    docs: pa.ChunkedArray
    grades: IntArray
    prepared: Future[_PreparedQrels]  # computed on another thread


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
    fp: _SlicedFingerprints  # of every run row's doc ID (overwritten while ranking)
    rows: IntArray | None
    row_index: IntArray | None  # run row -> kept row (-1: not kept); None: rows is None
    docs: pa.ChunkedArray  # doc IDs of every run row
    scores: npt.NDArray[np.float64]  # per row
    ranks: IntArray | None  # per row (ties="given" with a rank column)
    ties: Ties
    double: bool  # compare tied float32 scores as float64 (trec_version="10")
    qrels: _Judgments

    def ranked_parts(self) -> list[_RankedPart]:
        """Rank every query: one part, or (a large run ranked in run order) one part of whole
        queries per core, ranked in parallel. Parts never change a result."""
        n_queries = self.query_first.size - 1
        n_rows = int(self.query_first[-1])
        n_parts = _threads()
        if self.rows is not None or n_rows < _PARALLEL_MIN_ROWS or n_parts == 1:
            return [self.rank(0, n_queries, workers=None)]
        targets = np.arange(1, n_parts, dtype=np.int64) * n_rows // n_parts
        cuts = np.unique(np.searchsorted(self.query_first, targets)).tolist()
        bounds = [0, *[c for c in cuts if 0 < c < n_queries], n_queries]
        spans = list(itertools.pairwise(bounds))
        with ThreadPoolExecutor(max_workers=len(spans)) as pool:
            return list(pool.map(lambda span: self.rank(*span, workers=1), spans))

    def rank(self, first: int, last: int, *, workers: int | None) -> _RankedPart:
        """Rank the rows of query codes ``first .. last - 1``."""
        lo, hi = int(self.query_first[first]), int(self.query_first[last])
        whole = first == 0 and last == self.query_first.size - 1
        sizes = np.diff(self.query_first[first : last + 1])
        qidx = np.repeat(np.arange(first, last, dtype=np.int64), sizes)
        # doc IDs and row numbers as the part sees them: a slice (rows None), or every run row
        docs = self.docs if whole else self.docs.slice(lo, hi - lo)
        fp = self.fp.result()
        packed = _packed_sort(
            qidx,
            fp[lo:hi] if self.rows is None else fp[self.rows],
            self.rows,
            self.query_first.size - 1,
            len(docs),
            query_sizes=sizes,
            workers=workers,
        )
        dup = _confirmed_duplicates(packed, self.row_index, qidx, docs)
        empty = np.zeros(0, dtype=np.int64)
        if dup.size:
            return _RankedPart(empty, empty, empty, dup + lo)
        qrels_rows = self.qrels.prepared.result().by_pair
        if not whole:
            code = self.qrels.code[qrels_rows]
            qrels_rows = qrels_rows[(code >= first) & (code < last)]
        judged_rows, grade = _join(
            packed,
            qrels_rows=qrels_rows,
            qrels=self.qrels,
            run_d=docs,
        )
        judged = _local_rows(self.row_index, judged_rows)  # indices into the part's rows
        query_start = self.query_first[:-1] - lo
        if self.ties == "trec":
            position = _trec_positions(
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
            position = _given_positions(qidx, ranks, judged, query_start)
        return _RankedPart(qidx[judged], position, grade, empty)


def _lexsort(major: IntArray, minor: IntArray) -> IntArray:
    """``np.lexsort((minor, major))`` (stable: by ``major``, then ``minor``, then index).

    ``major`` must be >= 0. One stable sort of a combined key when it fits in 63 bits (a radix
    sort when it fits in 32).
    """
    if major.size == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = int(minor.min()), int(minor.max())
    span = high - low + 1
    if (int(major.max()) + 1) * span >= 1 << 62:
        return np.lexsort((minor, major)).astype(np.int64)
    key = major * span
    key += minor
    key -= low
    if bool(np.all(key[1:] > key[:-1])):
        return np.arange(key.size, dtype=np.int64)  # already in order, no equal keys
    return _stable_order(key)


class _PreparedQrels(NamedTuple):
    """What the qrels need before the join, computed on another thread."""

    fp: U64Array  # doc fingerprint of each row
    duplicates: IntArray  # rows (sorted) of (query, doc) pairs judged twice
    by_pair: IntArray  # row numbers in (query, fingerprint) order
    by_grade: IntArray  # row numbers in (query, grade descending) order


def _prepare_qrels(qidx: IntArray, docs: pa.ChunkedArray, grades: IntArray) -> _PreparedQrels:
    """The qrels' fingerprints, duplicates and orders (``qidx``: query index of each row)."""
    fp = _fingerprint(docs)
    rows = np.arange(len(docs), dtype=np.int64)
    n_queries = int(qidx.max(initial=0)) + 1
    grouped = bool(np.all(qidx[1:] >= qidx[:-1]))
    sizes = np.bincount(qidx, minlength=n_queries) if grouped else None
    packed = _packed_sort(qidx, fp.copy(), rows, n_queries, len(docs), query_sizes=sizes)
    return _PreparedQrels(
        fp=fp,
        duplicates=_confirmed_duplicates(packed, None, qidx, docs),
        by_pair=packed.rows(rows),
        by_grade=_lexsort(qidx, -grades),
    )


def _sorted_codes(ids: pa.Array) -> tuple[pa.Array, IntArray]:
    """The distinct ``ids``, sorted, and each ID's index among them (one hash pass)."""
    encoded = pc.dictionary_encode(ids)
    order = pc.sort_indices(encoded.dictionary).to_numpy(zero_copy_only=False)
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size, dtype=np.int64)
    return encoded.dictionary.take(pa.array(order)), rank[
        encoded.indices.to_numpy(zero_copy_only=False)
    ]


def _query_blocks(run_q: pa.ChunkedArray) -> tuple[IntArray, IntArray]:
    """First row and length of each block of consecutive rows with the same query ID."""
    n = len(run_q)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    change = pc.not_equal(run_q.slice(1), run_q.slice(0, n - 1))
    starts = np.flatnonzero(change.to_numpy(zero_copy_only=False))
    starts += 1
    start = np.concatenate([np.zeros(1, dtype=np.int64), starts.astype(np.int64)])
    return start, np.diff(start, append=np.int64(n))


def _take(strings: pa.ChunkedArray, at: IntArray) -> pa.Array:
    """``strings[at]`` as one array, taken chunk by chunk (``pc.take`` on a chunked array
    first concatenates all its chunks)."""
    if strings.num_chunks == 1:
        return strings.chunk(0).take(pa.array(at))
    in_order = bool(np.all(at[1:] >= at[:-1]))
    order = None if in_order else np.argsort(at, kind="stable")
    sorted_at = at if order is None else at[order]
    bounds = np.cumsum([0, *(len(chunk) for chunk in strings.chunks)])
    cuts = np.searchsorted(sorted_at, bounds).tolist()
    parts = [
        chunk.take(pa.array(sorted_at[cuts[k] : cuts[k + 1]] - bounds[k]))
        for k, chunk in enumerate(strings.chunks)
        if cuts[k + 1] > cuts[k]
    ]
    if not parts:
        return pa.array([], type=strings.type)
    if order is None:
        return pa.concat_arrays(parts)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return pa.concat_arrays(parts).take(pa.array(inverse))


def _local_rows(row_index: IntArray | None, at: IntArray) -> IntArray:
    """Kept-row indices of the run row numbers ``at`` (``row_index``: run row -> kept row;
    None: every row is kept in run order)."""
    return at if row_index is None else row_index[at]


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
        rows = _stable_order(row_query)
    else:
        kept = np.flatnonzero(row_query >= 0)
        rows = kept[_stable_order(row_query[kept])]
    counts = np.bincount(kept_query, weights=block_length[known]).astype(np.int64)
    present = np.flatnonzero(counts)
    return rows, present, counts[present]


def _stable_order(values: IntArray) -> IntArray:
    """``np.argsort(values, kind="stable")`` for non-negative integers; a radix sort (16-bit
    digits) when they fit in 32 bits."""
    high = int(values.max(initial=0))
    if high >= 1 << 32:
        return np.argsort(values, kind="stable").astype(np.int64, copy=False)
    order = np.argsort(values.astype(np.uint16), kind="stable")  # numpy's radix sort
    if high >= 1 << 16:
        upper = (values[order] >> 16).astype(np.uint16)
        order = order[np.argsort(upper, kind="stable")]
    return order.astype(np.int64, copy=False)


def _grouped_code_order(block_query: IntArray, n_queries: int) -> IntArray:
    """Query index → code in order of first appearance (``block_query``: the query index of
    each block, one block per query); queries without a block get the codes after."""
    code = np.full(n_queries, -1, dtype=np.int64)
    code[block_query] = np.arange(block_query.size, dtype=np.int64)
    absent = code < 0
    code[absent] = np.arange(block_query.size, n_queries, dtype=np.int64)
    return code


# --- validation --------------------------------------------------------------------------------


def _id_array(frame: pd.DataFrame, column: str, what: str) -> pa.ChunkedArray:
    """The column as a chunked arrow string array (pandas' arrow-backed ``str`` columns are
    not copied)."""
    series = frame[column]
    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = None
    if array is not None and array.null_count:
        missing = series.isna().to_numpy()
        row = int(np.flatnonzero(missing)[0])
        raise InputError(
            f"{what}.{column} has {int(missing.sum())} missing value(s) (first at row {row}); "
            "every ID must be a non-empty string"
        )
    if isinstance(array, pa.Array):
        array = pa.chunked_array([array])
    if array is not None and pa.types.is_dictionary(array.type):
        array = pa.chunked_array(
            [chunk.dictionary_decode() for chunk in array.chunks], array.type.value_type
        )
    if array is not None and len(array) == 0:
        array = pa.chunked_array([], type=pa.string())
    if array is None or not (
        pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
    ):
        raise InputError(
            f"{what}.{column} must hold strings (IDs are strings, '001' is not 1); "
            f"found dtype {series.dtype}; convert it with .astype(str)"
        )
    return array


def _integer_column(frame: pd.DataFrame, column: str, what: str) -> IntArray:
    series = frame[column]
    values = series.to_numpy()
    limit = np.iinfo(np.int64)
    if values.dtype.kind == "i" or (values.dtype.kind == "u" and values.dtype.itemsize < 8):
        return values.astype(np.int64)
    if values.dtype.kind == "u":
        if values.size and int(values.max()) > limit.max:
            raise InputError(_too_large(what, column))
        return values.astype(np.int64)
    if (
        values.dtype.kind == "f"
        and np.all(np.isfinite(values))
        and np.all(values == np.round(values))
    ):
        # float64 holds integers exactly up to 2**53; past int64's range astype would wrap
        if values.size and (values.max() >= 2.0**63 or values.min() < -(2.0**63)):
            raise InputError(_too_large(what, column))
        return values.astype(np.int64)
    raise InputError(
        f"{what}.{column} must hold integers, found dtype {series.dtype}"
        + (" with missing or fractional values" if values.dtype.kind == "f" else "")
    )


def _too_large(what: str, column: str) -> str:
    return (
        f"{what}.{column} holds integers outside the 64-bit signed range; relevance grades are "
        "small integers (trec_eval reads them as long)"
    )


def _score_column(run: pd.DataFrame, run_q: pa.ChunkedArray) -> npt.NDArray[np.float64]:
    series = run["score"]
    values = series.to_numpy()
    if values.dtype.kind not in "iuf":
        raise InputError(f"run.score must be numeric, found dtype {series.dtype}")
    values = values.astype(np.float64, copy=False)
    nan = np.isnan(values)
    if nan.any():
        row = int(np.flatnonzero(nan)[0])
        raise InputError(
            f"run.score has {int(nan.sum())} NaN value(s) (first at row {row}, query "
            f"{run_q[row].as_py()!r}); scores must be numbers to be ranked"
        )
    return values


def _quote_ids(ids: pa.Array | pa.ChunkedArray, limit: int = 3) -> str:
    shown = ", ".join(repr(x) for x in ids.slice(0, limit).to_pylist())
    return shown + (", ..." if len(ids) > limit else "")


def _raise_duplicates(
    what: str, verb: str, ids: tuple[pa.ChunkedArray, pa.ChunkedArray], dup_rows: IntArray, fix: str
) -> None:
    q, d = ids
    first = int(dup_rows[0])
    pairs = pd.DataFrame(
        {"q": pc.take(q, dup_rows).to_pylist(), "d": pc.take(d, dup_rows).to_pylist()}
    )
    n_pairs = int((~pairs.duplicated()).sum())
    raise InputError(
        f"{what} {verb} doc {d[first].as_py()!r} more than once for query {q[first].as_py()!r} "
        f"({n_pairs} duplicated (query, doc) pair(s) in all, first at row {first}); {fix}"
    )


# --- fingerprints, packed sort, join -----------------------------------------------------------


def _fingerprint(strings: pa.ChunkedArray, out: U64Array | None = None) -> U64Array:
    """A 64-bit fingerprint of each string: FNV-style mixing of its zero-padded little-endian
    8-byte words and its length, then murmur3's fmix64 finalizer (so the high bits are mixed).

    Written into ``out`` when given (``len(strings)`` values)."""
    out = np.empty(len(strings), dtype=np.uint64) if out is None else out
    lo = 0
    for chunk in strings.chunks:
        _fingerprint_chunk(chunk, out[lo : lo + len(chunk)])
        lo += len(chunk)
    return out


class _SlicedFingerprints:
    """:func:`_fingerprint` of every string, computed in slices on a thread pool."""

    def __init__(self, strings: pa.ChunkedArray, pool: ThreadPoolExecutor, slices: int) -> None:
        self._out = np.empty(len(strings), dtype=np.uint64)
        bounds = np.linspace(0, len(strings), max(slices, 1) + 1).astype(np.int64).tolist()
        self._jobs = [
            pool.submit(_fingerprint, strings.slice(lo, hi - lo), self._out[lo:hi])
            for lo, hi in itertools.pairwise(bounds)
        ]

    def result(self) -> U64Array:
        """The fingerprints, once every slice is done."""
        for job in self._jobs:
            job.result()
        return self._out


_BLOCK = 1 << 16  # rows per block: keeps temporaries small, in cache and off the page-fault path
_ALL_BITS = _U64(0xFFFFFFFFFFFFFFFF)


def _fingerprint_chunk(strings: pa.Array, h: U64Array) -> None:
    """Write the fingerprints of ``strings`` into ``h``."""
    n = len(strings)
    buffers = strings.buffers()
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    all_offsets: npt.NDArray[np.integer[Any]] = np.frombuffer(buffers[1], dtype=offset_type)
    offsets = all_offsets[strings.offset : strings.offset + n + 1]
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.zeros(0, np.uint8)
    )
    for lo in range(0, n, _BLOCK):
        hi = min(lo + _BLOCK, n)
        _fingerprint_block(data, offsets[lo : hi + 1], h[lo:hi])


def _fingerprint_block(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.integer[Any]], h: U64Array
) -> None:
    n = offsets.size - 1
    lengths = np.diff(offsets)
    h.fill(_FNV_OFFSET)
    width = int(lengths.max())
    if int(lengths.min()) == width and width % 8 == 0:
        # every string has the same length, a multiple of 8: its words are a zero-copy view
        n_words = width // 8
        words = data[offsets[0] : offsets[0] + n * width].view("<u8").reshape(n, n_words)
        for k in range(n_words):
            h ^= words[:, k]
            h *= _FNV_PRIME
    else:
        # every 8-byte window of the block's data (padded) as a little-endian integer
        padded = np.concatenate([data[offsets[0] : offsets[-1]], np.zeros(8, dtype=np.uint8)])
        windows = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
        starts = (offsets[:-1] - offsets[0]).astype(np.int64)
        lengths = lengths.astype(np.int64)
        for k in range((width + 7) // 8):
            active = np.flatnonzero(lengths > 8 * k)  # strings with a k-th word
            word = windows[starts[active] + 8 * k].astype(np.uint64)
            tail = np.flatnonzero(lengths[active] < 8 * (k + 1))  # zero the bytes past the end
            word[tail] &= _ALL_BITS >> ((8 * (k + 1) - lengths[active[tail]]) * 8).astype(np.uint64)
            h[active] ^= word
            h[active] *= _FNV_PRIME
    h ^= lengths.astype(np.uint64)
    h *= _FNV_PRIME
    # murmur3 fmix64
    for multiplier in (_MIX_1, _MIX_2, None):
        h ^= h >> _U64(33)
        if multiplier is not None:
            h *= multiplier


class _Packed(NamedTuple):
    """Sorted uint64 keys: ``query << (fp_bits + row_bits) | fingerprint top bits << row_bits |
    row``."""

    keys: U64Array
    fp_bits: int
    row_bits: int

    def rows(self, at: IntArray) -> IntArray:
        """Row numbers stored in the keys at sorted positions ``at``."""
        mask = (_U64(1) << _U64(self.row_bits)) - _U64(1)
        return (self.keys[at] & mask).astype(np.int64)

    def pair_keys(self, qidx: IntArray, fp: U64Array) -> U64Array:
        """The (query code, fingerprint bits) part of the keys of these pairs (row bits 0)."""
        shift = _U64(64 - self.fp_bits)
        high = (qidx.astype(np.uint64) << _U64(self.fp_bits)) | (fp >> shift)
        return high << _U64(self.row_bits)

    def same_pair_as_next(self) -> IntArray:
        """Sorted positions ``i`` whose key has the (query, fingerprint) part of key ``i + 1``."""
        limit = _U64(1) << _U64(self.row_bits)
        found = [np.zeros(0, dtype=np.int64)]
        for lo in range(0, self.keys.size - 1, _BLOCK):  # block by block: small temporaries
            hi = min(lo + _BLOCK, self.keys.size - 1)
            differ = self.keys[lo + 1 : hi + 1] ^ self.keys[lo:hi]
            found.append(np.flatnonzero(differ < limit) + lo)
        return np.concatenate(found)


def _bits(n: int) -> int:
    return max(1, int(n).bit_length())


def _packed_sort(
    qidx: IntArray,
    fp: U64Array,
    rows: IntArray | None,
    n_queries: int,
    n_rows: int,
    *,
    query_sizes: IntArray | None = None,
    workers: int | None = None,
) -> _Packed:
    """Pack (query code, fingerprint, row number) into one uint64 per row and sort.

    ``fp`` is overwritten (it becomes the sorted keys). ``rows``: the row numbers (None:
    ``0 .. len(fp) - 1``). ``query_sizes``: rows per query code when the rows are grouped by
    query in increasing code order (enables the per-query sort), else None. ``workers``:
    threads for the sort (None: one per core).
    """
    q_bits, row_bits = _bits(n_queries), _bits(n_rows)
    fp_bits = 64 - q_bits - row_bits
    if fp_bits < 1:
        raise InputError(f"too many queries x rows to evaluate at once ({n_queries} x {n_rows})")
    keys = fp
    for lo in range(0, keys.size, _BLOCK):  # block by block: small temporaries
        hi = min(lo + _BLOCK, keys.size)
        part = keys[lo:hi]
        part >>= _U64(64 - fp_bits)
        part <<= _U64(row_bits)
        if rows is None:
            part |= np.arange(lo, hi, dtype=np.uint64)
        else:
            part |= rows[lo:hi].view(np.uint64)  # row numbers are >= 0
        query = qidx[lo:hi].astype(np.uint64)
        query <<= _U64(fp_bits + row_bits)
        part |= query
    _parallel_sort(keys, query_sizes, workers or _threads())
    return _Packed(keys, fp_bits, row_bits)


def _parallel_sort(keys: U64Array, query_sizes: IntArray | None, workers: int) -> None:
    """Sort ``keys`` in place; fast when the rows are grouped by query (``query_sizes``).

    When every query has the same number of rows the keys form a matrix whose rows are sorted;
    when the sizes differ but padding every query to the largest at most doubles the keys, the
    rows of such a padded matrix are sorted; otherwise the keys are cut at query boundaries into
    cache-sized parts (about 64k keys, whole queries). Either way the parts are sorted
    independently, on every core (numpy's sort releases the GIL), and sorted parts in
    increasing query order make a sorted array. Rows not grouped by query get one global sort.
    """
    if query_sizes is None or keys.size < 1 << 17:
        keys.sort()
        return
    if _sort_segments(keys, query_sizes, workers):
        return
    sizes = query_sizes[query_sizes > 0]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cuts = np.unique(starts[np.searchsorted(starts, np.arange(1 << 16, keys.size, 1 << 16))])
    bounds = [0, *[c for c in cuts.tolist() if 0 < c < keys.size], keys.size]
    parts = [keys[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]
    if workers == 1:
        for part in parts:
            part.sort()
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(np.ndarray.sort, parts):
            pass


def _sort_segments(keys: U64Array, sizes: IntArray, workers: int) -> bool:
    """Sort in place each segment of ``keys`` (consecutive segments of ``sizes`` keys) as the
    rows of a matrix: of one, when all segments have the same size, else padded with the
    largest key. False (nothing done) when a segment is too long or padding would more than
    double the keys."""
    sizes = sizes[sizes > 0]
    width = int(sizes.max(initial=0))
    if width == 0 or width > 1 << 14:
        return width == 0
    if bool(np.all(sizes == width)):  # e.g. a fixed-depth run
        _sort_matrix_rows(keys.reshape(-1, width), workers)
        return True
    if sizes.size * width > 2 * keys.size:
        return False
    filled = np.arange(width) < sizes[:, None]
    matrix = np.full((sizes.size, width), np.iinfo(np.uint64).max, dtype=np.uint64)
    matrix[filled] = keys
    _sort_matrix_rows(matrix, workers)
    keys[:] = matrix[filled]
    return True


def _sort_matrix_rows(matrix: U64Array, workers: int) -> None:
    """Sort each row of ``matrix`` in place, blocks of rows on ``workers`` threads."""
    if workers == 1:
        matrix.sort(axis=1)
        return
    bounds = np.linspace(0, matrix.shape[0], workers + 1).astype(np.int64).tolist()
    blocks = [matrix[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(lambda block: block.sort(axis=1), blocks):
            pass


def _confirmed_duplicates(
    packed: _Packed,
    row_index: IntArray | None,
    qidx: IntArray,
    docs: pa.ChunkedArray,
) -> IntArray:
    """Row numbers (sorted) of every (query, doc) pair that occurs more than once.

    ``qidx``: the query codes of the rows packed, in the order ``row_index`` maps row numbers
    to (None: row ``i`` is entry ``i``).
    """
    at = packed.same_pair_as_next()
    if at.size == 0:
        return np.zeros(0, dtype=np.int64)
    candidates = np.unique(np.concatenate([packed.rows(at), packed.rows(at + 1)]))
    local = _local_rows(row_index, candidates)
    frame = pd.DataFrame(
        {"q": qidx[local], "d": _take(docs, candidates).to_numpy(zero_copy_only=False)}
    )
    duplicated: IntArray = candidates[frame.duplicated(keep=False).to_numpy()]
    return duplicated


def _join(
    packed: _Packed, *, qrels_rows: IntArray, qrels: _Judgments, run_d: pa.ChunkedArray
) -> tuple[IntArray, IntArray]:
    """Run rows (sorted) that the qrels judge, and their grades.

    ``qrels_rows``: the qrels rows to look up; any order is correct, (query, fingerprint) order
    is fastest: numpy narrows each search from the previous one.
    """
    keys = packed.pair_keys(qrels.code[qrels_rows], qrels.prepared.result().fp[qrels_rows])
    row_mask = (_U64(1) << _U64(packed.row_bits)) - _U64(1)
    last = packed.keys.size - 1
    if last < 0 or keys.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lo = np.searchsorted(packed.keys, keys, side="left").astype(np.int64)
    # run rows with the same (query, fingerprint): one, or more on a fingerprint collision
    counts = ((packed.keys[np.minimum(lo, last)] ^ keys) <= row_mask).astype(np.int64)
    several = np.flatnonzero(counts.astype(bool) & (lo < last))
    several = several[(packed.keys[lo[several] + 1] ^ keys[several]) <= row_mask]
    counts[several] = (
        np.searchsorted(packed.keys, keys[several] | row_mask, side="right") - lo[several]
    )
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if int(counts.max()) == 1:  # the usual case: at most one candidate per judged pair
        found = np.flatnonzero(counts)
        slots = lo[found]
    else:
        found = np.repeat(np.arange(keys.size, dtype=np.int64), counts)
        slots = np.repeat(lo - (np.cumsum(counts) - counts), counts)
        slots += np.arange(total, dtype=np.int64)
    run_rows, judged = packed.rows(slots), qrels_rows[found]
    # in run row order, the run's IDs are read front to back
    order = np.argsort(run_rows, kind="stable")
    run_rows, judged = run_rows[order], judged[order]
    same = pc.equal(_take(run_d, run_rows), _take(qrels.docs, judged))
    ok = same.to_numpy(zero_copy_only=False)
    return run_rows[ok], qrels.grades[judged[ok]]


# --- ranking order -----------------------------------------------------------------------------


def _descending_float32_key(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.uint32]:
    """uint32 keys whose ascending order is float32(score) descending (-0.0 ties with 0.0)."""
    as32 = scores.astype(np.float32)
    as32 += np.float32(0.0)  # -0.0 + 0.0 == +0.0
    bits = as32.view(np.uint32)
    # IEEE order as unsigned ints: flip all bits of negatives, only the sign bit of the others;
    # then invert everything for descending order.
    flip = (bits.view(np.int32) >> np.int32(31)).view(np.uint32)
    flip |= np.uint32(0x80000000)
    bits ^= flip
    np.invert(bits, out=bits)
    return bits


def _trec_positions(
    qidx: IntArray,
    scores: npt.NDArray[np.float64],
    *,
    docs: pa.ChunkedArray,
    rows: IntArray | None,
    judged: IntArray,
    query_start: IntArray,
    query_sizes: IntArray,
    out: U64Array,
    workers: int | None,
    double: bool = False,
) -> IntArray:
    """0-based positions of the ``judged`` entries (indices into ``rows``, None: every row of
    ``docs``) within their query. The rows are grouped by query in increasing code order:
    ``query_start`` and ``query_sizes`` are each query code's first row and number of rows.

    ``out``: a uint64 array of ``qidx.size`` to build the sort keys in (overwritten).

    Order: float32 score descending (``double``: float64), then doc ID descending. Only tie
    groups (of equal float32 scores) that hold a judged document are ordered further, by the
    float64 score when ``double``, then by doc ID: the order among unjudged documents changes
    no measure.
    """
    key = out
    for lo in range(0, key.size, _BLOCK):  # block by block: small temporaries
        hi = min(lo + _BLOCK, key.size)
        part = key[lo:hi]
        np.copyto(part, qidx[lo:hi], casting="unsafe")
        part <<= _U64(32)
        part |= _descending_float32_key(scores[lo:hi])
    jkey = key[judged]
    begin = query_start[qidx[judged]]
    order: IntArray | None = None
    if bool(np.all(key[1:] >= key[:-1])):
        # already in order: an entry's slot is its row, unless it ties with a neighbour
        left, right = judged.astype(np.int64), judged.astype(np.int64) + 1
        before = key[np.maximum(judged - 1, 0)] == jkey
        before[judged == 0] = False
        after = key[np.minimum(judged + 1, key.size - 1)] == jkey
        after[judged == key.size - 1] = False
        tie = np.flatnonzero(before | after)
        left[tie] = np.searchsorted(key, jkey[tie], side="left")
        right[tie] = np.searchsorted(key, jkey[tie], side="right")
    else:
        order = _sort_within_queries(key, qidx, query_start, query_sizes, workers)
        # searched in key order, each search starts where the last one ended
        by_key = np.argsort(jkey)
        left, right = np.empty_like(judged, dtype=np.int64), np.empty_like(judged, dtype=np.int64)
        left[by_key] = np.searchsorted(key, jkey[by_key], side="left")
        right[by_key] = np.searchsorted(key, jkey[by_key], side="right")
    in_group = np.zeros(judged.size, dtype=np.int64)
    tied = np.flatnonzero(right - left > 1)
    if tied.size:
        rank_among_ties = (
            _rank_among_ties_pairwise
            if int((right[tied] - left[tied]).sum()) <= max(key.size, _PAIRWISE_MIN)
            else _rank_among_ties_sorted
        )
        in_group[tied] = rank_among_ties(
            docs,
            rows=rows,
            order=order,
            judged=judged[tied],
            left=left[tied],
            right=right[tied],
            scores=scores if double else None,
        )
    position: IntArray = left + in_group - begin
    return position


def _sort_within_queries(
    key: U64Array,
    qidx: IntArray,
    query_start: IntArray,
    query_sizes: IntArray,
    workers: int | None,
) -> IntArray:
    """Sort ``key`` (``query << 32 | low 32 bits``) in place and return the stable order it was
    sorted by; the rows are grouped by query in increasing code order.

    Each query's rows are sorted on their own (numpy's sort of many small rows is several times
    faster than one sort of them all), by (low 32 bits, row within the query) packed in one
    uint64; queries of more than 16,384 rows, or very ragged sizes, take one stable argsort.
    """
    packed = np.empty(key.size, dtype=np.uint64)
    for lo in range(0, key.size, _BLOCK):  # block by block: small temporaries
        hi = min(lo + _BLOCK, key.size)
        part = packed[lo:hi]
        np.left_shift(key[lo:hi], _U64(32), out=part)  # the query bits go
        within = np.arange(lo, hi, dtype=np.int64) - query_start[qidx[lo:hi]]
        part |= within.view(np.uint64)
    if not _sort_segments(packed, query_sizes, workers or _threads()):
        order: IntArray = np.argsort(key, kind="stable").astype(np.int64)
        key[:] = key[order]
        return order
    low = _U64(0xFFFFFFFF)
    for lo in range(0, key.size, _BLOCK):
        hi = min(lo + _BLOCK, key.size)
        part, sorted_part = key[lo:hi], packed[lo:hi]
        part >>= _U64(32)  # the query bits stay (each row keeps its query's segment) ...
        part <<= _U64(32)
        part |= sorted_part >> _U64(32)  # ... with the sorted low bits
        sorted_part &= low  # the row within the query ...
        sorted_part.view(np.int64)[:] += query_start[qidx[lo:hi]]  # ... and the row itself
    return packed.view(np.int64)


_PAIRWISE_MIN = 1 << 16  # tie pairs always compared pairwise below this many


def _rank_among_ties_pairwise(
    docs: pa.ChunkedArray,
    *,
    rows: IntArray | None,
    order: IntArray | None,
    judged: IntArray,
    left: IntArray,
    right: IntArray,
    scores: npt.NDArray[np.float64] | None = None,
) -> IntArray:
    """For each judged entry (index into ``rows``; None: every row of ``docs``) whose tie
    group is the sorted slots ``left .. right - 1`` (slot ``i`` holds entry ``order[i]``;
    None: entry ``i``): how many docs of its group have a greater ID (byte order); with
    ``scores`` (per entry), how many have a greater score or an equal score and a greater ID.

    Compares each entry with every member of its group: fast while groups are small. Most
    pairs are decided by the IDs' first 8 bytes and their lengths; only two different IDs of 8
    bytes or more that share their first 8 bytes compare the ID strings.
    """
    sizes = right - left
    owner = np.repeat(np.arange(judged.size, dtype=np.int64), sizes)
    member_slot = np.repeat(left - (np.cumsum(sizes) - sizes), sizes)
    member_slot += np.arange(member_slot.size, dtype=np.int64)
    member_local = member_slot if order is None else order[member_slot]
    member_row = member_local if rows is None else rows[member_local]
    judged_row = judged if rows is None else rows[judged]
    words, lengths = _leading_words(docs, np.concatenate([member_row, judged_row]))
    n = member_row.size
    member_word, member_length = words[:n], lengths[:n]
    owner_word, owner_length = words[n:][owner], lengths[n:][owner]
    greater = member_word > owner_word
    same_word = member_word == owner_word
    greater |= same_word & (member_length > owner_length)
    # equal first 8 bytes: an ID shorter than 8 bytes is then a prefix of the other, so the
    # lengths decide; when both IDs have 8 bytes or more, only the strings can tell
    unsure = np.flatnonzero(
        same_word
        & (np.minimum(member_length, owner_length) >= 8)
        & (np.maximum(member_length, owner_length) > 8)
        & (member_row != judged_row[owner])
    )
    if unsure.size:
        greater[unsure] = pc.greater(
            _take(docs, member_row[unsure]), _take(docs, judged_row[owner[unsure]])
        ).to_numpy(zero_copy_only=False)
    if scores is not None:
        member_score, owner_score = scores[member_local], scores[judged][owner]
        greater &= member_score == owner_score  # -0.0 == 0.0, as in C
        greater |= member_score > owner_score
    counts: IntArray = np.bincount(owner[greater], minlength=judged.size).astype(np.int64)
    return counts


def _leading_words(strings: pa.ChunkedArray, at: IntArray) -> tuple[U64Array, IntArray]:
    """The first 8 bytes (zero-padded, big-endian: integer order is byte order) and the byte
    length of the strings at rows ``at``."""
    words = np.zeros(at.size, dtype=np.uint64)
    lengths = np.zeros(at.size, dtype=np.int64)
    lo = 0
    for chunk in strings.chunks:
        hi = lo + len(chunk)
        mine = np.flatnonzero((at >= lo) & (at < hi)) if strings.num_chunks > 1 else None
        local = at - lo if mine is None else at[mine] - lo
        lo = hi
        buffers = chunk.buffers()
        if local.size == 0 or buffers[2] is None or buffers[2].size == 0:
            continue  # no row here, or every string of the chunk is empty
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(buffers[1], dtype=offset_type)[chunk.offset :]
        start = offsets[local].astype(np.int64)
        length = offsets[local + 1].astype(np.int64) - start
        data = np.frombuffer(buffers[2], dtype=np.uint8)
        if data.size < 8:
            data = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
        # every 8-byte window of the data as a big-endian integer (a strided view, no copy);
        # a string starting in the last 7 bytes is read from the last window, then shifted
        windows = np.ndarray((data.size - 7,), dtype=">u8", buffer=data, strides=(1,))
        first = np.minimum(start, data.size - 8)
        word = windows[first].astype(np.uint64)
        late = np.flatnonzero(first < start)
        shift = np.minimum(start[late] - first[late], 7).astype(np.uint64) * _U64(8)
        word[late] <<= shift
        # zero the bytes past each string's end
        short = np.flatnonzero(length < 8)
        word[short] &= ~(_ALL_BITS >> (length[short] * 8).astype(np.uint64))
        if mine is None:
            words, lengths = word, length
        else:
            words[mine], lengths[mine] = word, length
    return words, lengths


def _rank_among_ties_sorted(
    docs: pa.ChunkedArray,
    *,
    rows: IntArray | None,
    order: IntArray | None,
    judged: IntArray,
    left: IntArray,
    right: IntArray,
    scores: npt.NDArray[np.float64] | None = None,
) -> IntArray:
    """:func:`_rank_among_ties_pairwise` for large tie groups: every member of the groups is
    sorted once by (group, score descending when ``scores`` is given, ID descending)."""
    group_start, first = np.unique(left, return_index=True)
    sizes = right[first] - group_start
    member_slot = np.repeat(group_start - (np.cumsum(sizes) - sizes), sizes)
    member_slot += np.arange(member_slot.size, dtype=np.int64)
    member_local = member_slot if order is None else order[member_slot]
    member_group = np.repeat(np.arange(group_start.size, dtype=np.int64), sizes)
    member_row = member_local if rows is None else rows[member_local]
    columns = {"g": member_group, "d": _take(docs, member_row)}
    sort_keys = [("g", "ascending"), ("d", "descending")]
    if scores is not None:
        columns["s"] = scores[member_local] + 0.0  # -0.0 + 0.0 == +0.0: ties with 0.0
        sort_keys.insert(1, ("s", "descending"))
    ranked = pc.sort_indices(pa.table(columns), sort_keys=sort_keys)
    ranked_np = ranked.to_numpy(zero_copy_only=False).astype(np.int64)
    member_rank = np.empty(ranked_np.size, dtype=np.int64)
    member_rank[ranked_np] = np.arange(ranked_np.size, dtype=np.int64) - np.repeat(
        np.cumsum(sizes) - sizes, sizes
    )
    if order is None:  # members were listed by slot, which is their row order here
        where = np.searchsorted(member_local, judged)
    else:
        by_local = np.argsort(member_local)
        where = by_local[np.searchsorted(member_local[by_local], judged)]
    ranks: IntArray = member_rank[where]
    return ranks


def _given_positions(
    qidx: IntArray, ranks: IntArray | None, judged: IntArray, query_start: IntArray
) -> IntArray:
    """Positions by ``rank`` ascending (else row order) within each query (``query_start``: as
    for :func:`_trec_positions`)."""
    order = np.argsort(qidx, kind="stable") if ranks is None else np.lexsort((ranks, qidx))
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.arange(order.size, dtype=np.int64)
    position: IntArray = inverse[judged] - query_start[qidx[judged]]
    return position


def _keep_first(
    dup_rows: IntArray,
    *,
    run_q: pa.ChunkedArray,
    run_d: pa.ChunkedArray,
    scores: npt.NDArray[np.float64],
    ranks: IntArray | None,
    ties: Ties,
    n_rows: int,
    double: bool = False,
) -> npt.NDArray[np.bool_]:
    """Row mask keeping, of each duplicated (query, doc) pair, the occurrence ranked first."""
    frame = pd.DataFrame(
        {
            "q": pc.take(run_q, dup_rows).to_numpy(zero_copy_only=False),
            "d": pc.take(run_d, dup_rows).to_numpy(zero_copy_only=False),
            "row": dup_rows,
        }
    )
    if ties == "trec" and double:
        frame["key"] = -(scores[dup_rows] + 0.0)
    elif ties == "trec":
        frame["key"] = _descending_float32_key(scores[dup_rows])
    elif ranks is not None:
        frame["key"] = ranks[dup_rows]
    else:
        frame["key"] = 0
    frame = frame.sort_values(["key", "row"], kind="stable")
    drop = frame.loc[frame.duplicated(["q", "d"], keep="first"), "row"].to_numpy()
    keep = np.ones(n_rows, dtype=bool)
    keep[drop] = False
    return keep
