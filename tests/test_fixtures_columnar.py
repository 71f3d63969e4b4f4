"""The columnar forms (JSONL, Parquet): the same problems as YAML for the same defect, lossless
conversion, the Arrow-backed chunk store, and the file-level errors only these forms have."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import TINY_FIXTURE, fixture_problems, write_fixture
from hypothesis import given, settings, strategies as st
from test_fixtures_rules import RULE_CASES, SECRETS
from test_malformed import CASES as MALFORMED_CASES, prepare

from evalkit.cli import main
from evalkit.errors import FixtureError, Problem
from evalkit.fixtures import Chunk, Document, find_sensitive, generate_fixture, load_fixture
from evalkit.fixtures.columnar import (
    _without_absent,
    accepted_rows,
    arrow_schema,
    parquet_rows,
    sensitive_candidates,
)
from evalkit.fixtures.convert import convert_fixture
from evalkit.fixtures.diff import fixture_content_hash
from evalkit.fixtures.dump import dump_fixture
from evalkit.fixtures.records import RecordTable
from evalkit.fixtures.versioning import last_release, read_releases
from evalkit.run import evaluate

REPO = Path(__file__).resolve().parents[1]
COMMITTED = [
    REPO / "fixtures" / name for name in ("synthetic-bilingual-v1", "synthetic-bilingual-dev-v1")
]
KINDS = ("documents", "chunks", "queries")
Data = dict[str, Any]


def _as_yaml_names(problems: list[Problem]) -> list[tuple[str, str, str, str]]:
    """Problems with the list files named as their YAML form (the only expected difference)."""
    out = []
    for p in problems:
        stem, _, suffix = p.file.rpartition(".")
        name = f"{stem}.yaml" if suffix in ("jsonl", "parquet") else p.file
        message = p.message
        for kind in KINDS:
            for form in ("jsonl", "parquet"):
                message = message.replace(f"{kind}.{form}", f"{kind}.yaml")
        out.append((name, p.object_id, p.field, message))
    return sorted(out)


def _json_exact(value: object) -> bool:
    """True when JSON holds ``value`` exactly (string keys; no tuples, dates, non-finite)."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return json.loads(text) == value and json.dumps(json.loads(text)) == text


def _write_columnar(directory: Path, data: Data, form: str) -> bool:
    """Write ``data`` (the YAML files' content) with the list kinds in ``form``; False when a
    list does not fit the form exactly (it is then not a defect the form can hold)."""
    directory.mkdir(parents=True)
    for name, content in data.items():
        kind = name.removesuffix(".yaml")
        if kind not in KINDS:
            text = content if isinstance(content, str) else yaml.safe_dump(content)
            (directory / name).write_text(text, encoding="utf-8")
            continue
        if not isinstance(content, list) or not _json_exact(content):
            return False
        if form == "jsonl":
            lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in content)
            (directory / f"{kind}.jsonl").write_text(lines, encoding="utf-8")
            continue
        if kind == "queries":  # Parquet holds a bare-string span as {text, null, null}
            _spans_as_structs(data)
        rows = content
        schema = arrow_schema(kind)
        try:
            table = pa.Table.from_pylist(rows, schema=schema)
        except (pa.ArrowException, TypeError, ValueError):
            return False
        if _canonical(_read_back(table, kind)) != _canonical(_without_absent(rows)):
            return False  # a field Parquet cannot hold as written (unknown, other type)
        pq.write_table(table, directory / f"{kind}.parquet")
    return True


def _read_back(table: pa.Table, kind: str) -> list[Any]:
    return [row for _, row in parquet_rows(table, range(table.num_rows))]


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _spans_as_structs(data: Data) -> None:
    """Parquet spans are structs; write YAML's bare-string spans in the same form for both."""
    for query in data.get("queries.yaml", []):
        for judgment in query.get("judgments") or []:
            spans = judgment.get("spans")
            if isinstance(spans, list):
                judgment["spans"] = [
                    {"text": s, "start": None, "end": None} if isinstance(s, str) else s
                    for s in spans
                ]


def _compare_forms(tmp_path: Path, data: Data) -> set[str]:
    """Load ``data`` as YAML, JSONL and Parquet; assert equal problems; the forms compared."""
    yaml_dir = write_fixture(tmp_path / "yaml", copy.deepcopy(data))
    expected = _as_yaml_names(fixture_problems(yaml_dir))
    compared = set()
    for form in ("jsonl", "parquet"):
        directory = tmp_path / form
        if _write_columnar(directory, copy.deepcopy(data), form):
            assert _as_yaml_names(fixture_problems(directory)) == expected, form
            compared.add(form)
    return compared


# Defects Parquet's typed columns cannot hold as written: an unknown field or a value of another
# type (one column problem of the file there, see test_parquet_column_problems_...), a missing
# required value (a null there, see test_a_null_in_a_required_parquet_column_...).
NOT_IN_PARQUET = {
    "unknown-document-field",
    "unknown-chunk-field",
    "unknown-judgment-field",
    "unknown-span-field",
    "grade-as-string",
    "grade-as-bool",
    "spans-not-a-list",
    "missing-field",  # a row without a required value has a null there: "found nothing"
}


@pytest.mark.parametrize(
    ("case", "mutate"), [(i, m) for i, m, _, _ in RULE_CASES if i != "non-string-key"]
)
def test_each_rule_gives_the_same_problems_in_every_form(
    tmp_path: Path, case: str, mutate: Callable[[Data], None]
) -> None:
    """Spans are written as {text, start, end} mappings (null offsets), the one form Parquet
    has; bare-string spans are compared by the secret and malformed-corpus tests."""
    data = copy.deepcopy(TINY_FIXTURE)
    mutate(data)
    _spans_as_structs(data)
    compared = _compare_forms(tmp_path, data)
    assert compared == ({"jsonl"} if case in NOT_IN_PARQUET else {"jsonl", "parquet"})


@pytest.mark.parametrize("secret", SECRETS.values(), ids=SECRETS.keys())
@pytest.mark.parametrize(
    "path",
    [("chunks.yaml", 1, "text"), ("documents.yaml", 1, "title"), ("queries.yaml", 1, "text")],
    ids=["chunk-text", "document-title", "query-text"],
)
def test_secrets_give_the_same_problems_in_every_form(
    tmp_path: Path, secret: str, path: tuple[Any, ...]
) -> None:
    data = copy.deepcopy(TINY_FIXTURE)
    data[path[0]][path[1]][path[2]] = secret
    assert _compare_forms(tmp_path, data) == {"jsonl", "parquet"}


def test_a_secret_in_a_key_or_an_id_is_not_echoed_in_any_form(tmp_path: Path) -> None:
    data = copy.deepcopy(TINY_FIXTURE)
    data["chunks.yaml"][1]["AKIAIOSFODNN7EXAMPLE"] = "https://example.org/x"
    data["documents.yaml"][1]["id"] = "AKIAIOSFODNN7EXAMPLE"
    assert "jsonl" in _compare_forms(tmp_path, data)
    text = str(FixtureError(fixture_problems(tmp_path / "jsonl")))
    assert "AKIAIOSFODNN7EXAMPLE" not in text
    assert "example.org" not in text


def _malformed_fixture_cases() -> list[str]:
    return [name for name in MALFORMED_CASES if name.startswith("fixture-")]


@pytest.mark.parametrize("name", _malformed_fixture_cases())
def test_malformed_fixture_cases_give_the_same_problems_in_every_form(
    name: str, tmp_path: Path
) -> None:
    """Each malformed fixture case of tests/malformed/, in JSONL and Parquet where the defect is
    not one of YAML syntax or of the file system (duplicate keys, anchors, a FIFO...)."""
    work = tmp_path / "case"
    spec = prepare(name, work)
    fixture_dir = work / spec["command"][-1]
    data: Data = {}
    try:
        for entry in sorted(fixture_dir.iterdir()):
            if not entry.is_file() or entry.is_symlink():
                pytest.skip("a file-system defect; the YAML tests cover it")
            data[entry.name] = yaml.safe_load(entry.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, NotADirectoryError):
        pytest.skip("a YAML-syntax defect, not representable in JSON or Parquet")
    yaml_problems = fixture_problems(fixture_dir)
    if any("invalid YAML" in p.message or "nested more" in p.message for p in yaml_problems):
        pytest.skip("a YAML-syntax defect, not representable in JSON or Parquet")
    assert _compare_forms(tmp_path / "forms", data) == {"jsonl", "parquet"}


# --- lossless conversion ---------------------------------------------------------------------


def _recorded_hash(fixture_dir: Path) -> str:
    """The content hash recorded for this fixture's version in fixtures/releases.json (written
    by `evalkit fixture release` from the YAML form, an independent source)."""
    fixture = load_fixture(fixture_dir)
    for release in read_releases(REPO / "fixtures" / "releases.json"):
        if release["fixture"] == fixture.meta.id and release["version"] == fixture.meta.version:
            return str(release["contentHash"])
    release = last_release(read_releases(REPO / "fixtures" / "releases.json"), fixture.meta.id)
    assert release is not None
    return str(release["contentHash"])


@pytest.mark.parametrize("fixture_dir", COMMITTED, ids=[p.name for p in COMMITTED])
@pytest.mark.parametrize("form", ["jsonl", "parquet"])
def test_yaml_to_columnar_to_yaml_keeps_hash_and_results(
    fixture_dir: Path, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    original = load_fixture(fixture_dir)
    columnar = convert_fixture(fixture_dir, form, "columnar")
    assert columnar == original
    loaded = load_fixture("columnar")
    assert isinstance(loaded.chunks, RecordTable)
    back = convert_fixture("columnar", "yaml", "back")
    assert isinstance(load_fixture("back").chunks, tuple)
    recorded = _recorded_hash(fixture_dir)
    for fixture in (original, loaded, load_fixture("back")):
        assert fixture_content_hash(fixture) == recorded
    assert back == original
    for name in ("LICENSE", "gates.yaml", "baseline.json", "aliases.yaml"):
        if (fixture_dir / name).exists():
            assert (tmp_path / "back" / name).read_bytes() == (fixture_dir / name).read_bytes()
    systems = None if form == "parquet" else ["lexical", "alias-vector"]  # None: all five
    before = evaluate(original, systems, repeats=1)
    after = evaluate(loaded, systems, repeats=1)
    pd_columns = ["system", "query_id", "measure", "value"]
    assert before.per_query[pd_columns].equals(after.per_query[pd_columns])
    assert before.rankings.equals(after.rankings)


def test_convert_refuses_an_existing_output_and_an_unsafe_path(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["fixture", "convert", str(tiny_dir), "--to", "parquet", "--output", "out"]) == 0
    assert "content hash sha256:" in capsys.readouterr().out
    before = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert main(["fixture", "convert", str(tiny_dir), "--to", "jsonl", "--output", "out"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == before
    outside = str(tmp_path.parent / "elsewhere")
    assert main(["fixture", "convert", str(tiny_dir), "--to", "jsonl", "--output", outside]) == 2
    assert not Path(outside).exists()
    broken = tmp_path / "broken"
    shutil.copytree(tiny_dir, broken)
    (broken / "chunks.yaml").write_text("- id: x\n", encoding="utf-8")
    assert main(["fixture", "convert", "broken", "--to", "jsonl", "--output", "o2"]) == 1
    assert not (tmp_path / "o2").exists()


# --- file-level problems of the columnar forms ------------------------------------------------


def _columnar_tiny(tmp_path: Path, form: str) -> Path:
    directory = tmp_path / form
    dump_fixture(load_fixture(write_fixture(tmp_path / "src", TINY_FIXTURE)), directory, form=form)
    return directory


@pytest.mark.parametrize(
    ("lines", "where", "words"),
    [
        ('{"id": "c-en-1", "id": "c-en-2"}\n', "line 1", "repeats a mapping key"),
        ("\n", "line 1", "is blank"),
        ('{"id": "c-en-1",\n', "line 1, column 17", "invalid JSON"),
        ('{"id": NaN}\n', "line 1", "NaN is not a JSON number"),
        ('{"grade": ' + "9" * 1001 + "}\n", "line 1", "more than 1000 digits"),
    ],
)
def test_jsonl_syntax_problems_name_the_line(
    tmp_path: Path, lines: str, where: str, words: str
) -> None:
    directory = _columnar_tiny(tmp_path, "jsonl")
    (directory / "chunks.jsonl").write_text(lines, encoding="utf-8")
    problems = fixture_problems(directory)
    found = [p for p in problems if p.file == "chunks.jsonl" and p.field == where]
    assert found, [str(p) for p in problems]
    assert words in found[0].message
    # the chunks are unreadable: judgments naming them are not reported as dangling
    assert not any("does not exist" in p.message for p in problems)


def test_jsonl_not_utf8_names_the_line(tmp_path: Path) -> None:
    directory = _columnar_tiny(tmp_path, "jsonl")
    good = (directory / "documents.jsonl").read_bytes()
    (directory / "documents.jsonl").write_bytes(good + b'{"id": "\xff"}\n')
    problems = fixture_problems(directory)
    assert [(p.file, p.field) for p in problems] == [("documents.jsonl", "line 3")]


def test_a_jsonl_byte_order_mark_is_read_as_nothing_as_in_yaml(tmp_path: Path) -> None:
    directory = _columnar_tiny(tmp_path, "jsonl")
    before = fixture_content_hash(load_fixture(directory))
    path = directory / "documents.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert fixture_content_hash(load_fixture(directory)) == before


def test_an_empty_yaml_list_is_named_as_one(tmp_path: Path) -> None:
    directory = write_fixture(tmp_path / "fx", TINY_FIXTURE)
    chunks = next(p for p in directory.rglob("chunks*.yaml"))
    chunks.write_text("[]\n", encoding="utf-8")
    messages = [p.message for p in fixture_problems(directory)]
    assert any("expected a non-empty list of chunks, found an empty list" in m for m in messages)


def test_parquet_column_problems_are_reported_once_per_file(tmp_path: Path) -> None:
    directory = _columnar_tiny(tmp_path, "parquet")
    table = pq.read_table(directory / "chunks.parquet")
    table = table.drop_columns(["title"]).append_column("colour", pa.array(["red"] * 3))
    table = table.set_column(0, "id", pa.array([1, 2, 3]))
    pq.write_table(table, directory / "chunks.parquet")
    problems = fixture_problems(directory)
    assert {(p.file, p.field) for p in problems} == {
        ("chunks.parquet", "column id"),
        ("chunks.parquet", "column title"),
        ("chunks.parquet", "column colour"),
    }
    (directory / "queries.parquet").write_bytes(b"not parquet at all")
    problems = fixture_problems(directory)
    assert ("queries.parquet", "") in {(p.file, p.field) for p in problems}


def test_a_null_in_a_required_parquet_column_reads_as_an_empty_yaml_value(
    tmp_path: Path,
) -> None:
    directory = _columnar_tiny(tmp_path, "parquet")
    table = pq.read_table(directory / "documents.parquet")
    table = table.set_column(2, "title", pa.array(["Ferry guide", None]))
    pq.write_table(table, directory / "documents.parquet")
    data = copy.deepcopy(TINY_FIXTURE)
    data["documents.yaml"][1]["title"] = None
    expected = _as_yaml_names(fixture_problems(write_fixture(tmp_path / "yaml", data)))
    assert _as_yaml_names(fixture_problems(directory)) == expected
    assert expected == [("documents.yaml", "doc-zh-1", "title", expected[0][3])]


def test_two_forms_of_one_kind_are_refused(tmp_path: Path) -> None:
    directory = _columnar_tiny(tmp_path, "parquet")
    shutil.copy(tmp_path / "src" / "chunks.yaml", directory / "chunks.yaml")
    problems = fixture_problems(directory)
    assert [(p.file, p.message) for p in problems] == [
        ("chunks.parquet", "both chunks.parquet and chunks.yaml exist; keep one of them")
    ]


# --- the Arrow-backed store -------------------------------------------------------------------


def test_record_table_behaves_as_the_tuple_of_models() -> None:
    fixture = generate_fixture(3, documents=30, queries=12)
    table = RecordTable.from_models(Chunk, fixture.chunks)
    chunks = fixture.chunks
    assert len(table) == len(chunks)
    assert list(table) == list(chunks)
    assert table == chunks
    assert chunks == table
    assert hash(table) == hash(chunks)
    assert table[0] == chunks[0]
    assert table[-1] == chunks[-1]
    assert list(table[5:9]) == list(chunks[5:9])
    assert list(table[::-7]) == list(chunks[::-7])
    with pytest.raises(IndexError):
        table[len(chunks)]
    assert chunks[7] in table
    assert table.index(chunks[7]) == 7
    assert table.column("text") == [c.text for c in chunks]
    assert table.by_id()[chunks[9].id] == chunks[9]
    assert chunks[9].id in table.by_id()
    assert "nope" not in table.by_id()
    with pytest.raises(Exception, match="frozen"):
        table[0].text = "changed"  # type: ignore[misc]
    with pytest.raises(ValueError, match="columns"):
        RecordTable(Document, table.arrow)
    compact = fixture.model_copy(
        update={"chunks": table, "documents": RecordTable.from_models(Document, fixture.documents)}
    )
    assert compact == fixture
    assert hash(compact) == hash(fixture)
    assert compact.chunks_by_document == fixture.chunks_by_document
    assert compact.chunk(chunks[4].id) == chunks[4]
    assert compact.model_dump() == fixture.model_dump()


_FIELD = st.text(
    alphabet=st.sampled_from(list("aZ09._:#~- é中\t\n\r\x00\x07\x7f\x85\x9f\u2028")), max_size=12
)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_FIELD, _FIELD, _FIELD, _FIELD, _FIELD), min_size=1, max_size=8))
def test_the_vectorized_check_accepts_only_what_the_model_accepts(
    rows: list[tuple[str, ...]],
) -> None:
    names = ["id", "document_id", "language", "title", "text"]
    table = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    for row, accepted in zip(rows, accepted_rows(table, "chunks"), strict=True):
        try:
            Chunk.model_validate(dict(zip(names, row, strict=True)))
            valid = True
        except ValueError:
            valid = False
        if accepted:
            assert valid, row


_PROSE = st.text(
    alphabet=st.sampled_from(list("abkKy/:.@_-= 0123456789ABCIKPSTXaeio\\~\u212a")), max_size=40
)


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(_PROSE, min_size=1, max_size=6))
def test_the_sensitive_pre_scan_misses_no_flagged_string(texts: list[str]) -> None:
    candidates = set(sensitive_candidates([pa.chunked_array([texts])], len(texts)).tolist())
    for row, text in enumerate(texts):
        if find_sensitive(text):
            assert row in candidates, text


@pytest.mark.parametrize("secret", SECRETS.values(), ids=SECRETS.keys())
def test_the_sensitive_pre_scan_finds_each_known_secret(secret: str) -> None:
    texts = ["plain words", secret]
    assert sensitive_candidates([pa.chunked_array([texts])], 2).tolist() == [1]


# --- importers ----------------------------------------------------------------------------------


def _import(output: str) -> None:
    from evalkit.fixtures.chunking import ChunkingPolicy
    from evalkit.importers import SourceDocument, SourceJudgment, SourceQuery, import_collection

    documents = [
        SourceDocument(f"d{i}", f"Para one of {i}.\n\nPara two of {i}.", f"T{i}") for i in range(6)
    ]
    import_collection(
        documents,
        [SourceQuery("q1", "para two"), SourceQuery("q2", "para one")],
        [SourceJudgment("q1", "d1", 2), SourceJudgment("q2", "d4", 1)],
        output,
        fixture_name="imported",
        description="Imported test collection.",
        policy=ChunkingPolicy(mode="paragraphs", size=10, overlap=0),
    )


def test_an_import_above_the_documented_size_is_written_as_parquet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.importers import core

    monkeypatch.chdir(tmp_path)
    _import("small")  # 24 chunks, at most COLUMNAR_FROM (50,000): YAML files
    monkeypatch.setattr(core, "COLUMNAR_FROM", 23)
    _import("large")
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == [
        "chunks", "documents", "fixture.yaml", "queries.yaml"
    ]  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "large").iterdir()) == [
        "chunks.parquet", "documents.parquet", "fixture.yaml", "queries.yaml"
    ]  # fmt: skip
    small, large = load_fixture(tmp_path / "small"), load_fixture(tmp_path / "large")
    assert len(small.chunks) == 24  # 6 documents of 4 pieces of at most 10 characters
    assert large == small
    assert isinstance(large.chunks, RecordTable)


def test_json_rows_are_the_models_dumped(tmp_path: Path) -> None:
    # the corpus hash reads a record table's rows at once (issue 48): the same dicts
    from evalkit.fixtures import dump_fixture, generate_fixture, load_fixture
    from evalkit.fixtures.records import RecordTable

    fixture = generate_fixture(5, documents=30, chunks_per_document=3, queries=10)
    dump_fixture(fixture, tmp_path / "f")
    loaded = load_fixture(tmp_path / "f")
    for items in (loaded.chunks, loaded.documents):
        table = (
            items
            if isinstance(items, RecordTable)
            else RecordTable.from_models(type(items[0]), list(items))
        )
        assert table.json_rows() == [item.model_dump(mode="json") for item in items]
    assert any(chunk.near_duplicate_of for chunk in loaded.chunks)
    assert any(chunk.near_duplicate_of is None for chunk in loaded.chunks)
