"""One failing fixture per validation rule: each error names file, ID and field (never values)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import fixture_problems, problem_places

from evalkit.cli import main
from evalkit.errors import FixtureError
from evalkit.fixtures import Fixture, find_sensitive, load_fixture, validate_fixture

Data = dict[str, Any]
Mutation = Callable[[Data], None]


def _chunk(data: Data, chunk_id: str) -> dict[str, Any]:
    return next(c for c in data["chunks.yaml"] if c["id"] == chunk_id)


def _query(data: Data, query_id: str) -> dict[str, Any]:
    return next(q for q in data["queries.yaml"] if q["id"] == query_id)


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(data: Data) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path: tuple[Any, ...]) -> Mutation:
    def mutate(data: Data) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def _append(file: str, item: dict[str, Any]) -> Mutation:
    return lambda data: data[file].append(item)


Q1_SPANS = ("queries.yaml", 0, "judgments", 0, "spans")

# (case id, mutation, (file, object ID, field) that must be reported, words in the message)
RULE_CASES: list[tuple[str, Mutation, tuple[str, str, str], str]] = [
    # unknown fields, everywhere
    ("unknown-meta-field", _set(("fixture.yaml", "owner"), "x"),
     ("fixture.yaml", "tiny-v1", "owner"), "not a known field"),
    ("unknown-document-field", _set(("documents.yaml", 0, "url"), "x"),
     ("documents.yaml", "doc-en-1", "url"), "allowed fields here: id, language, title"),
    ("unknown-chunk-field", _set(("chunks.yaml", 1, "colour"), "red"),
     ("chunks.yaml", "c-en-2", "colour"), "not a known field"),
    ("unknown-judgment-field", _set(("queries.yaml", 0, "judgments", 0, "note"), "x"),
     ("queries.yaml", "q-en-1", "judgments[0].note"), "chunk_id, grade, spans"),
    ("unknown-span-field", _set((*Q1_SPANS, 1, "why"), "x"),
     ("queries.yaml", "q-en-1", "judgments[0].spans[1].why"), "text, start, end"),
    # bounds and types
    ("title-too-long", _set(("documents.yaml", 0, "title"), "x" * 301),
     ("documents.yaml", "doc-en-1", "title"), "301 characters; at most 300"),
    ("text-empty", _set(("chunks.yaml", 1, "text"), ""),
     ("chunks.yaml", "c-en-2", "text"), "empty"),
    ("text-too-long", _set(("chunks.yaml", 1, "text"), "y" * 20_001),
     ("chunks.yaml", "c-en-2", "text"), "at most 20000"),
    ("query-text-too-long", _set(("queries.yaml", 1, "text"), "z" * 2_001),
     ("queries.yaml", "q-en-2", "text"), "at most 2000"),
    ("description-too-long", _set(("fixture.yaml", "description"), "d" * 2_001),
     ("fixture.yaml", "tiny-v1", "description"), "at most 2000"),
    ("control-character", _set(("chunks.yaml", 1, "text"), "bell\x07here"),
     ("chunks.yaml", "c-en-2", "text"), "control character"),
    ("grade-above-3", _set(("queries.yaml", 0, "judgments", 0, "grade"), 4),
     ("queries.yaml", "q-en-1", "judgments[0].grade"), "at most 3"),
    ("grade-negative", _set(("queries.yaml", 0, "judgments", 0, "grade"), -1),
     ("queries.yaml", "q-en-1", "judgments[0].grade"), "at least 0"),
    ("grade-as-string", _set(("queries.yaml", 0, "judgments", 0, "grade"), "3"),
     ("queries.yaml", "q-en-1", "judgments[0].grade"), "expected an integer, found a string"),
    ("grade-as-bool", _set(("queries.yaml", 0, "judgments", 0, "grade"), True),
     ("queries.yaml", "q-en-1", "judgments[0].grade"), "expected an integer, found a boolean"),
    ("version-as-number", _set(("fixture.yaml", "version"), 1.0),
     ("fixture.yaml", "tiny-v1", "version"), "quote the value"),
    ("version-not-semver", _set(("fixture.yaml", "version"), "v1"),
     ("fixture.yaml", "tiny-v1", "version"), "semantic version"),
    ("license-not-spdx", _set(("fixture.yaml", "license"), "public domain!"),
     ("fixture.yaml", "tiny-v1", "license"), "SPDX"),
    ("languages-empty", _set(("fixture.yaml", "languages"), []),
     ("fixture.yaml", "tiny-v1", "languages"), "at least 1"),
    ("languages-repeated", _set(("fixture.yaml", "languages"), ["en", "zh", "en"]),
     ("fixture.yaml", "tiny-v1", "languages"), "unique"),
    ("language-shape", _set(("documents.yaml", 1, "language"), "Chinese"),
     ("documents.yaml", "doc-zh-1", "language"), "language code"),
    ("id-shape", _set(("documents.yaml", 1, "id"), "-doc zh"),
     ("documents.yaml", "item 2", "id"), "not a valid ID"),
    ("id-too-long", _set(("chunks.yaml", 1, "id"), "c" * 129),
     ("chunks.yaml", "item 2", "id"), "at most 128"),
    ("non-string-key", _set(("chunks.yaml", 1, 7), "x"),
     ("chunks.yaml", "c-en-2", "<field>"), "mapping keys must be strings"),
    ("missing-field", _delete(("chunks.yaml", 1, "title")),
     ("chunks.yaml", "c-en-2", "title"), "required"),
    ("unknown-tag", _set(("queries.yaml", 1, "tags"), ["easy"]),
     ("queries.yaml", "q-en-2", "tags[0]"), "expected one of"),
    ("repeated-tag", _set(("queries.yaml", 1, "tags"), ["no-answer", "no-answer"]),
     ("queries.yaml", "q-en-2", "tags"), "unique"),
    ("too-many-spans", _set(Q1_SPANS, ["leaves"] * 101),
     ("queries.yaml", "q-en-1", "judgments[0].spans"), "at most 100"),
    ("spans-not-a-list", _set(Q1_SPANS, "leaves"),
     ("queries.yaml", "q-en-1", "judgments[0].spans"), "expected a list, found a string"),
    # duplicate IDs
    ("duplicate-document", _append("documents.yaml",
                                   {"id": "doc-en-1", "language": "en", "title": "Again"}),
     ("documents.yaml", "doc-en-1", "id"), "duplicate document ID (first defined in "
     "documents.yaml item 1; this copy: documents.yaml item 3)"),
    ("duplicate-chunk", _append("chunks.yaml", {"id": "c-en-2", "document_id": "doc-en-1",
                                                "language": "en", "title": "T", "text": "X."}),
     ("chunks.yaml", "c-en-2", "id"), "duplicate chunk ID"),
    ("duplicate-query", _append("queries.yaml", {"id": "q-zh-2", "language": "zh", "text": "再"}),
     ("queries.yaml", "q-zh-2", "id"), "duplicate query ID"),
    ("duplicate-judgment", lambda d: _query(d, "q-en-1")["judgments"].append(
        {"chunk_id": "c-en-1", "grade": 1, "spans": ["06:40"]}),
     ("queries.yaml", "q-en-1", "judgments[1].chunk_id"), "same chunk as judgments[0]"),
    # dangling references
    ("dangling-document", _set(("chunks.yaml", 1, "document_id"), "doc-en-9"),
     ("chunks.yaml", "c-en-2", "document_id"), "'doc-en-9', which does not exist"),
    ("dangling-judgment", _set(("queries.yaml", 2, "judgments", 0, "chunk_id"), "c-zh-9"),
     ("queries.yaml", "q-zh-1", "judgments[0].chunk_id"), "'c-zh-9', which does not exist"),
    ("dangling-near-duplicate", _set(("chunks.yaml", 1, "near_duplicate_of"), "c-en-7"),
     ("chunks.yaml", "c-en-2", "near_duplicate_of"), "does not exist"),
    ("self-near-duplicate", _set(("chunks.yaml", 1, "near_duplicate_of"), "c-en-2"),
     ("chunks.yaml", "c-en-2", "near_duplicate_of"), "the chunk itself"),
    # inexact annotations
    ("span-not-verbatim", _set((*Q1_SPANS, 0), "leaves at 6:40"),
     ("queries.yaml", "q-en-1", "judgments[0].spans[0]"), "not a verbatim substring"),
    ("span-wrong-case", _set(("queries.yaml", 2, "judgments", 0, "spans", 0), "四 克朗"),
     ("queries.yaml", "q-zh-1", "judgments[0].spans[0]"), "not a verbatim substring"),
    # "every ninety minutes" starts at 35 (see conftest); 36..56 slices "very ninety minutes."
    ("offsets-shifted", _set((*Q1_SPANS, 1), {"text": "every ninety minutes", "start": 36,
                                              "end": 56}),
     ("queries.yaml", "q-en-1", "judgments[0].spans[1]"), "first occurs at start: 35, end: 55"),
    ("offsets-wrong-length", _set((*Q1_SPANS, 1), {"text": "every ninety minutes", "start": 35,
                                                   "end": 54}),
     ("queries.yaml", "q-en-1", "judgments[0].spans[1]"), "end - start is 19"),
    ("offsets-half-given", _set((*Q1_SPANS, 1), {"text": "every ninety minutes", "start": 35}),
     ("queries.yaml", "q-en-1", "judgments[0].spans[1]"), "both start and end"),
    ("span-empty", _set((*Q1_SPANS, 0), ""),
     ("queries.yaml", "q-en-1", "judgments[0].spans[0].text"), "empty"),
    ("spans-missing", _delete(("queries.yaml", 0, "judgments", 0, "spans")),
     ("queries.yaml", "q-en-1", "judgments[0].spans"), "at least one verbatim span"),
    ("grade-0-needs-import", lambda d: _query(d, "q-en-1")["judgments"].append(
        {"chunk_id": "c-en-2", "grade": 0}),
     ("queries.yaml", "q-en-1", "judgments[1].grade"), "requires_spans: false"),
    # degenerate label sets
    ("no-no-answer-query", lambda d: d["queries.yaml"].pop(3),
     ("fixture.yaml", "tiny-v1", "languages"), "'zh' has no no-answer query"),
    ("no-answerable-query", _delete(("queries.yaml", 0, "judgments")),
     ("fixture.yaml", "tiny-v1", "languages"), "'en' has no answerable query"),
    ("language-not-declared", _set(("queries.yaml", 3, "language"), "fr"),
     ("queries.yaml", "q-zh-2", "language"), "'fr' is not declared"),
    ("chunk-language-not-declared", _set(("chunks.yaml", 1, "language"), "de"),
     ("chunks.yaml", "c-en-2", "language"), "'de' is not declared"),
    ("no-answer-tag-with-judgments", _set(("queries.yaml", 0, "tags"), ["no-answer"]),
     ("queries.yaml", "q-en-1", "tags"), "tagged no-answer"),
    ("multi-relevant-with-one", _set(("queries.yaml", 2, "tags"), ["multi-relevant"]),
     ("queries.yaml", "q-zh-1", "tags"), "expected at least 2"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "where", "words"),
    [pytest.param(m, w, s, id=i) for i, m, w, s in RULE_CASES],
)
def test_each_rule_reports_file_id_and_field(
    make_fixture: Callable[[Mutation | None], Path],
    mutate: Mutation,
    where: tuple[str, str, str],
    words: str,
) -> None:
    problems = fixture_problems(make_fixture(mutate))
    matching = [p for p in problems if (p.file, p.object_id, p.field) == where]
    assert matching, f"expected a problem at {where}, got {[str(p) for p in problems]}"
    assert any(words in p.message for p in matching), [p.message for p in matching]
    for problem in problems:  # pydantic's own rendering of the input never leaks through
        assert "input_value" not in problem.message
        assert "errors.pydantic.dev" not in problem.message


def test_the_tiny_fixture_is_valid(tiny_dir: Path) -> None:
    fixture = load_fixture(tiny_dir)
    assert validate_fixture(fixture) == []
    assert [q.id for q in fixture.queries if not q.answerable] == ["q-en-2", "q-zh-2"]


def test_all_problems_are_reported_together(make_fixture: Callable[..., Path]) -> None:
    def several(data: Data) -> None:
        data["fixture.yaml"]["colour"] = "blue"
        _chunk(data, "c-en-2")["document_id"] = "doc-missing"
        _query(data, "q-zh-1")["judgments"][0]["spans"] = ["五克朗"]
        data["documents.yaml"][0]["title"] = ""

    problems = fixture_problems(make_fixture(several))
    assert problem_places(problems) >= {
        ("fixture.yaml", "tiny-v1", "colour"),
        ("chunks.yaml", "c-en-2", "document_id"),
        ("queries.yaml", "q-zh-1", "judgments[0].spans[0]"),
        ("documents.yaml", "doc-en-1", "title"),
    }


def test_an_invalid_querys_judgments_are_still_checked(make_fixture: Callable[..., Path]) -> None:
    # q-en-1 fails its own validation (a repeated tag); its judgments' problems are found in the
    # same run: a dangling chunk of a judgment that is invalid itself, a span not in its chunk
    def invalid_query(data: Data) -> None:
        query = _query(data, "q-en-1")
        query["tags"] = ["paraphrase", "paraphrase"]
        query["judgments"][0]["spans"] = ["leaves at 07:40"]
        query["judgments"].append({"chunk_id": "c-missing", "grade": 7, "spans": ["x"]})
        query["judgments"].append({"chunk_id": "c-zh-1", "grade": 0, "spans": ["四克朗"]})

    problems = fixture_problems(make_fixture(invalid_query))
    assert problem_places(problems) == {
        ("queries.yaml", "q-en-1", "tags"),
        ("queries.yaml", "q-en-1", "judgments[0].spans[0]"),
        ("queries.yaml", "q-en-1", "judgments[1].grade"),
        ("queries.yaml", "q-en-1", "judgments[1].chunk_id"),
        ("queries.yaml", "q-en-1", "judgments[2].grade"),  # grade 0 needs requires_spans: false
        ("queries.yaml", "q-en-1", "judgments[2].spans"),  # and a grade-0 judgment has no spans
    }


def test_an_ill_formed_chunk_id_of_an_invalid_query_is_one_problem(
    make_fixture: Callable[..., Path],
) -> None:
    def ill_formed(data: Data) -> None:
        query = _query(data, "q-en-1")
        query["tags"] = ["paraphrase", "paraphrase"]
        query["judgments"][0]["chunk_id"] = "How much is a bed"  # not an ID: no "does not exist"

    problems = fixture_problems(make_fixture(ill_formed))
    assert sorted(p.field for p in problems) == ["judgments[0].chunk_id", "tags"]


@pytest.mark.parametrize(
    "invalid",
    [
        (),
        ("q-en-1",),
        ("q-en-2",),
        ("q-zh-1",),
        ("q-en-1", "q-zh-1"),
        ("q-en-1", "q-en-2", "q-zh-1"),
    ],
)
def test_every_later_copy_of_a_query_id_is_named_with_the_first(
    invalid: tuple[str, ...], make_fixture: Callable[..., Path]
) -> None:
    # q-en-2 (item 2) and q-zh-1 (item 3) take q-en-1's ID; some copies also have a repeated
    # tag, so they are not built: each later copy is still one problem, naming item 1
    def duplicate(data: Data) -> None:
        for query_id in invalid:
            _query(data, query_id)["tags"] = ["paraphrase", "paraphrase"]
        _query(data, "q-en-2")["id"] = "q-en-1"
        data["queries.yaml"][2]["id"] = "q-en-1"

    problems = fixture_problems(make_fixture(duplicate))
    duplicates = sorted(p.message.split(");")[0] for p in problems if p.field == "id")
    assert duplicates == [
        "duplicate query ID (first defined in queries.yaml item 1; this copy: queries.yaml item 2",
        "duplicate query ID (first defined in queries.yaml item 1; this copy: queries.yaml item 3",
    ]
    # (two copies' equal tag problems are one line: a problem names file, ID and field)
    assert {p.field for p in problems} == {"id"} | ({"tags"} if invalid else set())


def test_an_invalid_query_judging_an_invalid_chunk_adds_no_noise(
    make_fixture: Callable[..., Path],
) -> None:
    def both(data: Data) -> None:
        _chunk(data, "c-zh-1")["extra"] = 1
        _query(data, "q-zh-1")["tags"] = ["paraphrase", "paraphrase"]

    problems = fixture_problems(make_fixture(both))
    assert problem_places(problems) == {
        ("chunks.yaml", "c-zh-1", "extra"),
        ("queries.yaml", "q-zh-1", "tags"),
    }


def test_an_invalid_object_does_not_cause_dangling_reference_noise(
    make_fixture: Callable[..., Path],
) -> None:
    # c-zh-1 has an unknown field, so it is not built; q-zh-1 still names it correctly.
    problems = fixture_problems(make_fixture(_set(("chunks.yaml", 2, "extra"), 1)))
    assert problem_places(problems) == {("chunks.yaml", "c-zh-1", "extra")}


SECRETS = {
    "posix-path": "see /etc/ssh/sshd_config for the setting",
    "home-path": "stored under /home/alice/notes",
    "windows-path": r"saved to C:\Users\alice\notes.txt",
    "unc-path": r"on \\fileserver\share\notes",
    "http-url": "docs at http://intranet.example/x",
    "https-url": "docs at https://example.org/page",
    "file-url": "open file:///var/data/x",
    "ip-endpoint": "connect to 10.20.30.40 now",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "aws-key": "key AKIAIOSFODNN7EXAMPLE here",
    "github-token": "token ghp_" + "a1B2" * 9,
    "openai-style-key": "sk-proj-" + "Ab3" * 10,
    "slack-token": "xoxb-123456789012-abcdefABCDEF",
    "stripe-key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "google-key": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "bearer": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
    "password-assignment": "password = hunter2hunter2",
}


@pytest.mark.parametrize("secret", SECRETS.values(), ids=SECRETS.keys())
@pytest.mark.parametrize(
    ("path", "where"),
    [
        (("chunks.yaml", 1, "text"), ("chunks.yaml", "c-en-2", "text")),
        (("documents.yaml", 1, "title"), ("documents.yaml", "doc-zh-1", "title")),
        (("queries.yaml", 1, "text"), ("queries.yaml", "q-en-2", "text")),
        (("fixture.yaml", "description"), ("fixture.yaml", "tiny-v1", "description")),
    ],
    ids=["chunk-text", "document-title", "query-text", "description"],
)
def test_sensitive_values_are_named_by_field_never_echoed(
    make_fixture: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    secret: str,
    path: tuple[Any, ...],
    where: tuple[str, str, str],
) -> None:
    directory = make_fixture(_set(path, secret))
    with pytest.raises(FixtureError) as caught:
        load_fixture(directory)
    assert where in problem_places(caught.value.problems)
    assert any("not shown here" in p.message for p in caught.value.problems)
    assert main(["validate", str(directory)]) == 1
    output = capsys.readouterr()
    for text in (str(caught.value), output.out, output.err):
        for line in secret.splitlines():
            assert line not in text


def test_a_secret_in_a_span_is_reported_at_the_span(make_fixture: Callable[..., Path]) -> None:
    def secret_span(data: Data) -> None:
        _chunk(data, "c-en-2")["text"] = "Call 10.1.2.3 for tickets."
        _query(data, "q-en-1")["judgments"].append(
            {"chunk_id": "c-en-2", "grade": 1, "spans": ["10.1.2.3"]}
        )

    problems = fixture_problems(make_fixture(secret_span))
    assert ("chunks.yaml", "c-en-2", "text") in problem_places(problems)
    assert ("queries.yaml", "q-en-1", "judgments[1].spans[0].text") in problem_places(problems)
    assert "10.1.2.3" not in str(FixtureError(problems))


def test_secrets_in_an_otherwise_invalid_object_and_its_keys_are_not_echoed(
    make_fixture: Callable[..., Path],
) -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    directory = make_fixture(_set(("chunks.yaml", 1, key), "https://example.org/x"))
    problems = fixture_problems(directory)
    assert ("chunks.yaml", "c-en-2", "<field>") in problem_places(problems)
    assert key not in str(FixtureError(problems))
    assert "example.org" not in str(FixtureError(problems))


def test_a_secret_shaped_id_is_replaced_by_the_item_number(
    make_fixture: Callable[..., Path],
) -> None:
    secret_id = "AKIAIOSFODNN7EXAMPLE"
    problems = fixture_problems(make_fixture(_set(("documents.yaml", 1, "id"), secret_id)))
    assert ("documents.yaml", "item 2", "id") in problem_places(problems)
    assert secret_id not in str(FixtureError(problems))


@pytest.mark.parametrize(
    "text",
    [
        "and/or 24/7 km/h 1/2 A/B test",
        "version 1.2.3 of the timetable",
        "Trams run at 07:15; see the file: it lists stops.",
        "ratio 3:4 and score 10:2",
        "The password: remember it well.",
        "The task is basic and the token is a paper ticket.",
        "单程票价为四克朗，儿童半价。路线/班次见站牌。",
        "Mr. Smith (born 1.1.1990) asked: why?",
    ],
)
def test_ordinary_prose_is_not_flagged(text: str) -> None:
    assert find_sensitive(text) == ()


def test_validate_fixture_checks_fixtures_built_in_python(tiny_dir: Path) -> None:
    fixture = load_fixture(tiny_dir)
    chunk = fixture.chunks[1].model_copy(update={"document_id": "doc-gone"})
    broken = Fixture(
        meta=fixture.meta,
        documents=fixture.documents,
        chunks=(fixture.chunks[0], chunk, fixture.chunks[2]),
        queries=fixture.queries,
    )
    assert [(p.file, p.object_id, p.field) for p in validate_fixture(broken)] == [
        ("chunks.yaml", "c-en-2", "document_id")
    ]


def test_a_credential_ending_one_field_is_found_whatever_follows() -> None:
    # Regression: 0.1 first scanned an object's strings joined by NUL, so a credential pattern
    # anchored at the end of a value ($) missed a title followed by another field.
    from evalkit.fixtures.rules import string_problems
    from evalkit.fixtures.schema import Chunk

    chunk = Chunk(
        id="c1", document_id="d1", language="en", title="token: xyzabc12345", text="plain words"
    )
    problems = string_problems(None, [], [chunk], [])
    assert [(p.object_id, p.field) for p in problems] == [("c1", "title")]


def test_prose_may_hold_keeps_declared_prose_and_never_a_credential(make_fixture: Any) -> None:
    def prose(data: dict[str, Any], declared: list[str] | None, extra: str) -> None:
        data["chunks.yaml"][1]["text"] = f"A single ticket costs four /crowns/for adults{extra}."
        data["queries.yaml"][0]["text"] += " (see https://ferry.example.org/fares)"
        if declared is not None:
            data["fixture.yaml"]["prose_may_hold"] = declared

    with pytest.raises(FixtureError) as refused:
        load_fixture(make_fixture(lambda d: prose(d, None, "")))
    messages = [p.message for p in refused.value.problems]
    assert any("prose_may_hold: [posix_path]" in m for m in messages)
    assert any("prose_may_hold: [url]" in m for m in messages)
    fixture = load_fixture(make_fixture(lambda d: prose(d, ["posix_path", "url"], "")))
    assert fixture.meta.prose_may_hold == ("posix_path", "url")
    with pytest.raises(FixtureError) as credential:  # declared kinds never cover a credential
        load_fixture(make_fixture(lambda d: prose(d, ["posix_path", "url"], "; password = x1")))
    assert [p.field for p in credential.value.problems] == ["text"]
    assert "prose_may_hold" not in credential.value.problems[0].message


def test_credential_and_prose_kinds_split_the_sensitive_kinds_exactly() -> None:
    """Every kind the detector finds is either a credential (always refused) or a prose kind a
    fixture may declare in prose_may_hold; the two lists live in different layers, so this keeps
    them in step when a kind is added."""
    from evalkit.fixtures.schema import PROSE_KINDS
    from evalkit.safety.sensitive import CREDENTIAL_KINDS, SENSITIVE_KINDS

    assert not CREDENTIAL_KINDS & set(PROSE_KINDS)
    assert CREDENTIAL_KINDS | set(PROSE_KINDS) == set(SENSITIVE_KINDS)
