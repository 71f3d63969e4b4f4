"""Statistics over per-query frames: paired comparisons with intervals, and tests for many systems.

- :mod:`~evalkit.stats.paired`: :func:`compare`, :func:`summarize_with_ci` and their parts.
- :mod:`~evalkit.stats.multi`: :func:`anova`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`.
- :mod:`~evalkit.stats.resampling`: the seeded resampling both use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.stats.multi import anova, compact_letters, randomized_tukey_hsd, tukey_hsd
    from evalkit.stats.paired import (
        adjust_pvalues,
        bootstrap_ci,
        compare,
        paired_test,
        summarize_with_ci,
        t_interval,
    )

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
    **dict.fromkeys(
        (
            "adjust_pvalues",
            "bootstrap_ci",
            "compare",
            "paired_test",
            "summarize_with_ci",
            "t_interval",
        ),
        "evalkit.stats.paired",
    ),
    **dict.fromkeys(
        ("anova", "compact_letters", "randomized_tukey_hsd", "tukey_hsd"), "evalkit.stats.multi"
    ),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
