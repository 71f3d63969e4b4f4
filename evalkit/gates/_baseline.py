"""Committed baselines: writing one from a report, reading it, and whether it is stale.

A baseline is a report's deterministic projection without its ``gates`` section
(:func:`baseline_from_report`), written as canonical JSON by :func:`write_baseline`; a baseline
gate (:class:`evalkit.gates.BaselineGate`) compares a report with it.

A baseline is stale only when a comparison with it would mean nothing
(:func:`check_baseline_fresh`): its ``schema`` differs, or its shared definition
(``definitionHashes.shared``: fixture version, corpus, queries and judgments, k, repeats,
measures) differs from the report's. That is a :class:`~evalkit.errors.StaleBaselineError`,
never a silent comparison. A baseline without ``definitionHashes`` (an older evalkit) is
compared by ``evaluationDefinitionHash`` and ``corpusHash`` as a whole; one whose
``corpusHash`` or ``fixture`` record disagrees with the evaluation's is stale either way (it
was edited by hand).

A system whose own definition changed (a new run file, model, tokenizer or weight) is what a
pull request is about: it is compared with its baseline entry, matched by system name, and
:func:`changed_definitions` names it with the old and new definition hashes, so a reader
sees that the numbers come from another version of the system. Refusing it would make the
baseline unable to catch a regression of the very system it guards.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from evalkit.errors import StaleBaselineError
from evalkit.gates._spec import BaselineGate
from evalkit.results import deterministic_projection, read_report, short_repr
from evalkit.safety.canonical import canonical_json
from evalkit.safety.output import unshown_reason
from evalkit.safety.privacy import PrivateText

__all__ = [
    "baseline_from_report",
    "baseline_systems",
    "changed_definitions",
    "check_baseline_fresh",
    "load_report",
    "refresh_advice",
    "write_baseline",
]

_STALE_KEYS: Final = ("schema", "evaluationDefinitionHash", "corpusHash")


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report or baseline JSON file: :func:`evalkit.results.read_report`."""
    return read_report(path)


def baseline_from_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline of ``report``: its deterministic projection without the ``gates`` and
    ``verdict`` sections of ``evalkit gate --output`` (its ``confidence`` kept: the change's
    abstention AUC is compared with it, :func:`evalkit.gates.compare_with_baseline` and
    ``max_auc_drop``), plus its ``latency`` and ``machine``
    (so a pull request sees latency before and after). Neither is part of any definition
    hash: a baseline refreshed on another machine differs in bytes, never in staleness. A
    baseline written before baselines kept ``confidence`` stays valid: its AUC comparison
    is n/a."""
    projection = deterministic_projection(dict(report))
    projection.pop("gates", None)
    projection.pop("verdict", None)
    for key in ("latency", "machine"):
        if key in report:
            projection[key] = report[key]
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


def _hidden(value: str) -> bool:
    """A credential or endpoint shape, or an absolute path: never shown in advice."""
    from evalkit.fixtures.rules import find_sensitive

    return bool(unshown_reason(value) or find_sensitive(value) or os.path.isabs(value))


def shown_baseline_path(path: str) -> str:
    """``path`` as given, or ``BASELINE.json`` when it must not be shown (an absolute path,
    an endpoint or credential shape)."""
    return "BASELINE.json" if _hidden(path) else path


def refresh_advice(
    fixture: str = "FIXTURE", baseline_path: str = "BASELINE.json", options: Sequence[str] = ()
) -> str:
    """``first review it with 'evalkit diff BASELINE NEW.json' (...), then refresh the baseline
    with 'evalkit baseline FIXTURE OPTIONS --output BASELINE'``: the one wording of the advice
    to refresh a baseline, which never skips the review. A path, fixture or option value
    shaped like a credential, an endpoint or an absolute path is shown as a placeholder."""
    baseline_shown = shown_baseline_path(baseline_path)
    fixture_shown = "FIXTURE" if _hidden(fixture) else fixture
    shown_options = [
        shlex.quote(",".join("<not shown>" if _hidden(p) else p for p in option.split(",")))
        for option in options
    ]
    command = shlex.join(["evalkit", "baseline", fixture_shown])
    command = " ".join([command, *shown_options, "--output", shlex.quote(baseline_shown)])
    where = ""
    if ".." in Path(baseline_shown).parts:  # an absolute path is not shown (hidden above)
        where = " (run it where the baseline's folder is below the working directory)"
    return (
        f"first review it with 'evalkit diff {baseline_shown} NEW.json' (NEW.json from "
        f"'evalkit run ... --output NEW.json' or 'evalkit gate ... --output NEW.json'), then "
        f"refresh the baseline with '{command}'{where}"
    )


DEFAULT_REFRESH_K: Final = 10
"""The ``--k`` an ``evalkit baseline`` command uses when not given (left out of the advice)."""
DEFAULT_REFRESH_REPEATS: Final = 2
"""The ``--repeats`` an ``evalkit baseline`` command uses when not given."""


def refresh_options(
    specs: Sequence[str],
    evaluated: Sequence[str],
    baseline: Mapping[str, Any],
    *,
    k: int = DEFAULT_REFRESH_K,
    repeats: int = DEFAULT_REFRESH_REPEATS,
) -> list[str]:
    """The options of an ``evalkit baseline`` command that refreshes ``baseline`` for this
    evaluation: ``--k`` and ``--repeats`` as given (when not the defaults), and ``--systems``
    for every system of the baseline and of this evaluation, so a gate on a subset never
    suggests a baseline of the subset (left out when that is the five reference systems). A
    system's spec is the one it was given (``specs``, aligned with ``evaluated``), or its name
    for a reference system, else a placeholder to fill in."""
    from evalkit.systems.reference import REFERENCE_SYSTEMS

    spec_of = dict(zip(evaluated, list(specs) or REFERENCE_SYSTEMS, strict=False))
    previous = [str(name) for name in baseline.get("systems", []) if isinstance(name, str)]
    names = [*previous, *(name for name in evaluated if name not in previous)]
    wanted = [
        spec_of.get(name) or (name if name in REFERENCE_SYSTEMS else f"<spec of {name}>")
        for name in names
    ]
    options: list[str] = []
    if wanted != list(REFERENCE_SYSTEMS):
        options += ["--systems", ",".join(wanted)]
    if k != DEFAULT_REFRESH_K:
        options += ["--k", str(k)]
    if repeats != DEFAULT_REFRESH_REPEATS:
        options += ["--repeats", str(repeats)]
    return options


def check_baseline_fresh(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    *,
    fixture: str = "FIXTURE",
    baseline_path: str = "BASELINE.json",
    options: Sequence[str] = (),
) -> None:
    """Raise :class:`StaleBaselineError` unless a comparison with the baseline means something
    (rule in the module docstring; a changed system definition is compared, not refused).

    The message names the differing keys, the visible parts that changed (fixture, settings,
    systems, providers) and, after asking to review ``evalkit diff`` first, the command that
    refreshes the baseline
    (``fixture``/``baseline_path`` fill it in, with the evaluation's command-line ``options``,
    e.g. ``["--systems", "lexical", "--k", "5"]``, so the new baseline is of this evaluation).
    """
    refresh = "If the change is intended, " + refresh_advice(fixture, baseline_path, options)
    current_parts, baseline_parts = (
        _definition_parts(r) if r.get("schema") == baseline.get("schema") else None
        for r in (report, baseline)
    )
    # The shared hash covers the fixture and corpus; a baseline whose own fixture or corpus
    # record disagrees with it was edited by hand, and is refused as stale all the same.
    identity = [key for key in ("corpusHash", "fixture") if baseline.get(key) != report.get(key)]
    if current_parts is not None and baseline_parts is not None and not identity:
        if current_parts[0] == baseline_parts[0]:
            return
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
        f"baseline {shown_baseline_path(baseline_path)} is stale and was not compared: it was made "
        f"for another evaluation definition ({details}); {cause}. {refresh}"
    )


def changed_definitions(
    report: Mapping[str, Any], baseline: Mapping[str, Any], systems: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """``{system: (baseline hash, current hash)}`` for each of ``systems`` (in that order) whose
    own definition hash (``definitionHashes.systems``) differs between ``baseline`` and
    ``report``; empty when either has no such hashes. Hashes only: never a definition."""
    current, previous = _definition_parts(report), _definition_parts(baseline)
    if current is None or previous is None:
        return {}
    return {
        system: (previous[1][system], current[1][system])
        for system in systems
        if system in current[1]
        and system in previous[1]
        and current[1][system] != previous[1][system]
    }


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
