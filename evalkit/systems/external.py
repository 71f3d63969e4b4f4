"""Systems from outside the process: a precomputed run file (``run:PATH``) and a live HTTP
retrieval service (``http:NAME``). Both are accepted wherever a system name is.

``run:PATH`` (:class:`RunFileRetriever`)
    A TREC run file (``query_id Q0 chunk_id rank score run_id``) or JSON Lines of
    ``{"query_id", "chunk_id", "score"}`` objects, optionally with the query's declared
    ``confidence`` (:meth:`RunFileRetriever.confidence`; part of the definition's hash)
    (chosen by the ``.jsonl``/``.ndjson``/``.json``
    suffix, or by a first non-blank character ``{``), read once by
    :func:`evalkit.formats.read_run_file`. Hits of a query are ordered by score,
    highest first; equal scores keep the TREC rank order (JSONL: file order). The system's name
    is the file name without its suffixes (``runs/bm25.trec`` -> ``bm25``), mapped to the
    system-name alphabet; its definition is the SHA-256 of the file's bytes, never the path.
    Latency is not measured (``latency_measured = False``): reports say "not measured". A TREC
    run is read by :func:`evalkit.formats.read_run`, the reader of ``evalkit trec-eval``, so
    both take the same fields, comments, BOM and whitespace; a run with no result, or with a
    (query, chunk) pair twice, is an :class:`InputError` by the rules the measures engine
    follows too (:mod:`evalkit.formats.rules`; ``trec-eval`` refuses both). A run
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

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from evalkit.errors import FormatError, InputError
from evalkit.formats.rules import NO_RESULTS, duplicated_rows, duplicates_error
from evalkit.formats.runs import read_run_file, run_file_format
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
    "read_run_hits_and_confidence",
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


def read_run_hits(path: str | os.PathLike[str], *, system: str = "run") -> dict[str, list[Hit]]:
    """``{query_id: [Hit, ...]}`` of a TREC or JSONL run file (format and order rules in the
    module docstring), read once by :func:`evalkit.formats.read_run_file`. Raises
    :class:`InputError` naming ``system`` and the line (never the path or the file's content)
    when the file is unreadable or malformed, holds no result or lists a (query, chunk) pair
    twice (the rules of :mod:`evalkit.formats.rules`)."""
    return read_run_hits_and_confidence(path, system=system)[0]


def read_run_hits_and_confidence(
    path: str | os.PathLike[str], *, system: str = "run"
) -> tuple[dict[str, list[Hit]], dict[str, float]]:
    """:func:`read_run_hits` and ``{query_id: confidence}``, the confidences a JSONL run
    declares (empty for a TREC run, or a JSONL run without ``confidence`` fields)."""
    try:
        run_format = run_file_format(path)
    except FormatError as error:
        if _reason(error).startswith("file not found"):
            raise InputError(
                f"run system {system!r}: the run file does not exist; give 'run:PATH' with the "
                "path of a TREC or JSONL run file"
            ) from None
        raise InputError(f"run system {system!r}: the run file {_reason(error)}") from None
    try:
        frame = read_run_file(path, run_format, with_confidence=True)
    except FormatError as error:
        raise _malformed(error, run_format, system) from None
    if frame.empty:
        raise InputError(f"run system {system!r}: the run file {NO_RESULTS}")
    repeated = duplicated_rows(frame)
    if repeated.size:
        pairs = (
            frame["query_id"].iloc[repeated].tolist(),
            frame["doc_id"].iloc[repeated].tolist(),
        )
        fix = "keep one line per query and chunk ('evalkit trec-eval' refuses such a run too)"
        message = duplicates_error(
            "the run",
            "lists",
            pairs,
            int(repeated[0]),
            fix,
            noun="chunk",
            shown=lambda i: _listed([i]),
        )
        raise InputError(f"run system {system!r}: {message}")
    ranked: dict[str, list[tuple[float, float, str]]] = {}
    rows = zip(
        frame["query_id"].tolist(),
        frame["doc_id"].tolist(),
        frame["score"].tolist(),
        frame["order"].tolist(),
        strict=True,
    )
    for query_id, chunk_id, score, order in rows:
        ranked.setdefault(query_id, []).append((-score, order, chunk_id))
    hits = {
        query_id: [Hit(chunk_id, -negative) for negative, _, chunk_id in sorted(entries)]
        for query_id, entries in ranked.items()
    }
    declared = frame.drop_duplicates("query_id").dropna(subset=["confidence"])
    confidence = dict(zip(declared["query_id"], declared["confidence"].tolist(), strict=True))
    return hits, confidence


def _reason(error: FormatError) -> str:
    """The message of ``error`` without the file (and line) it names."""
    where = error.file if error.line is None else f"{error.file}:{error.line}"
    return str(error).removeprefix(f"{where}: ")


def _malformed(error: FormatError, run_format: str, system: str) -> InputError:
    """The InputError for a run file its reader refused (no path, no file content)."""
    reason = _reason(error)
    if run_format == "trec":
        line = f" line {error.line}:" if error.line is not None else ""
        return InputError(
            f"run system {system!r}: the TREC run file is malformed:{line} {reason}; expected "
            "'query_id Q0 chunk_id rank score run_id' lines or JSONL objects"
        )
    if error.line is None:
        return InputError(f"run system {system!r}: the run file {reason}")
    joined = " " if reason.startswith("is ") else ": "
    return InputError(f"run system {system!r}: JSONL line {error.line}{joined}{reason}")


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
        self._hits, self._confidence = read_run_hits_and_confidence(file, system=self.name)
        rankings: Any = {
            q: [(h.chunk_id, h.score) for h in hits] for q, hits in sorted(self._hits.items())
        }
        if self._confidence:  # a run without confidences keeps the digest it always had
            rankings = {"rankings": rankings, "confidence": dict(sorted(self._confidence.items()))}
        self._digest = "sha256:" + hashlib.sha256(json.dumps(rankings).encode()).hexdigest()
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

    def confidence(self, query: QueryLike, hits: Sequence[Hit]) -> float | None:
        """The query's ``confidence`` in a JSONL run, or None (a run without confidences:
        the top score is the confidence; :mod:`evalkit.systems.protocol`)."""
        return self._confidence.get(query.id)
