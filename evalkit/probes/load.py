"""Probe files: the strict schema and :func:`load_probes` (format in ``fixtures/probes/README.md``).

A probe directory holds ``*.yaml``/``*.yml`` files (other files such as ``README.md`` and
``baseline.json`` are not probe files). Each file holds a list of probes, or a single probe
mapping. Every problem of every file is collected and raised together as one
:class:`~evalkit.errors.ProbeError`, each line naming file:line, probe ID and field. A repeated
expected symbol is not a problem: it is dropped with a
:class:`~evalkit.errors.RepeatedSymbolWarning`.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from evalkit.errors import InputFileError, ProbeError, Problem, RepeatedSymbolWarning
from evalkit.registry import did_you_mean
from evalkit.safety.inputs import MAX_DEPTH, read_input_bytes
from evalkit.safety.yamlio import (
    MAX_SMALL_YAML_BYTES,
    compose_and_load,
    duplicate_keys,
    syntax_problem,
)

__all__ = ["ArgValue", "Expected", "Probe", "ProbeCall", "Scoring", "load_probes"]

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

NonEmptyStr = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


#: A tool argument: JSON-like data (str, bool, int, finite float, and lists and string-keyed
#: mappings of these, nested at most ``inputs.MAX_DEPTH`` deep); no null, no dates.
ArgValue = str | bool | int | float | list[Any] | dict[str, Any]
MAX_ARG_ITEMS: Final = 10_000  # scalars, lists and mappings in one probe's args


class ProbeCall(BaseModel):
    """``probe:`` which tool to call, with which keyword arguments (JSON-like values)."""

    model_config = _STRICT

    tool: NonEmptyStr
    args: dict[NonEmptyStr, Any] = Field(default_factory=dict)

    @field_validator("args")
    @classmethod
    def _json_like(cls, args: dict[str, Any]) -> dict[str, Any]:
        problem = _arg_problem(args)
        if problem is not None:
            raise ValueError(problem)
        return args


def _arg_problem(args: dict[str, Any]) -> str | None:
    """Why ``args`` is not JSON-like (naming the path, e.g. ``probe.args.paths[2]``), or None."""
    pending: list[tuple[str, object, int]] = [(key, value, 1) for key, value in args.items()]
    count = 0
    while pending:
        where, value, depth = pending.pop()
        count += 1
        if count > MAX_ARG_ITEMS:
            return f"holds more than {MAX_ARG_ITEMS} values; pass fewer arguments"
        if depth > MAX_DEPTH:
            root = re.split(r"[.\[]", where, maxsplit=1)[0]
            return f"{root} is nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where} must be a finite number, found {value!r}"
        if isinstance(value, str | bool | int | float):
            continue
        if isinstance(value, list):
            pending += [(f"{where}[{i}]", item, depth + 1) for i, item in enumerate(value)]
        elif isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str) or not key:
                    return (
                        f"{where} has a key that is not a non-empty string "
                        f"({type(key).__name__}); quote the key"
                    )
                pending.append((f"{where}.{key}", item, depth + 1))
        else:
            return (
                f"{where} must be a string, integer, number, boolean, list or mapping, "
                f"found {_yaml_type(value)}"
            )
    return None


def _yaml_type(value: object) -> str:
    return "null" if value is None else type(value).__name__


class Expected(BaseModel):
    """``expected:`` the symbols a correct answer holds (unordered, at least one; a repeat is
    dropped by :func:`load_probes` with a warning)."""

    model_config = _STRICT

    symbols: Annotated[list[NonEmptyStr], Field(min_length=1)]


class Scoring(BaseModel):
    """``scoring:`` the minimum recall and precision for the probe to pass (default 0.0)."""

    model_config = _STRICT

    recall_min: Fraction = 0.0
    precision_min: Fraction = 0.0


class Probe(BaseModel):
    """One probe: a tool call and the symbol set its answer is scored against."""

    model_config = _STRICT

    id: Annotated[str, StringConstraints(pattern=ID_PATTERN)]
    description: Annotated[str, StringConstraints(min_length=1, max_length=2000)] | None = None
    probe: ProbeCall
    expected: Expected
    scoring: Scoring = Field(default_factory=Scoring)


def load_probes(directory: str | Path, *, tools: Collection[str] | None = None) -> list[Probe]:
    """Read every probe file in ``directory`` and return the probes sorted by ID.

    With ``tools`` (e.g. ``target.tools.names()``), a probe naming another tool is a problem.
    Raises :class:`ProbeError` listing every problem: unreadable or invalid YAML, a file that is
    not a list of probe mappings, missing/unknown fields, wrong types, an ID that is malformed
    or used twice (also across files), an unknown tool, an empty expected symbol. A repeated
    expected symbol is dropped (the first occurrence is kept) with a
    :class:`~evalkit.errors.RepeatedSymbolWarning` naming file:line, probe ID and positions.
    """
    root = Path(directory)
    if not root.is_dir():
        raise ProbeError(
            f"probe directory {str(root)!r} does not exist or is not a directory; "
            "pass the directory holding the probe .yaml files"
        )
    # every *.yaml entry is read, so a directory or FIFO of that name is reported, not skipped
    files = sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml"))
    if not files:
        raise ProbeError(
            f"probe directory {str(root)!r} has no .yaml/.yml files; add probe files "
            "(format in fixtures/probes/README.md)"
        )
    problems: list[Problem] = []
    probes: list[Probe] = []
    first_seen: dict[str, str] = {}
    for path in files:
        for where, probe in _probes_in_file(path, problems, tools):
            if probe.id in first_seen:
                problems.append(
                    Problem(
                        where,
                        probe.id,
                        "id",
                        f"duplicate probe ID, first defined at {first_seen[probe.id]}; "
                        "probe IDs must be unique across all files",
                    )
                )
                continue
            first_seen[probe.id] = where
            probes.append(_without_repeats(where, probe))
    problems = list(dict.fromkeys(problems))  # a union type reports one error per member
    if problems:
        lines = [f"probe directory {str(root)!r} has {len(problems)} problem(s):"]
        lines += [f"  - {p}" for p in problems]
        raise ProbeError("\n".join(lines))
    return sorted(probes, key=lambda p: p.id)


def _probes_in_file(
    path: Path, problems: list[Problem], tools: Collection[str] | None
) -> Iterator[tuple[str, Probe]]:
    """Yield (``file:line``, probe) for every valid probe; append problems for the rest."""
    name = path.name
    try:
        text = read_input_bytes(path, max_bytes=MAX_SMALL_YAML_BYTES).decode("utf-8")
    except InputFileError as error:
        problems.append(Problem(name, "", "", error.reason))
        return
    except UnicodeDecodeError as error:
        problems.append(
            Problem(name, "", "", f"is not UTF-8 (byte {error.start}); save it as UTF-8")
        )
        return
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError as error:
        problems.append(syntax_problem(error, name))
        return
    if node is None or data is None or (isinstance(data, list) and not data):
        problems.append(Problem(name, "", "", "is empty; expected a list of probes"))
        return
    for line, key in duplicate_keys(node):
        problems.append(
            Problem(f"{name}:{line}", "", key, "this key appears twice in one mapping; keep one")
        )
    items: list[Any]
    item_nodes: list[yaml.Node]
    if isinstance(data, list) and isinstance(node, yaml.SequenceNode):
        items, item_nodes = data, list(node.value)
    elif isinstance(data, dict):
        items, item_nodes = [data], [node]
    else:
        problems.append(
            Problem(
                name,
                "",
                "",
                f"expected a list of probes (or one probe mapping), found {type(data).__name__}",
            )
        )
        return
    for position, (item, item_node) in enumerate(zip(items, item_nodes, strict=True), start=1):
        where = f"{name}:{item_node.start_mark.line + 1}"
        label = _label(item, position)
        if not isinstance(item, dict):
            problems.append(
                Problem(where, label, "", f"expected a probe mapping, found {type(item).__name__}")
            )
            continue
        try:
            probe = Probe.model_validate(item)
        except ValidationError as error:
            problems += [_problem(where, label, detail) for detail in error.errors()]
            probe = None
        call = item.get("probe")
        tool = call.get("tool") if isinstance(call, dict) else None
        if tools is not None and isinstance(tool, str) and tool and tool not in tools:
            known = sorted(tools)
            problems.append(
                Problem(
                    where,
                    label,
                    "probe.tool",
                    f"unknown tool {tool!r}; known tools: {', '.join(known) or 'none'}."
                    + did_you_mean(tool, known),
                )
            )
        if probe is not None:
            yield where, probe


def _label(item: object, position: int) -> str:
    """The probe's ID when it has a well-formed one, else its position in the file."""
    if isinstance(item, dict):
        probe_id = item.get("id")
        if isinstance(probe_id, str) and re.fullmatch(ID_PATTERN, probe_id):
            return probe_id
    return f"probe #{position}"


def _problem(where: str, label: str, detail: Any) -> Problem:
    """A pydantic error as a Problem that names the field and never quotes the value."""
    location = [str(part) for part in detail["loc"]]
    kind = detail["type"]
    found = type(detail.get("input")).__name__
    if kind == "missing":
        message = "required field is missing"
    elif kind == "extra_forbidden":
        message = "unknown field; remove it or fix its spelling (see fixtures/probes/README.md)"
    elif kind == "too_short" and location[-1:] == ["symbols"]:
        message = "must list at least one expected symbol"
    elif kind == "string_too_short":
        message = "must be a non-empty string"
    elif kind == "value_error":
        message = str(detail["msg"]).removeprefix("Value error, ")
    elif kind == "string_pattern_mismatch":
        message = f"must be an ID matching {ID_PATTERN}"
    elif kind in ("greater_than_equal", "less_than_equal"):
        message = "must be a number between 0.0 and 1.0"
    elif kind.endswith("_type") or kind in ("union_tag_invalid",):
        expected = detail["msg"].removeprefix("Input should be ")
        message = f"wrong type: expected {expected}, found {found}"
    else:
        message = f"{detail['msg']} (found {found})"
    if location and location[0] == "probe" and len(location) >= 3 and location[1] == "args":
        location = location[:3]  # the union's member names are noise: probe.args.<name>
        if kind.endswith("_type"):
            message = (
                "wrong type: must be a string, integer, number, boolean, list or mapping, "
                f"found {found}"
            )
    return Problem(where, label, ".".join(location), message)


def _without_repeats(where: str, probe: Probe) -> Probe:
    """``probe`` with each expected symbol once (first occurrences, in order), warning about
    every repeat by position (symbols are not quoted)."""
    seen: dict[str, int] = {}
    for index, symbol in enumerate(probe.expected.symbols):
        if symbol in seen:
            warnings.warn(
                f"{where} [{probe.id}] expected.symbols[{index}]: repeats "
                f"expected.symbols[{seen[symbol]}]; the repeat is ignored — list each symbol "
                "once",
                RepeatedSymbolWarning,
                stacklevel=4,
            )
        else:
            seen[symbol] = index
    if len(seen) == len(probe.expected.symbols):
        return probe
    expected = probe.expected.model_copy(update={"symbols": list(seen)})
    return probe.model_copy(update={"expected": expected})
