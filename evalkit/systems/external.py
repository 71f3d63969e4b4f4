"""Systems from outside the process: a precomputed run file (``run:PATH``) and a live HTTP
retrieval service (``http:NAME``). Both are accepted wherever a system name is.

``run:PATH`` (:class:`RunFileRetriever`)
    A TREC run file (``query_id Q0 chunk_id rank score run_id``) or JSON Lines of
    ``{"query_id", "chunk_id", "score"}`` objects (chosen by the ``.jsonl``/``.ndjson``
    suffix, or by a first non-blank character ``{``). Hits of a query are ordered by score,
    highest first; equal scores keep the TREC rank order (JSONL: file order). The system's name
    is the file name without its suffixes (``runs/bm25.trec`` -> ``bm25``), mapped to the
    system-name alphabet; its definition is the SHA-256 of the file's bytes, never the path.
    Latency is not measured (``latency_measured = False``): reports say "not measured". A TREC
    run is read by :func:`evalkit.formats.read_run`, the reader of ``evalkit trec-eval``, so
    both take the same fields, comments, BOM and whitespace; a run with no result, or with a
    (query, chunk) pair twice, is an :class:`InputError` (``trec-eval`` refuses both too). A run
    naming a chunk or query the fixture does not have is an :class:`InputError` naming the
    IDs; a fixture query absent from the run returned nothing, and :meth:`RunFileRetriever.notes`
    counts those queries.

``http:NAME`` (:class:`~evalkit.systems.http.HttpRetriever`)
    A live retrieval service: :mod:`evalkit.systems.http` (its URL, config, timeouts,
    redirects and limits). Its names are re-exported here.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from evalkit.errors import FormatError, InputError
from evalkit.safety.inputs import InputFileError, check_line_lengths, read_input_bytes
from evalkit.safety.names import check_name
from evalkit.systems.http import (
    HTTP_PREFIX,
    ExternalSystemError,
    HttpConfig,
    HttpRetriever,
    http_env_name,
)
from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike

__all__ = [
    "HTTP_PREFIX",
    "RUN_PREFIX",
    "ExternalSystemError",
    "HttpConfig",
    "HttpRetriever",
    "RunFileRetriever",
    "external_system",
    "http_env_name",
    "is_external_spec",
    "read_run_hits",
]

RUN_PREFIX: Final = "run:"
_UNSAFE_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9._-]+")
_RUN_SUFFIXES: Final = (".gz", ".trec", ".run", ".txt", ".tsv", ".jsonl", ".ndjson", ".json")
_LISTED: Final = 20


def is_external_spec(spec: object) -> bool:
    """True for ``run:...`` and ``http:...`` system specs."""
    return isinstance(spec, str) and spec.startswith((RUN_PREFIX, HTTP_PREFIX))


def external_system(spec: str) -> RunFileRetriever | HttpRetriever:
    """The system a ``run:PATH`` or ``http:NAME`` spec names (a fresh instance)."""
    if spec.startswith(RUN_PREFIX):
        return RunFileRetriever(spec[len(RUN_PREFIX) :])
    if spec.startswith(HTTP_PREFIX):
        return HttpRetriever(spec[len(HTTP_PREFIX) :])
    raise InputError("the system spec is neither 'run:PATH' nor 'http:NAME' (spec not shown)")


def _listed(ids: Sequence[str]) -> str:
    """The first IDs, each as written when it is a well-formed, safe ID, else as a hash: an
    "ID" the fixture lacks may be text (a run written with the wrong column)."""
    from evalkit.safety.canonical import text_hash
    from evalkit.safety.names import safe_id

    shown = [safe_id(i) or f"(not shown: sha256:{text_hash(i)})" for i in ids[:_LISTED]]
    more = f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    return ", ".join(shown) + more


def _mapped_hint(unknown: Sequence[str], known: set[str]) -> str:
    """A hint when the unknown IDs are source IDs ``evalkit import`` mapped to the fixture's
    safe form (``doc/1`` -> ``x~doc~2F1``), else nothing."""
    from evalkit.importers import fixture_id

    mapped = sum(fixture_id(i) in known for i in unknown)
    if not mapped:
        return ""
    return (
        f" ({mapped} of them are source IDs that 'evalkit import' mapped to the fixture's safe "
        "form: write the run with the fixture's IDs, evalkit.importers.fixture_id(source_id))"
    )


# --- run files --------------------------------------------------------------------------------


def _run_name(path: Path) -> str:
    stem = path.name
    while True:
        lowered = stem.lower()
        suffix = next((s for s in _RUN_SUFFIXES if lowered.endswith(s) and len(stem) > len(s)), "")
        if not suffix:
            break
        stem = stem[: -len(suffix)]
    name = _UNSAFE_NAME_CHARS.sub("-", stem).strip("-._")[:64]
    return name or "run"


def _is_jsonl(path: Path, data: bytes) -> bool:
    if path.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson", ".json")):
        return True
    return data.lstrip()[:1] == b"{"


def read_run_hits(path: str | os.PathLike[str], *, system: str = "run") -> dict[str, list[Hit]]:
    """``{query_id: [Hit, ...]}`` of a TREC or JSONL run file (format and order rules in the
    module docstring). Raises :class:`InputError` naming ``system`` and the line (never the
    path or the file's content) when the file is unreadable or malformed."""
    file = Path(path)
    try:
        check_line_lengths(file)  # a regular file (no FIFO, no device), no line over 1 MiB
        data = read_input_bytes(file)
    except InputFileError as error:
        if error.reason == "does not exist":
            raise InputError(
                f"run system {system!r}: the run file does not exist; give 'run:PATH' with the "
                "path of a TREC or JSONL run file"
            ) from None
        raise InputError(f"run system {system!r}: the run file {error.reason}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            raise InputError(f"run system {system!r}: the run file is not valid gzip") from None
    data = data.removeprefix(codecs.BOM_UTF8)  # for JSONL; the TREC parsers skip it themselves
    rows = _jsonl_rows(data, system) if _is_jsonl(file, data) else _trec_rows(file, system)
    if not rows:
        raise InputError(
            f"run system {system!r}: the run file holds no results (it is empty, or only "
            "comments and blank lines); a run lists at least one ranked chunk: check that the "
            "job that wrote it finished"
        )
    _refuse_duplicates(rows, system)
    ranked: dict[str, list[tuple[float, float, str]]] = {}
    for query_id, chunk_id, score, order in rows:
        ranked.setdefault(query_id, []).append((-score, order, chunk_id))
    return {
        query_id: [Hit(chunk_id, -negative) for negative, _, chunk_id in sorted(entries)]
        for query_id, entries in ranked.items()
    }


def _refuse_duplicates(rows: Sequence[tuple[str, str, float, float]], system: str) -> None:
    """InputError when a (query, chunk) pair appears twice, as ``evalkit trec-eval`` (and
    trec_eval) refuses such a run: which of the two ranks counts is a guess either way."""
    seen: set[tuple[str, str]] = set()
    first, pairs = -1, set()
    for index, (query_id, chunk_id, _, _) in enumerate(rows):
        if (query_id, chunk_id) in seen:
            first = index if first < 0 else first
            pairs.add((query_id, chunk_id))
        seen.add((query_id, chunk_id))
    if first >= 0:
        query_id, chunk_id = rows[first][0], rows[first][1]
        raise InputError(
            f"run system {system!r}: the run lists chunk {_listed([chunk_id])} more than once "
            f"for query {_listed([query_id])} ({len(pairs)} duplicated (query, chunk) pair(s) "
            f"in all, first at data row {first}, counting from 0); keep one line per query and "
            "chunk ('evalkit trec-eval' refuses such a run too)"
        )


def _trec_rows(path: Path, system: str) -> list[tuple[str, str, float, float]]:
    from evalkit.formats import read_run

    try:
        frame = read_run(path)
    except FormatError as error:
        detail = str(error).split(": ", 1)[-1]
        line = f" line {error.line}:" if error.line is not None else ""
        raise InputError(
            f"run system {system!r}: the TREC run file is malformed:{line} {detail}; expected "
            "'query_id Q0 chunk_id rank score run_id' lines or JSONL objects"
        ) from None
    return list(
        zip(
            frame["query_id"].astype(str),
            frame["doc_id"].astype(str),
            frame["score"].astype(float),
            frame["rank"].astype(float),
            strict=True,
        )
    )


def _jsonl_rows(data: bytes, system: str) -> list[tuple[str, str, float, float]]:
    rows: list[tuple[str, str, float, float]] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"run system {system!r}: JSONL line {number}"
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError(f"{where} is not valid JSON; expected one object per line") from None
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object, found {type(item).__name__}")
        query_id, chunk_id, score = item.get("query_id"), item.get("chunk_id"), item.get("score")
        if not isinstance(query_id, str | int) or isinstance(query_id, bool):
            raise InputError(f"{where}: 'query_id' should be a string")
        if not isinstance(chunk_id, str | int) or isinstance(chunk_id, bool):
            raise InputError(f"{where}: 'chunk_id' should be a string")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise InputError(f"{where}: 'score' should be a finite number")
        rows.append((str(query_id), str(chunk_id), float(score), float(number)))
    return rows


class RunFileRetriever(BaseRetriever):
    """A precomputed run file as a system (rules in the module docstring)."""

    latency_measured = False
    concurrent_searches = True

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        file = Path(path)
        self.name = check_name(
            name or _run_name(file),
            kind="system",
            where="run: system (named after its run file)",
        )
        self._hits = read_run_hits(file, system=self.name)
        self._digest = (
            "sha256:"
            + hashlib.sha256(
                json.dumps(
                    {
                        q: [(h.chunk_id, h.score) for h in hits]
                        for q, hits in sorted(self._hits.items())
                    }
                ).encode()
            ).hexdigest()
        )
        self._missing: list[str] = []
        self._queries = 0

    def definition(self) -> dict[str, Any]:
        """The run's content hash (of its parsed rankings), never its path."""
        return {"class": "RunFile", "rankings": self._digest}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """Check every chunk the run names is in ``chunks`` (InputError naming the IDs)."""
        known = {chunk.id for chunk in chunks}
        unknown = sorted({h.chunk_id for hits in self._hits.values() for h in hits} - known)
        if unknown:
            raise InputError(
                f"run system {self.name!r} names {len(unknown)} chunk ID(s) the fixture does not "
                f"have: {_listed(unknown)}; the run must be made on this fixture's chunks"
                + _mapped_hint(unknown, known)
            )

    def bind_queries(self, queries: Sequence[QueryLike]) -> None:
        """Check the run's query IDs against ``queries``; record the queries it lacks."""
        known = [query.id for query in queries]
        unknown = sorted(set(self._hits) - set(known))
        if unknown:
            raise InputError(
                f"run system {self.name!r} names {len(unknown)} query ID(s) the fixture does not "
                f"have: {_listed(unknown)}; the run must be made on this fixture's queries"
                + _mapped_hint(unknown, set(known))
            )
        self._missing = sorted(set(known) - set(self._hits))
        self._queries = len(known)

    def notes(self) -> dict[str, Any]:
        """``{latency, queries, queriesMissing, missingQueryIds}`` (IDs and counts only)."""
        return {
            "latency": "not measured",
            "queries": self._queries,
            "queriesMissing": len(self._missing),
            "missingQueryIds": list(self._missing),
        }

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self._hits.get(query.id, [])[:k]
