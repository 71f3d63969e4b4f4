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
    from evalkit.results import read_report as read_report, write_report as write_report
    from evalkit.run._evaluate import (
        DEFAULT_RANKING_MEASURES as DEFAULT_RANKING_MEASURES,
        Evaluation as Evaluation,
        default_measures as default_measures,
        evaluate as evaluate,
    )
    from evalkit.run._explain import explain as explain
    from evalkit.run.drilldown import QueryExplanation as QueryExplanation
    from evalkit.run.report_json import build_report as build_report


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
