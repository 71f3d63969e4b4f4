"""YAML reading with line numbers, shared by the fixture, gates and probe loaders.

Two readers:

- :func:`compose_and_load` (gates, probes): a file is parsed once into PyYAML's node tree, which
  keeps the line of every key and item, and the plain data is constructed from that tree.
  Nesting deeper than ``inputs.MAX_DEPTH`` is a syntax problem at the line where it happens
  (never a ``RecursionError``). Problems name ``file:line``, never the file's content.
- :func:`load_strict` (fixtures, which can hold millions of nodes): ``safe_load`` semantics that
  refuse duplicate mapping keys and aliases. The plain data is built straight from libyaml's
  event stream (PyYAML's C parser when ``yaml.__with_libyaml__``, its pure-Python parser
  otherwise), without a node tree or PyYAML's constructor. Anything that path does not handle
  itself (a syntax error, a repeated key, an anchor or alias, an explicit tag, a merge key, a
  non-string key, deep nesting, more than one document) sends the file back through the located
  PyYAML loader, so errors, their line and column, and the data are exactly those of
  ``yaml.load(text, Loader=StrictLoader)``. A flat list of one-line ``key: value`` mappings
  (what the dumpers write of a fixture's documents and chunks, and what a hand-written fixture
  holds with comment and empty lines between) is read without the parser, by lines, when
  every line and value is of a form whose YAML data is known (``_flat_items``); any other
  text takes the event path. A text of at least ``SPLIT_FROM`` characters (a
  fixture's list of 100,000 chunks is 38 MB) is cut before a line beginning ``- `` past its
  middle and the second part parsed by a forked process, the two lists then joined; when that
  cannot be vouched for, the text is parsed whole (:func:`split_items`).

:func:`dump_yaml` writes block-style YAML by feeding events straight to PyYAML's emitter (the C
emitter when available): the same bytes as ``yaml.dump`` with a representer that writes
multi-line strings as literal blocks and :class:`FlowList` inline. :func:`dump_flat_yaml`
writes a list of flat string mappings directly, every value double-quoted (an imported
fixture's documents and chunks).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from evalkit import forking
from evalkit.errors import InputFileError, Problem, YamlFileError
from evalkit.safety.inputs import MAX_DEPTH, load_json, read_input_bytes

if TYPE_CHECKING:
    from evalkit.forking import ForkedCall

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_SCALAR_CHARS",
    "MAX_SMALL_YAML_BYTES",
    "NO_WRAP",
    "SPLIT_FROM",
    "FlowList",
    "LiteralStrings",
    "SplitItems",
    "StrictLoader",
    "bounded_int",
    "compose_and_load",
    "dump_flat_yaml",
    "dump_yaml",
    "duplicate_keys",
    "load_strict",
    "load_strict_shallow",
    "read_yaml_file",
    "split_items",
    "syntax_problem",
    "yaml_error_place",
]

#: Longest integer literal read from YAML (Python refuses to convert more than 4300 digits,
#: with a ValueError PyYAML does not turn into a YAML error).
MAX_INT_DIGITS: Final = 1000


def bounded_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """PyYAML's int constructor, refusing literals longer than ``MAX_INT_DIGITS`` with a YAML
    error at the value (a syntax problem, never a ``ValueError`` traceback)."""
    if len(str(node.value)) > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of more than {MAX_INT_DIGITS} digits", node.start_mark
        )
    return int(yaml.SafeLoader.construct_yaml_int(loader, node))


#: Longest scalar (characters) in any YAML file evalkit reads: a chunk's text is a few
#: thousand characters; a whole book as one chunk is about 1 MB.
MAX_SCALAR_CHARS: Final = 10_000_000

#: Largest small YAML file (gates, probes, HTTP config), in bytes: they hold tens of lines.
MAX_SMALL_YAML_BYTES: Final = 10_000_000

_NO_ALIASES: Final = (
    "anchors and aliases (&name, *name) are not allowed (a few lines of them can stand for "
    "billions of values); write the value out"
)


class _DepthLimitedLoader(yaml.SafeLoader):
    """The safe loader, refusing anchors and aliases, collections nested deeper than
    ``MAX_DEPTH`` and scalars longer than ``MAX_SCALAR_CHARS``, where it meets them (so a
    billion-laughs file fails at its first anchor, in constant time)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            problem = None
            if self._depth > MAX_DEPTH:
                problem = f"nested more than {MAX_DEPTH} levels deep"
            elif isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                problem = _NO_ALIASES
            elif isinstance(event, ScalarEvent) and len(event.value) > MAX_SCALAR_CHARS:
                problem = f"a value longer than {MAX_SCALAR_CHARS} characters"
            if problem is not None:
                raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_DepthLimitedLoader.add_constructor("tag:yaml.org,2002:int", bounded_int)


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """``(node tree, data)`` of ``text`` with the safe loader (no anchors or aliases, depth and
    scalars bounded); raises ``yaml.YAMLError``."""
    loader = _DepthLimitedLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data


_QUOTED: Final = re.compile(r"'[^']*'|\"[^\"]*\"")


def yaml_error_place(error: yaml.YAMLError) -> tuple[yaml.Mark | None, str]:
    """(mark, detail) of a YAML error: where to point and what went wrong, no file text.

    An unclosed quote, bracket or block runs to the end of the file; it is reported where it
    was opened (PyYAML's ``context_mark``), not at the end. PyYAML quotes parts of the input
    (characters, tags) in its messages: they are replaced by ``'…'``.
    """
    problem = str(getattr(error, "problem", None) or "syntax error")
    problem = problem.replace("'<stream end>'", "the end of the file")
    context = str(getattr(error, "context", None) or "")
    mark = getattr(error, "problem_mark", None)
    context_mark = getattr(error, "context_mark", None)
    detail = _QUOTED.sub("'…'", problem)
    if (
        context_mark is not None
        and context
        and (mark is None or (context_mark.line, context_mark.column) < (mark.line, mark.column))
    ):
        opened = _QUOTED.sub("'…'", context)
        for prefix in ("while scanning ", "while parsing "):
            opened = opened.removeprefix(prefix)
        if "end of stream" in problem or "end of the file" in problem:
            detail = f"{opened} starts here and is never closed (the file ends first)"
            mark = context_mark
        else:
            detail += f", in {opened} opened at line {context_mark.line + 1}"
    return mark or context_mark, detail


def syntax_problem(error: yaml.YAMLError, name: str) -> Problem:
    """The problem of a file that does not parse, at the line and column PyYAML reports."""
    mark, detail = yaml_error_place(error)
    if mark is None:
        return Problem(name, "", "", "is not valid YAML (syntax error); fix the syntax")
    return Problem(
        f"{name}:{mark.line + 1}",
        "",
        "",
        f"is not valid YAML ({detail}, column {mark.column + 1}); fix the syntax",
    )


def read_yaml_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_SMALL_YAML_BYTES) -> Any:
    """The data of a small YAML file (a config): a regular file of at most ``max_bytes``,
    UTF-8, one document without anchors, aliases or repeated keys, nested at most
    ``MAX_DEPTH`` levels. Raises :class:`YamlFileError`, never a parser's traceback."""
    try:
        text = read_input_bytes(path, max_bytes=max_bytes).decode("utf-8")
    except InputFileError as error:
        raise YamlFileError(error.reason) from None
    except UnicodeDecodeError as error:
        raise YamlFileError(f"is not UTF-8 (byte {error.start}); save it as UTF-8") from None
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError as error:
        mark, detail = yaml_error_place(error)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise YamlFileError(f"is not valid YAML ({where}{detail}); fix the syntax") from None
    for line, _ in duplicate_keys(node):
        raise YamlFileError(f"line {line}: repeats a mapping key; keep one")
    return data


def duplicate_keys(node: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """(1-based line, key) of every key repeated within one mapping, anywhere in the tree."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                yield key_node.start_mark.line + 1, key
            seen.add(key)
            yield from duplicate_keys(value_node)
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            yield from duplicate_keys(child)


# --- strict loading (fixtures) ---------------------------------------------------------------


def _strict_loader(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """``base`` (PyYAML's C or pure safe loader) refusing duplicate keys and aliases."""

    class _Strict(base):  # type: ignore[valid-type,misc]
        """Safe loader that refuses duplicate keys and aliases (which would hide or repeat
        data), with integer literals bounded by ``MAX_INT_DIGITS``."""

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            if isinstance(node, yaml.ScalarNode) and len(node.value) > MAX_SCALAR_CHARS:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"a value longer than {MAX_SCALAR_CHARS} characters",
                    node.start_mark,
                )
            if node in self.constructed_objects:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "this anchored value is reused by an alias (*name); aliases are not "
                    "allowed — write the value out",
                    node.start_mark,
                )
            return super().construct_object(node, deep=deep)

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[str] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.value in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, "repeats a mapping key; keep one", key_node.start_mark
                        )
                    seen.add(key_node.value)
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return mapping

    _Strict.add_constructor("tag:yaml.org,2002:int", bounded_int)
    _Strict.__name__ = _Strict.__qualname__ = f"Strict{base.__name__}"
    return _Strict


#: The located strict loader: PyYAML's C-parser safe loader when libyaml is installed.
StrictLoader: Final = _strict_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
_PURE_STRICT: Final = _strict_loader(yaml.SafeLoader)

_STR: Final = "tag:yaml.org,2002:str"
# Plain scalars that may resolve to another type, by first character ('' for the empty one).
_IMPLICIT: Final = StrictLoader.yaml_implicit_resolvers
# Tags a plain scalar may resolve to that the event path builds with PyYAML's own constructors;
# any other (merge ``<<``, value ``=``) goes through the located loader.
_BUILT_TAGS: Final = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null", "timestamp")
)
# The event path resolves plain scalars by first character, as PyYAML does when it has no
# wildcard or path resolvers (the safe loader has none).
_EVENT_PATH_SOUND: Final = None not in _IMPLICIT and not StrictLoader.yaml_path_resolvers
_NO_KEY: Final = object()
_SHORT: Final = 40


class _Located(Exception):
    """The event path met something only the located loader handles."""


def load_strict(text: str, *, events: bool = True, libyaml: bool | None = None) -> Any:
    """The data of the single YAML document ``text`` (None for an empty stream), as
    ``yaml.load(text, Loader=StrictLoader)`` gives it; raises ``yaml.YAMLError`` (a
    ``MarkedYAMLError`` with line and column for a syntax error, a repeated key, an alias or a
    refused tag) or ``RecursionError`` on very deep nesting, as that loader does.

    ``events=False`` uses the located loader for the whole file (what fixtures used before the
    event path; kept for the benchmark and as the tests' oracle). ``libyaml`` picks PyYAML's C
    parser (default: when installed) or its pure-Python one.
    """
    return load_strict_shallow(text, events=events, libyaml=libyaml)[0]


def _located(libyaml: bool | None) -> type[yaml.SafeLoader]:
    """The strict loader: on libyaml's C parser when it is installed (and not refused)."""
    use_c = yaml.__with_libyaml__ if libyaml is None else libyaml and yaml.__with_libyaml__
    return StrictLoader if use_c else _PURE_STRICT


def load_strict_shallow(
    text: str, *, events: bool = True, libyaml: bool | None = None, split: bool = True
) -> tuple[Any, bool]:
    """``(data, shallow)``: :func:`load_strict`'s data, and True when it is known to nest fewer
    than ``MAX_DEPTH`` levels (always when the event path built it), so a caller may skip its
    own depth check; False means unknown. ``split=False``: never in two processes (for a
    caller whose own split of ``text`` just failed: it would fail the same way)."""
    located = _located(libyaml)
    if events and _EVENT_PATH_SOUND:
        if split and len(text) >= SPLIT_FROM:
            halves = split_items(text, list, libyaml=libyaml)
            if halves is not None:
                rest = halves.rest()
                if rest is not None:
                    return [*halves.first, *rest], True
        try:
            return _events_data(text, located), True
        except (_Located, yaml.YAMLError, ValueError):
            pass
    return yaml.load(text, Loader=located), False  # a SafeLoader subclass


#: Characters from which :func:`load_strict` parses a top-level list in two processes.
SPLIT_FROM: Final = 4_000_000

PartT = TypeVar("PartT")


def _events_data(text: str, located: type[yaml.SafeLoader]) -> Any:
    flat = _flat_items(text)
    if flat is not None:
        return flat
    loader = located(text)
    try:
        return _build_from_events(loader)
    finally:
        loader.dispose()


class SplitItems(Generic[PartT]):
    """A top-level list parsed in two parts: :attr:`first`, the items before the cut, parsed
    here; :meth:`rest`, what a forked process made of the items after it."""

    def __init__(self, first: list[Any], call: ForkedCall[PartT]) -> None:
        self.first, self._call = first, call

    def rest(self) -> PartT | None:
        """The forked process's result (waiting for it), or None when its part did not parse
        to a list or its work failed: then parse the text whole."""
        try:
            return self._call.result()
        except Exception:  # the reason is the whole parse's to report
            return None

    def close(self) -> None:
        """End the forked process if it still runs; safe to call twice."""
        self._call.close()


def split_items(
    text: str, work: Callable[[list[Any]], PartT], *, libyaml: bool | None = None
) -> SplitItems[PartT] | None:
    """``text``'s top-level block list in two parts, the second parsed and given to ``work`` by
    a forked process (:func:`~evalkit.forking.can_fork_helpers`); None when that does not
    apply, and the caller then parses ``text`` whole (:func:`load_strict`), which reports any
    problem with its place.

    ``text`` is cut before a line that begins with ``- `` past its middle. Every line of a
    top-level item but its first is indented, except the lines of a quoted scalar or a flow
    collection that spans lines; a cut inside one of those leaves the first part unterminated,
    which then fails to parse. So when both parts parse, on the event path, to lists, they are
    the items before and after the cut: together, the data of ``text``. A first part that does
    not parse to a list gives None; a second one, ``rest() is None``.
    """
    located = _located(libyaml)
    cut = text.find("\n- ", len(text) // 2) + 1
    if not cut or not _EVENT_PATH_SOUND or not forking.can_fork_helpers():
        return None
    # Forked: the process has ``text`` and ``work`` already.
    call = forking.ForkedCall(_parse_rest, text, cut, located, work)
    try:
        first = _events_data(text[:cut], located)
    except (_Located, yaml.YAMLError, ValueError):
        first = None
    except BaseException:
        call.close()
        raise
    if not isinstance(first, list):
        call.close()
        return None
    return SplitItems(first, call)


def _parse_rest(
    text: str, cut: int, located: type[yaml.SafeLoader], work: Callable[[list[Any]], PartT]
) -> PartT:
    """In :func:`split_items`' forked process: ``work`` on the items of ``text[cut:]``."""
    items = _events_data(text[cut:], located)
    if not isinstance(items, list):
        raise _Located
    return work(items)


# One line of a flat list item: ``- key: value`` (its first) or ``  key: value``, a key far
# shorter than the 1024 characters YAML allows an implicit key; or a comment line (``#`` in
# the first column) or an empty line, whose groups are empty.
_FLAT_LINE: Final = re.compile(r"^(?:(- |  )([a-z_]{1,100}): ([^\n]*)|#[^\n]*|)\n", re.MULTILINE)
# Any of these characters (tab, CR, NEL, U+2028/9, BOM, controls, surrogates) leaves a text to
# the parser: in YAML they break lines, are refused, or are whitespace. (The complement of
# "\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff",
# written out: re compiles a class by visiting each of its BMP code points, 2,000 here, some
# 63,000 for the negated form, about 5 ms of every command that reads YAML.)
_FLAT_REFUSED: Final = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
# Characters that make a plain scalar's first one an indicator (or a quote) in YAML.
_FLAT_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
# A double-quoted scalar on one line whose escapes mean the same in JSON and YAML.
_FLAT_QUOTED: Final = re.compile(r'"(?:[^"\\]++|\\["\\ntr]|\\u(?![dD][89abAB])[0-9a-fA-F]{4})*+"')


def _flat_items(text: str) -> list[dict[str, str]] | None:
    """The data of ``text`` when it is a flat list of flat mappings written one field a line
    (``- key: value`` then ``  key: value``: what :func:`dump_yaml` and :func:`dump_flat_yaml`
    write of documents and chunks), read without the parser; None for any other text.

    Accepted: every line is such a line, an empty line or a comment line (``#`` in the first
    column: what a hand-written fixture puts before and between its items; YAML reads neither
    as part of a value, since a one-line value ends at its line break and a comment's column is
    left of the item's keys), with no tab or document marker and only the characters YAML
    reads as printable and not as line breaks; every key a lower-case
    name that resolves to a string, unique within its item; every value either a plain scalar
    that resolves to a string and whose text is its value (not empty, no indicator first, no
    ``": "``, ``" #"`` or ``":"`` / space at its end) or a double-quoted scalar whose only
    escapes are a backslash before ``\\``, ``"``, ``n``, ``t`` or ``r`` or a ``u`` and four hex
    digits outside the surrogates (read by ``json``, which gives what YAML gives for them), of at
    most ``MAX_SCALAR_CHARS`` characters. Such a text holds nothing else the strict loader
    refuses or builds differently, so the data is that of :func:`load_strict`; anything else is
    left to the parser, which reports problems at their line. About twice as fast as the event
    path, which is bound by PyYAML making a Python event object per scalar."""
    if not text.endswith("\n") or _FLAT_REFUSED.search(text):
        return None
    lines = _FLAT_LINE.findall(text)
    if len(lines) != text.count("\n"):
        return None  # some line is not a flat item's line (each match is a whole line)
    items: list[dict[str, str]] = []
    item: dict[str, str] = {}
    strings: dict[str, bool] = {}  # whether a short plain scalar resolves to a string
    implicit, indicators, quoted = _IMPLICIT, _FLAT_INDICATORS, _FLAT_QUOTED
    for start, key, written in lines:
        if not start:
            continue  # a comment or empty line
        if start == "- ":
            item = {}
            items.append(item)
        elif not items:
            return None  # an item's key line before any item
        if key in item or not written or len(written) > MAX_SCALAR_CHARS:
            return None
        value = written
        first = value[0]
        if first == '"':
            if not quoted.fullmatch(value):
                return None
            value = load_json(value) if "\\" in value else value[1:-1]
        elif (
            first in indicators
            or first == " "
            or value[-1] in " :"
            or ": " in value
            or " #" in value
        ):
            return None
        elif first in implicit:
            plain = strings.get(value)
            if plain is None:
                plain = _plain_is_str(value)
                if len(value) <= _SHORT:
                    strings[value] = plain
            if not plain:
                return None  # another type: the parser builds it
        if key not in strings:
            strings[key] = _plain_is_str(key)
        if not strings[key]:
            return None
        item[key] = value
    return items or None  # comments alone: the parser's (None)


def _build_from_events(loader: yaml.SafeLoader) -> Any:
    """Plain data from ``loader``'s event stream; raises ``_Located`` for anything else than
    untagged, unanchored scalars, sequences and mappings with distinct string keys, nested
    fewer than ``MAX_DEPTH - 1`` levels."""
    get: Callable[[], Any] = loader.get_event  # events of yaml.events
    constructors = loader.yaml_constructors
    get()  # StreamStartEvent
    event = get()
    if type(event) is StreamEndEvent:
        return None
    if type(event) is not DocumentStartEvent or event.version is not None or event.tags:
        raise _Located
    root: list[Any] = []
    top: Any = root
    is_map = False
    key: Any = _NO_KEY
    frames: list[tuple[Any, bool, Any]] = []
    tags: dict[str, str] = {}  # the tag of each short plain scalar met (keys repeat)
    # Locals, not globals, in the loop that runs once per event.
    scalar, mapping, sequence = ScalarEvent, MappingStartEvent, SequenceStartEvent
    mapping_end, sequence_end = MappingEndEvent, SequenceEndEvent
    implicit, no_key, short, str_tag = _IMPLICIT, _NO_KEY, _SHORT, _STR
    while True:
        event = get()
        kind = type(event)
        if kind is scalar:
            if event.anchor is not None or event.tag is not None:
                raise _Located
            value: Any = event.value
            if len(value) > MAX_SCALAR_CHARS:
                raise _Located  # the located loader refuses it at its line
            if event.implicit[0]:
                resolvers = implicit.get(value[:1])
                if resolvers:
                    tag = tags.get(value)
                    if tag is None:
                        tag = next((t for t, pattern in resolvers if pattern.match(value)), str_tag)
                        if len(value) <= short:
                            tags[value] = tag
                    if tag != str_tag:
                        if tag not in _BUILT_TAGS or (is_map and key is no_key):
                            raise _Located  # a merge key, or a key that is not a string
                        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark)
                        value = constructors[tag](loader, node)
        elif kind is mapping or kind is sequence:
            if (
                event.anchor is not None
                or event.tag is not None
                or (is_map and key is no_key)
                or len(frames) >= MAX_DEPTH - 1
            ):
                raise _Located
            frames.append((top, is_map, key))
            is_map = kind is mapping
            top = {} if is_map else []
            key = no_key
            continue
        elif kind is mapping_end or kind is sequence_end:
            value = top
            top, is_map, key = frames.pop()
        elif kind is DocumentEndEvent and not frames:
            break
        else:  # an alias
            raise _Located
        if not is_map:
            top.append(value)
        elif key is no_key:
            if value in top:
                raise _Located  # a repeated key: the located loader names its line
            key = value
        else:
            top[key] = value
            key = no_key
    if type(get()) is not StreamEndEvent:
        raise _Located  # a second document
    return root[0]


# --- dumping ---------------------------------------------------------------------------------


class FlowList(list[Any]):
    """A list :func:`dump_yaml` writes in flow style (``[zh, en]``)."""


_BaseDumper: Final[type[yaml.SafeDumper]] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SCALAR_TAGS: Final = {
    bool: "tag:yaml.org,2002:bool",
    int: "tag:yaml.org,2002:int",
    type(None): "tag:yaml.org,2002:null",
}
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"
#: Which strings :func:`dump_yaml` writes as literal blocks (``|``): ``"multi-line"``, every
#: string holding a line break (the emitter quotes one a block cannot hold verbatim, such as
#: one ending in a space, in double quotes); ``"fitting"``, those not ending in a space or a
#: tab (the emitter picks the others' quotes: single where it can); ``"none"``, no string
#: (``yaml.safe_dump``'s choice).
LiteralStrings = Literal["multi-line", "fitting", "none"]
_LITERAL: Final[dict[str, Callable[[str], bool]]] = {
    "multi-line": lambda text: "\n" in text,
    "fitting": lambda text: "\n" in text and not text.endswith((" ", "\t")),
    "none": lambda text: False,
}
#: :func:`dump_yaml`'s default line width: no line is folded.
NO_WRAP: Final = 1_000_000


class _Unsupported(Exception):
    """A value the event writer does not write itself (it goes through the representer)."""


def dump_yaml(
    data: object,
    *,
    events: bool = True,
    literal: LiteralStrings = "multi-line",
    width: int = NO_WRAP,
    libyaml: bool | None = None,
) -> str:
    """``data`` (dicts with string keys, lists, :class:`FlowList`, str, int, bool, None) as one
    block-style YAML document: keys in insertion order, strings holding a line break as literal
    blocks (``|``; ``literal``: which of them, :data:`LiteralStrings`), :class:`FlowList`
    inline, Unicode unescaped, no line wrapping (``width``: fold plain and quoted strings past
    that column, as ``yaml.dump`` does by default at 80). ``libyaml`` picks PyYAML's C emitter
    (default: when installed) or its pure-Python one; they fold long double-quoted strings at
    different places, so a file once written by one keeps its bytes only with the same one.

    ``events=False`` uses PyYAML's representer (``yaml.dump``), the slower path whose output the
    event path reproduces byte for byte; other value types always take it.
    """
    options: dict[str, Any] = {"allow_unicode": True, "width": width}
    use_c = yaml.__with_libyaml__ if libyaml is None else libyaml and yaml.__with_libyaml__
    if events:
        try:
            text: str = yaml.emit(
                _dump_events(data, set(), _LITERAL[literal]),
                Dumper=_BaseDumper if use_c else yaml.SafeDumper,
                **options,
            )
        except _Unsupported:
            pass
        else:
            return text
    dumped: str = yaml.dump(
        data,
        Dumper=_DUMPERS[literal, use_c],
        sort_keys=False,
        default_flow_style=False,
        **options,
    )
    return dumped


_YAML_ESCAPE: Final = re.compile(r"[\u2028\u2029\ufeff\ufffe\uffff]")


def dump_flat_yaml(items: Iterable[Mapping[str, str]]) -> str:
    """A YAML list of flat string mappings, every value double-quoted in JSON syntax (a form
    that reads back verbatim; characters YAML reads as line breaks or a reader may drop are
    ``\\u`` escapes), written directly: much faster than the emitter for the millions of
    strings of a large fixture's documents and chunks. Keys must be plain YAML keys (such as
    ``document_id``), values free of the control characters YAML refuses (all but tab and line
    breaks: an import replaces them by spaces first), and each mapping non-empty."""
    lines = []
    for item in items:
        prefix = "- "
        for key, value in item.items():
            quoted = json.dumps(value, ensure_ascii=_YAML_ESCAPE.search(value) is not None)
            lines.append(f"{prefix}{key}: {quoted}\n")
            prefix = "  "
    return "".join(lines)


def _dump_events(data: object, seen: set[int], literal: Callable[[str], bool]) -> Iterator[Event]:
    yield StreamStartEvent()
    yield DocumentStartEvent(explicit=None)
    yield from _value_events(data, seen, literal)
    yield DocumentEndEvent(explicit=None)
    yield StreamEndEvent()


def _plain_is_str(value: str) -> bool:
    """Whether ``value`` written plain reads back as a string (so it needs no quotes)."""
    resolvers = _IMPLICIT.get(value[:1])
    return not resolvers or not any(pattern.match(value) for _, pattern in resolvers)


def _value_events(value: object, seen: set[int], literal: Callable[[str], bool]) -> Iterator[Event]:
    """The events PyYAML's serializer emits for ``value`` (see ``Serializer.serialize_node``);
    ``literal(text)``: whether a string is asked for as a literal block."""
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        style = "|" if literal(text) else None
        yield ScalarEvent(None, _STR, (_plain_is_str(text), True), text, style=style)
    elif kind is bool:
        yield ScalarEvent(None, _SCALAR_TAGS[bool], (True, False), "true" if value else "false")
    elif kind is int:
        yield ScalarEvent(None, _SCALAR_TAGS[int], (True, False), str(value))
    elif value is None:
        yield ScalarEvent(None, _SCALAR_TAGS[type(None)], (True, False), "null")
    elif kind is dict or kind is list or kind is FlowList:
        if id(value) in seen:
            raise _Unsupported  # the representer writes a repeated object as an alias
        seen.add(id(value))
        if kind is dict:
            yield MappingStartEvent(None, _MAP, True, flow_style=False)
            for key, item in value.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise _Unsupported
                yield from _value_events(key, seen, literal)
                yield from _value_events(item, seen, literal)
            yield MappingEndEvent()
        else:
            yield SequenceStartEvent(None, _SEQ, True, flow_style=kind is FlowList)
            for item in value:  # type: ignore[attr-defined]
                yield from _value_events(item, seen, literal)
            yield SequenceEndEvent()
    else:
        raise _Unsupported


def _dumper(literal: Callable[[str], bool], base: type[yaml.SafeDumper]) -> type[yaml.SafeDumper]:
    """A dumper on ``base`` writing the strings ``literal`` names as literal blocks and
    :class:`FlowList` inline (what the event path reproduces)."""

    class _Dumper(base):  # type: ignore[valid-type,misc]
        """Readable block-style YAML: literal blocks, short lists inline."""

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        return dumper.represent_scalar(_STR, value, style="|" if literal(value) else None)

    def represent_flow(dumper: yaml.SafeDumper, value: FlowList) -> yaml.SequenceNode:
        return dumper.represent_sequence(_SEQ, value, flow_style=True)

    _Dumper.add_representer(str, represent_str)
    _Dumper.add_representer(FlowList, represent_flow)
    return _Dumper


_DUMPERS: Final = {
    (name, use_c): _dumper(rule, _BaseDumper if use_c else yaml.SafeDumper)
    for name, rule in _LITERAL.items()
    for use_c in (True, False)
}
