"""Tests for evalkit.safety.canonical: canonical JSON text and content hashes."""

from __future__ import annotations

import datetime
import json
import math
import random
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from evalkit.errors import InputError
from evalkit.safety.canonical import canonical_hash, canonical_json, string_table_hash

# --- golden values, written out by hand -------------------------------------------------------


def test_golden_pretty_text() -> None:
    obj = {"b": 1, "a": [1.0, -0.0, "é", (2, 0.5)], "c": None, "d": True}
    # Hand-written: keys sorted, 2-space indent, ", "/": " separators, UTF-8 kept, 1.0 stays a
    # float, -0.0 becomes 0.0, the tuple becomes an array, one trailing newline.
    expected = (
        "{\n"
        '  "a": [\n'
        "    1.0,\n"
        "    0.0,\n"
        '    "é",\n'
        "    [\n"
        "      2,\n"
        "      0.5\n"
        "    ]\n"
        "  ],\n"
        '  "b": 1,\n'
        '  "c": null,\n'
        '  "d": true\n'
        "}\n"
    )
    assert canonical_json(obj) == expected


def test_golden_compact_text() -> None:
    obj = {"z": {"y": [0.1, 1e-07, 3], "x": False}, "Z": "中文", "a b": 2}
    # Hand-written: code-point key order ("Z" < "a b" < "z"), no spaces, shortest float repr.
    expected = '{"Z":"中文","a b":2,"z":{"x":false,"y":[0.1,1e-07,3]}}\n'
    assert canonical_json(obj, indent=None) == expected


def test_golden_hash() -> None:
    # printf '{"a":1}\n' | sha256sum  (GNU coreutils 9.1)
    expected = "sha256:e346432021b04179518d9614f3560ccd71354a4ee101ddcb893d6959a9d6301c"
    assert canonical_hash({"a": 1}) == expected


def test_empty_containers() -> None:
    # Hand-written: json.dumps writes empty containers without inner newlines.
    assert canonical_json({}) == "{}\n"
    assert canonical_json([], indent=None) == "[]\n"
    assert canonical_json({"a": []}) == '{\n  "a": []\n}\n'


# --- determinism ------------------------------------------------------------------------------


def test_key_order_does_not_matter() -> None:
    first = {"b": {"y": 2, "x": 1}, "a": [1, 2]}
    second = {"a": [1, 2], "b": {"x": 1, "y": 2}}
    assert canonical_json(first) == canonical_json(second)
    assert canonical_json(first, indent=None) == canonical_json(second, indent=None)
    assert canonical_hash(first) == canonical_hash(second)


def test_equal_data_gives_identical_bytes() -> None:
    def build() -> dict[str, Any]:
        return {"measures": {"nDCG@10": 0.123456789, "RR@10": 1 / 3}, "ids": ["q2", "q1"]}

    first = canonical_json(build()).encode("utf-8")
    second = canonical_json(build()).encode("utf-8")
    assert first == second


def test_hash_differs_for_different_data() -> None:
    assert canonical_hash({"a": 1}) != canonical_hash({"a": 1.0})
    assert canonical_hash(["a", "b"]) != canonical_hash(["b", "a"])


def test_hash_shape() -> None:
    digest = canonical_hash([1, 2, 3])
    assert digest.startswith("sha256:")
    assert len(digest) == len("sha256:") + 64
    assert all(c in "0123456789abcdef" for c in digest.removeprefix("sha256:"))


def test_input_is_not_modified() -> None:
    obj = {"b": [3, 2, 1], "a": (1, {"y": -0.0})}
    snapshot = repr(obj)
    canonical_json(obj)
    canonical_hash(obj)
    assert repr(obj) == snapshot


# --- numbers ----------------------------------------------------------------------------------


def test_negative_zero_is_written_as_zero() -> None:
    assert canonical_json(-0.0, indent=None) == "0.0\n"
    assert canonical_json(np.float64(-0.0), indent=None) == "0.0\n"
    assert canonical_hash({"v": -0.0}) == canonical_hash({"v": 0.0})


def test_float_formatting() -> None:
    # Hand-written: Python's shortest round-trip repr of each value.
    assert canonical_json([1.0, 0.1, 2.5e-10, 1e16, 123456789.125], indent=None) == (
        "[1.0,0.1,2.5e-10,1e+16,123456789.125]\n"
    )


@pytest.mark.parametrize(
    ("value", "found"),
    [(float("nan"), "NaN"), (float("inf"), "Infinity"), (-math.inf, "Infinity")],
)
def test_non_finite_refused_with_path(value: float, found: str) -> None:
    obj = {"systems": {"lexical": {"measures": {"RR@10": value, "nDCG@10": 0.5}}}}
    with pytest.raises(InputError) as info:
        canonical_json(obj)
    message = str(info.value)
    assert '$.systems.lexical.measures["RR@10"]' in message
    assert found in message


def test_non_finite_in_list_and_array_names_the_index() -> None:
    with pytest.raises(InputError, match=r"\$\.values\[2\]"):
        canonical_json({"values": [1.0, 2.0, float("nan")]})
    with pytest.raises(InputError, match=r"\$\.a\[1\]\[0\]"):
        canonical_json({"a": np.array([[1.0, 2.0], [np.inf, 3.0]])})
    with pytest.raises(InputError, match=r"\$\[0\]"):
        canonical_hash([np.float32("nan")])


@pytest.mark.parametrize("missing", [pd.NA, pd.NaT])
def test_pandas_missing_values_refused(missing: object) -> None:
    with pytest.raises(InputError, match=r"\$\.report\.value") as info:
        canonical_json({"report": {"value": missing}})
    assert "missing value" in str(info.value)


def test_none_is_null() -> None:
    assert canonical_json({"a": None}, indent=None) == '{"a":null}\n'


# --- numpy and containers ---------------------------------------------------------------------


def test_numpy_scalars_and_arrays() -> None:
    obj = {
        "i": np.int64(3),
        "u": np.uint8(255),
        "f": np.float64(0.25),
        "h": np.float32(0.5),
        "b": np.bool_(True),
        "s": np.str_("q1"),
        "arr": np.array([[1, 2], [3, 4]], dtype=np.int32),
        "farr": np.array([0.5, 1.0]),
        "zero_d": np.array(7),
        "objarr": np.array(["d1", np.int64(2)], dtype=object),
    }
    # Hand-written expectation: plain JSON of the same values.
    expected = (
        '{"arr":[[1,2],[3,4]],"b":true,"f":0.25,"farr":[0.5,1.0],"h":0.5,"i":3,'
        '"objarr":["d1",2],"s":"q1","u":255,"zero_d":7}\n'
    )
    assert canonical_json(obj, indent=None) == expected


def test_float32_is_widened_exactly() -> None:
    # float32(0.1) is 13421773 / 2**27 = 0.100000001490116119384765625; shortest float64 repr
    # of that value is 0.10000000149011612.
    assert canonical_json(np.float32(0.1), indent=None) == "0.10000000149011612\n"


def test_nested_tuples_become_arrays() -> None:
    assert canonical_json(((1, (2, (3,))), ()), indent=None) == "[[1,[2,[3]]],[]]\n"


def test_bool_is_not_an_int() -> None:
    assert canonical_json([True, False, 1, 0], indent=None) == "[true,false,1,0]\n"


def test_str_subclass_keys_and_values_are_plain_text() -> None:
    class Weird(str):
        def __str__(self) -> str:
            return "other"

    assert canonical_json({Weird("k"): Weird("v")}, indent=None) == '{"k":"v"}\n'


# --- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [1, 1.5, None, ("a",), True])
def test_non_string_keys_refused(key: object) -> None:
    with pytest.raises(InputError, match=r"expected str keys") as info:
        canonical_json({"outer": {key: 1}})
    assert "$.outer" in str(info.value)


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ({"b", "a"}, "sorted list"),
        (frozenset({1}), "sorted list"),
        (b"raw", "decode"),
        (pd.Series([1, 2]), "to_dict"),
        (pd.DataFrame({"a": [1]}), "to_dict"),
        (datetime.date(2024, 1, 1), "convert"),
        (np.datetime64("2024-01-01"), "convert"),
        (1 + 2j, "convert"),
        (object(), "convert"),
    ],
)
def test_unknown_types_refused(value: object, fix: str) -> None:
    with pytest.raises(InputError, match=r"unsupported type") as info:
        canonical_json({"x": [value]})
    message = str(info.value)
    assert "$.x[0]" in message
    assert fix in message


def test_error_never_quotes_the_value() -> None:
    secret = "private chunk text 42"
    with pytest.raises(InputError) as info:
        canonical_json({"q1": {secret.encode()}})
    assert secret not in str(info.value)
    with pytest.raises(InputError) as info:
        canonical_json({"q1": [secret, float("nan")]})
    assert secret not in str(info.value)


def test_lone_surrogate_refused() -> None:
    with pytest.raises(InputError, match=r"\$\.a\[0\].*not valid Unicode"):
        canonical_json({"a": ["ok\udc80"]})
    with pytest.raises(InputError, match=r"a key.*not valid Unicode"):
        canonical_hash({"\ud800": 1})


def test_cycle_refused() -> None:
    looped: list[object] = [1]
    looped.append(looped)
    with pytest.raises(InputError, match=r"\$\[1\] contains itself"):
        canonical_json(looped)


def test_shared_subobject_is_not_a_cycle() -> None:
    shared = [1, 2]
    assert canonical_json({"a": shared, "b": shared}, indent=None) == '{"a":[1,2],"b":[1,2]}\n'


@pytest.mark.parametrize("indent", [-1, True, 1.5, "2"])
def test_bad_indent_refused(indent: Any) -> None:
    with pytest.raises(InputError, match="indent"):
        canonical_json({"a": 1}, indent=indent)


def test_indent_zero_and_four() -> None:
    # Hand-written: json's indent semantics.
    assert canonical_json([1], indent=0) == "[\n1\n]\n"
    assert canonical_json({"a": 1}, indent=4) == '{\n    "a": 1\n}\n'


# --- properties -------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_round_trip(value: object) -> None:
    for indent in (None, 2):
        text = canonical_json(value, indent=indent)
        assert text.endswith("\n")
        assert not text.endswith("\n\n")
        assert json.loads(text) == value


def _shuffled(value: object, rng: random.Random) -> object:
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: _shuffled(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@settings(max_examples=150, deadline=None)
@given(json_values, st.randoms(use_true_random=False))
def test_hash_stable_under_key_permutation(value: object, rng: random.Random) -> None:
    permuted = _shuffled(value, rng)
    assert canonical_hash(permuted) == canonical_hash(value)
    assert canonical_json(permuted) == canonical_json(value)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_plain_data_written_directly_as_converted(value: object) -> None:
    # A list of plain data is written by json directly; the same data in a tuple is converted
    # value by value first: the two texts must be the same.
    for indent in (None, 2):
        assert canonical_json([value], indent=indent) == canonical_json((value,), indent=indent)


def test_plain_data_with_negative_zero_or_coerced_keys_is_converted() -> None:
    assert canonical_json({"a": [-0.0, "-0.05"]}, indent=None) == '{"a":[0.0,"-0.05"]}\n'
    with pytest.raises(InputError, match=r"expected str keys"):
        canonical_json({"a": {1: "x"}})


def _rows(tables: dict[str, dict[str, list[Any]]]) -> dict[str, list[dict[str, Any]]]:
    return {
        name: [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]
        for name, columns in tables.items()
    }


_names = st.text(max_size=6)
_cells = st.none() | st.text(max_size=10)


@st.composite
def _string_tables(draw: st.DrawFn) -> dict[str, dict[str, list[Any]]]:
    tables: dict[str, dict[str, list[Any]]] = {}
    for name in draw(st.lists(_names, max_size=3, unique=True)):
        rows = draw(st.integers(0, 4))
        columns = draw(st.lists(_names, min_size=1, max_size=4, unique=True))
        tables[name] = {c: draw(st.lists(_cells, min_size=rows, max_size=rows)) for c in columns}
    return tables


@settings(max_examples=200, deadline=None)
@given(_string_tables())
def test_string_table_hash_is_the_hash_of_the_rows(tables: dict[str, dict[str, list[Any]]]) -> None:
    assert string_table_hash(tables) == canonical_hash(_rows(tables))


def test_string_table_hash_of_other_values_goes_through_the_rows() -> None:
    tables: dict[str, dict[str, list[Any]]] = {"a%s": {"x%": [1, None], "y": ["\u2028", "q"]}}
    assert string_table_hash(tables) == canonical_hash(_rows(tables))
    with pytest.raises(InputError, match=r"not valid Unicode"):
        string_table_hash({"t": {"x": ["\ud800"]}})
    with pytest.raises(ValueError, match=r"differ in length"):
        string_table_hash({"t": {"x": ["a"], "y": []}})
