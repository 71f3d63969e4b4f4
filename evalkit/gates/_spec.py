"""The ``gates.yaml`` schema: its pydantic models, and :func:`load_gates`.

``gates.yaml`` (schema ``evalkit.gates/1``, documented in ``fixtures/README.md``) holds three
kinds of gate, all checked against a report dict of schema ``evalkit.report/1``
(:func:`evalkit.gates.check_gates`):

- ``absolute``: a bound on one system's mean of one measure, overall or in one language
  (``min`` -> ``actual >= min``, ``max`` -> ``actual <= max``; exactly one of them).
- ``relative``: ``system`` may be at most ``max_drop`` worse than ``reference`` on a measure.
- ``abstention``: a bound on one system's abstention over every confidence threshold
  (:func:`evalkit.stats.abstention`, computed from the report's ``confidence``), overall or
  in one ``language``: an operating point (``max_no_answer_fp`` with ``max_no_result``: at
  the lowest ``NoResult`` with ``NoAnswerFP <= max_no_answer_fp``, ``NoResult <=
  max_no_result``), ``min_auc`` (the ROC AUC of confidence separating answerable from
  no-answer queries) and/or ``max_auc_drop`` (the AUC may fall at most that far below the
  baseline's, on the queries both have: needs the ``baseline:`` section).
- ``baseline``: no measure of the named systems may be more than its tolerance worse than in
  the committed baseline, overall and (``per_language``) in each language; optionally at most
  ``max_new_failures`` queries per system may fail that did not fail in the baseline.

Tolerances (baseline gates). A :class:`Tolerance` allows a worsening of ``absolute`` (in the
measure's units) and/or ``relative`` (a fraction of the baseline value); with both, the
smaller allowance applies. ``tolerance`` is the default of every measure (a bare number means
``{absolute: number}``), ``tolerances`` overrides it per measure, keyed by a measure name
(``RR``: every cutoff and parameter) or an exact measure (``RR@10``, which wins over ``RR``).
Without ``tolerance`` the default is :data:`DEFAULT_TOLERANCE`: ``absolute 0.02`` and
``relative 0.10``. These were chosen a priori, not fitted to any fixture: 0.02 is the old
fixed tolerance (a regression a reader notices in a two-decimal table), and the relative 10%
keeps a gate alive on a measure whose baseline is near zero (0.02 below a baseline of 0.0199
is a negative threshold that nothing can fail).

Ranges. :func:`~evalkit.measures.names.measure_range` gives the values a measure can take
(``[0, 1]`` for rates and averages, ``[0, inf)`` for counts, unbounded for ``utility`` and
``yaap``). An absolute gate whose bound is outside the range, or at the worst end of it
(``min: 0`` on ``R@10``, ``max: 1`` on ``NoAnswerFP``), could never fail (or never pass) and is
refused when the file is loaded.

:func:`load_gates` validates the file strictly and lists every problem with its line, the
gate's ID (or position) and the field.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from evalkit.errors import FixtureError, InputFileError, Problem
from evalkit.fixtures.schema import ID_PATTERN, LANGUAGE_PATTERN
from evalkit.measures import parse_measure
from evalkit.measures.names import MEASURE_NAMES, SUMMARY_MEASURE_NAMES, measure_range
from evalkit.results import ALL_LANGUAGES
from evalkit.safety.inputs import read_input_bytes
from evalkit.safety.names import name_problem, safe_id
from evalkit.safety.output import shown_path
from evalkit.safety.yamlio import (
    MAX_SMALL_YAML_BYTES,
    compose_and_load,
    duplicate_keys,
    syntax_problem,
)

__all__ = [
    "DEFAULT_TOLERANCE",
    "GATES_SCHEMA",
    "AbsoluteGate",
    "AbstentionGate",
    "BaselineGate",
    "Gates",
    "RelativeGate",
    "Tolerance",
    "abstention_gate_ids",
    "load_gates",
]

GATES_SCHEMA: Final = "evalkit.gates/1"


def _canonical_measure(name: str) -> str:
    measure = parse_measure(name)
    if measure.name in SUMMARY_MEASURE_NAMES:
        raise ValueError(
            f"{measure.name} summarizes a system's abstention over its queries; bound it with "
            "an abstention: gate (min_auc, max_no_answer_fp with max_no_result, max_auc_drop)"
        )
    return str(measure)


# --- the gates file ---------------------------------------------------------------------------


def _safe_name(value: str) -> str:
    """Gate IDs and system names are IDs that reach reports: no path/endpoint/secret shape."""
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"{problem}; rename it (the value is not shown here)")
    return value


GateId = Annotated[str, Field(pattern=ID_PATTERN), AfterValidator(_safe_name)]
SystemName = Annotated[str, Field(pattern=ID_PATTERN), AfterValidator(_safe_name)]
Language = Annotated[str, Field(pattern=LANGUAGE_PATTERN, max_length=35)]
Bound = Annotated[float, Field(allow_inf_nan=False)]
Drop = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, hide_input_in_errors=True)


class _MeasureGate(_Model):
    id: GateId | None = None
    system: SystemName
    measure: str
    language: Language = ALL_LANGUAGES

    @field_validator("measure")
    @classmethod
    def _known_measure(cls, value: str) -> str:
        return _canonical_measure(value)


class AbsoluteGate(_MeasureGate):
    """``system``'s mean ``measure`` (in ``language``) must be >= ``min`` or <= ``max``."""

    min: Bound | None = None
    max: Bound | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> AbsoluteGate:
        if (self.min is None) == (self.max is None):
            raise ValueError("give exactly one of min or max")
        return self

    def bound(self) -> tuple[str, float]:
        """``(">=", min)`` or ``("<=", max)``."""
        if self.min is not None:
            return ">=", self.min
        return "<=", self.max if self.max is not None else math.inf


class RelativeGate(_MeasureGate):
    """``system`` may be at most ``max_drop`` worse than ``reference`` on ``measure``."""

    reference: SystemName
    max_drop: Drop

    @model_validator(mode="after")
    def _two_systems(self) -> RelativeGate:
        if self.system == self.reference:
            raise ValueError("system and reference must be different systems")
        return self


Rate = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class AbstentionGate(_Model):
    """``system``'s abstention over its queries (``language``: all, or one language's): an
    operating point, a minimum AUC and/or a largest AUC drop against the baseline.

    ``max_no_answer_fp`` and ``max_no_result`` go together: the operating point at the target
    ``NoAnswerFP <= max_no_answer_fp`` must have ``NoResult <= max_no_result``. ``min_auc``:
    the AUC must be ``>= min_auc``. ``max_auc_drop``: the AUC must be at least the
    baseline's AUC (on the queries both have) minus ``max_auc_drop``; it needs the gates'
    ``baseline:`` section."""

    id: GateId | None = None
    system: SystemName
    language: Language = ALL_LANGUAGES
    max_no_answer_fp: Rate | None = None
    max_no_result: Rate | None = None
    min_auc: Rate | None = None
    max_auc_drop: Rate | None = None

    @model_validator(mode="after")
    def _a_bound(self) -> AbstentionGate:
        if (self.max_no_answer_fp is None) != (self.max_no_result is None):
            raise ValueError("give max_no_answer_fp and max_no_result together")
        if self.max_no_result is None and self.min_auc is None and self.max_auc_drop is None:
            raise ValueError(
                "give max_no_answer_fp with max_no_result, min_auc, max_auc_drop, or several"
            )
        return self


class Tolerance(_Model):
    """How much worse than its baseline value a measure may get: ``absolute`` (measure units)
    and/or ``relative`` (a fraction of the baseline value); with both the smaller applies."""

    absolute: Drop | None = None
    relative: Drop | None = None

    @model_validator(mode="after")
    def _some_allowance(self) -> Tolerance:
        if self.absolute is None and self.relative is None:
            raise ValueError("give absolute, relative or both")
        return self

    def allowance(self, baseline: float) -> float:
        """The allowed worsening from a baseline value ``baseline`` (>= 0)."""
        allowed = [
            *([] if self.absolute is None else [self.absolute]),
            *([] if self.relative is None else [self.relative * abs(baseline)]),
        ]
        return min(allowed)

    def describe(self) -> str:
        """``"0.02"``, ``"10%"`` or ``"min(0.02, 10%)"``: for notes and summaries."""
        parts = [
            *([] if self.absolute is None else [f"{self.absolute:g}"]),
            *([] if self.relative is None else [f"{self.relative * 100:g}%"]),
        ]
        return parts[0] if len(parts) == 1 else f"min({', '.join(parts)})"


DEFAULT_TOLERANCE: Final = Tolerance(absolute=0.02, relative=0.10)
"""The baseline tolerance of every measure when ``tolerance`` is not given (module docstring)."""


def _tolerance_value(value: object) -> object:
    """A bare number is an absolute tolerance (the format before tolerances per measure)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"absolute": float(value)}
    return value


class BaselineGate(_Model):
    """No measure of ``systems`` may be more than its tolerance worse than in the baseline."""

    path: Annotated[str, Field(min_length=1, max_length=255)] = "baseline.json"
    systems: tuple[SystemName, ...] | Literal["all"] = "all"
    measures: tuple[str, ...] | Literal["all"] = "all"
    tolerance: Tolerance = DEFAULT_TOLERANCE
    tolerances: dict[str, Tolerance] = Field(default_factory=dict)
    per_language: bool = True
    max_new_failures: Annotated[int, Field(ge=0)] | None = None

    @field_validator("tolerance", mode="before")
    @classmethod
    def _bare_number(cls, value: object) -> object:
        return _tolerance_value(value)

    @field_validator("tolerances", mode="before")
    @classmethod
    def _bare_numbers(cls, value: object) -> object:
        if isinstance(value, dict):
            return {key: _tolerance_value(item) for key, item in value.items()}
        return value

    @field_validator("tolerances")
    @classmethod
    def _known_tolerance_keys(cls, value: dict[str, Tolerance]) -> dict[str, Tolerance]:
        keyed: dict[str, Tolerance] = {}
        for key, tolerance in value.items():
            name = key if key in MEASURE_NAMES else _canonical_measure(key)
            if name in keyed:
                raise ValueError(f"tolerance for {name} is given twice; keep one")
            keyed[name] = tolerance
        return keyed

    def tolerance_for(self, measure: str) -> Tolerance:
        """The tolerance of ``measure`` (canonical): its exact key, its name's, or the default."""
        name = measure.split("(", 1)[0].split("@", 1)[0]
        return self.tolerances.get(measure) or self.tolerances.get(name) or self.tolerance

    @field_validator("systems", "measures", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    @field_validator("path")
    @classmethod
    def _relative_path(cls, value: str) -> str:
        parts = value.split("/")
        if value.startswith("/") or any(c in value for c in "\\:\x00") or ".." in parts:
            raise ValueError(
                "must be a path relative to the gates file's directory, with '/' separators, "
                "no '..', no drive or URL scheme, e.g. baseline.json"
            )
        return value

    @field_validator("measures")
    @classmethod
    def _known_measures(cls, value: tuple[str, ...] | str) -> tuple[str, ...] | str:
        return value if isinstance(value, str) else tuple(_canonical_measure(m) for m in value)


class Gates(_Model):
    """A whole ``gates.yaml``; ``source`` is the file it came from (for messages and paths)."""

    schema_: Literal["evalkit.gates/1"] = Field(alias="schema")
    absolute: tuple[AbsoluteGate, ...] = ()
    relative: tuple[RelativeGate, ...] = ()
    baseline: BaselineGate | None = None
    abstention: tuple[AbstentionGate, ...] = ()

    model_config = ConfigDict(populate_by_name=True)  # merged with _Model's

    @field_validator("absolute", "relative", "abstention", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    def gate_ids(self) -> tuple[str, ...]:
        """The ID of each absolute then relative gate (``absolute[i]`` when none was given)."""
        return tuple(
            gate.id or f"{kind}[{index}]"
            for kind, gates in (("absolute", self.absolute), ("relative", self.relative))
            for index, gate in enumerate(gates)
        )


def abstention_gate_ids(gates: Gates) -> tuple[str, ...]:
    """The ID of each abstention gate (``abstention[i]`` when none was given)."""
    return tuple(gate.id or f"abstention[{i}]" for i, gate in enumerate(gates.abstention))


def load_gates(path: str | os.PathLike[str]) -> Gates:
    """Read and strictly validate a ``gates.yaml``.

    Raises :class:`FixtureError` listing every problem (file:line, gate ID or position, field).
    """
    file = Path(path)
    name = file.name if safe_id(file.name) else "gates file"
    source = f"gates file {shown_path(path)}"
    try:
        text = read_input_bytes(file, max_bytes=MAX_SMALL_YAML_BYTES).decode("utf-8")
    except InputFileError as error:
        missing = error.reason == "does not exist"
        message = "file not found; create it (see fixtures/README.md)" if missing else error.reason
        raise FixtureError([Problem(name, "", "", message)], source=source) from None
    except UnicodeDecodeError as error:
        raise FixtureError(
            [Problem(name, "", "", f"is not UTF-8 (byte {error.start}); save it as UTF-8")],
            source=source,
        ) from None
    return _parse_gates(text, name, source=source)


def _parse_gates(text: str, name: str, *, source: str) -> Gates:
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError as error:
        raise FixtureError([syntax_problem(error, name)], source=source) from None
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        found = "nothing" if data is None else type(data).__name__
        raise FixtureError(
            [
                Problem(
                    name, "", "", f"expected a mapping with 'schema: {GATES_SCHEMA}', found {found}"
                )
            ],
            source=source,
        )
    problems = [
        Problem(f"{name}:{line}", "", key, "this key appears twice in one mapping; keep one")
        for line, key in duplicate_keys(node)
    ]
    lines = _item_lines(node)
    try:
        gates = Gates.model_validate(data)
    except ValidationError as error:
        problems += [_problem(name, data, lines, detail) for detail in error.errors()]
        raise FixtureError(problems, source=source) from None
    problems += _cross_rules(gates, name, lines)
    if problems:
        raise FixtureError(problems, source=source)
    return gates


def _item_lines(node: yaml.MappingNode) -> dict[tuple[str, int], int]:
    """1-based line of each ``absolute``/``relative`` list item, and of the sections themselves."""
    lines: dict[tuple[str, int], int] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        lines[(key, -1)] = key_node.start_mark.line + 1
        if isinstance(value_node, yaml.SequenceNode):
            for index, item in enumerate(value_node.value):
                lines[(key, index)] = item.start_mark.line + 1
    return lines


def _label(data: Mapping[str, Any], section: str, index: int) -> str:
    items = data.get(section)
    if isinstance(items, list) and index < len(items) and isinstance(items[index], dict):
        gate_id = safe_id(items[index].get("id"))
        if gate_id is not None:
            return gate_id
    return f"{section}[{index}]"


def _problem(
    name: str, data: Mapping[str, Any], lines: Mapping[tuple[str, int], int], detail: Any
) -> Problem:
    location = [str(part) for part in detail["loc"]]
    section = location[0] if location else ""
    label, field_parts = "", location
    line = lines.get((section, -1))
    if (
        section in ("absolute", "relative", "abstention")
        and len(location) >= 2
        and location[1].isdigit()
    ):
        index = int(location[1])
        label = _label(data, section, index)
        line = lines.get((section, index), line)
        field_parts = location[2:]
    elif section == "baseline":
        label, field_parts = "baseline", location[1:]
    where = f"{name}:{line}" if line is not None else name
    field = ".".join(part for part in field_parts if not part.startswith("function-"))
    return Problem(where, label, field, _message(detail))


def _message(detail: Any) -> str:
    kind = detail["type"]
    found = type(detail.get("input")).__name__
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field; remove it or fix its spelling (see fixtures/README.md)"
    if kind == "literal_error":
        return f"{detail['msg'].removeprefix('Input should be ')}, found another value"
    if kind == "string_pattern_mismatch":
        return "has the wrong shape: expected an ID, a language code or a relative path"
    if kind == "value_error":
        return str(detail["msg"]).removeprefix("Value error, ")
    if kind == "float_type" and found == "int":  # an integer too large for a float
        return "out of range: an integer too large for a float; expected a finite number"
    if kind.endswith("_type") or kind in ("finite_number", "union_tag_invalid"):
        return (
            f"wrong type or value: {detail['msg'].removeprefix('Input should be ')}, found {found}"
        )
    return f"{detail['msg']} (found {found})"


def _cross_rules(gates: Gates, name: str, lines: Mapping[tuple[str, int], int]) -> list[Problem]:
    problems: list[Problem] = []
    if not (gates.absolute or gates.relative or gates.abstention) and gates.baseline is None:
        problems.append(
            Problem(name, "", "", "defines no gates; add absolute, relative or baseline gates")
        )
    seen: dict[str, str] = {}
    positions = [("absolute", i) for i in range(len(gates.absolute))]
    positions += [("relative", i) for i in range(len(gates.relative))]
    for (section, index), gate_id in zip(positions, gates.gate_ids(), strict=True):
        where = f"{name}:{lines.get((section, index), 0)}"
        if gate_id in seen:
            problems.append(
                Problem(where, gate_id, "id", f"duplicate gate ID, first used at {seen[gate_id]}")
            )
        seen.setdefault(gate_id, where)
    for index, gate_id in enumerate(abstention_gate_ids(gates)):
        where = f"{name}:{lines.get(('abstention', index), 0)}"
        if gate_id in seen:
            problems.append(
                Problem(where, gate_id, "id", f"duplicate gate ID, first used at {seen[gate_id]}")
            )
        seen.setdefault(gate_id, where)
    for index, abstaining in enumerate(gates.abstention):
        if abstaining.max_auc_drop is not None and gates.baseline is None:
            where = f"{name}:{lines.get(('abstention', index), 0)}"
            label = abstaining.id or f"abstention[{index}]"
            problems.append(
                Problem(
                    where,
                    label,
                    "max_auc_drop",
                    "compares with the baseline, but the gates have no baseline section; add "
                    "'baseline:' (see fixtures/README.md) or remove max_auc_drop",
                )
            )
    for index, gate in enumerate(gates.absolute):
        problem = _bound_problem(gate)
        if problem is not None:
            where = f"{name}:{lines.get(('absolute', index), 0)}"
            label = gate.id or f"absolute[{index}]"
            problems.append(
                Problem(where, label, "min" if gate.min is not None else "max", problem)
            )
    return problems


def _bound_problem(gate: AbsoluteGate) -> str | None:
    """Why an absolute gate's bound can never fail (or never pass), or None."""
    low, high = measure_range(gate.measure)
    op, bound = gate.bound()
    if op == ">=" and bound <= low:
        return (
            f"min {bound:g} can never fail: {gate.measure} is never below {low:g}; "
            f"set a min above {low:g} or remove the gate"
        )
    if op == "<=" and bound >= high:
        return (
            f"max {bound:g} can never fail: {gate.measure} is never above {high:g}; "
            f"set a max below {high:g} or remove the gate"
        )
    if (op == ">=" and bound > high) or (op == "<=" and bound < low):
        return (
            f"{'min' if op == '>=' else 'max'} {bound:g} can never pass: {gate.measure} lies "
            f"in [{low:g}, {high:g}]; set a bound inside that range"
        )
    return None
