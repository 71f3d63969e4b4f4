"""``evalkit import``: turn an existing collection (BEIR, TREC, tables) into a fixture.

Rules of IDs, text, chunking and judgments: :mod:`evalkit.importers.core` and
:mod:`evalkit.fixtures.chunking`; source formats: :mod:`evalkit.importers.sources`.
"""

from evalkit.fixtures.chunking import ChunkingPolicy
from evalkit.importers.core import (
    ImportSummary,
    SourceDocument,
    SourceJudgment,
    SourceQuery,
    fixture_id,
    import_collection,
    locate_answer,
    original_id,
)
from evalkit.importers.sources import TableColumns, beir_source, table_source, trec_source

__all__ = [
    "ChunkingPolicy",
    "ImportSummary",
    "SourceDocument",
    "SourceJudgment",
    "SourceQuery",
    "TableColumns",
    "beir_source",
    "fixture_id",
    "import_collection",
    "locate_answer",
    "original_id",
    "table_source",
    "trec_source",
]
