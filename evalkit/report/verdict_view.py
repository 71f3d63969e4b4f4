"""How the report shows its verdict: a PASS/FAIL badge, coloured changes, a note on too few queries.

- :func:`verdict_badge`: an HTML badge, PASS on green or FAIL on red (no gates: grey), always
  with its words and the counts "N of M checks evaluated" (:attr:`Verdict.gates_headline`), so
  colour is never the only signal. It holds fixed words and numbers only, escaped anyway.
- :func:`first_screen`: the report's first screen from the one gate verdict
  (:func:`evalkit.gates.gate_verdict`): the PASS/FAIL/ERROR badge with "N of M checks
  evaluated"; what changed against the baseline with direction and significance (and, for
  each system an abstention gate names, its abstention AUC before and after with the paired
  interval); where (the
  languages that moved differently from the whole, the worst queries by ID); latency before
  and after. Without a baseline it says that the report compares systems with a base system
  within one run, not a change. Blocks carry ``data-evalkit`` (``verdict``, ``change``,
  ``where``, ``latency``) so a browser test finds them.
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
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from evalkit.report.render import styled
from evalkit.stats import DEFAULT_POWER, minimum_detectable_difference, paired_differences

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

    from evalkit.gates import Change, GateVerdict
    from evalkit.report.verdict import Verdict

__all__ = [
    "BETTER_COLOR",
    "WORSE_COLOR",
    "detection_note",
    "first_screen",
    "style_changes",
    "verdict_badge",
]

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


_BADGE: Final = (
    '<span style="background:{color};color:#fff;font-weight:bold;padding:0.2em 0.6em;'
    'border-radius:0.3em">{word}</span>'
)
_CELL: Final = 'style="padding:0.15em 0.6em;text-align:{align};border-bottom:1px solid #d0d7de"'
_SHOWN_ROWS: Final = 6


def _table(columns: list[str], rows: list[list[str]], data: str) -> str:
    """A small HTML table (every cell already escaped) marked ``data-evalkit=data``."""
    head = "".join(f"<th {_CELL.format(align='left')}>{c}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td {_CELL.format(align='left' if i < 2 else 'right')}>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return (
        f'<table data-evalkit="{data}" style="border-collapse:collapse;font-size:0.9em;'
        f'margin:0.3em 0"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _direction(direction: str, diff: float, low: float, high: float) -> str:
    color = {"better": BETTER_COLOR, "worse": WORSE_COLOR}.get(direction, _NEUTRAL)
    mark = {"better": "▲ better", "worse": "▼ worse"}.get(direction, "– unchanged")
    return (
        f'<span style="color:{color};font-weight:bold">{mark}</span> '
        f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]"
    )


def _records(frame: pd.DataFrame) -> list[Any]:
    """The rows of ``frame`` as named tuples (typed loosely: cells are numbers or text)."""
    return list(frame.itertuples(index=False))


def _change_block(verdict: GateVerdict, change: Change) -> str:
    rows = verdict.shown_changes(_SHOWN_ROWS)
    more = len(change.significant()) - _SHOWN_ROWS
    table = _table(
        [
            "system",
            "measure",
            "baseline",
            "this run",
            "change [95% interval]",
            f"p ({html.escape(change.settings.correction)})",
            "queries worse / better / unchanged",
        ],
        [
            [
                html.escape(str(r.system)),
                f"<code>{html.escape(str(r.measure))}</code>",
                f"{r.before:.3f}",
                f"{r.after:.3f}",
                _direction(str(r.direction), float(r.diff), float(r.ci_low), float(r.ci_high)),
                "-" if pd.isna(r.p_adjusted) else f"{float(r.p_adjusted):.4f}",
                f"{int(r.worse)} / {int(r.better)} / {int(r.unchanged)}",
            ]
            for r in _records(rows.head(_SHOWN_ROWS))
        ],
        "change",
    )
    note = (
        f"<p>{more} more changed measures: section 8, “Baseline and gates”.</p>" if more > 0 else ""
    )
    return table + note


def _where_block(verdict: GateVerdict, change: Change) -> str:
    parts = []
    for r in verdict.shown_changes(3).itertuples(index=False):
        system, measure = str(r.system), str(r.measure)
        languages: list[Any] = [  # only a language that moved differently from the whole
            m for m in change.by_language(system, measure).itertuples(index=False) if m.differs
        ]
        if not languages and r.direction == "unchanged":
            continue  # nothing moved: no line to read
        where = "; ".join(
            f"{'<strong>' if m.differs else ''}{html.escape(str(m.language))} "
            f"{m.before:.3f} → {m.after:.3f} ({html.escape(str(m.direction))} {m.diff:+.3f}, "
            f"{int(m.worse)} worse, {int(m.better)} better)"
            f"{' moved differently from the whole</strong>' if m.differs else ''}"
            for m in languages
        )
        worst = change.worst(system, measure)
        text = f"{html.escape(system)}, <code>{html.escape(measure)}</code>: "
        text += f"by language {where}" if where else "every language moved alike"
        if worst and r.direction != "better":
            text += f"; worst queries {html.escape(', '.join(worst))}"
        parts.append(f"<li>{text}</li>")
    if not parts:
        return ""
    return f'<ul data-evalkit="where" style="margin:0.2em 0">{"".join(parts)}</ul>'


def _latency_cell(count: Any, median: Any, p95: Any) -> str:
    if median is None or pd.isna(median):
        return "-"
    return f"{int(count)} · {float(median):.2f} · {float(p95):.2f}"


def _latency_block(change: Change) -> str:
    rows = [
        [
            html.escape(str(r.system)),
            _latency_cell(r.count_before, r.median_ms_before, r.p95_ms_before),
            _latency_cell(r.count_after, r.median_ms_after, r.p95_ms_after),
            html.escape(str(r.note) or "-"),
        ]
        for r in change.latency.head(5).itertuples(index=False)
    ]
    return _table(["system", "baseline n · median · p95 (ms)", "this run", "note"], rows, "latency")


def first_screen(verdict: GateVerdict, *, base: str) -> str:
    """The report's first screen (module docs) as one HTML block; every name escaped."""
    from evalkit.gates import change_sentence

    word, color = {
        "PASS": ("PASS", BETTER_COLOR),
        "FAIL": ("FAIL", WORSE_COLOR),
        "ERROR": ("ERROR", "#9a6700"),
    }.get(verdict.outcome, ("NO GATES", _NEUTRAL))
    head = verdict.headline.split(": ", 1)[-1] if verdict.outcome in ("PASS", "FAIL") else ""
    sources = []
    if verdict.baseline_path:
        sources.append(f"baseline {verdict.baseline_path}")
    if verdict.gates_source:
        sources.append(f"gates {verdict.gates_source}")
    badge = _BADGE.format(color=color, word=word)
    lines = [
        f'<div data-evalkit="verdict"><p style="margin:0.2em 0">{badge} '
        f"<strong>{html.escape(head)}</strong> "
        f'<span style="color:{_NEUTRAL}">{html.escape(" · ".join(sources))}</span></p>'
    ]
    change = verdict.change
    if verdict.outcome == "ERROR":
        lines.append(
            "<p>The baseline was not compared: "
            + html.escape("; ".join(verdict.stale))
            + "</p></div>"
        )
        return "".join(lines)
    if change is None:
        lines.append(
            "<p>No baseline: this report compares systems with a base system within one run "
            f"(<strong>ablation against {html.escape(base)}</strong>); it is not a change "
            "against main. Give <code>--baseline PATH</code> to see what changed.</p></div>"
        )
        return "".join(lines)
    for system in change.compared:
        lines.append(
            f'<p style="margin:0.2em 0">{html.escape(change_sentence(change, system))}</p>'
        )
    lines += [
        f'<p style="margin:0.2em 0">{html.escape(line)}</p>' for line in verdict.abstention_lines()
    ]
    failed = verdict.failed_text()
    if failed:
        lines.append(f'<p style="margin:0.2em 0">{html.escape(failed[0].upper() + failed[1:])}</p>')
    others = change.systems[change.systems["status"] != "compared"]
    if len(others):
        listed = ", ".join(
            f"{html.escape(str(s))} ({html.escape(str(t))})"
            for s, t in zip(others["system"], others["status"], strict=True)
        )
        lines.append(f"<p>Not compared: {listed}.</p>")
    lines.append(
        f'<p style="color:{_NEUTRAL};margin:0.2em 0">{html.escape(change.settings.statement())}; '
        "diff = this run − baseline, per query over the queries both have.</p></div>"
    )
    lines.append(_change_block(verdict, change))
    lines.append(_where_block(verdict, change))
    lines.append(_latency_block(change))
    return "".join(lines)


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
