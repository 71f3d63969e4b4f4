"""The two other ways evalkit loads a fixture's list files, each compared with the plain way
(one process, every object validated by its model): ``split``, parsed and validated in two
processes (issue 21, ``evalkit.fixtures.load._load_split``; here ``yamlio.SPLIT_FROM`` is 0,
so every list file is split where it can be), and ``compact``, checked column by column with
only the items that check refuses validated one by one (``evalkit.fixtures.load
._validated_part``; here ``COMPACT_FROM`` is 1). Every rule must give the same problems, and a
valid fixture the same objects, either way."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit import forking
from evalkit.errors import FixtureError
from evalkit.fixtures import dump_fixture, generate_fixture, load, load_fixture
from evalkit.fixtures.diff import fixture_content_hash
from evalkit.fixtures.records import RecordTable
from evalkit.safety import yamlio

LOAD_PATHS = (
    pytest.param(
        "split",
        marks=pytest.mark.skipif(
            "fork" not in multiprocessing.get_all_start_methods(),
            reason="the second half is forked",
        ),
    ),
    "compact",
)


def outcome(directory: Path, path: str | None, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``("problems", sorted problems)`` or ``("fixture", content hash, chunks, documents)``
    of loading ``directory`` the ``path`` way (None: the plain way)."""
    monkeypatch.setattr(forking, "usable_cores", lambda: 2)
    monkeypatch.setattr(yamlio, "SPLIT_FROM", 0 if path == "split" else 10**15)
    if path != "split":  # a split part is checked as the load of its size would be
        monkeypatch.setattr(load, "COMPACT_FROM", 1 if path == "compact" else 10**15)
    try:
        fixture = load_fixture(directory)
    except FixtureError as error:
        return ("problems", sorted(error.problems))
    return ("fixture", fixture_content_hash(fixture), tuple(fixture.chunks), fixture.documents)


def assert_same(directory: Path, path: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The outcome of loading ``directory`` the ``path`` way, asserted equal to the plain
    way's."""
    plain = outcome(directory, None, monkeypatch)
    assert outcome(directory, path, monkeypatch) == plain
    return plain


def generated_chunks(
    directory: Path, path: str, monkeypatch: pytest.MonkeyPatch, **sizes: int
) -> list[Any]:
    """A generated fixture (``generate_fixture(3, **sizes)``) written to ``directory``, which
    loads valid, the same the ``path`` way as the plain way, and whose chunks take that path
    (a :class:`RecordTable`); returns its chunks.yaml as a list to plant defects in."""
    dump_fixture(generate_fixture(3, **sizes), directory)
    assert assert_same(directory, path, monkeypatch)[0] == "fixture"
    assert isinstance(load_fixture(directory).chunks, RecordTable)  # still the path way
    return list(yaml.safe_load((directory / "chunks.yaml").read_text(encoding="utf-8")))


def planted_problems(
    directory: Path, chunks: list[Any], path: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], set[str]]:
    """``chunks`` written back as ``directory``'s chunks.yaml; the problems of loading it (the
    same the ``path`` way as the plain way) and the object IDs they name."""
    (directory / "chunks.yaml").write_text(yaml.safe_dump(chunks, allow_unicode=True))
    kind, problems = assert_same(directory, path, monkeypatch)
    assert kind == "problems"
    return problems, {problem.object_id for problem in problems}
