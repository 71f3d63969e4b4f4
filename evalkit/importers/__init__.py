"""``evalkit import``: turn an existing collection (BEIR, TREC, tables) into a fixture.

Rules of IDs, text, chunking and judgments: :mod:`evalkit.importers.core` and
:mod:`evalkit.fixtures.chunking`; source formats: :mod:`evalkit.importers.sources` and, for the
SMART family (layouts of judgments, fields), :mod:`evalkit.importers.smart`.

The names are resolved on first use (PEP 562), so the command line can build its options from
:class:`TableColumns` without loading the fixture and import machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.fixtures.chunking import ChunkingPolicy
    from evalkit.importers.columns import TableColumns
    from evalkit.importers.core import (
        ImportSummary,
        SourceDocument,
        SourceJudgment,
        SourceQuery,
        fixture_id,
        import_collection,
        locate_answer,
        original_id,
        unpadded,
    )
    from evalkit.importers.smart import QrelsLayout, SmartSource, detect_qrels_layout, smart_source
    from evalkit.importers.sources import beir_source, table_source, trec_source

__all__ = [
    "ChunkingPolicy",
    "ImportSummary",
    "QrelsLayout",
    "SmartSource",
    "SourceDocument",
    "SourceJudgment",
    "SourceQuery",
    "TableColumns",
    "beir_source",
    "detect_qrels_layout",
    "fixture_id",
    "import_collection",
    "locate_answer",
    "original_id",
    "smart_source",
    "table_source",
    "trec_source",
    "unpadded",
]

# public name -> the module that defines it
_MODULE_OF = {
    "ChunkingPolicy": "evalkit.fixtures.chunking",
    **dict.fromkeys(
        (
            "ImportSummary",
            "SourceDocument",
            "SourceJudgment",
            "SourceQuery",
            "fixture_id",
            "import_collection",
            "locate_answer",
            "original_id",
            "unpadded",
        ),
        "evalkit.importers.core",
    ),
    **dict.fromkeys(
        ("QrelsLayout", "SmartSource", "detect_qrels_layout", "smart_source"),
        "evalkit.importers.smart",
    ),
    "TableColumns": "evalkit.importers.columns",
    **dict.fromkeys(("beir_source", "table_source", "trec_source"), "evalkit.importers.sources"),
}


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
