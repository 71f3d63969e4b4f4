"""The leak scan's needle index (windows in hash tables, whole strings in two automata: those
with an ASCII first character, and the others read only near the artifact's non-ASCII
characters) finds every needle occurrence, at its place, as a plain search of every needle of
the rule does (issue 48: the scan of a 10,000-chunk report, 1.4 s, is now 0.07 s; the index's
build, 1.5-2 s, about 0.5 s)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from evalkit.safety import privacy
from evalkit.safety.privacy import PrivateText, _index, _text_needles, find_leaks

_PIECES = [
    "The ferries leave the northern pier every hour ",
    "我们在这里讨论了很多关于渡轮时刻表和票价的问题",
    "café crème brûlée — naïve résumé ",
    "Ⅻ ① ＡＢＣ mixed 渡轮码头 text ",
    "<td>",
    "</td>",
    " ",
    "\n",
    "0123456789",
    "é",
    "渡",
]


def _plain_matches(index: object, haystack: str) -> list[tuple[int, int, int, int]]:
    """``(end, length, private string, offset)`` of every needle of the rule
    (``_text_needles`` of each normalized private string), found by ``str.find``."""
    found = []
    for position, text in enumerate(index._texts):  # type: ignore[attr-defined]
        for offset, needle in _text_needles(text):
            at = haystack.find(needle)
            while at >= 0:
                found.append((at + len(needle) - 1, len(needle), position, offset))
                at = haystack.find(needle, at + 1)
    return sorted(found)


def _flat(matches: object) -> list[tuple[int, int, int, int]]:
    return sorted(
        (end, length, places[k], places[k + 1])
        for end, (length, places) in matches  # type: ignore[attr-defined]
        for k in range(0, len(places), 2)
    )


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 10**6))
def test_both_automata_find_every_needle_at_its_place(seed: int) -> None:
    rng = random.Random(seed)
    private = [
        PrivateText(f"chunk:{i}", "".join(rng.choices(_PIECES[:4], k=rng.randint(1, 4))))
        for i in range(6)
    ]
    haystack = "".join(rng.choices(_PIECES, k=rng.randint(0, 40)))
    index = _index(tuple(private))  # few windows: all needles in the automata
    assert not index._windows
    index.build()  # the automata, not the dict of a short artifact's first searches
    assert _flat(index._matches(haystack)) == _plain_matches(index, haystack)
    sliced = privacy._NeedleIndex(private)  # the dict alone, whatever the length
    sliced._sliced_budget = len(haystack) * len(sliced._lengths)
    assert _flat(sliced._matches(haystack)) == _plain_matches(sliced, haystack)
    assert sliced._automata is None
    default = privacy.WINDOW_TABLES_FROM
    privacy.WINDOW_TABLES_FROM = 0  # the windows in hash tables
    try:
        tables = privacy._NeedleIndex(private)
    finally:
        privacy.WINDOW_TABLES_FROM = default
    assert _flat(tables._matches(haystack)) == _plain_matches(tables, haystack)


def test_a_chinese_copy_after_long_english_and_at_the_very_end_is_found() -> None:
    chinese = "我们在这里讨论了很多关于渡轮时刻表和票价的问题"
    private = [PrivateText("chunk:zh", chinese)]
    english = "plain ascii text of the report page " * 2000
    assert find_leaks(english + chinese[:12], private) == ["chunk:zh"]
    assert find_leaks(english + "é" + chinese[3:15] + english, private) == ["chunk:zh"]
    assert find_leaks(english, private) == []


def test_colliding_window_hashes_are_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """With base 1 a window's hash is the sum of its code points: anagrams collide, and every
    position's table bit is set. The matches and findings are still the plain search's."""
    rng = random.Random(48)
    private = [PrivateText(f"chunk:{i}", "".join(rng.choices(_PIECES[:4], k=3))) for i in range(6)]
    haystack = "".join(rng.choices(_PIECES, k=60)) + private[2].text[::-1] + private[3].text
    expected = privacy._NeedleIndex(private).find(haystack)
    monkeypatch.setattr(privacy, "WINDOW_TABLES_FROM", 0)
    monkeypatch.setattr(privacy, "_HASH_BASE", 1)
    index = privacy._NeedleIndex(private)
    assert index._windows
    assert _flat(index._matches(haystack)) == _plain_matches(index, haystack)
    assert index.find(haystack) == expected
    assert "chunk:3" in expected


def test_short_artifacts_are_searched_without_the_automata_until_they_would_cost_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Short artifacts are looked up in a dict of the whole strings (each substring of a whole
    string's length) while the lookups stay within ``SLICED_SEARCH_PER_NEEDLE`` per string;
    the search that would pass it builds the automata, which search from then on. Same
    findings either way."""
    private = [PrivateText(f"chunk:{i}", piece) for i, piece in enumerate(_PIECES[:4])]
    page = "<p>" + _PIECES[1][:14] + " and " + _PIECES[2] + "</p>"
    probe = privacy._NeedleIndex(private)
    lookups = len(page) * len(probe._lengths)  # one search of the page
    monkeypatch.setattr(privacy, "SLICED_SEARCH_PER_NEEDLE", -(-2 * lookups // len(probe._whole)))
    index = privacy._NeedleIndex(private)  # room for two searches of the page
    for _ in range(2):
        assert index.find(page) == ["chunk:1", "chunk:2"]
        assert index._automata is None
    assert index.find(page) == ["chunk:1", "chunk:2"]
    assert index._automata is not None  # the third would pass the budget: built, and kept
