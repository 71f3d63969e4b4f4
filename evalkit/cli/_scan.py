"""``evalkit scan FIXTURE FILE...``: the leak scan on any file a user means to publish.

Each file (a notebook export of their own, a CI log, a slide's text) is searched for the
fixture's private text (titles, chunk text, query text, spans) by the rule evalkit's own
artifacts are written under (:mod:`evalkit.safety.privacy`: escapes, encodings and markup
included; evalkit's own words are not evidence). The file is read as UTF-8 (a byte that is not
becomes U+FFFD, so a binary file is searched for the text it holds). Only IDs are printed,
never text. Exit codes: 0 every file clean, 1 a file holds fixture text, 2 a usage or input
error (a missing fixture or file).
"""

from __future__ import annotations

import argparse

from evalkit.cli._common import Handler, quoted, shown
from evalkit.errors import InputError, InputFileError

__all__: list[str] = []


def add_scan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "scan",
        help="search files you mean to publish (a notebook export, a CI log) for the "
        "fixture's private text; prints IDs only; exit 1 when a file holds any",
        description="The leak scan of evalkit's own reports (evalkit.safety.privacy), on any "
        "file: every copy of 31+ Latin or 11+ Chinese characters of fixture text is found, "
        "escaped or encoded too; text evalkit writes itself is not evidence.",
    )
    p.add_argument("fixture", help="fixture directory whose text is private")
    p.add_argument("files", nargs="+", metavar="FILE", help="files to search")
    return _run_scan


def _run_scan(args: argparse.Namespace) -> int:
    from evalkit.fixtures import load_fixture
    from evalkit.safety.inputs import read_input_bytes
    from evalkit.safety.privacy import find_leaks, private_texts

    texts: list[tuple[str, str]] = []
    for path in args.files:  # every file is read before the scan: a bad one fails first
        try:
            data = read_input_bytes(path)
        except InputFileError as error:
            raise InputError(f"file to scan {quoted(path)} {error.reason}") from None
        texts.append((path, data.decode("utf-8", errors="replace")))
    private = private_texts(load_fixture(args.fixture))
    leaking = 0
    for path, text in texts:
        ids = find_leaks(text, private)
        if ids:
            leaking += 1
            print(f"fixture text found: {shown(path)}: {len(ids)} object(s): {', '.join(ids)}")
        else:
            print(f"clean: {shown(path)}")
    if leaking:
        print(
            f"{leaking} of {len(texts)} file(s) hold text of the fixture's objects listed above "
            "(IDs only); look each ID up in the fixture and remove its text before publishing"
        )
        return 1
    return 0
