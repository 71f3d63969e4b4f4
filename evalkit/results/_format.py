"""The report file format: schema, reader, deterministic projection and machine record.

Below both :mod:`evalkit.run` (which builds reports) and :mod:`evalkit.gates` (which reads
them), so the gates never import the runner. The privacy-safe report: IDs, hashes and
aggregates of an evaluation, nothing else.

Schema ``evalkit.report/1`` (keys in camelCase)::

    schema                    "evalkit.report/1"
    fixture                   {id, version}
    corpusHash                SHA-256 of the canonical documents and chunks
    evaluationDefinitionHash  SHA-256 of fixture ID/version (and chunking policy, if any), the
                              corpus hash, queries (text and judgments), settings (k, repeats,
                              measures), systems, provider definitions, the measures version
                              and the fixture's aliases.yaml (when it has one)
    providerDefinitionsHash   SHA-256 of the systems' definitions
    definitionHashes          {shared, systems: {system: hash}}: the evaluation definition in
                              parts, so a baseline is stale only for what changed. ``shared``
                              covers fixture, corpus, queries and settings; each system's hash
                              its name and definition
    settings                  {k, repeats, measures, measuresVersion}
    systems                   system names, in evaluation order
    summary                   {system: {measure: {mean, n}}}
    summaryByLanguage         {system: {language: {measure: {mean, n}}}}
    perQuery                  {system: {query_id: {measure: value}}}
                              A measure that does not apply (NaN, "n/a": a span measure on a
                              query without annotated spans, see ``evalkit.run.evaluate``) is
                              left out: of ``perQuery`` for that query, and of the summaries
                              when no query has a value (else ``n`` counts those that have
                              one). It stays in ``settings.measures``; readers (gates, diff)
                              treat a measure listed there but absent as not evaluated.
    confidence                {system: {query_id: score}}: each query's confidence, the
                              confidence of abstention gates (:mod:`evalkit.stats`'
                              ``abstention``): the one the system declared (a Retriever's
                              ``confidence(query, hits)``, a JSONL run's ``confidence``
                              field, an ``http:`` response's) or else its top result's score
                              (rank 1); a query without a result is left out (confidence
                              -inf: never answered)
    confidenceSource          (only when a system declared its confidence) {system:
                              "declared"} for those systems; a system absent from it has
                              "top score" (so reports of systems that declare nothing are
                              unchanged)
    queryLanguages            {query_id: language}: each query's language (per-language
                              abstention gates)
    failures                  [{system, queryId, language, kind, chunkIds}]
    systemNotes               {system: notes} of systems that give notes (a run file: latency
                              "not measured", queriesMissing, missingQueryIds)
    determinism               {verdict: "deterministic" | "unchecked", repeats}
    latency                   {system: {count, minMs, medianMs, p95Ms, maxMs, meanMs}}, or
                              {count, measured: false} for a system whose latency was not
                              measured (a precomputed run file)
    machine                   {os, arch, cpus, cpuModel, python, evalkit}: where latency was
                              measured (never a host name)
    gates                     (only from ``evalkit gate --output``) the gate results

Everything but ``latency`` and ``machine`` is the deterministic projection: byte-identical
across runs of the same evaluation (``deterministic_projection``). No query text, titles, chunk
text, spans, snippets, paths, endpoints, model names, credentials or vectors are included;
definitions are only ever hashed.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from evalkit.errors import InputError, InputFileError
from evalkit.fixtures.rules import find_sensitive
from evalkit.safety.canonical import canonical_json
from evalkit.safety.inputs import finite_number, load_json, read_input_bytes
from evalkit.safety.output import shown_path

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from evalkit.safety.privacy import PrivateText

__all__ = [
    "ALL_LANGUAGES",
    "CONFIDENCE_DECLARED",
    "CONFIDENCE_SOURCES",
    "CONFIDENCE_TOP_SCORE",
    "MEASURES_VERSION",
    "NONDETERMINISTIC_KEYS",
    "RANGE_SLACK",
    "REPORT_SCHEMA",
    "check_report_schema",
    "deterministic_projection",
    "machine_record",
    "read_json_object",
    "read_report",
    "report_confidence",
    "report_list",
    "report_means",
    "report_measure_order",
    "report_name",
    "report_per_query",
    "report_query_languages",
    "short_repr",
    "write_report",
]

REPORT_SCHEMA = "evalkit.report/1"
ALL_LANGUAGES: Final = "all"  # the language of a system's overall means, as read back
# Bump when a measure's definition changes, so old baselines become stale instead of wrong.
MEASURES_VERSION = "1"
NONDETERMINISTIC_KEYS = frozenset({"latency", "machine"})
#: How far outside its range (float rounding) a measure value read from a report may be.
RANGE_SLACK: Final = 1e-9
#: Where a system's confidences came from: declared by the system, or its top results' scores.
CONFIDENCE_DECLARED: Final = "declared"
CONFIDENCE_TOP_SCORE: Final = "top score"
CONFIDENCE_SOURCES: Final = (CONFIDENCE_DECLARED, CONFIDENCE_TOP_SCORE)


def machine_record() -> dict[str, Any]:
    """The machine latency was measured on: ``{os, arch, cpus, cpuModel, python, evalkit}``
    (never the host name or a user). Outside the deterministic projection, like latency."""
    import platform

    from evalkit import __version__

    model = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                model,
            )
    except OSError:
        pass
    return {
        "os": platform.system(),
        "arch": platform.machine(),
        "cpus": os.cpu_count() or 0,
        "cpuModel": model or "unknown",
        "python": platform.python_version(),
        "evalkit": __version__,
    }


def deterministic_projection(report: dict[str, Any]) -> dict[str, Any]:
    """The report without its wall-clock sections (``latency``, ``machine``)."""
    return {k: v for k, v in report.items() if k not in NONDETERMINISTIC_KEYS}


def write_report(
    report: dict[str, Any],
    path: str | os.PathLike[str],
    *,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``report`` as canonical JSON to a safe workspace-relative ``path`` (atomically),
    through :func:`evalkit.safety.artifacts.write_artifact`: the path check, then the leak scan
    against ``private`` (``private_texts(evaluation.fixture, evaluation.definitions)``)."""
    from evalkit.safety.artifacts import write_artifact

    text = canonical_json(report)
    return write_artifact(path, text, kind="json", private=private, workspace=workspace)


# --- reading a report (or baseline) back --------------------------------------------------------
# ``role`` names the side in messages ("report", "baseline", "old report", ...).


def read_json_object(path: str | os.PathLike[str], what: str, hint: str) -> dict[str, Any]:
    """The JSON object in the regular file ``path`` (at most ``inputs.MAX_DEPTH`` deep).

    Raises :class:`InputError` ``"{what} {path!r} ...: {reason}; {hint}"`` (the path as
    :func:`evalkit.safety.output.shown_path` shows it) when the file is
    missing, not a regular file (FIFO, device, directory), not UTF-8 JSON, nested too deeply or
    not an object. The message never quotes the file's content.
    """
    where = shown_path(path, label=f"{what} file")  # a token-like file name is not echoed
    try:
        data = read_input_bytes(path)
    except InputFileError as error:
        raise InputError(f"{what} {where} {error.reason}; {hint}") from None
    try:
        value = load_json(data)
    except ValueError as error:
        raise InputError(f"{what} {where} {error}; {hint}") from None
    if not isinstance(value, dict):
        raise InputError(
            f"{what} {where}: expected a JSON object, found {type(value).__name__}; {hint}"
        )
    return value


def read_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report or baseline JSON file (a JSON object); its shape is checked where used
    (:func:`check_report_schema`, :func:`report_means`, ...).

    Raises :class:`InputError` naming the file (and line) when it cannot be read or parsed.
    """
    return read_json_object(
        path,
        "report file",
        "expected a report or baseline JSON file written by evalkit "
        "('evalkit run --output PATH' or 'evalkit baseline FIXTURE --output PATH')",
    )


def check_report_schema(report: Mapping[str, Any], role: str) -> None:
    """Raise InputError unless ``report`` says it has this version's schema."""
    if report.get("schema") != REPORT_SCHEMA:
        raise InputError(
            f"{role}: schema should be {REPORT_SCHEMA!r}, found {short_repr(report.get('schema'))}"
            "; expected a report or baseline written by this version of evalkit ('evalkit run "
            "--output' or 'evalkit baseline')"
        )


def report_means(report: Mapping[str, Any], role: str) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {language or ALL_LANGUAGES: {measure: mean}}}`` from ``summary`` and
    ``summaryByLanguage``, after checking the schema; InputError names the malformed key."""
    check_report_schema(report, role)
    result: dict[str, dict[str, dict[str, float]]] = {}
    overall = _object(report.get("summary"), role, "summary")
    by_language = _object(report.get("summaryByLanguage"), role, "summaryByLanguage")
    for system, measures in overall.items():
        where = f"summary[{_shown(system)}]"
        result[system] = {ALL_LANGUAGES: _mean_table(measures, role, where)}
    for system, languages in by_language.items():
        tables = result.setdefault(system, {})
        for language, measures in _object(
            languages, role, f"summaryByLanguage[{_shown(system)}]"
        ).items():
            where = f"summaryByLanguage[{_shown(system)}][{_shown(language)}]"
            tables[language] = _mean_table(measures, role, where)
    return result


def report_per_query(
    report: Mapping[str, Any], role: str
) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {query_id: {measure: value}}}`` from ``perQuery``.

    A value is checked as :func:`_measure_value` checks it; the place an error names is built
    only for a value that fails (a report holds one value per system, query and measure)."""
    result: dict[str, dict[str, dict[str, float]]] = {}
    for system, queries in _object(report.get("perQuery"), role, "perQuery").items():
        where = f"perQuery[{_shown(system)}]"
        result[system] = {
            query_id: {
                measure: number
                if (number := _valid_measure_value(value, measure)) is not None
                else _measure_value(
                    value, measure, role, f"{where}[{_shown(query_id)}][{_shown(measure)}]"
                )
                for measure, value in _object(values, role, f"{where}[{_shown(query_id)}]").items()
            }
            for query_id, values in _object(queries, role, where).items()
        }
    return result


def _valid_measure_value(value: object, measure: object) -> float | None:
    """``value`` as :func:`_measure_value` accepts it, or None where that raises; no message
    built, for the many values of a valid report."""
    number = finite_number(value)
    return number if number is not None and _in_range(number, measure) else None


def _in_range(number: float, measure: object) -> bool:
    low, high = _range_of(measure) if isinstance(measure, str) else (-math.inf, math.inf)
    return low - RANGE_SLACK <= number <= high + RANGE_SLACK


def report_confidence(
    report: Mapping[str, Any], role: str
) -> tuple[dict[str, dict[str, float]], dict[str, str]] | None:
    """``({system: {query_id: confidence}}, {system: source})`` from ``confidence`` and
    ``confidenceSource`` (source :data:`CONFIDENCE_DECLARED` or :data:`CONFIDENCE_TOP_SCORE`
    for every system of ``confidence``), or None for a report without a ``confidence``
    section (an older evalkit, or a baseline written before baselines kept it). InputError
    for a malformed section (a non-finite confidence, an unknown source)."""
    if report.get("confidence") is None:
        return None
    values = {
        system: {
            query_id: _number(value, role, f"confidence[{_shown(system)}][{_shown(query_id)}]")
            for query_id, value in _object(queries, role, f"confidence[{_shown(system)}]").items()
        }
        for system, queries in _object(report["confidence"], role, "confidence").items()
    }
    declared = _object(report.get("confidenceSource", {}), role, "confidenceSource")
    for system, source in declared.items():
        if source != CONFIDENCE_DECLARED or system not in values:
            raise InputError(
                f"{role}: confidenceSource[{_shown(system)}] should be {CONFIDENCE_DECLARED!r} "
                "for a system of the confidence section; the file was edited or damaged"
            )
    sources = {s: CONFIDENCE_DECLARED if s in declared else CONFIDENCE_TOP_SCORE for s in values}
    return values, sources


def report_query_languages(report: Mapping[str, Any], role: str) -> dict[str, str] | None:
    """``{query_id: language}`` from ``queryLanguages``, or None for a report without it (an
    older evalkit)."""
    if report.get("queryLanguages") is None:
        return None
    languages = _object(report["queryLanguages"], role, "queryLanguages")
    for query_id, language in languages.items():
        if not isinstance(language, str) or _shown(language) == "<key>":
            raise InputError(
                f"{role}: queryLanguages[{_shown(query_id)}] should be a language code; the "
                "file was edited or damaged"
            )
    return dict(languages)


def report_list(report: Mapping[str, Any], key: str, role: str) -> list[Any]:
    """The JSON array under ``key`` (``systems``, ``failures``)."""
    value = report.get(key)
    if not isinstance(value, list):
        raise InputError(
            f"{role}: {key} should be a JSON array, found {_found(value)}; expected a report of "
            f"schema {REPORT_SCHEMA}"
        )
    return value


def report_measure_order(report: Mapping[str, Any]) -> list[str]:
    """The evaluation's measures in order (``settings.measures``; empty when absent)."""
    settings = report.get("settings")
    order = settings.get("measures") if isinstance(settings, dict) else None
    return [m for m in order if isinstance(m, str)] if isinstance(order, list) else []


_NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@=(),'/+-]{0,127}")


@functools.lru_cache(maxsize=1 << 16)
def _shown(key: object) -> str:
    """A key read from a report, as a message may show it: the repr of a name-shaped string
    (system, language, query ID, measure) that does not look like a path, endpoint, secret or
    e-mail address, else ``<key>`` (a report file's content is never echoed otherwise)."""
    if isinstance(key, str) and _NAME_RE.fullmatch(key) and not find_sensitive(key):
        return repr(key)
    return "<key>"


def report_name(value: object) -> str | None:
    """``value`` when it is a name-shaped string that may be printed (see ``_shown``), else
    None."""
    return value if isinstance(value, str) and _shown(value) != "<key>" else None


def short_repr(value: object) -> str:
    """A value for a message: a name-shaped string's repr cut to about 20 characters (see
    ``_shown``), ``a string`` for any other string, else its type."""
    if isinstance(value, str):
        if _shown(value) == "<key>":
            return "a string"
        return repr(value[:19] + "...") if len(value) > 22 else repr(value)
    return _found(value)


def _found(value: object) -> str:
    return "missing" if value is None else type(value).__name__


def _object(value: object, role: str, where: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object whose keys are all names (system, language, query ID,
    measure, ``mean``/``n``); InputError otherwise, never quoting a key that is not a name."""
    if not isinstance(value, dict):
        raise InputError(
            f"{role}: {where} should be a JSON object, found {_found(value)}; expected a report "
            f"of schema {REPORT_SCHEMA}"
        )
    for position, key in enumerate(value, start=1):
        if _shown(key) == "<key>":
            raise InputError(
                f"{role}: {where} key #{position} is not a system, language, query ID or "
                "measure name (or looks like a path, endpoint, secret or e-mail address; it is "
                f"not shown); expected a report of schema {REPORT_SCHEMA}"
            )
    return value


def _number(value: object, role: str, where: str) -> float:
    number = finite_number(value)  # None for an integer too large for a float, too
    if number is None:
        raise InputError(
            f"{role}: {where} should be a finite number; expected a report of schema "
            f"{REPORT_SCHEMA}"
        )
    return number


def _measure_value(value: object, measure: object, role: str, where: str) -> float:
    """A finite number within the measure's range (:func:`evalkit.measures.names.
    measure_range`, with ``RANGE_SLACK`` for float rounding); InputError otherwise."""
    number = _number(value, role, where)
    if not _in_range(number, measure):
        low, high = _range_of(measure) if isinstance(measure, str) else (-math.inf, math.inf)
        raise InputError(
            f"{role}: {where} is {number!r}, outside the range of {_shown(measure)} "
            f"[{low:g}, {high:g}]; the file was edited or damaged: write it again (evalkit "
            "baseline FIXTURE --output PATH, or evalkit run FIXTURE --output PATH)"
        )
    return number


@functools.lru_cache(maxsize=4096)
def _range_of(measure: str) -> tuple[float, float]:
    # imported here: reading a report needs no measures engine (about 90 ms of imports)
    from evalkit.measures.names import measure_range

    return measure_range(measure)


def _mean_table(measures: object, role: str, where: str) -> dict[str, float]:
    return {
        measure: _measure_value(
            _object(entry, role, f"{where}[{_shown(measure)}]").get("mean"),
            measure,
            role,
            f"{where}[{_shown(measure)}].mean",
        )
        for measure, entry in _object(measures, role, where).items()
    }
