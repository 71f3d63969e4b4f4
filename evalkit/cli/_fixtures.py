"""Fixture commands: ``validate`` (and its ``--since`` version rule), ``schema``, ``fixture``
(``diff``, ``locate``, ``release``, ``convert``) and ``import`` (BEIR, TREC, SMART, tables).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from evalkit.cli._common import Handler, gc_paused, print_error, quoted, shown
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalkit.fixtures import Fixture


# --- validate -------------------------------------------------------------------------------


def add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("validate", help="check a fixture directory against the strict schema")
    p.add_argument("path", help="fixture directory")
    p.add_argument(
        "--since",
        default=None,
        metavar="OLD",
        help="also check the version rule (fixtures/CONTRIBUTING.md) against OLD: a fixture "
        "directory, or a release record such as fixtures/releases.json (its last release of "
        "this fixture); exit 1 when the content changed more than the version bump allows",
    )
    return _run_validate


def _run_validate(args: argparse.Namespace) -> int:
    from collections import Counter
    from pathlib import Path

    from evalkit.errors import FixtureError

    path = Path(args.path)
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory"
        print_error(EvalkitError(f"fixture directory {quoted(args.path)} {what}"))
        return 2
    try:
        with gc_paused():
            from evalkit.fixtures import load_fixture

            fixture = load_fixture(path)
    except FixtureError as error:
        for problem in error.problems:
            print(problem)
        print(f"{shown(args.path)}: invalid — {len(error.problems)} problem(s)")
        return 1
    per_language = Counter(q.language for q in fixture.queries)
    no_answer = sum(1 for q in fixture.queries if not q.answerable)
    languages = ", ".join(f"{lang}: {per_language[lang]}" for lang in sorted(per_language))
    print(
        f"{fixture.meta.id} {fixture.meta.version}: valid — {len(fixture.documents)} documents, "
        f"{len(fixture.chunks)} chunks, {len(fixture.queries)} queries "
        f"({languages}; {no_answer} no-answer)"
    )
    if args.since is not None:
        return _check_since(fixture, args.since)
    return 0


def _check_since(fixture: Fixture, since: str) -> int:
    """``validate --since``: the version rule against an old directory or a release record."""
    import os

    from evalkit.fixtures.diff import fixture_outline, scan_output
    from evalkit.fixtures.versioning import check_releases, check_version, read_releases

    new = fixture_outline(fixture)
    if os.path.isdir(since):
        old_fixture = _load_old_fixture(since)
        check = check_version(fixture_outline(old_fixture), new)
        lines = [
            f"version rule against {since}: {check.bump} bump, {len(check.changes)} change(s), "
            f"needs {check.required}: {'ok' if check.ok else 'FAILED'}",
            *check.problems(),
        ]
        failed, others = not check.ok, [old_fixture]
    else:
        summary, problems = check_releases(read_releases(since), new)
        lines = [f"version rule against {since} ({summary}): {'FAILED' if problems else 'ok'}"]
        lines += problems
        failed, others = bool(problems), []
    text = "\n".join(lines) + "\n"
    scan_output(text, [fixture, *others])
    print(text, end="")
    return 1 if failed else 0


def _load_old_fixture(path: str, side: str = "old") -> Fixture:
    """One side of a comparison; an invalid one is an input error (exit 2)."""
    from evalkit.errors import FixtureError, InputError
    from evalkit.fixtures import load_fixture

    try:
        return load_fixture(path)
    except FixtureError as error:
        raise InputError(
            f"the {side} fixture {path!r} does not load ({len(error.problems)} problem(s)); "
            f"expected a valid fixture directory — run `evalkit validate {path}`"
        ) from None


# --- schema ---------------------------------------------------------------------------------


def add_schema(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of a fixture file (committed in evalkit/schema/ too)",
    )
    p.add_argument("kind", choices=("fixture", "documents", "chunks", "queries", "aliases"))
    return _run_schema


def _run_schema(args: argparse.Namespace) -> int:
    import json

    from evalkit.fixtures import fixture_json_schema

    print(json.dumps(fixture_json_schema(args.kind), indent=2, ensure_ascii=False))
    return 0


# --- fixture diff, locate, release, convert -------------------------------------------------


def add_fixture(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "fixture",
        help="fixture governance: diff two versions by ID, locate a span, record a release",
    )
    group = p.add_subparsers(dest="fixture_command", required=True, metavar="FIXTURE_COMMAND")
    d = group.add_parser(
        "diff",
        help="what changed between two fixture directories, IDs only (no text unless "
        "--show-text --allow-text); exit 1 if the output would contain fixture text",
    )
    d.add_argument(
        "old",
        help="old fixture directory, or a release record (fixtures/releases.json: the last "
        "recorded release of the new fixture's ID; its text is not available to --show-text)",
    )
    d.add_argument("new", help="new fixture directory")
    d.add_argument("--json", action="store_true", help="print canonical JSON instead of tables")
    d.add_argument(
        "--show-text",
        action="store_true",
        help="also show the text of each change (private: needs --allow-text)",
    )
    d.add_argument(
        "--allow-text",
        action="store_true",
        help="allow --show-text: the output then contains private fixture text, is not "
        "leak-scanned and must not leave the team",
    )
    d.set_defaults(fixture_handler=_run_fixture_diff)
    loc = group.add_parser(
        "locate",
        help="find ANSWER in a chunk: the verbatim span and its offsets, or the closest "
        "candidates. Prints fixture text by design (it is for the span's author); logs nothing",
        description="Print where ANSWER occurs in CHUNK_ID's text as a span to paste into the "
        "judgment of QUERY_ID: exact matches first, then matches ignoring white space, case "
        "and compatibility forms (NFKC), else the closest fuzzy candidates. The output shows "
        "fixture text on purpose: it is for the person authoring the span. Nothing is logged "
        "or written. Exit 0 with a match, 1 with candidates only or none.",
    )
    loc.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    loc.add_argument("query_id", help="the query the span is for")
    loc.add_argument("chunk_id", help="the chunk to search")
    loc.add_argument("answer", help="the answer words, as you remember them")
    loc.add_argument("--limit", type=int, default=5, help="fuzzy candidates to show (default 5)")
    loc.set_defaults(fixture_handler=_run_fixture_locate)
    rel = group.add_parser(
        "release",
        help="record the fixture's current version in the release record (after checking "
        "the version rule against the last recorded release)",
    )
    rel.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    rel.add_argument(
        "--releases",
        default=None,
        help="workspace-relative release record (default: releases.json beside the fixture "
        "directory, e.g. fixtures/releases.json)",
    )
    rel.set_defaults(fixture_handler=_run_fixture_release)
    conv = group.add_parser(
        "convert",
        help="write a fixture in another form (yaml, or jsonl/parquet for documents, chunks "
        "and queries) to a new directory; lossless, same content hash",
    )
    conv.add_argument("fixture_dir", metavar="FIXTURE", help="fixture directory")
    conv.add_argument("--to", required=True, choices=("yaml", "jsonl", "parquet"), dest="form")
    conv.add_argument(
        "--output", required=True, help="new workspace-relative directory (must not exist)"
    )
    conv.set_defaults(fixture_handler=_run_fixture_convert)
    return _run_fixture


def _run_fixture_convert(args: argparse.Namespace) -> int:
    from evalkit.errors import FixtureError
    from evalkit.fixtures.convert import convert_fixture
    from evalkit.fixtures.diff import fixture_content_hash
    from evalkit.safety.output import shown_path

    try:
        fixture = convert_fixture(args.fixture_dir, args.form, args.output)
    except FixtureError as error:
        print_error(error)
        return 1
    print(
        f"{fixture.meta.id} {fixture.meta.version}: written as {args.form} to "
        f"{shown_path(args.output, label='output')} ({len(fixture.documents)} documents, "
        f"{len(fixture.chunks)} chunks, {len(fixture.queries)} queries; content hash "
        f"{fixture_content_hash(fixture)})"
    )
    return 0


def _run_fixture(args: argparse.Namespace) -> int:
    handler: Handler = args.fixture_handler
    return handler(args)


def _run_fixture_diff(args: argparse.Namespace) -> int:
    import os

    from evalkit.errors import InputError, LeakError
    from evalkit.fixtures.diff import (
        fixture_diff_json,
        fixture_outline,
        format_fixture_diff,
        scan_output,
        with_text,
    )
    from evalkit.fixtures.versioning import check_version, last_release, read_releases

    if args.show_text and not args.allow_text:
        raise InputError(
            "--show-text prints private fixture text; add --allow-text to confirm that the "
            "output stays inside the team, or drop --show-text for the ID-only diff"
        )
    new_fixture = _load_old_fixture(args.new, "new")
    new = fixture_outline(new_fixture)
    if os.path.isdir(args.old):
        loaded = _load_old_fixture(args.old)
        old, old_fixture = fixture_outline(loaded), loaded
    else:
        old_fixture = None
        release = last_release(read_releases(args.old), new_fixture.meta.id)
        if release is None:
            raise InputError(
                f"release record {args.old!r} has no release of fixture "
                f"{new_fixture.meta.id!r}; pass the old fixture directory instead"
            )
        old = release["outline"]
    check = check_version(old, new)
    changes = check.changes
    if args.show_text:
        changes = with_text(changes, old_fixture, new_fixture)
    if args.json:
        text = fixture_diff_json(changes, old, new, required_bump=check.required)
    else:
        text = format_fixture_diff(changes, old, new, required_bump=check.required)
    if args.show_text:
        print(
            "warning: this output contains private fixture text; do not publish it", file=sys.stderr
        )
    else:
        try:
            scan_output(text, [f for f in (old_fixture, new_fixture) if f is not None])
        except LeakError as error:
            print_error(error)
            return 1
    print(text, end="")
    return 0


def _run_fixture_locate(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.fixtures.locate import locate_span, read_span_context

    if args.limit < 1:
        raise InputError(f"--limit must be at least 1, found {args.limit}")
    if not args.answer.strip():
        raise InputError("the answer to locate is empty; give its words, e.g. 'at 08:15'")
    context = read_span_context(args.fixture_dir, args.query_id, args.chunk_id)
    candidates = locate_span(context.chunk_text, args.answer, limit=args.limit)
    if not context.query_found:
        print(f"note: query {args.query_id} is not in the fixture yet; add it before the span")
    if context.grade is not None:
        spans = ", ".join(f"{a}:{b}" for a, b in context.spans) or "none"
        print(f"current judgment of {args.chunk_id}: grade {context.grade}, spans {spans}")
    matched = bool(candidates) and candidates[0].match != "fuzzy"
    if not candidates:
        print(f"no passage of {args.chunk_id} resembles the answer; try fewer or other words")
        return 1
    heading = "match" if matched else "no exact match; closest candidates"
    print(f"{heading} in {args.chunk_id} ({len(candidates)}):")
    for c in candidates:
        known = "  (already a span)" if (c.start, c.end) in context.spans else ""
        print(f"  [{c.match}, score {c.score:.2f}] start {c.start}, end {c.end}{known}")
        print(f"    text: {_yaml_scalar(c.text)}")
    best = candidates[0]
    print("\nspan to paste under the judgment's spans:")
    print(f"  - text: {_yaml_scalar(best.text)}\n    start: {best.start}\n    end: {best.end}")
    return 0 if matched else 1


def _yaml_scalar(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def _run_fixture_release(args: argparse.Namespace) -> int:
    import os

    from evalkit.fixtures import load_fixture
    from evalkit.fixtures.diff import fixture_outline, outline_content_hash, scan_output
    from evalkit.fixtures.versioning import (
        add_release,
        check_version,
        last_release,
        read_releases,
        releases_json,
    )
    from evalkit.safety.artifacts import check_output
    from evalkit.safety.output import write_text_atomic

    fixture = load_fixture(args.fixture_dir)
    default = os.path.join(os.path.dirname(os.path.normpath(args.fixture_dir)), "releases.json")
    target = args.releases or os.path.relpath(default)
    check_output(target)  # refuse an unsafe path before reading anything else
    releases = read_releases(target, missing_ok=True)
    outline = fixture_outline(fixture)
    content = outline_content_hash(outline)
    meta = fixture.meta
    same = [r for r in releases if r["fixture"] == meta.id and r["version"] == meta.version]
    if same:
        if same[0]["contentHash"] == content:
            print(f"{meta.id} {meta.version} is already recorded in {target}; nothing to do")
            return 0
        print(
            f"{meta.id} {meta.version} was released with content {same[0]['contentHash']}, "
            f"now {content}: the content changed but the version did not; bump version in "
            "fixture.yaml (fixtures/CONTRIBUTING.md, version rules)"
        )
        return 1
    previous = last_release(releases, meta.id)
    if previous is not None:
        check = check_version(previous["outline"], outline)
        if not check.ok:
            print(f"version rule against {target} ({previous['version']}): FAILED")
            print("\n".join(check.problems()))
            return 1
    text = releases_json(add_release(releases, outline))
    scan_output(text, [fixture])
    write_text_atomic(target, text)
    print(f"recorded {meta.id} {meta.version} (contentHash {content}) in {target}")
    return 0


# --- import ---------------------------------------------------------------------------------


def add_import(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "import",
        help="turn a BEIR folder, TREC files, SMART files or tables (JSONL/CSV/Parquet) into a "
        "fixture that 'evalkit validate' accepts; prints what was imported and dropped (IDs "
        "and counts)",
        description="Rules for IDs, chunking, judgments and answer spans: evalkit.importers.core "
        "and evalkit.fixtures.chunking (and docs/own-data.md, 'Your own data').",
    )
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    beir = formats.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("folder", help="BEIR dataset folder")
    beir.add_argument("--split", default="test", help="qrels split (default test)")
    trec = formats.add_parser("trec", help="TREC qrels, topics and a corpus")
    trec.add_argument("--qrels", required=True, help="qrels file")
    trec.add_argument("--topics", required=True, help="topics: TREC <top> format or id<TAB>text")
    trec.add_argument("--corpus", required=True, help="corpus: JSONL or TREC <DOC> SGML")
    trec.add_argument("--topic-field", default="title", choices=("title", "desc"))
    smart = formats.add_parser(
        "smart",
        help="SMART files (.I/.T/.W records: Cranfield, CISI, CACM, ...) and judgments in "
        "one of the family's layouts (detected, or --qrels-layout)",
    )
    smart.add_argument("--documents", required=True, help="documents: SMART records")
    smart.add_argument("--queries", required=True, help="queries: SMART records")
    smart.add_argument(
        "--qrels",
        required=True,
        help="judgments: 'query doc grade', 'query 0 doc grade' or "
        "'query doc [constant columns]' (binary)",
    )
    smart.add_argument(
        "--qrels-layout",
        default="auto",
        choices=("auto", "query-doc-grade", "query-0-doc-grade", "query-doc-binary"),
        help="the judgments' layout (default auto: detected from the file and printed; an "
        "ambiguous file is refused, naming the layouts it fits)",
    )
    smart.add_argument(
        "--query-ids",
        default=None,
        choices=("as-written", "order"),
        help="a query's ID: its .I (as-written, the default) or its number in file order, 1, "
        "2, ... (order: how Cranfield's judgments number its queries); without it, judgments "
        "that may number the queries in file order are refused",
    )
    table = formats.add_parser("table", help="tables of documents, queries and judgments")
    table.add_argument("--documents", required=True, help=".jsonl, .csv or .parquet")
    table.add_argument("--queries", required=True, help=".jsonl, .csv or .parquet")
    table.add_argument("--judgments", required=True, help=".jsonl, .csv or .parquet")
    from evalkit.importers.columns import TableColumns

    for name, column in TableColumns().__dict__.items():
        table.add_argument(
            f"--{name.replace('_', '-')}",
            dest=f"column_{name}",
            default=column,
            help=f"column name (default {column!r}{', none' if not column else ''})",
        )
    for each in (beir, trec, smart, table):
        each.add_argument("--output", required=True, help="new, workspace-relative fixture dir")
        each.add_argument(
            "--grade-map",
            default=None,
            metavar="MAP",
            help="map the collection's grades onto 0-3, e.g. 4:3,3:2,2:1,1:1,5:0 (recorded in "
            "fixture.yaml); without it, grades above 3 are refused",
        )
        each.add_argument("--id", default=None, help="fixture ID (default: from --output)")
        each.add_argument("--language", default="en", help="language of every object without one")
        each.add_argument("--license", default="NOASSERTION", help="SPDX license expression")
        each.add_argument("--version", default="1.0.0", help="fixture version (semver)")
        each.add_argument(
            "--chunking",
            default="paragraphs",
            choices=("none", "characters", "paragraphs"),
            help="how long documents are cut (default paragraphs)",
        )
        each.add_argument("--size", type=int, default=4000, help="max chunk characters (4000)")
        each.add_argument(
            "--overlap",
            type=int,
            default=0,
            help="overlap: characters (characters) or paragraphs (paragraphs); default 0",
        )
    return _run_import


def _run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evalkit.importers import (
        ChunkingPolicy,
        TableColumns,
        beir_source,
        fixture_id,
        import_collection,
        table_source,
        trec_source,
    )

    policy = ChunkingPolicy(args.chunking, args.size, args.overlap)
    read: Callable[[], list[str]] = list  # what the reader read (the SMART reader's counts)
    if args.format == "beir":
        sources = beir_source(args.folder, args.split)
        origin = f"a BEIR collection (split {args.split})"
    elif args.format == "trec":
        sources = trec_source(args.qrels, args.topics, args.corpus, topic_field=args.topic_field)
        origin = "TREC qrels, topics and corpus"
    elif args.format == "smart":
        from evalkit.importers.smart import smart_source

        smart = smart_source(
            args.documents,
            args.queries,
            args.qrels,
            query_ids=args.query_ids,
            qrels_layout=args.qrels_layout,
        )
        sources = smart.documents, smart.queries, smart.judgments
        read = smart.lines  # called after the import has consumed the streams
        origin = "SMART documents and queries, and qrels"
    else:
        columns = TableColumns(
            **{name: getattr(args, f"column_{name}") for name in TableColumns().__dict__}
        )
        sources = table_source(args.documents, args.queries, args.judgments, columns)
        origin = "tables of documents, queries and judgments"
    from evalkit.importers.grades import parse_grade_map

    grade_map = parse_grade_map(args.grade_map) if args.grade_map is not None else None
    name = args.id or fixture_id(Path(args.output).name) or "imported"
    summary = import_collection(
        *sources,
        args.output,
        fixture_name=name,
        description=f"Imported by evalkit import from {origin}.",
        policy=policy,
        language=args.language,
        version=args.version,
        license=args.license,
        progress=sys.stderr.isatty(),
        grade_map=grade_map,
    )
    print("\n".join(read() + summary.lines()))
    if summary.dropped_file:
        print(f"dropped IDs: {summary.dropped_file}")
    if summary.metadata_file:
        print(f"document metadata: {summary.metadata_file}")
    print(f"fixture: {args.output} (check it with 'evalkit validate {args.output}')")
    return 0
