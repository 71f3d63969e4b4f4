"""Paired comparisons over per-query frames, and group means with bootstrap intervals.

Public API::

    compare(per_query, base, ...)        -> DataFrame   every system against a base system
    compare(per_query, None, ...)        -> DataFrame   every pair of systems (all pairs)
    compare(per_query, pairs=[...], ...) -> DataFrame   the given (system, base) pairs
    summarize_with_ci(per_query, ...)    -> DataFrame   group means with bootstrap intervals

with the columns of their frames (:data:`COMPARE_COLUMNS`, :data:`SUMMARY_COLUMNS`). The tests,
intervals and corrections they run (:func:`evalkit.stats.paired_test`,
:func:`evalkit.stats.bootstrap_ci`, :func:`evalkit.stats.t_interval`,
:func:`evalkit.stats.adjust_pvalues`), and the conventions shared with them
(paired differences and ties, reproducibility, degenerate cases), are in
``_paired_tests``; the checks of the per-query frame in
``_validation``.

Tests for many systems at once (ANOVA, Tukey's HSD, the randomized Tukey HSD) live in
``_multi``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit._arrays import FloatArray, IndexArray
from evalkit.errors import InputError
from evalkit.measures.names import higher_is_better
from evalkit.registry import did_you_mean
from evalkit.stats._paired_tests import (
    CORRECTIONS,
    INTERVAL_METHODS,
    TESTS,
    adjust_pvalues,
    mean_interval,
    paired_p_values,
)
from evalkit.stats._resampling import (
    count_blocks,
    group_seed,
    kept_blocks,
    pair_percentile_intervals,
    pair_sign_flip_p,
    percentile_intervals,
    random_generator,
    resample_totals,
    sign_blocks,
    sign_flip_exact,
    sign_flip_p,
)
from evalkit.stats._ties import differences_and_unit, is_constant
from evalkit.stats._validation import (
    check_choice,
    check_resampling,
    column_names,
    describe_key,
    selected_measures,
    short_list,
    validated_frame,
)

__all__ = [
    "COMPARE_COLUMNS",
    "COMPARE_INTERVALS",
    "EFFECT_SIZE_DZ",
    "PAIR_COLUMNS",
    "SUMMARY_COLUMNS",
    "compare",
    "summarize_with_ci",
    "typed_frame",
]


COMPARE_INTERVALS = (*INTERVAL_METHODS, "t")
"""``interval=`` of :func:`compare`: a bootstrap method, or ``"t"`` (Student t, df = n - 1)."""

EFFECT_SIZE_DZ = "d_z"
"""``effect_size_kind`` of :func:`compare`: ``mean(d) / std(d, ddof=1)`` (Cohen's d_z)."""

PAIR_COLUMNS = ("system", "base", "measure", "n", "base_mean", "mean", "diff")
"""The leading columns of every pairwise frame (:func:`compare`, :func:`tukey_hsd`): which pair,
on how many topics, and the difference of means ``mean - base_mean``."""

COMPARE_COLUMNS = (
    *PAIR_COLUMNS,
    "variance",
    "ci_method",
    "ci_low",
    "ci_high",
    "t",
    "df",
    "t_ci_low",
    "t_ci_high",
    "effect_size",
    "effect_size_kind",
    "wins",
    "ties",
    "losses",
    "test",
    "p_value",
    "p_method",
    "family",
    "family_size",
    "p_adjusted",
    "significant",
)
"""Columns of :func:`compare`; the ``by`` columns are inserted after ``measure``."""

_TEXT_COLUMNS = (
    "system",
    "base",
    "measure",
    "ci_method",
    "effect_size_kind",
    "test",
    "p_method",
    "family",
)
_INT_COLUMNS = ("n", "df", "wins", "ties", "losses", "family_size")

SUMMARY_COLUMNS = ("n", "mean", "ci_low", "ci_high")
"""Columns of :func:`summarize_with_ci` after the ``by`` columns."""

PAIR_BLOCK_VALUES = 1 << 23
"""Values held per array while pairs are compared: the pairs of a (measure, group) are
processed in blocks of ``PAIR_BLOCK_VALUES // (2 max(n_resamples, n))`` pairs (a test or
interval that resamples each pair on its own: the bootstrap test, BCa), so memory stays near
``8 * PAIR_BLOCK_VALUES`` bytes (64 MB) per resampling array whatever the number of pairs, or
``PAIR_BLOCK_VALUES // (8 n)`` (the others, which hold several ``(n, pairs)`` arrays at once:
8 MB each). The randomization test and the percentile interval add the per-system totals of
``_resampling.resample_totals``, ``8 k B`` bytes each (80 MB for 1,000 systems and 10,000
resamples), when they fit in :data:`PAIR_TOTALS_VALUES`."""

PAIR_TOTALS_VALUES = 1 << 25
"""At most this many per-system totals (systems x resamples, 256 MB) per array; beyond, each
block of pairs is resampled on its own as for the bootstrap test (memory bounded, slower)."""


def compare(
    per_query: pd.DataFrame,
    base: str | None = None,
    measures: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
    test: str = "randomization",
    correction: str = "holm",
    interval: str = "percentile",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """Paired comparisons of systems: one row per (pair of systems, measure, *by).

    ``per_query`` is the tidy frame (``system, query_id, measure, value`` plus the ``by``
    columns). Queries are paired by ``query_id`` within each measure. With ``base`` a system
    name, every other system is compared with it; with ``base=None`` every pair of systems is
    compared (all pairs: for systems sorted by name ``s_1 < s_2 < ...``, the row of the pair
    ``i < j`` has ``system = s_i`` and ``base = s_j``). With ``pairs`` (and ``base=None``),
    exactly those ``(system, base)`` pairs are compared, in their order: many unrelated pairs
    (each system against its own baseline, :func:`evalkit.gates.compare_with_baseline`) in one
    call, each pair's numbers those of a call with its two systems alone (see below); only
    the family columns, ``p_adjusted`` and ``significant`` read the other rows.
    ``measures=None`` means every measure present (sorted by name); a list keeps its order.
    ``by`` names query-attribute columns (e.g. ``"language"``) to split each comparison into
    groups.

    Rows are sorted by ``system``, then ``base`` (with ``pairs``: in their order), then
    measure, then the ``by`` values in ascending order. Columns (:data:`COMPARE_COLUMNS`, the
    ``by`` columns after ``measure``):

    ``system, base, measure, *by``; ``n`` (int) paired queries; ``base_mean`` and ``mean`` of
    ``base`` and of ``system``; ``diff`` the mean of the paired differences
    ``d = system - base``; ``variance`` their sample variance (``ddof=1``; NaN for one query);
    ``ci_method, ci_low, ci_high`` an interval of ``diff`` at ``confidence`` by ``interval``
    (``"percentile"`` or ``"bca"`` bootstrap, or ``"t"``); ``t, df`` the paired t statistic
    ``diff / sqrt(variance / n)`` and its degrees of freedom ``n - 1`` (``t = 0.0`` when every
    ``d`` is 0, NaN when undefined); ``t_ci_low, t_ci_high`` the t-based interval
    (:func:`t_interval`) beside the one chosen by ``interval``; ``effect_size`` and
    ``effect_size_kind`` (:data:`EFFECT_SIZE_DZ`): Cohen's d_z = ``diff / sqrt(variance)``
    (``0.0`` when every ``d`` is 0, ``NaN`` when undefined: one query, or constant non-zero
    ``d``); ``wins, ties, losses`` (int) queries where ``system`` is better than, equal to (the
    rule of :mod:`evalkit.stats`), or worse than ``base``, in the measure's direction
    (:func:`evalkit.measures.higher_is_better`: for ``NoAnswerFP`` a win is a decrease);
    ``test`` and ``p_value`` (see :func:`paired_test`); ``p_method`` (text, one of
    :data:`evalkit.stats.P_METHODS`): ``"exact"`` when every sign vector was
    enumerated (the randomization test with ``2**n <= n_resamples``) or the null distribution
    is exact, ``"monte-carlo"`` when sampled, ``"t"``, ``"normal"``, or ``"undefined"`` for NaN;
    ``family`` (text) and ``family_size`` (int): the family of comparisons the correction runs
    over, which is *every row of this result* (its non-NaN p-values); ``p_adjusted`` by
    ``correction`` over that family; ``significant`` (bool) ``p_adjusted <= alpha``.

    Resampling is vectorized over pairs: every pair of one (measure, group) uses the same
    bootstrap resamples and sign vectors (``_resampling``), drawn from two
    streams derived from ``seed`` and the (measure, group) key (BCa intervals: one stream per
    row key). So the same inputs and seed give byte-identical frames, whatever the row order of
    ``per_query``, and a row's numbers (all but the family columns, ``p_adjusted`` and
    ``significant``) depend only on its two systems' values, not on the other systems,
    measures or groups present. The randomization test and the percentile interval (the
    defaults) take each pair's resampled sums and means as the difference of its two systems'
    (computed once per system, ``_resampling``): the same p-values as resampling
    the pair's own differences, and intervals equal to those up to float rounding (about
    ``1e-16``). The pairs of a (measure, group) are processed in blocks of
    :data:`PAIR_BLOCK_VALUES`, so memory is bounded (a thousand systems, 499,500 pairs, fit)
    and the frame is the one a single block would give.
    Raises :class:`InputError` (naming systems, measures, query IDs and columns) when ``base``
    or a measure is absent, a column is missing, a (system, query_id, measure) row is
    duplicated, a value is missing or not finite, a query is present for one system and missing
    for another, or a ``by`` attribute differs between systems for the same query.
    """
    by_columns = column_names(by, "by")
    check_choice("test", test, TESTS)
    check_choice("correction", correction, CORRECTIONS)
    check_choice("interval", interval, COMPARE_INTERVALS)
    check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not (isinstance(alpha, float | int) and 0.0 < alpha < 1.0):
        raise InputError(f"compare: 'alpha' must be a number in (0, 1); found {alpha!r}")
    frame = validated_frame(per_query, by_columns, function="compare")
    systems = sorted(frame["system"].unique())
    if base is not None and base not in systems:
        raise InputError(
            f"compare: base system {base!r} has no rows; systems present: "
            f"{short_list(systems)}.{did_you_mean(str(base), systems)}"
        )
    measure_names = selected_measures(frame, measures)
    compared: list[tuple[str, str]]
    if pairs is not None:
        compared = _given_pairs(pairs, base, systems)
    elif base is None:
        compared = list(itertools.combinations(systems, 2))
    else:
        compared = [(system, base) for system in systems if system != base]

    parts: list[dict[str, Any]] = []
    rows = _MeasureRows.of(frame, by_columns)
    for measure_index, measure in enumerate(measure_names if compared else []):
        for part in _compare_measure(
            rows,
            pairs=compared,
            measure=measure,
            by_columns=by_columns,
            test=test,
            interval=interval,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        ):
            part["_measure"] = np.full(len(part["_pair"]), measure_index)
            parts.append(part)

    result = _compare_frame(parts, by_columns, per_query)
    p_values = result["p_value"].to_numpy()
    family_size = int(np.count_nonzero(~np.isnan(p_values)))
    result["family"] = pd.Series(
        [
            _family(
                base,
                systems,
                given=len(compared) if pairs is not None else None,
                measures=measure_names,
                by_columns=by_columns,
                size=family_size,
                correction=correction,
            )
        ]
        * len(result),
        dtype="str",
    )
    result["family_size"] = pd.Series([family_size] * len(result), dtype=np.int64)
    result["p_adjusted"] = adjust_pvalues(p_values, correction)
    result["significant"] = (result["p_adjusted"] <= alpha).astype(bool)
    return result


def summarize_with_ci(
    per_query: pd.DataFrame,
    *,
    by: Sequence[str] = ("system", "measure"),
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "percentile",
    seed: int = 0,
) -> pd.DataFrame:
    """Group means with a bootstrap interval; columns ``*by, n, mean, ci_low, ci_high``.

    One row per distinct combination of the ``by`` columns, sorted ascending by them; ``n``
    (int) is the number of rows in the group. Each group is resampled on its own (values sorted
    by ``query_id``, then system and measure) with a stream derived from ``seed`` and the group
    key, so a group's interval is the same whatever else the frame holds. ``method`` as in
    :func:`bootstrap_ci`. Raises :class:`InputError` for missing columns, missing or non-finite
    values, or duplicated (system, query_id, measure) rows.
    """
    by_columns = column_names(by, "by")
    if not by_columns:
        raise InputError("summarize_with_ci: 'by' is empty; expected at least one column name")
    check_choice("method", method, INTERVAL_METHODS)
    check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    frame = validated_frame(per_query, by_columns, function="summarize_with_ci")
    within_group = ("query_id", "system", "measure")
    order = [*by_columns, *(c for c in within_group if c in frame.columns and c not in by_columns)]
    frame = frame.sort_values(order, kind="stable")

    records: list[dict[str, Any]] = []
    # each group's values as a slice of one array ordered by group number (groupby's order;
    # rows keep their order within a group), not a sub-frame per group
    grouped = frame.groupby(list(by_columns), sort=True, dropna=False)
    index = grouped.size().index
    keys = index.tolist() if isinstance(index, pd.MultiIndex) else [(v,) for v in index.tolist()]
    numbers = grouped.ngroup().to_numpy()
    by_group = np.argsort(numbers, kind="stable")
    bounds = np.searchsorted(numbers[by_group], np.arange(len(keys) + 1))
    ordered_values: FloatArray = frame["value"].to_numpy(dtype=np.float64)[by_group]
    for number, key in enumerate(keys):
        values = ordered_values[bounds[number] : bounds[number + 1]]
        stream = random_generator(group_seed(seed, "summarize_with_ci", by_columns, key))
        low, high = mean_interval(
            values,
            stream,
            confidence=confidence,
            n_resamples=n_resamples,
            method=method,
            where=describe_key(by_columns, key),
        )
        records.append(
            {
                **dict(zip(by_columns, key, strict=True)),
                "n": values.size,
                "mean": float(values.mean()),
                "ci_low": low,
                "ci_high": high,
            }
        )
    dtypes: dict[str, Any] = {column: per_query[column].dtype for column in by_columns}
    dtypes.update((name, np.int64 if name == "n" else np.float64) for name in SUMMARY_COLUMNS)
    return typed_frame(records, dtypes)


@dataclass(frozen=True)
class _MeasureRows:
    """The validated frame sorted once by (measure, system, query_id), with the rows of each
    (measure, system) as a slice of it, and its ``query_id``, ``value`` and ``by`` columns
    (``attributes``) as arrays: every measure of :func:`compare` then reads its systems'
    values as array slices, instead of filtering, grouping, indexing and reordering
    the frame once per measure (which dominated a comparison of a few systems on a few dozen
    queries)."""

    frame: pd.DataFrame
    query_ids: npt.NDArray[np.object_]
    values: FloatArray
    slices: dict[str, dict[str, slice]]
    attributes: dict[str, npt.NDArray[Any]]

    @classmethod
    def of(cls, frame: pd.DataFrame, by_columns: tuple[str, ...]) -> _MeasureRows:
        ordered = frame.sort_values(
            ["measure", "system", "query_id"], kind="stable", ignore_index=True
        )
        measures = ordered["measure"].to_numpy(dtype=object)
        systems = ordered["system"].to_numpy(dtype=object)
        starts = np.flatnonzero(
            np.concatenate(
                [[True], (measures[1:] != measures[:-1]) | (systems[1:] != systems[:-1])]
            )
        ).tolist()
        slices: dict[str, dict[str, slice]] = {}
        for start, stop in zip(starts, [*starts[1:], len(ordered)], strict=True):
            slices.setdefault(str(measures[start]), {})[str(systems[start])] = slice(start, stop)
        return cls(
            ordered,
            ordered["query_id"].to_numpy(dtype=object),
            ordered["value"].to_numpy(np.float64),
            slices,
            {column: ordered[column].to_numpy() for column in by_columns},
        )


def _compare_measure(
    rows: _MeasureRows,
    *,
    pairs: Sequence[tuple[str, str]],
    measure: str,
    by_columns: tuple[str, ...],
    test: str,
    interval: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[dict[str, Any]]:
    """The result columns of one measure, in blocks, each with its sort keys ``_pair`` (pair
    index) and ``_group`` (group index).

    All pairs of a (measure, group) share one bootstrap and one test stream, derived from
    ``seed`` and the (measure, group) key, and are resampled together (see
    ``_resampling``): a pair's numbers depend only on its two systems. Pairs
    are processed in blocks (:data:`PAIR_BLOCK_VALUES`), every block resampling from fresh
    generators of the same seeds or from the group's per-system totals, so blocking does not
    change a number.
    """
    rows_of = rows.slices.get(measure, {})
    involved = sorted({name for pair in pairs for name in pair})
    reference_name = pairs[0][1]
    for name in [reference_name, *involved]:
        if name not in rows_of:
            raise InputError(
                f"compare: system {name!r} has no rows for measure {measure!r}; every system "
                "needs a row per query for each compared measure"
            )
    reference_rows = rows_of[reference_name]
    reference_ids = rows.query_ids[reference_rows]
    for name in involved:  # each system's rows are sorted by query_id: the same IDs, in order
        system_ids = rows.query_ids[rows_of[name]]
        if not np.array_equal(system_ids, reference_ids):
            _check_same_queries(
                pd.Index(reference_ids), pd.Index(system_ids), name, reference_name, measure
            )
        for column in by_columns:
            differs = (
                rows.attributes[column][reference_rows] != rows.attributes[column][rows_of[name]]
            )
            if differs.any():
                raise InputError(
                    f"compare: column {column!r} differs between systems {reference_name!r} "
                    f"and {name!r} for measure {measure!r} at query IDs "
                    f"{short_list(reference_ids[differs])}; a query attribute must be the same "
                    "for every system"
                )

    matrix = np.column_stack([rows.values[rows_of[name]] for name in involved])
    names = np.array(involved, dtype=object)
    position = {name: i for i, name in enumerate(involved)}
    firsts = np.array([position[system] for system, _ in pairs], dtype=np.intp)
    seconds = np.array([position[base] for _, base in pairs], dtype=np.intp)
    groups = _group_keys(rows, by_columns, reference_rows)
    parts = []
    for group_index, group in enumerate(groups):
        mask = np.ones(reference_ids.size, dtype=bool)
        for column, value in zip(by_columns, group, strict=True):
            mask &= rows.attributes[column][reference_rows] == value
        values = matrix[mask]
        n = values.shape[0]
        means = values.mean(axis=0)
        key = (measure, *group)
        interval_seed, test_seed = group_seed(seed, "compare", ("measure", *by_columns), key).spawn(
            2
        )
        totals_fit = values.shape[1] * max(n_resamples, 1) <= PAIR_TOTALS_VALUES
        resamples = _GroupResamples(
            values=values,
            interval_seed=interval_seed,
            test_seed=test_seed,
            n_resamples=n_resamples,
            confidence=confidence,
            sign_totals=resample_totals(values, kept_blocks(sign_blocks, test_seed, n, n_resamples))
            if test == "randomization" and totals_fit
            else None,
            count_totals=resample_totals(
                values, kept_blocks(count_blocks, interval_seed, n, n_resamples)
            )
            if interval == "percentile" and totals_fit
            else None,
        )
        per_column = (test in ("randomization", "bootstrap") and resamples.sign_totals is None) or (
            interval in ("percentile", "bca") and resamples.count_totals is None
        )
        width = max(1, PAIR_BLOCK_VALUES // (2 * max(n_resamples, n) if per_column else 8 * n))
        for start in range(0, len(pairs), width):
            block = slice(start, start + width)
            first, second = firsts[block], seconds[block]
            diffs, unit = differences_and_unit(values[:, first], values[:, second])
            pair_block = _PairBlock(diffs, unit, first, second)
            if resamples.count_totals is not None:
                lows, highs = _pair_percentile_block(pair_block, resamples, resamples.count_totals)
            else:
                lows, highs = _intervals(
                    diffs,
                    unit,
                    interval=interval,
                    rng=random_generator(interval_seed),
                    n_resamples=n_resamples,
                    confidence=confidence,
                    streams=[
                        random_generator(
                            group_seed(
                                seed, "compare-bca", ("pair", "measure", *by_columns), (*pair, *key)
                            )
                        )
                        for pair in pairs[block]
                    ]
                    if interval == "bca"
                    else [],
                    places=[
                        describe_key(("system", "measure", *by_columns), (system, measure, *group))
                        for system, _ in pairs[block]
                    ]
                    if interval == "bca"
                    else [],
                )
            if resamples.sign_totals is not None:
                p_values, p_methods = _pair_randomization_block(
                    pair_block, resamples, resamples.sign_totals
                )
            else:
                p_values, p_methods = paired_p_values(
                    diffs,
                    unit,
                    test=test,
                    rng=random_generator(test_seed),
                    n_resamples=n_resamples,
                )
            part = _pair_statistics(diffs, unit, confidence, higher_is_better(str(measure)))
            size = diffs.shape[1]
            by_values = {
                column: np.full(size, value, dtype=object)
                for column, value in zip(by_columns, group, strict=True)
            }
            part.update(
                {
                    "_pair": np.arange(start, start + size),
                    "_group": np.full(size, group_index),
                    "system": names[first],
                    "base": names[second],
                    "measure": np.full(size, measure, dtype=object),
                    **by_values,
                    "n": np.full(size, n, dtype=np.int64),
                    "base_mean": means[second],
                    "mean": means[first],
                    "ci_method": np.full(size, interval, dtype=object),
                    "ci_low": lows,
                    "ci_high": highs,
                    "effect_size_kind": np.full(size, EFFECT_SIZE_DZ, dtype=object),
                    "test": np.full(size, test, dtype=object),
                    "p_value": p_values,
                    "p_method": p_methods.astype(object),
                }
            )
            parts.append(part)
    return parts


def _group_keys(
    rows: _MeasureRows, by_columns: tuple[str, ...], reference_rows: slice
) -> list[tuple[Any, ...]]:
    """The distinct ``by`` values of a measure's rows, sorted: ``[()]`` without ``by``. One
    column of text values (a language) is read from its array (``sorted(set(...))``, the
    order pandas sorts text in); other columns through pandas, which orders numbers and
    missing values its own way."""
    if not by_columns:
        return [()]
    if len(by_columns) == 1:
        values = rows.attributes[by_columns[0]][reference_rows]
        distinct = set(values.tolist())
        if all(type(value) is str for value in distinct):
            return [(value,) for value in sorted(distinct)]
    attributes = rows.frame[list(by_columns)].iloc[reference_rows]
    group_keys = attributes.drop_duplicates().sort_values(list(by_columns))
    return [tuple(row) for row in group_keys.itertuples(index=False)]


@dataclass(frozen=True)
class _GroupResamples:
    """The resampling of one (measure, group): its ``(n, k)`` values, the seeds of its
    interval and test streams, and the per-system totals of its sign vectors (the
    randomization test) and count vectors (the percentile interval), ``(k, B)`` each
    (:func:`resample_totals`; ``None`` when the test or interval does not use them)."""

    values: FloatArray
    interval_seed: np.random.SeedSequence
    test_seed: np.random.SeedSequence
    n_resamples: int
    confidence: float
    sign_totals: FloatArray | None
    count_totals: FloatArray | None


def _linear_pairs(
    diffs: FloatArray, first: IndexArray, second: IndexArray, values: FloatArray
) -> npt.NDArray[np.bool_]:
    """Whether each pair's tie-snapped differences are its raw ``x_first - x_second``: then
    its resampled statistics are differences of the two systems' totals."""
    snapped = (diffs == 0.0) & (values[:, first] != values[:, second])
    return np.asarray(~snapped.any(axis=0), dtype=bool)


@dataclass(frozen=True)
class _PairBlock:
    """A block of pairs: their ``(n, p)`` tie-snapped differences, units of equality, and the
    columns of their two systems in the group's values."""

    diffs: FloatArray
    unit: FloatArray
    first: IndexArray
    second: IndexArray


def _pair_percentile_block(
    block: _PairBlock, resamples: _GroupResamples, totals: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Percentile intervals of a block of pairs (see :func:`_intervals`): from the count
    totals where a pair's differences are linear, else from its own differences resampled
    with the same count vectors (:func:`percentile_intervals`); ``(mean, mean)`` when
    constant."""
    diffs, unit, first, second = block.diffs, block.unit, block.first, block.second
    n, width = diffs.shape
    constant = is_constant(diffs, unit)
    linear = _linear_pairs(diffs, first, second, resamples.values) & ~constant
    lows = np.empty(width, dtype=np.float64)
    highs = np.empty(width, dtype=np.float64)
    lows[linear], highs[linear] = pair_percentile_intervals(
        totals, first[linear], second[linear], n, resamples.confidence
    )
    for columns in _column_blocks(np.flatnonzero(~linear & ~constant), n, resamples.n_resamples):
        lows[columns], highs[columns] = percentile_intervals(
            diffs[:, columns],
            random_generator(resamples.interval_seed),
            resamples.n_resamples,
            resamples.confidence,
        )
    means = diffs.mean(axis=0)
    lows[constant] = highs[constant] = means[constant]
    return lows, highs


def _pair_randomization_block(
    block: _PairBlock, resamples: _GroupResamples, totals: FloatArray
) -> tuple[FloatArray, npt.NDArray[np.str_]]:
    """The randomization test of a block of pairs, as :func:`paired_p_values` gives it: from
    the sign totals where a pair's differences are linear, else from its own differences with
    the same sign vectors (:func:`sign_flip_p`); ``p = 1`` (exact) when every difference
    is 0."""
    diffs, unit, first, second = block.diffs, block.unit, block.first, block.second
    n, width = diffs.shape
    p_values = np.ones(width, dtype=np.float64)
    methods = np.full(width, "exact", dtype="<U11")
    active = np.asarray(diffs.any(axis=0), dtype=bool)
    linear = _linear_pairs(diffs, first, second, resamples.values) & active
    threshold = np.abs(diffs.sum(axis=0)) - n * unit
    exact = sign_flip_exact(n, resamples.n_resamples)
    p_values[linear], _ = pair_sign_flip_p(
        totals,
        first[linear],
        second[linear],
        threshold=threshold[linear],
        n=n,
        n_resamples=resamples.n_resamples,
    )
    for columns in _column_blocks(np.flatnonzero(~linear & active), n, resamples.n_resamples):
        p_values[columns], _ = sign_flip_p(
            diffs[:, columns],
            random_generator(resamples.test_seed),
            resamples.n_resamples,
            unit[columns],
        )
    methods[active] = "exact" if exact else "monte-carlo"
    return p_values, methods


def _column_blocks(columns: IndexArray, n: int, n_resamples: int) -> list[IndexArray]:
    """``columns`` in blocks of at most ``PAIR_BLOCK_VALUES // (2 max(n_resamples, n))``:
    the columns resampled one by one stay in bounded memory."""
    width = max(1, PAIR_BLOCK_VALUES // (2 * max(n_resamples, n)))
    return [columns[start : start + width] for start in range(0, columns.size, width)]


def _pair_statistics(
    diffs: FloatArray, unit: FloatArray, confidence: float, higher_better: bool
) -> dict[str, Any]:
    """Per column of differences: ``diff, variance, t, df, t_ci_low, t_ci_high, effect_size,
    wins, ties, losses`` (degenerate cases as documented in :func:`compare`)."""
    n, width = diffs.shape
    diff = diffs.mean(axis=0)
    zero = ~diffs.any(axis=0)
    constant = is_constant(diffs, unit)
    if n > 1:
        variance = diffs.var(axis=0, ddof=1)
        import scipy.special  # scipy.stats.t.ppf is stdtrit; scipy.stats is slow to import

        quantile = float(scipy.special.stdtrit(n - 1, 0.5 + confidence / 2.0))
        margin = quantile * np.sqrt(variance / n)
        low, high = diff - margin, diff + margin
        low[constant], high[constant] = diff[constant], diff[constant]
    else:
        variance, low, high = (np.full(width, np.nan) for _ in range(3))
    undefined = constant | (n < 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(undefined, np.nan, diff / np.sqrt(variance / n))
        effect = np.where(undefined, np.nan, diff / np.sqrt(variance))
    t[zero] = effect[zero] = 0.0
    directed = diffs if higher_better else -diffs  # a win is a better query
    return {
        "diff": diff,
        "variance": variance,
        "t": t,
        "df": np.full(width, n - 1, dtype=np.int64),
        "t_ci_low": low,
        "t_ci_high": high,
        "effect_size": effect,
        "wins": np.count_nonzero(directed > 0.0, axis=0),
        "ties": np.count_nonzero(diffs == 0.0, axis=0),
        "losses": np.count_nonzero(directed < 0.0, axis=0),
    }


def _intervals(
    diffs: FloatArray,
    unit: FloatArray,
    *,
    interval: str,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    streams: Sequence[np.random.Generator],
    places: Sequence[str],
) -> tuple[FloatArray, FloatArray]:
    """``(low, high)`` interval of each column's mean by ``interval`` (see compare).

    Percentile intervals of all columns come from one set of resamples drawn from ``rng``;
    BCa intervals use ``scipy.stats.bootstrap`` per column with that column's stream; ``"t"``
    is :func:`t_interval`. Constant columns (``ptp <= unit``) give ``(mean, mean)``."""
    width = diffs.shape[1]
    if interval == "t":
        statistics = _pair_statistics(diffs, unit, confidence, True)
        return statistics["t_ci_low"], statistics["t_ci_high"]
    constant = is_constant(diffs, unit)
    lows = np.empty(width, dtype=np.float64)
    highs = np.empty(width, dtype=np.float64)
    if interval == "percentile":
        lows, highs = percentile_intervals(diffs, rng, n_resamples, confidence)
    else:
        for column in np.flatnonzero(~constant).tolist():
            lows[column], highs[column] = mean_interval(
                diffs[:, column],
                streams[column],
                confidence=confidence,
                n_resamples=n_resamples,
                method=interval,
                where=places[column],
            )
    means = diffs.mean(axis=0)
    lows[constant] = highs[constant] = means[constant]  # every resample has the same mean
    return lows, highs


def _compare_frame(
    parts: list[dict[str, Any]], by_columns: tuple[str, ...], per_query: pd.DataFrame
) -> pd.DataFrame:
    """The column blocks as one frame with :data:`COMPARE_COLUMNS` up to ``p_method``, fixed
    dtypes, rows sorted by (pair, measure, group)."""
    names = COMPARE_COLUMNS[: COMPARE_COLUMNS.index("p_method") + 1]
    dtypes: dict[str, Any] = {}
    for name in names:
        if name in _TEXT_COLUMNS:
            dtypes[name] = "str"
        else:
            dtypes[name] = np.int64 if name in _INT_COLUMNS else np.float64
        if name == "measure":
            dtypes.update((column, per_query[column].dtype) for column in by_columns)
    if not parts:
        return typed_frame([], dtypes)
    joined = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    order = np.lexsort((joined["_group"], joined["_measure"], joined["_pair"]))
    return pd.DataFrame(
        {name: pd.Series(joined[name][order], dtype=dtype) for name, dtype in dtypes.items()}
    )


def _given_pairs(
    pairs: Sequence[tuple[str, str]], base: str | None, systems: list[str]
) -> list[tuple[str, str]]:
    """The ``pairs`` of :func:`compare` as a list of ``(system, base)`` names, checked."""
    if base is not None:
        raise InputError("compare: give either 'base' or 'pairs', not both")
    given: list[tuple[str, str]] = []
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and pair[0] != pair[1]):
            raise InputError(
                "compare: each of 'pairs' must be two different system names (system, base)"
            )
        for name in pair:
            if name not in systems:
                raise InputError(
                    f"compare: system {name!r} of 'pairs' has no rows; systems present: "
                    f"{short_list(systems)}.{did_you_mean(str(name), systems)}"
                )
        given.append((str(pair[0]), str(pair[1])))
    return given


def _family(
    base: str | None,
    systems: Sequence[str],
    *,
    given: int | None,
    measures: Sequence[str],
    by_columns: Sequence[str],
    size: int,
    correction: str,
) -> str:
    """The ``family`` text of :func:`compare`: which comparisons the correction runs over
    (``given``: the number of pairs given as ``pairs``)."""
    k = len(systems)
    if given is not None:
        pairs_text = f"{given} given pair{'s' if given != 1 else ''} of systems"
    elif base is None:
        pairs_text = f"all {k * (k - 1) // 2} pairs of {k} systems"
    else:
        pairs_text = f"{k - 1} system{'s' if k != 2 else ''} against base {base!r}"
    parts = [pairs_text, f"{len(measures)} measure{'s' if len(measures) != 1 else ''}"]
    if by_columns:
        parts.append(f"groups of {', '.join(by_columns)}")
    return f"{' x '.join(parts)}: {size} tests, correction {correction}"


def typed_frame(records: list[dict[str, Any]], dtypes: dict[str, Any]) -> pd.DataFrame:
    """One column per ``dtypes`` entry, in its order, with that dtype (even when empty)."""
    return pd.DataFrame(
        {name: pd.Series([r[name] for r in records], dtype=dtype) for name, dtype in dtypes.items()}
    )


def _check_same_queries(
    base_ids: pd.Index[Any], system_ids: pd.Index[Any], system: str, base: str, measure: str
) -> None:
    """Raise when a query is present for one of the two systems and not the other."""
    only_base = base_ids.difference(system_ids)
    only_system = system_ids.difference(base_ids)
    if only_base.size or only_system.size:
        parts = []
        if only_base.size:
            parts.append(f"missing for {system!r}: {short_list(only_base)}")
        if only_system.size:
            parts.append(f"missing for base {base!r}: {short_list(only_system)}")
        raise InputError(
            f"compare: measure {measure!r} has queries that are not paired between systems "
            f"{base!r} and {system!r} ({'; '.join(parts)}); give every system a row for every "
            "query (a system that returned nothing still gets a row with value 0.0)"
        )
