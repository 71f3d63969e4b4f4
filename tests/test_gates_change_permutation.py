"""The baseline change's language test (``p_differs``) is SciPy's permutation test, value for
value: ``evalkit.gates`` computes it without importing ``scipy.stats`` (issue 48)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import permutation_test

from evalkit.gates import ChangeSettings
from evalkit.gates._change import _differs_p


def _scipy_p(d: np.ndarray, inside: np.ndarray, n_resamples: int, seed: int) -> float:
    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(np.mean(x, axis=axis) - np.mean(y, axis=axis))

    result = permutation_test(
        (d[inside], d[~inside]),
        statistic,
        permutation_type="independent",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


CASES = [
    # (queries, share inside, n_resamples, seed, values): exact (few splits) and sampled
    (5, 0.4, 2000, 0, "graded"),
    (9, 0.34, 2000, 3, "graded"),
    (14, 0.5, 2000, 1, "continuous"),
    (12, 0.25, 100, 7, "binary"),
    (40, 0.5, 2000, 0, "graded"),
    (101, 0.3, 500, 11, "continuous"),
    (300, 0.5, 2000, 2, "binary"),
    (2_500, 0.45, 1_500, 5, "continuous"),
    (2_500, 0.5, 2_000, 5, "graded"),  # more positions than are kept: drawn test by test
]


@pytest.mark.parametrize(("n", "share", "n_resamples", "seed", "kind"), CASES)
def test_differs_p_is_scipys_value(
    n: int, share: float, n_resamples: int, seed: int, kind: str
) -> None:
    rng = np.random.default_rng(1000 + n)
    if kind == "binary":  # many ties, many zeros: the tolerance and the counts matter
        d = rng.integers(-1, 2, n).astype(np.float64)
    elif kind == "graded":
        d = rng.integers(-3, 4, n) / 3.0
    else:
        d = rng.normal(0.01, 0.2, n)
    inside = np.zeros(n, dtype=bool)
    inside[rng.choice(n, max(2, round(n * share)), replace=False)] = True
    settings = ChangeSettings(n_resamples=n_resamples, seed=seed)
    assert _differs_p(d, inside, settings) == _scipy_p(d, inside, n_resamples, seed)


def test_differs_p_equal_groups_and_constant_differences() -> None:
    settings = ChangeSettings(n_resamples=2000, seed=0)
    for d in (np.zeros(30), np.full(30, 0.1), np.r_[np.full(15, 0.1), np.full(15, -0.1)]):
        inside = np.arange(30) < 15
        assert _differs_p(d, inside, settings) == _scipy_p(d, inside, 2000, 0)
