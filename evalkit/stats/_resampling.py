"""Vectorized resampling kernels of ``_paired``: many paired comparisons at once.

Every kernel takes ``diffs``, an ``(n, p)`` array of paired differences (one column per
comparison, ties already set to exactly 0.0), draws each resample *once* for all ``p``
columns, and returns one value per column. Resamples are drawn in blocks of about ``2**20``
values; the per-block work is numpy reductions and ``numpy.einsum`` (its own single-threaded
loops, never BLAS), so results do not depend on the thread count. Columns share the
resamples, and a column's result depends only on its own data and the generator, not on
the other columns.

* :func:`percentile_intervals`: bootstrap resamples as count vectors (how often each query
  is drawn; ``n`` draws with replacement), resample means ``counts @ diffs / n``, the
  percentile interval by ``numpy.quantile`` (linear interpolation, as
  ``scipy.stats.bootstrap(method="percentile")``).
* :func:`sign_flip_p`: sign vectors, ``T* = signs @ diffs``; all ``2**n`` of them when
  ``2**n <= B`` (exact: ``p = #{|T*| >= |T_obs| - n u} / 2**n``), else ``B`` random ones
  (``p = (#{|T*| >= |T_obs| - n u} + 1) / (B + 1)``); ``u`` is the unit of
  :mod:`evalkit.stats`.
* :func:`bootstrap_test_p`: the studentized, mean-shifted bootstrap test (see
  :func:`evalkit.stats.paired_test`).

The generators they draw from: ``Generator(PCG64(seed))`` (:func:`random_generator`), and a group's
stream derived from ``seed`` and the group key (:func:`group_seed`: ``SeedSequence([seed,
*sha256(key)])``, stable across processes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCK_VALUES",
    "STUDENTIZED_RTOL",
    "bootstrap_test_p",
    "group_seed",
    "percentile_intervals",
    "random_generator",
    "sign_flip_p",
]

FloatArray = npt.NDArray[np.float64]

BLOCK_VALUES = 1 << 20
"""Values drawn per block (rows x queries): memory stays near 8 MB per block array."""

STUDENTIZED_RTOL = 1e-9
"""Relative float-tie tolerance of studentized statistics (the bootstrap test)."""

_CONSTANT_RTOL = 1e-10  # a resample variance below this times mean(w^2) is rounding noise


def percentile_intervals(
    diffs: FloatArray, rng: np.random.Generator, n_resamples: int, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap interval of each column's mean: ``(low, high)``, each ``(p,)``."""
    n = diffs.shape[0]
    means = np.empty((n_resamples, diffs.shape[1]), dtype=np.float64)
    for start, counts in _count_blocks(rng, n, n_resamples):
        means[start : start + counts.shape[0]] = np.einsum("bn,np->bp", counts, diffs) / n
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return low, high


def sign_flip_p(
    diffs: FloatArray, rng: np.random.Generator, n_resamples: int, unit: FloatArray
) -> tuple[FloatArray, bool]:
    """Two-sided sign-flip randomization p-value of ``|sum(d)|`` per column, and whether it
    is exact (every one of the ``2**n`` sign vectors enumerated, ``rng`` unused).

    ``unit`` is each column's unit of equality: sums within ``n * unit`` of ``|T_obs|`` tie."""
    n = diffs.shape[0]
    observed = np.abs(diffs.sum(axis=0))
    threshold = observed - n * unit
    hits = np.zeros(diffs.shape[1], dtype=np.int64)
    rows_per_block = max(1, BLOCK_VALUES // n)
    exact = n < 63 and (1 << n) <= n_resamples
    total = (1 << n) if exact else n_resamples
    for start in range(0, total, rows_per_block):
        rows = min(rows_per_block, total - start)
        if exact:
            index = np.arange(start, start + rows, dtype=np.int64)[:, None]
            signs = 1.0 - 2.0 * ((index >> np.arange(n, dtype=np.int64)) & 1)
        else:
            bits = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
            signs = 1.0 - 2.0 * np.unpackbits(bits, axis=1, count=n)
        totals = np.abs(np.einsum("bn,np->bp", signs.astype(np.float64), diffs))
        hits += np.count_nonzero(totals >= threshold, axis=0)
    if exact:
        return hits / total, True
    return (hits + 1) / (n_resamples + 1), False


def bootstrap_test_p(diffs: FloatArray, rng: np.random.Generator, n_resamples: int) -> FloatArray:
    """Studentized mean-shifted bootstrap p-value per column (columns must not be constant).

    For each resample (a count vector ``c``) and column: ``mean* = c @ w / n`` and
    ``var* = (c @ w^2 - n mean*^2) / (n - 1)`` of the shifted ``w = d - mean(d)``;
    ``t* = mean* / sqrt(var* / n)``. A resample whose variance is rounding noise
    (``var* <= 1e-10 mean(w^2)``: all drawn values equal) gets ``|t*| = inf``, or ``0`` when
    its mean is 0 too (``|mean*| <= 1e-9 max|w|``).
    """
    n = diffs.shape[0]
    mean = diffs.mean(axis=0)
    observed = np.abs(mean / (diffs.std(axis=0, ddof=1) / np.sqrt(n)))
    threshold = observed * (1.0 - STUDENTIZED_RTOL)
    shifted = diffs - mean
    both = np.hstack([shifted, shifted**2])
    p = diffs.shape[1]
    noise = _CONSTANT_RTOL * (shifted**2).mean(axis=0)
    zero = STUDENTIZED_RTOL * np.abs(shifted).max(axis=0)
    hits = np.zeros(p, dtype=np.int64)
    for _, counts in _count_blocks(rng, n, n_resamples):
        sums = np.einsum("bn,np->bp", counts, both)
        means = sums[:, :p] / n
        variance = np.maximum((sums[:, p:] - n * means**2) / (n - 1), 0.0)
        constant = variance <= noise
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.abs(means) / np.sqrt(variance / n)
        statistic = np.where(constant, np.where(np.abs(means) > zero, np.inf, 0.0), statistic)
        hits += np.count_nonzero(statistic >= threshold, axis=0)
    return (hits + 1) / (n_resamples + 1)


def _count_blocks(
    rng: np.random.Generator, n: int, n_resamples: int
) -> Iterator[tuple[int, FloatArray]]:
    """Bootstrap resamples as ``(start, counts)`` blocks; ``counts[b, i]`` is how often
    query ``i`` is drawn in resample ``start + b`` (``n`` uniform draws with replacement)."""
    index_type = np.uint16 if n <= 1 << 16 else np.int64
    rows_per_block = max(1, BLOCK_VALUES // n)
    for start in range(0, n_resamples, rows_per_block):
        rows = min(rows_per_block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=index_type)
        flat = (draws + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        yield start, counts.astype(np.float64)


def group_seed(
    seed: int, purpose: str, columns: Sequence[str], key: Iterable[Any]
) -> np.random.SeedSequence:
    """``SeedSequence([seed, *sha256(key)])``: stable across processes (never Python's hash())."""
    text = json.dumps([purpose, list(columns), [str(v) for v in key]], ensure_ascii=True)
    digest = hashlib.sha256(text.encode("ascii")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence([int(seed), *words])


def random_generator(seed: int | np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))
