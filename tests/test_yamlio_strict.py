"""The event-stream YAML path (``load_strict``, ``dump_yaml``) against PyYAML's own loader and
representer, which the fixture loader and writer used before.

Oracles: ``yaml.load`` with the located strict loader (``load_strict(..., events=False)``, the
node-tree path with PyYAML's constructor), and ``yaml.dump`` with a representer defined here.
Every outcome is compared: the same data with the same types, or the same error with the same
message, line and column.
"""

from __future__ import annotations

import json
import math
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

import evalkit.fixtures.dump
from evalkit.fixtures import Fixture, dump_fixture, load_fixture
from evalkit.fixtures.generate import generate_fixture
from evalkit.safety.inputs import MAX_DEPTH
from evalkit.safety.yamlio import (
    FlowList,
    dump_flat_yaml,
    dump_yaml,
    load_strict,
    load_strict_shallow,
)


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type spelled out (``1 == True == 1.0`` in Python)."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _outcome(text: str, **options: Any) -> Any:
    try:
        return ("data", _typed(load_strict(text, **options)))
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        mark = getattr(error, "problem_mark", None)
        place = (mark.line, mark.column) if mark is not None else None
        return ("error", type(error).__name__, str(error), place)


def _assert_same(text: str) -> None:
    for libyaml in (True, False):
        expected = _outcome(text, events=False, libyaml=libyaml)
        assert _outcome(text, libyaml=libyaml) == expected, text


EDGE_CASES = [
    "",
    "---\n",
    "~\n",
    "- a\n- b\n",
    "a: 1\nb: [1, 2, {c: d}]\n",
    "- id: x\n  text: |\n    two\n    lines\n",
    "a: 1\na: 2\n",  # a repeated key
    "'1': a\n1: b\n",  # the same key text, a string and an int: repeated for the strict loader
    "1: a\n0x1: b\n",  # two spellings of one int key
    "true: a\nyes: b\n",
    "null: a\n~: b\n",
    "? [a, b]\n: c\n",  # a sequence as a key
    "? {a: b}\n: c\n",
    "- &a x\n- *a\n",  # an alias
    "- &a x\n- y\n",  # an anchor never used
    "a: &m {b: 1}\nc: *m\n",
    "<<: {a: 1}\nb: 2\n",  # a merge key
    "a: =\n",  # the value tag
    "=: a\n",
    "- !!str 1\n- !!int '2'\n- !!float 3\n",
    "- !!binary aGVsbG8=\n",
    "- !!python/object:os.system {}\n",
    "- !custom x\n",
    "- ! 12\n",
    "%YAML 1.1\n---\na: 1\n",
    "%TAG !e! tag:example.com,2000:\n---\n- !e!x 1\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "- 2024-01-01\n- 2024-01-01 10:00:00\n- 2001-12-14t21:59:43.10-05:00\n",
    "- 2024-02-30\n",  # not a date: PyYAML's own ValueError
    "- 0x1F\n- 0o17\n- 1_000\n- 1:30\n- -0b101\n- +12\n",
    "- .inf\n- -.Inf\n- .nan\n- 1e3\n- 1.5\n- 6.8523015e+5\n- 1_0.5\n",
    "- yes\n- No\n- on\n- OFF\n- y\n- n\n- true\n- False\n",
    "- " + "9" * 1001 + "\n",  # longer than MAX_INT_DIGITS
    "- " + "9" * 1000 + "\n",
    "a: [unclosed\n",
    "- id: doc\n\tlanguage: en\n",
    "a: 'unclosed\n",
    "a: b: c\n",
    "[" * (MAX_DEPTH - 3) + "]" * (MAX_DEPTH - 3) + "\n",
    "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n",
    "a:\n" + "".join("  " * i + "- \n" for i in range(1, 80)),
    "- \"quoted \\u00e9 \\x41\"\n- 'it''s'\n- plain # comment\n",
    "- >\n  folded\n  text\n- |-\n  kept\n",
    "{a: 1, b: [x, y], 'c d': ~}\n",
    "- \ufeffbom\n",
    "\ufeff- a\n",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_the_event_path_gives_what_pyyaml_gives(text: str) -> None:
    _assert_same(text)


def test_errors_keep_their_line_and_column() -> None:
    outcome = _outcome("- id: a\n  id: b\n")
    assert outcome[0] == "error"
    assert "repeats a mapping key" in outcome[2]
    assert outcome[3] == (1, 2)  # 0-based: line 2, column 3
    alias = _outcome("- &d {id: a}\n- *d\n")
    assert "alias" in alias[2]
    assert alias[3] == (0, 2)


# Scalars chosen to resolve to every implicit type, and strings that only look like them.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.sampled_from(["yes", "No", "~", "null", "", "1e3", "0x10", "1:20", "2024-01-01", "<<", "="]),
    st.text(alphabet=string.printable + "é渡\u0085\u2028", max_size=12),
)
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


@given(
    data,
    st.sampled_from([None, True, False]),
    st.sampled_from([None, "'", '"', "|"]),
    st.booleans(),
)
def test_dumped_data_loads_the_same_both_ways(
    value: Any, flow: bool | None, style: str | None, unicode: bool
) -> None:
    text = yaml.safe_dump(
        value, default_flow_style=flow, default_style=style, allow_unicode=unicode
    )
    _assert_same(text)


def test_the_event_path_vouches_for_depth_only_when_it_built_the_data() -> None:
    assert load_strict_shallow("a: [1, [2]]\n") == ({"a": [1, [2]]}, True)
    assert load_strict_shallow("a: 1\na: 2\n".replace("a: 2", "b: 2")) == ({"a": 1, "b": 2}, True)
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load_strict_shallow(deep)[1] is False  # deep nesting goes through the located loader


# --- dumping ---------------------------------------------------------------------------------


class _OracleDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The fixture writer's dumper before the event path (commit 75c3beb)."""


_OracleDumper.add_representer(
    str,
    lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|" if "\n" in v else None),
)
_OracleDumper.add_representer(
    FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True)
)


def _oracle_dump(value: Any) -> str:
    text: str = yaml.dump(
        value,
        Dumper=_OracleDumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1_000_000,
    )
    return text


dumpable = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(),
        st.sampled_from(["yes", "", "~", "1.5", "- a", "a: b", "#x", " lead", "trail ", "a\n"]),
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(FlowList)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(dumpable)
def test_dump_yaml_writes_the_bytes_the_representer_writes(value: Any) -> None:
    assert dump_yaml(value) == _oracle_dump(value)
    assert dump_yaml(value, events=False) == _oracle_dump(value)


def test_values_the_event_writer_does_not_handle_take_the_representer() -> None:
    shared = ["x"]
    for value in ({"a": shared, "b": shared}, {1: "int key"}, [1.5], ("a",), {"d": b"raw"}):
        try:
            expected = _oracle_dump(value)
        except yaml.YAMLError as error:
            with pytest.raises(type(error)):
                dump_yaml(value)
        else:
            assert dump_yaml(value) == expected


@pytest.mark.parametrize(
    "fixture",
    [
        generate_fixture(3, documents=30, chunks_per_document=3, queries=40),
        load_fixture(Path(__file__).parent.parent / "fixtures" / "synthetic-bilingual-v1"),
    ],
    ids=["generated", "synthetic-bilingual-v1"],
)
def test_dump_fixture_writes_the_same_bytes_as_before(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump_fixture(fixture, tmp_path / "events")
    monkeypatch.setattr(evalkit.fixtures.dump, "dump_yaml", _oracle_dump)
    dump_fixture(fixture, tmp_path / "representer")
    names = sorted(p.name for p in (tmp_path / "events").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "representer").iterdir())
    assert {"chunks.yaml", "queries.yaml"} <= set(names)
    for name in names:
        assert (tmp_path / "events" / name).read_bytes() == (
            tmp_path / "representer" / name
        ).read_bytes(), name
    assert load_fixture(tmp_path / "events") == fixture


# --- the import's forms (evalkit.fixtures.dump.StreamedFixture) ----------------------------------


class _FittingDumper(_OracleDumper):
    """The importer's own dumper before it wrote through yamlio (commit c081ef7): a literal
    block only when the string does not end in a space or a tab."""


_FittingDumper.add_representer(
    str,
    lambda d, v: d.represent_scalar(
        "tag:yaml.org,2002:str",
        v,
        style="|" if "\n" in v and not v.endswith((" ", "\t")) else None,
    ),
)


@given(dumpable)
def test_fitting_literal_blocks_are_the_import_dumpers_bytes(value: Any) -> None:
    expected = yaml.dump(
        value,
        Dumper=_FittingDumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1_000_000,
    )
    assert dump_yaml(value, literal="fitting") == expected
    assert dump_yaml(value, literal="fitting", events=False) == expected


@given(dumpable, st.sampled_from([20, 80]))
def test_no_literal_blocks_on_the_pure_emitter_are_safe_dumps_bytes(value: Any, width: int) -> None:
    if any(isinstance(v, FlowList) for v in _walk(value)):
        return  # safe_dump writes every list in block style
    expected = yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=width)
    assert dump_yaml(value, literal="none", width=width, libyaml=False) == expected
    assert dump_yaml(value, literal="none", width=width, libyaml=False, events=False) == expected


def _walk(value: Any) -> list[Any]:
    found = [value]
    if isinstance(value, dict):
        found += [x for v in value.values() for x in _walk(v)]
    elif isinstance(value, list):
        found += [x for v in value for x in _walk(v)]
    return found


# What an import writes: control characters other than tab and line breaks were replaced by
# spaces before (evalkit.importers.core).
_IMPORTED_TEXT = st.text(st.characters(exclude_categories=("Cc", "Cs")) | st.sampled_from("\t\n\r"))


@given(st.lists(st.dictionaries(st.sampled_from(["id", "text"]), _IMPORTED_TEXT, min_size=1)))
def test_flat_yaml_reads_back_verbatim(items: list[dict[str, str]]) -> None:
    text = dump_flat_yaml(items)
    assert (load_strict(text) if text else []) == items


# --- the flat reader (a list of one-line ``key: value`` mappings) ----------------------------

FLAT_CASES = [
    "- id: a\n  text: b\n- id: c\n",
    "- id: a\n  text: 'quoted'\n",
    '- id: a\n  text: "x \\" \\\\ \\n \\t \\r \\u00e9 \\u2028"\n',
    '- id: a\n  text: "\\ud83d\\ude00"\n',  # surrogate escapes: the parser's
    '- id: a\n  text: "\\x41 \\/ \\b"\n',  # escapes JSON lacks or reads otherwise
    '- id: a\n  text: "a" b\n',
    "- id: a\n  text: a: b\n",
    "- id: a\n  text: a:b c:\n",
    "- id: a\n  text: a #comment\n",
    "- id: a\n  text: C# and a#b\n",
    "- id: a\n  text: trailing \n",
    "- id: a\n  text: \n",
    "- id: a\n  id: b\n",  # a repeated key
    "- id: a\n  text: yes\n- id: 1\n",  # other types
    "- id: a\n  on: b\n",  # a key that is a boolean
    "- id: a\n  text: ~\n- id: 2024-01-01\n- id: .inf\n- id: <<\n- id: =\n",
    "- id: a\n  text: -dash\n- id: ?q\n- id: '!tag'\n- id: &x\n- id: '*y'\n- id: '%p'\n",
    "- id: a\n  text: [a, b]\n- id: '{c}'\n- id: '@a'\n- id: '`b'\n- id: '|'\n- id: '>'\n",
    "- id: a\n  text: ok [x] {y} a, b 'c' \"d\" !e &f *g %h @i `j |k >l\n",
    "- id: a\n  text: two\n    lines\n",
    "- id: a\n\n- id: b\n",
    "- id: a\n# comment\n- id: b\n",
    "# a header\n# of two lines\n\n- id: a\n  text: b\n\n# --- next ---\n- id: c\n",
    "- id: a\n# between keys\n  text: b\n\n  title: c\n",
    "- id: a\n#\n#- id: b\n#  text: c\n",
    "# only comments\n\n",
    "\n",
    "# a comment\n  text: an indented line first\n",
    "- id: a\n  text: b\n\n   more\n",  # a blank line, then the value goes on
    "- id: a\n  text: b\n # an indented comment\n",
    "- id: a\n  text: b\n  # an item's comment\n",
    "- id: a\n  text: b\n    # deeper\n",
    '- id: a\n# a comment holding: a key: and "quotes" and - dashes\n',
    "- id: a\n \n- id: b\n",  # a line of one space
    "---\n# c\n- id: a\n",
    "# c\n--- \n- id: a\n",
    "- id: a\n  text: tab\there\n",
    "- id: a\r\n  text: crlf\r\n",
    "- id: a\n  text: nel\x85here\n",
    "- id: a\n  text: ls\u2028here\n",
    "- id: a\n  text: bom\ufeffhere\n",
    "- id: a\n  text: nbsp\xa0 \u3000ideographic\u3000\n",
    "- id: a\n  text: 渡 é \U0001f600\n",
    "- id: a\n   text: three spaces\n",
    "- id: a\n  Text: upper\n",
    "- id: a\n  text: b",  # no final line break
    "---\n- id: a\n",
    "- id: a\n...\n",
    "- id: " + "x" * 100 + "\n",
    "- " + "k" * 1100 + ": long key\n",  # longer than YAML's implicit keys
    "- " + "k" * 100 + ": a key of 100 letters\n",
    "xx- id: a\n",  # a line that only ends like a flat one
    "- id: a\nxx- id: b\n",
]


@pytest.mark.parametrize("text", FLAT_CASES)
def test_the_flat_reader_gives_what_pyyaml_gives(text: str) -> None:
    _assert_same(text)


_FLAT_ALPHABET = string.printable + "é渡\u0085\u2028\xa0\U0001f600"
_flat_values = st.text(alphabet=_FLAT_ALPHABET, max_size=12) | st.sampled_from(
    ["yes", "~", "1e3", "2024-01-01", "<<", "=", "a: b", "a #b", "-a", '"q"', "'s'", "x:"]
)
_flat_keys = st.sampled_from(["id", "text", "title", "on", "y", "null", "document_id"])


@given(
    st.lists(st.dictionaries(_flat_keys, _flat_values, min_size=1, max_size=4), min_size=1),
    st.sampled_from(["plain", "quoted", "dumped", "commented"]),
)
def test_flat_texts_load_the_same_both_ways(items: list[dict[str, str]], form: str) -> None:
    if form == "dumped":
        text = dump_yaml(items)
    else:
        quote = (lambda v: json.dumps(v, ensure_ascii=False)) if form == "quoted" else str
        # commented: a comment or an empty line before each item and between its keys
        between = ("# note: a - b\n", "\n") if form == "commented" else ("",)
        text = "".join(
            f"{between[(n + i) % len(between)]}{'- ' if i == 0 else '  '}{key}: {quote(value)}\n"
            for n, item in enumerate(items)
            for i, (key, value) in enumerate(item.items())
        )
    _assert_same(text)
    _assert_same(dump_flat_yaml(items))
