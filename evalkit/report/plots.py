"""The report's figures (matplotlib), drawn from tidy frames; labels are system and measure
names only, never fixture text.

Each function returns a new ``matplotlib.figure.Figure`` that is not registered with pyplot
(so nothing is shown twice and no global state changes); Jupyter displays it as a PNG. Every
label made from a name goes through :func:`evalkit.report.render.plot_label`, so a ``$`` in a
system or measure name is drawn as written, never parsed as mathtext.

The same figures from an :class:`~evalkit.run.Evaluation`, for JupyterLab (``evalkit.plot``
is this module): :func:`intervals` (each system's mean with its bootstrap interval),
:func:`differences` (per-query differences against a base system), :func:`scatter` (two
systems' per-query values, the outlying query IDs labelled; draws into ``ax`` when given) and
:func:`latency` (latency distributions). Each draws with the report's figure function, so the
report and a notebook show one definition of each figure.

The figures are laid out by measuring their text, not by a layout engine: matplotlib's
constrained layout draws a figure once more to measure it, about half of the drawing time.
:func:`_place_axes` sets the margins and gaps in inches from the widths of the tick labels
and titles (names of any length get the room they need) and the heights of the text lines.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib import __version__ as _matplotlib_version, rcParams as _rc_params
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import LogFormatter

from evalkit.measures.names import higher_is_better
from evalkit.report.render import plot_label
from evalkit.stats import paired_differences

_HORIZONTAL_BOXES: Final[dict[str, Any]] = (
    {"orientation": "horizontal"}
    if tuple(int(part) for part in _matplotlib_version.split(".")[:2]) >= (3, 10)
    else {"vert": False}
)
"""``boxplot``'s horizontal boxes: ``orientation`` from Matplotlib 3.10, whose ``vert`` warns
of its deprecation from 3.11 (a warning that made a forked helper's figure fail where warnings
are errors)."""

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from evalkit.run import Evaluation

__all__ = [
    "LOG_SPREAD",
    "abstention",
    "abstention_figure",
    "difference_measures",
    "differences",
    "headline_figure",
    "intervals",
    "latency",
    "latency_figure",
    "paired_difference_figure",
    "scatter",
    "scatter_figure",
    "uses_log_scale",
]

LOG_SPREAD: Final = 20.0
"""Latency axes are logarithmic when the largest positive latency is this many times the
smallest one or more."""

_COLORS: Final = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3")
_WIN: Final = "#2a9d55"
_LOSS: Final = "#c44e52"
_TIE_COLOR: Final = "#9a9a9a"
_RC: Any = _rc_params  # matplotlib's settings, read by their names
_POINT: Final = 1 / 72  # inches
_EDGE: Final = 0.12  # inches of free space at the figure's edges
_MAX_WIDTH: Final = 24.0  # inches: the widest a figure grows for long names


def _title_pad() -> float:
    """Matplotlib's gap between a title and its axes (``axes.titlepad``), in inches."""
    return float(_RC["axes.titlepad"]) * _POINT


def uses_log_scale(values: npt.ArrayLike) -> bool:
    """True when the positive ``values`` span a factor of ``LOG_SPREAD`` or more."""
    array = np.asarray(values, dtype=np.float64)
    positive = array[np.isfinite(array) & (array > 0)]
    return positive.size > 0 and float(positive.max()) >= LOG_SPREAD * float(positive.min())


def latency_figure(latency: pd.DataFrame, *, systems: Sequence[str]) -> Figure:
    """Per system: a box plot and an empirical CDF of ``latency_ms``, p50 and p95 marked.

    ``latency`` has columns ``system, latency_ms`` (one row per query and repeat; NaN, not
    measured, rows are left out). The x axes are logarithmic when :func:`uses_log_scale` says
    so. A system without measured rows is drawn empty.
    """
    figure = Figure(figsize=(11, 0.6 * len(systems) + 2.6))
    box_axes, cdf_axes = figure.subplots(1, 2)
    measured = latency.dropna(subset=["latency_ms"])
    samples = [
        np.sort(measured.loc[measured["system"] == s, "latency_ms"].to_numpy(dtype=np.float64))
        for s in systems
    ]
    log_scale = uses_log_scale(np.concatenate([*samples, np.empty(0)]))
    positions = np.arange(len(systems), 0, -1)
    box_axes.boxplot(
        [s if s.size else np.array([np.nan]) for s in samples],
        positions=positions,
        orientation="horizontal",
        widths=0.6,
        showfliers=True,
        flierprops={"markersize": 3, "alpha": 0.6},
    )
    box_axes.set_yticks(positions, labels=[plot_label(s) for s in systems])
    box_axes.set_title("latency per query (box: quartiles, whiskers 1.5 IQR)")
    lines: list[Any] = []
    labels: list[str] = []
    for index, (system, values) in enumerate(zip(systems, samples, strict=True)):
        color = _COLORS[index % len(_COLORS)]
        if values.size == 0:
            continue
        fraction = np.arange(1, values.size + 1) / values.size
        lines += cdf_axes.step(values, fraction, where="post", color=color)
        labels.append(plot_label(system))
        p50, p95 = np.percentile(values, [50, 95])
        cdf_axes.plot([p50], [0.5], "o", color=color, markersize=5)
        cdf_axes.plot([p95], [0.95], "^", color=color, markersize=6)
    cdf_axes.axhline(0.5, color=_TIE_COLOR, linewidth=0.6, linestyle=":")
    cdf_axes.axhline(0.95, color=_TIE_COLOR, linewidth=0.6, linestyle=":")
    cdf_axes.set_ylim(0, 1.02)
    cdf_axes.set_ylabel("fraction of queries")
    cdf_axes.set_title("ECDF (o = p50, ^ = p95)")
    if any(s.size for s in samples):
        # Explicit labels: matplotlib would drop a label starting with "_" from an automatic legend.
        cdf_axes.legend(lines, labels, loc="lower right", fontsize="small")
    scale_note = " (log scale)" if log_scale else ""
    for axes in (box_axes, cdf_axes):
        if log_scale:
            axes.set_xscale("log")
            axes.xaxis.set_major_formatter(_PlainLogFormatter())
            axes.xaxis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False))
        axes.set_xlabel(f"latency, ms{scale_note}")
        axes.grid(True, axis="x", alpha=0.3)
    names = _text_width([plot_label(s) for s in systems], "ytick.labelsize")
    fractions = _text_width(["0.0", "1.0"], "ytick.labelsize")
    _place_axes(
        figure,
        left=names + _tick_room("y") + _EDGE,
        right=_EDGE + 0.1,  # half of the last x tick label
        bottom=_tick_room("x") + _line("xtick.labelsize") + _axis_label_room() + _EDGE,
        top=_line("axes.titlesize") + _title_pad() + _EDGE,
        wspace=_axis_label_room() + fractions + _tick_room("y") + 0.3,
    )
    return figure


class _PlainLogFormatter(LogFormatter):
    """Log-axis tick labels as plain numbers (``0.1``, ``20``, ``100000``), where matplotlib's
    default writes powers of ten in mathtext (``$10^{-1}$``); the same ticks are labelled.
    Plain labels read as milliseconds directly, and the figure needs no mathtext parser
    (about a tenth of a second to build the first time)."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:g}"


def difference_measures(measures: Sequence[str]) -> list[str]:
    """The measures the report draws per-query differences of: the nDCG and reciprocal-rank
    ones, else the first measure."""
    return [m for m in measures if m.startswith(("nDCG", "RR@"))] or list(measures[:1])


def paired_difference_figure(
    per_query: pd.DataFrame,
    *,
    base: str,
    systems: Sequence[str],
    measures: Sequence[str],
) -> Figure:
    """Per-query differences ``system - base``: one panel per (measure, other system).

    Each panel shows the sorted differences of the paired queries as bars (green: the system is
    better in the measure's direction, red: worse, grey dot: tie by the rule of
    ``evalkit.stats``), with the counts in the title. The bars are two
    filled step patches per panel (``Axes.stairs``: the positive and the negative run). Long names
    widen the figure (up to 24 inches) so that the panel titles stay apart. ``per_query`` has
    columns ``system, query_id, measure, value``.
    """
    others = [s for s in systems if s != base]
    rows, cols = max(1, len(measures)), max(1, len(others))
    figure = Figure(figsize=(min(3.2 * cols, 16), 2.6 * rows + 0.6))
    grid = figure.subplots(rows, cols, squeeze=False, sharey="row")  # always 2-D
    for row, measure in enumerate(measures):
        of_measure = per_query[per_query["measure"] == measure]
        wide = of_measure.pivot_table(
            index="query_id", columns="system", values="value", aggfunc="first"
        ).sort_index()
        sign = 1.0 if higher_is_better(str(measure)) else -1.0  # green is better
        for col, system in enumerate(others):
            axes = grid[row, col]
            first = second = np.empty(0, dtype=np.float64)
            if {system, base} <= set(wide.columns):
                paired = wide[[system, base]].dropna()  # the queries both systems have
                first = paired[system].to_numpy(dtype=np.float64)
                second = paired[base].to_numpy(dtype=np.float64)
            diffs = paired_differences(first, second)
            ordered = np.sort(diffs)[::-1]
            _difference_bars(axes, ordered, sign)
            ties = ordered == 0
            x = np.arange(ordered.size)
            axes.plot(x[ties], ordered[ties], ".", color=_TIE_COLOR, markersize=3)
            axes.axhline(0, color="black", linewidth=0.6)
            wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
            axes.set_title(
                f"{plot_label(system)} − {plot_label(base)}\n{plot_label(measure)}\n"
                f"{wins} up, {int(ties.sum())} tied, {losses} down",
                fontsize="small",
            )
            axes.set_xticks([])
            axes.set_xlim(-0.5, max(ordered.size, 1) - 0.5)
            if col == 0:
                axes.set_ylabel("difference")
            axes.set_xlabel(f"{ordered.size} queries, sorted")
    title_width = _text_width([axes.get_title() for axes in figure.axes], "small")
    title_room = 3 * _line("small") + _title_pad()
    x_label_room = _axis_label_room()
    values = _text_width(["−0.00"], "ytick.labelsize")  # the widest tick labels, at most
    left = x_label_room + values + _tick_room("y") + _EDGE
    # long system names: a wider figure (up to _MAX_WIDTH) before titles run into each other
    needed = cols * (title_width + 0.15) + left + _EDGE
    width, height = figure.get_size_inches()
    if needed > width:
        figure.set_size_inches(min(needed, _MAX_WIDTH), height)
    _place_axes(
        figure,
        left=left,
        right=_EDGE,
        bottom=x_label_room + _EDGE,
        top=title_room + _EDGE,
        wspace=_title_gap(figure, title_width, cols, left + _EDGE, minimum=0.15),
        hspace=x_label_room + title_room + 0.1,
    )
    return figure


def _difference_bars(axes: Any, ordered: npt.NDArray[np.float64], sign: float) -> None:
    """Bars of width 1 at x = 0, 1, ... for the descending ``ordered`` differences, drawn as
    two filled step patches (the positive run, the negative run) instead of one rectangle per
    query: the same picture, a fraction of the drawing time. Colours follow ``sign`` (1: a
    positive difference is better)."""
    edges = np.arange(ordered.size + 1, dtype=np.float64) - 0.5
    positive, negative = int((ordered > 0).sum()), int((ordered < 0).sum())
    start = ordered.size - negative
    for values, steps, better in (
        (ordered[:positive], edges[: positive + 1], sign > 0),
        (ordered[start:], edges[start:], sign < 0),
    ):
        if values.size:
            axes.stairs(values, steps, baseline=0.0, fill=True, color=_WIN if better else _LOSS)


def headline_figure(headline: pd.DataFrame, *, base: str, confidence: float = 0.95) -> Figure:
    """The primary measures per system with their intervals: one panel per measure, one row
    per system (first system on top), a dot at the mean and a bar over ``[ci_low, ci_high]``;
    the ``base`` system is drawn in black with a dotted line at its mean.

    ``headline`` has columns ``system, measure, mean, ci_low, ci_high`` (e.g.
    :attr:`evalkit.report.verdict.Verdict.headline`); panels and rows follow its order. Each panel's
    title says which direction is better (:func:`evalkit.measures.higher_is_better`); the x
    label states ``confidence``.
    """
    measures = list(dict.fromkeys(headline["measure"]))
    systems = list(dict.fromkeys(headline["system"]))
    columns = max(1, len(measures))
    figure = Figure(figsize=(min(3.6 * columns, 14), 0.38 * len(systems) + 1.5))
    grid = figure.subplots(1, columns, squeeze=False, sharey=True)
    positions = {s: float(len(systems) - i) for i, s in enumerate(systems)}
    for index, measure in enumerate(measures):
        axes = grid[0, index]
        rows = headline[headline["measure"] == measure]
        for row in rows.itertuples(index=False):
            system = str(row.system)
            y = positions[system]
            color = "black" if system == base else _COLORS[systems.index(system) % len(_COLORS)]
            mean, low, high = float(row.mean), float(row.ci_low), float(row.ci_high)
            axes.plot([low, high], [y, y], color=color, linewidth=2.2, alpha=0.75)
            axes.plot([mean], [y], "o", color=color, markersize=6)
            if system == base:
                axes.axvline(mean, color="black", linewidth=0.7, linestyle=":")
        better = "higher" if higher_is_better(str(measure)) else "lower"
        axes.set_title(f"{plot_label(measure)}\n({better} is better)", fontsize="small")
        axes.grid(True, axis="x", alpha=0.3)
        axes.set_xlabel(f"mean, {confidence * 100:g}% interval")
    names = [plot_label(f"{s} (base)" if s == base else s) for s in systems]
    grid[0, 0].set_yticks(list(positions.values()), labels=names)
    grid[0, 0].set_ylim(0.4, len(systems) + 0.6)
    left = _text_width(names, "ytick.labelsize") + _tick_room("y") + _EDGE
    right = _EDGE + 0.15  # half of the last x tick label
    title_width = _text_width([axes.get_title() for axes in grid[0]], "small")
    _place_axes(
        figure,
        left=left,
        right=right,
        bottom=_tick_room("x") + _line("xtick.labelsize") + _axis_label_room() + _EDGE,
        top=2 * _line("small") + _title_pad() + _EDGE,
        wspace=_title_gap(figure, title_width, columns, left + right, minimum=0.2),
    )
    return figure


def scatter_figure(
    per_query: pd.DataFrame,
    *,
    x: str,
    y: str,
    measure: str,
    label: int = 5,
    ax: Axes | None = None,
) -> Figure:
    """Per query, system ``y``'s value of ``measure`` against system ``x``'s: one dot per query
    both have a value for, the diagonal ``y = x`` dotted; green above it where ``y`` is better
    in the measure's direction, red where worse, grey on it (a tie by the rule of
    ``evalkit.stats``). The ``label`` queries farthest from the diagonal are labelled with
    their query IDs (ties broken by query ID; queries at the same point share one label).
    ``per_query`` has columns ``system, query_id, measure, value``. Draws into ``ax`` when
    given (and returns its figure), else into a new figure.
    """
    figure: Figure
    if ax is None:
        figure = Figure(figsize=(4.8, 4.6))
        axes: Any = figure.subplots()
    else:
        axes = ax
        figure = ax.get_figure()  # type: ignore[assignment]
    of_measure = per_query[per_query["measure"] == measure]
    wide = of_measure.pivot_table(
        index="query_id", columns="system", values="value", aggfunc="first"
    ).sort_index()
    paired = wide[[x, y]].dropna() if {x, y} <= set(wide.columns) else pd.DataFrame(columns=[x, y])
    first = paired[x].to_numpy(dtype=np.float64)
    second = paired[y].to_numpy(dtype=np.float64)
    diffs = paired_differences(second, first) * (1.0 if higher_is_better(measure) else -1.0)
    for mask, color in ((diffs > 0, _WIN), (diffs < 0, _LOSS), (diffs == 0, _TIE_COLOR)):
        axes.plot(first[mask], second[mask], "o", color=color, markersize=4, alpha=0.7)
    low = float(min(first.min(initial=0.0), second.min(initial=0.0)))
    high = float(max(first.max(initial=1.0), second.max(initial=1.0)))
    pad = 0.04 * (high - low or 1.0)
    axes.plot([low - pad, high + pad], [low - pad, high + pad], ":", color="black", linewidth=0.8)
    axes.set_xlim(low - pad, high + pad)
    axes.set_ylim(low - pad, high + pad)
    distance = np.abs(second - first)
    ids = [str(q) for q in paired.index]
    order = sorted(range(len(ids)), key=lambda i: (-distance[i], ids[i]))
    at_point: dict[tuple[float, float], list[str]] = {}  # one label per point: IDs joined
    for i in [i for i in order if distance[i] > 0][: max(label, 0)]:
        at_point.setdefault((float(first[i]), float(second[i])), []).append(ids[i])
    span = high - low + 2 * pad
    placed: list[tuple[float, float]] = []  # labels kept apart: a line's height, top down
    for (px, py), labelled in sorted(at_point.items(), key=lambda item: -item[0][1]):
        text_y = py - 0.035 * span
        while any(
            abs(px - x0) < 0.3 * span and abs(text_y - y0) < 0.04 * span for x0, y0 in placed
        ):
            text_y -= 0.04 * span
        placed.append((px, text_y))
        axes.annotate(
            plot_label(", ".join(labelled)),
            (px, py),
            xytext=(px + 0.015 * span, text_y),
            fontsize="x-small",
            arrowprops={"arrowstyle": "-", "color": _TIE_COLOR, "linewidth": 0.5}
            if abs(text_y - py) > 0.05 * span
            else None,
        )
    wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
    axes.set_xlabel(f"{plot_label(x)}")
    axes.set_ylabel(f"{plot_label(y)}")
    axes.set_title(
        f"{plot_label(measure)} per query\n{plot_label(y)} better on {wins}, worse on {losses} "
        f"of {len(ids)}",
        fontsize="small",
    )
    axes.grid(True, alpha=0.3)
    if ax is None:
        _place_axes(
            figure,
            left=_axis_label_room()
            + _text_width(["0.00"], "ytick.labelsize")
            + _tick_room("y")
            + _EDGE,
            right=_EDGE + 0.15,
            bottom=_tick_room("x") + _line("xtick.labelsize") + _axis_label_room() + _EDGE,
            top=2 * _line("small") + _title_pad() + _EDGE,
        )
    return figure


# --- the same figures from an Evaluation (evalkit.plot) ----------------------------------


def _primary(evaluation: Evaluation) -> str:
    """The evaluation's first nDCG measure, else its first measure (the report's PRIMARY)."""
    return next((m for m in evaluation.measures if m.startswith("nDCG")), evaluation.measures[0])


def intervals(
    evaluation: Evaluation,
    *,
    measures: Sequence[str] | None = None,
    base: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Figure:
    """Each system's mean of ``measures`` (default: the primary measure, the first nDCG) with
    its percentile bootstrap interval (:func:`evalkit.stats.summarize_with_ci`, seeded), drawn
    by :func:`headline_figure`; ``base`` (default: the first system) in black."""
    from evalkit.stats import summarize_with_ci

    chosen = list(measures) if measures is not None else [_primary(evaluation)]
    rows = evaluation.per_query[evaluation.per_query["measure"].isin(chosen)].dropna(
        subset=["value"]
    )
    summary = summarize_with_ci(
        rows, confidence=confidence, n_resamples=n_resamples, seed=seed
    ).set_index(["system", "measure"])
    order = [(s, m) for m in chosen for s in evaluation.systems if (s, m) in summary.index]
    headline = summary.loc[order].reset_index()
    return headline_figure(headline, base=base or evaluation.systems[0], confidence=confidence)


def differences(
    evaluation: Evaluation,
    *,
    base: str | None = None,
    measures: Sequence[str] | None = None,
) -> Figure:
    """Per-query differences ``system - base`` of every other system (``base``: the first
    system when None; ``measures``: :func:`difference_measures`), drawn by
    :func:`paired_difference_figure`."""
    return paired_difference_figure(
        evaluation.per_query,
        base=base or evaluation.systems[0],
        systems=list(evaluation.systems),
        measures=list(measures) if measures else difference_measures(evaluation.measures),
    )


def scatter(
    evaluation: Evaluation,
    x: str,
    y: str,
    *,
    measure: str | None = None,
    label: int = 5,
    ax: Axes | None = None,
) -> Figure:
    """System ``y``'s per-query values against system ``x``'s on ``measure`` (default: the
    primary measure), the ``label`` most different query IDs labelled
    (:func:`scatter_figure`)."""
    return scatter_figure(
        evaluation.per_query, x=x, y=y, measure=measure or _primary(evaluation), label=label, ax=ax
    )


def latency(evaluation: Evaluation) -> Figure:
    """Each system's latency distribution (box plot and ECDF, :func:`latency_figure`)."""
    return latency_figure(evaluation.latency, systems=list(evaluation.systems))


def abstention_figure(
    curve: pd.DataFrame, summary: pd.DataFrame, queries: pd.DataFrame, *, systems: Sequence[str]
) -> Figure:
    """Abstention of each system (the frames of :func:`evalkit.stats.abstention`, overall rows).

    Left: ``NoResult`` against ``NoAnswerFP`` over every threshold, one step line per system,
    its operating point marked with a dot. Right: each system's confidences of answerable
    and no-answer queries side by side (box plots; queries without a result left out), so a
    reader sees whether a threshold can separate them; each title says where the system's
    confidences came from (``queries``' ``source``: declared by the system, or its top
    scores). Names only, never text."""
    height = 1.2 + 0.8 * max(len(systems), 4)
    figure = Figure(figsize=(11.0, height))
    grid = figure.add_gridspec(max(len(systems), 1), 2, width_ratios=[1.0, 1.0])
    left = figure.add_subplot(grid[:, 0])
    overall = curve[curve["language"] == "all"]
    points = summary[summary["language"] == "all"].set_index(["system", "statistic"])["value"]
    for index, system in enumerate(systems):
        color = _COLORS[index % len(_COLORS)]
        rows = overall[overall["system"] == system]
        left.step(
            rows["NoAnswerFP"],
            rows["NoResult"],
            where="post",
            color=color,
            label=plot_label(system),
        )
        if (system, "op_no_result") in points.index:
            left.plot(
                points[(system, "op_no_answer_fp")],
                points[(system, "op_no_result")],
                "o",
                color=color,
            )
    left.set_xlabel("NoAnswerFP (no-answer queries answered)")
    left.set_ylabel("NoResult (answerable queries left empty)")
    left.set_xlim(-0.02, 1.02)
    left.set_ylim(-0.02, 1.02)
    left.set_title("Every threshold; dots: operating points")
    left.legend(fontsize="small", loc="upper right")
    shown = queries[np.isfinite(queries["confidence"])]
    for index, system in enumerate(systems):
        axes = figure.add_subplot(grid[index, 1])
        mine = shown[shown["system"] == system]
        data = [
            mine.loc[mine["answerable"] == answerable, "confidence"].to_numpy()
            for answerable in (True, False)
        ]
        boxes = axes.boxplot(data, patch_artist=True, widths=0.6, **_HORIZONTAL_BOXES)
        for patch, color in zip(
            boxes["boxes"], (_COLORS[index % len(_COLORS)], _TIE_COLOR), strict=True
        ):
            patch.set_facecolor(color)
        axes.set_yticks([1, 2], ["answerable", "no-answer"], fontsize="small")
        axes.invert_yaxis()
        sources = queries.loc[queries["system"] == system, "source"]
        source = str(sources.iloc[0]) if "source" in queries and len(sources) else "top score"
        axes.set_title(f"{plot_label(system)} ({source})", fontsize="small", loc="left")
        axes.tick_params(axis="x", labelsize="small")
    figure.text(
        0.75, 0.01, "confidence (declared, or top score), each system on its own scale", ha="center"
    )
    figure.subplots_adjust(
        left=0.07, right=0.98, bottom=0.7 / height, top=1 - 0.4 / height, wspace=0.3, hspace=0.9
    )
    return figure


def abstention(evaluation: Evaluation, *, n_resamples: int = 2000, seed: int = 0) -> Figure:
    """:func:`abstention_figure` of :func:`evalkit.stats.abstention` of ``evaluation``."""
    from evalkit.stats import abstention as abstention_of

    result = abstention_of(evaluation, n_resamples=n_resamples, seed=seed)
    return abstention_figure(
        result.curve, result.summary, result.queries, systems=list(evaluation.systems)
    )


def warm_up() -> None:
    """Draw a small figure to a PNG and throw it away: matplotlib's fonts, text layout and PNG
    writer are then loaded (about a tenth of a second the first time), e.g. in the report's
    kernel while it waits for the evaluation. Never raises."""
    from evalkit.report.handover import figure_png

    headline = pd.DataFrame(
        {"system": ["a", "b"], "measure": "RR@10", "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    )
    try:
        figure_png(headline_figure(headline, base="a"))
    except Exception:  # a warm-up only: the real figure reports any problem
        return


# --- layout -------------------------------------------------------------------------------


@functools.cache
def _measuring_renderer() -> Any:
    """An Agg renderer at the figures' resolution (text is hinted, so its width in inches
    depends on the dpi)."""
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(1, 1, _RC["figure.dpi"])  # type: ignore[no-untyped-call]


def _font_points(size: str) -> float:
    """A font size in points: an ``rcParams`` key (``"ytick.labelsize"``) or a size name."""
    value = _RC.get(size, size)
    return float(FontProperties(size=value).get_size_in_points())


def _line(size: str) -> float:
    """The height of one text line at ``size`` (:func:`_font_points`), inches."""
    return 1.25 * _font_points(size) * _POINT


def _text_width(texts: Iterable[str], size: str) -> float:
    """The widest line of ``texts`` at ``size`` (:func:`_font_points`), inches."""
    renderer = _measuring_renderer()
    font = FontProperties(size=_font_points(size))
    widths = [
        renderer.get_text_width_height_descent(line, font, ismath=False)[0]
        for text in texts
        for line in text.split("\n")
    ]
    return max(widths, default=0.0) / float(renderer.dpi)


def _tick_room(axis: str) -> float:
    """Tick length and label padding of the ``"x"`` or ``"y"`` axis, inches."""
    return float(_RC[f"{axis}tick.major.size"] + _RC[f"{axis}tick.major.pad"]) * _POINT


def _axis_label_room() -> float:
    """One axis label and its padding, inches."""
    return _line("axes.labelsize") + float(_RC["axes.labelpad"]) * _POINT


def _title_gap(
    figure: Figure, title_width: float, columns: int, margins: float, *, minimum: float
) -> float:
    """The gap between columns of panels (inches) that keeps the widest title (``title_width``
    inches) clear of its neighbours': at least ``minimum``; ``margins`` are the left and right
    margins."""
    if columns < 2:
        return minimum
    available = float(figure.get_size_inches()[0]) - margins
    needed = columns * title_width - available
    return max(minimum, min(needed, 0.5 * available / (columns - 1)))


def _place_axes(
    figure: Figure,
    *,
    left: float,
    right: float,
    bottom: float,
    top: float,
    wspace: float = 0.0,
    hspace: float = 0.0,
) -> None:
    """Place ``figure``'s grid of panels with these margins and gaps (inches); a margin is
    held to at most 45% of the figure, so every panel keeps room."""
    width, height = (float(v) for v in figure.get_size_inches())
    spec: Any = figure.axes[0].get_subplotspec()
    rows, columns = spec.get_gridspec().get_geometry()
    left, right = min(left, 0.45 * width), min(right, 0.45 * width)
    bottom, top = min(bottom, 0.45 * height), min(top, 0.45 * height)
    panel_width = max((width - left - right - (columns - 1) * wspace) / columns, 0.1)
    panel_height = max((height - bottom - top - (rows - 1) * hspace) / rows, 0.1)
    figure.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=wspace / panel_width,
        hspace=hspace / panel_height,
    )
