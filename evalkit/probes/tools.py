"""Probe tools: named functions with a declared argument signature, and checked dispatch.

A tool is registered under a name in a :class:`~evalkit.registry.Registry` of :class:`Tool`;
the runner only ever calls :func:`dispatch`, so a new tool is added by registering it::

    tools: Registry[Tool] = Registry("tool")
    tools.register("find_symbol", Tool.from_function(index.find_symbol, ordered=False))

:func:`dispatch` checks the arguments against the signature (missing, unknown, wrong type)
before calling, and turns every way a probe can fail to run into a :class:`DispatchError`
whose message names the tool and argument names only, never argument values or the text of
the tool's own exception (probe arguments are fixture text).
"""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.errors import DispatchError, UnknownNameError
from evalkit.registry import Registry

__all__ = ["Param", "Tool", "ToolResult", "dispatch"]

_NO_DEFAULT = inspect.Parameter.empty


def _accepts(annotation: object, value: object) -> bool:
    """True when ``value`` matches ``annotation``: str, int, float, bool, ``list[X]``,
    ``dict[str, X]`` (bare ``list``/``dict`` take any JSON-like items), or ``Any``/``object``.
    bool is not an int; an int is a float."""
    if annotation is Any or annotation is object:
        return True
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation in (str, bool):
        return isinstance(value, annotation)
    origin = typing.get_origin(annotation) or annotation
    items = typing.get_args(annotation)
    if origin is list:
        return isinstance(value, list) and (
            not items or all(_accepts(items[0], item) for item in value)
        )
    if origin is dict:
        return isinstance(value, dict) and (
            not items or all(_accepts(items[1], item) for item in value.values())
        )
    return False


def _supported(annotation: object) -> bool:
    if annotation in (str, int, float, bool, list, dict, Any, object):
        return True
    origin, items = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(items) == 1:
        return _supported(items[0])
    if origin is dict and len(items) == 2 and items[0] is str:
        return _supported(items[1])
    return False


def _type_name(annotation: object) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


@dataclass(frozen=True)
class Param:
    """One declared argument: name, type (str, int, float, bool, ``list[...]`` or
    ``dict[str, ...]`` of these) and whether it is required."""

    name: str
    type: object
    required: bool = True

    def accepts(self, value: object) -> bool:
        """True when ``value`` has this parameter's type (bool is not an int; int is a float)."""
        return _accepts(self.type, value)


@dataclass(frozen=True)
class Tool:
    """A callable returning symbol names, its declared parameters, and whether its result is
    a ranking (``ordered=True``: RR and nDCG are computed over it) or a set."""

    function: Callable[..., Sequence[str]]
    params: tuple[Param, ...]
    ordered: bool

    @classmethod
    def from_function(cls, function: Callable[..., Sequence[str]], *, ordered: bool) -> Tool:
        """Declare a tool from a type-annotated function: each parameter must be annotated
        ``str``, ``int``, ``float``, ``bool``, or ``list[X]`` / ``dict[str, X]`` of these (also
        nested); parameters with a default are optional."""
        hints = typing.get_type_hints(function)
        params = []
        for parameter in inspect.signature(function).parameters.values():
            annotation = hints.get(parameter.name)
            if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                raise TypeError(f"tool parameter {parameter.name!r} must be a named parameter")
            if not _supported(annotation):
                raise TypeError(
                    f"tool parameter {parameter.name!r} must be annotated str, int, float, bool, "
                    "list[...] or dict[str, ...]"
                )
            required = parameter.default is _NO_DEFAULT
            params.append(Param(parameter.name, annotation, required))
        return cls(function, tuple(params), ordered)


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: symbol names in the tool's order (duplicates kept)."""

    symbols: tuple[str, ...]
    ordered: bool


def dispatch(tools: Registry[Tool], name: str, args: Mapping[str, object]) -> ToolResult:
    """Validate ``args`` against the tool's signature, call it, and check what it returned.

    Raises :class:`DispatchError` for an unknown tool (with a did-you-mean), a missing,
    unknown or wrongly typed argument, a tool that raised, or a result that is not a list of
    strings.
    """
    try:
        tool = tools.get(name)
    except UnknownNameError as error:
        raise DispatchError(str(error)) from None
    declared = {p.name: p for p in tool.params}
    unknown = sorted(set(args) - set(declared))
    if unknown:
        raise DispatchError(
            f"tool {name!r}: unknown argument(s) {', '.join(map(repr, unknown))}; "
            f"it takes {_signature(tool)}; remove or rename them in probe.args"
        )
    missing = [p.name for p in tool.params if p.required and p.name not in args]
    if missing:
        raise DispatchError(
            f"tool {name!r}: missing argument(s) {', '.join(map(repr, missing))}; "
            f"it takes {_signature(tool)}; add them to probe.args"
        )
    for key, value in args.items():
        param = declared[key]
        if not param.accepts(value):
            raise DispatchError(
                f"tool {name!r}: argument {key!r} must be {_type_name(param.type)}, "
                f"found {type(value).__name__}; fix probe.args.{key}"
            )
    try:
        returned = tool.function(**copy.deepcopy(dict(args)))  # a tool cannot edit the probe
    except Exception as error:  # a probe that cannot run is reported, not raised through
        raise DispatchError(
            f"tool {name!r} raised {type(error).__name__}; call the tool directly with the "
            "probe's arguments to see its message"
        ) from error
    if isinstance(returned, str | bytes) or not isinstance(returned, Sequence):
        raise DispatchError(
            f"tool {name!r} returned {type(returned).__name__}; expected a list of strings"
        )
    if not all(isinstance(item, str) for item in returned):
        raise DispatchError(f"tool {name!r} returned a list holding non-strings")
    return ToolResult(tuple(returned), tool.ordered)


def _signature(tool: Tool) -> str:
    parts = [
        f"{p.name}: {_type_name(p.type)}" + ("" if p.required else " = ...") for p in tool.params
    ]
    return "(" + ", ".join(parts) + ")"
