"""Statistics you can trust: bootstrap confidence intervals, paired tests, p-value correction.

Public API::

    compare(per_query, base, ...)        -> DataFrame   every system against a base system
    compare(per_query, None, ...)        -> DataFrame   every pair of systems (all pairs)
    summarize_with_ci(per_query, ...)    -> DataFrame   group means with bootstrap intervals
    bootstrap_ci(values, ...)            -> (low, high) interval of the mean of a 1-D array
    paired_test(a, b, ...)               -> float       two-sided p-value of a paired test
    t_interval(values, ...)              -> (low, high) t-based interval of the mean
    adjust_pvalues(p, method)            -> ndarray     Bonferroni, Holm or Benjamini-Hochberg

Conventions shared by every function here:

* **Paired differences** are ``system - base`` (``a - b`` in :func:`paired_test`). A difference
  whose operands agree within ``TIE_TOLERANCE`` (``numpy.isclose`` with ``rtol = atol = 1e-12``)
  is set to exactly ``0.0`` before anything else: it counts as a tie, Wilcoxon drops it, and it
  takes part in the randomization test and the bootstrap as a zero.
* **Reproducibility.** Randomness comes only from ``numpy.random.Generator(PCG64(...))`` seeded
  by the ``seed`` argument. Frame-level functions derive one stream per group from
  ``SeedSequence([seed, *sha256(group key)])`` (hashlib, never Python's ``hash()``) and sort each
  group's rows by ``query_id`` first, so a group's numbers do not depend on the frame's row order
  or on which other groups are present. Resampling runs in fixed-size blocks of about
  ``2**20`` values with numpy's own reductions and ``numpy.einsum`` (no BLAS; numpy's
  Generator is single-threaded),
  so results are identical for any thread count, and identical across machines for the same
  numpy and scipy versions.
* **Degenerate cases** (every difference 0, a single query, constant differences, identical
  values) have defined results, not errors: see :func:`paired_test` and :func:`compare`. A
  p-value that is undefined is ``NaN``; :func:`adjust_pvalues` keeps ``NaN`` and leaves it out
  of the family size (like R's ``p.adjust``), and a ``NaN`` p-value is never significant.

Tests for many systems at once (ANOVA, Tukey's HSD, the randomized Tukey HSD) live in
:mod:`evalkit.stats.multi`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import warnings
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit.errors import InputError
from evalkit.measures.names import higher_is_better
from evalkit.registry import did_you_mean
from evalkit.stats.resampling import (
    BLOCK_VALUES,
    bootstrap_test_p,
    percentile_intervals,
    sign_flip_p,
)

__all__ = [
    "COMPARE_COLUMNS",
    "COMPARE_INTERVALS",
    "CORRECTIONS",
    "EFFECT_SIZE_DZ",
    "INTERVAL_METHODS",
    "SUMMARY_COLUMNS",
    "TESTS",
    "TIE_TOLERANCE",
    "adjust_pvalues",
    "bootstrap_ci",
    "compare",
    "paired_test",
    "summarize_with_ci",
    "t_interval",
]

FloatArray = npt.NDArray[np.float64]

TESTS = ("randomization", "ttest", "wilcoxon", "bootstrap")
"""Names accepted by ``test=``: paired sign-flip randomization, paired t, Wilcoxon signed-rank,
and the studentized, mean-shifted bootstrap test."""

CORRECTIONS = ("holm", "bonferroni", "bh", "none")
"""Names accepted by ``correction=`` / ``method=`` of :func:`adjust_pvalues`."""

INTERVAL_METHODS = ("percentile", "bca")
"""Bootstrap interval methods: percentile, and bias-corrected and accelerated (BCa)."""

COMPARE_INTERVALS = (*INTERVAL_METHODS, "t")
"""``interval=`` of :func:`compare`: a bootstrap method, or ``"t"`` (Student t, df = n - 1)."""

EFFECT_SIZE_DZ = "d_z"
"""``effect_size_kind`` of :func:`compare`: ``mean(d) / std(d, ddof=1)`` (Cohen's d_z)."""

TIE_TOLERANCE = 1e-12
"""Relative and absolute tolerance under which two paired values count as equal."""

COMPARE_COLUMNS = (
    "system",
    "base",
    "measure",
    "n",
    "base_mean",
    "mean",
    "diff",
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
    "family",
    "family_size",
    "p_adjusted",
    "significant",
)
"""Columns of :func:`compare`; the ``by`` columns are inserted after ``measure``."""

_TEXT_COLUMNS = ("system", "base", "measure", "ci_method", "effect_size_kind", "test", "family")
_INT_COLUMNS = ("n", "df", "wins", "ties", "losses", "family_size")

SUMMARY_COLUMNS = ("n", "mean", "ci_low", "ci_high")
"""Columns of :func:`summarize_with_ci` after the ``by`` columns."""

_BLOCK_VALUES = BLOCK_VALUES  # values resampled per block: memory stays near 8 MB per array
_ID_COLUMNS = ("system", "query_id", "measure")
_MAX_LISTED_IDS = 5


# --- public functions ----------------------------------------------------------------------


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "percentile",
    seed: int = 0,
) -> tuple[float, float]:
    """Two-sided bootstrap confidence interval ``(low, high)`` of the mean of a 1-D array.

    ``method`` is ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated), from
    resamples drawn with ``numpy.random.Generator(PCG64(seed))`` in blocks: the percentile
    interval as :func:`compare`'s (resamples as count vectors, the quantiles by
    ``numpy.quantile``, linear as in ``scipy.stats.bootstrap(method="percentile")``), BCa by
    ``scipy.stats.bootstrap(method="BCa")``. Values that are all equal (including a
    single value) give the zero-width interval ``(v, v)``: every resample has that mean.
    Raises :class:`InputError` for an empty, non-1-D or non-finite array or a bad argument.
    """
    _check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    _check_choice("method", method, INTERVAL_METHODS)
    array = _finite_vector(values, "values")
    if array.size == 0:
        raise InputError("bootstrap_ci: 'values' is empty; expected at least one value")
    rng = _generator(seed)
    return _mean_interval(
        array, rng, confidence=confidence, n_resamples=n_resamples, method=method, where="values"
    )


def t_interval(values: npt.ArrayLike, *, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Student t interval ``(low, high)`` of the mean of a 1-D array.

    ``mean ± t_{(1 + confidence) / 2}(n - 1) * std(values, ddof=1) / sqrt(n)`` with the
    quantile from ``scipy.stats.t.ppf``; for paired differences this is the interval that goes
    with the paired t-test (Sakai 2018, Section 2.2: its half-width is the margin of error).
    Constant values give ``(v, v)``; a single value gives ``(nan, nan)`` (no variance).
    Raises :class:`InputError` for an empty, non-1-D or non-finite array or a bad confidence.
    """
    _check_resampling(confidence=confidence, n_resamples=1, seed=0)
    array = _finite_vector(values, "values")
    if array.size == 0:
        raise InputError("t_interval: 'values' is empty; expected at least one value")
    return _t_interval(array, confidence)


def paired_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    test: str = "randomization",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float:
    """Two-sided p-value for "``a`` and ``b`` have the same mean", pairing ``a[i]`` with ``b[i]``.

    Tests (``d = a - b``, ties within ``TIE_TOLERANCE`` set to 0):

    * ``"randomization"``: sign-flip test of ``T = sum(d)``; ``n_resamples`` random sign
      vectors from ``Generator(PCG64(seed))``;
      ``p = (#{|T*| >= |T_obs| - 1e-12 * sum|d|} + 1) / (n_resamples + 1)``.
      The ``+1`` counts the observed assignment, so ``p`` is never 0 and the test is valid at
      every level; the ``1e-12 * sum|d|`` slack makes sign patterns that give the same
      ``|T|`` up to float rounding count as ties.
    * ``"ttest"``: the paired t-test, ``scipy.stats.ttest_rel(a, b)`` (computed as
      ``ttest_1samp(d, 0)``, which is how scipy defines it, on the tie-snapped ``d``).
    * ``"wilcoxon"``: ``scipy.stats.wilcoxon(d, zero_method="wilcox", method="auto")``: zero
      differences are dropped before ranking (scipy's default).
    * ``"bootstrap"``: the studentized, mean-shifted bootstrap test (Sakai 2018, Section 4.3;
      Efron and Tibshirani 1993, Algorithm 16.2). ``t_obs = mean(d) / (std(d, ddof=1) /
      sqrt(n))``; the null is imposed by shifting ``w = d - mean(d)``; each of ``n_resamples``
      resamples ``w*`` (``n`` draws with replacement, ``Generator(PCG64(seed))``) gives
      ``t* = mean(w*) / (std(w*, ddof=1) / sqrt(n))``, and
      ``p = (#{|t*| >= |t_obs| (1 - 1e-9)} + 1) / (n_resamples + 1)``. The relative slack
      counts resamples that tie with ``t_obs`` up to float rounding as ties; a constant
      resample counts as at least as extreme (``|t*| = inf``) unless it is all zeros
      (``t* = 0``).

    Degenerate cases: when every difference is 0 the p-value is ``1.0`` for every test. The
    t-test and the bootstrap test are undefined (``NaN``) for a single pair or for constant
    non-zero differences (zero variance; constant up to rounding:
    ``ptp(d) <= 1e-12 max|d|``). ``seed`` and ``n_resamples`` only matter for the
    randomization and bootstrap tests.
    Raises :class:`InputError` for arrays of different lengths, empty or non-finite input.
    """
    _check_choice("test", test, TESTS)
    _check_resampling(n_resamples=n_resamples, seed=seed)
    first = _finite_vector(a, "a")
    second = _finite_vector(b, "b")
    if first.shape != second.shape:
        raise InputError(
            f"paired_test: 'a' has {first.size} values and 'b' has {second.size}; "
            "expected one value of each per pair"
        )
    if first.size == 0:
        raise InputError("paired_test: 'a' and 'b' are empty; expected at least one pair")
    diffs = _differences(first, second)[:, None]
    return float(_p_values(diffs, test=test, rng=_generator(seed), n_resamples=n_resamples)[0])


def adjust_pvalues(p: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """Multiple-testing adjusted p-values, same shape and order as ``p``.

    ``"bonferroni"``: ``min(1, m p)``. ``"holm"``: step-down Holm (family-wise error rate).
    ``"bh"``: Benjamini-Hochberg step-up (false discovery rate). ``"none"``: a copy of ``p``.
    ``m`` is the number of non-``NaN`` p-values; ``NaN`` entries stay ``NaN`` (R's
    ``p.adjust`` convention). The result does not depend on the order of ``p``.
    Raises :class:`InputError` unless ``p`` is 1-D with values in [0, 1] or ``NaN``.
    """
    _check_choice("method", method, CORRECTIONS)
    try:
        values = np.array(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("adjust_pvalues: 'p' must be a 1-D array of numbers") from None
    if values.ndim != 1:
        raise InputError(f"adjust_pvalues: 'p' must be 1-D; found {values.ndim} dimensions")
    known = ~np.isnan(values)
    bad = np.flatnonzero(known & ~((values >= 0.0) & (values <= 1.0)))
    if bad.size:
        raise InputError(
            f"adjust_pvalues: p-values must lie in [0, 1] (or be NaN); positions "
            f"{_listed(str(i) for i in bad)} do not"
        )
    result = values.copy()
    result[known] = _adjust_known(values[known], method)
    return result


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
) -> pd.DataFrame:
    """Paired comparisons of systems: one row per (pair of systems, measure, *by).

    ``per_query`` is the tidy frame (``system, query_id, measure, value`` plus the ``by``
    columns). Queries are paired by ``query_id`` within each measure. With ``base`` a system
    name, every other system is compared with it; with ``base=None`` every pair of systems is
    compared (all pairs: for systems sorted by name ``s_1 < s_2 < ...``, the row of the pair
    ``i < j`` has ``system = s_i`` and ``base = s_j``). ``measures=None`` means every measure
    present (sorted by name); a list keeps its order. ``by`` names query-attribute columns
    (e.g. ``"language"``) to split each comparison into groups.

    Rows are sorted by ``system``, then ``base``, then measure, then the ``by`` values in
    ascending order. Columns (:data:`COMPARE_COLUMNS`, the ``by`` columns after ``measure``):

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
    ``d``); ``wins, ties, losses`` (int) queries where ``system`` is better than, equal to (within
    ``TIE_TOLERANCE``), or worse than ``base``, in the measure's direction
    (:func:`evalkit.measures.higher_is_better`: for ``NoAnswerFP`` a win is a decrease);
    ``test`` and ``p_value`` (see :func:`paired_test`);
    ``family`` (text) and ``family_size`` (int): the family of comparisons the correction runs
    over, which is *every row of this result* (its non-NaN p-values); ``p_adjusted`` by
    ``correction`` over that family; ``significant`` (bool) ``p_adjusted <= alpha``.

    Resampling is vectorized over pairs: every pair of one (measure, group) uses the same
    bootstrap resamples and sign vectors (:mod:`evalkit.stats.resampling`), drawn from two
    streams derived from ``seed`` and the (measure, group) key (BCa intervals: one stream per
    row key). So the same inputs and seed give byte-identical frames, whatever the row order of
    ``per_query``, and a row's numbers (all but the family columns, ``p_adjusted`` and
    ``significant``) depend only on its two systems' values, not on the other systems,
    measures or groups present.
    Raises :class:`InputError` (naming systems, measures, query IDs and columns) when ``base``
    or a measure is absent, a column is missing, a (system, query_id, measure) row is
    duplicated, a value is missing or not finite, a query is present for one system and missing
    for another, or a ``by`` attribute differs between systems for the same query.
    """
    by_columns = _column_names(by, "by")
    _check_choice("test", test, TESTS)
    _check_choice("correction", correction, CORRECTIONS)
    _check_choice("interval", interval, COMPARE_INTERVALS)
    _check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not (isinstance(alpha, float | int) and 0.0 < alpha < 1.0):
        raise InputError(f"compare: 'alpha' must be a number in (0, 1); found {alpha!r}")
    frame = _validated_frame(per_query, by_columns, function="compare")
    systems = sorted(frame["system"].unique())
    if base is not None and base not in systems:
        raise InputError(
            f"compare: base system {base!r} has no rows; systems present: "
            f"{_listed(systems)}.{did_you_mean(str(base), systems)}"
        )
    measure_names = _selected_measures(frame, measures)
    if base is None:
        pairs = list(itertools.combinations(systems, 2))
    else:
        pairs = [(system, base) for system in systems if system != base]

    keyed: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for measure_index, measure in enumerate(measure_names if pairs else []):
        for (pair_index, group_index), row in _compare_measure(
            frame,
            pairs=pairs,
            measure=measure,
            by_columns=by_columns,
            test=test,
            interval=interval,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        ):
            keyed.append(((pair_index, measure_index, group_index), row))
    records = [row for _, row in sorted(keyed, key=lambda item: item[0])]

    result = _compare_frame(records, by_columns, per_query)
    p_values = result["p_value"].to_numpy()
    family_size = int(np.count_nonzero(~np.isnan(p_values)))
    result["family"] = pd.Series(
        [
            _family(
                base,
                systems,
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
    by_columns = _column_names(by, "by")
    if not by_columns:
        raise InputError("summarize_with_ci: 'by' is empty; expected at least one column name")
    _check_choice("method", method, INTERVAL_METHODS)
    _check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    frame = _validated_frame(per_query, by_columns, function="summarize_with_ci")
    within_group = ("query_id", "system", "measure")
    order = [*by_columns, *(c for c in within_group if c in frame.columns and c not in by_columns)]
    frame = frame.sort_values(order, kind="stable")

    records: list[dict[str, Any]] = []
    for key, group in frame.groupby(list(by_columns), sort=True, dropna=False):
        values = group["value"].to_numpy(dtype=np.float64)
        stream = _generator(_group_seed(seed, "summarize_with_ci", by_columns, key))
        low, high = _mean_interval(
            values,
            stream,
            confidence=confidence,
            n_resamples=n_resamples,
            method=method,
            where=_describe(by_columns, key),
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
    return _typed_frame(records, dtypes)


# --- comparison internals ------------------------------------------------------------------


def _compare_measure(
    frame: pd.DataFrame,
    *,
    pairs: Sequence[tuple[str, str]],
    measure: str,
    by_columns: tuple[str, ...],
    test: str,
    interval: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """The result rows of one measure, each with its sort key (pair index, group index).

    All pairs of a (measure, group) share one bootstrap and one test stream, derived from
    ``seed`` and the (measure, group) key, and are resampled together (see
    :mod:`evalkit.stats.resampling`): a pair's numbers depend only on its two systems.
    """
    of_measure = frame[frame["measure"] == measure]
    rows_of = {
        str(system): rows.set_index("query_id").sort_index()
        for system, rows in of_measure.groupby("system", sort=True)
    }
    no_rows = of_measure.iloc[0:0].set_index("query_id")
    for system, base in pairs:
        base_rows = rows_of.get(base, no_rows)
        if base_rows.empty:
            raise InputError(
                f"compare: system {base!r} has no rows for measure {measure!r}; every system "
                "needs a row per query for each compared measure"
            )
        system_rows = rows_of.get(system, no_rows)
        _check_same_queries(base_rows.index, system_rows.index, system, base, measure)
        system_rows = system_rows.loc[base_rows.index]
        for column in by_columns:
            differs = base_rows[column].to_numpy() != system_rows[column].to_numpy()
            if differs.any():
                raise InputError(
                    f"compare: column {column!r} differs between systems {base!r} and "
                    f"{system!r} for measure {measure!r} at query IDs "
                    f"{_listed(base_rows.index[differs])}; a query attribute must be the same "
                    "for every system"
                )

    involved = sorted({name for pair in pairs for name in pair})
    reference = rows_of[pairs[0][1]]
    matrix = np.column_stack(
        [rows_of[name].loc[reference.index, "value"].to_numpy(np.float64) for name in involved]
    )
    position = {name: i for i, name in enumerate(involved)}
    firsts = [position[system] for system, _ in pairs]
    seconds = [position[base] for _, base in pairs]
    if by_columns:
        group_keys = reference[list(by_columns)].drop_duplicates().sort_values(list(by_columns))
        groups = [tuple(row) for row in group_keys.itertuples(index=False)]
    else:
        groups = [()]

    records = []
    for group_index, group in enumerate(groups):
        mask = np.ones(len(reference), dtype=bool)
        for column, value in zip(by_columns, group, strict=True):
            mask &= reference[column].to_numpy() == value
        values = matrix[mask]
        diffs = _differences(values[:, firsts], values[:, seconds])
        key = (measure, *group)
        seed_sequence = _group_seed(seed, "compare", ("measure", *by_columns), key)
        interval_stream, test_stream = (_generator(child) for child in seed_sequence.spawn(2))
        lows, highs = _intervals(
            diffs,
            interval=interval,
            rng=interval_stream,
            n_resamples=n_resamples,
            confidence=confidence,
            streams=[
                _generator(
                    _group_seed(
                        seed, "compare-bca", ("pair", "measure", *by_columns), (*pair, *key)
                    )
                )
                for pair in pairs
            ]
            if interval == "bca"
            else [],
            places=[
                _describe(("system", "measure", *by_columns), (system, measure, *group))
                for system, _ in pairs
            ],
        )
        p_values = _p_values(diffs, test=test, rng=test_stream, n_resamples=n_resamples)
        direction = 1.0 if higher_is_better(str(measure)) else -1.0  # a win is a better query
        for index, (system, base) in enumerate(pairs):
            d = diffs[:, index]
            t_low, t_high = _t_interval(d, confidence)
            row = {
                "system": system,
                "base": base,
                "measure": measure,
                **dict(zip(by_columns, group, strict=True)),
                "n": d.size,
                "base_mean": float(values[:, seconds[index]].mean()),
                "mean": float(values[:, firsts[index]].mean()),
                "diff": float(d.mean()),
                "variance": float(d.var(ddof=1)) if d.size > 1 else float("nan"),
                "ci_method": interval,
                "ci_low": float(lows[index]),
                "ci_high": float(highs[index]),
                "t": _t_statistic(d),
                "df": d.size - 1,
                "t_ci_low": t_low,
                "t_ci_high": t_high,
                "effect_size": _cohens_dz(d),
                "effect_size_kind": EFFECT_SIZE_DZ,
                "wins": int(np.count_nonzero(d * direction > 0.0)),
                "ties": int(np.count_nonzero(d == 0.0)),
                "losses": int(np.count_nonzero(d * direction < 0.0)),
                "test": test,
                "p_value": float(p_values[index]),
            }
            records.append(((index, group_index), row))
    return records


def _intervals(
    diffs: FloatArray,
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
    BCa intervals use ``scipy.stats.bootstrap`` per column with that column's stream."""
    width = diffs.shape[1]
    lows = np.empty(width, dtype=np.float64)
    highs = np.empty(width, dtype=np.float64)
    if interval == "t":
        for column in range(width):
            lows[column], highs[column] = _t_interval(diffs[:, column], confidence)
        return lows, highs
    if interval == "percentile":
        lows, highs = percentile_intervals(diffs, rng, n_resamples, confidence)
    else:
        for column in range(width):
            lows[column], highs[column] = _mean_interval(
                diffs[:, column],
                streams[column],
                confidence=confidence,
                n_resamples=n_resamples,
                method=interval,
                where=places[column],
            )
    constant = np.ptp(diffs, axis=0) == 0.0  # every resample has the same mean
    lows[constant] = highs[constant] = diffs[0, constant]
    return lows, highs


def _p_values(
    diffs: FloatArray, *, test: str, rng: np.random.Generator, n_resamples: int
) -> FloatArray:
    """Two-sided p-value of ``test`` per column (degenerate cases as in paired_test)."""
    width = diffs.shape[1]
    result = np.ones(width, dtype=np.float64)  # every difference 0: p = 1
    active = np.asarray(diffs.any(axis=0), dtype=bool)
    if test == "randomization":
        if active.any():
            result[active] = sign_flip_p(diffs[:, active], rng, n_resamples)
        return result
    if test == "bootstrap":
        undefined = np.array([active[c] and _variance_undefined(diffs[:, c]) for c in range(width)])
        result[undefined] = float("nan")
        usable = active & ~undefined
        if usable.any():
            result[usable] = bootstrap_test_p(diffs[:, usable], rng, n_resamples)
        return result
    for column in np.flatnonzero(active):
        result[column] = _p_value(diffs[:, column], test=test, rng=rng, n_resamples=n_resamples)
    return result


def _compare_frame(
    records: list[dict[str, Any]], by_columns: tuple[str, ...], per_query: pd.DataFrame
) -> pd.DataFrame:
    """The records as a frame with :data:`COMPARE_COLUMNS` up to ``p_value``, fixed dtypes."""
    names = COMPARE_COLUMNS[: COMPARE_COLUMNS.index("p_value") + 1]
    dtypes: dict[str, Any] = {}
    for name in names:
        if name in _TEXT_COLUMNS:
            dtypes[name] = "str"
        else:
            dtypes[name] = np.int64 if name in _INT_COLUMNS else np.float64
        if name == "measure":
            dtypes.update((column, per_query[column].dtype) for column in by_columns)
    return _typed_frame(records, dtypes)


def _family(
    base: str | None,
    systems: Sequence[str],
    *,
    measures: Sequence[str],
    by_columns: Sequence[str],
    size: int,
    correction: str,
) -> str:
    """The ``family`` text of :func:`compare`: which comparisons the correction runs over."""
    k = len(systems)
    if base is None:
        pairs = f"all {k * (k - 1) // 2} pairs of {k} systems"
    else:
        pairs = f"{k - 1} system{'s' if k != 2 else ''} against base {base!r}"
    parts = [pairs, f"{len(measures)} measure{'s' if len(measures) != 1 else ''}"]
    if by_columns:
        parts.append(f"groups of {', '.join(by_columns)}")
    return f"{' x '.join(parts)}: {size} tests, correction {correction}"


def _typed_frame(records: list[dict[str, Any]], dtypes: dict[str, Any]) -> pd.DataFrame:
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
            parts.append(f"missing for {system!r}: {_listed(only_base)}")
        if only_system.size:
            parts.append(f"missing for base {base!r}: {_listed(only_system)}")
        raise InputError(
            f"compare: measure {measure!r} has queries that are not paired between systems "
            f"{base!r} and {system!r} ({'; '.join(parts)}); give every system a row for every "
            "query (a system that returned nothing still gets a row with value 0.0)"
        )


def _constant(values: FloatArray) -> bool:
    """Whether all values are equal up to float rounding (``ptp <= 1e-12 * max|v|``): then
    the sample variance is rounding noise and variance-based statistics are undefined."""
    return bool(np.ptp(values) <= TIE_TOLERANCE * float(np.abs(values).max()))


def _t_statistic(diffs: FloatArray) -> float:
    """Paired t statistic ``mean / (std(ddof=1) / sqrt(n))``; 0.0 when all are 0, else NaN
    when undefined (one value, or constant non-zero values)."""
    if not diffs.any():
        return 0.0
    if diffs.size < 2 or _constant(diffs):
        return float("nan")
    return float(diffs.mean() / (diffs.std(ddof=1) / np.sqrt(diffs.size)))


def _t_interval(values: FloatArray, confidence: float) -> tuple[float, float]:
    """Student t interval of the mean of non-empty finite ``values`` (see t_interval)."""
    if values.size > 1 and _constant(values):
        return float(values.mean()), float(values.mean())
    if values.size < 2:
        return float("nan"), float("nan")
    # scipy.stats.t.ppf is this function; scipy.stats itself takes over a second to import
    import scipy.special

    margin = float(scipy.special.stdtrit(values.size - 1, 0.5 + confidence / 2.0)) * float(
        values.std(ddof=1) / np.sqrt(values.size)
    )
    mean = float(values.mean())
    return mean - margin, mean + margin


def _cohens_dz(diffs: FloatArray) -> float:
    """Cohen's d_z of paired differences; 0.0 when all are 0, NaN when undefined."""
    if not diffs.any():
        return 0.0
    if diffs.size < 2 or _constant(diffs):
        return float("nan")
    return float(diffs.mean() / diffs.std(ddof=1))


# --- resampling and tests ------------------------------------------------------------------


def _variance_undefined(diffs: FloatArray) -> bool:
    """One value, or constant values up to rounding: the sample variance is 0 or undefined."""
    return diffs.size < 2 or _constant(diffs)


def _differences(first: FloatArray, second: FloatArray) -> FloatArray:
    """``first - second`` with pairs equal within ``TIE_TOLERANCE`` set to exactly 0.0."""
    diffs = first - second
    diffs[np.isclose(first, second, rtol=TIE_TOLERANCE, atol=TIE_TOLERANCE)] = 0.0
    return diffs


def _p_value(
    diffs: FloatArray,
    *,
    test: str,
    rng: np.random.Generator,
    n_resamples: int,
) -> float:
    """Two-sided p-value of ``test`` for paired samples (degenerate cases as in paired_test)."""
    if not diffs.any():
        return 1.0
    if test in ("randomization", "bootstrap"):
        return float(_p_values(diffs[:, None], test=test, rng=rng, n_resamples=n_resamples)[0])
    import scipy.stats  # loaded on first use: it takes over a second to import

    if test == "ttest":
        if _variance_undefined(diffs):
            return float("nan")
        # ttest_rel(a, b) is ttest_1samp(a - b, 0); passing d keeps tie snapping consistent.
        return float(scipy.stats.ttest_1samp(diffs, 0.0).pvalue)
    return float(scipy.stats.wilcoxon(diffs, zero_method="wilcox", method="auto").pvalue)


def _mean_interval(
    values: FloatArray,
    rng: np.random.Generator,
    *,
    confidence: float,
    n_resamples: int,
    method: str,
    where: str,
) -> tuple[float, float]:
    """Bootstrap interval of the mean of non-empty finite ``values`` (see bootstrap_ci)."""
    if np.ptp(values) == 0.0:
        return float(values[0]), float(values[0])
    if method == "percentile":  # numpy only: scipy.stats takes over a second to import
        low, high = percentile_intervals(values[:, None], rng, n_resamples, confidence)
        return float(low[0]), float(high[0])
    import scipy.stats

    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.stats.DegenerateDataWarning)
        try:
            result = scipy.stats.bootstrap(
                (values,),
                np.mean,
                n_resamples=n_resamples,
                batch=max(1, _BLOCK_VALUES // values.size),
                vectorized=True,
                confidence_level=confidence,
                method="BCa" if method == "bca" else "percentile",
                rng=rng,
            )
        except scipy.stats.DegenerateDataWarning:
            raise InputError(
                f"the BCa interval is undefined for {where} (the bootstrap distribution is "
                "degenerate); use method='percentile' or more resamples"
            ) from None
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


def _adjust_known(p: FloatArray, method: str) -> FloatArray:
    """Adjusted values of non-NaN p-values (see adjust_pvalues)."""
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        steps = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:  # bh
        steps = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.minimum(1.0, steps)
    return adjusted


def _group_seed(
    seed: int, purpose: str, columns: Sequence[str], key: Iterable[Any]
) -> np.random.SeedSequence:
    """``SeedSequence([seed, *sha256(key)])``: stable across processes (never Python's hash())."""
    text = json.dumps([purpose, list(columns), [str(v) for v in key]], ensure_ascii=True)
    digest = hashlib.sha256(text.encode("ascii")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence([int(seed), *words])


def _generator(seed: int | np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


# --- validation ----------------------------------------------------------------------------


def _validated_frame(
    per_query: pd.DataFrame, by_columns: tuple[str, ...], *, function: str
) -> pd.DataFrame:
    """A checked copy with ``query_id, value``, the ID columns present and the ``by`` columns."""
    if not isinstance(per_query, pd.DataFrame):
        raise InputError(
            f"{function}: 'per_query' must be a pandas DataFrame; found {type(per_query).__name__}"
        )
    paired = function != "summarize_with_ci"  # every other function pairs systems by query
    required = ("system", "query_id", "measure") if paired else ("query_id",)
    reserved = (*required, "value") if paired else ("value",)
    clashing = [c for c in by_columns if c in reserved]
    if clashing:
        raise InputError(
            f"{function}: 'by' cannot name {_listed(clashing)}; group by query attributes "
            "such as 'language' or 'answerable'"
        )
    needed = list(dict.fromkeys((*required, *by_columns, "value")))
    missing = [c for c in needed if c not in per_query.columns]
    if missing:
        raise InputError(
            f"{function}: 'per_query' lacks column(s) {_listed(missing)}; expected the tidy "
            f"per-query frame with columns {_listed(needed)}"
        )
    if not pd.api.types.is_numeric_dtype(per_query["value"]) or pd.api.types.is_complex_dtype(
        per_query["value"]
    ):
        raise InputError(
            f"{function}: column 'value' must hold real numbers; found dtype "
            f"{per_query['value'].dtype}"
        )
    ids = [c for c in _ID_COLUMNS if c in per_query.columns]
    kept = list(dict.fromkeys((*ids, *by_columns, "value")))
    frame = per_query[kept].copy()
    for column in ids:
        absent_ids = int(frame[column].isna().sum())
        if absent_ids:
            raise InputError(
                f"{function}: column {column!r} has missing IDs in {absent_ids} row(s); every "
                "row needs a system, query_id and measure"
            )
        if column not in by_columns:
            frame[column] = frame[column].astype("str")
    frame["value"] = frame["value"].astype(np.float64)

    bad_value = ~np.isfinite(frame["value"].to_numpy())
    if bad_value.any():
        raise InputError(
            f"{function}: column 'value' is missing (NaN) or not finite at "
            f"{_listed(_row_ids(frame[bad_value]))}; every (system, query_id, measure) needs a "
            "finite value"
        )
    for column in by_columns:
        absent = frame[column].isna().to_numpy()
        if absent.any():
            raise InputError(
                f"{function}: 'by' column {column!r} is missing at "
                f"{_listed(_row_ids(frame[absent]))}; fill it or group by other columns"
            )
    duplicated = frame.duplicated(ids, keep="first").to_numpy() if len(ids) == 3 else None
    if duplicated is not None and duplicated.any():
        raise InputError(
            f"{function}: duplicated (system, query_id, measure) rows at "
            f"{_listed(_row_ids(frame[duplicated]))}; expected one row each"
        )
    return frame


def _selected_measures(
    frame: pd.DataFrame, measures: str | Sequence[str] | None, *, function: str = "compare"
) -> list[str]:
    """The measures to compare: all present (sorted) or the given ones, which must be present."""
    present = sorted(frame["measure"].unique())
    if measures is None:
        return present
    wanted = list(dict.fromkeys(_column_names(measures, "measures")))
    for measure in wanted:
        if measure not in present:
            raise InputError(
                f"{function}: measure {measure!r} has no rows; measures present: "
                f"{_listed(present)}.{did_you_mean(measure, present)}"
            )
    return wanted


def _column_names(names: str | Sequence[str] | None, argument: str) -> tuple[str, ...]:
    """``None`` → (), a string → (it,), a sequence of strings → tuple."""
    if names is None:
        return ()
    if isinstance(names, str):
        return (names,)
    result = tuple(names)
    if not all(isinstance(n, str) for n in result):
        raise InputError(f"'{argument}' must be a string or a sequence of strings")
    if len(set(result)) != len(result):
        raise InputError(f"'{argument}' names a column twice: {_listed(result)}")
    return result


def _check_choice(argument: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(
            f"unknown {argument} {value!r}; expected one of {_listed(choices)}."
            + did_you_mean(str(value).lower(), choices)
        )


def _check_resampling(*, confidence: float | None = None, n_resamples: int, seed: int) -> None:
    """Check the resampling arguments; ``confidence=None`` when the function has none."""
    if confidence is not None and not (
        isinstance(confidence, float | int) and 0.0 < confidence < 1.0
    ):
        raise InputError(f"'confidence' must be a number in (0, 1); found {confidence!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise InputError(f"'n_resamples' must be an int; found {type(n_resamples).__name__}")
    if n_resamples < 1:
        raise InputError(f"'n_resamples' must be at least 1; found {n_resamples}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"'seed' must be a non-negative int; found {seed!r}")


def _finite_vector(values: npt.ArrayLike, name: str) -> FloatArray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"'{name}' must be a 1-D array of numbers") from None
    if array.ndim != 1:
        raise InputError(f"'{name}' must be 1-D; found {array.ndim} dimensions")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InputError(
            f"'{name}' has missing (NaN) or infinite values at positions "
            f"{_listed(str(i) for i in bad)}; expected finite numbers"
        )
    return array


def _row_ids(rows: pd.DataFrame) -> list[str]:
    """``system/query_id/measure`` labels of rows, for error messages (IDs only)."""
    ids = [c for c in _ID_COLUMNS if c in rows.columns]
    return ["/".join(str(v) for v in row) for row in rows[ids].itertuples(index=False)]


def _describe(columns: Sequence[str], key: Iterable[Hashable]) -> str:
    """``column=value`` for ID columns and the bare name for attributes (no attribute values)."""
    return ", ".join(
        f"{c}={v!s}" if c in _ID_COLUMNS else c for c, v in zip(columns, key, strict=True)
    )


def _listed(items: Iterable[object]) -> str:
    """Up to five items, quoted, then how many more."""
    listed = [str(i) for i in items]
    shown = ", ".join(repr(i) for i in listed[:_MAX_LISTED_IDS])
    more = len(listed) - _MAX_LISTED_IDS
    return shown + (f" and {more} more" if more > 0 else "")
