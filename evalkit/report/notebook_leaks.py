"""Fixture text in a saved notebook's outputs: which cells hold it (``evalkit scan``) and the
same notebook without those outputs (``evalkit strip``).

A notebook explored with ``redact=False`` (``evaluation.explain(...)``, the report notebook's
drill-down) keeps the query and chunk text in its saved outputs. Each output of each code cell
is searched on its own by the leak scan (:func:`evalkit.safety.privacy.find_leaks`: escapes,
encodings and text in PNG chunks included), as its nbformat JSON; when a cell's outputs hold
fixture text only together (a text split across two outputs), all its outputs count.
Stripping removes exactly the outputs that hold fixture text and keeps every other output,
cell, source and metadata as it was. Fixture text in a cell's *source* (typed by hand) is
reported, never removed: only its author can rewrite it. Only IDs are reported, never text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalkit.errors import InputError
from evalkit.report._nbformat import NBFORMAT
from evalkit.safety.privacy import PrivateText, find_leaks

__all__ = ["CellLeak", "notebook_leaks", "strip_leaks"]


@dataclass(frozen=True)
class CellLeak:
    """A cell that holds fixture text: its position (``index``, 0-based) and ``cell_id``, the
    positions of its ``outputs`` that hold it, whether its ``source`` does, and the fixture
    objects found (``object_ids``, e.g. ``chunk:c-en-1``)."""

    index: int
    cell_id: str | None
    outputs: tuple[int, ...]
    source: bool
    object_ids: tuple[str, ...]

    def describe(self) -> str:
        """One line, IDs only: ``cell 7 (id drilldown): outputs 1, 2: chunk:a, query:q``."""
        where = [f"outputs {', '.join(str(o + 1) for o in self.outputs)}"] if self.outputs else []
        if self.source:
            where.append("source (edit it by hand)")
        name = f" (id {self.cell_id})" if self.cell_id else ""
        return f"cell {self.index + 1}{name}: {'; '.join(where)}: {', '.join(self.object_ids)}"


def _read(text: str) -> Any:
    try:
        return NBFORMAT.reads(text, as_version=4)
    except Exception as error:  # nbformat raises several kinds (JSON, validation)
        raise InputError(
            f"is not a Jupyter notebook nbformat can read ({type(error).__name__})"
        ) from None


def _output_text(output: Any) -> str:
    return json.dumps(output, ensure_ascii=False)


def _cell_leak(index: int, cell: Any, private: tuple[PrivateText, ...]) -> CellLeak | None:
    found: set[str] = set()
    leaking: list[int] = []
    outputs = cell.get("outputs", []) if cell.get("cell_type") == "code" else []
    for position, output in enumerate(outputs):
        ids = find_leaks(_output_text(output), private)
        if ids:
            leaking.append(position)
            found.update(ids)
    if outputs and not leaking:
        together = find_leaks("\n".join(_output_text(o) for o in outputs), private)
        if together:  # only the outputs together hold it: all of them count
            leaking = list(range(len(outputs)))
            found.update(together)
    in_source = find_leaks(str(cell.get("source", "")), private)
    found.update(in_source)
    if not found:
        return None
    cell_id = cell.get("id")
    return CellLeak(
        index,
        str(cell_id) if cell_id else None,
        tuple(leaking),
        bool(in_source),
        tuple(sorted(found)),
    )


def notebook_leaks(text: str, private: Iterable[PrivateText]) -> list[CellLeak]:
    """The cells of the notebook ``text`` (its JSON) that hold fixture text, in order.
    Raises ``InputError`` when ``text`` is not a notebook."""
    notebook = _read(text)
    texts = tuple(private)
    leaks = (_cell_leak(i, cell, texts) for i, cell in enumerate(notebook.cells))
    return [leak for leak in leaks if leak is not None]


def strip_leaks(text: str, private: Iterable[PrivateText]) -> tuple[str, list[CellLeak]]:
    """The notebook ``text`` without the outputs that hold fixture text (module docstring),
    as nbformat writes it, and the cells found (:func:`notebook_leaks`). The result is
    validated by nbformat."""
    notebook = _read(text)
    texts = tuple(private)
    leaks = [
        leak
        for leak in (_cell_leak(i, cell, texts) for i, cell in enumerate(notebook.cells))
        if leak is not None
    ]
    for leak in leaks:
        cell = notebook.cells[leak.index]
        removed = set(leak.outputs)
        if removed:
            cell.outputs = [o for i, o in enumerate(cell.outputs) if i not in removed]
    NBFORMAT.validate(notebook)
    return NBFORMAT.writes(notebook), leaks
