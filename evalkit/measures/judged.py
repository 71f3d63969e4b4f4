"""The judged ranking: the input of every measure kernel, the kernel type and its registry.

:class:`JudgedRanking` is built by :func:`evalkit.measures.ranking.judged_ranking` (a run in
memory), :mod:`evalkit.measures.stream` (a run file), :mod:`evalkit.measures.cluster` (a Dask
frame) or :meth:`JudgedRanking.of_list` (one ranked list of IDs). A kernel takes it and a parsed
measure and returns float64[n], one value per query. Each kernel is declared with its measure by
:func:`kernel` (``@kernel("RR", description, cutoff=..., params=...)``), which puts the measure
in the catalog (:mod:`evalkit.measures._catalog`) and the kernel in :data:`KERNELS`; the kernels
live in their family's module (:mod:`evalkit.measures.binary`, :mod:`evalkit.measures.gain`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray, IntArray
from evalkit.measures._catalog import SpecOptions, declare
from evalkit.registry import Registry

if TYPE_CHECKING:
    from evalkit.measures.names import Measure

__all__ = [
    "KERNELS",
    "JudgedRanking",
    "Kernel",
    "group_runs",
    "grouped_accumulate",
    "kernel",
    "positions_in_group",
    "ratio",
]

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

    def once(self, key: tuple[str, int], make: Callable[[], _Array]) -> _Array:
        """``make()``, computed on the first call with this key only."""
        if key not in self._shared:
            value = make()
            value.flags.writeable = False
            self._shared[key] = value
        return self._shared[key]  # type: ignore[return-value]  # stored by make() for key

    @classmethod
    def of_list(cls, ranked: Sequence[str], grades: Mapping[str, int]) -> JudgedRanking:
        """The judged ranking of one query: ``ranked`` IDs, best first, judged by ``grades``
        (``{ID: grade}``; an ID without a grade is unjudged). A repeated ID keeps its first
        place: later repeats are dropped, so a repeat neither counts twice nor pushes the IDs
        after it down. The query's ID is ``""``."""
        ids = list(dict.fromkeys(ranked))
        judged = [(at, grades[doc]) for at, doc in enumerate(ids) if doc in grades]
        position = np.array([at for at, _ in judged], dtype=np.int64)
        grade = np.array([g for _, g in judged], dtype=np.int64)
        qrels_grade = np.sort(np.array(list(grades.values()), dtype=np.int64))[::-1]
        return cls(
            query_ids=("",),
            num_ret=np.array([len(ids)], dtype=np.int64),
            query=np.zeros(position.size, dtype=np.int64),
            position=position,
            grade=grade,
            qrels_query=np.zeros(qrels_grade.size, dtype=np.int64),
            qrels_grade=np.ascontiguousarray(qrels_grade),
        )

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
        # -M 0 empties every ranking (trec_eval's placeholder doc of a missing query too)
        emptied = np.ones(self.n_queries, dtype=bool) if max_docs == 0 else None
        if judged_only:
            keep = grade >= 0
            query, grade = query[keep], grade[keep]
            position = positions_in_group(query)
            judged = np.bincount(query, minlength=self.n_queries).astype(np.int64)
            # trec_eval -c ranks one unjudged placeholder doc for a query the run lacks,
            # which -J drops too: every query without a judged doc ends up empty
            emptied = judged == 0 if emptied is None else emptied | (judged == 0)
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
        return self.once(
            ("num_rel", rel), lambda: self.count(self.qrels_grade >= rel, self.qrels_query)
        )

    def relevant(self, rel: int) -> npt.NDArray[np.bool_]:
        """Mask of the judged retrieved entries that are relevant."""
        rel = max(rel, 0)
        return self.once(("relevant", rel), lambda: self.grade >= rel)

    def ideal_positions(self) -> IntArray:
        """0-based position of each qrels row with grade > 0 among its query's rows with
        grade > 0 (by grade descending), -1 for the others."""

        def make() -> IntArray:
            positive = self.qrels_grade > 0
            out = np.full(self.qrels_grade.size, -1, dtype=np.int64)
            out[positive] = positions_in_group(self.qrels_query[positive])
            return out

        return self.once(("ideal_positions", 0), make)

    def top(self, cutoff: float | None) -> npt.NDArray[np.bool_]:
        """Mask of the judged entries ranked within the first ``cutoff`` (None: every one)."""
        if cutoff is None:
            return np.ones(self.position.size, dtype=bool)
        return self.position < cutoff

    def rank_in_query(self, mask: npt.NDArray[np.bool_]) -> IntArray:
        """1-based running count, within each query, of the entries selected by ``mask``."""
        return positions_in_group(self.query[mask]) + 1


#: A kernel: the judged ranking and a parsed measure → float64[n], one value per query.
Kernel = Callable[[JudgedRanking, "Measure"], FloatArray]

#: Measure name → kernel; every measure :func:`evalkit.measures.score` computes on a judged
#: ranking (filled by :func:`kernel` in the family modules, which
#: :mod:`evalkit.measures.names` imports).
KERNELS: Registry[Kernel] = Registry("measure")


def kernel(name: str, description: str, **spec: Unpack[SpecOptions]) -> Callable[[Kernel], Kernel]:
    """Declare the measure ``name`` in the catalog (its description and the other fields of
    :class:`~evalkit.measures._catalog.MeasureSpec`; its family is the decorated function's
    module) and register the decorated function as its kernel in :data:`KERNELS`."""

    def register(function: Kernel) -> Kernel:
        declare(name, description, function.__module__, **spec)
        KERNELS.register(name, function)
        return function

    return register


def ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator, 0.0 where the denominator is 0 (a ratio measure's rule)."""
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


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


_LONG_GROUP = 64  # groups longer than this are accumulated one by one


def grouped_accumulate(ufunc: np.ufunc, values: FloatArray, groups: IntArray) -> FloatArray:
    """``ufunc.accumulate`` of ``values`` within each run of equal ``groups`` values (each
    group's entries together), in order: the running maximum (``np.maximum``) or product
    (``np.multiply``) of a query's entries, computed left to right as a loop over the entries
    would (so every value is the one such a loop gives, bit for bit).

    Vectorized over the groups, one step per position in a group; groups longer than 64
    entries are accumulated one by one."""
    out = np.array(values, dtype=np.float64)
    if out.size == 0:
        return out
    starts, lengths = group_runs(groups)
    for start, length in zip(
        starts[lengths > _LONG_GROUP].tolist(), lengths[lengths > _LONG_GROUP].tolist(), strict=True
    ):
        ufunc.accumulate(out[start : start + length], out=out[start : start + length])
    short = lengths <= _LONG_GROUP
    starts, lengths = starts[short], lengths[short]
    for k in range(1, int(lengths.max(initial=0))):
        at = starts[lengths > k] + k
        out[at] = ufunc(out[at - 1], out[at])
    return out
