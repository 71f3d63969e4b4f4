"""The stop-word lists shipped in the package equal the lists evalkit used to read from bm25s
(the oracle, a dev dependency only: ``bm25s.stopwords``), so no ranking changed when bm25s left
the core dependencies."""

from __future__ import annotations

import subprocess
import sys

import pytest
from bm25s import stopwords as oracle

from evalkit.systems.stopwords import STOPWORD_LISTS, stopwords


@pytest.mark.parametrize(
    ("name", "bm25s_name"), [("lucene", "STOPWORDS_EN"), ("nltk", "STOPWORDS_EN_PLUS")]
)
def test_the_shipped_lists_are_bm25s_lists(name: str, bm25s_name: str) -> None:
    assert stopwords(name) == frozenset(getattr(oracle, bm25s_name))  # type: ignore[arg-type]


def test_each_file_names_its_origin_and_licence() -> None:
    from importlib import resources

    for file in STOPWORD_LISTS.values():
        header = resources.files("evalkit.systems").joinpath("data", file).read_text("utf-8")
        comments = " ".join(line for line in header.splitlines() if line.startswith("#"))
        assert "Origin:" in comments
        assert "licence: Apache-2.0" in comments


def test_the_reference_systems_do_not_import_bm25s_or_numba() -> None:
    probe = (
        "import sys, evalkit.systems.reference, evalkit.run._evaluate; "
        "print('bm25s' in sys.modules, 'numba' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False False"
