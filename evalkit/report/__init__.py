"""The human-facing report and CI outputs, built from an evaluation's tidy frames.

- :mod:`~evalkit.report.notebook`: ``render_report``, the whole pipeline; its parts:
  :mod:`~evalkit.report.parameters` (the notebook's parameters), :mod:`~evalkit.report.kernel`
  (the kernel and papermill's execution), :mod:`~evalkit.report.export` (scrubbing, HTML).
- :mod:`~evalkit.report.tables`, :mod:`~evalkit.report.plots`: the report's tables and figures.
- :mod:`~evalkit.report.verdict`: the verdict before merging (gates, significant changes).
- :mod:`~evalkit.report.ci`: JUnit XML and the Markdown summary of a pull request.
- :mod:`~evalkit.report.render`: escaping at the output boundary (HTML, Markdown, XML, plots).
- :mod:`~evalkit.report.evaluation_files`, :mod:`~evalkit.report.handover`: how the command
  hands an evaluation and precomputed parts to the notebook's kernel.
"""
