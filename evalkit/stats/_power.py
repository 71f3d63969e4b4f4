"""How small a difference a paired comparison can detect: the minimum detectable difference.

For ``n`` paired differences with standard deviation ``s``, the minimum detectable difference
(MDD) at level ``alpha`` and power ``power`` is the smallest true mean difference ``delta`` that
a two-sided paired t-test rejects with probability ``power``::

    power = P(|T| > t(1 - alpha/2, n - 1)),   T ~ noncentral t(n - 1, delta * sqrt(n) / s)

solved for ``delta`` (the exact noncentral-t power, as R's ``power.t.test(n, sd = s,
sig.level = alpha, power = power, type = "paired", strict = TRUE)`` and statsmodels'
``TTestPower().solve_power`` compute it). It is the sample-size reasoning Sakai recommends for
IR experiments (Sakai, "Statistical Significance, Power, and Sample Sizes", SIGIR 2014): with
few topics, differences smaller than the MDD are likely to go undetected, so "no significant
difference" says little.

Degenerate cases: fewer than 2 differences give ``inf`` (nothing can be detected); ``s = 0``
(every difference equal by :mod:`evalkit.stats`' rule) gives ``0.0``.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import special

from evalkit.stats._ties import equality_unit, is_constant

__all__ = ["DEFAULT_POWER", "minimum_detectable_difference"]

DEFAULT_POWER: Final = 0.8
"""The conventional power (Cohen): a difference at the MDD is detected 4 times in 5."""


def _power(effect: float, n: int, alpha: float) -> float:
    """Two-sided paired t-test power for a standardized ``effect`` (delta / s) and ``n`` pairs.

    Computed with ``scipy.special`` (the noncentral t CDF ``nctdtr`` and the t quantile
    ``stdtrit``) rather than ``scipy.stats``: the report's kernel does not import the latter."""
    df = n - 1
    critical = float(special.stdtrit(df, 1 - alpha / 2))
    noncentrality = effect * math.sqrt(n)
    upper = 1.0 - float(special.nctdtr(df, noncentrality, critical))
    lower = float(special.nctdtr(df, noncentrality, -critical))
    # the noncentral t can give NaN far in a tail (df = 1); there the tail is ~0 (or ~1)
    if math.isnan(upper):
        upper = 1.0 if noncentrality > critical else 0.0
    if math.isnan(lower):
        lower = 0.0
    return upper + lower


def minimum_detectable_difference(
    differences: npt.ArrayLike, *, alpha: float = 0.05, power: float = DEFAULT_POWER
) -> float:
    """The MDD (module docs) of the paired ``differences`` (a 1-D array, NaN-free), in the
    measure's own units."""
    values = np.asarray(differences, dtype=np.float64)
    n = int(values.size)
    if n < 2:
        return math.inf
    if is_constant(values, equality_unit(values)):
        return 0.0  # equal differences, by the stats package's one rule of equality
    spread = float(np.std(values, ddof=1))
    if not 0.0 < alpha < 1.0 or not alpha < power < 1.0:
        raise ValueError(f"need 0 < alpha < power < 1, got alpha={alpha}, power={power}")
    # the power rises with the effect: bracket the root by doubling, then bisect to 1e-12
    low, high = 0.0, 1.0
    while _power(high, n, alpha) < power:
        low, high = high, high * 2.0
    while high - low > 1e-12 * high:
        middle = (low + high) / 2
        if _power(middle, n, alpha) < power:
            low = middle
        else:
            high = middle
    effect = (low + high) / 2
    return float(effect * spread)
