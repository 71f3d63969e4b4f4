"""``hits_of`` passes a list of plain hits through as it is (issue 48: checked with C-level
passes instead of rebuilding every hit) and converts everything else as before."""

from __future__ import annotations

import math

import pytest

from evalkit.errors import InputError
from evalkit.systems.protocol import Hit, hits_of


class _Id(str):
    pass


def test_plain_hits_are_the_same_hits() -> None:
    hits = [Hit("c1", 0.5), Hit("c2", -1.0), Hit("c3", math.nan)]
    out = hits_of(hits, "system 's'", "q1")
    assert out == hits
    assert out is not hits
    assert hits_of([], "system 's'", "q1") == []


@pytest.mark.parametrize(
    "given",
    [
        [Hit(_Id("c1"), 0.5)],  # a str subclass ID becomes a plain str
        [Hit("c1", 1)],  # an int score becomes a float
        [("c1", 0.5)],  # a pair becomes a Hit
        [Hit("c1", 0.5), ("c2", 2)],
    ],
)
def test_other_hits_are_converted(given: list[tuple[str, float]]) -> None:
    out = hits_of(given, "system 's'", "q1")
    assert out == [Hit(str(i), float(s)) for i, s in given]
    assert all(type(h) is Hit and type(h[0]) is str and type(h[1]) is float for h in out)


def test_a_bad_hit_in_a_list_is_still_refused() -> None:
    with pytest.raises(InputError, match="returned a hit of type str"):
        hits_of([Hit("c1", 0.5), "c2"], "system 's'", "q1")
