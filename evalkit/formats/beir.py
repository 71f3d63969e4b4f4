"""BEIR dataset folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

``corpus.jsonl`` lines are ``{"_id", "title", "text"}`` objects, ``queries.jsonl`` lines
``{"_id", "text"}``; ``qrels/<split>.tsv`` has a header line and tab-separated
``query-id corpus-id score`` rows. Each file may also be gzip-compressed (``corpus.jsonl.gz``).
IDs are always strings (a numeric JSON ``_id`` becomes its decimal string). Error messages name
the file, line and field, never the text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from evalkit.errors import FormatError
from evalkit.formats._lines import load_bytes
from evalkit.safety.inputs import load_json

__all__ = ["BeirDataset", "read_beir"]


class BeirDataset(NamedTuple):
    """The three frames of a BEIR split (a tuple: ``corpus, queries, qrels = read_beir(...)``).

    ``corpus``: doc_id, title, text (str). ``queries``: query_id, text (str).
    ``qrels``: query_id, doc_id (str), relevance (int64).
    """

    corpus: pd.DataFrame
    queries: pd.DataFrame
    qrels: pd.DataFrame


def read_beir(folder: str | os.PathLike[str], split: str = "test") -> BeirDataset:
    """Read a BEIR folder; raises FormatError naming the file and line of any problem."""
    root = Path(folder)
    if not root.is_dir():
        raise FormatError("not a directory (expected a BEIR dataset folder)", file=str(root))
    corpus_rows = _read_jsonl(_find(root, "corpus.jsonl"), ("title", "text"), optional=("title",))
    query_rows = _read_jsonl(_find(root, "queries.jsonl"), ("text",), optional=())
    corpus = pd.DataFrame(
        {
            "doc_id": pd.array([r[0] for r in corpus_rows], dtype="str"),
            "title": pd.array([r[1] for r in corpus_rows], dtype="str"),
            "text": pd.array([r[2] for r in corpus_rows], dtype="str"),
        }
    )
    queries = pd.DataFrame(
        {
            "query_id": pd.array([r[0] for r in query_rows], dtype="str"),
            "text": pd.array([r[1] for r in query_rows], dtype="str"),
        }
    )
    return BeirDataset(corpus, queries, _read_qrels_tsv(root, split))


def _find(root: Path, name: str) -> Path:
    for candidate in (root / name, root / f"{name}.gz"):
        if candidate.exists():  # a FIFO, device or directory is refused when it is read
            return candidate
    raise FormatError(f"missing {name} (or {name}.gz)", file=str(root))


def _lines(path: Path) -> list[bytes]:
    return load_bytes(path).split(b"\n")


def _read_jsonl(
    path: Path, fields: tuple[str, ...], optional: tuple[str, ...]
) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(_lines(path), start=1):
        if not raw.strip():
            continue
        try:
            record = load_json(raw)  # depth-checked: never a RecursionError
        except ValueError:
            raise FormatError("is not a valid JSON object", file=str(path), line=number) from None
        if not isinstance(record, dict):
            raise FormatError("expected a JSON object", file=str(path), line=number)
        raw_id = record.get("_id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or raw_id == "":
            raise FormatError("field _id must be a non-empty string", file=str(path), line=number)
        object_id = str(raw_id)
        if object_id in seen:
            raise FormatError(
                f"_id {object_id!r} repeats the _id of line {seen[object_id]}",
                file=str(path),
                line=number,
            )
        seen[object_id] = number
        values = [object_id]
        for name in fields:
            value = record.get(name)
            if value is None and name in optional:
                value = ""
            if not isinstance(value, str):
                raise FormatError(
                    f"field {name} must be a string ([{object_id}])", file=str(path), line=number
                )
            values.append(value)
        rows.append(tuple(values))
    return rows


def _read_qrels_tsv(root: Path, split: str) -> pd.DataFrame:
    folder = root / "qrels"
    try:
        path = _find(folder, f"{split}.tsv")
    except FormatError:
        available = (
            sorted(p.name.split(".")[0] for p in folder.glob("*.tsv*")) if folder.is_dir() else []
        )
        raise FormatError(
            f"no qrels for split {split!r}; available splits: {', '.join(available) or 'none'}",
            file=str(folder),
        ) from None
    query_ids: list[str] = []
    doc_ids: list[str] = []
    grades: list[int] = []
    header_seen = False
    for number, raw in enumerate(_lines(path), start=1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise FormatError("is not valid UTF-8", file=str(path), line=number) from None
        if not line.strip():
            continue
        parts = line.split("\t")
        if not header_seen:
            header_seen = True
            if [p.strip() for p in parts] != ["query-id", "corpus-id", "score"]:
                raise FormatError(
                    "expected the header 'query-id<TAB>corpus-id<TAB>score'",
                    file=str(path),
                    line=number,
                )
            continue
        if len(parts) != 3:
            raise FormatError(
                f"expected 3 tab-separated fields (query-id corpus-id score), found {len(parts)}",
                file=str(path),
                line=number,
            )
        try:
            grade = int(parts[2])
        except ValueError:
            raise FormatError(
                "field score must be an integer", file=str(path), line=number
            ) from None
        if not -(2**63) <= grade < 2**63:
            raise FormatError(
                "field score is outside the 64-bit integer range", file=str(path), line=number
            )
        query_ids.append(parts[0].strip())
        doc_ids.append(parts[1].strip())
        grades.append(grade)
    return pd.DataFrame(
        {
            "query_id": pd.array(query_ids, dtype="str"),
            "doc_id": pd.array(doc_ids, dtype="str"),
            "relevance": pd.array(grades, dtype="int64"),
        }
    )
