"""Names that reach reports: systems, probe targets, gates. They are IDs, checked like fixture IDs.

A name reaches stdout, every JSON report and the HTML report, so it must be as safe as an ID:

- It follows the fixture ID rule (:data:`ID_PATTERN`): 1 to 128
  characters, ASCII letters, digits, ``.``, ``:`` and ``-`` (no ``_``, no space), starting
  with a letter or digit.
- It does not look like a path, an endpoint or a credential: the fixture's string detector
  (:func:`evalkit.fixtures.rules.find_sensitive`) finds nothing in it.
- A system's name does not contain (case-insensitively) a private value of its own
  ``definition()`` (:func:`evalkit.safety.privacy.definition_values`: a model name, an endpoint's
  host, ...): ``bge-m3-prod`` is refused for a system whose definition holds ``bge-m3``.
  A model name the definition does not hold cannot be recognized; name systems by role
  (``candidate``, ``prod-retriever``), not by model.

Errors (:class:`~evalkit.errors.InputError`) never show the name: they say which name (its
kind and position or field) and which rule it breaks.
"""

from __future__ import annotations

import re
from typing import Any, Final

from evalkit.errors import InputError
from evalkit.safety.sensitive import SENSITIVE_KINDS, find_sensitive

__all__ = ["ID_PATTERN", "check_name", "name_problem", "safe_id", "shown_name"]

# '#' for real collections' IDs (MIRACL "12#3", MS MARCO v2.1 "..._00_0#3_1"), '~' for the
# reversible mapping of other IDs by ``evalkit import`` (see evalkit.importers.core).
ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:#~-]{0,127}$"
"""The fixture ID rule: every document, chunk and query ID, and every name that reaches a report."""
_ID_RE: Final = re.compile(ID_PATTERN)

_ID_RULE: Final = (
    "an ID of 1-128 ASCII letters, digits, '.', ':' or '-' (starting with a letter or digit) "
    "that holds no path, endpoint, credential or model name"
)


def name_problem(name: object, *, definition: Any = None, ids: bool = True) -> str | None:
    """What is wrong with ``name`` (rules above), or ``None``; never quotes the name.

    ``ids=False`` skips the ID pattern (for registries of other things, e.g. probe tools) but
    still scans for sensitive shapes. ``definition`` adds the check against its private values.
    """
    if not isinstance(name, str):
        return f"is {type(name).__name__}, not text"
    if not name:
        return "is empty"
    if ids and not _ID_RE.match(name):
        if len(name) > 128:
            return f"is {len(name)} characters long (at most 128)"
        bad = next(
            (i for i, c in enumerate(name) if not (c.isascii() and (c.isalnum() or c in ".:-"))),
            None,
        )
        if bad is not None:
            return f"has a character outside A-Z a-z 0-9 . : - at character {bad}"
        return "does not start with a letter or digit"
    kinds = find_sensitive(name)
    if kinds:
        return f"looks like {' and '.join(SENSITIVE_KINDS[k] for k in kinds)}"
    if definition is not None:
        # here: the leak scan's module is large, and only a system's definition needs it
        from evalkit.safety.privacy import definition_values

        folded = name.casefold()
        if any(value.casefold() in folded for value in definition_values(definition)):
            return "contains a private value of the system's definition() (e.g. a model name)"
    return None


def safe_id(value: object) -> str | None:
    """``value`` if it is a well-formed ID that does not look sensitive (safe to print)."""
    if isinstance(value, str) and _ID_RE.match(value) and not find_sensitive(value):
        return value
    return None


def check_name(
    name: object, *, kind: str, where: str, definition: Any = None, ids: bool = True
) -> str:
    """``name`` if it is a safe name (rules above), else :class:`InputError` naming ``kind``
    and ``where`` (a position or field) but not the name."""
    problem = name_problem(name, definition=definition, ids=ids)
    if problem is not None:
        raise InputError(
            f"{where}: the {kind} name {problem}; expected {_ID_RULE}; rename it "
            "(the name is not shown here)"
        )
    return str(name)  # name_problem returned None: name is a str


def shown_name(name: object, *, kind: str, ids: bool = True) -> str:
    """``repr(name)`` when it is a safe name, else ``"<kind> name (not shown: ...)"``."""
    problem = name_problem(name, ids=ids)
    if problem is None:
        return repr(name)
    return f"the {kind} name given (not shown: it {problem})"
