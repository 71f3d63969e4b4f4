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

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from evalkit.errors import DispatchError, UnknownNameError
from evalkit.registry import Registry

__all__ = ["Param", "Tool", "ToolResult", "dispatch"]

ArgType = type[str] | type[int] | type[float] | type[bool]
_ARG_TYPES: tuple[ArgType, ...] = (str, int, float, bool)
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One declared argument: name, type (str, int, float or bool) and whether it is required."""

    name: str
    type: ArgType
    required: bool = True

    def accepts(self, value: object) -> bool:
        """True when ``value`` has this parameter's type (bool is not an int; int is a float)."""
        if self.type is float:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if self.type is int:
            return isinstance(value, int) and not isinstance(value, bool)
        return isinstance(value, self.type)


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
        ``str``, ``int``, ``float`` or ``bool``; parameters with a default are optional."""
        hints = typing.get_type_hints(function)
        params = []
        for parameter in inspect.signature(function).parameters.values():
            annotation = hints.get(parameter.name)
            if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                raise TypeError(f"tool parameter {parameter.name!r} must be a named parameter")
            if annotation not in _ARG_TYPES:
                raise TypeError(
                    f"tool parameter {parameter.name!r} must be annotated str, int, float or bool"
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
                f"tool {name!r}: argument {key!r} must be {param.type.__name__}, "
                f"found {type(value).__name__}; fix probe.args.{key}"
            )
    try:
        returned = tool.function(**args)
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
    parts = [f"{p.name}: {p.type.__name__}" + ("" if p.required else " = ...") for p in tool.params]
    return "(" + ", ".join(parts) + ")"
