"""Shared test helpers: a tiny valid fixture as plain data, a writer for fixture dirs, the
problems of a fixture that does not load, and the trec_eval 10.0 oracle's fixtures (built by
``trec_eval_oracle``, once per session, on first use).

Property tests (hypothesis) draw the same examples on every run of ``make test`` and CI, so a
red run can be repeated; ``make fuzz`` draws new ones (``HYPOTHESIS_PROFILE=fuzz``), 500 per
property instead of 100, to look for failures no earlier run has met. The input fuzz targets
(``tests/test_fuzz_inputs.py``) run 12 fixed examples each in ``make test`` and the fuzz
profile's count under ``make fuzz``.
"""

from __future__ import annotations

import copy
import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from hypothesis import settings
from trec_eval_oracle import RBP_FIX, SOURCE_9, TrecEval10, build_trec_eval10

if TYPE_CHECKING:
    from evalkit.errors import Problem

# No per-example deadline: a property test checks behaviour, not speed (speed is measured in
# benchmarks/), and a loaded 2-core CI machine must not turn a slow example into a failure.
settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("fuzz", derandomize=False, max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# The ferry text, with offsets counted by hand: "The ferry leaves at 06:40 and then " is 35
# characters, so "every ninety minutes" (20 characters) spans 35..55.
TINY_FIXTURE: dict[str, Any] = {
    "fixture.yaml": {
        "id": "tiny-v1",
        "version": "1.0.0",
        "license": "CC0-1.0",
        "description": "Tiny hand-written test fixture.",
        "languages": ["en", "zh"],
    },
    "documents.yaml": [
        {"id": "doc-en-1", "language": "en", "title": "Ferry guide"},
        {"id": "doc-zh-1", "language": "zh", "title": "渡轮指南"},
    ],
    "chunks.yaml": [
        {
            "id": "c-en-1",
            "document_id": "doc-en-1",
            "language": "en",
            "title": "Departures",
            "text": "The ferry leaves at 06:40 and then every ninety minutes.",
        },
        {
            "id": "c-en-2",
            "document_id": "doc-en-1",
            "language": "en",
            "title": "Fares",
            "text": "A single ticket costs four crowns.",
        },
        {
            "id": "c-zh-1",
            "document_id": "doc-zh-1",
            "language": "zh",
            "title": "票价",
            "text": "单程票价为四克朗，儿童半价。",
        },
    ],
    "queries.yaml": [
        {
            "id": "q-en-1",
            "language": "en",
            "text": "When does the first ferry leave?",
            "judgments": [
                {
                    "chunk_id": "c-en-1",
                    "grade": 3,
                    "spans": [
                        "leaves at 06:40",
                        {"text": "every ninety minutes", "start": 35, "end": 55},
                    ],
                }
            ],
        },
        {"id": "q-en-2", "language": "en", "text": "Is there a night bus?", "tags": ["no-answer"]},
        {
            "id": "q-zh-1",
            "language": "zh",
            "text": "单程票多少钱？",
            "judgments": [{"chunk_id": "c-zh-1", "grade": 3, "spans": ["四克朗"]}],
        },
        {"id": "q-zh-2", "language": "zh", "text": "有夜班车吗？", "judgments": []},
    ],
}


def write_fixture(directory: Path, files: dict[str, Any]) -> Path:
    """Write each ``name -> data`` as YAML (or raw text when data is a str) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
        target.write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def tiny_data() -> dict[str, Any]:
    """A fresh deep copy of ``TINY_FIXTURE`` that a test may mutate."""
    return copy.deepcopy(TINY_FIXTURE)


@pytest.fixture
def tiny_dir(tmp_path: Path, tiny_data: dict[str, Any]) -> Path:
    """The tiny fixture written to ``tmp_path / "tiny"``."""
    return write_fixture(tmp_path / "tiny", tiny_data)


@pytest.fixture
def make_fixture(tmp_path: Path, tiny_data: dict[str, Any]) -> Any:
    """``make_fixture(mutate)``: write the tiny fixture after ``mutate(data)``; returns its dir."""
    counter = iter(range(1_000_000))

    def make(mutate: Any = None) -> Path:
        data = copy.deepcopy(tiny_data)
        if mutate is not None:
            mutate(data)
        return write_fixture(tmp_path / f"fixture-{next(counter)}", data)

    return make


def load_benchmark(file_name: str) -> ModuleType:
    """A script of ``benchmarks/`` imported as a module (they are scripts, not a package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / file_name
    spec = importlib.util.spec_from_file_location(f"{path.stem}_under_test", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture_problems(directory: Path) -> tuple[Problem, ...]:
    """The problems of the ``FixtureError`` that loading ``directory`` raises (fails if it
    loads)."""
    from evalkit.errors import FixtureError
    from evalkit.fixtures import load_fixture

    with pytest.raises(FixtureError) as caught:
        load_fixture(directory)
    return caught.value.problems


def problem_places(problems: tuple[Problem, ...]) -> set[tuple[str, str, str]]:
    """``{(file, object_id, field)}`` of ``problems``."""
    return {(p.file, p.object_id, p.field) for p in problems}


@pytest.fixture(scope="session")
def trec_eval10(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """Build trec_eval 10.0 with widened output in a temporary folder (skip if impossible)."""
    widened = dict.fromkeys(("meas_print_single.c", "meas_print_final.c"), ("%6.4f", "%.17g"))
    return build_trec_eval10(tmp_path_factory, "trec_eval10", widened)


@pytest.fixture(scope="session")
def trec_eval10_plain(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """trec_eval 10.0 as released (4-decimal output), built in a temporary folder."""
    return build_trec_eval10(tmp_path_factory, "trec_eval10_plain", {})


@pytest.fixture(scope="session")
def trec_eval10_rbp_fixed(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """trec_eval 10.0 as released but with ``RBP_FIX`` (a modified work: the two
    uninitialized variables of m_rbp.c set to 0), 4-decimal output."""
    return build_trec_eval10(tmp_path_factory, "trec_eval10_rbp_fixed", RBP_FIX)


@pytest.fixture(scope="session")
def trec_eval9(tmp_path_factory: pytest.TempPathFactory) -> TrecEval10:
    """trec_eval 9.0.8 as released (4-decimal output), built in a temporary folder."""
    return build_trec_eval10(tmp_path_factory, "trec_eval9", {}, source=SOURCE_9, version="9.0.8")
