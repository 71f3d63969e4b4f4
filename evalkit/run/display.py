"""How an :class:`~evalkit.run.Evaluation` shows itself in JupyterLab (``_repr_html_``):
its fixture, systems, k, measures and determinism, then the summary table (mean of every
measure per system, :meth:`~evalkit.run.Evaluation.summary`). IDs, names and numbers only;
every name is HTML-escaped.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.run._evaluate import Evaluation

__all__ = ["evaluation_html"]


def evaluation_html(evaluation: Evaluation) -> str:
    """The HTML summary of ``evaluation`` (module docstring)."""
    e = html.escape
    if evaluation.deterministic:
        determinism = f"deterministic: {evaluation.repeats} repeats gave identical rankings"
    else:
        determinism = "determinism not checked (one run)"
    wide = evaluation.summary().pivot(index="system", columns="measure", values="value")
    wide = wide.reindex(index=list(evaluation.systems))
    wide = wide[[m for m in evaluation.measures if m in wide.columns]]
    table = wide.to_html(float_format=lambda v: f"{v:.4f}", na_rep="n/a", escape=True)
    return (
        f"<div><b>Evaluation</b> of fixture {e(evaluation.fixture.meta.id)} "
        f"v{e(evaluation.fixture.meta.version)}<ul>"
        f"<li>systems: {e(', '.join(evaluation.systems))}</li>"
        f"<li>k = {evaluation.k}; {len(evaluation.fixture.queries)} queries</li>"
        f"<li>measures: {e(', '.join(evaluation.measures))}</li>"
        f"<li>{e(determinism)}</li></ul>"
        f"<p>Mean per system (answerable queries; NoAnswerFP over no-answer queries):</p>"
        f"{table}</div>"
    )
