"""``score``: per-query values of standard IR measures; ``aggregate``: their means."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from evalkit.errors import InputError, MeasureError
from evalkit.measures.kernels import KERNELS
from evalkit.measures.names import SPAN_MEASURE_NAMES, Measure, parse_measure
from evalkit.measures.ranking import Duplicates, Ties, judged_ranking

__all__ = ["aggregate", "parse_measures", "score", "trec_summary"]


def parse_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse one measure or a list of them; raises MeasureError for a measure listed twice."""
    items = [measures] if isinstance(measures, str | Measure) else list(measures)
    if not items:
        raise MeasureError("no measure given; pass at least one, e.g. ['nDCG@10', 'AP']")
    parsed = [parse_measure(m) for m in items]
    seen: set[Measure] = set()
    for m in parsed:
        if m in seen:
            raise MeasureError(f"measure {str(m)!r} is listed twice")
        seen.add(m)
    return parsed


def score(
    qrels: pd.DataFrame,
    run: pd.DataFrame,
    measures: str | Measure | Iterable[str | Measure],
    *,
    ties: Ties = "trec",
    duplicates: Duplicates = "error",
) -> pd.DataFrame:
    """Per-query values of ``measures`` for ``run`` judged by ``qrels``.

    ``qrels``: columns ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int; negative grades
    mean "pooled but unjudged", as in trec_eval). ``run``: ``query_id``, ``doc_id``, ``score``
    and optionally ``rank``.

    Returns columns exactly ``query_id`` (str), ``measure`` (str, the canonical measure string)
    and ``value`` (float64): one row per (qrels query, measure), sorted by query ID and then in
    the order of ``measures``. A qrels query absent from the run gets the value of an empty
    ranking (0.0 for every measure except ``NumRel``), like ``trec_eval -c``; run queries that
    the qrels do not judge are ignored and counted in a RunOnlyQueriesWarning.

    ``ties="trec"`` (default) ranks by score descending (compared as float32, like trec_eval),
    then doc ID descending; ``ties="given"`` uses the ``rank`` column ascending when present,
    else the row order within each query. ``duplicates="error"`` (default) raises InputError
    naming the query and doc of a doc listed twice in one query's ranking; ``"keep-first"``
    keeps the occurrence ranked first. The inputs are never modified.
    """
    parsed = parse_measures(measures)
    for m in parsed:
        if m.name in SPAN_MEASURE_NAMES:
            raise MeasureError(
                f"measure {str(m)!r} needs a fixture with answer spans; it is computed by "
                "evalkit.evaluate, not by score() on qrels and a run"
            )
    ranking = judged_ranking(qrels, run, ties=ties, duplicates=duplicates)
    values = [KERNELS.get(m.name)(ranking, m) for m in parsed]
    n_q, n_m = ranking.n_queries, len(parsed)
    matrix = np.column_stack(values)
    # the string columns are built in arrow (no Python string per row)
    labels = pa.table(
        {
            "query_id": pa.array(ranking.query_ids, pa.large_string()).take(
                pa.array(np.repeat(np.arange(n_q, dtype=np.int64), n_m))
            ),
            "measure": pa.array([str(m) for m in parsed], pa.large_string()).take(
                pa.array(np.tile(np.arange(n_m, dtype=np.int64), n_q))
            ),
        }
    )
    frame: pd.DataFrame = labels.to_pandas()
    frame["value"] = matrix.reshape(-1).astype(np.float64)
    return frame


def aggregate(per_query: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean ``value`` per measure (and per each combination of the ``by`` columns).

    Returns columns ``*by, measure, value`` (value float64); measures keep their order of first
    appearance, groups are sorted. Works on any frame with ``measure`` and ``value`` columns
    (extra columns such as ``system``, ``language``, ``answerable`` are ignored unless in ``by``).
    """
    by = list(by)
    needed = [*by, "measure", "value"]
    missing = [c for c in needed if c not in per_query.columns]
    if missing:
        raise InputError(
            f"per-query frame is missing column(s) {', '.join(missing)}; found "
            f"{', '.join(map(str, per_query.columns))}"
        )
    if "measure" in by or "value" in by:
        raise InputError("by must not contain 'measure' or 'value'")
    frame = per_query[needed]
    order = {m: i for i, m in enumerate(pd.unique(frame["measure"]))}
    out = frame.groupby([*by, "measure"], sort=False, dropna=False, observed=True)["value"].mean()
    result = out.reset_index()
    result["_order"] = result["measure"].map(order)
    result = result.sort_values([*by, "_order"], kind="stable").drop(columns="_order")
    result["value"] = result["value"].astype(np.float64)
    return result.reset_index(drop=True)[needed]


_COUNT_MEASURES = frozenset({"NumRet", "NumRel", "NumRelRet"})


def trec_summary(
    per_query: pd.DataFrame, *, per_query_lines: bool = False
) -> list[tuple[str, str, str]]:
    """``(query_id or "all", measure, printed value)`` rows in trec_eval's layout.

    Per-query rows (when asked) come first, by query then measure; then one ``all`` row per
    measure: the mean over every query of the frame, or the sum for the counts ``NumRet``,
    ``NumRel`` and ``NumRelRet`` (as trec_eval does). Counts print as integers, everything else
    with 4 decimals.
    """
    measures = list(pd.unique(per_query["measure"]))
    counts = {m for m in measures if parse_measure(m).name in _COUNT_MEASURES}

    def text(measure: str, value: float) -> str:
        return f"{round(value)}" if measure in counts else f"{value:.4f}"

    rows: list[tuple[str, str, str]] = []
    if per_query_lines:
        for query_id, measure, value in per_query[["query_id", "measure", "value"]].itertuples(
            index=False
        ):
            rows.append((str(query_id), str(measure), text(str(measure), float(value))))
    grouped = per_query.groupby("measure", sort=False)["value"]
    sums, means = grouped.sum(), grouped.mean()
    for measure in measures:
        value = sums[measure] if measure in counts else means[measure]
        rows.append(("all", str(measure), text(str(measure), float(value))))
    return rows
