"""The human-facing report and CI outputs, built from an evaluation's tidy frames.

The command's pipeline is private, its entry points named here: :func:`render_report` runs
the whole of it (``_notebook``) on its parts: the notebook's parameters (``_parameters``), the
kernel and papermill's execution (``_kernel``: :func:`execute_notebook`), scrubbing and the
HTML export (``_export``: :func:`scrub_notebook`, :func:`export_html`).

The modules a report notebook imports are public:

- :mod:`~evalkit.report.tables`, :mod:`~evalkit.report.plots`: the report's tables and figures.
- :mod:`~evalkit.report.verdict`: the verdict before merging (gates, significant changes);
  :mod:`~evalkit.report.verdict_view`: how the notebook shows it.
- :mod:`~evalkit.report.ci`: JUnit XML and the Markdown summary of a pull request.
- :mod:`~evalkit.report.render`: escaping at the output boundary (HTML, Markdown, XML, plots).
- :mod:`~evalkit.report.evaluation_files`, :mod:`~evalkit.report.handover`: how the command
  hands an evaluation and precomputed parts to the notebook's kernel.

The names are resolved on first use (PEP 562): the command line and the notebook's kernel load
papermill, nbconvert and nbformat only when they run or export a notebook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.report._export import (
        STDERR_NOTE as STDERR_NOTE,
        export_html as export_html,
        external_references as external_references,
        machine_paths as machine_paths,
        report_own_text as report_own_text,
        scrub_notebook as scrub_notebook,
    )
    from evalkit.report._files import DEFAULT_REPORT_NOTEBOOK as DEFAULT_REPORT_NOTEBOOK
    from evalkit.report._kernel import execute_notebook as execute_notebook
    from evalkit.report._notebook import (
        EVALUATION_DIR_PARAMETER as EVALUATION_DIR_PARAMETER,
        RenderedReport as RenderedReport,
        check_report_output as check_report_output,
        render_report as render_report,
        write_rendered_report as write_rendered_report,
    )
    from evalkit.report._parameters import (
        check_report_parameters as check_report_parameters,
        coerce_parameters as coerce_parameters,
        notebook_parameters as notebook_parameters,
    )
    from evalkit.report.ci import (
        gates_junit as gates_junit,
        gates_markdown as gates_markdown,
        probes_junit as probes_junit,
        probes_markdown as probes_markdown,
    )
    from evalkit.report.verdict import Verdict as Verdict, build_verdict as build_verdict


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
