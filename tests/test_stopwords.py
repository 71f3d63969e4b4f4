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
