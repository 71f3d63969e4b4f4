"""Documents and chunks of a YAML file of at least ``COMPACT_FROM`` objects are checked column
by column (``evalkit.fixtures.load._validated_part``), only the items that check does not
accept validated one by one: every rule must give the same problems, and a valid fixture the
same objects, as validating each object by its model.

Here ``COMPACT_FROM`` is 1, so every single-file list of documents or chunks takes that path;
the reference is the same fixture loaded with it out of reach. The defects are the fixture
rule cases and the malformed-fixture corpus of ``tests/malformed/``, and a generated fixture
with defects of every kind a column check meets.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TINY_FIXTURE, write_fixture
from test_fixtures_rules import RULE_CASES
from test_malformed import CASES as MALFORMED_CASES, prepare

from evalkit.errors import FixtureError
from evalkit.fixtures import dump_fixture, generate_fixture, load, load_fixture
from evalkit.fixtures.diff import fixture_content_hash
from evalkit.fixtures.load import load_objects
from evalkit.fixtures.records import RecordTable
from evalkit.safety import yamlio

Data = dict[str, Any]


def _outcome(directory: Path, at_once: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(yamlio, "SPLIT_FROM", 10**15)  # one process (tests/test_fixtures_split)
    monkeypatch.setattr(load, "COMPACT_FROM", 1 if at_once else 10**15)
    try:
        fixture = load_fixture(directory)
    except FixtureError as error:
        return ("problems", sorted(error.problems))
    return ("fixture", fixture_content_hash(fixture), tuple(fixture.chunks), fixture.documents)


def _assert_same(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    one_by_one = _outcome(directory, False, monkeypatch)
    assert _outcome(directory, True, monkeypatch) == one_by_one
    return one_by_one


@pytest.mark.parametrize(("case", "mutate"), [(i, m) for i, m, _, _ in RULE_CASES])
def test_each_rule_gives_the_same_problems_at_once_or_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, mutate: Callable[[Data], None]
) -> None:
    data = copy.deepcopy(TINY_FIXTURE)
    mutate(data)
    assert _assert_same(write_fixture(tmp_path / case, data), monkeypatch)[0] == "problems"


@pytest.mark.parametrize("name", [n for n in MALFORMED_CASES if n.startswith("fixture-")])
def test_malformed_fixture_cases_give_the_same_problems_at_once_or_one_by_one(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = prepare(name, tmp_path / "case")
    fixture_dir = tmp_path / "case" / spec["command"][-1]
    if fixture_dir.is_dir():
        _assert_same(fixture_dir, monkeypatch)


def test_defects_of_every_kind_keep_their_item_numbers_and_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = generate_fixture(3, documents=40, chunks_per_document=3, queries=10)
    directory = tmp_path / "fx"
    dump_fixture(fixture, directory)
    valid = _assert_same(directory, monkeypatch)
    assert valid[0] == "fixture"
    monkeypatch.setattr(load, "COMPACT_FROM", 1)
    assert isinstance(load_fixture(directory).chunks, RecordTable)
    chunks = yaml.safe_load((directory / "chunks.yaml").read_text(encoding="utf-8"))
    chunks[3]["text"] = 7  # not a string: one by one, named by its ID
    chunks[4]["id"] = "not a valid id"  # refused by the column check: named as item 5
    chunks[5]["document_id"] = "doc-missing"  # accepted, then a dangling reference
    chunks[6]["title"] = "see C:\\Users\\someone\\corpus.txt"  # a path
    del chunks[7]["language"]  # a missing field
    chunks[8]["colour"] = "red"  # an unknown field
    chunks[9]["near_duplicate_of"] = None  # an optional field left empty: valid
    chunks[10]["title"] = ""  # too short
    chunks[11] = ["not", "a", "mapping"]
    chunks[12]["text"] = "bad \x07 control"
    (directory / "chunks.yaml").write_text(yaml.safe_dump(chunks, allow_unicode=True))
    kind, problems = _assert_same(directory, monkeypatch)
    assert kind == "problems"
    labels = {problem.object_id for problem in problems}
    assert {chunks[3]["id"], "item 5", chunks[5]["id"], chunks[8]["id"], "item 12"} <= labels
    assert chunks[9]["id"] not in labels
    assert len(problems) >= 9
    # load_objects (a fixture being edited) keeps the same valid objects either way
    monkeypatch.setattr(load, "COMPACT_FROM", 10**15)
    one_by_one, found = load_objects(directory)
    monkeypatch.setattr(load, "COMPACT_FROM", 1)
    at_once, found_at_once = load_objects(directory)
    assert sorted(found_at_once) == sorted(found)
    assert tuple(at_once["chunks"]) == tuple(one_by_one["chunks"])
