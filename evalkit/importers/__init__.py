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
    from evalkit.fixtures.chunking import ChunkingPolicy as ChunkingPolicy
    from evalkit.importers.columns import TableColumns as TableColumns
    from evalkit.importers.core import (
        ImportSummary as ImportSummary,
        SourceDocument as SourceDocument,
        SourceJudgment as SourceJudgment,
        SourceQuery as SourceQuery,
        fixture_id as fixture_id,
        import_collection as import_collection,
        locate_answer as locate_answer,
        original_id as original_id,
        unpadded as unpadded,
    )
    from evalkit.importers.smart import (
        QrelsLayout as QrelsLayout,
        SmartSource as SmartSource,
        detect_qrels_layout as detect_qrels_layout,
        smart_source as smart_source,
    )
    from evalkit.importers.sources import (
        beir_source as beir_source,
        table_source as table_source,
        trec_source as trec_source,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
