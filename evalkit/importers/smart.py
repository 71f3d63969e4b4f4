"""The SMART format of the classic test collections (Cranfield, CISI, CACM, Medline, NPL, ...).

A SMART file is a sequence of records. A record starts with a line ``.I <id>``; each field
starts with a line holding only ``.<letter>`` (``.T`` title, ``.A`` authors, ``.B``
bibliography, ``.W`` text, ``.X`` cross-references, ...) and runs to the next field or record.

- **Documents** (:func:`smart_source`, ``documents``): the ID of ``.I``, the title of ``.T``
  (white space collapsed), the text of ``.W`` (line breaks kept). A record with a ``.T`` and
  no ``.W`` text keeps its title as its text (counted "title only"); a record with neither is
  dropped as empty. ``.A`` (authors, one per line), ``.B`` (source), ``.N`` (entry notes),
  ``.K`` (keywords) and ``.C`` (categories) become :attr:`SourceDocument.metadata` pairs
  (``("author", ...)``): counted, never text a system searches or a report prints. ``.X``
  (citation triples: numbers) and any other field are not imported, counted by letter.
- **Queries** (``queries``): the ID of ``.I`` (``query_ids="as-written"``) or the query's
  number in file order, 1, 2, ... (``query_ids="order"``: Cranfield's judgments number its
  queries that way, not by their ``.I``), and the text of ``.W``, with the record's ``.T``
  joined before it when it has one (white space collapsed). Other query fields are counted as
  not imported. Without ``query_ids``, judgments that number the queries 1..N in file order
  while the ``.I`` values do not run 1..N (and some judged number is no ``.I``) are refused:
  both readings are possible, and the wrong one pairs judgments with the wrong queries.
- **Judgments** (``qrels``): one layout per file (:data:`QRELS_LAYOUTS`), detected by
  :func:`detect_qrels_layout` or given (``--qrels-layout``):

  - ``query-doc-grade``: ``query document grade`` (Cranfield's ``cranqrel``);
  - ``query-0-doc-grade``: TREC's ``query iteration document grade``;
  - ``query-doc-binary``: ``query document`` and optionally columns that carry no grade (each
    holds one value in the whole file, CISI's ``1 28 0 0.000000``): every listed pair is
    relevant, grade 1.

  Grades are read as written; map a collection's scale with ``--grade-map``
  (:mod:`evalkit.importers.core`). IDs that differ only by zero-padding (``01`` and ``1``)
  are matched by :func:`evalkit.importers.core.import_collection`, for every format.

Errors name the file (by name only) and the line, never the content.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from evalkit.errors import InputError
from evalkit.importers.core import SourceDocument, SourceJudgment, SourceQuery, unpadded
from evalkit.importers.grades import whole_grade
from evalkit.importers.sources import lines

__all__ = [
    "QRELS_LAYOUTS",
    "QUERY_IDS",
    "QrelsLayout",
    "SmartCounts",
    "SmartSource",
    "detect_qrels_layout",
    "layout_judgments",
    "smart_source",
]

QUERY_IDS: Final = ("as-written", "order")
QRELS_LAYOUTS: Final = ("query-doc-grade", "query-0-doc-grade", "query-doc-binary")
_LAYOUT_TEXT: Final = {
    "query-doc-grade": "query doc grade",
    "query-0-doc-grade": "query 0 doc grade (TREC)",
    "query-doc-binary": "query doc, binary: every listed pair relevant",
}
_LAYOUT_COLUMNS: Final = {"query-doc-grade": (3,), "query-0-doc-grade": (4,)}
#: Document fields kept as metadata, by letter: the metadata name.
METADATA_FIELDS: Final = {
    "A": "author",
    "B": "source",
    "N": "notes",
    "K": "keywords",
    "C": "categories",
}
_FIELD: Final = re.compile(r"^\.([A-Z])\s*$")
_RECORD: Final = re.compile(r"^\.I(?:\s+(\S+))?\s*$")


@dataclass(frozen=True)
class QrelsLayout:
    """A judgment file's layout: its name (:data:`QRELS_LAYOUTS`), its number of columns, and
    why it was chosen (detected, or given)."""

    name: str
    columns: int
    reason: str

    def decision(self) -> str:
        """The line the import prints: ``judgments: <layout> (<reason>)``."""
        return f"judgments: {_LAYOUT_TEXT[self.name]} ({self.reason})"


@dataclass
class SmartCounts:
    """What reading SMART files kept and left out, filled as the streams are consumed."""

    documents: int = 0
    title_and_text: int = 0
    title_only: int = 0
    text_only: int = 0
    empty: int = 0
    metadata: Counter[str] = field(default_factory=Counter)  # metadata name -> values
    not_imported: Counter[str] = field(default_factory=Counter)  # letter -> records
    citation_lines: int = 0
    queries: int = 0
    title_joined: int = 0
    query_not_imported: Counter[str] = field(default_factory=Counter)
    grades: Counter[int] = field(default_factory=Counter)
    judged_queries: set[str] = field(default_factory=set)


@dataclass
class SmartSource:
    """The streams of a SMART collection, its judgment layout, and the counts of
    :class:`SmartCounts` (complete once the streams are consumed; :meth:`lines`)."""

    documents: Iterator[SourceDocument]
    queries: Iterator[SourceQuery]
    judgments: Iterator[SourceJudgment]
    layout: QrelsLayout
    counts: SmartCounts

    def lines(self) -> list[str]:
        """What was read, as text lines (counts and field letters only, never content)."""
        c = self.counts
        grades = ", ".join(f"{g}: {n:,}" for g, n in sorted(c.grades.items())) or "none"
        out = [
            self.layout.decision(),
            f"grades as read: {grades}; judged queries: {len(c.judged_queries):,}",
            f"documents read: {c.documents:,}: title and text {c.title_and_text:,}, title only "
            f"(kept, the title as text) {c.title_only:,}, text only {c.text_only:,}, neither "
            f"{c.empty:,}",
        ]
        if c.metadata:
            kept = ", ".join(f"{name} {n:,}" for name, n in sorted(c.metadata.items()))
            out.append(f"document metadata read (never searched or printed in reports): {kept}")
        dropped = []
        if c.not_imported["X"]:
            dropped.append(
                f".X citation triples in {c.not_imported['X']:,} records "
                f"({c.citation_lines:,} lines of numbers)"
            )
        dropped += [
            f".{letter} in {n:,} records"
            for letter, n in sorted(c.not_imported.items())
            if letter != "X"
        ]
        dropped += [
            f"query .{letter} in {n:,} queries"
            for letter, n in sorted(c.query_not_imported.items())
        ]
        if dropped:
            out.append("fields not imported: " + "; ".join(dropped))
        if c.title_joined:
            out.append(f"queries read: {c.queries:,}; .T joined before .W: {c.title_joined:,}")
        return out


def _records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """``(line, id, {field letter: text})`` of each record of ``path`` (a field given several
    times holds its texts joined by line breaks)."""
    start, record_id, fields, current = 0, "", dict[str, list[str]](), ""
    for number, line in lines(path):
        text = line.rstrip("\r\n")
        record = _RECORD.match(text)
        if record is not None:
            if start:
                yield start, record_id, {k: "\n".join(v) for k, v in fields.items()}
            if record.group(1) is None:
                raise InputError(f"{path.name} line {number}: '.I' without an ID; expected '.I 12'")
            start, record_id, fields, current = number, record.group(1), {}, ""
            continue
        field_start = _FIELD.match(text)
        if field_start is not None:
            current = field_start.group(1)
            fields.setdefault(current, [])
            continue
        if not start:
            if text.strip():
                raise InputError(
                    f"{path.name} line {number}: text before the first record; a SMART file "
                    "starts with '.I <id>'"
                )
            continue
        if current:
            fields[current].append(text)
    if start:
        yield start, record_id, {k: "\n".join(v) for k, v in fields.items()}


def _documents(path: Path, counts: SmartCounts) -> Iterator[SourceDocument]:
    for _, record_id, fields in _records(path):
        counts.documents += 1
        title = " ".join(fields.get("T", "").split())
        text = fields.get("W", "").strip()
        if title and text:
            counts.title_and_text += 1
        elif title:
            counts.title_only += 1
            text = title
        elif text:
            counts.text_only += 1
        else:
            counts.empty += 1
        metadata: list[tuple[str, str]] = []
        for letter, value in fields.items():
            if letter in ("T", "W"):
                continue
            if letter in METADATA_FIELDS:
                name = METADATA_FIELDS[letter]
                values = [" ".join(v.split()) for v in value.splitlines()]
                if letter != "A":  # one author per line; other fields are one value
                    values = [" ".join(value.split())]
                kept = [(name, v) for v in values if v]
                metadata += kept
                counts.metadata[name] += len(kept)
                continue
            counts.not_imported[letter] += 1
            if letter == "X":
                counts.citation_lines += sum(1 for v in value.splitlines() if v.strip())
        yield SourceDocument(id=record_id, text=text, title=title, metadata=tuple(metadata))


def _queries(path: Path, query_ids: str, counts: SmartCounts) -> Iterator[SourceQuery]:
    for order, (_, record_id, fields) in enumerate(_records(path), start=1):
        counts.queries += 1
        query_id = str(order) if query_ids == "order" else record_id
        title = fields.get("T", "")
        if title.strip():
            counts.title_joined += 1
        for letter in fields.keys() - {"T", "W"}:
            counts.query_not_imported[letter] += 1
        yield SourceQuery(id=query_id, text=" ".join(f"{title} {fields.get('W', '')}".split()))


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line, columns)`` of each non-blank, non-comment line of a judgment file."""
    return (
        (number, parts)
        for number, line in lines(path)
        if (parts := line.split()) and not parts[0].startswith("#")
    )


def _graded(values: set[str]) -> str:
    """Why a column of ``values`` is (``""``) or is not a grade column (grades read as
    :func:`~evalkit.importers.grades.whole_grade` reads them)."""
    try:
        grades = [whole_grade(v, "") for v in values]
    except InputError:
        return "holds values that are not whole numbers"
    if max(grades) < 1:
        return "holds no grade of 1 or more (no judgment would be relevant)"
    return ""


def detect_qrels_layout(qrels: str | os.PathLike[str]) -> QrelsLayout:
    """The layout of a judgment file, by the rule of the module docstring.

    Every line must have the same number of columns. Candidates: 2 columns ->
    ``query-doc-binary``; 3 -> ``query-doc-grade`` when column 3 holds whole numbers of which
    one is 1 or more, else ``query-doc-binary`` when column 3 holds one value; 4 ->
    ``query-0-doc-grade`` when column 2 holds one value (TREC's iteration) and column 4 whole
    numbers of which one is 1 or more, ``query-doc-binary`` when columns 3 and 4 each hold one
    value. One candidate is used; none or several are refused (:class:`InputError` saying
    why, or naming the candidates and ``--qrels-layout``)."""
    path = Path(qrels)
    rows = list(_rows(path))
    if not rows:
        raise InputError(f"{path.name}: no judgment line; expected 'query doc grade' lines")
    first: dict[int, int] = {}
    for number, parts in rows:
        first.setdefault(len(parts), number)
    if len(first) > 1:
        found = ", ".join(
            f"{n} columns (first on line {line})" for n, line in sorted(first.items())
        )
        raise InputError(
            f"{path.name}: its lines do not have one number of columns: {found}; a judgment "
            "file has one layout (fix the file)"
        )
    width = next(iter(first))
    columns = [{parts[i] for _, parts in rows} for i in range(width)]
    candidates: list[QrelsLayout] = []
    why: list[str] = []
    if width == 2:
        candidates.append(QrelsLayout("query-doc-binary", 2, "detected: two columns"))
    elif width == 3:
        problem = _graded(columns[2])
        if not problem:
            reason = "detected: column 3 holds whole-number grades"
            candidates.append(QrelsLayout("query-doc-grade", 3, reason))
        elif len(columns[2]) == 1:
            reason = "detected: column 3 holds one value and no grade"
            candidates.append(QrelsLayout("query-doc-binary", 3, reason))
        else:
            why.append(f"column 3 {problem} and takes {len(columns[2])} values")
    elif width == 4:
        problem = _graded(columns[3])
        if len(columns[1]) == 1 and not problem:
            reason = "detected: column 2 holds one value, column 4 whole-number grades"
            candidates.append(QrelsLayout("query-0-doc-grade", 4, reason))
        elif len(columns[1]) > 1:
            why.append(f"column 2 takes {len(columns[1])} values, so it is not TREC's iteration")
        else:
            why.append(f"column 4 {problem}")
        if len(columns[2]) == 1 and len(columns[3]) == 1:
            reason = "detected: columns 3 and 4 hold one value each and carry no grade"
            candidates.append(QrelsLayout("query-doc-binary", 4, reason))
        else:
            why.append("columns 3 and 4 do not each hold one value, so they are not constant")
    else:
        why.append(f"its lines have {width} columns; the layouts have 2, 3 or 4")
    if len(candidates) == 1:
        return candidates[0]
    choices = ", ".join(QRELS_LAYOUTS)
    if candidates:
        names = " and ".join(c.name for c in candidates)
        raise InputError(
            f"{path.name}: the judgments fit {names}; choose with --qrels-layout ({choices}); "
            "nothing was written"
        )
    raise InputError(
        f"{path.name}: no judgment layout fits: {'; '.join(why)}; give --qrels-layout "
        f"({choices}) or fix the file (nothing was written)"
    )


def _given_layout(name: str) -> QrelsLayout:
    if name not in QRELS_LAYOUTS:
        raise InputError(
            f"--qrels-layout {name!r} should be auto or one of {', '.join(QRELS_LAYOUTS)}"
        )
    return QrelsLayout(name, 0, "given by --qrels-layout")


def layout_judgments(
    qrels: str | os.PathLike[str], layout: QrelsLayout, counts: SmartCounts | None = None
) -> Iterator[SourceJudgment]:
    """The judgments of ``qrels`` read in ``layout``; a line with another number of columns
    than the layout's is an :class:`InputError` (file name and line). ``counts`` collects the
    grades as read and the judged queries."""
    path = Path(qrels)
    widths = (2, 3, 4) if layout.name == "query-doc-binary" else _LAYOUT_COLUMNS[layout.name]
    if layout.columns:
        widths = (layout.columns,)
    for number, parts in _rows(path):
        if len(parts) not in widths:
            raise InputError(
                f"{path.name} line {number}: {len(parts)} columns; the layout {layout.name} "
                f"has {' or '.join(map(str, widths))} ({_LAYOUT_TEXT[layout.name]})"
            )
        where = f"{path.name} line {number}"
        if layout.name == "query-doc-binary":
            query, document, grade = parts[0], parts[1], 1
        elif layout.name == "query-doc-grade":
            query, document, grade = parts[0], parts[1], whole_grade(parts[2], where)
        else:
            query, document, grade = parts[0], parts[2], whole_grade(parts[3], where)
        if counts is not None:
            counts.grades[grade] += 1
            counts.judged_queries.add(query)
        yield SourceJudgment(query_id=query, document_id=document, grade=grade)


def _check_query_numbering(queries: Path, qrels: Path, layout: QrelsLayout) -> None:
    """Refuse judgments that may number the queries in file order (module docstring)."""
    record_ids = [(unpadded(record_id) or record_id) for _, record_id, _ in _records(queries)]
    ordinals = {str(n) for n in range(1, len(record_ids) + 1)}
    judged = {(unpadded(j.query_id) or j.query_id) for j in layout_judgments(qrels, layout)}
    if judged <= ordinals and set(record_ids) != ordinals and judged - set(record_ids):
        raise InputError(
            f"the judgments may number the queries 1..{len(record_ids)} in file order while "
            f"the queries' .I do not run 1..{len(record_ids)} (some judged query numbers are no "
            ".I): give --query-ids order (judgments by file order, as Cranfield's) or "
            "--query-ids as-written (by .I); nothing was written"
        )


def smart_source(
    documents: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    qrels: str | os.PathLike[str],
    *,
    query_ids: str | None = None,
    qrels_layout: str = "auto",
) -> SmartSource:
    """Documents, queries and judgments of SMART files (formats in the module docstring).

    ``query_ids`` None: ``as-written`` after the file-order check; ``qrels_layout`` ``auto``:
    :func:`detect_qrels_layout`. Both checks read the small files once, before anything is
    written."""
    if query_ids is not None and query_ids not in QUERY_IDS:
        raise InputError(f"query IDs {query_ids!r} should be one of {', '.join(QUERY_IDS)}")
    qrels_path, queries_path = Path(qrels), Path(queries)
    layout = (
        detect_qrels_layout(qrels_path) if qrels_layout == "auto" else _given_layout(qrels_layout)
    )
    if query_ids is None:
        _check_query_numbering(queries_path, qrels_path, layout)
    counts = SmartCounts()
    return SmartSource(
        documents=_documents(Path(documents), counts),
        queries=_queries(queries_path, query_ids or "as-written", counts),
        judgments=layout_judgments(qrels_path, layout, counts),
        layout=layout,
        counts=counts,
    )
