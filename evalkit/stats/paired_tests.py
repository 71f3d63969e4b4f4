"""Statistics you can trust: bootstrap confidence intervals, paired tests, p-value correction.

Public API::

    bootstrap_ci(values, ...)            -> (low, high) interval of the mean of a 1-D array
    paired_test(a, b, ...)               -> float       two-sided p-value of a paired test
    t_interval(values, ...)              -> (low, high) t-based interval of the mean
    adjust_pvalues(p, method)            -> ndarray     Bonferroni, Holm or Benjamini-Hochberg

:func:`~evalkit.stats.paired.compare` and :func:`~evalkit.stats.paired.summarize_with_ci` run
these over per-query frames. Conventions shared by every function here and there:

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
  values) have defined results, not errors: see :func:`paired_test` and
  :func:`~evalkit.stats.paired.compare`. A p-value that is undefined is ``NaN``;
  :func:`adjust_pvalues` keeps ``NaN`` and leaves it out of the family size (like R's
  ``p.adjust``), and a ``NaN`` p-value is never significant.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from evalkit.errors import InputError
from evalkit.stats.resampling import (
    BLOCK_VALUES,
    _generator,
    bootstrap_test_p,
    percentile_intervals,
    sign_flip_p,
)
from evalkit.stats.validation import _check_choice, _check_resampling, _finite_vector, _listed

__all__ = [
    "CORRECTIONS",
    "INTERVAL_METHODS",
    "TESTS",
    "TIE_TOLERANCE",
    "adjust_pvalues",
    "bootstrap_ci",
    "paired_test",
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

TIE_TOLERANCE = 1e-12
"""Relative and absolute tolerance under which two paired values count as equal."""

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


def _constant(values: FloatArray) -> bool:
    """Whether all values are equal up to float rounding (``ptp <= 1e-12 * max|v|``): then
    the sample variance is rounding noise and variance-based statistics are undefined."""
    return bool(np.ptp(values) <= TIE_TOLERANCE * float(np.abs(values).max()))


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
