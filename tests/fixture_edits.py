"""Edits of the committed fixture for the fixture diff and version-rule tests.

Each edit takes the fixture as plain data (``Fixture.model_dump``) and changes it in place; the
result is rebuilt with ``Fixture.model_validate`` and must still pass ``validate_fixture``, so
the edited copy is a fixture a labeller could commit.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.fixtures import Fixture, dump_fixture, load_fixture, validate_fixture

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"

Data = dict[str, Any]
Edit = Callable[[Data], None]


def committed() -> Fixture:
    """The committed fixture, freshly loaded."""
    return load_fixture(COMMITTED)


def edited(base: Fixture, *edits: Edit) -> Fixture:
    """``base`` after ``edits``, checked to be a valid fixture."""
    data = base.model_dump(exclude={"path"})
    for edit in edits:
        edit(data)
    fixture = Fixture.model_validate(data)
    problems = validate_fixture(fixture)
    if problems:
        raise AssertionError(f"the edit made an invalid fixture: {problems}")
    return fixture


def write_copy(fixture: Fixture, directory: Path) -> Path:
    """``fixture`` written as a fixture directory (with the committed LICENSE)."""
    dump_fixture(fixture, directory)
    shutil.copy(COMMITTED / "LICENSE", directory / "LICENSE")
    return directory


def _by_id(items: list[Data], object_id: str) -> Data:
    return next(item for item in items if item["id"] == object_id)


def query(data: Data, query_id: str) -> Data:
    return _by_id(data["queries"], query_id)


def chunk(data: Data, chunk_id: str) -> Data:
    return _by_id(data["chunks"], chunk_id)


def document(data: Data, document_id: str) -> Data:
    return _by_id(data["documents"], document_id)


def judgment(data: Data, query_id: str, chunk_id: str) -> Data:
    return next(j for j in query(data, query_id)["judgments"] if j["chunk_id"] == chunk_id)


def set_version(version: str) -> Edit:
    def edit(data: Data) -> None:
        data["meta"]["version"] = version

    return edit


def add_query(data: Data) -> None:
    """A new answerable English query judging one chunk with one verbatim span."""
    text = chunk(data, "chunk-civic-01-03")["text"]
    data["queries"] = [
        *data["queries"],
        {
            "id": "q-en-900",
            "language": "en",
            "text": "Where can I replace a lost pass?",
            "tags": (),
            "judgments": [
                {
                    "chunk_id": "chunk-civic-01-03",
                    "grade": 3,
                    "spans": [{"text": text[:40], "start": None, "end": None}],
                }
            ],
        },
    ]


def remove_query(data: Data) -> None:
    """Remove a no-answer English query (English keeps six more)."""
    data["queries"] = [q for q in data["queries"] if q["id"] != "q-en-045"]


def regrade_judgment(data: Data) -> None:
    """q-en-030's grade-2 judgment becomes grade 1."""
    judgment(data, "q-en-030", "chunk-clinic-03-03")["grade"] = 1


def remove_judgment(data: Data) -> None:
    """Remove q-en-030's grade-1 judgment (two remain, so it stays multi-relevant)."""
    q = query(data, "q-en-030")
    q["judgments"] = [j for j in q["judgments"] if j["chunk_id"] != "chunk-clinic-03-01"]


def add_judgment(data: Data) -> None:
    """q-en-001 also judges chunk-ferry-01-02 (grade 1, one span)."""
    text = chunk(data, "chunk-ferry-01-02")["text"]
    q = query(data, "q-en-001")
    span = {"text": text[4:30], "start": 4, "end": 30}
    q["judgments"] = [
        *q["judgments"],
        {"chunk_id": "chunk-ferry-01-02", "grade": 1, "spans": [span]},
    ]


def move_span(data: Data) -> None:
    """q-en-001's span loses its first word: 'the first boat ...' -> 'first boat ...'."""
    span = judgment(data, "q-en-001", "chunk-ferry-01-01")["spans"][0]
    if not span["text"].startswith("the "):
        raise AssertionError("the committed span changed; update this edit")
    span["text"] = span["text"][len("the ") :]


def add_span(data: Data) -> None:
    """q-en-003's judgment gets a third span: the chunk's first twelve characters."""
    j = judgment(data, "q-en-003", "chunk-ferry-01-03")
    text = chunk(data, "chunk-ferry-01-03")["text"]
    j["spans"] = [*j["spans"], {"text": text[:12], "start": 0, "end": 12}]


def remove_span(data: Data) -> None:
    """q-en-003's judgment keeps only its first span."""
    j = judgment(data, "q-en-003", "chunk-ferry-01-03")
    j["spans"] = j["spans"][:1]


def fix_text_after_spans(data: Data) -> None:
    """A typo-style fix at the very end of a judged chunk: no span moves."""
    c = chunk(data, "chunk-ferry-01-01")
    c["text"] = c["text"] + " Times may change."


def fix_text_before_spans(data: Data) -> None:
    """Text inserted at the start of a judged chunk: its span (no offsets) moves."""
    c = chunk(data, "chunk-ferry-01-01")
    c["text"] = "Note: " + c["text"]
