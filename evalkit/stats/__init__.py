"""Statistics over per-query frames: paired comparisons with intervals, and tests for many systems.

- :mod:`~evalkit.stats.paired`: :func:`compare`, :func:`summarize_with_ci` and their frames.
- :mod:`~evalkit.stats.paired_tests`: :func:`paired_test`, :func:`bootstrap_ci`,
  :func:`t_interval`, :func:`adjust_pvalues`.
- :mod:`~evalkit.stats.multi`: :func:`anova`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`.
- :mod:`~evalkit.stats.resampling`: the seeded resampling they use;
  :mod:`~evalkit.stats.studentized`: Tukey's tail for many pairs at once.

**Equal** means one thing everywhere (:mod:`~evalkit.stats.ties`): two numbers derived from the
data are equal when they differ by at most ``u = 1e-10 * S``, ``S`` the largest ``|value|`` the
statistic reads (the two systems of a pair, the array, or the measure's topic-by-system matrix);
sums of ``n`` values are compared at ``n * u``. So a difference within ``u`` is a tie (exactly
0), differences within ``u`` of each other are constant, Wilcoxon ranks ``|d|`` rounded to
multiples of ``u``, ``V_E``, ``S_A`` and a difference of means within ``u`` are 0, and permuted
sums within ``n * u`` of the observed one tie.

**Identical systems** give ``p_value = 1`` in every pairwise test (:func:`compare`,
:func:`paired_test`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`), with ``t``, ``q`` and
the effect size 0, and ``f = p_value = NaN`` on ANOVA's system row (0/0). **A constant shift**
gives ``t = d_z = NaN`` and the interval ``(c, c)`` in :func:`compare`, ``f = inf, p = 0`` in
:func:`anova`, ``q = inf``, ``effect_size = ±inf``, ``p = 0`` in :func:`tukey_hsd`. Columns and
the R or scipy call behind each number: ``docs/statistics.md``.
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
