"""Tool declaration and checked dispatch (evalkit.probes.tools)."""

from __future__ import annotations

import pytest

from evalkit.errors import DispatchError
from evalkit.probes import Param, Tool, dispatch
from evalkit.registry import Registry


def lookup(name: str, limit: int = 3, fuzzy: bool = False, weight: float = 1.0) -> list[str]:
    """A tiny real tool: returns ``limit`` names derived from ``name``."""
    suffix = "~" if fuzzy else ""
    return [f"{name}.{i}{suffix}" for i in range(limit)] if weight > 0 else []


def exploding(name: str) -> list[str]:
    raise KeyError(f"secret-{name}")


def not_a_list(name: str) -> list[str]:
    return name  # type: ignore[return-value]  # deliberately wrong, to test the check


def mixed_list(name: str) -> list[str]:
    return [name, 3]  # type: ignore[list-item]  # deliberately wrong, to test the check


@pytest.fixture
def tools() -> Registry[Tool]:
    registry: Registry[Tool] = Registry("tool")
    registry.register("lookup", Tool.from_function(lookup, ordered=True))
    registry.register("exploding", Tool.from_function(exploding, ordered=False))
    registry.register("not_a_list", Tool.from_function(not_a_list, ordered=False))
    registry.register("mixed_list", Tool.from_function(mixed_list, ordered=False))
    return registry


def test_signature_is_declared_from_annotations() -> None:
    tool = Tool.from_function(lookup, ordered=True)
    assert tool.params == (
        Param("name", str, True),
        Param("limit", int, False),
        Param("fuzzy", bool, False),
        Param("weight", float, False),
    )
    assert tool.ordered is True


def test_dispatch_calls_the_tool_with_validated_arguments(tools: Registry[Tool]) -> None:
    result = dispatch(tools, "lookup", {"name": "a", "limit": 2, "fuzzy": True})
    assert result.symbols == ("a.0~", "a.1~")
    assert result.ordered is True


def test_int_is_accepted_for_a_float_parameter(tools: Registry[Tool]) -> None:
    assert dispatch(tools, "lookup", {"name": "a", "weight": 0}).symbols == ()


def test_unknown_tool_is_a_dispatch_error_with_suggestion(tools: Registry[Tool]) -> None:
    with pytest.raises(DispatchError, match=r"unknown tool 'lokup'.*Did you mean 'lookup'\?"):
        dispatch(tools, "lokup", {"name": "a"})


def test_missing_argument(tools: Registry[Tool]) -> None:
    with pytest.raises(DispatchError, match=r"tool 'lookup': missing argument\(s\) 'name'"):
        dispatch(tools, "lookup", {"limit": 2})


def test_unknown_argument(tools: Registry[Tool]) -> None:
    with pytest.raises(DispatchError, match=r"unknown argument\(s\) 'nme'.*\(name: str, limit"):
        dispatch(tools, "lookup", {"name": "a", "nme": "b"})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"name": 1}, "argument 'name' must be str, found int"),
        ({"name": "a", "limit": "2"}, "argument 'limit' must be int, found str"),
        ({"name": "a", "limit": True}, "argument 'limit' must be int, found bool"),
        ({"name": "a", "limit": 2.0}, "argument 'limit' must be int, found float"),
        ({"name": "a", "fuzzy": 1}, "argument 'fuzzy' must be bool, found int"),
        ({"name": "a", "weight": False}, "argument 'weight' must be float, found bool"),
    ],
)
def test_wrong_argument_type(tools: Registry[Tool], args: dict[str, object], message: str) -> None:
    with pytest.raises(DispatchError, match=message):
        dispatch(tools, "lookup", args)


def test_a_tool_that_raises_is_a_dispatch_error_without_its_message(
    tools: Registry[Tool],
) -> None:
    with pytest.raises(DispatchError, match="tool 'exploding' raised KeyError") as info:
        dispatch(tools, "exploding", {"name": "private-value"})
    assert "private-value" not in str(info.value)  # the argument is fixture text


def test_a_result_that_is_not_a_list_of_strings_is_a_dispatch_error(
    tools: Registry[Tool],
) -> None:
    with pytest.raises(DispatchError, match="returned str; expected a list of strings"):
        dispatch(tools, "not_a_list", {"name": "a"})
    with pytest.raises(DispatchError, match="returned a list holding non-strings"):
        dispatch(tools, "mixed_list", {"name": "a"})


def test_unsupported_parameter_declarations_are_refused() -> None:
    def untyped(name):  # type: ignore[no-untyped-def]
        return []

    def listy(names: tuple[str, ...]) -> list[str]:  # tuples are not JSON-like: refused
        return list(names)

    def star(*names: str) -> list[str]:
        return list(names)

    for function in (untyped, listy):
        with pytest.raises(TypeError, match=r"must be annotated str, int, float, bool, list\["):
            Tool.from_function(function, ordered=False)
    with pytest.raises(TypeError, match="must be a named parameter"):
        Tool.from_function(star, ordered=False)
