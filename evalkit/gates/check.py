"""Quality gates: the ``gates.yaml`` schema, committed baselines, and checking a report.

``gates.yaml`` (schema ``evalkit.gates/1``, documented in ``fixtures/README.md``) holds three
kinds of gate, all checked against a report dict of schema ``evalkit.report/1``:

- ``absolute``: a bound on one system's mean of one measure, overall or in one language
  (``min`` -> ``actual >= min``, ``max`` -> ``actual <= max``; exactly one of them).
- ``relative``: ``system`` may be at most ``max_drop`` worse than ``reference`` on a measure.
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

Ranges. :func:`measure_range` gives the values a measure can take (``[0, 1]`` for rates and
averages, ``[0, inf)`` for counts, unbounded for ``utility`` and ``yaap``). A baseline or
relative threshold beyond the measure's worst value is clamped to it; a check whose threshold
is the worst value cannot fail (the baseline is already as bad as the measure gets) and says
so in its ``note``. An absolute gate whose bound is outside the range, or at the worst end of
it (``min: 0`` on ``R@10``, ``max: 1`` on ``NoAnswerFP``), could never fail (or never pass)
and is refused when the file is loaded.

Rules of :func:`check_gates`:

- "Worse" follows the measure's direction from the measures registry
  (:func:`evalkit.measures.higher_is_better`): higher is better except for the measures in
  ``LOWER_IS_BETTER`` (``NoAnswerFP``, ``NoResult``). For a higher-is-better measure the
  threshold is ``reference - max_drop`` (or ``baseline - allowance``) and the gate passes when
  ``actual >= threshold``; for a lower-is-better one it is ``reference + max_drop`` and
  ``actual <= threshold``. Comparisons allow ``COMPARISON_SLACK`` for float rounding.
- ``language == "all"`` means the overall mean (``summary``), any other value the mean within
  that language (``summaryByLanguage``).
- A new failure is a (query ID, failure kind) pair of a system in the report's ``failures`` that
  the baseline does not have; the gate counts the distinct query IDs (``query_ids`` lists them).
- Staleness is checked for what is compared. A baseline whose ``schema`` differs, or whose
  shared definition (``definitionHashes.shared``: fixture, corpus, queries, k, repeats,
  measures) differs from the report's, is stale as a whole; a system whose own definition hash
  differs is stale for that system. Either is a :class:`~evalkit.errors.StaleBaselineError`,
  never a silent comparison. A baseline without ``definitionHashes`` (an older evalkit) is
  compared by ``evaluationDefinitionHash`` and ``corpusHash`` as a whole; one whose
  ``corpusHash`` or ``fixture`` record disagrees with the evaluation's is stale either way (it
  was edited by hand).
- **Not evaluated.** A gate naming a system that is not in the report (an absolute gate's
  system, a relative gate's system or reference, a baseline system the report lacks), or a
  measure whose cutoff is above the report's k, is a row with status ``not evaluated``:
  neither passed nor failed (``passed`` is NA), counted separately, never an error. So any
  subset of systems and any k can be gated. A measure the report lacks at a cutoff within k,
  or a language a system has no results in, is an :class:`~evalkit.errors.InputError`.
- Rows come in order: absolute gates (file order), relative gates (file order), then per
  baseline system: a ``not evaluated`` row for each measure and language the report has and
  the baseline lacks, every measure overall, then per language (sorted), then its new-failure
  row (a baseline system not in the report: one ``not evaluated`` row).
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import pandas as pd
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

from evalkit.errors import FixtureError, InputError, Problem, StaleBaselineError
from evalkit.fixtures.schema import ID_PATTERN, LANGUAGE_PATTERN
from evalkit.measures import parse_measure
from evalkit.measures.names import (
    LOWER_IS_BETTER,
    MEASURE_NAMES,
    higher_is_better,
    measure_range,
)
from evalkit.registry import did_you_mean
from evalkit.run.report_json import (
    ALL_LANGUAGES,
    deterministic_projection,
    read_report,
    report_list,
    report_means,
    report_measure_order,
    short_repr,
)
from evalkit.safety.canonical import canonical_json
from evalkit.safety.inputs import InputFileError, read_input_bytes
from evalkit.safety.names import name_problem, safe_id
from evalkit.safety.output import shown_path, unshown_reason
from evalkit.safety.privacy import PrivateText
from evalkit.safety.yamlio import compose_and_load, duplicate_keys, syntax_problem

__all__ = [
    "ALL_LANGUAGES",
    "DEFAULT_TOLERANCE",
    "GATES_SCHEMA",
    "GATE_COLUMNS",
    "LOWER_IS_BETTER",
    "NOT_EVALUATED",
    "AbsoluteGate",
    "BaselineGate",
    "Gates",
    "RelativeGate",
    "Tolerance",
    "baseline_from_report",
    "baseline_systems",
    "check_baseline_fresh",
    "check_gates",
    "format_gate_table",
    "gate_counts",
    "gates_failed",
    "gates_to_report",
    "higher_is_better",
    "load_gates",
    "load_report",
    "measure_range",
    "write_baseline",
]

GATES_SCHEMA: Final = "evalkit.gates/1"
COMPARISON_SLACK: Final = 1e-9
NEW_FAILURES_MEASURE: Final = "new-failures"
GATE_COLUMNS: Final = [
    "gate",
    "kind",
    "system",
    "measure",
    "language",
    "reference",
    "op",
    "threshold",
    "actual",
    "passed",
    "query_ids",
    "status",
    "note",
]
PASS: Final = "pass"
FAIL: Final = "fail"
NOT_EVALUATED: Final = "not evaluated"
_STALE_KEYS: Final = ("schema", "evaluationDefinitionHash", "corpusHash")


def _canonical_measure(name: str) -> str:
    return str(parse_measure(name))


def _worst_value(measure: str) -> float:
    low, high = measure_range(measure)
    return low if higher_is_better(measure) else high


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

    model_config = ConfigDict(populate_by_name=True)  # merged with _Model's

    @field_validator("absolute", "relative", mode="before")
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


def load_gates(path: str | os.PathLike[str]) -> Gates:
    """Read and strictly validate a ``gates.yaml``.

    Raises :class:`FixtureError` listing every problem (file:line, gate ID or position, field).
    """
    file = Path(path)
    name = file.name if safe_id(file.name) else "gates file"
    source = f"gates file {shown_path(path)}"
    try:
        text = read_input_bytes(file).decode("utf-8")
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
    if section in ("absolute", "relative") and len(location) >= 2 and location[1].isdigit():
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
    if kind.endswith("_type") or kind in ("finite_number", "union_tag_invalid"):
        return (
            f"wrong type or value: {detail['msg'].removeprefix('Input should be ')}, found {found}"
        )
    return f"{detail['msg']} (found {found})"


def _cross_rules(gates: Gates, name: str, lines: Mapping[tuple[str, int], int]) -> list[Problem]:
    problems: list[Problem] = []
    if not gates.absolute and not gates.relative and gates.baseline is None:
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


# --- reports and baselines --------------------------------------------------------------------


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report or baseline JSON file: :func:`evalkit.run.report_json.read_report`."""
    return read_report(path)


def baseline_from_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline of ``report``: its deterministic projection without a ``gates`` section."""
    projection = deterministic_projection(dict(report))
    projection.pop("gates", None)
    return projection


def write_baseline(
    report: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``baseline_from_report(report)`` as canonical JSON to a safe relative ``path``,
    through :func:`evalkit.safety.artifacts.write_artifact` (path check and leak scan against
    ``private``, e.g. ``private_texts(evaluation.fixture, evaluation.definitions)``)."""
    from evalkit.safety.artifacts import write_artifact

    text = canonical_json(baseline_from_report(report))
    return write_artifact(
        path, text, kind="json", private=private, workspace=workspace, baseline=True
    )


def check_baseline_fresh(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    *,
    systems: Sequence[str] | None = None,
    fixture: str = "FIXTURE",
    baseline_path: str = "BASELINE.json",
    options: Sequence[str] = (),
) -> None:
    """Raise :class:`StaleBaselineError` unless the baseline was made for this evaluation, as
    far as ``systems`` are concerned (default: every system both have); rule in the module
    docstring.

    The message names the differing keys or systems, the visible parts that changed (fixture,
    settings, systems, providers) and the command that refreshes the baseline
    (``fixture``/``baseline_path`` fill it in, with the evaluation's command-line ``options``,
    e.g. ``["--systems", "lexical", "--k", "5"]``, so the new baseline is of this evaluation).
    """
    from evalkit.fixtures.rules import find_sensitive

    def hidden(value: str) -> bool:  # a credential or endpoint shape, or an absolute path
        return bool(unshown_reason(value) or find_sensitive(value) or os.path.isabs(value))

    baseline_shown = "BASELINE.json" if hidden(baseline_path) else baseline_path
    fixture_shown = "FIXTURE" if hidden(fixture) else fixture
    shown_options = [
        shlex.quote(",".join("<not shown>" if hidden(p) else p for p in option.split(",")))
        for option in options
    ]
    command = shlex.join(["evalkit", "baseline", fixture_shown])
    command = " ".join([command, *shown_options, "--output", shlex.quote(baseline_shown)])
    where = ""
    if ".." in Path(baseline_shown).parts:  # an absolute path is not shown (hidden above)
        where = " (run it where the baseline's folder is below the working directory)"
    refresh = (
        f"If the change is intended, review it with 'evalkit diff {baseline_shown} NEW.json' and "
        f"refresh the baseline with '{command}'{where}"
    )
    current_parts, baseline_parts = (
        _definition_parts(r) if r.get("schema") == baseline.get("schema") else None
        for r in (report, baseline)
    )
    # The shared hash covers the fixture and corpus; a baseline whose own fixture or corpus
    # record disagrees with it was edited by hand, and is refused as stale all the same.
    identity = [key for key in ("corpusHash", "fixture") if baseline.get(key) != report.get(key)]
    if current_parts is not None and baseline_parts is not None and not identity:
        if current_parts[0] == baseline_parts[0]:
            compared = _systems_in_both(report, baseline) if systems is None else list(systems)
            changed_systems = [
                s
                for s in compared
                if s in current_parts[1]
                and s in baseline_parts[1]
                and current_parts[1][s] != baseline_parts[1][s]
            ]
            if not changed_systems:
                return
            raise StaleBaselineError(
                f"baseline {baseline_shown} is stale for system(s) {', '.join(changed_systems)} "
                "and was not compared: their definition (configuration) changed since the "
                f"baseline; the other systems are unchanged. {refresh}"
            )
        differing = ["definitionHashes.shared"]
    else:
        differing = [
            *identity,
            *(k for k in _STALE_KEYS if k not in identity and baseline.get(k) != report.get(k)),
        ]
        if not differing:
            return
    details = "; ".join(
        f"{key}: baseline {short_repr(_lookup(baseline, key))}, current "
        f"{short_repr(_lookup(report, key))}"
        for key in differing
    )
    changed = [
        key
        for key in ("fixture", "settings")
        + (() if current_parts and baseline_parts else ("systems", "providerDefinitionsHash"))
        if baseline.get(key) != report.get(key)
    ]
    cause = (
        f"changed since the baseline: {', '.join(changed)}"
        if changed
        else "the queries, judgments, corpus or measures version changed since the baseline"
    )
    raise StaleBaselineError(
        f"baseline {baseline_shown} is stale and was not compared: it was made for another "
        f"evaluation definition ({details}); {cause}. {refresh}"
    )


def _lookup(report: Mapping[str, Any], key: str) -> object:
    value: object = report
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _definition_parts(report: Mapping[str, Any]) -> tuple[str, dict[str, str]] | None:
    """``(shared hash, {system: hash})`` of ``definitionHashes``, None when absent/malformed."""
    parts = report.get("definitionHashes")
    if not isinstance(parts, Mapping):
        return None
    shared, systems = parts.get("shared"), parts.get("systems")
    if not isinstance(shared, str) or not isinstance(systems, Mapping):
        return None
    return shared, {str(k): str(v) for k, v in systems.items()}


def _systems_in_both(report: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[str]:
    current = report.get("systems")
    previous = baseline.get("systems")
    if not isinstance(current, list) or not isinstance(previous, list):
        return []
    return [str(s) for s in previous if s in current]


def baseline_systems(
    report: Mapping[str, Any], baseline: Mapping[str, Any], spec: BaselineGate
) -> list[str]:
    """The systems a baseline gate compares: its ``systems`` (all of the baseline's for
    ``"all"``) that the report also has."""
    current = report.get("systems")
    present = {str(s) for s in current} if isinstance(current, list) else set()
    if spec.systems == "all":
        listed = baseline.get("systems")
        named = [str(s) for s in listed] if isinstance(listed, list) else []
    else:
        named = list(spec.systems)
    return [s for s in named if s in present]


# --- checking ---------------------------------------------------------------------------------


class _Means:
    """Lookup of a report's means (``summary`` and ``summaryByLanguage``), for gates."""

    def __init__(self, report: Mapping[str, Any], role: str) -> None:
        self.role = role
        self.means = report_means(report, role)  # checks the schema and every mean
        self.systems = report_list(report, "systems", role)
        self.measure_order = report_measure_order(report)

    def measures(self, system: str) -> list[str]:
        """The system's measures, in the evaluation's measure order (``settings.measures``)."""
        known = list(self.means.get(system, {}).get(ALL_LANGUAGES, {}))
        return [m for m in self.measure_order if m in known] + sorted(
            m for m in known if m not in self.measure_order
        )

    def languages(self, system: str) -> list[str]:
        return sorted(k for k in self.means.get(system, {}) if k != ALL_LANGUAGES)

    def get(self, system: str, measure: str, language: str, gate: str) -> float:
        if system not in self.systems:
            known = [safe_id(s) or "(a name not shown)" for s in self.systems]
            shown_system = repr(system) if safe_id(system) else "(not shown)"
            shown_gate = repr(gate) if safe_id(gate) else "(not shown)"
            hint = did_you_mean(system, known) if safe_id(system) else ""
            raise InputError(
                f"gate {shown_gate}: system {shown_system} is not in the "
                f"{self.role} (systems: {', '.join(known) or 'none'});{hint} evaluate that "
                "system or fix the gate"
            )
        tables = self.means.get(system, {})
        if language != ALL_LANGUAGES and language not in tables:
            raise InputError(
                f"gate {gate!r}: language {language!r} has no results for system {system!r} "
                f"in the {self.role} (languages: "
                f"{', '.join(self.languages(system)) or 'none'}); fix the gate's language"
            )
        table = tables.get(language, {})
        if measure not in table:
            known = list(table)
            raise InputError(
                f"gate {gate!r}: measure {measure!r} was not computed for system {system!r} in "
                f"the {self.role} (measures: {', '.join(known) or 'none'});"
                f"{did_you_mean(measure, known)} fix the gate or evaluate that measure"
            )
        return table[measure]


def _row(
    *,
    gate: str,
    kind: str,
    system: str,
    measure: str,
    language: str,
    reference: str,
    op: str,
    threshold: float,
    actual: float,
    query_ids: Sequence[str] = (),
) -> dict[str, Any]:
    if op == ">=":
        passed = actual >= threshold - COMPARISON_SLACK
    else:
        passed = actual <= threshold + COMPARISON_SLACK
    return {
        "gate": gate,
        "kind": kind,
        "system": system,
        "measure": measure,
        "language": language,
        "reference": reference,
        "op": op,
        "threshold": float(threshold),
        "actual": float(actual),
        "passed": bool(passed),
        "query_ids": ",".join(query_ids),
        "status": PASS if passed else FAIL,
        "note": _cannot_fail(measure, threshold) if kind in ("relative", "baseline") else "",
    }


def _not_evaluated(
    *, gate: str, kind: str, system: str, measure: str, language: str, reference: str, note: str
) -> dict[str, Any]:
    """A row for a gate the report cannot answer: neither passed nor failed."""
    return {
        "gate": gate,
        "kind": kind,
        "system": system,
        "measure": measure,
        "language": language,
        "reference": reference,
        "op": "",
        "threshold": math.nan,
        "actual": math.nan,
        "passed": pd.NA,
        "query_ids": "",
        "status": NOT_EVALUATED,
        "note": note,
    }


def _worse_bound(measure: str, value: float, slack: float) -> tuple[str, float]:
    """(op, threshold) for "at most ``slack`` worse than ``value``", clamped to the measure's
    worst value (:func:`measure_range`)."""
    worst = _worst_value(measure)
    if higher_is_better(measure):
        return ">=", max(value - slack, worst)
    return "<=", min(value + slack, worst)


def _cannot_fail(measure: str, threshold: float) -> str:
    """The note of a check whose threshold is the measure's worst value, else ""."""
    worst = _worst_value(measure)
    if math.isinf(worst) or not math.isclose(threshold, worst, rel_tol=0.0, abs_tol=1e-12):
        return ""
    return f"cannot fail: the threshold is the worst value of {measure} ({worst:g})"


def _report_k(report: Mapping[str, Any]) -> int | None:
    settings = report.get("settings")
    k = settings.get("k") if isinstance(settings, Mapping) else None
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _why_not_evaluated(
    current: _Means, k: int | None, systems: Sequence[str], measure: str
) -> str | None:
    """Why a gate on ``systems`` and ``measure`` cannot be checked on this report, or None."""
    known = [str(s) for s in current.systems]
    missing = [s for s in systems if s not in known]
    if missing:
        hint = "".join(did_you_mean(s, known) for s in missing)
        return f"system {', '.join(missing)} not in the evaluation ({', '.join(known)}).{hint}"
    cutoff = parse_measure(measure).cutoff if measure not in ("", NEW_FAILURES_MEASURE) else None
    if k is not None and cutoff is not None and cutoff > k:
        return f"cutoff {cutoff} of {measure} is above the evaluation's k={k}"
    return None


def check_gates(
    report: Mapping[str, Any], gates: Gates, baseline: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """Check every gate against ``report`` (and ``baseline``); one row per check.

    Columns ``GATE_COLUMNS``: ``gate, kind (absolute|relative|baseline|new-failures), system,
    measure, language ("all" = overall), reference ("" | reference system | "baseline"), op
    (">=" | "<=" | "" when not evaluated), threshold, actual (NaN when not evaluated), passed
    (nullable boolean: NA when not evaluated), query_ids`` (comma-separated, new failures
    only), ``status`` (pass | fail | not evaluated), ``note`` (why not evaluated, or why a
    check cannot fail: its threshold is the measure's worst value; else "").
    Raises :class:`InputError` for unknown measures/languages or a missing baseline and
    :class:`StaleBaselineError` for a stale one. Inputs are not modified.
    """
    current = _Means(report, "report")
    k = _report_k(report)
    rows: list[dict[str, Any]] = []
    measure_gates: tuple[AbsoluteGate | RelativeGate, ...] = (*gates.absolute, *gates.relative)
    for gate, gate_id in zip(measure_gates, gates.gate_ids(), strict=True):
        if isinstance(gate, AbsoluteGate):
            kind, reference, involved = "absolute", "", [gate.system]
        else:
            kind, reference, involved = "relative", gate.reference, [gate.system, gate.reference]
        where = {
            "gate": gate_id,
            "kind": kind,
            "system": gate.system,
            "measure": gate.measure,
            "language": gate.language,
            "reference": reference,
        }
        why = _why_not_evaluated(current, k, involved, gate.measure)
        if why is not None:
            rows.append(_not_evaluated(**where, note=why))
            continue
        actual = current.get(gate.system, gate.measure, gate.language, gate_id)
        if isinstance(gate, AbsoluteGate):
            op, threshold = gate.bound()
        else:
            reference_mean = current.get(gate.reference, gate.measure, gate.language, gate_id)
            op, threshold = _worse_bound(gate.measure, reference_mean, gate.max_drop)
        rows.append(_row(**where, op=op, threshold=threshold, actual=actual))
    if gates.baseline is not None:
        if baseline is None:
            raise InputError(
                "the gates define baseline gates but no baseline was given; commit one with "
                "'evalkit baseline FIXTURE --output FIXTURE/baseline.json' or remove the "
                "baseline section"
            )
        check_baseline_fresh(
            report, baseline, systems=baseline_systems(report, baseline, gates.baseline)
        )
        rows += _baseline_rows(report, current, gates.baseline, baseline)
    return pd.DataFrame(rows, columns=GATE_COLUMNS).astype(
        {"threshold": "float64", "actual": "float64", "passed": "boolean"}
    )


def _baseline_rows(
    report: Mapping[str, Any],
    current: _Means,
    spec: BaselineGate,
    baseline: Mapping[str, Any],
) -> list[dict[str, Any]]:
    previous = _Means(baseline, "baseline")
    systems = [str(s) for s in previous.systems] if spec.systems == "all" else list(spec.systems)
    k = _report_k(report)
    rows: list[dict[str, Any]] = []
    for system in systems:
        gate = f"baseline:{system}"
        if system not in previous.systems:
            previous.get(system, "", ALL_LANGUAGES, gate)  # raises: names the known systems
        check = {"gate": gate, "kind": "baseline", "system": system, "reference": "baseline"}
        why = _why_not_evaluated(current, k, [system], "")
        if why is not None:
            rows.append(_not_evaluated(**check, measure="all", language=ALL_LANGUAGES, note=why))
            continue
        known_measures, known_languages = previous.measures(system), previous.languages(system)
        measures = known_measures if spec.measures == "all" else list(spec.measures)
        languages = [ALL_LANGUAGES, *(known_languages if spec.per_language else [])]
        # what the evaluation has and the baseline lacks is shown, never silently unchecked
        lacking: list[tuple[str, str, str]] = []  # (measure, language, what)
        if spec.measures == "all":
            lacking += [
                (m, ALL_LANGUAGES, f"measure {m}")
                for m in current.measures(system)
                if m not in known_measures
            ]
            lacking += [
                ("all", language, f"language {language}")
                for language in (current.languages(system) if spec.per_language else [])
                if language not in known_languages
            ]
        for measure, language, what in lacking:
            note = f"the baseline has no value for {what}; refresh it to gate this"
            rows.append(_not_evaluated(**check, measure=measure, language=language, note=note))
        for language in languages:
            for measure in measures:
                old = previous.get(system, measure, language, gate)
                actual = current.get(system, measure, language, gate)
                allowed = spec.tolerance_for(measure).allowance(old)
                op, threshold = _worse_bound(measure, old, allowed)
                where = {**check, "measure": measure, "language": language}
                rows.append(_row(**where, op=op, threshold=threshold, actual=actual))
        if spec.max_new_failures is not None:
            new = _new_failures(report, baseline, system)
            rows.append(
                _row(
                    gate=gate,
                    kind="new-failures",
                    system=system,
                    measure=NEW_FAILURES_MEASURE,
                    language=ALL_LANGUAGES,
                    reference="baseline",
                    op="<=",
                    threshold=spec.max_new_failures,
                    actual=len(new),
                    query_ids=new,
                )
            )
    return rows


def _failure_keys(report: Mapping[str, Any], system: str, role: str) -> set[tuple[str, str]]:
    keys: set[tuple[str, str]] = set()
    for index, failure in enumerate(report_list(report, "failures", role)):
        if not isinstance(failure, dict) or not all(
            isinstance(failure.get(k), str) for k in ("system", "queryId", "kind")
        ):
            raise InputError(
                f"{role}: failures[{index}] should be an object with string system, queryId and "
                "kind; expected a report written by evalkit"
            )
        if failure["system"] == system:
            keys.add((failure["queryId"], failure["kind"]))
    return keys


def _new_failures(report: Mapping[str, Any], baseline: Mapping[str, Any], system: str) -> list[str]:
    """Sorted IDs of queries with a (query, kind) failure in ``report`` but not in ``baseline``."""
    new = _failure_keys(report, system, "report") - _failure_keys(baseline, system, "baseline")
    return sorted({query_id for query_id, _ in new})


# --- presenting -------------------------------------------------------------------------------


def gates_to_report(results: pd.DataFrame) -> list[dict[str, Any]]:
    """The gate results as the report's ``gates`` section (camelCase keys, IDs only); a gate
    that was not evaluated has ``passed: null``, ``threshold``/``actual`` null and a ``note``
    (so has a check that cannot fail)."""
    records = []
    for row in results.to_dict(orient="records"):
        evaluated = row["status"] != NOT_EVALUATED
        record: dict[str, Any] = {
            "gate": str(row["gate"]),
            "kind": str(row["kind"]),
            "system": str(row["system"]),
            "measure": str(row["measure"]),
            "language": str(row["language"]),
            "reference": str(row["reference"]),
            "op": str(row["op"]),
            "threshold": float(row["threshold"]) if evaluated else None,
            "actual": float(row["actual"]) if evaluated else None,
            "passed": bool(row["passed"]) if evaluated else None,
            "queryIds": str(row["query_ids"]).split(",") if row["query_ids"] else [],
            "status": str(row["status"]),
        }
        if row["note"]:
            record["note"] = str(row["note"])
        records.append(record)
    return records


def gate_counts(results: pd.DataFrame) -> dict[str, int]:
    """``{"pass": n, "fail": n, "not evaluated": n}`` of a :func:`check_gates` frame."""
    counts = results["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in (PASS, FAIL, NOT_EVALUATED)}


def gates_failed(results: pd.DataFrame) -> bool:
    """True when an evaluated gate check failed (not-evaluated checks never fail)."""
    return bool((results["status"] == FAIL).any())


def format_gate_table(results: pd.DataFrame, *, failed_only: bool = False) -> str:
    """A fixed-width table of gate results, new-failure IDs, notes on checks that were not
    evaluated, and a verdict line (IDs only); ``failed_only`` lists only failing checks (the
    verdict still counts all)."""
    header = ("gate", "system", "measure", "language", "threshold", "actual", "result")
    lines: list[tuple[str, ...]] = [header]
    notes: list[str] = []
    shown = results[results["status"] == FAIL] if failed_only else results
    for row in shown.itertuples(index=False):
        if row.status == NOT_EVALUATED:
            lines.append(
                (
                    str(row.gate),
                    str(row.system),
                    str(row.measure),
                    str(row.language),
                    "-",
                    "-",
                    "not evaluated",
                )
            )
            notes.append(f"not evaluated: {row.gate}: {row.note}")
            continue
        digits = 0 if row.kind == "new-failures" else 4
        threshold = f"{row.op} {row.threshold:.{digits}f}"
        if row.kind != "absolute":
            threshold += f" ({row.reference})"
        lines.append(
            (
                str(row.gate),
                str(row.system),
                str(row.measure),
                str(row.language),
                threshold,
                f"{row.actual:.{digits}f}",
                "pass" if row.status == PASS else "FAIL",
            )
        )
        if row.query_ids:
            notes.append(f"new failures of {row.system}: {str(row.query_ids).replace(',', ', ')}")
    cannot = shown[(shown["status"] == PASS) & (shown["note"] != "")]
    if len(cannot):
        listed = sorted({f"{row.measure} ({row.gate})" for row in cannot.itertuples(index=False)})
        notes.append(
            f"{len(cannot)} check(s) cannot fail, their threshold being the measure's worst "
            f"value: {', '.join(listed)}"
        )
    text = fixed_width_lines(lines) + notes
    counts = gate_counts(results)
    evaluated = counts[PASS] + counts[FAIL]
    failed = counts[FAIL]
    verdict = f"{failed} of {evaluated} gate check(s) FAILED" if failed else "all gates pass"
    if counts[NOT_EVALUATED]:
        verdict += f"; {counts[NOT_EVALUATED]} not evaluated"
    text.append(f"{evaluated} check(s): {verdict}")
    return "\n".join(text) + "\n"


def fixed_width_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` (header first) as left-aligned columns two spaces apart, trailing spaces
    stripped, with a dashed rule under the header (also used by :mod:`evalkit.gates.diff`)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    text.insert(1, "  ".join("-" * width for width in widths))
    return text
