"""Statistics you can trust: bootstrap confidence intervals, paired tests, p-value correction.

Public API::

    bootstrap_ci(values, ...)            -> (low, high) interval of the mean of a 1-D array
    paired_test(a, b, ...)               -> float       two-sided p-value of a paired test
    t_interval(values, ...)              -> (low, high) t-based interval of the mean
    adjust_pvalues(p, method)            -> ndarray     Bonferroni, Holm or Benjamini-Hochberg

:func:`evalkit.stats.compare` and :func:`evalkit.stats.summarize_with_ci` run
these over per-query frames. Conventions shared by every function here and there:

* **Paired differences** are ``system - base`` (``a - b`` in :func:`paired_test`). Equality
  is the one rule of :mod:`evalkit.stats` (``u = 1e-10 * max|values of the pair|``): a
  difference with ``|d| <= u`` is set to exactly ``0.0`` before anything else (it counts as a
  tie, Wilcoxon drops it, it takes part in the randomization test and the bootstrap as a
  zero); differences with ``ptp(d) <= u`` are constant; Wilcoxon ranks ``|d|`` rounded to
  multiples of ``u``; permutation sums within ``n * u`` of the observed one tie.
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
  values) have defined results, not errors: see :func:`paired_test` and
  :func:`evalkit.stats.compare`. A p-value that is undefined is ``NaN``;
  :func:`adjust_pvalues` keeps ``NaN`` and leaves it out of the family size (like R's
  ``p.adjust``), and a ``NaN`` p-value is never significant.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray
from evalkit.errors import InputError
from evalkit.stats._resampling import (
    BLOCK_VALUES,
    bootstrap_test_p,
    percentile_intervals,
    random_generator,
    sign_flip_p,
)
from evalkit.stats._ties import (
    EQUAL_RTOL,
    differences_and_unit,
    equality_unit,
    is_constant,
    rounded_to_unit,
)
from evalkit.stats._validation import check_choice, check_resampling, finite_vector, short_list

__all__ = [
    "CORRECTIONS",
    "INTERVAL_METHODS",
    "P_METHODS",
    "TESTS",
    "TIE_TOLERANCE",
    "adjust_pvalues",
    "bootstrap_ci",
    "mean_interval",
    "paired_p_values",
    "paired_test",
    "t_interval",
]


TESTS = ("randomization", "ttest", "wilcoxon", "bootstrap")
"""Names accepted by ``test=``: paired sign-flip randomization, paired t, Wilcoxon signed-rank,
and the studentized, mean-shifted bootstrap test."""

CORRECTIONS = ("holm", "bonferroni", "bh", "none")
"""Names accepted by ``correction=`` / ``method=`` of :func:`adjust_pvalues`."""

INTERVAL_METHODS = ("percentile", "bca")
"""Bootstrap interval methods: percentile, and bias-corrected and accelerated (BCa)."""

TIE_TOLERANCE = EQUAL_RTOL
"""The relative tolerance of equality (:data:`evalkit.stats.EQUAL_RTOL`)."""

P_METHODS = ("exact", "monte-carlo", "t", "normal", "undefined")
"""How a p-value was computed (the ``p_method`` column): ``exact`` (every sign vector or
permutation enumerated, an exact null distribution, or every difference 0), ``monte-carlo``
(``n_resamples`` random resamples), ``t`` (Student t), ``normal`` (normal approximation),
``undefined`` (the p-value is NaN)."""

_BLOCK_VALUES = BLOCK_VALUES  # values resampled per block: memory stays near 8 MB per array


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
    single value; equal by the rule of :mod:`evalkit.stats`, ``ptp <= 1e-10 max|v|``) give
    the zero-width interval ``(mean, mean)`` by every method: every resample has that mean.
    Raises :class:`InputError` for an empty, non-1-D or non-finite array or a bad argument.
    """
    check_resampling(confidence=confidence, n_resamples=n_resamples, seed=seed)
    check_choice("method", method, INTERVAL_METHODS)
    array = finite_vector(values, "values")
    if array.size == 0:
        raise InputError("bootstrap_ci: 'values' is empty; expected at least one value")
    rng = random_generator(seed)
    return mean_interval(
        array, rng, confidence=confidence, n_resamples=n_resamples, method=method, where="values"
    )


def t_interval(values: npt.ArrayLike, *, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Student t interval ``(low, high)`` of the mean of a 1-D array.

    ``mean ± t_{(1 + confidence) / 2}(n - 1) * std(values, ddof=1) / sqrt(n)`` with the
    quantile from ``scipy.stats.t.ppf``; for paired differences this is the interval that goes
    with the paired t-test (Sakai 2018, Section 2.2: its half-width is the margin of error).
    Constant values (``ptp <= 1e-10 max|v|``) give ``(mean, mean)``; a single value gives
    ``(nan, nan)`` (no variance).
    Raises :class:`InputError` for an empty, non-1-D or non-finite array or a bad confidence.
    """
    check_resampling(confidence=confidence, n_resamples=1, seed=0)
    array = finite_vector(values, "values")
    if array.size == 0:
        raise InputError("t_interval: 'values' is empty; expected at least one value")
    return _t_interval(array, confidence, float(equality_unit(array)))


def paired_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    test: str = "randomization",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float:
    """Two-sided p-value for "``a`` and ``b`` have the same mean", pairing ``a[i]`` with ``b[i]``.

    Tests (``d = a - b``, ties by the rule of :mod:`evalkit.stats` set to 0; ``u`` its
    unit, ``1e-10 * max(|a|, |b|)``):

    * ``"randomization"``: sign-flip test of ``T = sum(d)``. When ``2**n <= n_resamples`` all
      ``2**n`` sign vectors are enumerated and ``p = #{|T*| >= |T_obs| - n u} / 2**n`` is
      exact; otherwise ``n_resamples`` random sign vectors from ``Generator(PCG64(seed))``
      give ``p = (#{|T*| >= |T_obs| - n u} + 1) / (n_resamples + 1)``. The ``+1`` counts
      the observed assignment, so ``p`` is never 0 and the test is valid at every level; the
      ``n u`` slack makes sign patterns that give the same ``|T|`` up to float rounding count
      as ties. :func:`evalkit.stats.compare` says which in ``p_method``.
    * ``"ttest"``: the paired t-test, ``scipy.stats.ttest_rel(a, b)`` (computed as
      ``ttest_1samp(d, 0)``, which is how scipy defines it, on the tie-snapped ``d``).
    * ``"wilcoxon"``: ``scipy.stats.wilcoxon(r, zero_method="wilcox", correction=False,
      method="auto")`` on ``r``, the differences rounded to multiples of ``u``, so differences
      equal on a grid share their average rank. Zeros are dropped before ranking. scipy's
      ``"auto"`` picks: the exact null distribution for ``n <= 50`` without ties or zeros
      (R: ``wilcox.test(a, b, paired=TRUE, exact=TRUE)``); the exact permutation
      distribution of the tie-aware statistic over all ``2**n`` sign vectors for ``n <= 13``
      with ties or zeros (no base-R call; ``coin::wilcoxsign_test(distribution="exact")``);
      otherwise the normal approximation with the tie-corrected variance and no continuity
      correction (R: ``wilcox.test(a, b, paired=TRUE, exact=FALSE, correct=FALSE,
      digits.rank=10)``).
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
    non-zero differences (zero variance; constant by the rule of equality: ``ptp(d) <= u``).
    ``seed`` and ``n_resamples`` only matter for the randomization and bootstrap tests.
    Raises :class:`InputError` for arrays of different lengths, empty or non-finite input.
    """
    check_choice("test", test, TESTS)
    check_resampling(n_resamples=n_resamples, seed=seed)
    first = finite_vector(a, "a")
    second = finite_vector(b, "b")
    if first.shape != second.shape:
        raise InputError(
            f"paired_test: 'a' has {first.size} values and 'b' has {second.size}; "
            "expected one value of each per pair"
        )
    if first.size == 0:
        raise InputError("paired_test: 'a' and 'b' are empty; expected at least one pair")
    diffs, unit = differences_and_unit(first[:, None], second[:, None])
    p_values, _ = paired_p_values(
        diffs, unit, test=test, rng=random_generator(seed), n_resamples=n_resamples
    )
    return float(p_values[0])


def adjust_pvalues(p: npt.ArrayLike, method: str = "holm") -> FloatArray:
    """Multiple-testing adjusted p-values, same shape and order as ``p``.

    ``"bonferroni"``: ``min(1, m p)``. ``"holm"``: step-down Holm (family-wise error rate).
    ``"bh"``: Benjamini-Hochberg step-up (false discovery rate). ``"none"``: a copy of ``p``.
    ``m`` is the number of non-``NaN`` p-values; ``NaN`` entries stay ``NaN`` (R's
    ``p.adjust`` convention). The result does not depend on the order of ``p``.
    Raises :class:`InputError` unless ``p`` is 1-D with values in [0, 1] or ``NaN``.
    """
    check_choice("method", method, CORRECTIONS)
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
            f"{short_list(str(i) for i in bad)} do not"
        )
    result = values.copy()
    result[known] = _adjust_known(values[known], method)
    return result


def paired_p_values(
    diffs: FloatArray,
    unit: FloatArray,
    *,
    test: str,
    rng: np.random.Generator,
    n_resamples: int,
) -> tuple[FloatArray, npt.NDArray[np.str_]]:
    """Two-sided p-value of ``test`` per column and its :data:`P_METHODS` entry (degenerate
    cases as in paired_test); ``unit`` is each column's unit of equality."""
    width = diffs.shape[1]
    result = np.ones(width, dtype=np.float64)  # every difference 0: p = 1
    methods = np.full(width, "exact", dtype="<U11")
    active = np.asarray(diffs.any(axis=0), dtype=bool)
    if test == "randomization":
        if active.any():
            result[active], exact = sign_flip_p(diffs[:, active], rng, n_resamples, unit[active])
            methods[active] = "exact" if exact else "monte-carlo"
        return result, methods
    undefined = active & (is_constant(diffs, unit) | (diffs.shape[0] < 2))
    if test in ("bootstrap", "ttest"):
        result[undefined] = float("nan")
        methods[undefined] = "undefined"
    usable = active & ~undefined if test in ("bootstrap", "ttest") else active
    if not usable.any():
        return result, methods
    if test == "bootstrap":
        result[usable] = bootstrap_test_p(diffs[:, usable], rng, n_resamples)
        methods[usable] = "monte-carlo"
    elif test == "ttest":
        # ttest_rel(a, b) is ttest_1samp(a - b, 0): p = 2 * stdtr(n - 1, -|t|), as scipy's
        import scipy.special  # scipy.stats takes over a second to import

        d = diffs[:, usable]
        n = d.shape[0]
        t = d.mean(axis=0) / np.sqrt(d.var(axis=0, ddof=1) / n)
        result[usable] = np.minimum(2.0 * scipy.special.stdtr(n - 1, -np.abs(t)), 1.0)
        methods[usable] = "t"
    else:
        for column in np.flatnonzero(usable):
            result[column], methods[column] = _wilcoxon(diffs[:, column], float(unit[column]))
    return result, methods


def _wilcoxon(diffs: FloatArray, unit: float) -> tuple[float, str]:
    """Tie-aware Wilcoxon signed-rank p-value and its method (see paired_test)."""
    import scipy.stats  # loaded on first use: it takes over a second to import

    rounded = rounded_to_unit(diffs, unit)
    nonzero = np.abs(rounded[rounded != 0.0])
    ties = np.unique(nonzero).size < nonzero.size
    if not ties and nonzero.size == rounded.size and rounded.size <= 50:
        method = "exact"
    else:
        method = "exact" if rounded.size <= 13 else "normal"
    p = scipy.stats.wilcoxon(rounded, zero_method="wilcox", correction=False, method="auto")
    return float(p.pvalue), method


def _t_interval(values: FloatArray, confidence: float, unit: float) -> tuple[float, float]:
    """Student t interval of the mean of non-empty finite ``values`` (see t_interval)."""
    if values.size > 1 and is_constant(values, unit):
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


def mean_interval(
    values: FloatArray,
    rng: np.random.Generator,
    *,
    confidence: float,
    n_resamples: int,
    method: str,
    where: str,
) -> tuple[float, float]:
    """Bootstrap interval of the mean of non-empty finite ``values`` (see bootstrap_ci)."""
    if is_constant(values, float(equality_unit(values))):
        return float(values.mean()), float(values.mean())
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
