"""Every fixture rule case and every malformed fixture of ``tests/malformed/`` gives the same
problems when its list files are loaded split in two processes or checked column by column as
when they are loaded the plain way (``tests/load_paths.py``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import TINY_FIXTURE, write_fixture
from load_paths import LOAD_PATHS, assert_same
from test_fixtures_rules import RULE_CASES
from test_malformed import CASES as MALFORMED_CASES, prepare


@pytest.mark.parametrize("path", LOAD_PATHS)
@pytest.mark.parametrize(("case", "mutate"), [(i, m) for i, m, _, _ in RULE_CASES])
def test_each_rule_gives_the_same_problems_whichever_way_it_is_loaded(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    mutate: Callable[[dict[str, Any]], None],
    path: str,
) -> None:
    data = copy.deepcopy(TINY_FIXTURE)
    mutate(data)
    assert assert_same(write_fixture(tmp_path / case, data), path, monkeypatch)[0] == "problems"


@pytest.mark.parametrize("path", LOAD_PATHS)
@pytest.mark.parametrize("name", [n for n in MALFORMED_CASES if n.startswith("fixture-")])
def test_malformed_fixture_cases_give_the_same_problems_whichever_way_they_are_loaded(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    spec = prepare(name, tmp_path / "case")
    fixture_dir = tmp_path / "case" / spec["command"][-1]
    if not fixture_dir.is_dir():
        pytest.skip("not a fixture directory: nothing is loaded either way")
    assert_same(fixture_dir, path, monkeypatch)
