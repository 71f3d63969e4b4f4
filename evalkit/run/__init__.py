"""Running systems over a fixture and scoring them: :func:`evaluate` and its
:class:`Evaluation` frames, and the privacy-safe JSON report of an evaluation.

- ``_evaluate``: the one-process evaluation and the :class:`Evaluation` frames.
- ``_systems_run``: one system's run and the merge of runs, shared by the three ways of running
  (in process, forked repeats, Dask).
- ``_parallel``: repeats in forked processes (``evaluate(workers=...)``).
- :mod:`~evalkit.run.distributed`: systems on a Dask cluster (``evaluate(client=...)``, the
  ``dask`` extra: the one module of this package that imports it).
- :mod:`~evalkit.run.drilldown`: one query side by side (``Evaluation.explain``; ``_explain``:
  :func:`explain` on a fixture and rankings); :mod:`~evalkit.run.display`: how an evaluation
  shows itself.
- :mod:`~evalkit.run.report_json`: the privacy-safe JSON report of an evaluation, and the
  readers of its sections that gates and diffs share.

The names are resolved on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.results import read_report, write_report
    from evalkit.run._evaluate import (
        DEFAULT_RANKING_MEASURES,
        Evaluation,
        default_measures,
        evaluate,
    )
    from evalkit.run._explain import explain
    from evalkit.run.drilldown import QueryExplanation
    from evalkit.run.report_json import build_report

__all__ = [
    "DEFAULT_RANKING_MEASURES",
    "Evaluation",
    "QueryExplanation",
    "build_report",
    "default_measures",
    "evaluate",
    "explain",
    "read_report",
    "write_report",
]

_MODULE_OF = {
    **dict.fromkeys(
        ("DEFAULT_RANKING_MEASURES", "Evaluation", "default_measures", "evaluate"),
        "evalkit.run._evaluate",
    ),
    "QueryExplanation": "evalkit.run.drilldown",
    "explain": "evalkit.run._explain",
    "build_report": "evalkit.run.report_json",
    **dict.fromkeys(("read_report", "write_report"), "evalkit.results"),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
