"""Writing an imported collection as a fixture: IDs, chunking, judgments, spans, the summary.

:func:`import_collection` takes the documents as a stream and the queries and judgments as
(smaller) iterables, and writes a fixture directory that ``evalkit validate`` accepts. What it
holds in memory: the judgments and queries, the set of document IDs, and for judged documents
only their chunk offsets (and their text when an answer string must be located); documents and
chunks go to disk ``BATCH`` entries at a time.

Rules:

- **IDs** (:func:`fixture_id`). An ID is kept unchanged when it is safe: 1-128 characters of
  ``A-Z a-z 0-9 . _ : # -``, starting with a letter or digit (so MIRACL's ``12#3``, MS MARCO
  v2.1's ``msmarco_v2.1_doc_00_0#3_1`` and TREC's ``FBIS3-10082`` stay as they are; nothing with
  white space, control characters or ``/``). Any other ID is mapped reversibly: each character
  outside that set, and a first character that is not a letter or digit, becomes ``~HH`` for
  each byte of its UTF-8 encoding, and the result is prefixed with ``x~`` (``a/b`` ->
  ``x~a~2Fb``, ``/x`` -> ``x~~2Fx``). Safe IDs never contain ``~``, so an ID with a ``~`` is
  a mapped one and :func:`original_id` undoes the mapping exactly. An ID that is empty, or
  longer than 128 characters once mapped, is dropped (counted).
- **Text.** Control characters other than tab and line breaks (C0, DEL, C1) and lone
  surrogates become spaces (offsets do not move). A document whose text is empty, or any of
  whose strings holds a credential (:func:`evalkit.fixtures.find_sensitive`: a private-key
  block, an API key, token or password), is dropped; so is a query (text over 2,000
  characters, empty, or holding a credential). Prose that merely reads as a path, a URL or an
  e-mail address (a word between slashes, a cited web address) is kept, and the kinds kept
  are declared in ``fixture.yaml`` as ``prose_may_hold``, the rule
  :func:`evalkit.fixtures.rules.prose_kinds` applies to every fixture (so it enters the content
  hash, and a hand-written fixture declares it the same way). Titles are cut to 300 characters;
  an empty title becomes the document ID. Documents and chunks are written as YAML lists of
  double-quoted (JSON-syntax) strings, a form that reads back verbatim, in files of ``BATCH``
  entries; above ``COLUMNAR_FROM`` chunks as ``documents.parquet`` and ``chunks.parquet``.
- **Chunking**: :mod:`evalkit.fixtures.chunking`; the policy is written to ``fixture.yaml``.
- **Judgments.** Grades must be 0-3. ``grade_map`` (``--grade-map 4:3,3:2,2:1,1:1,5:0``)
  maps a collection's scale onto 0-3 first and is recorded in ``fixture.yaml``; a grade above 3
  that it does not map refuses the import (:class:`InputError` naming the grades found), as
  capping would change the collection's measures. Negative grades (TREC's junk marks) that the
  map leaves are dropped. A judgment with answer
  spans (document offsets, or answer strings located by :func:`locate_answer`) gives each chunk
  that contains a span the judgment's grade and those spans; the document's other chunks are
  not judged. A judgment without spans (or whose answers were not found) gives every chunk of
  its document the grade. A chunk judged twice for one query keeps the higher grade and all
  spans. Judgments of dropped or unknown documents are dropped, and so are the judgments of a
  dropped query (counted: "judgment of a query not imported"). Queries left with no judgment
  are dropped, and so are queries whose judgments are all grade 0 (imported collections have no
  no-answer queries; ``requires_spans`` is false).
- **Zero-padding** (:func:`unpadded`). A judgment's query or document ID that is no imported
  ID, is all digits (``0-9``), and equals exactly one imported all-digit ID once leading zeros
  are stripped (``01`` and ``1``) is matched to it; the fixture keeps the queries' and
  documents' own IDs, and the summary counts the IDs matched this way. When several imported
  IDs strip to the same number, the judgment is dropped ("judgment ID matches several IDs by
  zero-padding"). Nothing else about IDs is guessed.
- **Document metadata** (:attr:`SourceDocument.metadata`: SMART's authors, source, keywords,
  ...) is private text like the documents', but no part of the fixture (its schema and content
  hash are unchanged, and nothing that runs, reports or gates reads it): it is written beside
  the fixture folder as ``<fixture folder>.metadata.jsonl`` (:data:`METADATA_SUFFIX`; one JSON
  object ``{"document_id", "field", "value"}`` a line), only for imported documents and only
  when there is any. A value holding a credential is left out (counted by document ID).
- **Drops.** Every dropped document, query and judgment is listed by ID in the summary
  (:meth:`ImportSummary.lines`) and in ``<fixture folder>.dropped.tsv`` beside the fixture
  (:data:`DROPPED_SUFFIX`; ``reason<TAB>ID``, a judgment as ``query document``), written only
  when something was dropped.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError
from tqdm import tqdm

from evalkit.errors import InputError, OutputError
from evalkit.fixtures.chunking import ChunkingPolicy, chunk_ids, chunk_offsets, spans_in_chunk
from evalkit.fixtures.dump import StreamedFixture
from evalkit.fixtures.locate import locate_span
from evalkit.fixtures.rules import META_FILE, find_sensitive, prose_kinds
from evalkit.fixtures.schema import (
    MAX_JUDGMENTS,
    MAX_QUERY_TEXT,
    MAX_SPANS,
    MAX_TITLE,
    PROSE_KINDS,
    Language,
    License,
    ObjectId,
    Version,
)
from evalkit.importers.grades import check_grades
from evalkit.safety.artifacts import Artifact, check_output, write_artifact, write_artifacts
from evalkit.safety.interrupts import deferred
from evalkit.safety.output import shown_path
from evalkit.safety.scratch import STAGING_RECORD, remove_staging, staging_dir, sweep
from evalkit.safety.sensitive import SENSITIVE_KINDS

__all__ = [
    "BATCH",
    "COLUMNAR_FROM",
    "ImportSummary",
    "SourceDocument",
    "SourceJudgment",
    "SourceQuery",
    "fixture_id",
    "import_collection",
    "locate_answer",
    "original_id",
    "unpadded",
]

BATCH: Final = 5_000
# A fixture of more chunks than this is written as documents.parquet and chunks.parquet
# (fixtures/README.md, "Columnar forms"); smaller ones as YAML files of BATCH entries.
COLUMNAR_FROM: Final = 50_000
#: The list of an import's drops is written beside the fixture folder, named after it.
DROPPED_SUFFIX: Final = ".dropped.tsv"
#: Document metadata (authors, source, ...) is written beside the fixture folder, named after it.
METADATA_SUFFIX: Final = ".metadata.jsonl"
_PROSE: Final = frozenset(PROSE_KINDS)
MAX_ID: Final = 128
MAPPED_PREFIX: Final = "x~"
_SAFE_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:#-"
)
_SAFE_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:#-]{0,127}$")
_ESCAPED: Final = re.compile(r"(?:~[0-9A-F]{2})+")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_LISTED: Final = 20
_DIGITS: Final = re.compile(r"[0-9]+")
_SEVERAL_PADDED: Final = "judgment ID matches several IDs by zero-padding"


def fixture_id(raw: str) -> str | None:
    """``raw`` as a fixture ID by the rule in the module docstring; None when it cannot be."""
    if _SAFE_ID.fullmatch(raw):
        return raw
    if not raw:
        return None
    parts = []
    for index, char in enumerate(raw):
        keep = char in _SAFE_CHARS and (index > 0 or (char.isascii() and char.isalnum()))
        if keep:
            parts.append(char)
            continue
        try:  # surrogateescape: the inverse, original_id, decodes that way too
            encoded = char.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate no byte stands for
            return None
        parts.append("".join(f"~{b:02X}" for b in encoded))
    mapped = MAPPED_PREFIX + "".join(parts)
    return mapped if len(mapped) <= MAX_ID else None


def original_id(mapped: str) -> str:
    """The original ID of a fixture ID made by :func:`fixture_id` (the inverse)."""
    if not mapped.startswith(MAPPED_PREFIX):
        return mapped
    return _ESCAPED.sub(
        lambda m: bytes.fromhex(m.group(0).replace("~", "")).decode("utf-8", "surrogateescape"),
        mapped.removeprefix(MAPPED_PREFIX),
    )


def unpadded(raw: str) -> str | None:
    """An all-digit ID without its leading zeros (``"007"`` -> ``"7"``, ``"0"`` -> ``"0"``);
    None for any other ID (zero-padding rule in the module docstring)."""
    return (raw.lstrip("0") or "0") if _DIGITS.fullmatch(raw) else None


def locate_answer(text: str, answer: str) -> list[tuple[int, int]]:
    """Non-overlapping ``(start, end)`` occurrences of ``answer`` in ``text``, by the span
    locator the fixture tools use (:func:`evalkit.fixtures.locate.locate_span` with
    ``fuzzy=False``): exact matches; if there are none, matches ignoring case, white-space runs
    and compatibility forms. Offsets are those of ``text``, so ``text[start:end]`` is the
    verbatim span. Empty answers match nothing."""
    found: list[tuple[int, int]] = []
    for candidate in locate_span(text, answer.strip(), fuzzy=False):
        if not found or candidate.start >= found[-1][1]:
            found.append((candidate.start, candidate.end))
    return found


@dataclass(frozen=True)
class SourceDocument:
    """A document as read from the source (raw ID, text, title may be empty). ``metadata``:
    ``(name, value)`` pairs a reader found (SMART's authors, source, keywords): counted by the
    reader, never text a system searches or a report prints."""

    id: str
    text: str
    title: str = ""
    language: str = ""
    metadata: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SourceQuery:
    """A query as read from the source."""

    id: str
    text: str
    language: str = ""


@dataclass(frozen=True)
class SourceJudgment:
    """A judgment of a document for a query: grade, and optionally answer strings or spans
    given as document offsets."""

    query_id: str
    document_id: str
    grade: int
    answers: tuple[str, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()


@dataclass
class ImportSummary:
    """What an import wrote and dropped: counts, and IDs (never text) by reason."""

    fixture: str = ""
    documents: int = 0
    chunks: int = 0
    chunked_documents: int = 0
    queries: int = 0
    judgments: int = 0
    spans: int = 0
    mapped_ids: int = 0
    mapped_grades: int = 0
    padded_ids: dict[str, int] = field(default_factory=dict)  # "queries"/"documents" -> IDs
    prose: dict[str, list[str]] = field(default_factory=dict)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    unlocated: list[str] = field(default_factory=list)
    spans_dropped: int = 0
    dropped_file: str = ""
    metadata: list[dict[str, str]] = field(default_factory=list, repr=False)  # private text
    metadata_file: str = ""

    def drop(self, reason: str, object_id: str) -> None:
        self.dropped.setdefault(reason, []).append(object_id)

    def reasons_text(self) -> str:
        """The drop reasons with their counts, no IDs: ``"none dropped"`` without any."""
        counts = [f"{reason}: {len(ids)}" for reason, ids in sorted(self.dropped.items())]
        return "dropped " + "; ".join(counts) if counts else "none dropped"

    def lines(self) -> list[str]:
        """The summary as text lines (IDs and counts only)."""
        out = [
            f"imported {self.fixture}: {self.documents} documents -> {self.chunks} chunks "
            f"({self.chunked_documents} documents split into several chunks), {self.queries} "
            f"queries, {self.judgments} chunk judgments, {self.spans} answer spans",
        ]
        if self.mapped_ids:
            out.append(f"IDs mapped to the safe form (reversible, 'x~...~HH'): {self.mapped_ids}")
        if self.mapped_grades:
            out.append(f"grades mapped by --grade-map: {self.mapped_grades}")
        if self.padded_ids:
            out.append(
                "judgment IDs matched across zero-padding ('01' = '1'): queries "
                f"{self.padded_ids.get('queries', 0)}, documents "
                f"{self.padded_ids.get('documents', 0)}"
            )
        for kind, ids in sorted(self.prose.items()):
            out.append(
                f"kept {len(ids)} whose prose reads as {SENSITIVE_KINDS[kind]} (fixture.yaml: "
                f"prose_may_hold): {', '.join(sorted(set(ids)))}"
            )
        for reason, ids in sorted(self.dropped.items()):
            out.append(f"dropped {len(ids)}: {reason}: {', '.join(sorted(set(ids)))}")
        if self.unlocated:
            out.append(
                f"answers not found in their document ({len(self.unlocated)} judgments; judged "
                f"as whole documents), queries: {_listed(sorted(set(self.unlocated)))}"
            )
        if self.metadata:
            out.append(
                f"document metadata kept beside the fixture ({len(self.metadata)} values of "
                f"{len({m['document_id'] for m in self.metadata})} documents; private, never "
                "read by run, report or gate)"
            )
        if self.spans_dropped:
            out.append(
                f"spans crossing every chunk boundary, dropped: {self.spans_dropped} (a larger "
                "--overlap keeps them)"
            )
        return out

    def dropped_table(self) -> str:
        """Every drop as ``reason<TAB>ID`` lines under a header (the ``.dropped.tsv`` file)."""
        rows = [f"{reason}\t{i}" for reason, ids in sorted(self.dropped.items()) for i in ids]
        return "reason\tid\n" + "".join(f"{row}\n" for row in rows)


def _listed(ids: list[str]) -> str:
    more = f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    return ", ".join(ids[:_LISTED]) + more


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)


@dataclass
class _JudgedDocument:
    chunks: list[tuple[str, tuple[int, int]]]  # (chunk ID, offsets)
    text: str | None  # kept only when an answer must be located


def _output_directory(output: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    """The checked, empty output directory (created if missing) and the directories this call
    created, deepest first (removed again when the import fails)."""
    target = Path(output)
    parent = Path(os.path.abspath(target)).parent
    if parent.is_dir():  # first what a killed import left there (its staging folder)
        sweep((parent,))
    existed = target.exists()
    if existed and (not target.is_dir() or any(target.iterdir())):
        raise InputError(
            f"output {shown_path(output)} already exists and is not an empty directory; "
            "choose a new fixture directory (nothing was written)"
        )
    # safe, workspace-relative, not inside another fixture; creates nothing
    check_output(target / META_FILE)
    absolute = target.resolve()
    created = [d for d in (absolute, *absolute.parents) if not d.exists()]
    if not existed:
        absolute.mkdir(parents=True)  # the check passed; removed again if the import fails
    return absolute, created


def import_collection(
    documents: Iterable[SourceDocument],
    queries: Iterable[SourceQuery],
    judgments: Iterable[SourceJudgment],
    output: str | os.PathLike[str],
    *,
    fixture_name: str,
    description: str,
    policy: ChunkingPolicy | None = None,
    language: str = "en",
    version: str = "1.0.0",
    license: str = "NOASSERTION",
    progress: bool = False,
    total: int | None = None,
    grade_map: dict[int, int] | None = None,
) -> ImportSummary:
    """Write the collection as a fixture directory ``output`` (rules in the module docstring).

    ``output`` must not exist or be an empty directory (workspace-relative, see
    :mod:`evalkit.safety.output`); the files are written to a temporary directory beside it and
    moved into place at the end, so a failed import leaves nothing half-written. ``language``
    applies to every object without one; ``grade_map`` maps source grades onto 0-3 (see
    :func:`evalkit.importers.grades.parse_grade_map`). Returns the :class:`ImportSummary`.
    """
    policy = policy or ChunkingPolicy()
    _check_meta(id=fixture_name, version=version, license=license, language=language)
    target, created = _output_directory(output)
    summary = ImportSummary(fixture=fixture_name)
    by_query: dict[str, list[SourceJudgment]] = {}
    answers_needed: set[str] = set()
    staging: Path | None = None
    try:
        for source in judgments:  # a bad judgments file fails here: nothing is left either
            judgment = source
            if grade_map and source.grade in grade_map:
                summary.mapped_grades += 1
                judgment = replace(source, grade=grade_map[source.grade])
            by_query.setdefault(judgment.query_id, []).append(judgment)
            if judgment.answers or judgment.spans:
                answers_needed.add(judgment.document_id)
        check_grades(j.grade for js in by_query.values() for j in js)
        judged_documents = {j.document_id for js in by_query.values() for j in js}
        padded = {unpadded(d) for d in judged_documents | answers_needed} - {None}
        with deferred():  # no signal between the folder's creation and its being known
            staging = staging_dir(target.parent, created)
        languages: set[str] = set()
        fixture = StreamedFixture(staging, batch=BATCH)
        judged = _write_documents(
            documents,
            fixture,
            policy,
            language,
            (judged_documents, answers_needed, padded),
            summary,
            languages,
            progress=progress,
            total=total,
        )
        _match_padded_documents(by_query, judged, summary)
        query_entries = _queries(queries, by_query, judged, language, summary, languages)
        if not query_entries:
            raise InputError(
                "the collection holds no importable query: no query has a judged, imported "
                f"document ({summary.reasons_text()}); check the judgments' query and document "
                "IDs against the queries and documents (nothing was written)"
            )
        fixture.write_queries(query_entries)
        meta = {
            "id": fixture_name,
            "version": version,
            "license": license,
            "description": description,
            "languages": sorted(languages) or [language],
            "requires_spans": False,
            "chunking": policy.as_dict(),
        }
        kept = [kind for kind in PROSE_KINDS if kind in summary.prose]
        if kept:
            meta["prose_may_hold"] = kept
        if grade_map:
            meta["grade_map"] = ",".join(f"{k}:{v}" for k, v in grade_map.items())
        fixture.write_meta(meta)
        if summary.dropped:
            given = Path(output)
            dropped = given.with_name(given.name + DROPPED_SUFFIX)
            write_artifact(dropped, summary.dropped_table(), kind="text", private=())
            summary.dropped_file = shown_path(dropped)
        if summary.metadata:
            given = Path(output)
            sidecar = given.with_name(given.name + METADATA_SUFFIX)
            rows = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in summary.metadata)
            # private text by design, like the fixture itself: not leak-scanned
            write_artifacts([Artifact(sidecar, rows, "text")], private=(), allow_private_text=True)
            summary.metadata_file = shown_path(sidecar)
        (staging / STAGING_RECORD).unlink()
        target.rmdir()
        staging.rename(target)
        remove_staging(staging)  # the container, when it was the last
    except BaseException as error:
        if staging is not None:
            remove_staging(staging)
        for directory in created:  # leave nothing behind that was not there before
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
        if isinstance(error, OSError) and error.errno in _WRITE_ERRNOS:  # a full disk
            raise OutputError(
                f"import: cannot write the fixture ({error.strerror or type(error).__name__}); "
                "nothing was written; expected a writable folder with free space"
            ) from None
        raise
    return summary


#: Errors of writing (not of reading a source): no space, quota, read-only, too large, I/O.
_WRITE_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO})

_META_RULES: Final = (
    ("id", ObjectId, "an ID such as 'my-corpus-v1' (--id)"),
    ("version", Version, "a semantic version such as '1.0.0' (--version)"),
    ("license", License, "an SPDX expression such as 'CC-BY-4.0' (--license)"),
    ("language", Language, "a BCP 47 tag such as 'en' or 'zh-Hans' (--language)"),
)


@functools.cache
def _schema_type(kind: Any) -> TypeAdapter[str]:
    """The fixture schema's own check of one of its string types (``fixtures.schema``)."""
    return TypeAdapter(kind)


def _valid(kind: Any, value: object) -> bool:
    try:
        _schema_type(kind).validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def _check_meta(**values: str) -> None:
    """Refuse fixture metadata the schema would refuse, before anything is written."""
    for name, kind, expected in _META_RULES:
        if not _valid(kind, values[name]):
            raise InputError(
                f"import: the fixture's {name} is not {expected}; "
                "fix the option (nothing was written)"
            )


def _checked_language(value: str, kind: str, object_id: str) -> str:
    """A document's or query's own language, refused when the schema refuses it (no BCP 47
    tag, or longer than one)."""
    if not _valid(Language, value):
        # not shown: a wrongly mapped column may hold a title or query word
        raise InputError(
            f"{kind} {object_id!r}: its language (not shown) is not a BCP 47 tag such as 'en' "
            "or 'zh-Hans' (a lower-case language code first); fix the language column"
        )
    return value


def _mapped_id(source_id: str, kind: str, seen: set[str], summary: ImportSummary) -> str | None:
    """The fixture ID of a source ``kind`` (document, query) ID; None when it is dropped (empty
    or too long to map, or already ``seen``), the reason counted in ``summary``."""
    mapped = fixture_id(source_id)
    if mapped is None:
        from evalkit.safety.canonical import text_hash

        # The source ID itself may be text (a wrong column mapped as the ID): only its hash.
        shown = f"sha256:{text_hash(source_id)}"
        summary.drop(f"{kind} ID empty or too long to map (hashes)", shown if source_id else "")
        return None
    if mapped != source_id:
        summary.mapped_ids += 1
    if mapped in seen:
        summary.drop(f"{kind} ID appears twice (the first was kept)", mapped)
        return None
    return mapped


def _write_documents(  # noqa: PLR0917 - private helper of import_collection
    documents: Iterable[SourceDocument],
    fixture: StreamedFixture,
    policy: ChunkingPolicy,
    language: str,
    wanted: tuple[set[str], set[str], set[str | None]],
    summary: ImportSummary,
    languages: set[str],
    *,
    progress: bool,
    total: int | None,
) -> dict[str, _JudgedDocument]:
    """Stream documents and chunks to ``fixture``; the judged ones' chunks. ``wanted``: the
    judged document IDs, those whose text an answer needs, and the unpadded forms of both (a
    document of such a form is kept too, for :func:`_match_padded_documents`)."""
    judged_documents, answers_needed, padded = wanted
    seen: set[str] = set()
    marked_seen: set[str] = set()  # the chunk IDs written that hold a '#'
    judged: dict[str, _JudgedDocument] = {}
    stream: Iterator[SourceDocument] = iter(documents)
    bar = tqdm(stream, desc="documents", unit="doc", total=total, disable=not progress)
    for source in bar:
        doc_id = _mapped_id(source.id, "document", seen, summary)
        if doc_id is None:
            continue
        text = _clean(source.text)
        title = _clean(source.title).strip()[:MAX_TITLE].strip() or doc_id
        if not text.strip():
            summary.drop("document text is empty", doc_id)
            continue
        if not _prose_kept(find_sensitive(text) + find_sensitive(title), doc_id, summary):
            summary.drop("document holds a credential (key, token or password)", doc_id)
            continue
        try:
            offsets = chunk_offsets(text, policy)
        except InputError as error:
            raise InputError(f"document {doc_id!r}: {error}") from None
        ids = chunk_ids(doc_id, len(offsets))
        if len(ids[-1]) > MAX_ID:
            summary.drop("document ID too long for its chunk IDs", doc_id)
            continue
        # A chunk ID with a '#' may equal one made for another document ('a' split into
        # 'a#c0', 'a#c1' and a document named 'a#c0'): the later document is dropped.
        marked = [chunk_id for chunk_id in ids if "#" in chunk_id]
        if any(chunk_id in marked_seen for chunk_id in marked):
            summary.drop("document's chunk IDs equal another document's", doc_id)
            continue
        marked_seen.update(marked)
        seen.add(doc_id)
        doc_language = _checked_language(source.language or language, "document", doc_id)
        languages.add(doc_language)
        fixture.add_document({"id": doc_id, "language": doc_language, "title": title})
        for chunk_id, (start, end) in zip(ids, offsets, strict=True):
            fixture.add_chunk(
                {
                    "id": chunk_id,
                    "document_id": doc_id,
                    "language": doc_language,
                    "title": title,
                    "text": text[start:end],
                }
            )
        _keep_metadata(doc_id, source.metadata, summary)
        summary.documents += 1
        summary.chunks += len(ids)
        summary.chunked_documents += len(ids) > 1
        form = unpadded(source.id)
        if source.id in judged_documents or (form is not None and form in padded):
            # a document matched only across zero-padding keeps its text for an answer too
            needed = source.id in answers_needed or source.id not in judged_documents
            keep_text = text if needed else None
            judged[source.id] = _JudgedDocument(list(zip(ids, offsets, strict=True)), keep_text)
    fixture.finish_lists(columnar=summary.chunks > COLUMNAR_FROM)
    if not seen:
        raise InputError(
            f"the corpus holds no importable document ({summary.reasons_text()}); check the "
            "file's format and the document ID and text fields (nothing was written)"
        )
    return judged


def _queries(  # noqa: PLR0917 - private helper of import_collection
    queries: Iterable[SourceQuery],
    by_query: dict[str, list[SourceJudgment]],
    judged: dict[str, _JudgedDocument],
    language: str,
    summary: ImportSummary,
    languages: set[str],
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    sources = list(queries)
    known_queries = {source.id for source in sources}
    _match_padded(by_query, known_queries, "queries", summary)
    for source in sources:
        query_id = _mapped_id(source.id, "query", seen, summary)
        if query_id is None:
            continue
        text = _clean(source.text).strip()
        if not text or len(text) > MAX_QUERY_TEXT:
            summary.drop(f"query text empty or over {MAX_QUERY_TEXT} characters", query_id)
            _drop_judgments(source.id, by_query, summary)
            continue
        if not _prose_kept(find_sensitive(text), query_id, summary):
            summary.drop("query holds a credential (key, token or password)", query_id)
            _drop_judgments(source.id, by_query, summary)
            continue
        chunk_judgments = _chunk_judgments(source.id, by_query.get(source.id, []), judged, summary)
        if not chunk_judgments:
            summary.drop("query has no judgment of an imported document", query_id)
            continue
        if all(entry["grade"] < 1 for entry in chunk_judgments):  # else a no-answer query
            summary.drop("query has no relevant judgment (only grade 0)", query_id)
            continue
        query_language = _checked_language(source.language or language, "query", query_id)
        seen.add(query_id)  # only a kept query: a later copy of a dropped one may be kept
        languages.add(query_language)
        entries.append(
            {
                "id": query_id,
                "language": query_language,
                "text": text,
                "judgments": chunk_judgments,
            }
        )
        summary.queries += 1
        summary.judgments += len(chunk_judgments)
        summary.spans += sum(len(j.get("spans", ())) for j in chunk_judgments)
    for query_id in sorted(set(by_query) - known_queries):
        summary.drop("judged query not in the queries", query_id)
    return entries


def _keep_metadata(
    doc_id: str, metadata: tuple[tuple[str, str], ...], summary: ImportSummary
) -> None:
    """Collect an imported document's metadata (rule in the module docstring)."""
    for name, value in metadata:
        if prose_kinds(find_sensitive(value), _PROSE):
            summary.drop("document metadata value holds a credential (left out)", doc_id)
            continue
        summary.metadata.append({"document_id": doc_id, "field": name, "value": _clean(value)})


def _drop_judgments(
    query_id: str, by_query: dict[str, list[SourceJudgment]], summary: ImportSummary
) -> None:
    """Count the judgments of a dropped query as dropped."""
    for judgment in by_query.get(query_id, []):
        summary.drop("judgment of a query not imported", _judgment_id(query_id, judgment))


def _padded_targets(ids: Iterable[str]) -> dict[str, list[str]]:
    """The all-digit ``ids`` by their unpadded form."""
    targets: dict[str, list[str]] = {}
    for raw in ids:
        form = unpadded(raw)
        if form is not None:
            targets.setdefault(form, []).append(raw)
    return targets


def _match_padded(
    by_query: dict[str, list[SourceJudgment]],
    known: set[str],
    kind: str,
    summary: ImportSummary,
) -> None:
    """Move the judgments of a judged query ID that is no ``known`` ID to the one known ID it
    equals across zero-padding (rule in the module docstring); with several, drop them."""
    targets = _padded_targets(known)
    matched = 0
    for query_id in [q for q in by_query if q not in known]:
        form = unpadded(query_id)
        found = targets.get(form, []) if form is not None else []
        if len(found) == 1:
            by_query.setdefault(found[0], []).extend(by_query.pop(query_id))
            matched += 1
        elif found:
            for judgment in by_query.pop(query_id):
                summary.drop(_SEVERAL_PADDED, _judgment_id(query_id, judgment))
    if matched:
        summary.padded_ids[kind] = matched


def _match_padded_documents(
    by_query: dict[str, list[SourceJudgment]],
    judged: dict[str, _JudgedDocument],
    summary: ImportSummary,
) -> None:
    """Point each judgment of a document ID that is no imported ID to the one imported ID it
    equals across zero-padding; with several, drop it (rule in the module docstring)."""
    targets = _padded_targets(judged)
    matched: set[str] = set()
    for query_id, judgments in by_query.items():
        kept: list[SourceJudgment] = []
        for judgment in judgments:
            form = unpadded(judgment.document_id)
            found = targets.get(form, []) if judgment.document_id not in judged and form else []
            if len(found) == 1:
                matched.add(judgment.document_id)
                kept.append(replace(judgment, document_id=found[0]))
            elif found:
                summary.drop(_SEVERAL_PADDED, _judgment_id(query_id, judgment))
            else:
                kept.append(judgment)
        judgments[:] = kept
    if matched:
        summary.padded_ids["documents"] = len(matched)


def _chunk_judgments(
    query_id: str,
    judgments: list[SourceJudgment],
    judged: dict[str, _JudgedDocument],
    summary: ImportSummary,
) -> list[dict[str, Any]]:
    """The query's chunk-level judgments (rule in the module docstring), in chunk order."""
    grades: dict[str, int] = {}
    spans: dict[str, list[dict[str, Any]]] = {}
    order: dict[str, int] = {}
    for judgment in judgments:
        document = judged.get(judgment.document_id)
        if document is None:
            summary.drop("judgment of a document not imported", _judgment_id(query_id, judgment))
            continue
        if judgment.grade < 0:
            summary.drop("judgment with a negative grade", _judgment_id(query_id, judgment))
            continue
        grade = judgment.grade
        located = list(judgment.spans)
        if judgment.answers and document.text is not None:
            for answer in judgment.answers:
                located += locate_answer(document.text, answer)
            if not located:
                summary.unlocated.append(fixture_id(query_id) or query_id)
        targets: list[tuple[str, list[tuple[int, int]]]] = []
        if located:
            placed: set[tuple[int, int]] = set()
            for chunk_id, offsets in document.chunks:
                inside = spans_in_chunk(sorted(set(located)), offsets)
                if inside:
                    targets.append((chunk_id, inside))
                    placed.update((s + offsets[0], e + offsets[0]) for s, e in inside)
            summary.spans_dropped += len(set(located) - placed)
        if not targets:  # a whole-document judgment: every chunk gets the grade
            targets = [(chunk_id, []) for chunk_id, _ in document.chunks]
        for chunk_id, inside in targets:
            order.setdefault(chunk_id, len(order))
            grades[chunk_id] = max(grades.get(chunk_id, 0), grade)
            chunk_text = _chunk_text_lookup(document, chunk_id)
            listed = spans.setdefault(chunk_id, [])
            for start, end in inside:
                span = {"text": chunk_text(start, end), "start": start, "end": end}
                if span not in listed and len(listed) < MAX_SPANS:
                    listed.append(span)
    chunk_ids_in_order = sorted(order, key=order.__getitem__)[:MAX_JUDGMENTS]
    result = []
    for chunk_id in chunk_ids_in_order:
        entry: dict[str, Any] = {"chunk_id": chunk_id, "grade": grades[chunk_id]}
        if spans[chunk_id] and grades[chunk_id] >= 1:
            entry["spans"] = spans[chunk_id]
        result.append(entry)
    return result


def _chunk_text_lookup(document: _JudgedDocument, chunk_id: str) -> Callable[[int, int], str]:
    offsets = dict(document.chunks)[chunk_id]
    text = document.text or ""

    def slice_text(start: int, end: int) -> str:
        return text[offsets[0] + start : offsets[0] + end]

    return slice_text


def _judgment_id(query_id: str, judgment: SourceJudgment) -> str:
    """A judgment as ``query document`` (fixture IDs; an unmappable ID as ``?``)."""
    return f"{fixture_id(query_id) or '?'} {fixture_id(judgment.document_id) or '?'}"


def _prose_kept(kinds: tuple[str, ...], object_id: str, summary: ImportSummary) -> bool:
    """False when ``kinds`` (of an object's prose) hold a credential; else True, the prose
    kinds noted in ``summary`` (declared in ``fixture.yaml``, rule in the module docstring)."""
    if prose_kinds(kinds, _PROSE):
        return False
    for kind in set(kinds):
        summary.prose.setdefault(kind, []).append(object_id)
    return True
