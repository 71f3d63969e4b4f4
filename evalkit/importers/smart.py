"""The SMART format of the classic test collections (Cranfield, CISI, CACM, Medline, NPL, ...).

A SMART file is a sequence of records. A record starts with a line ``.I <id>``; each field
starts with a line holding only ``.<letter>`` (``.T`` title, ``.A`` authors, ``.B``
bibliography, ``.W`` text, ``.X`` cross-references, ...) and runs to the next field or record.

- **Documents** (:func:`smart_source`, ``documents``): the ID of ``.I``, the title of ``.T``
  (white space collapsed), the text of ``.W`` (line breaks kept). Other fields are not text a
  system searches and are not imported.
- **Queries** (``queries``): the ID of ``.I`` (``query_ids="as-written"``) or the query's
  number in file order, 1, 2, ... (``query_ids="order"``: Cranfield's judgments number its
  queries that way, not by their ``.I``), and the text of ``.W`` (white space collapsed).
- **Judgments** (``qrels``): a TREC qrels file (``query iteration document grade``) or the
  three-column SMART form (``query document grade``), chosen per line by its number of
  columns. Grades are read as written; map a collection's scale with ``--grade-map``
  (:mod:`evalkit.importers.core`).

Errors name the file (by name only) and the line, never the content.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from evalkit.errors import InputError
from evalkit.importers.core import SourceDocument, SourceJudgment, SourceQuery
from evalkit.importers.sources import lines, qrels_judgments

__all__ = ["QUERY_IDS", "smart_source"]

QUERY_IDS: Final = ("as-written", "order")
_FIELD: Final = re.compile(r"^\.([A-Z])\s*$")
_RECORD: Final = re.compile(r"^\.I(?:\s+(\S+))?\s*$")


def _records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """``(line, id, {field letter: text})`` of each record of ``path``."""
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
        field = _FIELD.match(text)
        if field is not None:
            current = field.group(1)
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


def _documents(path: Path) -> Iterator[SourceDocument]:
    for _, record_id, fields in _records(path):
        title = " ".join(fields.get("T", "").split())
        yield SourceDocument(id=record_id, text=fields.get("W", "").strip(), title=title)


def _queries(path: Path, query_ids: str) -> Iterator[SourceQuery]:
    for order, (_, record_id, fields) in enumerate(_records(path), start=1):
        query_id = str(order) if query_ids == "order" else record_id
        yield SourceQuery(id=query_id, text=" ".join(fields.get("W", "").split()))


def smart_source(
    documents: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    qrels: str | os.PathLike[str],
    *,
    query_ids: str = "as-written",
) -> tuple[Iterator[SourceDocument], Iterator[SourceQuery], Iterator[SourceJudgment]]:
    """Documents, queries and judgments of SMART files (formats in the module docstring)."""
    if query_ids not in QUERY_IDS:
        raise InputError(f"query IDs {query_ids!r} should be one of {', '.join(QUERY_IDS)}")
    return (
        _documents(Path(documents)),
        _queries(Path(queries), query_ids),
        qrels_judgments(Path(qrels), smart=True),
    )
