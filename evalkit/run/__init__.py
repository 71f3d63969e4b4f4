"""Running systems over a fixture and scoring them: :func:`~evalkit.run.evaluate.evaluate`.

- :mod:`~evalkit.run.evaluate`: the one-process evaluation and the :class:`Evaluation` frames.
- :mod:`~evalkit.run.systems_run`: one system's run and the merge of runs, shared by the three
  ways of running (in process, forked repeats, Dask).
- :mod:`~evalkit.run.parallel`: repeats in forked processes.
- :mod:`~evalkit.run.distributed`: systems and scoring on a Dask cluster (the ``dask`` extra).
- :mod:`~evalkit.run.report_json`: the privacy-safe JSON report of an evaluation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.run.evaluate import Evaluation, evaluate
    from evalkit.run.report_json import build_report, read_report, write_report

__all__ = ["Evaluation", "build_report", "evaluate", "read_report", "write_report"]

_MODULE_OF = {
    "Evaluation": "evalkit.run.evaluate",
    "evaluate": "evalkit.run.evaluate",
    "build_report": "evalkit.run.report_json",
    "read_report": "evalkit.run.report_json",
    "write_report": "evalkit.run.report_json",
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
