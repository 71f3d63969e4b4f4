"""nbformat, typed once: its functions carry no type hints, so strict mypy would refuse each
call; the modules of this package call them through :data:`NBFORMAT` (``Any``) and keep
``nbformat.NotebookNode`` for their annotations."""

from __future__ import annotations

from typing import Any

import nbformat

__all__ = ["NBFORMAT"]

NBFORMAT: Any = nbformat
