"""The privacy-safe report: IDs, hashes and aggregates of an ``Evaluation``, nothing else.

Schema ``evalkit.report/1`` (keys in camelCase)::

    schema                    "evalkit.report/1"
    fixture                   {id, version}
    corpusHash                SHA-256 of the canonical documents and chunks
    evaluationDefinitionHash  SHA-256 of fixture ID/version, the corpus hash, queries (text and
                              judgments), settings (k, repeats, measures), systems, provider
                              definitions and the measures version
    providerDefinitionsHash   SHA-256 of the systems' definitions
    settings                  {k, repeats, measures, measuresVersion}
    systems                   system names, in evaluation order
    summary                   {system: {measure: {mean, n}}}
    summaryByLanguage         {system: {language: {measure: {mean, n}}}}
    perQuery                  {system: {query_id: {measure: value}}}
    failures                  [{system, queryId, language, kind, chunkIds}]
    determinism               {verdict: "deterministic" | "unchecked", repeats}
    latency                   {system: {count, minMs, medianMs, p95Ms, maxMs, meanMs}}
    gates                     (only from ``evalkit gate --output``) the gate results

Everything but ``latency`` is the deterministic projection: byte-identical across runs of the
same evaluation (``deterministic_projection``). No query text, titles, chunk text, spans,
snippets, paths, endpoints, model names, credentials or vectors are included; definitions are
only ever hashed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit.canonical import canonical_hash, canonical_json
from evalkit.output import write_text_atomic

if TYPE_CHECKING:
    from pathlib import Path

    from evalkit.evaluate import Evaluation
    from evalkit.fixtures import Fixture

__all__ = [
    "MEASURES_VERSION",
    "REPORT_SCHEMA",
    "build_report",
    "corpus_hash",
    "deterministic_projection",
    "write_report",
]

REPORT_SCHEMA = "evalkit.report/1"
# Bump when a measure's definition changes, so old baselines become stale instead of wrong.
MEASURES_VERSION = "1"
NONDETERMINISTIC_KEYS = frozenset({"latency"})


def corpus_hash(fixture: Fixture) -> str:
    """SHA-256 of the canonical form of the fixture's documents and chunks."""
    return canonical_hash(
        {
            "documents": [d.model_dump(mode="json") for d in fixture.documents],
            "chunks": [c.model_dump(mode="json") for c in fixture.chunks],
        }
    )


def _definition_hash(evaluation: Evaluation, corpus: str) -> str:
    fixture = evaluation.fixture
    return canonical_hash(
        {
            "fixture": {"id": fixture.meta.id, "version": fixture.meta.version},
            "corpus": corpus,
            "queries": [q.model_dump(mode="json") for q in fixture.queries],
            "settings": _settings(evaluation),
            "systems": list(evaluation.systems),
            "providers": evaluation.definitions,
        }
    )


def _settings(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "k": evaluation.k,
        "repeats": evaluation.repeats,
        "measures": list(evaluation.measures),
        "measuresVersion": MEASURES_VERSION,
    }


def build_report(evaluation: Evaluation) -> dict[str, Any]:
    """The report dict of ``evaluation`` (schema in the module docstring)."""
    fixture = evaluation.fixture
    corpus = corpus_hash(fixture)  # hashed once: it is also part of the definition hash
    summary: dict[str, dict[str, Any]] = {s: {} for s in evaluation.systems}
    for row in _records(evaluation.summary()):
        summary[row["system"]][row["measure"]] = {"mean": float(row["value"]), "n": int(row["n"])}
    by_language: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in evaluation.systems}
    for row in _records(evaluation.summary(by=["language"])):
        by_language[row["system"]].setdefault(row["language"], {})[row["measure"]] = {
            "mean": float(row["value"]),
            "n": int(row["n"]),
        }
    per_query: dict[str, dict[str, dict[str, float]]] = {s: {} for s in evaluation.systems}
    for row in _records(evaluation.per_query):
        per_query[row["system"]].setdefault(row["query_id"], {})[row["measure"]] = float(
            row["value"]
        )
    failures = [
        {
            "system": row["system"],
            "queryId": row["query_id"],
            "language": row["language"],
            "kind": row["kind"],
            "chunkIds": row["chunk_ids"].split(",") if row["chunk_ids"] else [],
        }
        for row in _records(evaluation.failures())
    ]
    latency = {
        row["system"]: {
            "count": int(row["count"]),
            "minMs": float(row["min_ms"]),
            "medianMs": float(row["median_ms"]),
            "p95Ms": float(row["p95_ms"]),
            "maxMs": float(row["max_ms"]),
            "meanMs": float(row["mean_ms"]),
        }
        for row in _records(evaluation.latency_summary())
    }
    return {
        "schema": REPORT_SCHEMA,
        "fixture": {"id": fixture.meta.id, "version": fixture.meta.version},
        "corpusHash": corpus,
        "evaluationDefinitionHash": _definition_hash(evaluation, corpus),
        "providerDefinitionsHash": canonical_hash(evaluation.definitions),
        "settings": _settings(evaluation),
        "systems": list(evaluation.systems),
        "summary": summary,
        "summaryByLanguage": by_language,
        "perQuery": per_query,
        "failures": failures,
        "determinism": {
            "verdict": "deterministic" if evaluation.deterministic else "unchecked",
            "repeats": evaluation.repeats,
        },
        "latency": latency,
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def deterministic_projection(report: dict[str, Any]) -> dict[str, Any]:
    """The report without its wall-clock sections (``latency``)."""
    return {k: v for k, v in report.items() if k not in NONDETERMINISTIC_KEYS}


def write_report(
    report: dict[str, Any],
    path: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``report`` as canonical JSON to a safe workspace-relative ``path`` (atomically)."""
    return write_text_atomic(path, canonical_json(report), workspace=workspace)
