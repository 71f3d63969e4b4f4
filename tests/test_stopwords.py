"""The stopword lists evalkit reads from bm25s's module file equal bm25s's own (the oracle:
importing ``bm25s.stopwords`` the usual way)."""

from __future__ import annotations

import pytest
from bm25s import stopwords as oracle

from evalkit.systems.stopwords import bm25s_stopwords


@pytest.mark.parametrize("name", ["STOPWORDS_EN", "STOPWORDS_EN_PLUS"])
def test_the_lists_are_bm25s_own(name: str) -> None:
    assert bm25s_stopwords(name) == frozenset(getattr(oracle, name))
    assert len(bm25s_stopwords(name)) > 20


def test_the_reference_systems_do_not_import_bm25s() -> None:
    import subprocess
    import sys

    probe = "import sys, evalkit.systems.reference; print('bm25s' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False"
