"""Loading fixture directories: layout, YAML errors, symlinks, the committed fixture, the CLI."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import fixture_problems, problem_places

from evalkit.cli import main
from evalkit.errors import FixtureError
from evalkit.fixtures import fixture_json_schema, load_fixture

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"


def test_load_builds_frozen_models_with_lookups(tiny_dir: Path) -> None:
    fixture = load_fixture(tiny_dir)
    assert fixture.id == "tiny-v1"
    assert fixture.path == str(tiny_dir)
    assert [c.id for c in fixture.chunks] == ["c-en-1", "c-en-2", "c-zh-1"]
    assert fixture.chunk("c-zh-1").text == "单程票价为四克朗，儿童半价。"
    assert fixture.document("doc-en-1").title == "Ferry guide"
    assert [q.id for q in fixture.queries_by_language["zh"]] == ["q-zh-1", "q-zh-2"]
    assert [c.id for c in fixture.chunks_by_document["doc-en-1"]] == ["c-en-1", "c-en-2"]
    spans = fixture.query("q-en-1").judgments[0].spans
    assert [(s.text, s.start, s.end) for s in spans] == [
        ("leaves at 06:40", None, None),
        ("every ninety minutes", 35, 55),
    ]
    assert fixture.query("q-en-1").answerable
    assert not fixture.query("q-zh-2").answerable
    with pytest.raises(Exception, match="frozen"):
        fixture.chunks[0].text = "changed"  # type: ignore[misc]
    with pytest.raises(KeyError):
        fixture.chunk("c-missing")
    # equality ignores where a fixture was loaded from; hashing agrees with equality
    again = load_fixture(tiny_dir)
    moved = again.model_copy(update={"path": None})
    assert moved == fixture
    assert hash(moved) == hash(fixture)


def test_split_directories_are_read_in_name_order(tmp_path: Path, tiny_data: Any) -> None:
    root = tmp_path / "split"
    root.mkdir()
    for name in ("fixture.yaml", "documents.yaml", "queries.yaml"):
        (root / name).write_text(yaml.safe_dump(tiny_data[name], allow_unicode=True))
    (root / "chunks").mkdir()
    chunks = tiny_data["chunks.yaml"]
    (root / "chunks" / "b.yaml").write_text(yaml.safe_dump(chunks[:1], allow_unicode=True))
    (root / "chunks" / "a.yaml").write_text(yaml.safe_dump(chunks[1:], allow_unicode=True))
    fixture = load_fixture(root)
    assert [c.id for c in fixture.chunks] == ["c-en-2", "c-zh-1", "c-en-1"]

    repeated = [*chunks[1:], dict(chunks[1])]
    (root / "chunks" / "a.yaml").write_text(yaml.safe_dump(repeated, allow_unicode=True))
    assert ("chunks/a.yaml", "c-en-2", "id") in problem_places(fixture_problems(root))


def test_missing_and_unexpected_entries(tiny_dir: Path) -> None:
    (tiny_dir / "queries.yaml").rename(tiny_dir / "querys.yaml")
    (tiny_dir / "README.md").write_text("notes")  # allowed, not read
    (tiny_dir / ".gitkeep").write_text("")  # hidden entries are ignored
    problems = fixture_problems(tiny_dir)
    assert problem_places(problems) == {("querys.yaml", "", ""), ("queries.yaml", "", "")}
    unexpected = next(p for p in problems if p.file == "querys.yaml")
    assert "Did you mean 'queries.yaml'?" in unexpected.message


def test_both_file_and_directory_of_a_kind(tiny_dir: Path, tiny_data: Any) -> None:
    (tiny_dir / "documents").mkdir()
    (tiny_dir / "documents" / "more.yaml").write_text(yaml.safe_dump(tiny_data["documents.yaml"]))
    assert any("keep one of them" in p.message for p in fixture_problems(tiny_dir))


def test_missing_directory_is_a_fixture_error(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match="does not exist"):
        load_fixture(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("- id: doc-en-1\n  language: en\n  title: [unclosed\n", "line 4, column 1", "invalid"),
        ("- id: doc-en-1\n\tlanguage: en\n", "line 2, column 1", "invalid YAML"),
        (
            "- id: doc-en-1\n  language: en\n  title: A\n  title: B\n",
            "line 4, column 3",
            "repeats a mapping key",
        ),
        (
            "- &d {id: doc-en-1, language: en, title: A}\n- *d\n",
            "line 1, column 3",
            "alias",
        ),
        ("- !!python/object:os.system {}\n", "line 1, column 3", "invalid YAML"),
    ],
    ids=["unclosed-flow", "tab-indent", "duplicate-key", "alias", "python-tag"],
)
def test_yaml_errors_name_file_and_line(tiny_dir: Path, text: str, where: str, words: str) -> None:
    (tiny_dir / "documents.yaml").write_text(text)
    problems = [p for p in fixture_problems(tiny_dir) if p.file == "documents.yaml"]
    assert [(p.field, words in p.message) for p in problems] == [(where, True)]
    assert "python/object" not in str(problems[0])  # quoted input is redacted


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ("{id: a}\n", "a mapping"),
        ("", "nothing"),
        ("[]\n", "an empty list"),
        ("just text\n", "a string"),
    ],
)
def test_a_list_file_must_hold_a_non_empty_list(tiny_dir: Path, content: str, found: str) -> None:
    (tiny_dir / "chunks.yaml").write_text(content)
    problems = fixture_problems(tiny_dir)
    chunk_problems = [p for p in problems if p.file == "chunks.yaml"]
    assert len(chunk_problems) == 1
    assert f"expected a non-empty list of chunks, found {found}" in chunk_problems[0].message
    # references into an unreadable file are not reported as dangling
    assert not any("does not exist" in p.message for p in problems)


def test_items_must_be_mappings(tiny_dir: Path, tiny_data: Any) -> None:
    (tiny_dir / "documents.yaml").write_text(
        yaml.safe_dump([*tiny_data["documents.yaml"], "doc-en-2"])
    )
    problems = fixture_problems(tiny_dir)
    assert ("documents.yaml", "item 3", "") in problem_places(problems)


def test_not_utf8_is_reported(tiny_dir: Path) -> None:
    (tiny_dir / "documents.yaml").write_bytes(b"- id: doc\xff\n")
    assert any("not UTF-8" in p.message for p in fixture_problems(tiny_dir))


# --- symlinks --------------------------------------------------------------------------------


def _outside_chunks(tmp_path: Path, tiny_dir: Path, tiny_data: Any) -> Path:
    """A chunks file outside the fixture whose content would be reported if it were read; the
    fixture's own chunks.yaml is removed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    chunks = [dict(c, leaked_marker=True) for c in tiny_data["chunks.yaml"]]
    target = outside / "chunks.yaml"
    target.write_text(yaml.safe_dump(chunks, allow_unicode=True))
    (tiny_dir / "chunks.yaml").unlink()
    return target


def _assert_refused_and_not_read(fixture_dir: Path, file: str) -> None:
    """Loading reports ``file`` as leading outside the fixture, and nothing of its content."""
    problems = fixture_problems(fixture_dir)
    assert any(p.file == file and "outside" in p.message for p in problems)
    assert not any("leaked_marker" in p.field for p in problems)


def test_symlinked_file_outside_is_refused_and_not_read(
    tmp_path: Path, tiny_dir: Path, tiny_data: Any
) -> None:
    target = _outside_chunks(tmp_path, tiny_dir, tiny_data)
    os.symlink(os.path.relpath(target, tiny_dir), tiny_dir / "chunks.yaml")
    _assert_refused_and_not_read(tiny_dir, "chunks.yaml")


def test_symlinked_directory_outside_is_refused(
    tmp_path: Path, tiny_dir: Path, tiny_data: Any
) -> None:
    target = _outside_chunks(tmp_path, tiny_dir, tiny_data)
    os.symlink(target.parent, tiny_dir / "chunks")
    _assert_refused_and_not_read(tiny_dir, "chunks")


def test_symlink_inside_a_kind_directory_leading_out_is_refused(
    tmp_path: Path, tiny_dir: Path, tiny_data: Any
) -> None:
    target = _outside_chunks(tmp_path, tiny_dir, tiny_data)
    (tiny_dir / "chunks").mkdir()
    os.symlink(target, tiny_dir / "chunks" / "all.yaml")
    _assert_refused_and_not_read(tiny_dir, "chunks/all.yaml")


def test_symlink_within_the_fixture_is_followed(tiny_dir: Path) -> None:
    (tiny_dir / ".sources").mkdir()
    (tiny_dir / "chunks.yaml").rename(tiny_dir / ".sources" / "chunks.yaml")
    os.symlink(Path(".sources") / "chunks.yaml", tiny_dir / "chunks.yaml")
    assert len(load_fixture(tiny_dir).chunks) == 3


def test_broken_symlink_is_reported(tiny_dir: Path) -> None:
    (tiny_dir / "queries.yaml").unlink()
    os.symlink("missing.yaml", tiny_dir / "queries.yaml")
    assert any("broken symlink" in p.message for p in fixture_problems(tiny_dir))


# --- the committed fixture -------------------------------------------------------------------


def test_committed_fixture_validates() -> None:
    if not COMMITTED.is_dir():
        pytest.skip("fixtures/synthetic-bilingual-v1 is not committed yet")
    fixture = load_fixture(COMMITTED)
    assert fixture.id == "synthetic-bilingual-v1"
    assert set(fixture.languages) == {"en", "zh"}


# --- command line ----------------------------------------------------------------------------


def test_cli_validate_valid(tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tiny_dir)]) == 0
    # counted by hand from tests/conftest.py: q-en-2 and q-zh-2 have no judgments
    assert capsys.readouterr().out == (
        "tiny-v1 1.0.0: valid — 2 documents, 3 chunks, 4 queries (en: 2, zh: 2; 2 no-answer)\n"
    )


def test_cli_validate_invalid(
    make_fixture: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    def break_two(data: Any) -> None:
        data["chunks.yaml"][1]["document_id"] = "doc-gone"
        data["documents.yaml"][0]["title"] = ""

    directory = make_fixture(break_two)
    assert main(["validate", str(directory)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "chunks.yaml [c-en-2] document_id: names document 'doc-gone', which does " \
        "not exist; expected the ID of a document in documents.yaml"  # fmt: skip
    assert lines[1].startswith("documents.yaml [doc-en-1] title: is empty")
    assert lines[2] == f"{directory}: invalid — 2 problem(s)"


def test_cli_validate_missing_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / "absent")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_validate_committed_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    if not COMMITTED.is_dir():
        pytest.skip("fixtures/synthetic-bilingual-v1 is not committed yet")
    assert main(["validate", str(COMMITTED)]) == 0
    assert capsys.readouterr().out.startswith("synthetic-bilingual-v1 ")


@pytest.mark.parametrize("kind", ["fixture", "documents", "chunks", "queries"])
def test_cli_schema_prints_the_json_schema(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", kind]) == 0
    assert json.loads(capsys.readouterr().out) == fixture_json_schema(kind)


def test_cli_a_defective_copy_of_the_committed_fixture_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not COMMITTED.is_dir():
        pytest.skip("fixtures/synthetic-bilingual-v1 is not committed yet")
    copy = tmp_path / "copy"
    shutil.copytree(COMMITTED, copy)
    chunk_file = sorted((copy / "chunks").glob("*.yaml"))[0]
    chunks = yaml.safe_load(chunk_file.read_text(encoding="utf-8"))
    secret = "ghp_" + "Zx9" * 12
    chunks[0]["text"] = f"{chunks[0]['text']} {secret}"
    chunk_file.write_text(yaml.safe_dump(chunks, allow_unicode=True), encoding="utf-8")
    assert main(["validate", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"chunks/{chunk_file.name} [{chunks[0]['id']}] text: looks like an API key" in out
    assert secret not in out


_SECRET = "ghp_R8aZk3Lq9Wm2Xv7Bn4Yt6Pc1Hd5Jf0Gs8eM5"  # shaped like a GitHub token


@pytest.mark.parametrize(
    "entry",
    [f"{_SECRET}.txt", f"chunks/{_SECRET}.yaml", f"chunks/{_SECRET}.jsonl", f"chunks/{_SECRET}/"],
)
def test_secret_like_entry_names_are_never_shown(entry: str, tmp_path: Path) -> None:
    """Issue 49: a file name shaped like a credential is never echoed in a fixture's problems
    (found by the sensitive-string detector, as output paths are)."""
    from conftest import TINY_FIXTURE, write_fixture

    root = write_fixture(tmp_path / "fx", TINY_FIXTURE)
    if entry.startswith("chunks/"):
        chunks = yaml.safe_load((root / "chunks.yaml").read_text(encoding="utf-8"))
        (root / "chunks.yaml").unlink()
        (root / "chunks").mkdir()
        (root / "chunks" / "all.yaml").write_text(yaml.safe_dump(chunks), encoding="utf-8")
    if entry.endswith("/"):
        (root / entry).mkdir()
    else:
        (root / entry).write_text("a: [\n", encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_fixture(root)
    assert _SECRET not in str(caught.value)
    assert "not shown" in str(caught.value)


def test_a_secret_like_fixture_folder_name_is_never_shown(tmp_path: Path) -> None:
    with pytest.raises(FixtureError) as caught:
        load_fixture(tmp_path / _SECRET)
    assert _SECRET not in str(caught.value)
    assert "not shown" in str(caught.value)
