"""Building the privacy-safe report of an ``Evaluation``: :func:`build_report` (IDs, hashes and
aggregates, nothing else) and the hashes it records (:func:`corpus_hash`, the evaluation
definition in parts). The file format itself (schema ``evalkit.report/1``, its keys, the
reader, the deterministic projection, the writer and the machine record) is
:mod:`evalkit.results`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit.fixtures.records import RecordTable
from evalkit.results import (
    CONFIDENCE_DECLARED,
    MEASURES_VERSION,
    REPORT_SCHEMA,
    machine_record,
)
from evalkit.safety.canonical import canonical_hash, string_table_hash

if TYPE_CHECKING:
    from pydantic import BaseModel

    from evalkit.fixtures import Fixture
    from evalkit.run._evaluate import Evaluation

__all__ = ["build_report", "corpus_hash"]


def corpus_hash(fixture: Fixture) -> str:
    """SHA-256 of the canonical form of the fixture's documents and chunks (each a list of
    ``model_dump(mode="json")`` rows); from the columns when both are record tables."""
    documents, chunks = fixture.documents, fixture.chunks
    if isinstance(documents, RecordTable) and isinstance(chunks, RecordTable):
        return string_table_hash({"documents": _columns(documents), "chunks": _columns(chunks)})
    return canonical_hash(
        {"documents": _json_rows(fixture.documents), "chunks": _json_rows(fixture.chunks)}
    )


def _columns(table: RecordTable[Any]) -> dict[str, list[Any]]:
    return {name: table.column(name) for name in table.arrow.column_names}


def _json_rows(items: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """``model_dump(mode="json")`` of each item; read from the columns of a record table."""
    if isinstance(items, RecordTable):
        return items.json_rows()
    return [item.model_dump(mode="json") for item in items]


def _fixture_identity(fixture: Fixture) -> dict[str, Any]:
    """Fixture ID and version, and the chunking policy of an imported fixture (if any)."""
    identity: dict[str, Any] = {"id": fixture.meta.id, "version": fixture.meta.version}
    if fixture.meta.chunking is not None:
        identity["chunking"] = fixture.meta.chunking.model_dump()
    return identity


def _definition_hash(evaluation: Evaluation, corpus: str) -> str:
    fixture = evaluation.fixture
    return canonical_hash(
        {
            "fixture": _fixture_identity(fixture),
            "corpus": corpus,
            "queries": [q.model_dump(mode="json") for q in fixture.queries],
            "settings": _settings(evaluation),
            "systems": list(evaluation.systems),
            "providers": evaluation.definitions,
            # aliases.yaml, when the fixture has one (absent key: hashes of fixtures without
            # a table are unchanged)
            **({"aliases": fixture.aliases.model_dump(mode="json")} if fixture.aliases else {}),
        }
    )


def _definition_parts(evaluation: Evaluation, corpus: str) -> dict[str, Any]:
    """``{shared, systems}``: the parts of the evaluation definition that staleness compares."""
    fixture = evaluation.fixture
    shared = canonical_hash(
        {
            "fixture": _fixture_identity(fixture),
            "corpus": corpus,
            "queries": [q.model_dump(mode="json") for q in fixture.queries],
            "settings": _settings(evaluation),
        }
    )
    systems = {
        name: canonical_hash({"name": name, "definition": evaluation.definitions[name]})
        for name in evaluation.systems
    }
    return {"shared": shared, "systems": systems}


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
    for row in _applicable(evaluation.summary()):
        summary[row["system"]][row["measure"]] = {"mean": float(row["value"]), "n": int(row["n"])}
    by_language: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in evaluation.systems}
    for row in _applicable(evaluation.summary(by=["language"])):
        by_language[row["system"]].setdefault(row["language"], {})[row["measure"]] = {
            "mean": float(row["value"]),
            "n": int(row["n"]),
        }
    per_query: dict[str, dict[str, dict[str, float]]] = {s: {} for s in evaluation.systems}
    for row in _records(evaluation.per_query):
        entry = per_query[row["system"]].setdefault(row["query_id"], {})
        if not math.isnan(row["value"]):  # n/a: left out (module docstring)
            entry[row["measure"]] = float(row["value"])
    confidence: dict[str, dict[str, float]] = {s: {} for s in evaluation.systems}
    confidences = evaluation.confidences()
    values = confidences["confidence"].tolist()
    for system, query_id, value in zip(
        confidences["system"], confidences["query_id"], values, strict=True
    ):
        if math.isfinite(value):  # -inf: no result, never answered (left out)
            confidence[system][query_id] = float(value)
    declared = {
        system: source
        for system, source in evaluation.confidence_sources().items()
        if source == CONFIDENCE_DECLARED
    }
    failures = [
        {
            "system": row["system"],
            "queryId": row["query_id"],
            "language": row["language"],
            "kind": row["kind"],
            "chunkIds": list(row["chunk_ids"]),
        }
        for row in _records(evaluation.failures())
    ]
    latency = {
        row["system"]: (
            {
                "count": int(row["count"]),
                "minMs": float(row["min_ms"]),
                "medianMs": float(row["median_ms"]),
                "p95Ms": float(row["p95_ms"]),
                "maxMs": float(row["max_ms"]),
                "meanMs": float(row["mean_ms"]),
            }
            if row["measured"]
            else {"count": int(row["count"]), "measured": False}  # a run file: not measured
        )
        for row in _records(evaluation.latency_summary())
    }
    return {
        "schema": REPORT_SCHEMA,
        "fixture": {"id": fixture.meta.id, "version": fixture.meta.version},
        "corpusHash": corpus,
        "evaluationDefinitionHash": _definition_hash(evaluation, corpus),
        "providerDefinitionsHash": canonical_hash(evaluation.definitions),
        "definitionHashes": _definition_parts(evaluation, corpus),
        "settings": _settings(evaluation),
        "systems": list(evaluation.systems),
        "summary": summary,
        "summaryByLanguage": by_language,
        "perQuery": per_query,
        "confidence": confidence,
        # only when a system declared its confidences: other reports stay as they were
        **({"confidenceSource": declared} if declared else {}),
        "queryLanguages": {q.id: q.language for q in fixture.queries},
        "failures": failures,
        "systemNotes": {
            s: evaluation.notes[s] for s in evaluation.systems if s in evaluation.notes
        },
        "determinism": {
            "verdict": "deterministic" if evaluation.deterministic else "unchecked",
            "repeats": evaluation.repeats,
        },
        "latency": latency,
        "machine": machine_record(),
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def _applicable(summary: pd.DataFrame) -> list[dict[str, Any]]:
    """The summary rows with a mean: a measure that applies to no query (NaN) is left out."""
    return [row for row in _records(summary) if not math.isnan(row["value"])]
