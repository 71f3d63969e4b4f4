"""``evalkit hook scan|validate|gates-check FILE...``: the pre-commit hooks of
``.pre-commit-hooks.yaml`` (pre-commit passes the staged files that match each hook).

- ``scan``: every staged file that is not a fixture's own data (a notebook, a report, a CI
  file) is searched for the private text of every fixture in the repository (each folder
  holding ``fixture.yaml`` below the working directory, or those given with ``--fixture``).
- ``validate``: each fixture a staged file belongs to is validated strictly, once.
- ``gates-check``: each staged ``gates.yaml`` is read against the gates schema.

Only IDs and the paths as pre-commit gave them are printed. Exit codes: 0 all clean, 1 a file
holds fixture text or a fixture/gates file is invalid, 2 a usage or input error.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from evalkit.cli._common import Handler, print_error, shown

__all__: list[str] = []

# folders never searched for fixtures: version control, environments, caches, build output
_SKIPPED_FOLDERS: Final = frozenset(
    {".git", ".hg", ".venv", "venv", "node_modules", "site-packages", "__pycache__", "build"}
)


def add_hook(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "hook",
        help="the pre-commit hooks (.pre-commit-hooks.yaml): scan, validate, gates-check on "
        "the staged files pre-commit passes",
        description="Add one of them to .pre-commit-config.yaml with this repository and the "
        "hook's ID (evalkit-scan, evalkit-validate, evalkit-gates-check); docs/ci.md shows the "
        "lines.",
    )
    kinds = p.add_subparsers(dest="hook", required=True, metavar="HOOK")
    scan = kinds.add_parser("scan", help="refuse staged files that hold fixture text")
    scan.add_argument(
        "--fixture",
        action="append",
        default=[],
        metavar="DIR",
        help="fixture whose text is private (repeatable; default: every folder holding "
        "fixture.yaml below the working directory)",
    )
    kinds.add_parser("validate", help="validate the fixtures the staged files belong to")
    kinds.add_parser("gates-check", help="check staged gates.yaml files against the schema")
    for each in kinds.choices.values():
        each.add_argument("files", nargs="*", metavar="FILE", help="staged files")
    return _run_hook


def _run_hook(args: argparse.Namespace) -> int:
    if args.hook == "scan":
        return _scan(args.files, args.fixture)
    if args.hook == "validate":
        return _validate(args.files)
    return _gates_check(args.files)


def _fixture_of(path: Path) -> Path | None:
    """The fixture folder (holding fixture.yaml) ``path`` lies in, if any."""
    from evalkit.fixtures.rules import META_FILE

    for folder in path.parents:
        if (folder / META_FILE).is_file():
            return folder
    return None


def _fixtures_below(root: Path) -> Iterator[Path]:
    from evalkit.fixtures.rules import META_FILE

    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in _SKIPPED_FOLDERS)
        if META_FILE in files:
            folders[:] = []  # a fixture holds no other fixture
            yield Path(folder)


def _scan(files: list[str], fixtures: list[str]) -> int:
    from evalkit.fixtures import load_fixture
    from evalkit.safety.artifacts import BASELINE_FILE
    from evalkit.safety.inputs import read_input_bytes
    from evalkit.safety.privacy import find_leaks, private_texts

    # a fixture folder's own baseline is an artifact, scanned like any other staged file
    staged = [f for f in files if _fixture_of(Path(f)) is None or Path(f).name == BASELINE_FILE]
    folders = [Path(f) for f in fixtures] or list(_fixtures_below(Path(".")))
    if not staged or not folders:
        return 0
    private = [text for folder in folders for text in private_texts(load_fixture(folder))]
    leaking = 0
    for path in staged:
        text = read_input_bytes(path).decode("utf-8", errors="replace")
        ids = find_leaks(text, private)
        if ids:
            leaking += 1
            print(f"fixture text found: {shown(path)}: {len(ids)} object(s): {', '.join(ids)}")
    if leaking:
        print(
            f"{leaking} staged file(s) hold fixture text (object IDs above); remove it before "
            "committing (a notebook: clear its outputs)"
        )
    return 1 if leaking else 0


def _validate(files: list[str]) -> int:
    from evalkit.fixtures import load_fixture

    folders = sorted({f for f in (_fixture_of(Path(p).absolute()) for p in files) if f})
    return _check_each([os.path.relpath(folder) for folder in folders], load_fixture)


def _gates_check(files: list[str]) -> int:
    from evalkit.gates import load_gates

    return _check_each(files, load_gates)


def _check_each(paths: list[str], load: Callable[[str], object]) -> int:
    """Load each path, printing "valid: PATH" or the error; 1 when any failed."""
    from evalkit.errors import FixtureError

    failed = 0
    for path in paths:
        try:
            load(path)
        except FixtureError as error:
            failed += 1
            print_error(error)
        else:
            print(f"valid: {shown(path)}")
    return 1 if failed else 0
