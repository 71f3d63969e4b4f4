"""Readers of source collections, as streams of :mod:`evalkit.importers.core` records.

- **BEIR** (:func:`beir_source`): ``corpus.jsonl`` (``_id``, ``title``, ``text``),
  ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id``,
  ``corpus-id``, ``score``, with a header line); ``.gz`` versions are read too.
- **TREC** (:func:`trec_source`): a qrels file (``query_id iteration doc_id grade``); topics in
  TREC ``<top>`` format (``<num>``, and the ``<title>`` or ``<desc>`` field) or TSV
  (``id<TAB>text``); a corpus as JSONL (``id``/``_id``/``docno``, ``title``,
  ``text``/``contents``/``body``) or TREC ``<DOC>`` SGML (``<DOCNO>``, the text of ``<TEXT>``
  elements, else everything but ``<DOCNO>``; the title from ``<HEADLINE>``/``<TITLE>``).
- **Tables** (:func:`table_rows`): JSONL, CSV or Parquet, chosen by suffix; columns are mapped
  by name (:class:`TableColumns`). An answer column may hold one string, a JSON list of
  strings, or a list (JSONL/Parquet).

Everything streams: a file is read line by line (Parquet batch by batch). Errors name the file
(by name only), the line and the field, never the content.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

from evalkit.errors import InputError
from evalkit.importers.columns import TableColumns
from evalkit.importers.core import SourceDocument, SourceJudgment, SourceQuery
from evalkit.importers.grades import whole_grade
from evalkit.registry import did_you_mean
from evalkit.safety.inputs import MAX_DEPTH, json_too_deep

__all__ = [
    "TableColumns",
    "beir_source",
    "table_rows",
    "table_source",
    "trec_source",
]

_TAG: Final = re.compile(r"<[^>]+>")


def _open(path: Path) -> IO[str]:
    """``path`` as UTF-8 text (a leading byte-order mark is dropped), gunzipped for ``.gz``;
    lines keep their endings as written (``newline=""``)."""
    try:
        if path.is_dir():
            raise IsADirectoryError
        if path.suffix == ".gz":
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
        return path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(f"{path.name!r} does not exist (looked for {path.name})") from None
    except IsADirectoryError:
        raise InputError(f"{path.name!r} is a directory; expected a file") from None
    except OSError as error:
        raise InputError(f"{path.name!r} cannot be read ({type(error).__name__})") from None


@contextlib.contextmanager
def _reading(path: Path, line: Callable[[], int]) -> Iterator[None]:
    """Turn what reading ``path`` can raise into an ``InputError`` naming the file and the line
    ``line()`` had reached: bytes that are not UTF-8, a damaged or truncated gzip stream."""
    try:
        yield
    except UnicodeDecodeError:
        raise InputError(
            f"{path.name} line {_first_undecodable_line(path) or line() + 1}: not UTF-8 text; "
            "convert the file to UTF-8"
        ) from None
    except (EOFError, OSError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
        raise InputError(
            f"{path.name} line {line() + 1}: the compressed file is damaged or truncated "
            f"({type(error).__name__}); write it again"
        ) from None


def _first_undecodable_line(path: Path) -> int | None:
    """The number of the first line of ``path`` that is not UTF-8 (text is decoded in blocks,
    so the line a decoding error surfaces at may be an earlier one); None if none is found."""
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    return number
    except (EOFError, OSError, zlib.error):
        return None
    return None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    number = 0
    with _open(path) as handle, _reading(path, lambda: number):
        for number, line in enumerate(handle, start=1):
            yield number, line


def _jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, object)`` of each non-blank line of a JSONL file; ``where`` is
    ``"NAME line N"``, for errors."""
    for number, line in _lines(path):
        if not line.strip():
            continue
        if json_too_deep(line):
            raise InputError(
                f"{path.name} line {number}: not valid JSON (nested more than {MAX_DEPTH} "
                "levels deep)"
            )
        try:
            item = json.loads(line)
        except ValueError:  # JSONDecodeError, or an integer of more than 4300 digits
            raise InputError(f"{path.name} line {number}: not valid JSON") from None
        if not isinstance(item, dict):
            raise InputError(f"{path.name} line {number}: expected a JSON object")
        yield f"{path.name} line {number}", item


def _field(item: dict[str, Any], names: tuple[str, ...], where: str, *, required: bool) -> str:
    for name in names:
        value = item.get(name)
        if value is not None:
            if isinstance(value, str | int) and not isinstance(value, bool):
                return str(value)
            raise InputError(f"{where}: field {name!r} should be a string")
    if required:
        raise InputError(f"{where}: missing field {' or '.join(repr(n) for n in names)}")
    return ""


def _find(root: Path, name: str) -> Path:
    for candidate in (root / name, root / f"{name}.gz"):
        if candidate.exists():
            return candidate
    raise InputError(f"the BEIR folder has no {name}; expected corpus.jsonl, queries.jsonl, qrels/")


# --- BEIR -------------------------------------------------------------------------------------


def _beir_documents(path: Path) -> Iterator[SourceDocument]:
    for where, item in _jsonl(path):
        yield SourceDocument(
            id=_field(item, ("_id",), where, required=True),
            text=_field(item, ("text",), where, required=False),
            title=_field(item, ("title",), where, required=False),
        )


def _beir_queries(path: Path) -> Iterator[SourceQuery]:
    for where, item in _jsonl(path):
        yield SourceQuery(
            id=_field(item, ("_id",), where, required=True),
            text=_field(item, ("text",), where, required=True),
        )


def _beir_qrels(path: Path) -> Iterator[SourceJudgment]:
    for number, line in _lines(path):
        parts = line.rstrip("\r\n").split("\t")
        if number == 1 and parts[:2] == ["query-id", "corpus-id"]:
            continue
        if not line.strip():
            continue
        if len(parts) != 3:
            raise InputError(f"{path.name} line {number}: expected query-id, corpus-id, score")
        grade = whole_grade(parts[2], f"{path.name} line {number}", "score")
        yield SourceJudgment(query_id=parts[0], document_id=parts[1], grade=grade)


def beir_source(
    folder: str | os.PathLike[str], split: str = "test"
) -> tuple[Iterator[SourceDocument], Iterator[SourceQuery], Iterator[SourceJudgment]]:
    """Documents, queries and judgments of a BEIR folder's ``split`` (streams)."""
    root = Path(folder)
    if root.is_file():
        raise InputError(
            f"{root.name!r} is a file; expected the BEIR folder that holds corpus.jsonl, "
            "queries.jsonl and qrels/"
        )
    if not root.is_dir():
        raise InputError(f"BEIR folder {root.name!r} does not exist")
    corpus, queries = _find(root, "corpus.jsonl"), _find(root, "queries.jsonl")
    try:
        qrels = _find(root / "qrels", f"{split}.tsv")
    except InputError:
        splits = sorted(
            p.name.removesuffix(".gz").removesuffix(".tsv")
            for p in (root / "qrels").glob("*.tsv*")
            if p.name.endswith((".tsv", ".tsv.gz"))
        )
        raise InputError(
            f"the BEIR folder has no qrels/{split}.tsv; its splits: "
            f"{', '.join(splits) if splits else 'none (qrels/ holds no .tsv file)'}; pick one "
            "with --split"
        ) from None
    return _beir_documents(corpus), _beir_queries(queries), _beir_qrels(qrels)


#: The line reader, for the readers of other modules (:mod:`.smart`).
lines = _lines

# --- TREC -------------------------------------------------------------------------------------


def qrels_judgments(path: Path) -> Iterator[SourceJudgment]:
    """The judgments of a TREC qrels file (``query iteration document grade``). The SMART
    family's layouts: :func:`evalkit.importers.smart.layout_judgments`."""
    for number, line in _lines(path):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != 4:
            raise InputError(
                f"{path.name} line {number}: expected 'query_id iteration doc_id grade'"
            )
        grade = whole_grade(parts[-1], f"{path.name} line {number}")
        yield SourceJudgment(query_id=parts[0], document_id=parts[-2], grade=grade)


_TOPIC_FIELD: Final = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)


def _trec_topics(path: Path, field: str) -> Iterator[SourceQuery]:
    first = next((line for _, line in _lines(path) if line.strip()), "")
    if "<top>" not in first.lower():
        for number, line in _lines(path):
            if not line.strip():
                continue
            parts = line.rstrip("\r\n").split("\t", 1)
            if len(parts) != 2:
                raise InputError(f"{path.name} line {number}: expected 'id<TAB>text'")
            yield SourceQuery(id=parts[0].strip(), text=parts[1].strip())
        return
    for _, block in _blocks(path, "top"):
        yield _topic(block, field, path)


def _blocks(path: Path, tag: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each ``<tag>...</tag>`` element of ``path`` (tags in any case, with
    or without attributes, anywhere on a line, several per line), with the line it starts on.
    Text outside the elements is skipped; an element left open at the next one's start or at
    the end of the file is an ``InputError``."""
    opening = re.compile(rf"<{tag}(?:\s[^>]*)?>", re.IGNORECASE)
    closing = re.compile(rf"</{tag}\s*>", re.IGNORECASE)
    block, start = "", 0  # the open element's text so far, and its first line (0: none open)
    for number, line in _lines(path):
        rest = line
        while rest:
            if not start:
                found = opening.search(rest)
                if found is None:
                    break
                rest, start, block = rest[found.end() :], number, ""
            end, again = closing.search(rest), opening.search(rest)
            if again is not None and (end is None or again.start() < end.start()):
                raise InputError(
                    f"{path.name} line {start}: a <{tag.upper()}> is not closed before the next "
                    f"one (line {number}); add </{tag.upper()}>"
                )
            if end is None:
                block += rest
                break
            yield start, block + rest[: end.start()]
            rest, start = rest[end.end() :], 0
    if start:
        raise InputError(
            f"{path.name} line {start}: a <{tag.upper()}> is never closed; add </{tag.upper()}>"
        )


def _topic(block: str, field: str, path: Path) -> SourceQuery:
    fields: dict[str, str] = {}
    pieces = _TOPIC_FIELD.split(block)
    for name, value in zip(pieces[1::2], pieces[2::2], strict=True):
        fields[name.lower()] = " ".join(_TAG.sub(" ", value).split())
    number = re.sub(r"^(Number:)\s*", "", fields.get("num", ""), flags=re.IGNORECASE).strip()
    text = re.sub(r"^(Description:|Topic:)\s*", "", fields.get(field, ""), flags=re.IGNORECASE)
    if not number:
        raise InputError(f"{path.name}: a <top> block has no <num>")
    return SourceQuery(id=number, text=text.strip())


def _sgml_documents(path: Path) -> Iterator[SourceDocument]:
    for _, block in _blocks(path, "doc"):
        yield _sgml_document(block, path)


def _element(block: str, name: str) -> list[str]:
    pattern = re.compile(rf"<{name}(?:\s[^>]*)?>(.*?)</{name}>", re.IGNORECASE | re.DOTALL)
    return pattern.findall(block)


def _sgml_document(block: str, path: Path) -> SourceDocument:
    docno = _element(block, "DOCNO")
    if not docno:
        raise InputError(f"{path.name}: a <DOC> has no <DOCNO>")
    texts = _element(block, "TEXT")
    if not texts:
        body = re.sub(r"<DOCNO>.*?</DOCNO>", " ", block, flags=re.IGNORECASE | re.DOTALL)
        texts = [body]
    titles = _element(block, "HEADLINE") or _element(block, "TITLE")
    text = "\n\n".join(_TAG.sub(" ", t).strip() for t in texts)
    title = " ".join(_TAG.sub(" ", titles[0]).split()) if titles else ""
    return SourceDocument(id=docno[0].strip(), text=text, title=title)


def _jsonl_documents(path: Path) -> Iterator[SourceDocument]:
    for where, item in _jsonl(path):
        yield SourceDocument(
            id=_field(item, ("id", "_id", "docno", "doc_id"), where, required=True),
            text=_field(item, ("text", "contents", "body"), where, required=False),
            title=_field(item, ("title",), where, required=False),
        )


def trec_source(
    qrels: str | os.PathLike[str],
    topics: str | os.PathLike[str],
    corpus: str | os.PathLike[str],
    *,
    topic_field: str = "title",
) -> tuple[Iterator[SourceDocument], Iterator[SourceQuery], Iterator[SourceJudgment]]:
    """Documents, queries and judgments of TREC files (formats in the module docstring)."""
    if topic_field not in ("title", "desc"):
        raise InputError(f"topic field {topic_field!r} should be title or desc")
    corpus_path = Path(corpus)
    name = corpus_path.name.lower().removesuffix(".gz")
    documents = (
        _jsonl_documents(corpus_path)
        if name.endswith((".jsonl", ".json", ".ndjson"))
        else _sgml_documents(corpus_path)
    )
    return documents, _trec_topics(Path(topics), topic_field), qrels_judgments(Path(qrels))


# --- tables -----------------------------------------------------------------------------------


def table_rows(path: str | os.PathLike[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, row)`` of each row of a JSONL, CSV or Parquet file (by suffix), streamed."""
    file = Path(path)
    suffix = file.name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
    if suffix in ("jsonl", "ndjson", "json"):
        yield from _jsonl(file)
    elif suffix in ("csv", "tsv"):
        with _open(file) as handle:
            read = 0  # lines read so far (a record may span several)

            def counted() -> Iterator[str]:
                nonlocal read
                for line in handle:
                    read += 1
                    yield line

            delimiter = "\t" if suffix == "tsv" else ","
            reader = csv.DictReader(counted(), delimiter=delimiter, strict=True)
            with _reading(file, lambda: read):
                try:
                    for row in reader:
                        if None in row:
                            raise InputError(
                                f"{file.name} line {reader.line_num}: more cells than the "
                                "header names; quote cells that contain the delimiter"
                            )
                        yield f"{file.name} line {reader.line_num}", dict(row)
                except csv.Error:
                    raise InputError(
                        f"{file.name} lines {reader.line_num + 1}-{read}: not valid CSV (a quote "
                        "left open or misplaced); fix the quoting"
                    ) from None
    elif suffix == "parquet":
        from evalkit.formats.parquet import open_parquet, parquet_batches

        parquet = open_parquet(file, file.name)
        number = 0
        batches = parquet_batches(parquet, file.name, lambda b: b.to_pylist(), batch_size=4096)
        for rows in batches:
            for row in rows:
                number += 1
                yield f"{file.name} row {number}", row
    else:
        raise InputError(f"{file.name}: expected a .jsonl, .csv, .tsv or .parquet file")


def _table_columns(path: Path) -> list[str] | None:
    """A CSV/TSV file's header or a Parquet file's column names; None for JSONL (rows differ)."""
    suffix = path.name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
    if suffix in ("csv", "tsv"):
        with _open(path) as handle, _reading(path, lambda: 0):  # a bad byte: named by line
            header = next(csv.reader(handle, delimiter="\t" if suffix == "tsv" else ","), [])
        return list(header)
    if suffix == "parquet":
        from evalkit.formats.parquet import open_parquet

        return list(open_parquet(path, path.name).schema_arrow.names)
    return None


def _missing_column(path: Path, field: str, column: str, found: Iterable[str]) -> InputError:
    columns = sorted(set(found))
    listed = ", ".join(repr(c) for c in columns[:40]) or "none"
    return InputError(
        f"{path.name}: no column {column!r} (--{field.replace('_', '-')}); its columns are "
        f"{listed}.{did_you_mean(column, columns)} Name one of them with "
        f"--{field.replace('_', '-')}"
    )


def _checked_rows(
    path: str | os.PathLike[str], wanted: dict[str, str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """:func:`table_rows` of ``path``, after checking that every column of ``wanted`` (option
    field -> column) is in the file (:func:`table_source`)."""
    file = Path(path)
    header = _table_columns(file)
    if header is not None:
        for field, column in wanted.items():
            if column not in header:
                raise _missing_column(file, field, column, header)
        yield from table_rows(file)
        return
    seen: set[str] = set()
    for where, row in table_rows(file):
        seen.update(row)
        yield where, row
    for field, column in wanted.items():
        if column not in seen:
            raise _missing_column(file, field, column, seen)


def _raw(row: dict[str, Any], column: str, where: str) -> Any:
    """The value of a required ``column`` as the file holds it."""
    if column not in row:
        raise InputError(f"{where}: no column {column!r}; map the column with the options")
    return row[column]


def _cell(row: dict[str, Any], column: str, where: str, *, required: bool = True) -> str:
    if not column:
        return ""
    if column not in row:
        if required:
            raise InputError(f"{where}: no column {column!r}; map the column with the options")
        return ""
    value = row[column]
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):  # a missing cell of a numeric column
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(
            f"{where}: column {column!r} should hold text (or an integer ID), found "
            f"{type(value).__name__}; convert the column to strings"
        )
    return str(value)


def _answers(value: object, where: str) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        text = value
        if not text.strip().startswith("["):
            return (text,)
        if json_too_deep(text):
            raise InputError(
                f"{where}: the answers are a JSON list nested more than {MAX_DEPTH} levels deep"
            )
        try:
            value = json.loads(text)
        except ValueError:  # JSONDecodeError, or an integer of more than 4300 digits
            return (text,)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"{where}: the answers should be a string or a list of strings")


def table_source(
    documents: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    judgments: str | os.PathLike[str],
    columns: TableColumns | None = None,
) -> tuple[Iterator[SourceDocument], Iterator[SourceQuery], Iterator[SourceJudgment]]:
    """Documents, queries and judgments of three tables with ``columns``.

    Every column an option names must be in its file (:func:`_checked_rows`): a CSV's header or
    a Parquet file's schema is checked before the first row, a JSONL file's keys as the rows
    come (a column no row holds is an error at the end). The error lists the file's columns and
    the closest one, instead of quietly using IDs as titles or importing no answers.
    """
    cols = columns or TableColumns()
    named = {field: getattr(cols, field) for field in TableColumns.__dataclass_fields__}
    wanted = {
        "documents": {f: c for f, c in named.items() if f.startswith("doc_") and c},
        "queries": {f: c for f, c in named.items() if f.startswith("query_") and c},
        "judgments": {f: c for f, c in named.items() if f.startswith("judgment_") and c},
    }

    def docs() -> Iterator[SourceDocument]:
        for where, row in _checked_rows(documents, wanted["documents"]):
            yield SourceDocument(
                id=_cell(row, cols.doc_id, where),
                text=_cell(row, cols.doc_text, where),
                title=_cell(row, cols.doc_title, where, required=False),
                language=_cell(row, cols.doc_language, where),
            )

    def qs() -> Iterator[SourceQuery]:
        for where, row in _checked_rows(queries, wanted["queries"]):
            yield SourceQuery(
                id=_cell(row, cols.query_id, where),
                text=_cell(row, cols.query_text, where),
                language=_cell(row, cols.query_language, where),
            )

    def js() -> Iterator[SourceJudgment]:
        for where, row in _checked_rows(judgments, wanted["judgments"]):
            grade = (
                whole_grade(_raw(row, cols.judgment_grade, where), where)
                if cols.judgment_grade
                else 1
            )
            answers = row.get(cols.judgment_answers) if cols.judgment_answers else None
            yield SourceJudgment(
                query_id=_cell(row, cols.judgment_query, where),
                document_id=_cell(row, cols.judgment_doc, where),
                grade=grade,
                answers=_answers(answers, where),
            )

    return docs(), qs(), js()
