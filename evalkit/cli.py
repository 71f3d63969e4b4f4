"""The ``evalkit`` command.

Exit codes: 0 success; 1 a check failed (invalid fixture, failed gate, failed probe threshold,
leak found); 2 a usage or input error (bad arguments, unreadable file, unsafe output path).
Each subcommand is one ``_add_<name>`` function (its arguments) and one ``_run_<name>`` function.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from evalkit.errors import EvalkitError

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _print_error(error: BaseException) -> None:
    print(f"evalkit: error: {error}", file=sys.stderr)


# --- validate -------------------------------------------------------------------------------


def _add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser("validate", help="check a fixture directory against the strict schema")
    p.add_argument("path", help="fixture directory")
    return _run_validate


def _run_validate(args: argparse.Namespace) -> int:
    raise NotImplementedError("validate")


# --- end of subcommands ---------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], Handler], ...] = (
    _add_validate,
)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser and the handler of each subcommand."""
    parser = argparse.ArgumentParser(
        prog="evalkit", description="Offline, deterministic evaluation of search and RAG retrieval."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    for add in _SUBCOMMANDS:
        handler = add(sub)
        handlers[list(sub.choices)[-1]] = handler
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except EvalkitError as error:
        _print_error(error)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
