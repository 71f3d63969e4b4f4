"""What is particular to scoring a probe: the set agreement of the names a tool returned with
the expected names (recall, precision, F1, and the names missing and extra).

Edge cases (defined here, tested in ``tests/test_probes_scoring.py``):

- both sets are deduplicated first; ``recall = |hits| / |expected|`` and
  ``precision = |hits| / |returned|``, each 0.0 when its denominator is empty;
  ``f1`` is their harmonic mean, 0.0 when both are 0.0;
- nothing returned: recall 0.0, precision 0.0, F1 0.0; a perfect match: all 1.0.

A tool that returns a ranking is also scored with RR and nDCG by the measures engine
(:func:`evalkit.measures.score_list`, each expected name graded 1; :mod:`evalkit.probes.runner`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SetScore", "score_symbols"]


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
