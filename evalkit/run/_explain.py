"""``evalkit.explain``: the drill-down of one query for rankings made outside
:func:`~evalkit.run.evaluate` (:mod:`evalkit.run.drilldown` shows it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalkit.run._evaluate import Evaluation
from evalkit.run.drilldown import QueryExplanation, explain_query

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.fixtures import Fixture

__all__ = ["explain"]


def explain(
    fixture: Fixture | str | os.PathLike[str],
    rankings: pd.DataFrame,
    query_id: str,
    systems: Sequence[str] | None = None,
    *,
    k: int | None = None,
    measures: Sequence[str] | None = None,
    redact: bool = False,
) -> QueryExplanation:
    """The drill-down of ``query_id`` for rankings made outside :func:`~evalkit.run.evaluate`.

    ``rankings`` has columns ``query_id``, ``chunk_id`` (or ``doc_id``, as
    :func:`~evalkit.formats.read_run` reads a run file) and ``score``, optionally ``system``
    (default: one system, ``run``) and ``rank`` (default: the row order within each query);
    it is scored as :meth:`Evaluation.from_rankings <evalkit.run.Evaluation.from_rankings>`
    does (``k``: the deepest rank when None; ``measures``: the defaults at ``k``).
    """
    evaluation = Evaluation.from_rankings(fixture, rankings, k=k, measures=measures)
    return explain_query(evaluation, query_id, systems, redact=redact)
