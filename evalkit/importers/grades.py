"""Judgment grades of an imported collection: ``--grade-map`` and the 0-3 rule.

A fixture's grades are 0-3 (0 not relevant, 3 most relevant). A collection on another scale
(Cranfield's 1-5, a 0-4 web collection) is mapped explicitly with ``--grade-map
SOURCE:TARGET,...``; a grade above 3 that no map covers refuses the import, naming the grades
found, because capping (4 -> 3) silently changes every gain-based measure of the collection.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from evalkit.errors import InputError

__all__ = ["check_grades", "parse_grade_map", "whole_grade"]


def parse_grade_map(text: str) -> dict[int, int]:
    """``"4:3,3:2,5:0"`` as ``{4: 3, 3: 2, 5: 0}``: source grade -> fixture grade (0-3).
    Raises :class:`InputError` (what, expected, an example) on anything else."""
    pairs: dict[int, int] = {}
    for part in text.split(","):
        source, _, target = part.strip().partition(":")
        try:
            key, value = int(source), int(target)
        except ValueError:
            key, value = 0, -1
        if not 0 <= value <= 3 or key in pairs:
            raise InputError(
                f"--grade-map: {part.strip()!r} is not 'source:target' with a whole source grade "
                "given once and a target of 0-3; e.g. --grade-map 4:3,3:2,2:1,1:1"
            )
        pairs[key] = value
    return pairs


def check_grades(grades: Iterable[int]) -> None:
    """Refuse grades above 3 (after the grade map): the message names them, with counts."""
    above = Counter(grade for grade in grades if grade > 3)
    if above:
        found = ", ".join(f"{grade} ({count} judgments)" for grade, count in sorted(above.items()))
        raise InputError(
            f"the judgments hold grades above 3: {found}; a fixture's grades are 0-3 (0 not "
            "relevant, 3 most relevant). Map the collection's scale onto them with --grade-map "
            "SOURCE:TARGET,..., e.g. --grade-map 4:3,3:2,2:1,1:1 (read the collection's own "
            "description of its grades first; nothing was written)"
        )


def whole_grade(value: object, where: str, what: str = "grade") -> int:
    """A judgment's grade: an integer, or a whole number written as a float (``2.0``)."""
    if isinstance(value, bool):
        value = None
    number: float | None
    try:
        number = float(value) if isinstance(value, str | int | float) else None
    except ValueError:
        number = None
    if number is None or not math.isfinite(number) or number != int(number):
        raise InputError(
            f"{where}: the {what} should be a whole number (0, 1, 2 or 3; found "
            f"{'a fraction' if number is not None and math.isfinite(number) else 'no number'}); "
            "round or map the grades before importing"
        )
    return int(number)
