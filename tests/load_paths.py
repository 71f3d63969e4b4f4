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

from evalkit import forking
from evalkit.errors import FixtureError
from evalkit.fixtures import load, load_fixture
from evalkit.fixtures.diff import fixture_content_hash
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
