"""The tables of the report notebook, built from an evaluation's tidy frames (IDs only).

Every function returns a new frame (inputs are never modified) with the columns named in its
docstring, whatever the input size. Text of the fixture appears only where a function is called
with ``redact=False``; otherwise a chunk or query is shown as its ID and :func:`text_hash`.

Conventions:

- "Best" follows the measure's direction (:func:`evalkit.measures.higher_is_better`): highest
  mean, lowest for ``NoAnswerFP``. Only a *strictly* best system is marked: when two or more
  systems tie for the best mean (equal within 1e-12), or a group has one system, none is (a
  column where every system sits at the worst value has no winner to show).
- Systems keep the order given in ``systems``; measures the order given in ``measures``.
- A measure that does not apply (NaN for every query: the span measures on a fixture without
  spans, :func:`evalkit.run.evaluate`) keeps its row or column, shown as ``n/a`` (``NA_TEXT``),
  and is never best.
- Confidence intervals and p-values come from :mod:`evalkit.stats` with an explicit ``seed``.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.measures import higher_is_better
from evalkit.report.render import html_text, styled
from evalkit.safety.canonical import HASH_HEX_DIGITS, text_hash
from evalkit.stats import COMPARE_COLUMNS, EFFECT_SIZE_DZ, summarize_with_ci

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

    from evalkit.fixtures import Fixture

__all__ = [
    "ABLATION_COLUMNS",
    "ABSTENTION_TABLE_COLUMNS",
    "ALL_PAIRS_METHODS",
    "COMPARISON_COLUMNS",
    "COMPARISON_VIEW_COLUMNS",
    "ENVIRONMENT_PACKAGES",
    "HASH_HEX_DIGITS",
    "NA_TEXT",
    "PROBE_COLUMNS",
    "RANKING_GRID_DEPTH",
    "ablation_legend",
    "ablation_table",
    "abstention_table",
    "all_pairs_table",
    "chunk_table",
    "comparison_legend",
    "comparison_view",
    "display_text",
    "environment_versions",
    "failure_counts",
    "failures_by_kind",
    "header_table",
    "interval_text",
    "judgment_table",
    "ordered_comparisons",
    "paired_comparisons",
    "probe_legend",
    "probe_table",
    "query_measures",
    "ranking_grid",
    "style_ablation",
    "text_hash",
    "worst_queries",
]

NA_TEXT = "n/a"
"""How a table shows a measure that does not apply (a NaN value or mean)."""
NO_RESULTS = "no results (abstained)"
"""The drill-down's cell for a system that returned nothing for a query."""
ABLATION_COLUMNS = ("system", "measure", "n", "mean", "ci_low", "ci_high", "best")
COMPARISON_COLUMNS = COMPARE_COLUMNS  # the paired-comparison table shows every column
ENVIRONMENT_PACKAGES = (
    "evalkit",
    "numpy",
    "pandas",
    "scipy",
    "matplotlib",
    "papermill",
    "nbconvert",
    "ipykernel",
)
_TIE = 1e-12
_BEST_STYLE = "font-weight: bold; background-color: #dff3e4"
# Column dtypes of the tables (the empty tables included); an unlisted column is text.
_ABLATION_DTYPES = {
    "n": "int64",
    "mean": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "best": "bool",
}
_COMPARISON_DTYPES = {
    **dict.fromkeys(COMPARISON_COLUMNS, "float64"),
    **dict.fromkeys(("system", "base", "measure", "ci_method", "effect_size_kind"), "str"),
    **dict.fromkeys(("test", "p_method", "family"), "str"),
    **dict.fromkeys(("n", "df", "wins", "ties", "losses", "family_size"), "int64"),
    "significant": "bool",
}
_WORST_DTYPES = {"failing_systems": "int64", "mean_value": "float64"}


def environment_versions() -> pd.DataFrame:
    """Columns ``component, version``: Python, the platform and ``ENVIRONMENT_PACKAGES``."""
    rows = [("python", platform.python_version()), ("platform", platform.machine() or "?")]
    for name in ENVIRONMENT_PACKAGES:
        try:
            rows.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    return pd.DataFrame(rows, columns=["component", "version"])


def header_table(report: Mapping[str, Any], fixture: Fixture) -> pd.DataFrame:
    """Columns ``field, value`` (both text): fixture ID and version, sizes, settings, systems,
    the report's hashes and the determinism verdict. IDs, counts and hashes only."""
    answerable = sum(1 for q in fixture.queries if q.answerable)
    per_language = ", ".join(
        f"{language}: {len(queries)}" for language, queries in fixture.queries_by_language.items()
    )
    settings = report["settings"]
    determinism = report["determinism"]
    rows = [
        ("fixture", f"{report['fixture']['id']} {report['fixture']['version']}"),
        ("documents / chunks", f"{len(fixture.documents)} / {len(fixture.chunks)}"),
        (
            "queries",
            f"{len(fixture.queries)} ({answerable} answerable, "
            f"{len(fixture.queries) - answerable} no-answer; {per_language})",
        ),
        ("systems", ", ".join(report["systems"])),
        ("k / repeats", f"{settings['k']} / {settings['repeats']}"),
        ("measures", ", ".join(settings["measures"])),
        ("corpusHash", str(report["corpusHash"])),
        ("evaluationDefinitionHash", str(report["evaluationDefinitionHash"])),
        ("providerDefinitionsHash", str(report["providerDefinitionsHash"])),
        ("determinism", f"{determinism['verdict']} ({determinism['repeats']} repeats)"),
    ]
    return pd.DataFrame(rows, columns=["field", "value"])


def ablation_table(
    per_query: pd.DataFrame,
    *,
    systems: Sequence[str],
    measures: Sequence[str],
    by: Sequence[str] = (),
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean of every measure per system (and per ``by`` group) with a bootstrap interval.

    Columns ``*by, system, measure, n, mean, ci_low, ci_high, best``: one row per (group,
    system, measure) present in ``per_query``, groups sorted, then systems and measures in the
    given order. ``best`` marks the strictly best system of each (group, measure), if any (module
    docs). Intervals are
    percentile bootstrap intervals of the mean (:func:`evalkit.stats.summarize_with_ci`).
    A (group, system, measure) whose every value is NaN (not applicable) has ``n`` 0, NaN
    ``mean, ci_low, ci_high`` and ``best`` False.
    """
    keys = [*by, "system", "measure"]
    selected = per_query[
        per_query["system"].isin(list(systems)) & per_query["measure"].isin(list(measures))
    ]
    columns = [*by, *ABLATION_COLUMNS]
    if selected.empty:
        return _empty(columns, _ABLATION_DTYPES)
    applicable = selected[selected["value"].notna()]
    table = summarize_with_ci(
        applicable, by=keys, confidence=confidence, n_resamples=n_resamples, seed=seed
    )
    not_applicable = selected[keys].drop_duplicates().merge(table[keys], how="left", indicator=True)
    not_applicable = not_applicable[not_applicable["_merge"] == "left_only"].drop(columns="_merge")
    if len(not_applicable):  # n/a: every value NaN
        table = pd.concat(
            [table, not_applicable.assign(n=0, mean=np.nan, ci_low=np.nan, ci_high=np.nan)],
            ignore_index=True,
        ).astype({"n": "int64"})
    table = _in_order(table, systems=systems, measures=measures, first=list(by))
    group = [*by, "measure"]
    best = np.zeros(len(table), dtype=bool)
    for _, rows in table.groupby(group, sort=False):
        measure = str(rows["measure"].iloc[0])
        if rows["mean"].isna().any():
            continue  # a system without a value: no best to show
        target = rows["mean"].max() if higher_is_better(measure) else rows["mean"].min()
        at_best = np.isclose(rows["mean"], target, rtol=0, atol=_TIE)
        if len(rows) > 1 and at_best.sum() == 1:
            best[rows.index.to_numpy()] = at_best
    table["best"] = best
    return table[columns]


def _in_order(
    frame: pd.DataFrame, *, systems: Sequence[str], measures: Sequence[str], first: list[str]
) -> pd.DataFrame:
    system_rank = {s: i for i, s in enumerate(systems)}
    measure_rank = {m: i for i, m in enumerate(measures)}
    keyed = frame.assign(
        _system=frame["system"].map(system_rank), _measure=frame["measure"].map(measure_rank)
    )
    order = [*first, "_system", "_measure"]
    return (
        keyed.sort_values(order, kind="stable")
        .drop(columns=["_system", "_measure"])
        .reset_index(drop=True)
    )


def style_ablation(table: pd.DataFrame, *, digits: int = 2, caption: str = "") -> Styler:
    """A styled wide view of :func:`ablation_table`: rows ``(*by, system)``, one column per
    measure, cells ``mean [ci_low, ci_high]`` on one line (:func:`interval_text`, ``digits``
    decimals; ``n/a`` where ``n`` is 0), best cells bold on a green background. Labels
    and the caption are HTML-escaped (:func:`evalkit.report.render.styled`)."""
    index = [c for c in table.columns if c not in ABLATION_COLUMNS] + ["system"]
    measures = list(dict.fromkeys(table["measure"]))
    cells = table.assign(
        cell=[
            interval_text(m, lo, hi, digits=digits) if n else NA_TEXT
            for n, m, lo, hi in zip(
                table["n"], table["mean"], table["ci_low"], table["ci_high"], strict=True
            )
        ]
    )
    text = cells.pivot(index=index, columns="measure", values="cell")
    best = cells.pivot(index=index, columns="measure", values="best")
    order = cells[index].drop_duplicates()
    row_index = pd.MultiIndex.from_frame(order) if len(index) > 1 else pd.Index(order[index[0]])
    text = text.reindex(index=row_index, columns=measures).fillna("–")
    best = best.reindex(index=row_index, columns=measures).fillna(False).astype(bool)
    css = pd.DataFrame(
        np.where(best.to_numpy(), _BEST_STYLE, ""), index=text.index, columns=text.columns
    )
    styler = styled(text).apply(lambda _: css, axis=None)
    styler.set_table_styles(
        [{"selector": "td", "props": [("white-space", "nowrap")]}], overwrite=False
    )
    styler.set_uuid("ablation-" + re.sub(r"[^A-Za-z0-9_-]", "_", "-".join(index)))
    if caption:
        styler.set_caption(html_text(caption))
    return styler


def interval_text(
    value: float, low: float, high: float, *, digits: int = 3, infinite: bool = False
) -> str:
    """``"0.810 [0.740, 0.870]"``: a value and its interval on one line (the spaces are
    no-break spaces, so a narrow column does not wrap it); ``"–"`` for a missing value and
    ``"0.810 [–]"`` for a missing interval. With ``infinite``, ``inf`` is a value to show (a
    threshold that answers nothing), not a missing one."""
    if not _shown(value, infinite):
        return "–"
    if not (_shown(low, infinite) and _shown(high, infinite)):
        return f"{_number(value, digits)}\u00a0[–]"
    return f"{_number(value, digits)}\u00a0[{_number(low, digits)},\u00a0{_number(high, digits)}]"


def _shown(x: float, infinite: bool) -> bool:
    """Whether ``x`` is a number to print: finite, or ``+inf`` when ``infinite``."""
    return bool(np.isfinite(x)) or (infinite and x == np.inf)


def _number(x: float, digits: int) -> str:
    """``x`` at ``digits`` decimals; ``inf`` as ``inf``."""
    return "inf" if x == np.inf else f"{x:.{digits}f}"


ABSTENTION_TABLE_COLUMNS = (
    "system",
    "source",
    "AUC",
    "AURC",
    "threshold",
    "NoResult",
    "NoAnswerFP",
    "coverage",
    "note",
)
_ABSTENTION_STATISTICS = {
    "AUC": "auc",
    "AURC": "aurc",
    "threshold": "op_threshold",
    "NoResult": "op_no_result",
    "NoAnswerFP": "op_no_answer_fp",
    "coverage": "op_coverage",
}


def abstention_table(
    summary: pd.DataFrame, *, systems: Sequence[str], digits: int = 3
) -> pd.DataFrame:
    """One row per system (in ``systems`` order) of an :func:`evalkit.stats.abstention`
    summary over all languages; columns :data:`ABSTENTION_TABLE_COLUMNS`, all text: the
    confidence's ``source``, each statistic as ``value [low, high]`` (:func:`interval_text`;
    the operating point's ``threshold`` keeps ``inf``, "answer nothing") and the distinct
    ``note`` texts of the system's rows."""
    overall = summary[summary["language"] == "all"]
    rows = []
    for system in systems:
        mine = overall[overall["system"] == system].set_index("statistic")
        if mine.empty:
            continue
        numbers = mine[["value", "ci_low", "ci_high"]].astype("float64")
        row = {"system": system, "source": str(mine["source"].iloc[0])}
        for column, statistic in _ABSTENTION_STATISTICS.items():
            value, low, high = (float(x) for x in numbers.loc[statistic].to_numpy())
            row[column] = interval_text(
                value, low, high, digits=digits, infinite=column == "threshold"
            )
        notes = [note for note in dict.fromkeys(mine["note"].astype(str)) if note]
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(ABSTENTION_TABLE_COLUMNS))


def ablation_legend(*, n_resamples: int, seed: int, confidence: float = 0.95) -> str:
    """The sentence under an ablation table (plain text): what a cell holds, how the interval
    was computed (method, level, resample count, seed) and what the highlight means."""
    return (
        f"Cells: mean over the queries [{confidence:.0%} interval]. Interval: percentile "
        f"bootstrap of the mean (queries resampled with replacement, {n_resamples:,} "
        f"resamples, seed {seed}). Highlighted: the best system per measure in the measure's "
        "direction (lowest for NoAnswerFP and NoResult, highest otherwise); ties are all "
        "highlighted."
    )


COMPARISON_VIEW_COLUMNS = (
    "system",
    "measure",
    "n",
    "base_mean",
    "mean",
    "diff [95% CI]",
    "t",
    "effect_size",
    "wins",
    "ties",
    "losses",
    "p_value",
    "p_adjusted",
    "significant",
)
"""Columns of :func:`comparison_view` (``95%`` follows the ``confidence`` given)."""


def comparison_view(
    comparisons: pd.DataFrame, *, digits: int = 3, confidence: float = 0.95
) -> pd.DataFrame:
    """The paired-comparison table as the report shows it, narrow enough for a page: the
    interval of ``diff`` in one text cell beside it (:func:`interval_text`); left out are the
    columns that are the same on every row (``base, ci_method, effect_size_kind, test,
    family, family_size``, stated by :func:`comparison_legend`), ``df`` (``n - 1``) and
    ``variance, t_ci_low, t_ci_high`` (in ``comparisons`` for whoever needs them). Columns
    :data:`COMPARISON_VIEW_COLUMNS`, with ``95%`` replaced by ``confidence``."""
    level = f"{confidence:.0%}"
    diff_column = f"diff [{level} CI]"
    view = comparisons.assign(
        **{
            diff_column: [
                interval_text(d, lo, hi, digits=digits)
                for d, lo, hi in zip(
                    comparisons["diff"], comparisons["ci_low"], comparisons["ci_high"], strict=True
                )
            ],
        }
    )
    columns = [diff_column if c == "diff [95% CI]" else c for c in COMPARISON_VIEW_COLUMNS]
    return view[columns].reset_index(drop=True)


def comparison_legend(
    comparisons: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Columns ``column, meaning``: one row per column of :func:`comparison_view`, saying what
    it holds: the interval method and level, the resample count and seed of the bootstrap and
    of the test, the effect size statistic, the correction and its family. Read from
    ``comparisons`` (:func:`paired_comparisons`) where it says so (``ci_method``,
    ``effect_size_kind``, ``test``, ``family``)."""

    def one(column: str) -> str:
        values = sorted({str(v) for v in comparisons[column]}) if column in comparisons else []
        return ", ".join(values) or "n/a"

    level = f"{confidence:.0%}"
    effect = one("effect_size_kind")
    effect_text = (
        "Cohen's d_z: mean(d) / sd(d) of the paired differences d = system − base (sd with "
        "n − 1); about 0.2 small, 0.5 medium, 0.8 large"
        if effect == EFFECT_SIZE_DZ
        else f"{effect} of the paired differences"
    )
    rows = [
        ("system", f"the system compared with the base system, {one('base')}"),
        ("measure", "the measure (its direction from the measures registry)"),
        ("n", "paired queries: those both systems have a value for"),
        ("base_mean, mean", "mean of the base system and of the system over those queries"),
        (
            f"diff [{level} CI]",
            f"mean of d = system − base, then its {level} {one('ci_method')} bootstrap "
            f"interval ({n_resamples:,} resamples of the queries, seed {seed})",
        ),
        ("t", "paired t statistic mean(d) / (sd(d) / sqrt(n)), n − 1 degrees of freedom"),
        ("effect_size", effect_text),
        (
            "wins, ties, losses",
            "queries where the system is better than, equal to (within 1e-10 of the largest "
            "value) or worse than "
            "the base, in the measure's direction (for NoAnswerFP and NoResult lower is better)",
        ),
        (
            "p_value",
            f"two-sided paired {one('test')} test, exact: every one of the 2^n sign flips of d "
            f"enumerated (2^n <= {n_resamples:,} resamples)"
            if one("p_method") == "exact"
            else f"two-sided paired {one('test')} test (random sign flips of d, "
            f"{n_resamples:,} resamples, seed {seed}); a Monte Carlo p-value: at p = 0.05 its "
            f"standard error is about {np.sqrt(0.05 * 0.95 / n_resamples):.3f} (ek.compare's "
            "default is 10,000 resamples)",
        ),
        ("p_adjusted", f"p_value corrected over the family: {one('family')}"),
        ("significant", f"p_adjusted <= {alpha}"),
    ]
    return pd.DataFrame(rows, columns=["column", "meaning"]).astype(str)


def paired_comparisons(
    per_query: pd.DataFrame,
    base: str,
    *,
    systems: Sequence[str],
    measures: Sequence[str],
    n_resamples: int = 2000,
    seed: int = 0,
    correction: str = "holm",
) -> pd.DataFrame:
    """Every system against ``base`` on paired queries; columns ``COMPARISON_COLUMNS``.

    ``diff`` is ``system - base`` with a bootstrap interval; wins/ties/losses count queries
    where the system is better than/equal to/worse than the base in the measure's direction;
    ``p_value`` is the two-sided paired
    randomization test, ``p_adjusted`` corrected (``correction``, default Holm) over all
    systems and measures of the table (:func:`evalkit.stats.compare`).
    """
    if base not in systems:
        raise InputError(
            f"base system {base!r} is not among the evaluated systems ({', '.join(systems)}); "
            "set base_system to one of them"
        )
    from evalkit.report.verdict import compare_with_base

    in_table = per_query["system"].isin(list(systems)) & per_query["measure"].isin(list(measures))
    if len(systems) < 2 or not in_table.any():
        return _empty(COMPARISON_COLUMNS, _COMPARISON_DTYPES)
    result = compare_with_base(
        per_query,
        base,
        systems,
        measures,
        n_resamples=n_resamples,
        seed=seed,
        correction=correction,
    )
    return ordered_comparisons(result, systems=systems, measures=measures)


def ordered_comparisons(
    compared: pd.DataFrame, *, systems: Sequence[str], measures: Sequence[str]
) -> pd.DataFrame:
    """A :func:`evalkit.stats.compare` frame as :func:`paired_comparisons` shows it: rows in
    ``systems`` then ``measures`` order, columns ``COMPARISON_COLUMNS``. The report passes the
    verdict's comparisons (:attr:`evalkit.report.verdict.Verdict.comparisons`, the same test,
    correction, resamples and seed) instead of computing them twice."""
    if compared.empty:
        return _empty(COMPARISON_COLUMNS, _COMPARISON_DTYPES)
    in_frame = set(compared["measure"].unique())  # once: not per measure, not per row
    present = [m for m in measures if m in in_frame]
    ordered = _in_order(compared, systems=systems, measures=present, first=[])
    return ordered[list(COMPARISON_COLUMNS)]


def failure_counts(failures: pd.DataFrame, *, systems: Sequence[str]) -> pd.DataFrame:
    """Number of failures per kind (rows, sorted) and system (columns, in ``systems`` order),
    plus a ``total`` column; index name ``kind``."""
    counts = pd.crosstab(failures["kind"], failures["system"])
    counts = counts.reindex(columns=list(systems), fill_value=0).sort_index()
    counts.index.name = "kind"
    counts.columns.name = None
    counts["total"] = counts.sum(axis=1)
    return counts.astype("int64")


def failures_by_kind(failures: pd.DataFrame, *, systems: Sequence[str]) -> pd.DataFrame:
    """One row per (kind, system) with failures: columns ``kind, system, count, query_ids``
    (sorted, comma-separated). Kinds sorted, systems in ``systems`` order."""
    columns = ["kind", "system", "count", "query_ids"]
    rows = []
    for kind in sorted(set(failures["kind"])):
        for system in systems:
            mine = failures[(failures["kind"] == kind) & (failures["system"] == system)]
            if len(mine):
                ids = sorted(set(mine["query_id"]))
                rows.append((kind, system, len(mine), ", ".join(ids)))
    return pd.DataFrame(rows, columns=columns).astype(
        {"kind": str, "system": str, "count": "int64", "query_ids": str}
    )


def worst_queries(
    per_query: pd.DataFrame,
    failures: pd.DataFrame,
    *,
    measure: str,
    limit: int = 5,
) -> pd.DataFrame:
    """The queries most worth a look; columns ``query_id, language, failing_systems, kinds,
    mean_value``.

    Queries are ranked by how many systems fail them (descending), then by the mean of
    ``measure`` over all systems (ascending; a query without that measure, such as a no-answer
    query, counts as 0.0), then by query ID. Only queries with at least one failure are
    listed, at most ``limit``.
    """
    columns = ["query_id", "language", "failing_systems", "kinds", "mean_value"]
    if failures.empty:
        return _empty(columns, _WORST_DTYPES)
    grouped = failures.groupby("query_id", sort=True).agg(
        language=("language", "first"),
        failing_systems=("system", "nunique"),
        kinds=("kind", lambda kinds: ", ".join(sorted(set(kinds)))),
    )
    values = per_query[per_query["measure"] == measure].groupby("query_id")["value"].mean()
    grouped["mean_value"] = values.reindex(grouped.index).fillna(0.0).astype("float64")
    ranked = grouped.reset_index().sort_values(
        ["failing_systems", "mean_value", "query_id"],
        ascending=[False, True, True],
        kind="stable",
    )
    return ranked.head(limit).reset_index(drop=True)[columns].astype(_WORST_DTYPES)


def _empty(columns: Sequence[str], dtypes: Mapping[str, str]) -> pd.DataFrame:
    """A table without rows: ``columns``, each of its dtype in ``dtypes`` (text if unlisted)."""
    return pd.DataFrame({c: pd.Series(dtype=dtypes.get(c, "str")) for c in columns})


def judgment_table(
    fixture: Fixture,
    rankings: pd.DataFrame,
    query_id: str,
    *,
    systems: Sequence[str],
    redact: bool = True,
) -> pd.DataFrame:
    """The judged chunks of one query and where each system ranked them.

    Columns ``chunk_id, grade, chunk`` (``sha256:<12 hex>`` of the chunk text, or the text
    itself when ``redact`` is false), then one column per system: the rank of the chunk in that
    system's ranking, or ``"-"`` when it was not returned. Rows by grade (descending), then
    chunk ID. An unanswerable query has no rows.
    """
    query = fixture.query(query_id)
    judged = sorted(query.judgments, key=lambda j: (-j.grade, j.chunk_id))
    mine = rankings[rankings["query_id"] == query_id]
    rank_of = {
        (str(s), str(c)): int(r)
        for s, c, r in zip(mine["system"], mine["chunk_id"], mine["rank"], strict=True)
    }
    rows: list[dict[str, Any]] = []
    for judgment in judged:
        row: dict[str, Any] = {
            "chunk_id": judgment.chunk_id,
            "grade": judgment.grade,
            "chunk": display_text(fixture.chunk(judgment.chunk_id).text, redact),
        }
        for system in systems:
            rank = rank_of.get((system, judgment.chunk_id))
            row[system] = "-" if rank is None else str(rank)
        rows.append(row)
    return pd.DataFrame(rows, columns=["chunk_id", "grade", "chunk", *systems]).astype(
        {"grade": "int64"}
    )


def chunk_table(fixture: Fixture, chunk_ids: Sequence[str], *, redact: bool = True) -> pd.DataFrame:
    """Columns ``chunk_id, chunk``: each distinct known chunk ID (first-seen order) with
    :func:`display_text` of its text (a hash when ``redact``); unknown IDs are skipped."""
    known = fixture.chunks_by_id
    ids = [c for c in dict.fromkeys(chunk_ids) if c in known]
    return pd.DataFrame(
        {"chunk_id": ids, "chunk": [display_text(known[c].text, redact) for c in ids]},
        columns=["chunk_id", "chunk"],
    ).astype(str)


def ranking_grid(
    rankings: pd.DataFrame,
    query_id: str,
    *,
    systems: Sequence[str],
    k: int,
    near_duplicates: Mapping[str, str] | None = None,
    judged: Collection[str] | None = None,
    depth: int | None = None,
) -> pd.DataFrame:
    """What each system returned for one query: index ``rank`` (1..k), one column per system.

    Cells are ``"<chunk_id> (g<grade>)"`` for a judged chunk (``g0``: judged not relevant) and
    ``"<chunk_id> (unjudged)"`` for a chunk outside ``judged`` (the query's judged chunk IDs;
    ``None`` marks every chunk by its grade), with ``" ~<chunk_id>"`` appended for a
    near-duplicate of another chunk (from ``near_duplicates``), ``""`` below the end of a
    shorter ranking, and ``"no results (abstained)"`` at rank 1 of a system that returned
    nothing. With ``depth``, the rows are ranks 1..depth and every deeper rank at which some
    system returned a judged chunk (a relevant one, ``grade >= 1``, when ``judged`` is None):
    at k=1000 a full grid is a thousand rows per query, which the report cannot be read by.
    """
    duplicates = dict(near_duplicates or {})
    judged_ids = None if judged is None else set(judged)
    mine = rankings[rankings["query_id"] == query_id]
    # the cells are filled in plain lists and the frame built once (a cell-by-cell .loc
    # assignment cost about 1 ms a cell)
    cells = {str(system): [""] * k for system in systems}
    judged_rows: set[int] = set()  # 0-based ranks holding a judged chunk in some column
    for system, chunk_id, rank, grade in zip(
        mine["system"], mine["chunk_id"], mine["rank"], mine["grade"], strict=True
    ):
        if str(system) in cells and 1 <= int(rank) <= k:
            unjudged = judged_ids is not None and chunk_id not in judged_ids
            cell = f"{chunk_id} (unjudged)" if unjudged else f"{chunk_id} (g{int(grade)})"
            if chunk_id in duplicates:
                cell += f" ~{duplicates[chunk_id]}"
            cells[str(system)][int(rank) - 1] = cell
            if not unjudged and (judged_ids is not None or int(grade) >= 1):
                judged_rows.add(int(rank) - 1)
    returned = {str(system) for system in mine["system"]}
    for system, column in cells.items():
        if system not in returned and k >= 1:
            column[0] = NO_RESULTS
    index: pd.Index = pd.RangeIndex(1, k + 1, name="rank")
    if depth is not None and depth < k:
        rows = [row for row in range(k) if row < depth or row in judged_rows]
        cells = {system: [column[row] for row in rows] for system, column in cells.items()}
        index = pd.Index([row + 1 for row in rows], name="rank")
    return pd.DataFrame(cells, index=index, columns=list(cells))


RANKING_GRID_DEPTH: Final = 20
"""The ranks the report's drill-down grid shows in full (:func:`ranking_grid`'s ``depth``);
deeper, only the ranks holding a judged chunk. Twenty rows are about a screen of the page, and
twice the notebook's default cutoff (``k = 10``), whose grids stay whole."""


def display_text(text: str, redact: bool, limit: int = 400) -> str:
    """``sha256:<12 hex>`` of ``text`` when ``redact``, else the text (cut at ``limit``)."""
    if redact:
        return f"sha256:{text_hash(text)}"
    return text if len(text) <= limit else text[:limit] + "…"


ALL_PAIRS_METHODS = ("randomized-tukey", "tukey")
"""``method=`` of :func:`all_pairs_table`: the randomized Tukey HSD or the paired Tukey HSD."""


def all_pairs_table(
    per_query: pd.DataFrame,
    *,
    systems: Sequence[str],
    measures: Sequence[str],
    method: str = "randomized-tukey",
    n_resamples: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[pd.DataFrame, str]:
    """All-pairs significance as a compact letter display, and the sentence that states it.

    Returns ``(table, note)``. ``table``: index ``system`` (in ``systems`` order), one text
    column per measure present (in ``measures`` order), cells ``"<mean> <letters>"``: within a
    measure, two systems that share a letter are not significantly different at ``alpha``;
    ``a`` marks the group of the best system (highest mean; lowest for ``NoAnswerFP``); ``n/a``
    for a measure that applies to no query.
    Letters come from Piepho's insert-and-absorb algorithm (2004) on the significant pairs of
    :func:`evalkit.stats.randomized_tukey_hsd` (``n_resamples``, ``seed``) or
    :func:`evalkit.stats.tukey_hsd` (``method="tukey"``). ``note`` (plain text; the
    notebook escapes it) names the method, its family of comparisons (all pairs of the systems,
    within each measure) and ``alpha``. Fewer than two systems or no measure present: an empty
    table.
    """
    from evalkit.stats import compact_letters, randomized_tukey_hsd, tukey_hsd

    if method not in ALL_PAIRS_METHODS:
        raise InputError(
            f"all_pairs_table: unknown method {method!r}; expected one of "
            f"{', '.join(ALL_PAIRS_METHODS)}"
        )
    selected = per_query[
        per_query["system"].isin(list(systems)) & per_query["measure"].isin(list(measures))
    ]
    selected_measures = set(selected["measure"].unique())  # once, from the distinct values
    selected_systems = set(selected["system"].unique())
    present = [m for m in measures if m in selected_measures]
    shown = [s for s in systems if s in selected_systems]
    k = len(shown)
    if method == "tukey":
        described = "Tukey's HSD for paired data (systems x topics, error term V_E)"
    else:
        described = (
            f"the randomized Tukey HSD ({n_resamples} within-topic permutations, seed {seed})"
        )
    note = (
        f"All pairs, compact letter display. Within a measure (column), systems that share "
        f"a letter are not significantly different at alpha = {alpha}; letter a is the best "
        f"system's group. Test: {described}. Family: all {k * (k - 1) // 2} pairs of {k} "
        "systems within each measure (family-wise error rate controlled per measure, not "
        "across measures). Cells: mean, then letters."
    )
    table = pd.DataFrame(index=pd.Index(shown, name="system"), columns=present, dtype="str")
    valued = set(selected.loc[selected["value"].notna(), "measure"].unique())
    computed = [m for m in present if m in valued]
    for measure in present:
        if measure not in valued:
            table[measure] = NA_TEXT  # not applicable: NaN for every query
    if k < 2 or not computed:
        return table, note
    if method == "tukey":
        pairs = tukey_hsd(selected, computed, alpha=alpha)
    else:
        pairs = randomized_tukey_hsd(
            selected, computed, n_resamples=n_resamples, alpha=alpha, seed=seed
        )
    for measure in computed:
        rows = pairs[pairs["measure"] == measure]
        means = selected[selected["measure"] == measure].groupby("system")["value"].mean()
        best_first = sorted(
            shown,
            key=lambda s: (-means[s] if higher_is_better(measure) else means[s], shown.index(s)),
        )
        different = [
            (str(a), str(b))
            for a, b, significant in zip(
                rows["system"], rows["base"], rows["significant"], strict=True
            )
            if significant
        ]
        letters = compact_letters(best_first, different)
        table[measure] = [f"{means[s]:.3f} {letters[s]}" for s in shown]
    return table, note


PROBE_COLUMNS = (
    "id",
    "tool",
    "status",
    "recall",
    "recall_min",
    "precision",
    "precision_min",
    "f1",
    "rr",
    "ndcg",
    "missing",
    "extra",
    "note",
)
"""Columns of :func:`probe_table`."""
_NO_THRESHOLD_NOTE = "thresholds 0: records a known blind spot, passes whatever it returns"


def probe_table(results: pd.DataFrame, *, redact: bool = True) -> pd.DataFrame:
    """The probe results as the report shows them; columns :data:`PROBE_COLUMNS`.

    ``results`` is :func:`evalkit.probes.run_probes`'s frame. Each probe's own thresholds
    (``recall_min``, ``precision_min``) stand beside its scores. ``missing`` and ``extra`` are
    the sizes of those symbol sets when ``redact`` (their symbols, comma-separated,
    otherwise). ``note`` says why a probe passed or failed when its status alone would mislead:
    ``"thresholds 0: ..."`` for a probe whose thresholds are both 0 (it cannot fail: such
    probes record a known limitation of the tool), which threshold a failed probe missed, or
    the error of a probe that could not run (``"could not run"``, no message: it may quote
    arguments).
    """
    notes = []
    for row in results.itertuples(index=False):
        if row.status == "error":
            notes.append("could not run")
        elif row.recall_min == 0 and row.precision_min == 0:
            notes.append(_NO_THRESHOLD_NOTE)
        elif row.status == "fail":
            missed = [
                name
                for name, passed in (("recall", row.pass_recall), ("precision", row.pass_precision))
                if not passed
            ]
            notes.append(f"{' and '.join(missed)} below its threshold")
        else:
            notes.append("")

    def sets(column: str) -> list[Any]:
        return [len(v) if redact else ", ".join(v) for v in results[column]]

    table = results.assign(missing=sets("missing"), extra=sets("extra"), note=notes)
    return table[list(PROBE_COLUMNS)].reset_index(drop=True)


def probe_legend(results: pd.DataFrame) -> str:
    """The sentence beside :func:`probe_table` (plain text): the pass rule and how many
    probes cannot fail."""
    free = int(((results["recall_min"] == 0) & (results["precision_min"] == 0)).sum())
    return (
        "A probe passes when recall >= recall_min and precision >= precision_min, its own "
        "thresholds from its probe file; recall and precision are over deduplicated symbol "
        "sets, rr and ndcg only for a tool that returns a ranking (n/a otherwise). "
        f"{free} of {len(results)} probes have both thresholds at 0: they record a known "
        "blind spot of the tool (see their descriptions) and pass whatever they return."
    )


def query_measures(
    per_query: pd.DataFrame, query_id: str, *, systems: Sequence[str], measures: Sequence[str]
) -> pd.DataFrame:
    """Every measure of one query per system: index ``measure`` (in ``measures`` order, those
    the query has, n/a ones included), one float column per system (NaN where a system has no
    value: the measure does not apply)."""
    mine = per_query[per_query["query_id"] == query_id]
    wide = mine.pivot_table(
        index="measure", columns="system", values="value", aggfunc="first", dropna=False
    )
    order = [m for m in measures if m in wide.index]
    wide = wide.reindex(index=order, columns=list(systems)).astype("float64")
    wide.index.name, wide.columns.name = "measure", None
    return wide
