"""``shared_term_lists`` (issue 48): inside the block a batch's term lists are computed once
and handed out again for equal texts; outside it, and past ``SHARED_TERM_CHARS``, every call
tokenizes. Oracle: the lists computed outside the block, and ``tokenize``."""

from __future__ import annotations

import pytest

from evalkit.systems import text as text_module
from evalkit.systems.text import (
    TOKEN_LISTS_VECTORIZED_FROM,
    shared_term_lists,
    token_term_lists,
    tokenize,
)


def _texts(n: int) -> list[str]:
    return [f"ferry {i} leaves pier {i % 7} at noon, tickets sold" for i in range(n)]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    computed = text_module._term_lists_computed

    def counted(texts: list[str]) -> object:
        calls.append(len(texts))
        return computed(texts)

    monkeypatch.setattr(text_module, "_term_lists_computed", counted)
    return calls


def test_equal_texts_are_tokenized_once_inside_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _texts(TOKEN_LISTS_VECTORIZED_FROM)
    alone = token_term_lists(texts)
    calls = _counting(monkeypatch)
    with shared_term_lists():
        first = token_term_lists(texts)
        again = token_term_lists(list(_texts(TOKEN_LISTS_VECTORIZED_FROM)))  # equal, not same
        other = token_term_lists(_texts(TOKEN_LISTS_VECTORIZED_FROM + 1))
    assert calls == [len(texts), len(texts) + 1]
    assert first.equals(alone)
    assert again.equals(alone)
    assert other.to_pylist()[: len(texts)] == alone.to_pylist()
    assert alone.to_pylist()[3] == tokenize(texts[3])
    token_term_lists(texts)  # after the block: computed again
    assert calls[-1] == len(texts)
    assert len(calls) == 3


def test_nothing_is_kept_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(TOKEN_LISTS_VECTORIZED_FROM)
    monkeypatch.setattr(text_module, "SHARED_TERM_CHARS", sum(map(len, texts)) - 1)
    calls = _counting(monkeypatch)
    with shared_term_lists():
        first = token_term_lists(texts)
        second = token_term_lists(texts)
    assert len(calls) == 2
    assert first.equals(second)


def test_a_batch_is_cut_from_a_kept_batch_that_holds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A system tokenizing in batches after another tokenized all texts at once: each batch's
    lists are a slice of the kept ones, equal to its own tokenization, mixed rows included."""
    texts = _texts(3 * TOKEN_LISTS_VECTORIZED_FROM)
    texts[TOKEN_LISTS_VECTORIZED_FROM + 7] += " 渡轮码头 票价"  # Latin and CJK: tokenize()
    texts[1] = texts[4]  # a repeated text: the first batch's first text is at 1 too
    batches = [
        texts[start : start + TOKEN_LISTS_VECTORIZED_FROM]
        for start in range(4, len(texts), TOKEN_LISTS_VECTORIZED_FROM)
    ]
    alone = [token_term_lists(batch) for batch in batches]
    calls = _counting(monkeypatch)
    with shared_term_lists():
        token_term_lists(texts)
        cut = [token_term_lists(batch) for batch in batches]
    assert calls == [len(texts)]
    assert [lists is None for lists in cut] == [lists is None for lists in alone]
    assert alone[1] is None
    for mine, own in zip(cut, alone, strict=True):
        if own is not None:
            assert mine.to_pylist() == own.to_pylist()
