"""The statistics tests' oracles and per-query frames.

Oracles: the exact sign-flip p-value (:func:`exact_sign_flip_p`) and the tolerance of a Monte
Carlo p-value (:func:`monte_carlo_tolerance`). Frames (system, query_id, measure, value) built
from plain lists and matrices: :func:`tidy`, :func:`synthetic`, :func:`tidy_matrix`. The frames
of :func:`synthetic` carry a ``query_text`` column holding :data:`SECRET`, and
:func:`tidy_matrix`'s one when asked: no statistic's output may show it.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

SECRET = "confidential-passage-text"


def tidy(
    values: dict[str, list[float]], measure: str = "nDCG@10", **attributes: list[object]
) -> pd.DataFrame:
    """A tidy per-query frame with queries q00, q01, ... for every system in ``values``."""
    rows = []
    for system, column in values.items():
        for i, value in enumerate(column):
            row = {"system": system, "query_id": f"q{i:02d}", "measure": measure, "value": value}
            row.update({name: attr[i] for name, attr in attributes.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def synthetic(n_queries: int = 40, systems: int = 2, seed: int = 3) -> pd.DataFrame:
    """base + ``systems`` systems, two measures, ``language`` and ``answerable`` attributes."""
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems + 1):
        for measure in ("nDCG@10", "R@5"):
            frames.append(
                pd.DataFrame(
                    {
                        "system": "base" if s == 0 else f"sys{s}",
                        "query_id": [f"q{i:03d}" for i in range(n_queries)],
                        "measure": measure,
                        "value": np.clip(rng.beta(2, 3, n_queries) + 0.03 * s, 0, 1),
                        "language": ["en" if i % 3 else "de" for i in range(n_queries)],
                        "answerable": [i % 4 != 0 for i in range(n_queries)],
                        "query_text": SECRET,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def tidy_matrix(matrix: np.ndarray, measure: str = "nDCG@10", **columns: Any) -> pd.DataFrame:
    """Tidy frame of a (topics x systems) matrix: systems s0, s1, ...; queries q00, q01, ...;
    then each of ``columns`` (one value for every row)."""
    n, k = matrix.shape
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{j}" for j in range(k)], n),
            "query_id": np.tile([f"q{t:02d}" for t in range(n)], k),
            "measure": measure,
            "value": matrix.T.ravel(),
            **columns,
        }
    )


def exact_sign_flip_p(diffs: np.ndarray) -> float:
    """The two-sided sign-flip p-value by enumerating all 2**n sign vectors (no +1)."""
    observed = abs(diffs.sum())
    slack = 1e-9 * np.abs(diffs).sum()
    hits = sum(
        bool(abs(np.dot(signs, diffs)) >= observed - slack)
        for signs in itertools.product((1.0, -1.0), repeat=diffs.size)
    )
    return hits / (1 << diffs.size)


def monte_carlo_tolerance(p: float, n_resamples: int) -> float:
    """4 binomial standard errors of a Monte Carlo p-value, plus the +1 convention's bias."""
    return 4.0 * math.sqrt(p * (1.0 - p) / n_resamples) + 1.0 / (n_resamples + 1)
