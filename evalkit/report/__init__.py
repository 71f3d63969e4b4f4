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
        STDERR_NOTE,
        export_html,
        external_references,
        machine_paths,
        report_own_text,
        scrub_notebook,
    )
    from evalkit.report._kernel import execute_notebook
    from evalkit.report._notebook import (
        EVALUATION_DIR_PARAMETER,
        RenderedReport,
        check_report_output,
        render_report,
        write_rendered_report,
    )
    from evalkit.report._parameters import (
        DEFAULT_REPORT_NOTEBOOK,
        check_report_parameters,
        coerce_parameters,
        notebook_parameters,
    )
    from evalkit.report.ci import gates_junit, gates_markdown, probes_junit, probes_markdown
    from evalkit.report.verdict import Verdict, build_verdict

__all__ = [
    "DEFAULT_REPORT_NOTEBOOK",
    "EVALUATION_DIR_PARAMETER",
    "STDERR_NOTE",
    "RenderedReport",
    "Verdict",
    "build_verdict",
    "check_report_output",
    "check_report_parameters",
    "coerce_parameters",
    "execute_notebook",
    "export_html",
    "external_references",
    "gates_junit",
    "gates_markdown",
    "machine_paths",
    "notebook_parameters",
    "probes_junit",
    "probes_markdown",
    "render_report",
    "report_own_text",
    "scrub_notebook",
    "write_rendered_report",
]

# public name -> the module that defines it
_MODULE_OF = {
    **dict.fromkeys(
        (
            "STDERR_NOTE",
            "export_html",
            "external_references",
            "machine_paths",
            "report_own_text",
            "scrub_notebook",
        ),
        "evalkit.report._export",
    ),
    "execute_notebook": "evalkit.report._kernel",
    **dict.fromkeys(
        (
            "EVALUATION_DIR_PARAMETER",
            "RenderedReport",
            "check_report_output",
            "render_report",
            "write_rendered_report",
        ),
        "evalkit.report._notebook",
    ),
    **dict.fromkeys(
        (
            "DEFAULT_REPORT_NOTEBOOK",
            "check_report_parameters",
            "coerce_parameters",
            "notebook_parameters",
        ),
        "evalkit.report._parameters",
    ),
    **dict.fromkeys(
        ("gates_junit", "gates_markdown", "probes_junit", "probes_markdown"), "evalkit.report.ci"
    ),
    **dict.fromkeys(("Verdict", "build_verdict"), "evalkit.report.verdict"),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
