"""``evalkit.systems.termsets``: integer term keys and their document frequencies, checked
against ``set(tokenize(text))`` and a ``Counter`` over those sets (the definition)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from evalkit.systems.termsets import LATIN_BASE, DocumentFrequencies, TermCoder, TermRows
from evalkit.systems.text import tokenize

# The edges of the three CJK ranges, characters just outside them (kana, a CJK
# compatibility ideograph past U+FAFF, an Extension B ideograph), Latin, digits and punctuation.
_ALPHABET = (
    "\u3400\u4dbf\u4e00\u9fff\uf900\ufaff\u33ff\u4dc0\ufb00渡轮码头船东京あア𠀀éÉabc09 _-.,!?\n\t"
)
_TEXTS = st.lists(st.text(alphabet=_ALPHABET, max_size=30), max_size=12)


def _build(batches: list[list[str]]) -> tuple[TermCoder, TermRows]:
    coder = TermCoder()
    rows = TermRows(coder)
    for batch in batches:
        rows.extend(batch)
    return coder, rows


@settings(deadline=None)  # the first example imports pyarrow
@given(_TEXTS, st.integers(min_value=1, max_value=5))
def test_rows_hold_the_distinct_terms_and_frequencies_count_rows(
    texts: list[str], batch: int
) -> None:
    coder, rows = _build([texts[i : i + batch] for i in range(0, len(texts), batch)])
    assert len(rows) == len(texts)
    for row, text in enumerate(texts):
        keys = rows.row(row).tolist()
        assert keys == sorted(set(keys))
        assert sorted(coder.term(k) for k in keys) == sorted(set(tokenize(text)))
        for term in tokenize(text):
            assert coder.key(term) in keys
    expected = Counter(t for text in texts for t in set(tokenize(text)))
    frequencies = DocumentFrequencies(rows)
    assert {t: frequencies(t) for t in expected} == dict(expected)
    assert sorted(frequencies.terms()) == sorted(expected)
    assert len(frequencies) == len(expected)
    cjk = {t for t in expected if (coder.key(t) or 0) < LATIN_BASE}
    assert frequencies.cjk_characters() == frozenset("".join(cjk))
    assert sorted(frequencies.latin_terms()) == sorted(set(expected) - cjk)


def test_keys_of_cjk_terms_are_arithmetic_and_latin_keys_need_a_text() -> None:
    coder = TermCoder()
    assert coder.key("\u3400") == 0
    assert coder.key("\u4dbf") == 6591
    assert coder.key("\u4e00") == 6592
    assert coder.key("\ufaff") == 28095
    assert coder.key("\u3400\u3400") == 28096
    assert coder.key("\ufaff\ufaff") == 28096 + 28095 * 28096 + 28095
    assert coder.key("ferri") is None  # a Latin term no text contained
    assert coder.key("あ") is None  # kana are not in the CJK ranges
    rows = TermRows(coder)
    rows.extend(["ferries あ 渡轮"])
    assert coder.key("ferri") == LATIN_BASE
    assert coder.key("あ") == LATIN_BASE + 1
    assert [coder.term(k) for k in rows.row(0).tolist()] == ["渡轮", "ferri", "あ"]
    frequencies = DocumentFrequencies(rows)
    assert frequencies("渡轮") == 1
    assert frequencies("轮渡") == 0
    assert frequencies("boat") == 0


def test_no_texts() -> None:
    _, rows = _build([])
    assert len(rows) == 0
    frequencies = DocumentFrequencies(rows)
    assert len(frequencies) == 0
    assert frequencies("渡轮") == 0
    assert frequencies.cjk_characters() == frozenset()
