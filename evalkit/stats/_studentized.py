"""The upper tail of the studentized range distribution for many ``q`` at once.

``scipy.stats.studentized_range.sf`` integrates numerically for each value (a few ms each,
over 20 minutes for the 499,500 pairs of a thousand systems). :func:`studentized_range_sf`
calls it once per *distinct* ``q`` when there are at most :data:`DIRECT_LIMIT` of them, and
otherwise builds a piecewise Chebyshev interpolant of scipy's own values over the range of
``q`` (degree :data:`DEGREE` per piece; a piece is halved until its last Chebyshev
coefficients are below :data:`COEFFICIENT_TOLERANCE`), which agrees with scipy to better than
1e-10 (``tests/test_stats_scale.py`` checks it against scipy value by value). scipy computes
the tail as ``1 - cdf`` with an absolute integration error near 1e-11, so neither is more
precise than about 1e-11 in the far tail.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from evalkit._arrays import FloatArray

__all__ = ["COEFFICIENT_TOLERANCE", "DEGREE", "DIRECT_LIMIT", "studentized_range_sf"]


DIRECT_LIMIT = 128
"""Up to this many distinct ``q`` values, scipy is called for each."""

DEGREE = 24
"""Degree of each Chebyshev piece."""

COEFFICIENT_TOLERANCE = 2e-12
"""A piece is accepted when its last three Chebyshev coefficients are below this."""

_MIN_WIDTH = 1e-3  # a piece this narrow is accepted whatever its coefficients


def studentized_range_sf(q: npt.ArrayLike, k: int, df: int) -> FloatArray:
    """``P(Q_{k, df} >= q)`` for every entry of ``q`` (``q >= 0``; ``inf`` gives 0, 0 gives 1),
    clipped to [0, 1], same shape as ``q``."""
    values = np.asarray(q, dtype=np.float64)
    result = np.ones(values.shape, dtype=np.float64)
    result[np.isinf(values)] = 0.0
    finite = (values > 0.0) & np.isfinite(values)
    distinct, inverse = np.unique(values[finite], return_inverse=True)
    if distinct.size <= DIRECT_LIMIT:
        tails = _scipy_sf(distinct, k, df)
    else:
        tails = _interpolated_sf(distinct, k, df)
    result[finite] = np.clip(tails, 0.0, 1.0)[inverse]
    return result


def _scipy_sf(q: FloatArray, k: int, df: int) -> FloatArray:
    """scipy's tail; its warning that an integral converges slowly for q near 0 at large df
    is silenced (the values there agree with the df = inf limit to 1e-12)."""
    import scipy.integrate
    import scipy.stats

    if q.size == 0:
        return np.empty(0, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)
        return np.asarray(scipy.stats.studentized_range.sf(q, k, df), dtype=np.float64)


def _interpolated_sf(q: FloatArray, k: int, df: int) -> FloatArray:
    """The tail at sorted distinct ``q`` from adaptive piecewise Chebyshev interpolation."""
    from numpy.polynomial import Chebyshev

    result = np.empty(q.size, dtype=np.float64)
    pending = [(float(q[0]), float(q[-1]))]
    while pending:
        low, high = pending.pop()
        inside = slice(np.searchsorted(q, low, side="left"), np.searchsorted(q, high, side="right"))
        if inside.stop - inside.start <= DEGREE + 1:  # as cheap to compute them directly
            result[inside] = _scipy_sf(q[inside], k, df)
            continue
        piece = Chebyshev.interpolate(
            lambda x: _scipy_sf(np.asarray(x, dtype=np.float64), k, df),
            DEGREE,
            domain=[low, high],
        )
        tail = float(np.abs(piece.coef[-3:]).max())
        if tail <= COEFFICIENT_TOLERANCE or high - low <= _MIN_WIDTH:
            result[inside] = piece(q[inside])
        else:
            middle = (low + high) / 2.0
            pending += [(middle, high), (low, middle)]
    return result
