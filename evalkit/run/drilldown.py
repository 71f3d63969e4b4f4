"""One query, side by side: :func:`evalkit.run.explain` and :meth:`Evaluation.explain
<evalkit.run.Evaluation.explain>` return a :class:`QueryExplanation`, the drill-down a
retrieval engineer reads in JupyterLab when a number moved.

It holds, for one query: the query (text, language, answerable), each system's top k (rank,
chunk ID, score, grade or "unjudged", the chunk text with its answer spans highlighted), the
judged chunks and the rank each system gave them (the relevant ones no system found are
listed), the query's value of every measure per system and its failures. It displays itself
as HTML (``_repr_html_``) and gives the same content as frames.

Privacy: with ``redact=True`` the text (query, chunks, spans) is replaced by ``sha256:<12 hex>``
of it (:func:`evalkit.safety.canonical.text_hash`), as in the report, so the output passes the
leak scan. Without it the HTML starts with a visible label saying that it holds fixture text
and must not be exported; ``evalkit scan`` finds such outputs in a saved notebook and
``evalkit strip`` removes them. Every string of the fixture is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pandas as pd

from evalkit.errors import InputError
from evalkit.safety.canonical import text_hash
from evalkit.safety.names import safe_id

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.fixtures.schema import Chunk, Query
    from evalkit.run._evaluate import Evaluation

__all__ = ["PRIVATE_TEXT_LABEL", "QueryExplanation", "explain_query"]

PRIVATE_TEXT_LABEL: Final = (
    "CONTAINS FIXTURE TEXT: do not export, commit or share this output "
    "(explain(..., redact=True) shows IDs and hashes only; `evalkit strip` removes it "
    "from a saved notebook)"
)
"""The label at the top of an unredacted explanation."""

RANKING_COLUMNS: Final = [
    "system",
    "rank",
    "chunk_id",
    "score",
    "grade",
    "relevant",
    "near_duplicate_of",
    "text",
]
JUDGMENT_COLUMNS: Final = ["chunk_id", "grade", "spans", "found_by", "text"]
MEASURE_COLUMNS: Final = ["system", "measure", "value"]
FAILURE_COLUMNS: Final = ["system", "kind", "chunk_ids"]

_STYLE: Final = (
    "<style>"
    ".evalkit-explain table{border-collapse:collapse;font-size:12px;margin:2px 0 8px 0}"
    ".evalkit-explain th,.evalkit-explain td{border:1px solid #ddd;padding:2px 5px;"
    "vertical-align:top;text-align:left !important}"  # JupyterLab right-aligns table cells
    ".evalkit-explain td.ek-id{white-space:nowrap;width:1%}"
    ".evalkit-explain td.ek-text{min-width:18em}"
    ".evalkit-explain .ek-systems{display:flex;gap:12px;align-items:flex-start;overflow-x:auto}"
    ".evalkit-explain .ek-system{flex:1 1 0;min-width:260px}"
    ".evalkit-explain mark{background:#ffe27a;padding:0 1px}"
    ".evalkit-explain .ek-rel{background:#e6f4ea}"
    ".evalkit-explain .ek-unjudged{color:#888;font-style:italic}"
    ".evalkit-explain .ek-private{background:#c44e52;color:white;font-weight:bold;"
    "padding:4px 8px;margin-bottom:6px}"
    ".evalkit-explain .ek-redacted{color:#555;font-style:italic;margin-bottom:6px}"
    "</style>"
)


@dataclass(frozen=True, repr=False)
class QueryExplanation:
    """The drill-down of one query (module docstring). Frames, IDs as strings:

    - ``rankings``: ``system`` (category, evaluation order), ``rank`` (int64, 1-based),
      ``chunk_id`` (str), ``score`` (float64), ``grade`` (Int64, NA when the chunk is not
      judged for this query), ``relevant`` (bool: grade >= 1), ``near_duplicate_of`` (str or
      None), ``text`` (str: the chunk text, or ``sha256:<12 hex>`` of it when redacted); each
      system's rows in rank order, at most k of them.
    - ``judgments``: ``chunk_id, grade`` (int64), ``spans`` (int64: annotated answer spans),
      ``found_by`` (int64: how many systems returned it), ``text``, then one column per system
      (Int64: the rank it gave the chunk, NA when not in its top k); grade descending, then
      chunk ID.
    - ``measures``: ``system`` (category), ``measure`` (category, evaluation order),
      ``value`` (float64; NaN where the measure does not apply to this query).
    - ``failures``: ``system`` (category), ``kind`` (category), ``chunk_ids`` (list of str).
    """

    query_id: str
    language: str
    answerable: bool
    query_text: str
    systems: tuple[str, ...]
    k: int
    rankings: pd.DataFrame
    judgments: pd.DataFrame
    measures: pd.DataFrame
    failures: pd.DataFrame
    redact: bool
    _marked: dict[tuple[str, str], str]  # (system, chunk_id) -> chunk text as HTML, spans marked

    @property
    def missed(self) -> list[str]:
        """The relevant chunks (grade >= 1) that no system returned in its top k, in the order
        of ``judgments``."""
        rows = self.judgments
        return [
            str(c) for c in rows.loc[(rows["grade"] >= 1) & (rows["found_by"] == 0), "chunk_id"]
        ]

    def __repr__(self) -> str:
        state = "redacted" if self.redact else "UNREDACTED: holds fixture text, do not export"
        return (
            f"<QueryExplanation {self.query_id} ({self.language}, "
            f"{'answerable' if self.answerable else 'no-answer'}): {len(self.systems)} system(s), "
            f"k={self.k}, {len(self.missed)} relevant chunk(s) missed by all; {state}>"
        )

    def _repr_html_(self) -> str:
        return _html(self)


def explain_query(
    evaluation: Evaluation,
    query_id: str,
    systems: Sequence[str] | None = None,
    *,
    redact: bool = False,
) -> QueryExplanation:
    """The drill-down of ``query_id`` in ``evaluation`` for ``systems`` (default: all, in
    evaluation order); what :meth:`Evaluation.explain <evalkit.run.Evaluation.explain>` returns.
    Raises ``InputError`` for a query or system the evaluation does not have."""
    fixture = evaluation.fixture
    if not isinstance(query_id, str) or query_id not in fixture.queries_by_id:
        shown = repr(query_id) if isinstance(query_id, str) and safe_id(query_id) else "given"
        raise InputError(
            f"query {shown} is not in fixture {fixture.id!r}; pick a query_id of "
            "evaluation.per_query (or evaluation.fixture.queries)"
        )
    if isinstance(systems, str):
        systems = [systems]
    chosen = tuple(evaluation.systems if systems is None else systems)
    unknown = [s for s in chosen if s not in evaluation.systems]
    if unknown or not chosen:
        raise InputError(
            f"systems {', '.join(map(repr, unknown)) or '(none)'} not in this evaluation; "
            f"choose among {', '.join(map(repr, evaluation.systems))}"
        )
    query = fixture.query(query_id)
    failures = evaluation.failures()
    return _explanation(
        fixture,
        query,
        evaluation.rankings[evaluation.rankings["query_id"] == query_id],
        evaluation.per_query[evaluation.per_query["query_id"] == query_id],
        failures[failures["query_id"] == query_id],
        systems=chosen,
        measures=evaluation.measures,
        k=evaluation.k,
        redact=redact,
    )


def _explanation(
    fixture: Fixture,
    query: Query,
    rankings: pd.DataFrame,
    per_query: pd.DataFrame,
    failures: pd.DataFrame,
    *,
    systems: tuple[str, ...],
    measures: Sequence[str],
    k: int,
    redact: bool,
) -> QueryExplanation:
    grade_of = {j.chunk_id: j.grade for j in query.judgments}
    spans_of = {j.chunk_id: j.spans for j in query.judgments}
    system_type = pd.CategoricalDtype(list(systems), ordered=True)
    rows = []
    marked: dict[tuple[str, str], str] = {}
    for system in systems:
        mine = rankings[rankings["system"] == system].sort_values("rank", kind="stable")
        for rank, chunk_id, score in zip(
            mine["rank"].tolist(), mine["chunk_id"], mine["score"].tolist(), strict=True
        ):
            chunk = fixture.chunks_by_id.get(chunk_id)
            grade = grade_of.get(chunk_id)
            rows.append(
                (
                    system,
                    int(rank),
                    chunk_id,
                    float(score),
                    grade,
                    grade is not None and grade >= 1,
                    chunk.near_duplicate_of if chunk is not None else None,
                    _shown(chunk.text if chunk is not None else "", redact),
                )
            )
            marked[system, chunk_id] = _marked_text(chunk, spans_of.get(chunk_id, ()), redact)
    ranked = pd.DataFrame(rows, columns=RANKING_COLUMNS).astype(
        {"system": system_type, "rank": "int64", "score": "float64", "grade": "Int64"}
    )
    ranked["relevant"] = ranked["relevant"].astype(bool)

    rank_of = {
        (s, c): r
        for s, c, r in zip(ranked["system"], ranked["chunk_id"], ranked["rank"], strict=True)
    }
    judged = sorted(query.judgments, key=lambda j: (-j.grade, j.chunk_id))
    judgment_rows = []
    for judgment in judged:
        chunk = fixture.chunks_by_id.get(judgment.chunk_id)
        ranks = [rank_of.get((s, judgment.chunk_id)) for s in systems]
        judgment_rows.append(
            (
                judgment.chunk_id,
                judgment.grade,
                len(judgment.spans),
                sum(r is not None for r in ranks),
                _shown(chunk.text if chunk is not None else "", redact),
                *ranks,
            )
        )
        for system in systems:
            marked.setdefault(
                (system, judgment.chunk_id), _marked_text(chunk, judgment.spans, redact)
            )
    judgments = pd.DataFrame(judgment_rows, columns=[*JUDGMENT_COLUMNS, *systems]).astype(
        {
            "grade": "int64",
            "spans": "int64",
            "found_by": "int64",
            **dict.fromkeys(systems, "Int64"),
        }
    )

    values = per_query[per_query["system"].isin(systems)][MEASURE_COLUMNS].copy()
    values["system"] = values["system"].astype(system_type)
    values["measure"] = values["measure"].astype(
        pd.CategoricalDtype([m for m in measures if m in set(values["measure"])], ordered=True)
    )
    values = values.sort_values(["system", "measure"], kind="stable").reset_index(drop=True)
    failed = failures[failures["system"].isin(systems)][FAILURE_COLUMNS].copy()
    failed["system"] = failed["system"].astype(system_type)
    failed["kind"] = failed["kind"].astype("category")
    return QueryExplanation(
        query_id=query.id,
        language=query.language,
        answerable=query.answerable,
        query_text=_shown(query.text, redact),
        systems=systems,
        k=k,
        rankings=ranked.reset_index(drop=True),
        judgments=judgments,
        measures=values,
        failures=failed.reset_index(drop=True),
        redact=redact,
        _marked=marked,
    )


def _shown(text: str, redact: bool) -> str:
    """``sha256:<12 hex>`` of ``text`` when ``redact``, else ``text``."""
    return f"sha256:{text_hash(text)}" if redact else text


def _span_ranges(text: str, spans: Sequence[object]) -> list[tuple[int, int]]:
    """Merged ``[start, end)`` ranges of ``spans`` in ``text``: their offsets when given, else
    every occurrence of the span's text."""
    ranges: list[tuple[int, int]] = []
    for span in spans:
        span_text: str = getattr(span, "text", "")
        start, end = getattr(span, "start", None), getattr(span, "end", None)
        if start is not None and end is not None and text[start:end] == span_text:
            ranges.append((start, end))
            continue
        at = text.find(span_text) if span_text else -1
        while at >= 0:
            ranges.append((at, at + len(span_text)))
            at = text.find(span_text, at + len(span_text))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _marked_text(chunk: Chunk | None, spans: Sequence[object], redact: bool) -> str:
    """The chunk's text as escaped HTML with its answer spans in ``<mark>``; when ``redact``,
    its hash and the number of spans."""
    text = chunk.text if chunk is not None else ""
    if redact:
        count = f" ({len(spans)} span(s))" if spans else ""
        return f"<code>{html.escape(_shown(text, True))}</code>{count}"
    parts, at = [], 0
    for start, end in _span_ranges(text, spans):
        parts.append(html.escape(text[at:start]))
        parts.append(f"<mark>{html.escape(text[start:end])}</mark>")
        at = end
    parts.append(html.escape(text[at:]))
    return "".join(parts)


def _cell(value: object) -> str:
    return (
        "<td>–</td>" if value is None or value is pd.NA else f"<td>{html.escape(str(value))}</td>"
    )


def _html(view: QueryExplanation) -> str:
    e = html.escape
    out = [_STYLE, '<div class="evalkit-explain">']
    if view.redact:
        out.append(
            '<div class="ek-redacted">Redacted: fixture text is shown as SHA-256 hashes only.</div>'
        )
    else:
        out.append(f'<div class="ek-private">⚠ {e(PRIVATE_TEXT_LABEL)}</div>')
    kind = "answerable" if view.answerable else "no-answer"
    out.append(f"<h3>Query {e(view.query_id)} ({e(view.language)}, {kind})</h3>")
    out.append(f"<p><b>Query:</b> {e(view.query_text)}</p>")

    out.append(f"<h4>Top {view.k}, side by side</h4><div class='ek-systems'>")
    for system in view.systems:
        mine = view.rankings[view.rankings["system"] == system]
        out.append(f"<div class='ek-system'><b>{e(system)}</b>")
        if mine.empty:
            out.append("<p>no results (abstained)</p></div>")
            continue
        out.append(
            "<table><tr><th>rank</th><th>chunk</th><th>score</th><th>grade</th><th>text</th></tr>"
        )
        for row in mine.itertuples(index=False):
            grade = (
                "<td class='ek-unjudged'>unjudged</td>" if row.grade is pd.NA else _cell(row.grade)
            )
            duplicate = (
                f"<br><small>near-duplicate of {e(row.near_duplicate_of)}</small>"
                if isinstance(row.near_duplicate_of, str)
                else ""
            )
            css = " class='ek-rel'" if row.relevant else ""
            chunk_id = str(row.chunk_id)
            out.append(
                f"<tr{css}><td>{row.rank}</td><td class='ek-id'>{e(chunk_id)}{duplicate}</td>"
                f"<td>{row.score:.4g}</td>{grade}"
                f"<td class='ek-text'>{view._marked[system, chunk_id]}</td></tr>"
            )
        out.append("</table></div>")
    out.append("</div>")

    out.append("<h4>Judged chunks and where each system ranked them</h4>")
    if view.judgments.empty:
        out.append("<p>No-answer query: no chunk is judged for it.</p>")
    else:
        missed = view.missed
        out.append(
            f"<p>Relevant chunks no system found: {e(', '.join(missed)) if missed else 'none'}."
            "</p><table><tr><th>chunk</th><th>grade</th>"
            + "".join(f"<th>{e(s)}</th>" for s in view.systems)
            + "<th>text</th></tr>"
        )
        for judged in view.judgments.to_dict("records"):
            ranks = "".join(_cell(judged[s]) for s in view.systems)
            chunk_id = str(judged["chunk_id"])
            out.append(
                f"<tr><td class='ek-id'>{e(chunk_id)}</td><td>{judged['grade']}</td>{ranks}"
                f"<td class='ek-text'>{view._marked[view.systems[0], chunk_id]}</td></tr>"
            )
        out.append("</table>")

    out.append("<h4>Measures</h4>")
    wide = view.measures.pivot_table(
        index="measure", columns="system", values="value", observed=True, dropna=False
    )
    out.append("<table><tr><th>measure</th>" + "".join(f"<th>{e(s)}</th>" for s in view.systems))
    out.append("</tr>")
    for measure in wide.index:
        cells = "".join(
            "<td>n/a</td>"
            if s not in wide.columns or pd.isna(wide.loc[measure, s])
            else f"<td>{float(wide.loc[measure, s]):.4f}</td>"
            for s in view.systems
        )
        out.append(f"<tr><td>{e(str(measure))}</td>{cells}</tr>")
    out.append("</table><h4>Failures</h4>")
    if view.failures.empty:
        out.append("<p>none</p>")
    else:
        out.append("<table><tr><th>system</th><th>kind</th><th>chunks</th></tr>")
        for system, kind, chunk_ids in zip(
            view.failures["system"], view.failures["kind"], view.failures["chunk_ids"], strict=True
        ):
            out.append(
                f"<tr><td>{e(str(system))}</td><td>{e(str(kind))}</td>"
                f"<td>{e(', '.join(map(str, chunk_ids)))}</td></tr>"
            )
        out.append("</table>")
    out.append("</div>")
    return "".join(out)
