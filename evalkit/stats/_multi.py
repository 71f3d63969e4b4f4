"""Tests for many systems at once: two-way ANOVA, Tukey's HSD and the randomized Tukey HSD.

Public API::

    anova(per_query, ...)                 -> DataFrame   two-way ANOVA without replication
    tukey_hsd(per_query, ...)             -> DataFrame   Tukey's HSD for paired data, all pairs
    randomized_tukey_hsd(per_query, ...)  -> DataFrame   the randomized Tukey HSD, all pairs
    compact_letters(order, different)     -> dict        a compact letter display of the pairs

Every function takes the tidy per-query frame (``system, query_id, measure, value``) and works
on one measure at a time: the topic-by-system matrix ``x[t, j]`` of that measure, ``n``
topics (queries) and ``k`` systems, which must be complete (every system has a row for every
query of the measure). The model is Sakai's (*Laboratory Experiments in Information
Retrieval*, Springer 2018, Chapters 3 and 4): systems and topics are the two factors, each
cell holds one observation, and the residual variance ``V_E`` of that model is the error term
of Tukey's HSD and of its effect size ``diff / sqrt(V_E)``.

Pairs and families: systems are sorted by name; the pair ``i < j`` is reported as
``system = s_i, base = s_j, diff = mean(s_i) - mean(s_j)`` (as :func:`evalkit.stats.compare`
with ``base=None``). Both Tukey tests control the family-wise error rate over the family of
*all k(k-1)/2 pairs of one measure*; no correction is made across measures (say so, or pass
one measure). The ``family`` and ``family_size`` columns state it.

Conventions shared with ``_paired``: randomness only from
``numpy.random.Generator(PCG64(...))``, one stream per measure derived from ``seed`` and the
measure's name (so a measure's numbers do not depend on the other measures present), rows
sorted by ``query_id`` first (row order of the input does not matter), resampling in blocks of
about ``2**20`` values with numpy reductions (results do not depend on the thread count);
equality is the rule of :mod:`evalkit.stats` with the scale ``S = max|x|`` of the
measure's matrix and the unit ``u = 1e-10 S``: a residual, a system's deviation from the grand
mean and a pair's difference of means within ``u`` are 0 (so ``V_E = 0`` and ``S_A = 0``
are found on identical systems, whatever the rounding), and sums of ``n`` values within
``n u`` tie; Monte Carlo p-values are ``(hits + 1) / (B + 1)``, exact ones ``hits / total``.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit._arrays import FloatArray
from evalkit.errors import InputError
from evalkit.stats._paired import PAIR_COLUMNS, typed_frame
from evalkit.stats._resampling import BLOCK_VALUES, group_seed, random_generator
from evalkit.stats._studentized import studentized_range_sf
from evalkit.stats._ties import equality_unit as _ties_unit
from evalkit.stats._validation import (
    check_resampling,
    selected_measures,
    short_list,
    validated_frame,
)

__all__ = [
    "ANOVA_COLUMNS",
    "ANOVA_SOURCES",
    "EFFECT_SIZE_TUKEY",
    "TUKEY_COLUMNS",
    "anova",
    "compact_letters",
    "randomized_tukey_hsd",
    "tukey_hsd",
]


ANOVA_SOURCES = ("system", "topic", "residual", "total")
"""Values of the ``source`` column of :func:`anova`, in row order within a measure."""

ANOVA_COLUMNS = (
    "measure",
    "source",
    "ss",
    "df",
    "ms",
    "f",
    "p_value",
    "n_topics",
    "n_systems",
    "confidence",
    "margin_of_error",
)
"""Columns of :func:`anova`."""

EFFECT_SIZE_TUKEY = "diff/sqrt(V_E)"
"""``effect_size_kind`` of the Tukey tests: the mean difference over the residual standard
deviation of the two-way ANOVA (Sakai 2018, Section 4.4: ES_E2)."""

TUKEY_COLUMNS = (
    *PAIR_COLUMNS,
    "ci_method",
    "ci_low",
    "ci_high",
    "effect_size",
    "effect_size_kind",
    "q",
    "df",
    "test",
    "p_value",
    "family",
    "family_size",
    "significant",
)
"""Columns of :func:`tukey_hsd` and :func:`randomized_tukey_hsd`."""

_TEXT = ("system", "base", "measure", "ci_method", "effect_size_kind", "test", "family")
_INTEGER = ("n", "df", "family_size")
_PERMUTATION_TABLE_MAX_SYSTEMS = 8  # up to 8! = 40,320 permutations are tabulated


def anova(
    per_query: pd.DataFrame,
    measures: str | Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Two-way ANOVA without replication (systems x topics), one table per measure.

    Rows: for each measure (all present, sorted, or the given ones in order) the sources
    ``system, topic, residual, total`` (:data:`ANOVA_SOURCES`). Columns (:data:`ANOVA_COLUMNS`):
    ``measure, source``; ``ss`` the sum of squares (``S_A = n sum_j (mean_j - mean)^2``,
    ``S_B = k sum_t (mean_t - mean)^2``, ``S_E = sum (x - mean_j - mean_t + mean)^2``,
    ``S_T = sum (x - mean)^2``); ``df`` (int) ``k - 1``, ``n - 1``, ``(k - 1)(n - 1)``,
    ``kn - 1``; ``ms`` the mean square ``ss / df`` (``V_E`` on the residual row; NaN on the
    total row); ``f`` the F ratio ``ms / V_E`` and ``p_value`` its upper tail
    (``scipy.stats.f.sf``) on the system and topic rows, NaN on the others; ``n_topics``,
    ``n_systems`` (int); ``confidence`` and ``margin_of_error`` (the same on every row of a
    measure): ``t_{(1 + confidence)/2}((k - 1)(n - 1)) * sqrt(V_E / n)``, the half-width of the
    interval of each system's mean under this model (Sakai 2018, Section 3.2).

    ``V_E = 0`` (an additive table: every residual within ``u``, e.g. systems that are
    constant shifts of each other) gives ``f = inf`` and ``p_value = 0`` for a source with a
    non-zero sum of squares and NaN (0/0) for one without: identical systems give ``NaN`` on
    the system row, never a small p. R: ``summary(aov(score ~ system + topic))``.
    Raises :class:`InputError` for fewer than two systems or two queries in a measure, an
    incomplete matrix (naming the missing system/query pairs), or the input errors of
    :func:`evalkit.stats.compare`.
    """
    check_resampling(confidence=confidence, n_resamples=1, seed=0)
    frame = validated_frame(per_query, (), function="anova")
    records: list[dict[str, Any]] = []
    for measure in selected_measures(frame, measures, function="anova"):
        matrix, _ = _matrix(frame, measure, function="anova")
        records += _anova_rows(matrix, measure, confidence)
    dtypes: dict[str, Any] = dict.fromkeys(ANOVA_COLUMNS, np.float64)
    dtypes.update(dict.fromkeys(("measure", "source"), "str"))
    dtypes.update(dict.fromkeys(("df", "n_topics", "n_systems"), np.int64))
    return typed_frame(records, dtypes)


def tukey_hsd(
    per_query: pd.DataFrame,
    measures: str | Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Tukey's HSD for paired data (systems x topics): every pair of systems, per measure.

    The error term is the residual variance ``V_E`` of :func:`anova` with
    ``df = (k - 1)(n - 1)``; for the pair ``(i, j)``
    ``q = |diff| / sqrt(V_E / n)`` and ``p_value = P(Q_{k, df} >= q)`` from
    ``scipy.stats.studentized_range``; the simultaneous interval is
    ``diff ± Q_{k, df}^{-1}(confidence) sqrt(V_E / n)`` (``ci_method = "tukey"``).

    This is not ``scipy.stats.tukey_hsd``, which is the one-way (unpaired) model: it pools the
    topic effect into the error (``MS = (S_B + S_E) / (k (n - 1))``, ``df = k (n - 1)``). On
    retrieval data, where topics differ much more than systems, the paired model is the
    right one and far more powerful; ranx's ``stat_test="tukey"`` calls scipy's.

    Columns :data:`TUKEY_COLUMNS`: ``system, base, measure``; ``n`` (int) topics;
    ``base_mean, mean, diff`` (``mean - base_mean``); ``ci_method, ci_low, ci_high``;
    ``effect_size`` ``diff / sqrt(V_E)`` and ``effect_size_kind`` (:data:`EFFECT_SIZE_TUKEY`);
    ``q``; ``df`` (int); ``test`` (``"tukey-hsd"``); ``p_value``; ``family`` and
    ``family_size`` (``k (k - 1) / 2``); ``significant`` (bool) ``p_value <= alpha``. Rows by
    measure, then pairs in order. ``V_E = 0``: ``q = inf`` and ``effect_size = ±inf``
    (``p = 0``) for a non-zero ``diff``, ``0`` (``p = 1``) for a zero one (``|diff| <= u``).
    The tail is :func:`evalkit.stats.studentized_range_sf`: all pairs at once
    (scipy's values for a few distinct ``q``, an interpolant of them within 1e-10 for many).
    R: ``TukeyHSD(aov(score ~ system + topic), "system")`` (R's ``ptukey`` is less precise
    in the far tail). Raises as :func:`anova`.
    """
    check_resampling(confidence=confidence, n_resamples=1, seed=0)
    _check_alpha(alpha)
    frame = validated_frame(per_query, (), function="tukey_hsd")
    records: list[dict[str, Any]] = []
    for measure in selected_measures(frame, measures, function="tukey_hsd"):
        pairs = _Pairs.of(*_matrix(frame, measure, function="tukey_hsd"))
        k = len(pairs.systems)
        p_values = studentized_range_sf(pairs.q, k, pairs.df)
        p_values[pairs.diffs == 0.0] = 1.0
        margin = _studentized_range_quantile(confidence, k, pairs.df) * pairs.scale
        records.append(
            pairs.rows(measure, margin, p_values, tests=("tukey", "tukey-hsd"), alpha=alpha)
        )
    return _pair_frame(records)


def _studentized_differences(diffs: npt.NDArray[np.float64], scale: float) -> Any:
    """``|diff| / scale`` per pair (Tukey's q), 0.0 where the difference is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(diffs == 0.0, 0.0, np.abs(diffs) / scale)


def randomized_tukey_hsd(
    per_query: pd.DataFrame,
    measures: str | Sequence[str] | None = None,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """The randomized Tukey HSD (Carterette 2012; Sakai 2018, Section 4.5), every pair.

    Under the null hypothesis that the systems are interchangeable, the ``k`` values of each
    topic are exchangeable: each of ``n_resamples`` trials permutes every topic's row
    independently (uniformly over the ``k!`` orders) and records the range of the permuted
    system totals, ``R* = max_j S*_j - min_j S*_j``. For the pair ``(i, j)`` with observed
    total difference ``D = |S_i - S_j|`` (``S = n * mean``),
    ``p_value = (#{R* >= D - n u} + 1) / (n_resamples + 1)``: permuted ranges that
    equal ``D`` up to float rounding count as ties (as
    :func:`evalkit.stats.paired_test` does for the sign-flip test). With two systems
    this is the paired sign-flip randomization test. When the permutation count is small,
    ``(k!)**(n - 1) <= n_resamples`` (the first topic's order can stay fixed: the range does
    not change when every topic's systems are relabelled alike), every permutation is
    enumerated and ``p_value = #{R* >= D - n u} / (k!)**(n - 1)`` is exact; ``test`` then says
    ``"randomized-tukey-hsd (exact)"`` and the interval uses the exact quantile.

    Columns :data:`TUKEY_COLUMNS`, as :func:`tukey_hsd`, with ``test = "randomized-tukey-hsd"``
    and ``ci_method = "randomized-tukey"``: ``diff ± r / n`` where ``r`` is the ``confidence``
    quantile of ``R*`` (the permutation analogue of Tukey's simultaneous interval); ``q`` and
    ``effect_size`` are computed as in :func:`tukey_hsd` and shown for reference. Each
    measure's stream is ``SeedSequence([seed, *sha256("randomized_tukey_hsd", measure)])``.
    Raises as :func:`anova`, and for bad ``n_resamples`` or ``seed``.
    """
    check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    _check_alpha(alpha)
    frame = validated_frame(per_query, (), function="randomized_tukey_hsd")
    records: list[dict[str, Any]] = []
    for measure in selected_measures(frame, measures, function="randomized_tukey_hsd"):
        matrix, systems = _matrix(frame, measure, function="randomized_tukey_hsd")
        n, k = matrix.shape
        pairs = _Pairs.of(matrix, systems)
        totals = matrix.sum(axis=0)
        observed = np.where(
            pairs.diffs == 0.0, 0.0, np.abs(totals[pairs.first] - totals[pairs.second])
        )
        slack = n * equality_unit(matrix)
        exact = _permutation_count(n, k) <= n_resamples
        if exact:
            ranges = _all_permuted_ranges(matrix)
        else:
            stream = random_generator(
                group_seed(seed, "randomized_tukey_hsd", ("measure",), (measure,))
            )
            ranges = _permuted_ranges(matrix, stream, n_resamples)
        hits = ranges.size - np.searchsorted(np.sort(ranges), observed - slack, side="left")
        p_values = hits / ranges.size if exact else (hits + 1) / (n_resamples + 1)
        margin = float(np.quantile(ranges, confidence)) / n
        tests = ("randomized-tukey", f"randomized-tukey-hsd{' (exact)' if exact else ''}")
        p_values = p_values.astype(np.float64)
        records.append(pairs.rows(measure, margin, p_values, tests=tests, alpha=alpha))
    return _pair_frame(records)


def compact_letters(order: Sequence[str], different: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Letters per item such that two items share a letter exactly when they are not in
    ``different`` (Piepho 2004, insert and absorb). Letter ``a`` goes to the group of
    ``order[0]``, then ``b``, ... by the best-placed member of each group in ``order``."""
    groups: list[frozenset[str]] = [frozenset(order)]
    for first, second in sorted(tuple(sorted(pair)) for pair in different):
        split: list[frozenset[str]] = []
        for group in groups:
            if first in group and second in group:
                split += [group - {first}, group - {second}]
            else:
                split.append(group)
        unique = list(dict.fromkeys(split))
        groups = [g for g in unique if not any(g < other for other in unique)]
    rank = {item: i for i, item in enumerate(order)}
    groups.sort(key=lambda g: sorted(rank[item] for item in g))
    symbols = [*"abcdefghijklmnopqrstuvwxyz", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    letters = dict.fromkeys(order, "")
    for index, group in enumerate(groups):
        symbol = symbols[index] if index < len(symbols) else f"({index + 1})"
        for item in sorted(group, key=rank.__getitem__):
            letters[item] += symbol
    return letters


# --- internals -----------------------------------------------------------------------------


def _matrix(frame: pd.DataFrame, measure: str, *, function: str) -> tuple[FloatArray, list[str]]:
    """The (query x system) values of one measure, queries and systems sorted by ID."""
    rows = frame[frame["measure"] == measure]
    wide = rows.pivot(index="query_id", columns="system", values="value").sort_index()
    wide = wide.reindex(columns=sorted(wide.columns))
    systems = [str(s) for s in wide.columns]
    if len(systems) < 2 or len(wide) < 2:
        raise InputError(
            f"{function}: measure {measure!r} has {len(systems)} system(s) and {len(wide)} "
            "query(ies); expected at least two of each"
        )
    matrix = wide.to_numpy(dtype=np.float64)
    missing = np.argwhere(np.isnan(matrix))
    if missing.size:
        pairs = [f"{systems[j]}/{wide.index[i]}" for i, j in missing]
        raise InputError(
            f"{function}: measure {measure!r} lacks values for system/query_id "
            f"{short_list(pairs)}; every system needs a row for every query of the measure "
            "(a system that returned nothing still gets a row with value 0.0)"
        )
    return matrix, systems


def _anova_rows(matrix: FloatArray, measure: str, confidence: float) -> list[dict[str, Any]]:
    n, k = matrix.shape
    grand = float(matrix.mean())
    unit = equality_unit(matrix)
    ss_system = _sum_of_squares(matrix.mean(axis=0) - grand, unit) * n
    ss_topic = _sum_of_squares(matrix.mean(axis=1) - grand, unit) * k
    ss_residual, df_residual = _residual_ss(matrix)
    ss_total = float(np.sum((matrix - grand) ** 2))
    v_e = ss_residual / df_residual
    import scipy.special  # scipy.stats.t.ppf is stdtrit; scipy.stats is slow to import

    margin = float(scipy.special.stdtrit(df_residual, 0.5 + confidence / 2.0)) * math.sqrt(v_e / n)
    rows = []
    for source, ss, df in (
        ("system", ss_system, k - 1),
        ("topic", ss_topic, n - 1),
        ("residual", ss_residual, df_residual),
        ("total", ss_total, n * k - 1),
    ):
        ms = ss / df if source != "total" else float("nan")
        f = p = float("nan")
        if source in ("system", "topic"):
            f, p = _f_test(ms, v_e, df, df_residual)
        rows.append(
            {
                "measure": measure,
                "source": source,
                "ss": ss,
                "df": df,
                "ms": ms,
                "f": f,
                "p_value": p,
                "n_topics": n,
                "n_systems": k,
                "confidence": float(confidence),
                "margin_of_error": margin,
            }
        )
    return rows


def _f_test(ms: float, v_e: float, df: int, df_residual: int) -> tuple[float, float]:
    if v_e == 0.0:
        return (math.inf, 0.0) if ms > 0.0 else (float("nan"), float("nan"))
    f = ms / v_e
    import scipy.stats  # loaded on first use

    return f, float(scipy.stats.f.sf(f, df, df_residual))


def _residual_ss(matrix: FloatArray) -> tuple[float, int]:
    """``S_E`` computed from the residuals directly (no subtraction of sums) and its df;
    ``0.0`` when every residual is within the unit of equality (an additive table)."""
    n, k = matrix.shape
    residuals = (
        matrix - matrix.mean(axis=0, keepdims=True) - matrix.mean(axis=1, keepdims=True)
    ) + matrix.mean()
    return _sum_of_squares(residuals, equality_unit(matrix)), (k - 1) * (n - 1)


def equality_unit(matrix: FloatArray) -> float:
    """The unit of equality of a whole matrix: ``EQUAL_RTOL * max|x|`` (:mod:`~.ties`)."""
    return float(_ties_unit(matrix.ravel()))


def _sum_of_squares(deviations: FloatArray, unit: float) -> float:
    """``sum(deviations**2)``, or exactly ``0.0`` when every ``|deviation| <= unit``."""
    if float(np.abs(deviations).max()) <= unit:
        return 0.0
    return float(np.sum(deviations**2))


def _residual_variance(matrix: FloatArray) -> tuple[float, int]:
    ss, df = _residual_ss(matrix)
    return ss / df, df


def _permuted_ranges(matrix: FloatArray, rng: np.random.Generator, n_resamples: int) -> FloatArray:
    """``max - min`` of the system totals after permuting each topic's row, per trial.

    Up to 8 systems a trial's permutation of a topic is a uniform index into the table of all
    ``k!`` permutations (one integer draw per topic); beyond, the ``argsort`` of ``k`` uniform
    keys. Either way the permutations are uniform and independent across topics and trials.
    """
    n, k = matrix.shape
    flat = matrix.ravel()
    offsets = (np.arange(n, dtype=np.intp) * k)[None, :, None]
    table = None
    if k <= _PERMUTATION_TABLE_MAX_SYSTEMS:  # k! <= 40,320: uint16 draws, a uint8 table
        table = np.array(list(itertools.permutations(range(k))), dtype=np.uint8)
    rows_per_block = max(1, BLOCK_VALUES // (n * k))
    ranges = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows_per_block):
        rows = min(rows_per_block, n_resamples - start)
        order: npt.NDArray[np.integer[Any]]
        if table is not None:
            draws = rng.integers(0, table.shape[0], size=(rows, n), dtype=np.uint16)
            order = np.take(table, draws, axis=0)
        else:
            order = rng.random((rows, n, k)).argsort(axis=2)
        positions = np.add(order, offsets, dtype=np.intp)
        totals = np.einsum("rnk->rk", np.take(flat, positions))
        ranges[start : start + rows] = totals.max(axis=1) - totals.min(axis=1)
    return ranges


def _permutation_count(n: int, k: int) -> int:
    """``(k!)**(n - 1)``: the distinct permutations of the randomized Tukey HSD (an exact
    integer: as a float it overflows from about 150 topics of 5 systems)."""
    count: int = math.factorial(k) ** (n - 1)
    return count


def _all_permuted_ranges(matrix: FloatArray) -> FloatArray:
    """The range of the system totals under every one of the ``(k!)**(n - 1)`` permutations
    of topics 2..n (topic 1 fixed), in blocks; the exact null distribution of ``R*``."""
    n, k = matrix.shape
    table = np.array(list(itertools.permutations(range(k))), dtype=np.intp)
    permuted = matrix[np.arange(n)[:, None, None], table[None, :, :]]  # (n, k!, k)
    count = _permutation_count(n, k)
    rows_per_block = max(1, BLOCK_VALUES // (n * k))
    ranges = np.empty(count, dtype=np.float64)
    radix = table.shape[0]
    for start in range(0, count, rows_per_block):
        index = np.arange(start, min(count, start + rows_per_block), dtype=np.int64)
        totals = np.broadcast_to(matrix[0], (index.size, k)).copy()
        for topic in range(1, n):
            totals += permuted[topic, index % radix]
            index //= radix
        ranges[start : start + totals.shape[0]] = totals.max(axis=1) - totals.min(axis=1)
    return ranges


@dataclass(frozen=True)
class _Pairs:
    """Every pair ``i < j`` of one measure's topic-by-system matrix: the system means, the
    pair indices in order, ``diffs = mean_i - mean_j`` (exactly 0.0 within the unit of
    equality), the residual variance ``v_e`` with its degrees of freedom, and the studentized
    differences ``q``."""

    n: int
    systems: list[str]
    means: FloatArray
    first: npt.NDArray[np.intp]
    second: npt.NDArray[np.intp]
    diffs: FloatArray
    v_e: float
    df: int

    @classmethod
    def of(cls, matrix: FloatArray, systems: list[str]) -> _Pairs:
        means = matrix.mean(axis=0)
        first, second = np.triu_indices(matrix.shape[1], k=1)
        diffs = means[first] - means[second]
        diffs[np.abs(diffs) <= equality_unit(matrix)] = 0.0
        v_e, df = _residual_variance(matrix)
        return cls(
            matrix.shape[0], systems, means, first.astype(np.intp), second.astype(np.intp),
            diffs, v_e, df,
        )  # fmt: skip

    @property
    def scale(self) -> float:
        return math.sqrt(self.v_e / self.n)

    @functools.cached_property
    def q(self) -> FloatArray:
        """Tukey's q of each pair (computed once: the p-values and the rows use it)."""
        q: FloatArray = _studentized_differences(self.diffs, self.scale)
        return q

    def rows(
        self,
        measure: str,
        margin: float,
        p_values: FloatArray,
        *,
        tests: tuple[str, str],
        alpha: float,
    ) -> dict[str, Any]:
        """The columns of :data:`TUKEY_COLUMNS` for every pair; the simultaneous interval is
        ``diff ± margin``; ``tests`` is ``(ci_method, test)``."""
        ci_method, test = tests
        k = len(self.systems)
        family_size = k * (k - 1) // 2
        family = (
            f"all {family_size} pairs of {k} systems, measure {measure!r} only: "
            f"family-wise error rate controlled by the test"
        )
        diffs = self.diffs
        with np.errstate(divide="ignore", invalid="ignore"):
            effects = np.where(diffs == 0.0, 0.0, diffs / math.sqrt(self.v_e))
        names = np.array(self.systems, dtype=object)
        size = diffs.size
        return {
            "system": names[self.first],
            "base": names[self.second],
            "measure": np.full(size, measure, dtype=object),
            "n": np.full(size, self.n, dtype=np.int64),
            "base_mean": self.means[self.second],
            "mean": self.means[self.first],
            "diff": diffs,
            "ci_method": np.full(size, ci_method, dtype=object),
            "ci_low": diffs - margin,
            "ci_high": diffs + margin,
            "effect_size": effects,
            "effect_size_kind": np.full(size, EFFECT_SIZE_TUKEY, dtype=object),
            "q": self.q,
            "df": np.full(size, self.df, dtype=np.int64),
            "test": np.full(size, test, dtype=object),
            "p_value": p_values,
            "family": np.full(size, family, dtype=object),
            "family_size": np.full(size, family_size, dtype=np.int64),
            "significant": p_values <= alpha,
        }


def _pair_frame(parts: list[dict[str, Any]]) -> pd.DataFrame:
    dtypes: dict[str, Any] = {}
    for name in TUKEY_COLUMNS:
        if name in _TEXT:
            dtypes[name] = "str"
        elif name == "significant":
            dtypes[name] = bool
        else:
            dtypes[name] = np.int64 if name in _INTEGER else np.float64
    if not parts:
        return typed_frame([], dtypes)
    return pd.DataFrame(
        {
            name: pd.Series(np.concatenate([part[name] for part in parts]), dtype=dtype)
            for name, dtype in dtypes.items()
        }
    )


@functools.lru_cache(maxsize=64)
def _studentized_range_quantile(confidence: float, k: int, df: int) -> float:
    """The ``confidence`` quantile of ``Q_{k, df}`` (cached: scipy inverts by root finding)."""
    import scipy.integrate
    import scipy.stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)
        return float(scipy.stats.studentized_range.ppf(confidence, k, df))


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not (isinstance(alpha, float | int) and 0.0 < alpha < 1.0):
        raise InputError(f"'alpha' must be a number in (0, 1); found {alpha!r}")
