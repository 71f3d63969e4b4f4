"""Statistics over per-query frames: paired comparisons with intervals, and tests for many systems.

The public names are this package's (``from evalkit.stats import compare``); its modules are
private:

- ``_abstention``: :func:`abstention`, abstention as a curve over every confidence threshold,
  with its summary (AUC, AURC, operating point) and bootstrap intervals; :func:`auc_change`,
  the AUC of a change against its baseline, queries resampled jointly.
- ``_paired``: :func:`compare`, :func:`summarize_with_ci` and their frames; ``_paired_tests``:
  the tests and intervals of one pair (:func:`paired_test`, :func:`bootstrap_ci`,
  :func:`t_interval`, :func:`adjust_pvalues`).
- ``_multi``: :func:`anova`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`,
  :func:`compact_letters`; ``_studentized``: Tukey's tail for many pairs at once.
- ``_power``: :func:`minimum_detectable_difference`.
- ``_ties``: the one rule of equality below (:func:`paired_differences`); ``_resampling``: the
  seeded resampling; ``_validation``: the checks of the arguments and frames, and their
  messages.

**Equal** means one thing everywhere (``_ties``): two numbers derived from the
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
    from evalkit.stats._abstention import (
        ABSTENTION_STATISTICS as ABSTENTION_STATISTICS,
        CURVE_COLUMNS as CURVE_COLUMNS,
        NO_NO_ANSWER as NO_NO_ANSWER,
        SUMMARY_COLUMNS_ABSTENTION as SUMMARY_COLUMNS_ABSTENTION,
        Abstention as Abstention,
        AbstentionStatistics as AbstentionStatistics,
        AucChange as AucChange,
        abstention as abstention,
        abstention_statistics as abstention_statistics,
        auc_change as auc_change,
    )
    from evalkit.stats._multi import (
        ANOVA_COLUMNS as ANOVA_COLUMNS,
        ANOVA_SOURCES as ANOVA_SOURCES,
        EFFECT_SIZE_TUKEY as EFFECT_SIZE_TUKEY,
        TUKEY_COLUMNS as TUKEY_COLUMNS,
        anova as anova,
        compact_letters as compact_letters,
        randomized_tukey_hsd as randomized_tukey_hsd,
        tukey_hsd as tukey_hsd,
    )
    from evalkit.stats._paired import (
        COMPARE_COLUMNS as COMPARE_COLUMNS,
        COMPARE_INTERVALS as COMPARE_INTERVALS,
        EFFECT_SIZE_DZ as EFFECT_SIZE_DZ,
        SUMMARY_COLUMNS as SUMMARY_COLUMNS,
        compare as compare,
        summarize_with_ci as summarize_with_ci,
    )
    from evalkit.stats._paired_tests import (
        CORRECTIONS as CORRECTIONS,
        INTERVAL_METHODS as INTERVAL_METHODS,
        P_METHODS as P_METHODS,
        TESTS as TESTS,
        adjust_pvalues as adjust_pvalues,
        bootstrap_ci as bootstrap_ci,
        paired_test as paired_test,
        t_interval as t_interval,
    )
    from evalkit.stats._power import (
        DEFAULT_POWER as DEFAULT_POWER,
        minimum_detectable_difference as minimum_detectable_difference,
    )
    from evalkit.stats._ties import (
        EQUAL_RTOL as EQUAL_RTOL,
        paired_differences as paired_differences,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
