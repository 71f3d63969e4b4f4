"""The leak scan: does an artifact contain any text of the fixture or any private provider value?

What counts as private (:func:`private_texts`): every document and chunk title, chunk text,
query text and judgment span of the fixture; every string value inside the systems'
``definition()`` (model names, endpoints, ...) and each ``/``-separated part of one (the model of
``org/model``, the host of an endpoint), when at least ``MIN_PRIVATE_VALUE`` characters long
(:func:`definition_values`). Mapping keys of a definition are its field names, not private.

The matching rule. Both sides are NFKC-normalized, case-folded, HTML-unescaped, stripped of
invisible characters (soft hyphen, zero-width spaces and joiners, word joiner, BOM) and of
Markdown backslash escapes, and have white-space runs collapsed to one space, so escaping or
re-wrapping (:mod:`evalkit.render` does both) does not hide a leak.
A private string is reported when the artifact contains

- the whole string, if it has at least ``MIN_WHOLE_LATIN`` characters (``MIN_WHOLE_CJK`` for
  text that is mostly Chinese), or
- any of its aligned windows: the string cut into consecutive pieces of ``WINDOW_LATIN``
  characters (``WINDOW_CJK`` for Chinese). Any copied run of ``2 * window - 1`` or more
  characters necessarily contains one whole aligned window, so every leaked substring of 31+
  Latin or 11+ Chinese characters is caught, wherever it starts.

Shorter fragments (a number, a single word) are not identifying and are not reported.
Findings name object IDs only, never the text.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.errors import LeakError

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture

__all__ = [
    "PrivateText",
    "assert_no_leaks",
    "definition_values",
    "find_leaks",
    "private_texts",
]

MIN_WHOLE_LATIN = 8
MIN_WHOLE_CJK = 4
WINDOW_LATIN = 16
WINDOW_CJK = 6
MIN_PRIVATE_VALUE = 6

_BLOCK = 1 << 20  # haystack positions per block of the needle search
_SPACE_RE = re.compile(r"\s+")
_INVISIBLE_RE = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")
_MARKDOWN_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class PrivateText:
    """One private string and the ID of the object it belongs to (``"<kind>:<id>"``)."""

    object_id: str
    text: str


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    # Invisible characters (soft hyphen, zero-width space/joiners, word joiner, BOM) and
    # Markdown's backslash escapes (evalkit.render.markdown_text writes both) hide nothing.
    text = _MARKDOWN_ESCAPE_RE.sub(r"\1", _INVISIBLE_RE.sub("", text))
    return _SPACE_RE.sub(" ", text).strip()


def _is_mostly_cjk(text: str) -> bool:
    return len(_CJK_RE.findall(text)) * 2 >= len(text.replace(" ", ""))


def private_texts(
    fixture: Fixture, definitions: Mapping[str, Any] | None = None
) -> list[PrivateText]:
    """Every private string of ``fixture`` and of the systems' ``definitions``."""
    found: list[PrivateText] = []
    for document in fixture.documents:
        found.append(PrivateText(f"document:{document.id}", document.title))
    for chunk in fixture.chunks:
        found.append(PrivateText(f"chunk:{chunk.id}", chunk.title))
        found.append(PrivateText(f"chunk:{chunk.id}", chunk.text))
    for query in fixture.queries:
        found.append(PrivateText(f"query:{query.id}", query.text))
        for judgment in query.judgments:
            found.extend(PrivateText(f"query:{query.id}", span.text) for span in judgment.spans)
    for system, definition in (definitions or {}).items():
        found.extend(PrivateText(f"system:{system}", v) for v in definition_values(definition))
    return found


def definition_values(definition: Any) -> list[str]:
    """The private strings of one system definition: every string value and every
    ``/``-separated part of one (``org/model``), at least ``MIN_PRIVATE_VALUE`` characters long,
    in order. A URL (``scheme://host/path``) contributes itself and its host: its path segments
    are route names such as ``search``, not identifying on their own."""
    values: dict[str, None] = {}
    for value in _string_leaves(definition):
        if "://" in value:
            parts = [value, value.split("://", 1)[1].split("/", 1)[0]]
        else:
            parts = [value, *value.split("/")]
        for part in parts:
            if len(part) >= MIN_PRIVATE_VALUE:
                values.setdefault(part)
    return list(values)


def _string_leaves(value: Any, *, keys: bool = False) -> Iterator[str]:
    """Every string inside ``value`` (and, with ``keys``, every mapping key)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if keys:
                yield str(key)
            yield from _string_leaves(item, keys=keys)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _string_leaves(item, keys=keys)


def _needles(text: str) -> list[str]:
    """The normalized strings to search for ``text`` (rule above): the whole string when it is
    short, else its aligned windows (a whole long string contains every one of them)."""
    normalized = _normalize(text)
    cjk = _is_mostly_cjk(normalized)
    window = WINDOW_CJK if cjk else WINDOW_LATIN
    minimum = MIN_WHOLE_CJK if cjk else MIN_WHOLE_LATIN
    if len(normalized) < minimum:
        return []
    if len(normalized) <= 2 * window:
        return [normalized]
    return [normalized[i : i + window] for i in range(0, len(normalized) - window + 1, window)]


def artifact_text(text: str) -> str:
    """The searchable form of an artifact; JSON (e.g. a notebook) is decoded to its strings."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            return _normalize("\n".join(_string_leaves(decoded, keys=True)) + "\n" + text)
    return _normalize(text)


class _NeedleIndex:
    """Every needle keyed by its first ``_KEY_LONG`` (or, for shorter needles, ``_KEY_SHORT``)
    characters, so one pass over an artifact per key length finds every needle in it: the cost
    grows with the artifact's length, not with artifact length x number of needles."""

    _KEY_LONG = MIN_WHOLE_LATIN
    _KEY_SHORT = MIN_WHOLE_CJK

    def __init__(self, private: Iterable[PrivateText]) -> None:
        self.tables: dict[int, dict[str, list[tuple[str, str]]]] = {}
        for item in private:
            for needle in _needles(item.text):
                size = self._KEY_LONG if len(needle) >= self._KEY_LONG else self._KEY_SHORT
                table = self.tables.setdefault(size, {})
                table.setdefault(needle[:size], []).append((needle, item.object_id))

    def find(self, haystack: str) -> list[str]:
        """Sorted object IDs with a needle in ``haystack``: the set of the haystack's key-length
        substrings (taken in blocks, to bound memory) meets the keys, then only the rare
        matching keys are located with ``str.find`` and their needles verified."""
        leaked: set[str] = set()
        for size, table in self.tables.items():
            for block in range(0, max(len(haystack) - size + 1, 0), _BLOCK):
                stop = min(block + _BLOCK, len(haystack) - size + 1)
                grams = {haystack[i : i + size] for i in range(block, stop)}
                for key in grams.intersection(table):
                    self._verify(haystack, key, table[key], leaked)
        return sorted(leaked)

    @staticmethod
    def _verify(
        haystack: str, key: str, candidates: list[tuple[str, str]], leaked: set[str]
    ) -> None:
        start = haystack.find(key)
        while start != -1 and any(object_id not in leaked for _, object_id in candidates):
            leaked.update(
                object_id
                for needle, object_id in candidates
                if object_id not in leaked and haystack.startswith(needle, start)
            )
            start = haystack.find(key, start + 1)


def find_leaks(artifact: str, private: Iterable[PrivateText]) -> list[str]:
    """Sorted object IDs whose private text occurs in ``artifact`` (rule in module docstring)."""
    return _NeedleIndex(private).find(artifact_text(artifact))


def assert_no_leaks(artifacts: Mapping[str, str], private: Iterable[PrivateText]) -> None:
    """Raise ``LeakError`` naming the artifact names and leaked object IDs, if any leak."""
    index = _NeedleIndex(private)
    problems = {name: index.find(artifact_text(text)) for name, text in artifacts.items()}
    problems = {name: ids for name, ids in problems.items() if ids}
    if problems:
        ids = sorted({i for found in problems.values() for i in found})
        where = "; ".join(f"{name}: {', '.join(found[:10])}" for name, found in problems.items())
        raise LeakError(
            f"fixture text found in {len(problems)} artifact(s) ({where}); nothing was written. "
            "Run with redaction on, or remove the cell/field that prints raw text.",
            object_ids=ids,
        )
