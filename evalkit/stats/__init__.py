"""Statistics over per-query frames: paired comparisons with intervals, and tests for many systems.

- :mod:`~evalkit.stats.paired`: :func:`compare`, :func:`summarize_with_ci` and their frames.
- :mod:`~evalkit.stats.paired_tests`: :func:`paired_test`, :func:`bootstrap_ci`,
  :func:`t_interval`, :func:`adjust_pvalues`.
- :mod:`~evalkit.stats.multi`: :func:`anova`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`.
- :mod:`~evalkit.stats.resampling`: the seeded resampling they use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.stats.multi import anova, compact_letters, randomized_tukey_hsd, tukey_hsd
    from evalkit.stats.paired import compare, summarize_with_ci
    from evalkit.stats.paired_tests import adjust_pvalues, bootstrap_ci, paired_test, t_interval

__all__ = [
    "adjust_pvalues",
    "anova",
    "bootstrap_ci",
    "compact_letters",
    "compare",
    "paired_test",
    "randomized_tukey_hsd",
    "summarize_with_ci",
    "t_interval",
    "tukey_hsd",
]

_MODULE_OF = {
    **dict.fromkeys(("compare", "summarize_with_ci"), "evalkit.stats.paired"),
    **dict.fromkeys(
        ("adjust_pvalues", "bootstrap_ci", "paired_test", "t_interval"),
        "evalkit.stats.paired_tests",
    ),
    **dict.fromkeys(
        ("anova", "compact_letters", "randomized_tukey_hsd", "tukey_hsd"), "evalkit.stats.multi"
    ),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
