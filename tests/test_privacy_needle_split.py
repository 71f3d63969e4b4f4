"""The leak scan's two automata (needles with an ASCII first character, and the others read
only near the artifact's non-ASCII characters) find every needle occurrence, at its place, as
a plain search does (issue 48: the scan of a 10,000-chunk report, 1.4 s, is now 0.07 s)."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from evalkit.safety.privacy import PrivateText, _index, find_leaks

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


def _plain_matches(index: object, haystack: str) -> list[tuple[int, tuple[int, tuple[int, ...]]]]:
    found = []
    for automaton in (index._ascii_first, index._other_first):  # type: ignore[attr-defined]
        for needle, value in automaton.items():
            at = haystack.find(needle)
            while at >= 0:
                found.append((at + len(needle) - 1, value))
                at = haystack.find(needle, at + 1)
    return sorted(found)


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 10**6))
def test_both_automata_find_every_needle_at_its_place(seed: int) -> None:
    rng = random.Random(seed)
    private = [
        PrivateText(f"chunk:{i}", "".join(rng.choices(_PIECES[:4], k=rng.randint(1, 4))))
        for i in range(6)
    ]
    haystack = "".join(rng.choices(_PIECES, k=rng.randint(0, 40)))
    index = _index(tuple(private))
    assert sorted(index._matches(haystack)) == _plain_matches(index, haystack)


def test_a_chinese_copy_after_long_english_and_at_the_very_end_is_found() -> None:
    chinese = "我们在这里讨论了很多关于渡轮时刻表和票价的问题"
    private = [PrivateText("chunk:zh", chinese)]
    english = "plain ascii text of the report page " * 2000
    assert find_leaks(english + chinese[:12], private) == ["chunk:zh"]
    assert find_leaks(english + "é" + chinese[3:15] + english, private) == ["chunk:zh"]
    assert find_leaks(english, private) == []
