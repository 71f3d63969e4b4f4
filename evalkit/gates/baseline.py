"""Committed baselines: writing one from a report, reading it, and whether it is stale.

A baseline is a report's deterministic projection without its ``gates`` section
(:func:`baseline_from_report`), written as canonical JSON by :func:`write_baseline`; a baseline
gate (:class:`~evalkit.gates.spec.BaselineGate`) compares a report with it.

Staleness is checked for what is compared (:func:`check_baseline_fresh`). A baseline whose
``schema`` differs, or whose shared definition (``definitionHashes.shared``: fixture, corpus,
queries, k, repeats, measures) differs from the report's, is stale as a whole; a system whose
own definition hash differs is stale for that system. Either is a
:class:`~evalkit.errors.StaleBaselineError`, never a silent comparison. A baseline without
``definitionHashes`` (an older evalkit) is compared by ``evaluationDefinitionHash`` and
``corpusHash`` as a whole; one whose ``corpusHash`` or ``fixture`` record disagrees with the
evaluation's is stale either way (it was edited by hand).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from evalkit.errors import StaleBaselineError
from evalkit.gates.spec import BaselineGate
from evalkit.run.report_json import deterministic_projection, read_report, short_repr
from evalkit.safety.canonical import canonical_json
from evalkit.safety.output import unshown_reason
from evalkit.safety.privacy import PrivateText

__all__ = [
    "baseline_from_report",
    "baseline_systems",
    "check_baseline_fresh",
    "load_report",
    "write_baseline",
]

_STALE_KEYS: Final = ("schema", "evaluationDefinitionHash", "corpusHash")


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
