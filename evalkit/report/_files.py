"""Where the report notebook is: its path alone, without nbformat (``evalkit scan`` of an
``.html`` reads the notebook's cells as own text and needs no more)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_REPORT_NOTEBOOK"]

DEFAULT_REPORT_NOTEBOOK: Final = Path(
    str(resources.files("evalkit.report").joinpath("notebooks", "retrieval_report.ipynb"))
)
"""The report notebook, package data of ``evalkit.report`` (read where the package is installed,
never from a repository checkout)."""
