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

``http:NAME`` (:class:`HttpRetriever`)
    The URL comes only from the environment variable ``EVALKIT_HTTP_<NAME>_URL`` (NAME
    upper-cased, ``-`` -> ``_``); it never reaches a report, a log line or an error message.
    An optional YAML config (path in ``EVALKIT_HTTP_<NAME>_CONFIG``, fields of
    :class:`HttpConfig`) sets the request and response shapes with JSON pointers (RFC 6901),
    the timeout, retries, backoff and a concurrency limit. Default request: ``POST`` of
    ``{"query": TEXT, "k": K, "language": LANG, "query_id": ID}``; default response
    ``{"hits": [{"chunk_id": ID, "score": NUMBER}, ...]}``. Connection errors, timeouts, HTTP
    429 and 5xx are retried up to ``retries`` times, waiting ``backoff_s * 2**attempt``
    seconds; other HTTP errors and malformed JSON are not. Every failure is an
    :class:`ExternalSystemError` naming the system and the query ID (never the URL or the
    response body). ``concurrent_searches = True``: ``evaluate(concurrency=N)`` sends up to N
    requests at once (at most ``max_concurrency`` of the config).
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import http.client
import json
import math
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import EvalkitError, FormatError, InputError
from evalkit.safety.canonical import canonical_hash
from evalkit.safety.names import check_name
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
HTTP_PREFIX: Final = "http:"
_NAME_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_UNSAFE_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9._-]+")
_RUN_SUFFIXES: Final = (".gz", ".trec", ".run", ".txt", ".tsv", ".jsonl", ".ndjson", ".json")
_LISTED: Final = 20


class ExternalSystemError(EvalkitError, RuntimeError):
    """An external system (HTTP service) failed; names the system and query ID only."""


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
        data = file.read_bytes()
    except FileNotFoundError:
        raise InputError(
            f"run system {system!r}: the run file does not exist; give 'run:PATH' with the path "
            "of a TREC or JSONL run file"
        ) from None
    except OSError as error:
        raise InputError(
            f"run system {system!r}: the run file cannot be read ({type(error).__name__})"
        ) from None
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


# --- HTTP services ----------------------------------------------------------------------------


def http_env_name(name: str, what: str = "URL") -> str:
    """``EVALKIT_HTTP_<NAME>_<what>``: NAME upper-cased, ``-`` (and ``.``) -> ``_``."""
    return f"EVALKIT_HTTP_{name.upper().replace('-', '_').replace('.', '_')}_{what}"


Pointer = Annotated[str, Field(pattern=r"^(/([^~/]|~[01])*)*$")]


class HttpConfig(BaseModel):
    """Request/response shapes and call policy of an ``http:`` system (YAML keys alike).

    - ``request``: JSON pointer -> field, where field is one of ``query``, ``k``,
      ``language``, ``query_id``; the body is built by setting each pointer.
    - ``hits``: pointer to the list of hits in the response; ``chunk_id`` and ``score``:
      pointers inside one hit.
    - ``headers_from_env``: header name -> environment variable holding its value (for a
      token; the value is never written anywhere).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, hide_input_in_errors=True)

    method: Annotated[str, Field(pattern=r"^(POST|PUT)$")] = "POST"
    request: dict[Pointer, Annotated[str, Field(pattern=r"^(query|k|language|query_id)$")]] = Field(
        default_factory=lambda: {
            "/query": "query",
            "/k": "k",
            "/language": "language",
            "/query_id": "query_id",
        }
    )
    hits: Pointer = "/hits"
    chunk_id: Pointer = "/chunk_id"
    score: Pointer = "/score"
    timeout_s: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False)] = 30.0
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    backoff_s: Annotated[float, Field(ge=0, le=60, allow_inf_nan=False)] = 0.5
    max_concurrency: Annotated[int, Field(ge=1, le=256)] = 8
    headers_from_env: dict[
        Annotated[str, Field(pattern=r"^[A-Za-z0-9-]{1,64}$")],
        Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")],
    ] = Field(default_factory=dict)


def load_http_config(path: str | os.PathLike[str], system: str) -> HttpConfig:
    """Read and validate an :class:`HttpConfig` YAML file; InputError names the fields."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputError(
            f"http system {system!r}: its config ({http_env_name(system, 'CONFIG')}) cannot be "
            f"read as YAML ({type(error).__name__})"
        ) from None
    try:
        return HttpConfig.model_validate(data or {})
    except ValidationError as error:
        fields = ", ".join(
            ".".join(str(p) for p in detail["loc"]) or "(top level)" for detail in error.errors()
        )
        raise InputError(
            f"http system {system!r}: config fields are invalid or unknown: {fields}; see "
            "evalkit.systems.external.HttpConfig for the fields and their types"
        ) from None


def _pointer_parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at JSON pointer ``pointer`` (RFC 6901) in ``document``; KeyError if absent."""
    value = document
    for part in _pointer_parts(pointer):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise KeyError(pointer)
    return value


def set_pointer(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Set ``value`` at ``pointer`` in ``document``, creating objects on the way."""
    parts = _pointer_parts(pointer)
    if not parts:
        raise InputError("a request pointer cannot be the whole body ('')")
    target = document
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


_RETRY_STATUS: Final = frozenset({408, 425, 429, 500, 502, 503, 504})


class HttpRetriever(BaseRetriever):
    """A live retrieval service as a system (rules in the module docstring)."""

    concurrent_searches = True

    def __init__(self, name: str, *, config: HttpConfig | None = None) -> None:
        check_name(name, kind="system", where="http: system")
        if not _NAME_RE.fullmatch(name):
            raise InputError(
                "the http system name should be 1-64 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit, e.g. http:my-search (name not shown)"
            )
        self.name = name
        url_var = http_env_name(name)
        url = os.environ.get(url_var, "").strip()
        if not url:
            raise InputError(
                f"http system {name!r}: set the environment variable {url_var} to the service's "
                "URL (it is read only from there and never written anywhere)"
            )
        if not url.lower().startswith(("http://", "https://")):
            raise InputError(
                f"http system {name!r}: {url_var} should be an http:// or https:// URL"
            )
        self._url = url
        if config is None:
            config_path = os.environ.get(http_env_name(name, "CONFIG"), "").strip()
            config = load_http_config(config_path, name) if config_path else HttpConfig()
        self.config = config
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for header, variable in config.headers_from_env.items():
            value = os.environ.get(variable)
            if value is None:
                raise InputError(
                    f"http system {name!r}: header {header!r} takes its value from the "
                    f"environment variable {variable}, which is not set"
                )
            self._headers[header] = value
        self._slots = threading.BoundedSemaphore(config.max_concurrency)

    def definition(self) -> dict[str, Any]:
        """URL and config: hashed into reports, never published (the URL is private). The
        config enters as its hash: its generic strings ("language", "/hits") are no secret,
        and the leak scan treats every definition string as private."""
        config = canonical_hash(self.config.model_dump(mode="json"))
        return {"class": "HttpRetriever", "url": self._url, "config": config}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """A service has its own index; nothing to do."""

    def _body(self, query: QueryLike, k: int) -> bytes:
        fields: Mapping[str, Any] = {
            "query": query.text,
            "k": k,
            "language": query.language,
            "query_id": query.id,
        }
        body: dict[str, Any] = {}
        for pointer, field in self.config.request.items():
            set_pointer(body, pointer, fields[field])
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _fail(self, query: QueryLike, what: str) -> ExternalSystemError:
        return ExternalSystemError(f"http system {self.name!r}, query {query.id!r}: {what}")

    def _call(self, query: QueryLike, body: bytes) -> bytes:
        config = self.config
        attempts = config.retries + 1
        problem = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(config.backoff_s * 2 ** (attempt - 1))
            request = urllib.request.Request(
                self._url, data=body, headers=self._headers, method=config.method
            )
            try:
                with urllib.request.urlopen(request, timeout=config.timeout_s) as response:
                    data: bytes = response.read()
                    return data
            except urllib.error.HTTPError as error:
                status = error.code
                error.close()
                problem = f"HTTP status {status}"
                if status not in _RETRY_STATUS:
                    raise self._fail(
                        query, f"{problem}; the service refused the request (not retried)"
                    ) from None
            except TimeoutError:
                problem = f"no response within {config.timeout_s:g} s (timeout)"
            except urllib.error.URLError as error:
                reason = error.reason
                if isinstance(reason, TimeoutError):
                    problem = f"no response within {config.timeout_s:g} s (timeout)"
                else:
                    kind = type(reason).__name__ if isinstance(reason, BaseException) else "error"
                    errno = getattr(reason, "errno", None)
                    problem = f"network error ({kind}{f', errno {errno}' if errno else ''})"
            except (OSError, ValueError, http.client.HTTPException) as error:  # reset, bad line
                problem = f"network error ({type(error).__name__})"
        raise self._fail(
            query,
            f"{problem} after {attempts} attempt(s); check that the service is up, or raise "
            "timeout_s/retries in its config",
        )

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        body = self._body(query, k)
        with self._slots:
            data = self._call(query, body)
        try:
            document = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._fail(query, "the response is not valid JSON") from None
        config = self.config
        try:
            hits = resolve_pointer(document, config.hits)
        except KeyError:
            raise self._fail(
                query, f"the response has no hits list at JSON pointer {config.hits!r}"
            ) from None
        if not isinstance(hits, list):
            raise self._fail(
                query, f"the value at {config.hits!r} should be a list, found {type(hits).__name__}"
            )
        result: list[Hit] = []
        for position, hit in enumerate(hits):
            try:
                chunk_id = resolve_pointer(hit, config.chunk_id)
                score = resolve_pointer(hit, config.score)
            except KeyError as missing:
                raise self._fail(
                    query, f"hit {position} has no value at JSON pointer {missing.args[0]!r}"
                ) from None
            if not isinstance(chunk_id, str | int) or isinstance(chunk_id, bool):
                raise self._fail(query, f"hit {position}: the chunk ID should be a string")
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise self._fail(query, f"hit {position}: the score should be a number")
            result.append(Hit(str(chunk_id), float(score)))
        return result
