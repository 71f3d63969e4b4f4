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
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli._common import Handler, quoted, shown
from evalkit.errors import InputError, InputFileError

if TYPE_CHECKING:
    from evalkit.safety.privacy import OwnText

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
    from evalkit.fixtures import load_fixture
    from evalkit.safety.inputs import check_regular_file, open_input
    from evalkit.safety.privacy import find_leaks_in_stream, private_texts

    for path in [*args.files, *([args.notebook] if args.notebook else [])]:
        try:  # every file is checked before the scan: a bad one fails first
            check_regular_file(path)
        except InputFileError as error:
            raise InputError(f"file to scan {quoted(path)} {error.reason}") from None
    private = private_texts(load_fixture(args.fixture))
    leaking = 0
    for path in args.files:
        notebook = _own_notebook(path, args.notebook)
        ids: list[str] = []
        for own in _own_texts(notebook):  # cells first; the bare page only when they fall short
            try:
                with open_input(path) as handle:
                    ids = find_leaks_in_stream(handle, private, own=own())
            except InputFileError as error:
                raise InputError(f"file to scan {quoted(path)} {error.reason}") from None
            if not ids:
                break
        cells = f" (cells of {shown(notebook)} are own text)" if notebook else ""
        if ids:
            leaking += 1
            print(
                f"fixture text found: {shown(path)}: {len(ids)} object(s): {', '.join(ids)}" + cells
            )
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


def _own_texts(notebook: str | None) -> list[Callable[[], OwnText]]:
    """The own texts to scan with, cheapest first: none; or the notebook's cells and skeleton,
    then those with the page export of its bare copy (:func:`evalkit.report.report_own_text`).
    A notebook that cannot be read as one adds nothing."""
    from evalkit.safety.privacy import NO_OWN_TEXT

    if notebook is None:
        return [lambda: NO_OWN_TEXT]
    try:
        from evalkit.safety.inputs import load_json, read_input_bytes

        decoded = load_json(read_input_bytes(notebook, max_bytes=MAX_NOTEBOOK_BYTES))
    except (InputFileError, ValueError):
        return [lambda: NO_OWN_TEXT]
    if not isinstance(decoded, dict) or not isinstance(decoded.get("cells"), list):
        return [lambda: NO_OWN_TEXT]
    from evalkit.report import report_own_text

    return [
        lambda: report_own_text(decoded, pages=False),
        lambda: report_own_text(decoded),
    ]
