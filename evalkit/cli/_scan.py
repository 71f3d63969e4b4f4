"""``evalkit scan FIXTURE FILE...``: the leak scan on any file a user means to publish.

Each file (a notebook export of their own, a CI log, a slide's text) is searched for the
fixture's private text (titles, chunk text, query text, spans) by the rule evalkit's own
artifacts are written under (:mod:`evalkit.safety.privacy`: escapes, encodings and markup
included; evalkit's own words, numbers and markup are not evidence). A report notebook's own
cells are not evidence either, as when ``evalkit report`` scans it: an ``.ipynb`` file's own
cells, an ``.html`` file's ``.ipynb`` of the same name beside it (what ``report`` writes) or
else the default report notebook; ``--notebook`` names another. The file is read as UTF-8 (a
byte that is not becomes U+FFFD, so a binary file is searched for the text it holds), streamed
in blocks: memory stays bounded whatever the file's size. Only IDs are printed, never text.
Exit codes: 0 every file clean, 1 a file holds fixture text, 2 a usage or input error (a
missing fixture or file).

A notebook (``.ipynb``) that holds fixture text is also listed cell by cell (the cells whose
outputs or source hold it); ``evalkit strip FIXTURE NOTEBOOK.ipynb`` removes exactly those
outputs (:mod:`evalkit.report.notebook_leaks`) and writes the notebook back atomically. Exit
codes of ``strip``: 0 the notebook is clean afterwards, 1 fixture text remains (in a cell's
source or the notebook's metadata: edit it by hand), 2 a usage or input error.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli._common import Handler, gc_paused, quoted, shown
from evalkit.errors import InputError, InputFileError

if TYPE_CHECKING:
    from evalkit.safety.privacy import OwnText, PrivateText

__all__: list[str] = []

#: The largest notebook whose cells are read as own text (a larger file is still scanned).
MAX_NOTEBOOK_BYTES = 64 << 20


def add_scan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "scan",
        help="search files you mean to publish (a notebook export, a CI log) for the "
        "fixture's private text; prints IDs only; exit 1 when a file holds any",
        description="The leak scan of evalkit's own reports (evalkit.safety.privacy), on any "
        "file: every copy of 31+ Latin or 11+ Chinese characters of fixture text is found, "
        "escaped or encoded too; text evalkit writes itself, numbers and markup are not "
        "evidence, nor the cells of the report notebook (an .ipynb's own, the .ipynb beside "
        "an .html, or --notebook).",
    )
    p.add_argument("fixture", help="fixture directory whose text is private")
    p.add_argument("files", nargs="+", metavar="FILE", help="files to search")
    p.add_argument(
        "--notebook",
        metavar="PATH",
        help="the report notebook whose cells are the files' own text (default: an .ipynb "
        "file's own cells; for an .html, the .ipynb beside it, else evalkit's report notebook)",
    )
    return _run_scan


def _run_scan(args: argparse.Namespace) -> int:
    from evalkit.safety.inputs import check_regular_file, open_input

    for path in [*args.files, *([args.notebook] if args.notebook else [])]:
        try:  # every file is checked before the scan: a bad one fails first
            check_regular_file(path)
        except InputFileError as error:
            raise InputError(f"file to scan {quoted(path)} {error.reason}") from None
    with gc_paused():
        from evalkit.fixtures import load_fixture
        from evalkit.safety.privacy import find_leaks_in_stream, private_texts

        private = private_texts(load_fixture(args.fixture))
    leaking = 0
    for path in args.files:
        notebook = _own_notebook(path, args.notebook)
        ids: list[str] = []
        for own in _own_texts(notebook):  # none first; then cells; the bare page last
            try:
                with open_input(path) as handle:
                    ids = find_leaks_in_stream(handle, private, own=own())
            except InputFileError as error:
                raise InputError(f"file to scan {quoted(path)} {error.reason}") from None
            if not ids:
                break
        cells = f" (cells of {_notebook_name(notebook)} are own text)" if notebook else ""
        if ids:
            leaking += 1
            print(
                f"fixture text found: {shown(path)}: {len(ids)} object(s): {', '.join(ids)}" + cells
            )
            _print_notebook_cells(path, private)
        else:
            print(f"clean: {shown(path)}{cells}")
    if leaking:
        print(
            f"{leaking} of {len(args.files)} file(s) hold text of the fixture's objects listed "
            "above (IDs only); look each ID up in the fixture and remove its text before "
            "publishing"
        )
        return 1
    return 0


def _own_notebook(path: str, given: str | None) -> str | None:
    """The notebook whose cells are ``path``'s own text (module docstring); None: the default
    report notebook's, for an ``.html``, or none."""
    if given:
        return given
    suffix = Path(path).suffix.lower()
    if suffix == ".ipynb":
        return path
    if suffix in (".html", ".htm"):
        beside = Path(path).with_suffix(".ipynb")
        if beside.is_file():
            return str(beside)
        from evalkit.report import DEFAULT_REPORT_NOTEBOOK

        return str(DEFAULT_REPORT_NOTEBOOK)
    return None


def _notebook_name(notebook: str) -> str:
    """How a printed line names ``notebook``: evalkit's own report notebook by that name (its
    installed path would show the user's home or environment), any other as given."""
    from evalkit.report import DEFAULT_REPORT_NOTEBOOK

    if notebook == str(DEFAULT_REPORT_NOTEBOOK):
        return "evalkit's report notebook"
    return shown(notebook)


def _own_texts(notebook: str | None) -> Iterator[Callable[[], OwnText]]:
    """The own texts to scan with, cheapest first: none; then, with a notebook, its cells and
    skeleton, then those with the page export of its bare copy
    (:func:`evalkit.report.report_own_text`). A notebook that cannot be read as one adds
    nothing.

    Own text only removes evidence (a stretch that is own text is not a leak), so a file found
    clean with less own text is clean with more: the caller stops at the first clean scan, and
    a clean file (the usual case) is scanned once, without reading the notebook or building its
    own text (the notebook's JSON decoded, its cells normalized and its skeleton written: about
    20 ms for evalkit's report notebook, of a command that takes a few tenths of a second)."""
    from evalkit.safety.privacy import NO_OWN_TEXT, OwnText

    yield lambda: NO_OWN_TEXT
    if notebook is None:
        return
    try:
        from evalkit.safety.inputs import load_json, read_input_bytes

        decoded = load_json(read_input_bytes(notebook, max_bytes=MAX_NOTEBOOK_BYTES))
    except (InputFileError, ValueError):
        return
    if not isinstance(decoded, dict) or not isinstance(decoded.get("cells"), list):
        return

    def with_pages() -> OwnText:
        from evalkit.report import report_own_text  # the page export: nbconvert, nbformat

        return report_own_text(decoded)

    # the cells alone are evalkit.report.report_own_text(decoded, pages=False)
    yield lambda: OwnText.of_notebook(decoded)
    yield with_pages


def _print_notebook_cells(path: str, private: list[PrivateText]) -> None:
    """For a notebook (up to ``MAX_NOTEBOOK_BYTES``), the cells that hold fixture text, one
    line each (IDs only)."""
    if not path.lower().endswith(".ipynb") or Path(path).stat().st_size > MAX_NOTEBOOK_BYTES:
        return
    from evalkit.report.notebook_leaks import notebook_leaks

    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        cells = notebook_leaks(text, private)
    except InputError:
        return  # not a notebook after all: the file's line above says enough
    for cell in cells:
        print(f"  {cell.describe()}")


def add_strip(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "strip",
        help="remove the outputs that hold the fixture's private text from a notebook "
        "(the cells `evalkit scan` names), keeping every other output; writes atomically",
        description="Each output of each cell is leak-scanned (evalkit.safety.privacy); the "
        "outputs holding fixture text are removed, every other output, cell and source is "
        "kept. Exit 1 when fixture text remains (in a cell's source: edit it by hand).",
    )
    p.add_argument("fixture", help="fixture directory whose text is private")
    p.add_argument("notebook", metavar="NOTEBOOK.ipynb", help="notebook to strip, in place")
    p.add_argument(
        "--output",
        metavar="PATH",
        help="write the stripped notebook here (workspace-relative) instead of in place",
    )
    return _run_strip


def _run_strip(args: argparse.Namespace) -> int:
    from evalkit.fixtures import load_fixture
    from evalkit.report.notebook_leaks import strip_leaks
    from evalkit.safety.inputs import read_input_bytes
    from evalkit.safety.output import resolve_output_path, write_text_atomic
    from evalkit.safety.privacy import find_leaks, private_texts

    target = args.output or args.notebook
    resolve_output_path(target, suffixes=(".ipynb",))  # a refused path fails before the work
    try:
        data = read_input_bytes(args.notebook)
    except InputFileError as error:
        raise InputError(f"notebook {quoted(args.notebook)} {error.reason}") from None
    private = private_texts(load_fixture(args.fixture))
    try:
        stripped, cells = strip_leaks(data.decode("utf-8", errors="replace"), private)
    except InputError as error:
        raise InputError(f"notebook {quoted(args.notebook)} {error}") from None
    removed = sum(len(cell.outputs) for cell in cells)
    if removed or target != args.notebook:
        write_text_atomic(target, stripped)
    for cell in cells:
        print(f"  {cell.describe()}")
    print(f"stripped {removed} output(s) of {len(cells)} cell(s): {shown(target)}")
    left = find_leaks(stripped, private)
    if left:
        print(
            f"fixture text remains in {shown(target)}: {len(left)} object(s): {', '.join(left)} "
            "(in a cell's source or the notebook's metadata: edit it by hand)"
        )
        return 1
    return 0
