"""The change against a baseline: every system present in both files compared with itself.

:func:`compare_with_baseline` reads a report and a baseline (report dicts, :mod:`evalkit.run`'s
schema) and returns a frozen :class:`Change` of tidy frames, IDs and numbers only:

- ``measures`` (:data:`CHANGE_COLUMNS`): one row per (system, measure, scope), scope ``all``
  then each language. ``before``/``after`` are the means over the queries both files have a
  value for, ``diff = after - before`` with a percentile bootstrap interval, the paired
  randomization test of :func:`evalkit.stats.compare`, Holm over the overall rows of every
  system and measure (``p_adjusted``); ``direction`` is ``better``/``worse`` (in the measure's
  direction) when ``p_adjusted <= alpha``, else ``unchanged``. ``worse, better, unchanged``
  count queries by the tie rule of :mod:`evalkit.stats` (``compare``'s losses, wins, ties).
  A language row has ``differs``: its paired differences moved differently from those of the
  other languages (two-sided permutation test of the difference of their means, Holm over
  every language row; ``p_differs``). Language rows need the queries' languages
  (``query_languages``), else there are none.
- ``queries`` (:data:`QUERY_CHANGE_COLUMNS`): every shared query per system and measure,
  ``rank`` 1 the worst (largest loss in the measure's direction, ties by query ID).
- ``latency`` (:data:`LATENCY_CHANGE_COLUMNS`): count, median and p95 before and after where
  both sides measured it, and whether the machine is the same (the reports' ``machine``).
- ``systems`` (:data:`SYSTEM_CHANGE_COLUMNS`): compared, added (only in the run) or removed
  (only in the baseline).
- ``abstention`` (:data:`ABSTENTION_CHANGE_COLUMNS`): per compared system, overall and per
  language, the ROC AUC of confidence separating answerable from no-answer queries
  (:func:`evalkit.stats.abstention`) before and after on the queries both files have, and
  ``diff`` with the percentile interval of :func:`evalkit.stats.auc_change` (queries
  resampled jointly, stratified, the settings' resamples and seed); ``source_before``,
  ``source_after`` where each side's confidences came from (``declared`` or ``top score``);
  ``note`` says why a row is n/a (a baseline written before baselines kept ``confidence``,
  no no-answer queries).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from evalkit.measures.names import higher_is_better
from evalkit.results import (
    ALL_LANGUAGES,
    report_confidence,
    report_measure_order,
    report_per_query,
    report_query_languages,
)
from evalkit.stats import adjust_pvalues, auc_change, compare, paired_differences

__all__ = [
    "ABSTENTION_CHANGE_COLUMNS",
    "CHANGE_COLUMNS",
    "LATENCY_CHANGE_COLUMNS",
    "QUERY_CHANGE_COLUMNS",
    "SYSTEM_CHANGE_COLUMNS",
    "Change",
    "ChangeSettings",
    "change_sentence",
    "compare_with_baseline",
]

CHANGE_COLUMNS: Final = (
    "system",
    "measure",
    "language",
    "n",
    "before",
    "after",
    "diff",
    "ci_low",
    "ci_high",
    "test",
    "p_value",
    "correction",
    "p_adjusted",
    "direction",
    "worse",
    "better",
    "unchanged",
    "differs",
    "p_differs",
)
"""Columns of :attr:`Change.measures` (module docs); ``language`` is ``all`` on the overall row."""

QUERY_CHANGE_COLUMNS: Final = (
    "system",
    "measure",
    "query_id",
    "language",
    "before",
    "after",
    "diff",
    "change",
    "rank",
)
"""Columns of :attr:`Change.queries`: ``change`` is ``worse``, ``better`` or ``unchanged``."""

LATENCY_CHANGE_COLUMNS: Final = (
    "system",
    "count_before",
    "median_ms_before",
    "p95_ms_before",
    "count_after",
    "median_ms_after",
    "p95_ms_after",
    "median_ratio",
    "same_machine",
    "note",
)
"""Columns of :attr:`Change.latency`: ``same_machine`` is True, False or None (a side has no
machine record); ``note`` says why a side is missing or that the machines differ."""

ABSTENTION_CHANGE_COLUMNS: Final = (
    "system",
    "language",
    "n_answerable",
    "n_no_answer",
    "before",
    "after",
    "diff",
    "ci_low",
    "ci_high",
    "source_before",
    "source_after",
    "note",
)
"""Columns of :attr:`Change.abstention` (module docs); ``language`` is ``all`` on the overall
row; the numbers are NaN and ``note`` says why on an n/a row."""

NO_BASELINE_CONFIDENCE: Final = (
    "n/a: the baseline has no confidence section (written before baselines kept it); "
    "refresh it to compare the abstention AUC"
)

SYSTEM_CHANGE_COLUMNS: Final = ("system", "status")
"""Columns of :attr:`Change.systems`: ``status`` is ``compared``, ``added`` or ``removed``."""


@dataclass(frozen=True)
class ChangeSettings:
    """The statistics of a change: the paired ``test`` (randomization), its ``correction``,
    the significance level ``alpha``, the interval's ``confidence``, resamples and seed."""

    test: str = "randomization"
    correction: str = "holm"
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0

    def statement(self) -> str:
        """``paired randomization test, holm correction, alpha 0.05, 2000 resamples, seed 0``."""
        return (
            f"paired {self.test} test, {self.correction} correction, alpha {self.alpha:g}, "
            f"{self.n_resamples} resamples, seed {self.seed}"
        )


@dataclass(frozen=True)
class Change:
    """A run against a baseline (module docs): frames ``measures``, ``queries``, ``latency``,
    ``systems``, ``abstention`` and the ``settings`` they were computed with."""

    measures: pd.DataFrame
    queries: pd.DataFrame
    latency: pd.DataFrame
    systems: pd.DataFrame
    settings: ChangeSettings
    abstention: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(ABSTENTION_CHANGE_COLUMNS))
    )

    def auc_sentence(self, system: str) -> str:
        """``abstention AUC 0.912 -> 0.634, -0.278 [95% -0.41, -0.15]`` (the overall row of
        ``system``), ``abstention AUC: n/a: ...`` for an n/a row, or "" without a row."""
        rows = self.abstention[
            (self.abstention["system"] == system) & (self.abstention["language"] == ALL_LANGUAGES)
        ]
        if rows.empty:
            return ""
        row = rows.iloc[0]
        if row["note"]:
            return f"abstention AUC: {row['note']}"
        level = f"{self.settings.confidence:.0%}"
        return (
            f"abstention AUC {float(row['before']):.3f} -> {float(row['after']):.3f}, "
            f"{_signed(float(row['diff']))} [{level} {float(row['ci_low']):+.3f}, "
            f"{float(row['ci_high']):+.3f}]"
        )

    @property
    def compared(self) -> tuple[str, ...]:
        """Systems compared with themselves in the baseline, in the run's order."""
        rows = self.systems[self.systems["status"] == "compared"]
        return tuple(str(s) for s in rows["system"])

    def overall(self, system: str | None = None) -> pd.DataFrame:
        """The ``all`` rows (of ``system``, when given)."""
        rows = self.measures[self.measures["language"] == ALL_LANGUAGES]
        if system is not None:
            rows = rows[rows["system"] == system]
        return rows.reset_index(drop=True)

    def significant(self) -> pd.DataFrame:
        """The overall rows that moved significantly, worse before better, then system and
        measure order."""
        return _worse_first(self.overall()).reset_index(drop=True)

    def by_language(self, system: str, measure: str) -> pd.DataFrame:
        """The language rows of ``system`` and ``measure``."""
        rows = self.measures[
            (self.measures["system"] == system)
            & (self.measures["measure"] == measure)
            & (self.measures["language"] != ALL_LANGUAGES)
        ]
        return rows.reset_index(drop=True)

    def languages_moved(self, system: str, measure: str) -> pd.DataFrame:
        """The language rows of ``system`` and ``measure`` that moved differently from the
        whole (``differs``)."""
        rows = self.by_language(system, measure)
        return rows[rows["differs"].astype(bool)].reset_index(drop=True)

    def worst(self, system: str, measure: str, n: int = 5) -> list[str]:
        """IDs of at most ``n`` queries of ``system`` that got worse on ``measure``, worst
        first."""
        rows = self.queries[
            (self.queries["system"] == system)
            & (self.queries["measure"] == measure)
            & (self.queries["change"] == "worse")
        ].sort_values("rank")
        return [str(q) for q in rows["query_id"].head(n)]

    def headline(self, system: str) -> str:
        """``better``, ``worse``, ``mixed`` or ``no significant change`` for ``system``."""
        directions = set(self.overall(system)["direction"]) - {"unchanged"}
        if not directions:
            return "no significant change"
        return directions.pop() if len(directions) == 1 else "mixed"


def _worse_first(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``rows`` that moved (``direction`` not ``unchanged``), ``worse`` before
    ``better``, otherwise in their order."""
    moved = rows[rows["direction"] != "unchanged"]
    return moved.sort_values("direction", key=lambda d: d != "worse", kind="stable")


def _signed(value: float) -> str:
    """``+0.247`` / ``-0.173`` (a true minus sign would not copy into a search box as typed)."""
    return f"{value:+.3f}"


def change_sentence(
    change: Change, system: str, *, name: Callable[[str], str] = str, limit: int = 3
) -> str:
    """``my-system got worse: nDCG@10 -0.173 (zh -0.346), RR@10 -0.214; nDCG@10: 28 worse,
    3 better, 51 unchanged of 82 queries`` — or ``my-system: no significant change (8
    measures, 82 queries)``. Significant overall changes (at most ``limit``, worse first), the
    languages that moved significantly the same way where a language moved differently from
    the whole, and the query counts of the first one. ``name`` formats measure names (e.g.
    as Markdown code spans)."""
    overall = change.overall(system)
    if overall.empty:
        return f"{system}: nothing to compare (no query in common with the baseline)"
    moved = _worse_first(overall)
    if moved.empty:
        text = (
            f"{system}: no significant change ({len(overall)} measures, "
            f"{int(overall['n'].max())} queries)"
        )
        rows = change.measures
        by_language = _worse_first(
            rows[(rows["system"] == system) & (rows["language"] != ALL_LANGUAGES)]
        )
        if by_language.empty:
            return text
        records: list[Any] = list(by_language.head(limit).itertuples(index=False))
        listed = [
            f"{row.language} {row.direction}: {name(str(row.measure))} "
            f"{_signed(float(row.diff))} ({int(row.worse)} worse, "
            f"{int(row.better)} better of {int(row.n)})"
            for row in records
        ]
        return text.replace("change (", "change overall (") + "; by language, " + ", ".join(listed)
    parts = []
    for row in moved.head(limit).itertuples(index=False):
        text = f"{name(str(row.measure))} {_signed(float(row.diff))}"  # type: ignore[arg-type]
        languages = change.languages_moved(system, str(row.measure))
        same_way = languages[languages["direction"] == row.direction]
        if len(same_way):
            text += (
                " ("
                + ", ".join(
                    f"{lang} {_signed(float(diff))}"
                    for lang, diff in zip(same_way["language"], same_way["diff"], strict=True)
                )
                + ")"
            )
        parts.append(text)
    more = len(moved) - limit
    if more > 0:
        parts.append(f"{more} more")
    first = moved.iloc[0]
    counts = (
        f"{name(str(first['measure']))}: {int(first['worse'])} worse, "
        f"{int(first['better'])} better, {int(first['unchanged'])} unchanged of "
        f"{int(first['n'])} queries"
    )
    return f"{system} got {change.headline(system)}: {', '.join(parts)}; {counts}"


_PerQuery = dict[str, dict[str, dict[str, float]]]
"""``{system: {query_id: {measure: value}}}``, a report's ``perQuery`` read once
(:func:`evalkit.results.report_per_query`)."""


def _frame(
    report: _PerQuery, baseline: _PerQuery, system: str, measures: Sequence[str]
) -> pd.DataFrame:
    """Tidy ``system (before|after), query_id, measure, value`` of the queries both have: in
    query ID order, then ``measures`` order, each query's ``after`` row followed by its
    ``before`` row (:func:`_query_rows` reads them in pairs)."""
    after, before = report.get(system, {}), baseline.get(system, {})
    rows = []
    for query_id in sorted(set(after) & set(before)):
        for measure in measures:
            if measure in after[query_id] and measure in before[query_id]:
                rows.append(("after", query_id, measure, after[query_id][measure]))
                rows.append(("before", query_id, measure, before[query_id][measure]))
    return pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])


def _differs_p(d: np.ndarray, inside: np.ndarray, settings: ChangeSettings) -> float:
    """Two-sided permutation p-value of ``mean(d[inside]) - mean(d[~inside])``.

    The value of ``scipy.stats.permutation_test((d[inside], d[~inside]), ...,
    permutation_type="independent", vectorized=True, alternative="two-sided",
    n_resamples=settings.n_resamples, rng=np.random.default_rng(settings.seed))``, computed
    the way SciPy 1.17 computes it (``tests/test_gates_change_permutation.py`` checks it
    against SciPy): every split of the values when there are at most ``n_resamples`` of them
    (exact), else ``n_resamples`` permutations drawn one by one with ``rng.permutation`` (the
    same draws), the same statistic on the same arrays, and the same counts within
    ``100 * eps * |observed|`` (plus one on both sides when sampled). Written out here
    because importing ``scipy.stats`` costs about 1 s and its generic path several
    milliseconds per test; the report and ``evalkit gate`` make one test per system, measure
    and language. Permutations are evaluated ``_PERMUTATION_BLOCK`` at a time (bounded
    memory; each row's statistic is computed on its own). Every test of a comparison draws
    the same permutations (the same seed, count and number of queries): up to
    ``_KEPT_PERMUTATIONS`` positions they are drawn once (:func:`_drawn_permutations`).
    """
    x, y = np.asarray(d[inside], dtype=np.float64), np.asarray(d[~inside], dtype=np.float64)
    n_x, n = len(x), len(x) + len(y)
    data = np.concatenate([x, y])
    observed = float(_mean_difference(x, y))
    exact = settings.n_resamples >= math.comb(n, n_x)
    count = math.comb(n, n_x) if exact else settings.n_resamples
    blocks: Iterator[np.ndarray]
    if not exact and settings.n_resamples * n <= _KEPT_PERMUTATIONS:
        drawn = _drawn_permutations(settings.seed, settings.n_resamples, n)
        blocks = (
            drawn[start : start + _PERMUTATION_BLOCK]
            for start in range(0, count, _PERMUTATION_BLOCK)
        )
    else:
        orders: Iterator[np.ndarray]
        if exact:  # every split, each group's positions in SciPy's (set) order
            everything = set(range(n))
            orders = (
                np.array([*chosen, *(everything - chosen)])
                for chosen in map(set, itertools.combinations(everything, n_x))
            )
        else:
            rng = np.random.default_rng(settings.seed)
            orders = (rng.permutation(n) for _ in range(settings.n_resamples))
        blocks = (np.asarray(block) for block in _blocks(orders, _PERMUTATION_BLOCK))
    null = np.concatenate(
        [
            _mean_difference(rows[:, :n_x], rows[:, n_x:])
            for rows in (data[block] for block in blocks)
        ]
    )
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    adjustment = 0 if exact else 1
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (count + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (count + adjustment)
    return float(np.clip(min(less, greater) * 2, 0.0, 1.0))


#: Permutations per block in :func:`_differs_p`.
_PERMUTATION_BLOCK: Final = 1_000
#: Most positions (permutations times their length) of one draw :func:`_drawn_permutations`
#: keeps (8 bytes each, numpy's index type, which indexes about 3x faster than ``int32``: up
#: to 32 MB; two are kept).
_KEPT_PERMUTATIONS: Final = 4_000_000


@functools.lru_cache(maxsize=2)
def _drawn_permutations(seed: int, count: int, n: int) -> np.ndarray:
    """The ``count`` permutations of ``range(n)`` that ``np.random.default_rng(seed)`` draws
    one after the other with ``permutation(n)``, as the rows of a read-only array (the last
    two asked for are kept: a system's measures over every query and those over a subset,
    such as ``NoAnswerFP`` over the no-answer queries, alternate, and one kept draw would be
    drawn again at every switch)."""
    rng = np.random.default_rng(seed)
    drawn = np.array([rng.permutation(n) for _ in range(count)], dtype=np.intp).reshape(count, n)
    drawn.flags.writeable = False
    return drawn


def _mean_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``mean(x) - mean(y)`` along the last axis (the test statistic, as SciPy is given it)."""
    return np.asarray(np.mean(x, axis=-1) - np.mean(y, axis=-1))


def _blocks(items: Iterator[np.ndarray], size: int) -> Iterator[list[np.ndarray]]:
    while block := list(itertools.islice(items, size)):
        yield block


def compare_with_baseline(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    *,
    query_languages: Mapping[str, str] | None = None,
    settings: ChangeSettings | None = None,
) -> Change:
    """Every system of ``report`` that ``baseline`` also has, compared with itself there
    (module docs). ``query_languages`` maps query IDs to languages (e.g. from the evaluation's
    per-query frame); without it, the report's ``queryLanguages`` when it has them, else no
    language rows."""
    settings = settings or ChangeSettings()
    languages = dict(query_languages or report_query_languages(report, "report") or {})
    run_systems = [str(s) for s in report.get("systems") or []]
    base_systems = [str(s) for s in baseline.get("systems") or []]
    compared = [s for s in run_systems if s in base_systems]
    systems = pd.DataFrame(
        [(s, "compared" if s in base_systems else "added") for s in run_systems]
        + [(s, "removed") for s in base_systems if s not in run_systems],
        columns=list(SYSTEM_CHANGE_COLUMNS),
    )
    order = report_measure_order(report)
    known = set(report_measure_order(baseline))
    measures = [m for m in order if m in known]
    after_per_query: _PerQuery = report_per_query(report, "report") if compared else {}
    before_per_query: _PerQuery = report_per_query(baseline, "baseline") if compared else {}
    kwargs: dict[str, Any] = {
        "test": settings.test,
        "correction": "none",
        "n_resamples": settings.n_resamples,
        "confidence": settings.confidence,
        "alpha": settings.alpha,
        "seed": settings.seed,
    }
    frames: dict[str, pd.DataFrame] = {}
    for system in compared:
        frame = _frame(after_per_query, before_per_query, system, measures)
        if not frame.empty:
            frame["language"] = frame["query_id"].map(languages).fillna("")
            frames[system] = frame
    compared_rows = _compared_rows(frames, measures, bool(languages), kwargs)
    rows: list[pd.DataFrame] = []
    queries: list[pd.DataFrame] = []
    for system, frame in frames.items():
        present = _present(frame, measures)
        result = compared_rows[system]
        result["system"] = system
        result["order"] = result["measure"].map({m: i for i, m in enumerate(present)})
        result["scope"] = (result["language"] != ALL_LANGUAGES).astype(int)
        rows.append(result)
        queries.append(_query_rows(system, frame))
    measures_frame = _measures_frame(rows, queries, settings)
    query_frame = (
        pd.concat(queries, ignore_index=True)
        if queries
        else pd.DataFrame(columns=list(QUERY_CHANGE_COLUMNS))
    )
    return Change(
        measures=measures_frame,
        queries=query_frame,
        latency=_latency(report, baseline, compared),
        systems=systems,
        settings=settings,
        abstention=_abstention_change(
            report,
            baseline,
            compared,
            languages,
            settings,
            per_queries=(after_per_query, before_per_query),
        ),
    )


def _present(frame: pd.DataFrame, measures: Sequence[str]) -> list[str]:
    """The ``measures`` that ``frame`` (:func:`_frame`'s) has rows for, in their order."""
    in_frame = set(frame["measure"].unique())
    return [m for m in measures if m in in_frame]


def _compared_rows(
    frames: Mapping[str, pd.DataFrame],
    measures: Sequence[str],
    by_language: bool,
    kwargs: Mapping[str, Any],
) -> dict[str, pd.DataFrame]:
    """Each system's :func:`evalkit.stats.compare` of its ``after`` with its ``before`` rows
    (:func:`_frame`'s frame, with ``language``): the overall rows, then (``by_language``, when
    its queries have more than one language) the rows by language.

    Systems whose frames have the same rows (query IDs and measures: usually every system) are
    compared in one call with explicit ``pairs`` (their ``after`` and ``before`` renamed apart),
    which gives each pair the numbers of its own call (``compare``'s pairs are resampled from
    the same (measure, group) streams, whatever else the call holds) without paying
    ``compare``'s fixed cost per system. No call can fail for one system and not another: the
    values are finite (:func:`evalkit.results.report_per_query` refuses others) and each
    system's ``after`` and ``before`` have the same queries, so ``compare`` can only refuse
    the settings, whatever the batch."""
    batches: dict[tuple[Any, ...], list[str]] = {}
    for system, frame in frames.items():
        key = (  # tolist: not one pandas scalar per row
            tuple(frame["query_id"].tolist()),
            tuple(frame["measure"].tolist()),
        )
        batches.setdefault(key, []).append(system)
    results: dict[str, pd.DataFrame] = {}
    for systems in batches.values():
        results.update(_compare_together(frames, systems, measures, by_language, kwargs))
    return results


def _compare_together(
    frames: Mapping[str, pd.DataFrame],
    systems: Sequence[str],
    measures: Sequence[str],
    by_language: bool,
    kwargs: Mapping[str, Any],
) -> dict[str, pd.DataFrame]:
    """:func:`_compared_rows` of ``systems``, whose frames have the same rows, in one call;
    each system's rows keep ``compare``'s columns (``system`` and ``base`` the renamed pair's,
    set by the caller)."""
    present = _present(frames[systems[0]], measures)
    renamed = []
    for index, system in enumerate(systems):
        names = {"after": f"{index} after", "before": f"{index} before"}
        renamed.append(frames[system].assign(system=frames[system]["system"].map(names)))
    frame = pd.concat(renamed, ignore_index=True)
    pairs = [(f"{index} after", f"{index} before") for index in range(len(systems))]
    parts = [compare(frame, None, present, pairs=pairs, **kwargs).assign(language=ALL_LANGUAGES)]
    if by_language and frames[systems[0]]["language"].nunique() > 1:
        parts.append(compare(frame, None, present, by="language", pairs=pairs, **kwargs))
    # each part's rows by pair (a pair's rows in their order), split once
    by_pair = [(part, dict(list(part.groupby("system", sort=False)))) for part in parts]
    return {
        system: pd.concat(
            [found.get(after, part.iloc[:0]) for part, found in by_pair], ignore_index=True
        )
        for (after, _), system in zip(pairs, systems, strict=True)
    }


def _abstention_change(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    compared: Sequence[str],
    languages: Mapping[str, str],
    settings: ChangeSettings,
    *,
    per_queries: tuple[_PerQuery, _PerQuery],
) -> pd.DataFrame:
    """The :data:`ABSTENTION_CHANGE_COLUMNS` rows of ``compared`` (module docs): a query is
    a no-answer query when the report's ``perQuery`` gives it ``NoAnswerFP``
    (``per_queries``: the report's and the baseline's ``perQuery``, read once)."""
    after, before = report_confidence(report, "report"), report_confidence(baseline, "baseline")
    rows: list[tuple[Any, ...]] = []
    for system in compared:
        per_query = per_queries[0].get(system, {})
        shared = sorted(set(per_query) & set(per_queries[1].get(system, {})))
        sources = (
            before[1].get(system, "") if before else "",
            after[1].get(system, "") if after else "",
        )
        old_values = before[0].get(system) if before else None
        new_values = after[0].get(system) if after else None
        note = (
            NO_BASELINE_CONFIDENCE
            if old_values is None
            else "n/a: the report has no confidence section"
            if new_values is None
            else ""
        )
        scopes = [(ALL_LANGUAGES, shared)]
        if languages:
            in_language: dict[str, list[str]] = {}
            for query_id in shared:
                in_language.setdefault(languages.get(query_id, ""), []).append(query_id)
            scopes += [(lang, ids) for lang, ids in sorted(in_language.items()) if lang]
        for language, queries in scopes:
            answerable = np.array(["NoAnswerFP" not in per_query[q] for q in queries], dtype=bool)
            if old_values is None or new_values is None or not queries:
                rows.append(
                    (system, language, int(answerable.sum()), int((~answerable).sum()))
                    + (np.nan,) * 5
                    + (*sources, note or "n/a: no query in common with the baseline")
                )
                continue
            result = auc_change(
                [old_values.get(q, -np.inf) for q in queries],
                [new_values.get(q, -np.inf) for q in queries],
                answerable,
                system=system,
                language=language,
                confidence=settings.confidence,
                n_resamples=settings.n_resamples,
                seed=settings.seed,
            )
            rows.append(
                (
                    system,
                    language,
                    result.n_answerable,
                    result.n_no_answer,
                    result.before,
                    result.after,
                    result.diff,
                    result.ci_low,
                    result.ci_high,
                    *sources,
                    result.note,
                )
            )
    return pd.DataFrame(rows, columns=list(ABSTENTION_CHANGE_COLUMNS))


def _measures_frame(
    rows: list[pd.DataFrame], queries: list[pd.DataFrame], settings: ChangeSettings
) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=list(CHANGE_COLUMNS))
    result = pd.concat(rows, ignore_index=True)
    result = result.sort_values("scope", kind="stable").reset_index(drop=True)
    result = result.rename(columns={"base_mean": "before", "mean": "after"})
    result["worse"], result["better"], result["unchanged"] = (
        result["losses"],
        result["wins"],
        result["ties"],
    )
    result["correction"] = settings.correction
    overall = result["language"] == ALL_LANGUAGES
    p_adjusted = np.full(len(result), np.nan)
    for mask in (overall.to_numpy(), (~overall).to_numpy()):  # NaN p-values stay NaN
        p_adjusted[mask] = adjust_pvalues(result.loc[mask, "p_value"], settings.correction)
    result["p_adjusted"] = p_adjusted
    sign = np.where([higher_is_better(str(m)) for m in result["measure"]], 1.0, -1.0)
    significant = result["p_adjusted"].to_numpy() <= settings.alpha
    gain = sign * result["diff"].to_numpy(np.float64)
    result["direction"] = np.where(
        significant & (gain > 0), "better", np.where(significant & (gain < 0), "worse", "unchanged")
    )
    result["differs"] = False
    result["p_differs"] = np.nan
    if (~overall).any():
        every_query = pd.concat(queries, ignore_index=True)
        query_language = every_query["language"].to_numpy(dtype=object)
        query_diff = every_query["diff"].to_numpy(np.float64)
        pairs = {  # each (system, measure)'s rows, in order, as arrays: no sub-frames
            key: (query_language[rows], query_diff[rows])
            for key, rows in every_query.groupby(["system", "measure"], sort=False).indices.items()
        }
        p_values = []
        for system, measure, language in result.loc[
            ~overall, ["system", "measure", "language"]
        ].itertuples(index=False):
            if (system, measure) not in pairs:
                p_values.append(np.nan)
                continue
            in_language, d = pairs[(system, measure)]
            inside = np.asarray(in_language == language, dtype=bool)
            enough = inside.sum() >= 2 and (~inside).sum() >= 2
            p_values.append(_differs_p(d, inside, settings) if enough else np.nan)
        adjusted = adjust_pvalues(p_values, settings.correction)
        result.loc[~overall, "p_differs"] = adjusted
        result.loc[~overall, "differs"] = np.nan_to_num(adjusted, nan=1.0) <= settings.alpha
    result["differs"] = result["differs"].astype(bool)
    return result[list(CHANGE_COLUMNS)].reset_index(drop=True)


def _query_rows(system: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Every shared query of ``system``: before, after, tie-ruled diff, change, rank; measures
    in name order, each from its worst query to its best (ties by query ID).

    ``frame`` is :func:`_frame`'s, whose rows come in pairs (a query's ``after`` row, then its
    ``before`` row) in query ID order: the pairs are read as arrays, with no pivot or grouping
    of the tidy frame (which cost more than the rest of a small comparison)."""
    measure = frame["measure"].to_numpy(dtype=object)[0::2]
    query_id = frame["query_id"].astype(str).to_numpy(dtype=object)[0::2]
    language = frame["language"].astype(str).to_numpy(dtype=object)[0::2]
    value = frame["value"].to_numpy(np.float64)
    after, before = value[0::2], value[1::2]
    order, diffs, gains, ranks = [], [], [], []
    for name in sorted(set(measure)):
        rows = np.flatnonzero(measure == name)  # in query ID order
        d = paired_differences(after[rows], before[rows])
        gain = d * (1.0 if higher_is_better(str(name)) else -1.0)
        worst_first = np.argsort(gain, kind="stable")  # ties keep query ID order
        order.append(rows[worst_first])
        diffs.append(d[worst_first])
        gains.append(gain[worst_first])
        ranks.append(np.arange(1, len(rows) + 1))
    rows = np.concatenate(order)
    d, gain = np.concatenate(diffs), np.concatenate(gains)
    return pd.DataFrame(
        {
            "system": np.full(len(rows), system, dtype=object),
            "measure": measure[rows],
            "query_id": query_id[rows],
            "language": language[rows],
            "before": before[rows],
            "after": after[rows],
            "diff": d,
            "change": np.where(gain < 0, "worse", np.where(gain > 0, "better", "unchanged")),
            "rank": np.concatenate(ranks),
        }
    )[list(QUERY_CHANGE_COLUMNS)]


_MACHINE_KEYS: Final = ("os", "arch", "cpus", "cpuModel")


def _machine_text(machine: Mapping[str, Any]) -> str:
    return f"{machine.get('os')} {machine.get('arch')}, {machine.get('cpus')} CPUs, " + str(
        machine.get("cpuModel") or "unknown CPU"
    )


def _latency(
    report: Mapping[str, Any], baseline: Mapping[str, Any], compared: Sequence[str]
) -> pd.DataFrame:
    after_all = report.get("latency") or {}
    before_all = baseline.get("latency") or {}
    machine_after, machine_before = report.get("machine"), baseline.get("machine")
    same: bool | None = None
    if isinstance(machine_after, Mapping) and isinstance(machine_before, Mapping):
        same = all(machine_after.get(k) == machine_before.get(k) for k in _MACHINE_KEYS)
    rows = []
    for system in compared:
        after, before = after_all.get(system) or {}, before_all.get(system) or {}
        note = ""
        if after.get("measured") is False or before.get("measured") is False:
            note = "not measured (run file)"
        elif not before:
            note = "not recorded in the baseline (written by an older evalkit); refresh it"
        elif not after:
            note = "not measured in this run"
        elif (
            same is False
            and isinstance(machine_after, Mapping)
            and isinstance(machine_before, Mapping)
        ):
            note = (
                f"measured on different machines: baseline {_machine_text(machine_before)}; "
                f"now {_machine_text(machine_after)}"
            )
        median_b, median_a = before.get("medianMs"), after.get("medianMs")
        ratio = (
            float(median_a) / float(median_b)
            if isinstance(median_a, int | float) and isinstance(median_b, int | float) and median_b
            else np.nan
        )
        rows.append(
            (
                system,
                before.get("count"),
                median_b,
                before.get("p95Ms"),
                after.get("count"),
                median_a,
                after.get("p95Ms"),
                ratio,
                same,
                note,
            )
        )
    return pd.DataFrame(rows, columns=list(LATENCY_CHANGE_COLUMNS))
