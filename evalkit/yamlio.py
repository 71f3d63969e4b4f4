"""YAML reading with line numbers, shared by the gates and probe loaders.

Files are parsed twice: once into PyYAML's node tree, which keeps the line of every key and item,
and once into plain data. Problems name ``file:line``, never the file's content.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from evalkit.errors import Problem

__all__ = ["compose_and_load", "duplicate_keys", "syntax_problem"]


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """``(node tree, data)`` of ``text`` with the safe loader; raises ``yaml.YAMLError``."""
    return yaml.compose(text, Loader=yaml.SafeLoader), yaml.safe_load(text)


def syntax_problem(error: yaml.YAMLError, name: str) -> Problem:
    """The problem of a file that does not parse, at the line and column PyYAML reports."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return Problem(name, "", "", "is not valid YAML (syntax error); fix the syntax")
    return Problem(
        f"{name}:{mark.line + 1}",
        "",
        "",
        f"is not valid YAML (syntax error, column {mark.column + 1}); fix the syntax",
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
