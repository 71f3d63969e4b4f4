"""YAML reading with line numbers, shared by the gates and probe loaders.

A file is parsed once into PyYAML's node tree, which keeps the line of every key and item, and
the plain data is constructed from that tree. Nesting deeper than ``inputs.MAX_DEPTH`` is a
syntax problem at the line where it happens (never a ``RecursionError``). Problems name
``file:line``, never the file's content.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import yaml

from evalkit.errors import Problem
from evalkit.inputs import MAX_DEPTH

__all__ = [
    "MAX_INT_DIGITS",
    "bounded_int",
    "compose_and_load",
    "duplicate_keys",
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


class _DepthLimitedLoader(yaml.SafeLoader):
    """The safe loader, refusing collections nested deeper than ``MAX_DEPTH``."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"nested more than {MAX_DEPTH} levels deep",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_DepthLimitedLoader.add_constructor("tag:yaml.org,2002:int", bounded_int)


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """``(node tree, data)`` of ``text`` with the safe loader; raises ``yaml.YAMLError``."""
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
