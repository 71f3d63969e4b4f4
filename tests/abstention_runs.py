"""JSONL runs for the abstention tests: one hit per query whose score is its confidence."""

from __future__ import annotations

import json
import pathlib
from typing import Any

from evalkit.fixtures import Fixture


def jsonl_run(path: pathlib.Path, fixture: Fixture, score: Any) -> str:
    """Write a JSONL run at ``path``: each query's best judged chunk (else the first chunk) at
    ``score(query)``; returns its ``run:`` spec (the system is named after the file)."""
    first_chunk = fixture.chunks[0].id
    rows = []
    for query in fixture.queries:
        judged = sorted(query.judgments, key=lambda j: -j.grade)
        chunk = judged[0].chunk_id if judged else first_chunk
        rows.append(json.dumps({"query_id": query.id, "chunk_id": chunk, "score": score(query)}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return f"run:{path}"


def separating(query: Any) -> float:
    """1 for an answerable query, 0 for a no-answer one: separates them perfectly."""
    return 1.0 if query.answerable else 0.0
