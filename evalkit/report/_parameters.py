"""The report notebook's file and its parameters.

- **The notebook.** :data:`DEFAULT_REPORT_NOTEBOOK` is the repository's report notebook; a
  notebook that is missing or is no Jupyter notebook is an :class:`InputError` naming its
  path relative to the working directory (else its file name only).
- **Parameters** are those of the notebook's cell tagged ``parameters``
  (:func:`notebook_parameters`); a value given as text (``-p NAME VALUE`` on the command line)
  is converted to the type of the default value (:func:`coerce_parameters`).
  :func:`check_report_parameters` checks their values before the notebook runs.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat

from evalkit.errors import InputError, UnknownNameError
from evalkit.registry import did_you_mean
from evalkit.report._files import DEFAULT_REPORT_NOTEBOOK
from evalkit.report._nbformat import NBFORMAT
from evalkit.safety.inputs import find_input
from evalkit.safety.output import shown_path

__all__ = [
    "DEFAULT_REPORT_NOTEBOOK",
    "check_report_parameters",
    "coerce_parameters",
    "notebook_label",
    "notebook_parameters",
    "read_notebook",
    "unknown_parameter_error",
]


def notebook_parameters(notebook: str | os.PathLike[str]) -> dict[str, Any]:
    """Name -> default value of each assignment in the notebook's cell tagged ``parameters``.

    Raises :class:`InputError` when the notebook cannot be read, has no ``parameters`` cell, or
    a default is not a Python literal.
    """
    nb = read_notebook(notebook)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise InputError(
            f"notebook {notebook_label(notebook)!r} has no cell tagged 'parameters'; tag the cell "
            "holding the parameter assignments (View > Cell metadata in JupyterLab)"
        )
    defaults: dict[str, Any] = {}
    try:
        tree = ast.parse(cells[0].source)
    except SyntaxError as error:
        raise InputError(
            f"notebook {notebook_label(notebook)!r}: the parameters cell is not valid Python "
            f"(line {error.lineno})"
        ) from None
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or node.value is None:
                    continue
                try:
                    defaults[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise InputError(
                        f"notebook {notebook_label(notebook)!r}: parameter {target.id!r} (line "
                        f"{node.lineno}) is not a literal; expected a string, number or bool"
                    ) from None
    return defaults


def coerce_parameters(
    values: Sequence[tuple[str, str]], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Convert ``(name, text)`` pairs to the type of each parameter's default value.

    Booleans accept ``true/false/yes/no/1/0`` (any case); ints and floats their Python syntax;
    strings are taken as they are. Raises :class:`UnknownNameError` for a name the notebook
    does not declare and :class:`InputError` for a value of the wrong type. Later pairs win.
    """
    result: dict[str, Any] = {}
    known = sorted(defaults)
    for name, text in values:
        if name not in defaults:
            raise unknown_parameter_error(name, known)
        result[name] = _coerce(name, text, defaults[name])
    return result


def unknown_parameter_error(name: str, known: list[str]) -> UnknownNameError:
    """The error for a parameter the notebook does not declare (``known``: sorted names)."""
    return UnknownNameError(
        f"unknown notebook parameter {name!r}; the notebook declares: "
        f"{', '.join(known) or 'none'}." + did_you_mean(name, known)
    )


def _coerce(name: str, text: str, default: Any) -> Any:
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise InputError(
            f"notebook parameter {name!r} expects true or false, found {text!r}; "
            f"e.g. -p {name} false"
        )
    for kind, label in ((int, "an integer"), (float, "a number")):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise InputError(
                    f"notebook parameter {name!r} expects {label}, found {text!r}; "
                    f"e.g. -p {name} {default!r}"
                ) from None
    return text


def check_report_parameters(
    merged: Mapping[str, Any],
    given: Mapping[str, Any],
    systems: Sequence[str],
    *,
    query_ids: Collection[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Check the report parameters before the notebook runs; ``given`` with ``base_system``
    settled.

    ``merged`` holds every parameter (defaults and ``given``), ``systems`` the names of the
    systems the ``systems`` parameter resolves to, in order. Rules: ``k`` is an integer >= 1;
    ``n_resamples`` >= 1 and ``worst`` and ``seed`` >= 0 when declared; ``base_system`` (a
    name or a spec of ``systems``) must be one of the systems. When ``base_system`` was not
    given and its default is not among the systems, the first system is the base. With the
    fixture's ``query_ids``, a ``query_id`` to drill into must be one of them; with the
    notebook's ``workdir``, a given ``baseline`` or ``gates`` must be an existing file and a given
    ``probes`` an existing folder there. Raises :class:`InputError` saying which parameter is
    wrong and what is expected.
    """
    from evalkit.safety.names import safe_id  # not at import: the kernel starts first

    result = dict(given)
    query_id = str(merged.get("query_id") or "")
    if query_ids is not None and query_id and query_id not in query_ids:
        shown = repr(query_id) if safe_id(query_id) else "(not shown: no fixture ID)"
        raise InputError(
            f"notebook parameter query_id {shown} is not a query of the fixture; give one of "
            "its query IDs, or leave query_id empty"
        )
    if workdir is not None:
        for name, folder in (
            ("baseline", False),
            ("gates", False),
            ("history", False),
            ("probes", True),
        ):
            value = str(given.get(name) or "")  # a default may be absent: the notebook skips it
            if not value:
                continue
            try:
                found = find_input(value, base=workdir)
            except InputError as error:
                raise InputError(f"notebook parameter {name}: {error}") from None
            if folder != found.is_dir():
                raise InputError(
                    f"notebook parameter {name} {shown_path(value)} is not a "
                    f"{'folder' if folder else 'file'}; expected "
                    f"{'a probe fixture folder' if folder else 'a file'}"
                )
    if str(merged.get("measures") or ""):
        from evalkit.errors import MeasureError
        from evalkit.measures.aliases import measure_list

        try:
            measure_list(str(merged["measures"]))
        except MeasureError as error:
            raise InputError(f"notebook parameter measures: {error}") from None
    for name, minimum in (("k", 1), ("n_resamples", 1), ("worst", 0), ("seed", 0)):
        if name not in merged:
            continue
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InputError(
                f"notebook parameter {name!r} must be an integer >= {minimum}, found {value!r}; "
                f"e.g. -p {name} {max(minimum, 5)}"
            )
    if "base_system" in merged and systems:
        specs = [s.strip() for s in str(merged.get("systems", "")).split(",") if s.strip()]
        by_spec = dict(zip(specs, systems, strict=False))
        base = str(merged["base_system"]).strip()
        if base in systems:
            pass
        elif base in by_spec:
            result["base_system"] = by_spec[base]
        elif "base_system" not in given:
            result["base_system"] = systems[0]
        else:
            raise InputError(
                f"notebook parameter base_system {base!r} is not among the systems of this "
                f"report ({', '.join(systems)}); every other system is compared with the base, "
                f"so choose one of them, e.g. -p base_system {systems[0]}"
            )
    return result


def read_notebook(notebook: str | os.PathLike[str]) -> nbformat.NotebookNode:
    try:
        notebook_node: nbformat.NotebookNode = NBFORMAT.read(os.fspath(notebook), as_version=4)
        return notebook_node
    except FileNotFoundError:
        raise InputError(
            f"notebook {notebook_label(notebook)!r} does not exist; expected an .ipynb file such "
            "as the one 'evalkit notebook --output report.ipynb' writes"
        ) from None
    except (OSError, ValueError) as error:
        raise InputError(
            f"notebook {notebook_label(notebook)!r} cannot be read as a Jupyter notebook "
            f"({type(error).__name__})"
        ) from None


def notebook_label(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when inside it, else its file name only."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.name
