"""The judged ranking: the input of every measure kernel, and the kernel type.

:class:`JudgedRanking` is built by :func:`evalkit.measures.ranking.judged_ranking` (a run in
memory), :mod:`evalkit.measures.stream` (a run file) or :mod:`evalkit.measures.cluster` (a Dask
frame); the kernels of :mod:`evalkit.measures.kernels` and :mod:`evalkit.measures.kernels_gain`
read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from evalkit.measures.names import Measure

__all__ = [
    "FloatArray",
    "IntArray",
    "JudgedRanking",
    "Kernel",
    "group_runs",
    "positions_in_group",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
_Array = TypeVar("_Array", bound=npt.NDArray[Any])


@dataclass(frozen=True)
class JudgedRanking:
    """The judged part of a run, grouped by query; the input of every kernel.

    ``query_ids``: the qrels' query IDs, sorted (``n`` queries; kernel outputs follow this order).
    ``num_ret``: int64[n], documents retrieved per query.
    ``query``, ``position``, ``grade``: int64[m], one entry per retrieved document that is in
    the qrels, sorted by (query, position); ``position`` is the 0-based rank in the query.
    ``qrels_query``, ``qrels_grade``: int64[r], every qrels row, sorted by (query, grade
    descending).
    ``trec_version`` ("9" or "10") and ``num_docs`` (trec_eval's ``-N``, or None): options
    some kernels read; ``emptied``: bool[n], the queries whose ranking ``-J`` emptied (None:
    none); ``unranked``: bool[n], the queries the run does not rank (None: not known).
    """

    query_ids: tuple[str, ...]
    num_ret: IntArray
    query: IntArray
    position: IntArray
    grade: IntArray
    qrels_query: IntArray
    qrels_grade: IntArray
    trec_version: str = "10"
    num_docs: int | None = None
    emptied: npt.NDArray[np.bool_] | None = None  # queries -J left without a doc
    unranked: npt.NDArray[np.bool_] | None = None  # queries the run does not rank
    # arrays that several measures use, computed once (read-only)
    _shared: dict[tuple[str, int], npt.NDArray[np.generic]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _once(self, key: tuple[str, int], make: Callable[[], _Array]) -> _Array:
        """``make()``, computed on the first call with this key only."""
        if key not in self._shared:
            value = make()
            value.flags.writeable = False
            self._shared[key] = value
        return self._shared[key]  # type: ignore[return-value]  # stored by make() for key

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def with_options(
        self,
        *,
        trec_version: str,
        num_docs: int | None,
        unranked: npt.NDArray[np.bool_] | None = None,
    ) -> JudgedRanking:
        """This ranking with the options kernels read."""
        return replace(self, trec_version=trec_version, num_docs=num_docs, unranked=unranked)

    def restricted(self, *, max_docs: int | None, judged_only: bool) -> JudgedRanking:
        """trec_eval's ``-M max_docs`` (keep each query's first ``max_docs`` ranked docs), then
        ``-J`` (drop every doc without a grade >= 0 and rank the rest, in their order)."""
        query, position, grade, num_ret = self.query, self.position, self.grade, self.num_ret
        if max_docs is not None:
            keep = position < max_docs
            query, position, grade = query[keep], position[keep], grade[keep]
            num_ret = np.minimum(num_ret, max_docs)
        emptied = None
        if judged_only:
            keep = grade >= 0
            query, grade = query[keep], grade[keep]
            position = positions_in_group(query)
            judged = np.bincount(query, minlength=self.n_queries).astype(np.int64)
            # trec_eval -c ranks one unjudged placeholder doc for a query the run lacks,
            # which -J drops too: every query without a judged doc ends up empty
            emptied = judged == 0
            num_ret = judged
        return replace(
            self, query=query, position=position, grade=grade, num_ret=num_ret, emptied=emptied
        )

    def count(self, mask: npt.NDArray[np.bool_], index: IntArray | None = None) -> FloatArray:
        """Per-query count of the judged entries selected by ``mask``."""
        idx = self.query if index is None else index
        return np.bincount(idx[mask], minlength=self.n_queries).astype(np.float64)

    def total(self, mask: npt.NDArray[np.bool_], weights: FloatArray) -> FloatArray:
        """Per-query sum of ``weights`` over the judged entries selected by ``mask``."""
        total = np.bincount(self.query[mask], weights=weights[mask], minlength=self.n_queries)
        return total.astype(np.float64, copy=False)

    def num_rel(self, rel: int) -> FloatArray:
        """Per-query number of relevant qrels rows (grade >= rel and >= 0)."""
        rel = max(rel, 0)
        return self._once(
            ("num_rel", rel), lambda: self.count(self.qrels_grade >= rel, self.qrels_query)
        )

    def relevant(self, rel: int) -> npt.NDArray[np.bool_]:
        """Mask of the judged retrieved entries that are relevant."""
        rel = max(rel, 0)
        return self._once(("relevant", rel), lambda: self.grade >= rel)

    def ideal_positions(self) -> IntArray:
        """0-based position of each qrels row with grade > 0 among its query's rows with
        grade > 0 (by grade descending), -1 for the others."""

        def make() -> IntArray:
            positive = self.qrels_grade > 0
            out = np.full(self.qrels_grade.size, -1, dtype=np.int64)
            out[positive] = positions_in_group(self.qrels_query[positive])
            return out

        return self._once(("ideal_positions", 0), make)

    def rank_in_query(self, mask: npt.NDArray[np.bool_]) -> IntArray:
        """1-based running count, within each query, of the entries selected by ``mask``."""
        return positions_in_group(self.query[mask]) + 1


Kernel = Callable[[JudgedRanking, Measure], FloatArray]


def positions_in_group(sorted_groups: IntArray) -> IntArray:
    """0-based position of each entry within its run of equal values (input sorted)."""
    starts, lengths = group_runs(sorted_groups)
    return np.arange(sorted_groups.size, dtype=np.int64) - np.repeat(starts, lengths)


def group_runs(sorted_groups: IntArray) -> tuple[IntArray, IntArray]:
    """Start index and length of each run of equal values (input sorted)."""
    first = np.ones(sorted_groups.size, dtype=bool)
    first[1:] = sorted_groups[1:] != sorted_groups[:-1]
    starts = np.flatnonzero(first)
    return starts, np.diff(starts, append=sorted_groups.size)
