"""``index_terms``'s bounded cache of word forms (issue 21): when it fills up it is cleared, and
the text being tokenized still gets every one of its terms.

Oracle: ``tokenize``, which does not use the cache.
"""

from __future__ import annotations

from collections import Counter

import pytest

from evalkit.systems import text as text_module
from evalkit.systems.text import index_terms, tokenize


def test_a_full_forms_cache_is_cleared_without_losing_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(text_module, "_FORMS", {})
    monkeypatch.setattr(text_module, "_FORMS_LIMIT", 4)
    first = "ferries leave the pier"  # 4 forms cached: the cache is full
    assert Counter(index_terms(first).split()) == Counter(tokenize(first))
    # "ferries" is cached, "tickets" and "office" are new: more than the limit, so the cache is
    # cleared, and "ferries" must be looked up again rather than raise KeyError.
    second = "ferries tickets office 渡轮码头"
    assert Counter(index_terms(second).split()) == Counter(tokenize(second))
    assert len(text_module._FORMS) <= 4
