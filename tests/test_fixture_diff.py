"""``evalkit fixture diff``: every kind of change, on edited copies of the committed fixture.

Expected rows are written out by hand from the edit; span offsets come from ``str.find`` on the
committed chunk text (the position rule of ``evalkit.measures.spans``: first occurrence). Every
output, text and JSON, is leak-scanned against both fixtures' strings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_edits import (
    COMMITTED,
    Data,
    Edit,
    add_judgment,
    add_query,
    add_span,
    chunk,
    committed,
    document,
    edited,
    fix_text_before_spans,
    judgment,
    move_span,
    query,
    regrade_judgment,
    remove_judgment,
    remove_query,
    remove_span,
    set_version,
    write_copy,
)
from hypothesis import given, settings, strategies as st

from evalkit.cli import main
from evalkit.errors import LeakError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.fixtures.diff import (
    CHANGE_COLUMNS,
    diff_fixtures,
    fixture_content_hash,
    fixture_diff_json,
    fixture_outline,
    fixture_profile,
    format_fixture_diff,
    scan_output,
)
from evalkit.safety.privacy import find_leaks, private_texts

Row = tuple[str, str, str, str, str | None, str | None]


@pytest.fixture(scope="module")
def base() -> Fixture:
    return committed()


def _offsets(fixture: Fixture, chunk_id: str, text: str) -> str:
    start = fixture.chunk(chunk_id).text.find(text)
    assert start >= 0
    return f"{start}:{start + len(text)}"


def _shifted(offsets: str, by: int) -> str:
    start, end = (int(part) + by for part in offsets.split(":"))
    return f"{start}:{end}"


def _set(path: tuple[str, ...], value: Any) -> Edit:
    """Set ``data[kind][id][field] = value`` for ``path == (kind, id, field)``."""

    def edit(data: Data) -> None:
        kind, object_id, field = path
        lookup = {"queries": query, "chunks": chunk, "documents": document}[kind]
        lookup(data, object_id)[field] = value

    return edit


def _meta(field: str, value: Any) -> Edit:
    def edit(data: Data) -> None:
        data["meta"][field] = value

    return edit


def _add_chunk(data: Data) -> None:
    data["chunks"] = [
        *data["chunks"],
        {
            "id": "chunk-civic-01-99",
            "document_id": "doc-civic-01",
            "language": "en",
            "title": "Lockers",
            "text": "Lockers by the entrance take a coin and return it.",
            "near_duplicate_of": None,
        },
    ]


def _remove_chunk(data: Data) -> None:
    data["chunks"] = [c for c in data["chunks"] if c["id"] != "chunk-civic-01-02"]


def _add_document(data: Data) -> None:
    data["documents"] = [
        *data["documents"],
        {"id": "doc-civic-99", "language": "en", "title": "Lost property office"},
    ]


def _remove_document(data: Data) -> None:
    # doc-visitor-03 has one chunk and no judgment refers to it.
    gone = {c["id"] for c in data["chunks"] if c["document_id"] == "doc-visitor-03"}
    assert len(gone) == 1
    data["documents"] = [d for d in data["documents"] if d["id"] != "doc-visitor-03"]
    data["chunks"] = [c for c in data["chunks"] if c["id"] not in gone]


def _visitor_chunk(base: Fixture) -> str:
    return next(c.id for c in base.chunks if c.document_id == "doc-visitor-03")


def _add_french(data: Data) -> None:
    """Declare fr with a document, a chunk, an answerable and a no-answer query."""
    data["meta"]["languages"] = (*data["meta"]["languages"], "fr")
    data["documents"] = [*data["documents"], {"id": "doc-fr-01", "language": "fr", "title": "Bac"}]
    data["chunks"] = [
        *data["chunks"],
        {
            "id": "chunk-fr-01-01",
            "document_id": "doc-fr-01",
            "language": "fr",
            "title": "Horaires",
            "text": "Le premier bac part du quai à six heures.",
            "near_duplicate_of": None,
        },
    ]
    data["queries"] = [
        *data["queries"],
        {
            "id": "q-fr-001",
            "language": "fr",
            "text": "À quelle heure part le premier bac ?",
            "tags": (),
            "judgments": [
                {
                    "chunk_id": "chunk-fr-01-01",
                    "grade": 3,
                    "spans": [{"text": "à six heures", "start": None, "end": None}],
                }
            ],
        },
        {"id": "q-fr-002", "language": "fr", "text": "Y a-t-il un bac de nuit ?", "tags": ()},
    ]


# (name, edits, expected rows given the base fixture); one case per kind of change.
CASES: list[tuple[str, tuple[Edit, ...], Any]] = [
    ("query added", (add_query,), lambda b: [("query", "q-en-900", "", "added", None, None)]),
    (
        "query removed",
        (remove_query,),
        lambda b: [("query", "q-en-045", "", "removed", None, None)],
    ),
    (
        "query text",
        (_set(("queries", "q-en-042", "text"), "Is there a night tram on holidays?"),),
        lambda b: [("query", "q-en-042", "text", "changed", None, None)],
    ),
    (
        "query language",
        (_set(("queries", "q-en-042", "language"), "zh"),),
        lambda b: [("query", "q-en-042", "language", "changed", "en", "zh")],
    ),
    (
        "query tags",
        (_set(("queries", "q-en-001", "tags"), ("paraphrase", "hard-negative")),),
        lambda b: [
            ("query", "q-en-001", "tags", "changed", "hard-negative", "hard-negative,paraphrase")
        ],
    ),
    (
        "judgment added",
        (add_judgment,),
        lambda b: [("judgment", "q-en-001/chunk-ferry-01-02", "grade", "added", None, "1")],
    ),
    (
        "judgment removed",
        (remove_judgment,),
        lambda b: [("judgment", "q-en-030/chunk-clinic-03-01", "grade", "removed", "1", None)],
    ),
    (
        "judgment regraded",
        (regrade_judgment,),
        lambda b: [("judgment", "q-en-030/chunk-clinic-03-03", "grade", "regraded", "2", "1")],
    ),
    (
        "span moved",
        (move_span,),
        lambda b: [
            (
                "span",
                "q-en-001/chunk-ferry-01-01",
                "offsets",
                "moved",
                _offsets(b, "chunk-ferry-01-01", "the first boat leaves Lantern Quay at 06:10"),
                _offsets(b, "chunk-ferry-01-01", "first boat leaves Lantern Quay at 06:10"),
            )
        ],
    ),
    (
        "span added",
        (add_span,),
        lambda b: [("span", "q-en-003/chunk-ferry-01-03", "offsets", "added", None, "0:12")],
    ),
    (
        "span removed",
        (remove_span,),
        lambda b: [
            (
                "span",
                "q-en-003/chunk-ferry-01-03",
                "offsets",
                "removed",
                _offsets(b, "chunk-ferry-01-03", "It leaves Lantern Quay at 00:15 and 01:30"),
                None,
            )
        ],
    ),
    (
        "chunk text before a span",
        (fix_text_before_spans,),
        lambda b: [
            ("chunk", "chunk-ferry-01-01", "text", "changed", None, None),
            *[
                (
                    "span",
                    f"{q}/chunk-ferry-01-01",
                    "offsets",
                    "moved",
                    _offsets(b, "chunk-ferry-01-01", "the first boat leaves Lantern Quay at 06:10"),
                    _shifted(
                        _offsets(
                            b, "chunk-ferry-01-01", "the first boat leaves Lantern Quay at 06:10"
                        ),
                        len("Note: "),
                    ),
                )
                for q in ("q-en-001", "q-zh-005")
            ],
        ],
    ),
    (
        "chunk added",
        (_add_chunk,),
        lambda b: [("chunk", "chunk-civic-01-99", "", "added", None, None)],
    ),
    (
        "chunk removed",
        (_remove_chunk,),
        lambda b: [("chunk", "chunk-civic-01-02", "", "removed", None, None)],
    ),
    (
        "chunk title",
        (_set(("chunks", "chunk-civic-01-02", "title"), "Queue numbers"),),
        lambda b: [("chunk", "chunk-civic-01-02", "title", "changed", None, None)],
    ),
    (
        "chunk language",
        (_set(("chunks", "chunk-civic-01-02", "language"), "zh"),),
        lambda b: [("chunk", "chunk-civic-01-02", "language", "changed", "en", "zh")],
    ),
    (
        "chunk document",
        (_set(("chunks", "chunk-civic-01-02", "document_id"), "doc-civic-02"),),
        lambda b: [
            ("chunk", "chunk-civic-01-02", "document_id", "changed", "doc-civic-01", "doc-civic-02")
        ],
    ),
    (
        "chunk near duplicate",
        (_set(("chunks", "chunk-civic-02-01", "near_duplicate_of"), None),),
        lambda b: [
            (
                "chunk",
                "chunk-civic-02-01",
                "near_duplicate_of",
                "changed",
                "chunk-civic-01-01",
                None,
            )
        ],
    ),
    (
        "document added",
        (_add_document,),
        lambda b: [("document", "doc-civic-99", "", "added", None, None)],
    ),
    (
        "document removed",
        (_remove_document,),
        lambda b: [
            ("document", "doc-visitor-03", "", "removed", None, None),
            ("chunk", _visitor_chunk(b), "", "removed", None, None),
        ],
    ),
    (
        "document title",
        (_set(("documents", "doc-civic-01", "title"), "Civic Service Hall guide"),),
        lambda b: [("document", "doc-civic-01", "title", "changed", None, None)],
    ),
    (
        "document language",
        (_set(("documents", "doc-civic-01", "language"), "zh"),),
        lambda b: [("document", "doc-civic-01", "language", "changed", "en", "zh")],
    ),
    (
        "fixture license",
        (_meta("license", "CC-BY-4.0"),),
        lambda b: [
            ("fixture", "synthetic-bilingual-v1", "license", "changed", "CC0-1.0", "CC-BY-4.0")
        ],
    ),
    (
        "fixture description",
        (_meta("description", "Synthetic bilingual fixture, shorter description."),),
        lambda b: [("fixture", "synthetic-bilingual-v1", "description", "changed", None, None)],
    ),
    (
        "fixture requires_spans",
        (_meta("requires_spans", False),),
        lambda b: [
            ("fixture", "synthetic-bilingual-v1", "requires_spans", "changed", "true", "false")
        ],
    ),
    (
        "fixture id",
        (_meta("id", "synthetic-bilingual-v2"),),
        lambda b: [
            (
                "fixture",
                "synthetic-bilingual-v2",
                "id",
                "changed",
                "synthetic-bilingual-v1",
                "synthetic-bilingual-v2",
            )
        ],
    ),
    (
        "language added",
        (_add_french,),
        lambda b: [
            ("language", "fr", "", "added", None, None),
            ("document", "doc-fr-01", "", "added", None, None),
            ("chunk", "chunk-fr-01-01", "", "added", None, None),
            ("query", "q-fr-001", "", "added", None, None),
            ("query", "q-fr-002", "", "added", None, None),
        ],
    ),
]


def _rows(changes: Any) -> list[Row]:
    assert list(changes.columns) == list(CHANGE_COLUMNS)
    return [tuple(row) for row in changes.itertuples(index=False)]


def _assert_leak_free(text: str, *fixtures: Fixture) -> None:
    private = [item for fixture in fixtures for item in private_texts(fixture)]
    assert find_leaks(text, private) == []


@pytest.mark.parametrize(("edits", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_kind_of_change(base: Fixture, edits: tuple[Edit, ...], expected: Any) -> None:
    new = edited(base, *edits)
    changes = diff_fixtures(base, new)
    assert _rows(changes) == expected(base)
    # every content change changes the content hash, and the reverse diff mirrors the rows
    assert fixture_content_hash(new) != fixture_content_hash(base)
    back = diff_fixtures(new, base)
    assert len(back) == len(changes)
    old, now = fixture_outline(base), fixture_outline(new)
    for text in (format_fixture_diff(changes, old, now), fixture_diff_json(changes, old, now)):
        _assert_leak_free(text, base, new)


def test_language_removed_is_the_reverse_of_added(base: Fixture) -> None:
    french = edited(base, _add_french)
    rows = _rows(diff_fixtures(french, base))
    assert rows[0] == ("language", "fr", "", "removed", None, None)
    assert [r[3] for r in rows] == ["removed"] * 5


_EDITS: tuple[Edit, ...] = (
    add_query,
    remove_query,
    regrade_judgment,
    remove_judgment,
    add_judgment,
    move_span,
    add_span,
    fix_text_before_spans,
    _add_chunk,
    _remove_document,
    _meta("license", "CC-BY-4.0"),
)


@settings(max_examples=12, deadline=None)
@given(chosen=st.lists(st.sampled_from(range(len(_EDITS))), unique=True, max_size=4))
def test_content_hash_changes_exactly_when_the_diff_is_not_empty(
    base: Fixture, chosen: list[int]
) -> None:
    new = edited(base, *(_EDITS[i] for i in sorted(chosen)), set_version("9.0.0"))
    changes = diff_fixtures(base, new)
    assert changes.empty == (not chosen)
    assert (fixture_content_hash(new) == fixture_content_hash(base)) == changes.empty


def test_no_change_and_what_is_not_a_change(base: Fixture) -> None:
    """Version, file order, tag order and writing a span with its offsets are not changes."""

    def cosmetic(data: Data) -> None:
        data["meta"]["version"] = "1.0.1"
        data["meta"]["languages"] = tuple(reversed(data["meta"]["languages"]))
        data["queries"] = list(reversed(data["queries"]))
        data["chunks"] = list(reversed(data["chunks"]))
        query(data, "q-en-006")["tags"] = tuple(reversed(query(data, "q-en-006")["tags"]))
        span = judgment(data, "q-en-001", "chunk-ferry-01-01")["spans"][0]
        start = chunk(data, "chunk-ferry-01-01")["text"].find(span["text"])
        span["start"], span["end"] = start, start + len(span["text"])

    new = edited(base, cosmetic)
    assert diff_fixtures(base, new).empty
    assert fixture_content_hash(new) == fixture_content_hash(base)
    assert fixture_profile(new)["version"] == "1.0.1"


def test_profile_counts_the_balance(base: Fixture) -> None:
    profile = fixture_profile(edited(base, add_query, remove_query))
    # the committed query files hold 48 queries each, 7 of them tagged no-answer
    # (grep -c 'tags: \[no-answer\]' fixtures/synthetic-bilingual-v1/queries/*.yaml)
    assert profile["languages"] == {
        "en": {"queries": 48, "answerable": 42, "noAnswer": 6},
        "zh": {"queries": 48, "answerable": 41, "noAnswer": 7},
    }
    assert (profile["documents"], profile["chunks"], profile["queries"]) == (55, 160, 96)


@pytest.mark.parametrize("old_side", ["directory", "release record"])
def test_cli_shows_exactly_three_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old_side: str
) -> None:
    """The committed fixture vs a copy edited as a labeller would (YAML text edits): one query
    added, one judgment regraded, one span moved; the diff lists exactly those three. The old
    side is the committed directory, or its release in the committed fixtures/releases.json."""
    old_arg = str(COMMITTED if old_side == "directory" else COMMITTED.parent / "releases.json")
    copy = tmp_path / "copy"
    shutil.copytree(COMMITTED, copy)
    en = copy / "queries" / "en.yaml"
    text = en.read_text(encoding="utf-8")
    regraded = text.replace(
        "    - chunk_id: chunk-ferry-01-04\n      grade: 3\n",
        "    - chunk_id: chunk-ferry-01-04\n      grade: 2\n",
        1,
    )
    moved = regraded.replace(
        'spans: ["the first boat leaves Lantern Quay at 06:10"]\n- id: q-en-002',
        'spans: ["first boat leaves Lantern Quay at 06:10"]\n- id: q-en-002',
    )
    assert regraded != text
    assert moved != regraded
    added = moved + (
        '\n- id: q-en-900\n  language: en\n  text: "Is the civic hall open late on Thursdays?"\n'
        "  judgments:\n    - chunk_id: chunk-civic-01-01\n      grade: 3\n"
        '      spans: ["late opening on Thursdays until 19:30"]\n'
    )
    en.write_text(added, encoding="utf-8")
    assert main(["validate", str(copy)]) == 0
    capsys.readouterr()

    assert main(["fixture", "diff", old_arg, str(copy), "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    span_old = _offsets(
        committed(), "chunk-ferry-01-01", "the first boat leaves Lantern Quay at 06:10"
    )
    start = int(span_old.split(":")[0]) + len("the ")
    assert [
        (c["kind"], c["objectId"], c["change"], c["old"], c["new"]) for c in report["changes"]
    ] == [
        ("query", "q-en-900", "added", None, None),
        ("judgment", "q-en-004/chunk-ferry-01-04", "regraded", "3", "2"),
        (
            "span",
            "q-en-001/chunk-ferry-01-01",
            "moved",
            span_old,
            f"{start}:{span_old.split(':')[1]}",
        ),
    ]
    assert report["requiredBump"] == "major"
    assert report["old"]["contentHash"] != report["new"]["contentHash"]
    assert report["new"]["languages"]["en"] == {"queries": 49, "answerable": 42, "noAnswer": 7}
    fixtures = (committed(), load_fixture(copy))
    _assert_leak_free(out, *fixtures)

    assert main(["fixture", "diff", old_arg, str(copy)]) == 0
    table = capsys.readouterr().out
    _assert_leak_free(table, *fixtures)
    lines = table.splitlines()
    first = lines.index("changes: 3")
    change_lines = lines[first + 2 : first + 5]  # after the column header
    assert [line.split()[:2] for line in change_lines] == [
        ["query", "q-en-900"],
        ["judgment", "q-en-004/chunk-ferry-01-04"],
        ["span", "q-en-001/chunk-ferry-01-01"],
    ]
    assert lines[first + 5] == ""  # nothing else is listed
    assert "required version bump: major" in table


def test_show_text_needs_the_opt_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: Fixture
) -> None:
    copy = write_copy(edited(base, move_span), tmp_path / "copy")
    assert main(["fixture", "diff", str(COMMITTED), str(copy), "--show-text"]) == 2
    assert "--allow-text" in capsys.readouterr().err
    assert main(["fixture", "diff", str(COMMITTED), str(copy), "--show-text", "--allow-text"]) == 0
    captured = capsys.readouterr()
    assert "do not publish" in captured.err
    # the opt-in output does carry the text: the span before and after the move
    assert "first boat leaves Lantern Quay at 06:10" in captured.out
    assert find_leaks(captured.out, private_texts(base)) != []


def test_scan_refuses_output_with_fixture_text(base: Fixture) -> None:
    old = fixture_outline(base)
    clean = format_fixture_diff(diff_fixtures(base, base), old, old)
    scan_output(clean, [base])
    with pytest.raises(LeakError) as caught:
        scan_output(clean + base.chunk("chunk-civic-01-02").text, [base])
    assert "chunk:chunk-civic-01-02" in caught.value.object_ids


def test_diff_of_an_invalid_directory_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(COMMITTED, broken)
    (broken / "fixture.yaml").write_text("id: x\n", encoding="utf-8")
    assert main(["fixture", "diff", str(COMMITTED), str(broken)]) == 2
    err = capsys.readouterr().err
    assert "does not load" in err
    assert "Traceback" not in err
