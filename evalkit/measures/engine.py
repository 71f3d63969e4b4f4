"""``score``: per-query values of standard IR measures; ``score_list``: the values of one ranked
list; ``aggregate``: their means."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from evalkit._arrays import FloatArray
from evalkit.errors import InputError, MeasureError
from evalkit.formats.trec import read_qrels
from evalkit.measures.cluster import cluster_ranking, is_dask_frame
from evalkit.measures.diversity import diversity_measures, diversity_values
from evalkit.measures.judged import JudgedRanking
from evalkit.measures.names import (
    SPAN_MEASURE_NAMES,
    SUMMARY_MEASURE_NAMES,
    Measure,
    measure_spec,
    parse_measure,
    summary_measure_problem,
)
from evalkit.measures.ranking import (
    DEFAULT_OPTIONS,
    Duplicates,
    ScoreOptions,
    Ties,
    TrecVersion,
    judged_ranking,
    measure_values,
)
from evalkit.measures.stream import DEFAULT_BLOCK_ROWS, QrelsIndex, RunSource, stream_ranking
from evalkit.safety.arguments import path_argument

__all__ = [
    "aggregate",
    "parse_measures",
    "score",
    "score_list",
    "score_ranking",
    "source_ranking",
    "trec_summary",
]


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
    qrels: pd.DataFrame | str | os.PathLike[str],
    run: pd.DataFrame | RunSource,
    measures: str | Measure | Iterable[str | Measure],
    *,
    ties: Ties = "trec",
    duplicates: Duplicates = "error",
    trec_version: TrecVersion = "10",
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = True,
    num_docs: int | None = None,
    subtopics: pd.DataFrame | None = None,
    progress: bool | None = None,
    client: Any = None,
    block_rows: int = DEFAULT_BLOCK_ROWS,
    tmp_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Per-query values of ``measures`` for ``run`` judged by ``qrels``.

    ``qrels``: columns ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int; negative grades
    mean "pooled but unjudged", as in trec_eval), or the path of a TREC qrels file (``str`` or
    ``PathLike``, read by :func:`evalkit.formats.read_qrels`). ``run``: ``query_id``,
    ``doc_id``, ``score`` and optionally ``rank``, or a run source (a path, module docs).

    Returns columns exactly ``query_id`` (str), ``measure`` (str, the canonical measure string)
    and ``value`` (float64): one row per (qrels query, measure), sorted by query ID and then in
    the order of ``measures``. A qrels query absent from the run gets the value of an empty
    ranking (0.0 for every measure except ``NumRel``), like ``trec_eval -c``; run queries that
    the qrels do not judge are ignored and counted in a RunOnlyQueriesWarning.

    ``ties="trec"`` (default) ranks by score descending, then doc ID descending, as trec_eval;
    ``ties="given"`` uses the ``rank`` column ascending when present, else the row order within
    each query. ``trec_version`` picks the trec_eval release reproduced: ``"10"`` (default,
    the current release) compares scores as float64, ``"9"`` (9.0.8, inside
    pytrec-eval-terrier) as float32, so near-equal scores tie and fall back to the doc ID; it
    also picks how ``IPrec``/``11pt_avg`` turn a recall level into a count of relevant docs
    (10.0 rounds, 9.0.8 adds 0.9 and truncates).

    trec_eval's options: ``max_docs`` (``-M``) keeps each query's first ``max_docs`` ranked
    docs; ``judged_only`` (``-J``) then drops every doc without a grade >= 0 and ranks the
    rest; ``complete=False`` (trec_eval without ``-c``) leaves out the qrels queries that the
    run does not rank (by default they get the values of an empty ranking, like ``-c``);
    ``num_docs`` (``-N``) is the collection size ``Utility`` may use.

    ``duplicates="error"`` (default) raises InputError naming the query and doc of a doc
    listed twice in one query's ranking; ``"keep-first"`` keeps the occurrence ranked first.
    The inputs are never modified.

    ``subtopics``: subtopic qrels (columns ``query_id``, ``subtopic``, ``doc_id``,
    ``relevance``; :func:`evalkit.formats.read_subtopic_qrels`), needed by the diversity
    measures (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``, ...; see
    :mod:`evalkit.measures.diversity`). They rank ``run`` with the same options; a qrels query
    the subtopic qrels do not judge gets 0.0 from them.
    ``run`` may also be a run too big for memory: the path of a TREC run file (plain or
    ``.gz``), of a Parquet file or of a Parquet dataset (a directory), or a list of such files;
    it is then read in blocks of whole queries (about ``block_rows`` rows each) in bounded
    memory, with a progress bar on stderr (``progress``: None shows it when stderr is a terminal
    and the run takes over a second); a run whose queries' rows are not together is partitioned
    on disk, in a temporary directory under ``tmp_dir`` (None: the system's). A Dask DataFrame
    (or any of these with ``client``, a ``dask.distributed.Client``) is judged partition by
    partition on the cluster. Either way the result is this same pandas frame, with values
    identical to the in-memory path: see :mod:`evalkit.measures.stream`.
    """
    qrels_path = path_argument(
        qrels, "qrels", function="score", also=(pd.DataFrame,), what="a DataFrame"
    )
    if qrels_path is not None:
        qrels = read_qrels(qrels_path)
    qrels = cast(pd.DataFrame, qrels)
    parsed = parse_measures(measures)
    for m in parsed:
        if m.name in SUMMARY_MEASURE_NAMES:
            raise MeasureError(summary_measure_problem(str(m)))
        if m.name in SPAN_MEASURE_NAMES:
            raise MeasureError(
                f"measure {str(m)!r} needs a fixture with answer spans; it is computed by "
                "evalkit.run.evaluate, not by score() on qrels and a run"
            )
    options = ScoreOptions(
        ties=ties,
        duplicates=duplicates,
        trec_version=trec_version,
        max_docs=max_docs,
        judged_only=judged_only,
        complete=complete,
        num_docs=num_docs,
    )
    if client is not None or not isinstance(run, pd.DataFrame):  # a file, a Dask frame, ...
        diverse_wanted = diversity_measures(parsed, subtopics)
        if diverse_wanted:
            raise MeasureError(
                f"measure {str(diverse_wanted[0])!r} is computed on an in-memory run only: "
                "read the run with evalkit.formats.read_run(path, rank=False) and pass the frame"
            )
        ranking = source_ranking(
            qrels,
            run,
            options,
            progress=progress,
            client=client,
            block_rows=block_rows,
            tmp_dir=tmp_dir,
        )
        diverse: dict[Measure, FloatArray] = {}
    else:
        ranking = judged_ranking(qrels, run, options)
        diverse = diversity_values(subtopics, run, parsed, ranking.query_ids, options)
    return score_ranking(ranking, parsed, options, precomputed=diverse)


def score_list(
    ranked: Sequence[str],
    grades: Mapping[str, int],
    measures: str | Measure | Iterable[str | Measure],
) -> dict[str, float]:
    """The values of ``measures`` for one ranked list of IDs, best first, judged by ``grades``
    (``{ID: grade}``, as a qrels query's rows; an ID without a grade is unjudged).

    Returns ``{canonical measure string: value}`` in the order of ``measures``, each value what
    :func:`score` gives a query with this ranking (the same kernels; the list's order is the
    ranking, as with ``ties="given"``). A repeated ID keeps its first place: later repeats are
    dropped, so a repeat neither counts twice nor pushes the IDs after it down. Measures that
    need subtopic qrels or a fixture are refused (MeasureError); InputError for an ID that is
    not a string or a grade that is not an integer.
    """
    parsed = parse_measures(measures)
    for m in parsed:
        if measure_spec(m.name).needs != "ranking":
            raise MeasureError(
                f"measure {str(m)!r} is not computed on one ranked list: it needs subtopic "
                "qrels or a fixture (evalkit.measures.score, evalkit.run.evaluate)"
            )
    for doc, grade in grades.items():
        if not isinstance(doc, str) or isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(
                f"grades must map string IDs to integer grades, got {type(doc).__name__} -> "
                f"{type(grade).__name__}"
            )
    if isinstance(ranked, str) or not all(isinstance(doc, str) for doc in ranked):
        raise InputError("ranked must be a list of string IDs, best first")
    matrix = measure_values(JudgedRanking.of_list(ranked, grades), parsed, DEFAULT_OPTIONS)
    return {str(m): float(value) for m, value in zip(parsed, matrix[0], strict=True)}


def score_ranking(
    ranking: JudgedRanking,
    parsed: Sequence[Measure],
    options: ScoreOptions = DEFAULT_OPTIONS,
    *,
    precomputed: Mapping[Measure, FloatArray] | None = None,
) -> pd.DataFrame:
    """``score``'s result for an already judged ranking (the kernels and the tidy frame); the
    streaming and Dask paths combine their blocks' rankings and finish here. ``precomputed``
    holds per-query values (in ``ranking.query_ids`` order) of measures computed outside the
    kernels, such as the diversity measures."""
    ranked = ranking.num_ret > 0
    matrix = measure_values(ranking, parsed, options, precomputed)
    n_q, n_m = ranking.n_queries, len(parsed)
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
    if not options.complete and not bool(ranked.all()):
        frame = frame[np.repeat(ranked, n_m)].reset_index(drop=True)
    return frame


def aggregate(
    per_query: pd.DataFrame, by: Sequence[str] = (), *, geometric: Iterable[str] = ()
) -> pd.DataFrame:
    """Mean ``value`` per measure (and per each combination of the ``by`` columns).

    Returns columns ``*by, measure, value`` (value float64); measures keep their order of first
    appearance, groups are sorted. Works on any frame with ``measure`` and ``value`` columns
    (extra columns such as ``system``, ``language``, ``answerable`` are ignored unless in ``by``).

    ``geometric``: measures of the frame (``AP`` or ``Bpref``, any ``rel``) whose geometric
    mean, as trec_eval computes it (``exp(mean(log(max(value, 0.00001))))``), is added after
    the means, named ``gm_map`` / ``gm_bpref`` (``gm_map(rel=2)``, ...): trec_eval's gm_map
    and gm_bpref, which have no per-query values.
    """
    geometric = list(geometric)
    result = _arithmetic(per_query, by)
    if not geometric:
        return result
    by = list(by)
    parts = [result]
    for name in geometric:
        measure = parse_measure(name)
        if measure.name not in _GEOMETRIC:
            raise MeasureError(
                f"geometric means are defined for AP and Bpref (trec_eval's gm_map, gm_bpref), "
                f"got {name!r}"
            )
        rows = per_query[per_query["measure"] == str(measure)]
        if rows.empty:
            raise InputError(f"geometric: the frame has no rows of measure {str(measure)!r}")
        logs = np.log(np.maximum(rows["value"].to_numpy(dtype=np.float64), _MIN_GEO_MEAN))
        frame = rows[by].copy()
        frame["value"] = logs
        if by:
            means = frame.groupby(by, sort=True, dropna=False, observed=True)["value"].mean()
            part = means.reset_index()
        else:
            part = pd.DataFrame({"value": [float(logs.mean())]})
        part["value"] = np.exp(part["value"].to_numpy(dtype=np.float64))
        label = _GEOMETRIC[measure.name] + str(measure)[len(measure.name) :]
        part.insert(len(by), "measure", label)
        parts.append(part[[*by, "measure", "value"]])
    out = pd.concat(parts, ignore_index=True)
    if by:
        out = out.sort_values(by, kind="stable").reset_index(drop=True)
    return out


_GEOMETRIC = {"AP": "gm_map", "Bpref": "gm_bpref"}
_MIN_GEO_MEAN = 0.00001  # trec_eval.h MIN_GEO_MEAN


def _arithmetic(per_query: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
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


_COUNT_MEASURES = frozenset({"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ"})
_SUMMARY_ONLY = frozenset({"NumQ"})  # trec_eval prints num_q only in the "all" line


def trec_summary(
    per_query: pd.DataFrame, *, per_query_lines: bool = False
) -> list[tuple[str, str, str]]:
    """``(query_id or "all", measure, printed value)`` rows in trec_eval's layout.

    Per-query rows (when asked) come first, by query then measure; then one ``all`` row per
    measure: the mean over every query of the frame, or the sum for the counts ``NumRet``,
    ``NumRel``, ``NumRelRet``, ``num_nonrel_judged_ret`` and ``NumQ`` (as trec_eval does;
    ``NumQ`` has no per-query lines). Counts print as integers, everything else
    with 4 decimals.
    """
    measures = list(pd.unique(per_query["measure"]))
    counts = {m for m in measures if parse_measure(m).name in _COUNT_MEASURES}
    summary_only = {m for m in measures if parse_measure(m).name in _SUMMARY_ONLY}

    def text(measure: str, value: float) -> str:
        return f"{round(value)}" if measure in counts else f"{value:.4f}"

    rows: list[tuple[str, str, str]] = []
    if per_query_lines:
        for query_id, measure, value in per_query[["query_id", "measure", "value"]].itertuples(
            index=False
        ):
            if measure not in summary_only:
                rows.append((str(query_id), str(measure), text(str(measure), float(value))))
    grouped = per_query.groupby("measure", sort=False)["value"]
    sums, means = grouped.sum(), grouped.mean()
    # trec_eval adds NaN values up (IPrec@0 with -J): a NaN makes the "all" value NaN
    has_nan = per_query["value"].isna().groupby(per_query["measure"], sort=False).any()
    for measure in measures:
        value = sums[measure] if measure in counts else means[measure]
        if has_nan[measure]:
            value = float("nan")
        rows.append(("all", str(measure), text(str(measure), float(value))))
    return rows


def source_ranking(
    qrels: pd.DataFrame,
    source: RunSource,
    options: ScoreOptions = DEFAULT_OPTIONS,
    *,
    progress: bool | None = None,
    client: Any = None,
    block_rows: int = DEFAULT_BLOCK_ROWS,
    tmp_dir: str | os.PathLike[str] | None = None,
) -> JudgedRanking:
    """The judged ranking of a run source or Dask DataFrame against ``qrels`` (one entry per
    qrels query, ``query_ids`` sorted; ``num_ret`` 0 for a query the run lacks), ranked by
    ``options``, as :func:`score` builds it for such a run before the kernels run."""
    index = QrelsIndex(qrels, options)
    if client is not None or is_dask_frame(source):
        return cluster_ranking(index, source, client=client)
    return stream_ranking(index, source, block_rows=block_rows, progress=progress, tmp_dir=tmp_dir)
