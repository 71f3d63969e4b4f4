"""Pure scoring kernels for probe results: set recall/precision/F1, and RR/nDCG of a ranking.

Edge cases (defined here, tested in ``tests/test_probes_scoring.py``):

- both sets are deduplicated first; ``recall = |hits| / |expected|`` and
  ``precision = |hits| / |returned|``, each 0.0 when its denominator is empty;
  ``f1`` is their harmonic mean, 0.0 when both are 0.0;
- nothing returned: recall 0.0, precision 0.0, F1 0.0; a perfect match: all 1.0;
- a ranking keeps the first occurrence of a repeated name (later repeats are dropped, so a
  duplicate can neither earn gain twice nor push other names down);
- RR is ``1 / rank`` of the first expected name, 0.0 when none is returned;
- nDCG uses binary gain and ``log2(rank + 1)`` discount over the whole returned list, with the
  ideal list holding every expected name (trec_eval's ``ndcg`` without a cutoff); 0.0 when
  nothing expected is returned or nothing is expected.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["SetScore", "ndcg", "reciprocal_rank", "score_symbols"]


@dataclass(frozen=True)
class SetScore:
    """Set agreement between expected and returned names; ``missing``/``extra`` sorted."""

    recall: float
    precision: float
    f1: float
    missing: tuple[str, ...]  # expected but not returned
    extra: tuple[str, ...]  # returned but not expected


def score_symbols(expected: Iterable[str], returned: Iterable[str]) -> SetScore:
    """Recall, precision and F1 of ``returned`` against ``expected``, as deduplicated sets."""
    want = set(expected)
    got = set(returned)
    hits = len(want & got)
    recall = hits / len(want) if want else 0.0
    precision = hits / len(got) if got else 0.0
    # the harmonic mean 2PR / (P + R) is 2|hits| / (|expected| + |returned|): computed from the
    # counts it is rounded once, so it never falls outside [min(P, R), max(P, R)]
    f1 = 2 * hits / (len(want) + len(got)) if hits else 0.0
    return SetScore(recall, precision, f1, tuple(sorted(want - got)), tuple(sorted(got - want)))


def _first_occurrences(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def reciprocal_rank(ranking: Sequence[str], expected: Collection[str]) -> float:
    """``1 / rank`` (1-based) of the first expected name in ``ranking``; 0.0 if none appears."""
    for rank, name in enumerate(_first_occurrences(ranking), start=1):
        if name in expected:
            return 1.0 / rank
    return 0.0


def ndcg(ranking: Sequence[str], expected: Collection[str]) -> float:
    """Binary-gain nDCG of the whole ``ranking`` against the ideal ordering of ``expected``."""
    relevant = set(expected)
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, name in enumerate(_first_occurrences(ranking), start=1)
        if name in relevant
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, len(relevant) + 1))
    return dcg / ideal if ideal > 0 else 0.0
