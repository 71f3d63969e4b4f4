"""The column names of ``evalkit import table`` (a light module: the command line builds its
options from it)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TableColumns"]


@dataclass(frozen=True)
class TableColumns:
    """Column names of the three tables (``language``/``title``/``grade``/``answers``: empty
    means absent; a missing grade column means grade 1)."""

    doc_id: str = "doc_id"
    doc_text: str = "text"
    doc_title: str = ""
    doc_language: str = ""
    query_id: str = "query_id"
    query_text: str = "text"
    query_language: str = ""
    judgment_query: str = "query_id"
    judgment_doc: str = "doc_id"
    judgment_grade: str = ""
    judgment_answers: str = ""
