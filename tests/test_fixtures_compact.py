"""Documents and chunks of a YAML file of at least ``COMPACT_FROM`` objects are checked column
by column (``evalkit.fixtures.load._validated_part``), only the items that check does not
accept validated one by one: every rule must give the same problems, and a valid fixture the
same objects, as validating each object by its model.

Here ``COMPACT_FROM`` is 1, so every single-file list of documents or chunks takes that path;
the reference is the same fixture loaded with it out of reach (``tests/load_paths.py``). The
rule cases and the malformed-fixture corpus are in ``tests/test_fixtures_load_paths.py``;
here, a generated fixture with defects of every kind a column check meets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from load_paths import generated_chunks, planted_problems

from evalkit.fixtures import load
from evalkit.fixtures.load import load_objects


def test_defects_of_every_kind_keep_their_item_numbers_and_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "fx"
    chunks = generated_chunks(
        directory, "compact", monkeypatch, documents=40, chunks_per_document=3, queries=10
    )
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
    problems, labels = planted_problems(directory, chunks, "compact", monkeypatch)
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
