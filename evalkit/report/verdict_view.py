"""How the report shows its verdict: a PASS/FAIL badge, coloured changes, a note on too few queries.

- :func:`verdict_badge`: an HTML badge, PASS on green or FAIL on red (no gates: grey), always
  with its words and the counts "N of M checks evaluated" (:attr:`Verdict.gates_headline`), so
  colour is never the only signal. It holds fixed words and numbers only, escaped anyway.
- :func:`style_changes`: :func:`~evalkit.report.verdict.change_matrix` with ▲ cells in green and
  ▼ cells in red; the arrow and the signed difference stay in the cell.
- :func:`detection_note`: when the queries are too few to detect any of the differences shown.
  The rule: for the primary measure, each system's per-query differences against the base give
  a minimum detectable difference (:func:`evalkit.stats.minimum_detectable_difference`:
  paired t-test, the verdict's alpha, power 0.8, from the observed spread). When every system's
  mean difference is smaller than its MDD, no difference shown could have been told from noise
  with this many queries, and the note says so with the numbers. With a large fixture and real
  differences the note does not appear.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from evalkit.report.render import styled
from evalkit.stats import DEFAULT_POWER, minimum_detectable_difference, paired_differences

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

    from evalkit.report.verdict import Verdict

__all__ = ["BETTER_COLOR", "WORSE_COLOR", "detection_note", "style_changes", "verdict_badge"]

BETTER_COLOR: Final = "#1a7f37"
"""Green of PASS and ▲ (contrast 5.1:1 on white, WCAG AA)."""
WORSE_COLOR: Final = "#cf222e"
"""Red of FAIL and ▼ (contrast 5.4:1 on white, WCAG AA)."""
_NEUTRAL: Final = "#57606a"


def verdict_badge(verdict: Verdict) -> str:
    """The HTML badge of ``verdict``'s gates (module docs)."""
    if not verdict.gated:
        word, color = "NO GATES", _NEUTRAL
    elif verdict.passed:
        word, color = "PASS", BETTER_COLOR
    else:
        word, color = "FAIL", WORSE_COLOR
    # the headline (:func:`evalkit.gates.gate_headline`) says "N of M checks evaluated"
    text = verdict.gates_headline if verdict.gated else "the fixture has no gates.yaml"
    return (
        f'<p><span style="background:{color};color:#fff;font-weight:bold;padding:0.2em 0.6em;'
        f'border-radius:0.3em">{html.escape(word)}</span> <strong>{html.escape(text)}</strong></p>'
    )


def style_changes(matrix: pd.DataFrame) -> Styler:
    """``matrix`` (:func:`~evalkit.report.verdict.change_matrix`, index reset or not) styled:
    cells starting with ▲ green, with ▼ red, text unchanged and escaped."""

    def color(cell: object) -> str:
        text = str(cell)
        if text.startswith("▲"):
            return f"color:{BETTER_COLOR};font-weight:bold"
        if text.startswith("▼"):
            return f"color:{WORSE_COLOR};font-weight:bold"
        return ""

    return styled(matrix, hide_index=True).map(color)


def detection_note(
    per_query: pd.DataFrame,
    *,
    base: str,
    systems: list[str] | tuple[str, ...],
    measure: str,
    alpha: float,
    power: float = DEFAULT_POWER,
) -> str | None:
    """The too-few-queries note (module docs) for ``measure`` of ``systems`` against ``base``
    in ``per_query`` (``system, query_id, measure, value``), or ``None`` when at least one
    difference shown is large enough to detect (or nothing is compared)."""
    values = per_query[per_query["measure"] == measure].pivot_table(
        index="query_id", columns="system", values="value", aggfunc="first"
    )
    if base not in values:
        return None
    cases: list[tuple[int, float, float]] = []  # (n, |mean difference|, MDD)
    for system in systems:
        if system == base or system not in values:
            continue
        pair = values[[system, base]].dropna()
        diffs = paired_differences(
            pair[system].to_numpy(np.float64), pair[base].to_numpy(np.float64)
        )
        if diffs.size == 0:
            continue
        cases.append(
            (
                int(diffs.size),
                abs(float(diffs.mean())),
                minimum_detectable_difference(diffs, alpha=alpha, power=power),
            )
        )
    if not cases or any(mean >= mdd for _, mean, mdd in cases):
        return None
    n = min(count for count, _, _ in cases)
    mdds = [mdd for _, _, mdd in cases]
    largest = max(mean for _, mean, _ in cases)
    detectable = (
        "nothing (fewer than 2 queries)"
        if all(np.isinf(mdds))
        else f"a mean difference of at least {min(mdds):.3f}"
    )
    return (
        f"Too few queries to detect the differences shown: with {n} queries, a paired t-test "
        f"(alpha {alpha:g}, power {power:.0%}) detects in {measure} {detectable} against "
        f"{base}, given the spread of the per-query differences; the largest difference here "
        f"is {largest:.3f}. Read these changes as inconclusive, not as no change."
    )
