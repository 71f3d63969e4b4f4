"""The one definition of "equal" used by every statistic of :mod:`evalkit.stats`.

Two numbers derived from the data are equal when they differ by at most the *unit*
``u = EQUAL_RTOL * S`` (``EQUAL_RTOL = 1e-10``), where ``S`` is the scale of the data the
statistic reads: the largest ``|value|`` of the two systems of a pair (all pairs of a
frame group use their own two columns), of a 1-D array (:func:`bootstrap_ci`), or of the whole
topic-by-system matrix (ANOVA and the Tukey tests). A sum of ``n`` such numbers (a permutation
statistic, a system total) is compared at ``n * u``. Float rounding of values on a grid
(multiples of 0.1 or 0.05, as P@k and nDCG give) is about ``1e-16 * S``, far below ``u``,
while distinct grid values differ by far more than ``u``; so ties on the grid are ties.

The rule is general (no table, no threshold fitted to a data set): it is relative to the
data's own scale, so it means the same for a measure in [0, 1] and for a latency in ms.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray

__all__ = [
    "EQUAL_RTOL",
    "differences_and_unit",
    "equality_unit",
    "is_constant",
    "paired_differences",
    "rounded_to_unit",
]


EQUAL_RTOL = 1e-10
"""Relative tolerance of equality: the unit is ``EQUAL_RTOL * max|data|``."""


def equality_unit(*arrays: FloatArray) -> FloatArray:
    """Per column of 2-D arrays (or a 0-d array for 1-D): ``EQUAL_RTOL * max|values|``."""
    scale = np.max(
        [np.abs(a).max(axis=0) if a.size else np.zeros(a.shape[1:]) for a in arrays], axis=0
    )
    return np.asarray(EQUAL_RTOL * scale, dtype=np.float64)


def differences_and_unit(first: FloatArray, second: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(d, u)``: ``d = first - second`` with ``|d| <= u`` set to exactly 0.0, and the unit
    ``u`` (per column for 2-D input, a 0-d array for 1-D)."""
    unit = equality_unit(first, second)
    diffs = first - second
    diffs[np.abs(diffs) <= unit] = 0.0
    return diffs, unit


def is_constant(values: FloatArray, unit: FloatArray | float) -> npt.NDArray[np.bool_]:
    """Whether each column's values are equal (``ptp <= u``): its variance is rounding noise."""
    return np.asarray(np.ptp(values, axis=0) <= unit, dtype=bool)


def rounded_to_unit(values: FloatArray, unit: float) -> FloatArray:
    """``values`` rounded to the nearest multiple of ``unit``: equal values become the same
    float (the tie rule of ranks, as R's ``signif(x, digits.rank = 10)`` for data in [0, 1])."""
    if unit <= 0.0:
        return values.copy()
    return np.asarray(np.round(values / unit) * unit, dtype=np.float64)


def paired_differences(first: npt.ArrayLike, second: npt.ArrayLike) -> FloatArray:
    """``first - second`` (1-D) with differences within the unit of equality set to 0.0."""
    diffs, _ = differences_and_unit(np.asarray(first, np.float64), np.asarray(second, np.float64))
    return diffs
