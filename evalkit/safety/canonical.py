"""Canonical JSON text and content hashes for reports, baselines and fingerprints.

Rules (two calls on equal data give byte-identical text, whatever the process or platform):

- Object keys are sorted by Unicode code point (Python ``str`` order) and must be ``str``
  (``numpy.str_`` and other ``str`` subclasses count as their plain text); any other key type is
  refused, so ``{1: ...}`` and ``{"1": ...}`` can never silently collide.
- Text is UTF-8 (``ensure_ascii=False``); a string that is not valid Unicode (a lone surrogate)
  is refused, because it cannot be encoded.
- Floats use Python's shortest round-trip ``repr``: ``0.1`` -> ``0.1``, ``1.0`` stays ``1.0``
  (a float never turns into an integer), ``-0.0`` is written ``0.0``. NaN, +/-Infinity,
  ``pandas.NA`` and ``pandas.NaT`` are refused: a value in a report must exist. ``None`` is an
  explicit ``null`` and is kept. ``numpy.float32``/``float16`` are widened exactly to float64.
- ``bool`` and ``numpy.bool_`` -> ``true``/``false``; ``int`` and numpy integers -> integers.
- Tuples, lists and numpy arrays -> JSON arrays (in order); mappings -> JSON objects.
  Sets (unordered), bytes, dates, DataFrames/Series and every other type are refused with the
  type name and the fix (convert to a sorted list, a string, ``.to_dict()`` ...).
- Every refusal is an :class:`~evalkit.errors.InputError` naming the JSON path of the value,
  e.g. ``$.systems.lexical.measures["RR@10"]``; the value itself is never quoted.
- ``indent=2`` (default) pretty-prints with ``", "``/``": "`` separators; ``indent=None`` is
  compact (``","``/``":"``). The text always ends with exactly one newline.

This is deliberately not RFC 8785 (JCS): JCS writes ``1.0`` as ``1`` and sorts keys by UTF-16 code
unit; evalkit keeps floats recognisable as floats.

:func:`canonical_hash` is ``"sha256:" + hexdigest`` of the UTF-8 bytes of the compact canonical
text, trailing newline included, i.e. ``sha256sum`` of a file holding
``canonical_json(obj, indent=None)``. :func:`string_table_hash` gives the same digest for
tables of string columns (a fixture's documents and chunks) without building their rows.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Final, cast

import numpy as np
import pandas as pd

from evalkit.errors import InputError

__all__ = [
    "HASH_HEX_DIGITS",
    "canonical_hash",
    "canonical_json",
    "string_table_hash",
    "text_hash",
]

HASH_HEX_DIGITS: Final = 12
"""How many hex digits of a SHA-256 :func:`text_hash` keeps: the short hash shown for a text."""

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def canonical_json(obj: object, *, indent: int | None = 2) -> str:
    """Canonical JSON text of ``obj`` (rules in the module docstring), ending with one newline.

    Raises :class:`InputError` for NaN/Infinity/NA, non-string keys, unknown types, cycles and
    invalid Unicode, naming the JSON path of the offending value.
    """
    if indent is not None and (isinstance(indent, bool) or not isinstance(indent, int)):
        raise InputError(
            f"canonical_json: indent must be None or a non-negative int, "
            f"found {type(indent).__name__}; pass indent=None (compact) or e.g. indent=2"
        )
    if indent is not None and indent < 0:
        raise InputError(
            f"canonical_json: indent must be None or a non-negative int, found {indent}; "
            "pass indent=None (compact) or e.g. indent=2"
        )
    separators = (",", ":") if indent is None else (",", ": ")
    text = _plain_json_text(obj, indent, separators)
    if text is None:
        text = _dumps(_to_json_value(obj, "$", set()), indent, separators)
    return text + "\n"


def _dumps(plain: object, indent: int | None, separators: tuple[str, str]) -> str:
    """The canonical text of plain JSON data: sorted keys, UTF-8 kept, no NaN."""
    return json.dumps(
        plain,
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=separators,
    )


def _plain_json_text(obj: object, indent: int | None, separators: tuple[str, str]) -> str | None:
    """``obj``'s canonical text written by ``json`` directly (C code), when ``obj`` is already
    plain JSON data (dicts with ``str`` keys, lists, ``str``, ``int``, finite ``float``, ``bool``,
    ``None``) with no ``-0.0`` and no lone surrogate; None otherwise, and the caller converts it
    with :func:`_to_json_value`, which refuses what has no canonical form with its JSON path.

    The check is exact: the text read back must equal ``obj`` (a tuple, a non-``str`` key or a
    numpy value does not, or does not serialize at all), the text must hold no ``-0.0`` (written
    ``0.0`` by the rules) and must encode as UTF-8. Such data converts to itself, so the text is
    the one the conversion gives, about twice as fast for large data (a corpus hash)."""
    try:
        text = _dumps(obj, indent, separators)
    except (TypeError, ValueError, RecursionError):  # other types, NaN, cycles, mixed keys
        return None
    if "-0.0" in text or (not text.isascii() and not _encodes(text)):
        return None
    try:
        same = bool(json.loads(text) == obj)
    except (TypeError, ValueError, RecursionError):  # an __eq__ of the data's own
        return None
    return text if same else None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def canonical_hash(obj: object) -> str:
    """``"sha256:<64 hex digits>"`` of the compact canonical JSON of ``obj`` (UTF-8 bytes)."""
    text = canonical_json(obj, indent=None)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def string_table_hash(tables: Mapping[str, Mapping[str, Sequence[str | None]]]) -> str:
    """``canonical_hash({name: rows})`` of tables given as columns (``{name: {column: values}}``,
    the columns of a table of equal length; ``{}``, no rows), where each row is the mapping
    ``{column: value}``: the same digest, computed column by column and fed to SHA-256 table by
    table, without building a row's dict or checking the text by reading it back.

    Each value is written by ``json``'s own string encoder (``"null"`` for None) into a row
    template of the sorted, encoded column names, which is the text ``json.dumps`` writes for
    the row with the canonical options. A name or value that is not a plain ``str`` (or None,
    for a value), or a string that is not valid Unicode, sends the whole input through
    :func:`canonical_hash` on the rows, which gives the same digest or refuses with its path.
    Raises ValueError for columns of unequal length.
    """
    digest = hashlib.sha256(b"{")
    try:
        if not all(type(name) is str for name in tables):
            raise _NotStrings
        for position, name in enumerate(sorted(tables)):
            head = ("," if position else "") + encode_basestring(name) + ":["
            digest.update((head + _string_rows(tables[name]) + "]").encode("utf-8"))
    except (_NotStrings, UnicodeEncodeError):
        return canonical_hash({name: _rows(columns) for name, columns in tables.items()})
    digest.update(b"}\n")
    return "sha256:" + digest.hexdigest()


def _rows(columns: Mapping[str, Sequence[str | None]]) -> list[dict[str, str | None]]:
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


class _NotStrings(Exception):
    """A table :func:`string_table_hash` does not write itself."""


def _string_rows(columns: Mapping[str, Sequence[str | None]]) -> str:
    """The compact canonical text of the rows of ``columns``, comma-separated."""
    if not all(type(name) is str for name in columns):
        raise _NotStrings
    names = sorted(columns)
    if not names:
        return ""
    values = [columns[name] for name in names]
    if len({len(column) for column in values}) != 1:
        raise ValueError("string_table_hash: the columns of a table differ in length")
    encoded = []
    for column in values:
        kinds = set(map(type, column))
        if kinds <= {str}:
            encoded.append(list(map(encode_basestring, cast("Sequence[str]", column))))
        elif kinds <= {str, type(None)}:
            encoded.append(
                ["null" if value is None else encode_basestring(value) for value in column]
            )
        else:
            raise _NotStrings
    template = (
        "{" + ",".join(encode_basestring(name).replace("%", "%%") + ":%s" for name in names) + "}"
    )
    return ",".join(map(template.__mod__, zip(*encoded, strict=True)))


def text_hash(text: str) -> str:
    """The first ``HASH_HEX_DIGITS`` hex digits of the SHA-256 of ``text`` (UTF-8; a lone
    surrogate, which an ID from a JSON file may hold, is hashed as its code unit)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_DIGITS]


def _key_path(path: str, key: str) -> str:
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _plain_str(value: str, path: str) -> str:
    text = str.__str__(value)  # a plain str, whatever __str__ a subclass defines
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"canonical_json: the string at {path} is not valid Unicode (lone surrogate at "
            f"character {error.start}); expected text that encodes as UTF-8; fix the producer "
            "of this value"
        ) from None
    return text


def _to_json_value(obj: object, path: str, open_containers: set[int]) -> JsonValue:
    """Convert ``obj`` to plain JSON types, refusing anything that has no canonical form."""
    if obj is None:
        return None
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return _finite_float(float(obj), path)
    if isinstance(obj, str):
        return _plain_str(obj, path)
    if obj is pd.NA or obj is pd.NaT:
        raise InputError(
            f"canonical_json: missing value (pandas {type(obj).__name__}) at {path}; "
            "a report value must exist: drop the entry or fill it before writing"
        )
    if isinstance(obj, Mapping | list | tuple | np.ndarray):
        if id(obj) in open_containers:
            raise InputError(
                f"canonical_json: the container at {path} contains itself; "
                "expected a tree of values, found a cycle"
            )
        open_containers.add(id(obj))
        try:
            if isinstance(obj, Mapping):
                return _mapping_to_json(obj, path, open_containers)
            items = obj.tolist() if isinstance(obj, np.ndarray) else obj
            if not isinstance(items, list | tuple):  # a 0-d array gives one scalar
                return _to_json_value(items, path, open_containers)
            return [
                _to_json_value(item, f"{path}[{index}]", open_containers)
                for index, item in enumerate(items)
            ]
        finally:
            open_containers.discard(id(obj))
    raise InputError(
        f"canonical_json: unsupported type {type(obj).__module__}.{type(obj).__qualname__} at "
        f"{path}; expected None, bool, int, float, str, list, tuple, dict or a numpy "
        f"scalar/array; {_fix_for(obj)}"
    )


def _mapping_to_json(
    obj: Mapping[object, object], path: str, open_containers: set[int]
) -> dict[str, JsonValue]:
    result: dict[str, JsonValue] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise InputError(
                f"canonical_json: object key of type {type(key).__name__} in {path}; "
                "expected str keys only; convert the keys to strings (IDs are strings)"
            )
        text_key = _plain_str(key, f"{path} (a key)")
        result[text_key] = _to_json_value(value, _key_path(path, text_key), open_containers)
    return result


def _finite_float(value: float, path: str) -> float:
    if math.isnan(value) or math.isinf(value):
        found = "NaN" if math.isnan(value) else "Infinity"
        raise InputError(
            f"canonical_json: non-finite number ({found}) at {path}; a report value must be "
            "finite: drop the entry, or fix the computation that produced it"
        )
    return 0.0 if value == 0.0 else value  # -0.0 == 0.0: write both as 0.0


def _fix_for(obj: object) -> str:
    if isinstance(obj, set | frozenset):
        return "convert the set to a sorted list"
    if isinstance(obj, bytes | bytearray | memoryview):
        return "decode the bytes, or store their hash"
    if isinstance(obj, pd.DataFrame | pd.Series):
        return "convert with .to_dict() or .tolist() first"
    return "convert the value to one of the supported types first"
