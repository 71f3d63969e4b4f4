"""A large YAML list of documents or chunks is parsed and validated in two processes (issue 21,
``evalkit.fixtures.load._load_split``); every rule must give the same problems, and a valid
fixture the same objects, as when one process reads the file whole.

Here ``yamlio.SPLIT_FROM`` is 0, so every list file is split where it can be; the reference is
the same fixture loaded with splitting off (``tests/load_paths.py``). The rule cases and the
malformed-fixture corpus are in ``tests/test_fixtures_load_paths.py``; here, a generated
fixture with defects planted after the cut, and a split that fails.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from load_paths import generated_chunks, outcome, planted_problems

from evalkit import forking
from evalkit.fixtures import dump_fixture, generate_fixture

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the second half is forked"
)


def test_defects_after_the_cut_keep_their_item_numbers_and_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "fx"
    chunks = generated_chunks(
        directory, "split", monkeypatch, documents=60, chunks_per_document=4, queries=20
    )
    chunks[200]["text"] = 7  # a safe ID: named by its ID
    chunks[201]["id"] = "not a valid id"  # an unsafe ID: named by its item number, 202
    chunks[230]["document_id"] = "doc-missing"  # a dangling reference
    chunks[235]["title"] = "see C:\\Users\\someone\\corpus.txt"  # a path
    del chunks[236]["language"]
    chunks[10]["text"] = ["a list"]  # and one before the cut
    problems, labels = planted_problems(directory, chunks, "split", monkeypatch)
    assert {chunks[200]["id"], "item 202", chunks[230]["id"], chunks[10]["id"]} <= labels
    assert len(problems) >= 6


def test_a_split_that_fails_is_not_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated key after the cut fails the split of chunks.yaml; the whole parse that
    reports it runs in this process: as many forks as for the valid fixture, not one more."""
    directory = tmp_path / "fx"
    dump_fixture(generate_fixture(4, documents=40, chunks_per_document=4, queries=10), directory)
    forks: list[str] = []
    real = forking.ForkedCall

    def counted(*args: Any, **kwargs: Any) -> Any:
        forks.append(args[0].__name__)
        return real(*args, **kwargs)

    monkeypatch.setattr(forking, "ForkedCall", counted)
    assert outcome(directory, "split", monkeypatch)[0] == "fixture"
    valid = len(forks)
    assert valid >= 1
    chunks = directory / "chunks.yaml"
    chunks.write_text(chunks.read_text(encoding="utf-8") + "- id: x\n  id: y\n", "utf-8")
    forks.clear()
    kind, problems = outcome(directory, "split", monkeypatch)
    assert kind == "problems"
    assert any("repeats a mapping key" in p.message for p in problems)
    assert len(forks) == valid
