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

``run:PATH?ids=documents`` (a document-level run on a chunked fixture)
    The run's IDs are the fixture's *document* IDs (``?ids=chunks``, the default, is the plain
    ``run:PATH``). Each document stands for one chunk, its best chunk for that query: the
    chunk of the document with the highest grade in the query's judgments (ties: the first
    in chunk order), or its first chunk when none is judged
    (:mod:`evalkit.measures.documents`). The definition says so (``documentLevel: true``), and
    ``evaluate`` then scores the system against the documents' grades, each the maximum over
    the document's chunks: ranking measures equal document-level evaluation with
    max-aggregated qrels (what trec_eval computes on the collection's own document qrels).
    Span measures (``ContextPrecision``/``ContextRecall``) of such a run are optimistic: the
    chunk was chosen knowing the judgments, so they are an upper bound, not the context a
    reader would get; :meth:`RunFileRetriever.notes` says so. A document the fixture does not
    have is an :class:`InputError` naming the IDs; the duplicate rule is the run reader's
    (a document listed twice for a query is refused).

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

from evalkit.errors import FormatError, InputError, InputFileError
from evalkit.safety.inputs import check_line_lengths, read_input_bytes
from evalkit.safety.names import check_name
from evalkit.systems.http import (
    HTTP_PREFIX,
    HttpConfig,
    HttpRetriever,
    http_env_name,
)
from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike

__all__ = [
    "HTTP_PREFIX",
    "RUN_PREFIX",
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
    """The system a ``run:PATH[?ids=chunks|documents]`` or ``http:NAME`` spec names (a fresh
    instance)."""
    if spec.startswith(RUN_PREFIX):
        path, ids = _run_options(spec[len(RUN_PREFIX) :])
        return RunFileRetriever(path, ids=ids)
    if spec.startswith(HTTP_PREFIX):
        return HttpRetriever(spec[len(HTTP_PREFIX) :])
    raise InputError("the system spec is neither 'run:PATH' nor 'http:NAME' (spec not shown)")


_RUN_OPTIONS_RE: Final = re.compile(r"\?([A-Za-z_]+)=([^?&=/\\]*)$")
RUN_IDS: Final = ("chunks", "documents")


def _run_options(rest: str) -> tuple[str, str]:
    """``(path, ids)`` of the text after ``run:``: a trailing ``?ids=chunks|documents`` is the
    option (any other ``?name=value`` there is an InputError); without it, ids are chunks."""
    match = _RUN_OPTIONS_RE.search(rest)
    if match is None:
        return rest, "chunks"
    option, value = match.groups()
    if option != "ids" or value not in RUN_IDS:
        shown = f"?{option}={value}" if re.fullmatch(r"[A-Za-z0-9_-]{0,20}", value) else "?.."
        raise InputError(
            f"run: system spec option {shown} is unknown; the only option is ?ids=chunks (the "
            "default: the run ranks chunk IDs) or ?ids=documents (it ranks document IDs, each "
            "scored by its best chunk), e.g. run:runs/bm25.trec?ids=documents"
        )
    return rest[: match.start()], value


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

    def __init__(
        self, path: str | os.PathLike[str], *, name: str | None = None, ids: str = "chunks"
    ) -> None:
        if ids not in RUN_IDS:
            raise InputError(f"ids must be one of {', '.join(RUN_IDS)}, got {ids!r}")
        self.ids = ids
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
        self._first: dict[str, str] = {}  # ids=documents: document -> its first chunk ID
        self._document_of: dict[str, str] = {}
        self._order: list[str] = []  # ids=documents: the fixture's chunk IDs, in order
        self._by_query: dict[str, list[Hit]] = {}  # ids=documents: the ranking, mapped

    def definition(self) -> dict[str, Any]:
        """The run's content hash (of its parsed rankings), never its path; with
        ``ids=documents`` also ``documentLevel: true`` (module docstring)."""
        from evalkit.measures.documents import DOCUMENT_LEVEL_KEY

        extra = {DOCUMENT_LEVEL_KEY: True} if self.ids == "documents" else {}
        return {"class": "RunFile", "rankings": self._digest, **extra}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """Check every chunk (``ids=documents``: document) the run names is in ``chunks``
        (InputError naming the IDs)."""
        named = {h.chunk_id for hits in self._hits.values() for h in hits}
        known = {chunk.id for chunk in chunks}
        if self.ids == "documents":
            for chunk in chunks:
                self._first.setdefault(chunk.document_id, chunk.id)
                self._document_of[chunk.id] = chunk.document_id
                self._order.append(chunk.id)
            documents = set(self._first)
            unknown = sorted(named - documents)
            if unknown:
                hint = (
                    " (they are chunk IDs: name the system run:PATH, without ?ids=documents)"
                    if set(unknown) <= known
                    else _mapped_hint(unknown, documents)
                )
                raise InputError(
                    f"run system {self.name!r} (ids=documents) names {len(unknown)} document "
                    f"ID(s) the fixture does not have: {_listed(unknown)}; the run must be made "
                    f"on this fixture's documents{hint}"
                )
            return
        unknown = sorted(named - known)
        if unknown:
            documents = {str(getattr(chunk, "document_id", "")) for chunk in chunks}
            hint = (
                " (they are document IDs: name the system run:PATH?ids=documents to score each "
                "document by its best chunk)"
                if set(unknown) <= documents
                else _mapped_hint(unknown, known)
            )
            raise InputError(
                f"run system {self.name!r} names {len(unknown)} chunk ID(s) the fixture does not "
                f"have: {_listed(unknown)}; the run must be made on this fixture's chunks{hint}"
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
        if self.ids == "documents":
            self._by_query = {q.id: self._best_chunks(q) for q in queries if q.id in self._hits}

    def _best_chunks(self, query: QueryLike) -> list[Hit]:
        """The query's ranking with each document replaced by its best chunk for the query
        (:mod:`evalkit.measures.documents`; a query without ``judgments``: first chunks)."""
        from evalkit.measures.documents import document_judgments

        judgments = getattr(query, "judgments", ())
        best = document_judgments(judgments, self._document_of, self._order)
        first = self._first
        return [
            Hit(best[hit.chunk_id][0] if hit.chunk_id in best else first[hit.chunk_id], hit.score)
            for hit in self._hits[query.id]
        ]

    def notes(self) -> dict[str, Any]:
        """``{latency, queries, queriesMissing, missingQueryIds}`` (IDs and counts only); with
        ``ids=documents`` also ``ids`` and ``spanMeasures: "optimistic"`` (module docs)."""
        documents = (
            {"ids": "documents", "spanMeasures": "optimistic"} if self.ids == "documents" else {}
        )
        return {
            "latency": "not measured",
            "queries": self._queries,
            "queriesMissing": len(self._missing),
            "missingQueryIds": list(self._missing),
            **documents,
        }

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        hits = self._by_query if self.ids == "documents" else self._hits
        return hits.get(query.id, [])[:k]
