"""The ``evalkit`` command: the parser, dispatch and exit codes.

Exit codes: 0 success; 1 a check failed (invalid fixture, failed gate, failed probe threshold,
leak found); 2 a usage or input error (bad arguments, unreadable file, unsafe output path).
Each subcommand is one ``add_<name>`` function (its arguments, returning its handler) and one
``_run_<name>`` function in the module of its group: ``_fixtures`` (validate, schema, fixture,
import), ``_evaluate`` (run, baseline, report), ``_gates`` (gate, diff), ``_measures``
(trec-eval), ``_probes`` (probes), ``_scan`` (scan) and ``_hooks`` (hook: the pre-commit
hooks); helpers they share are in ``_common``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from evalkit.cli._common import Handler, freeze_start_up, print_error
from evalkit.errors import EvalkitError, Interrupted, LeakError, SystemFailedError
from evalkit.safety.interrupts import (
    handle_signals,
    interrupted_line,
    signal_surfaces_as_interrupt,
)

if TYPE_CHECKING:
    import argparse
    from types import ModuleType

__all__ = ["build_parser", "main", "main_then_exit"]

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], Handler]


#: Each subcommand's name, the module of its group and the function that adds it (its
#: arguments) to the parser, in ``--help``'s order.
_SUBCOMMANDS: Final = {
    "validate": ("_fixtures", "add_validate"),
    "run": ("_evaluate", "add_run"),
    "probes": ("_probes", "add_probes"),
    "gate": ("_gates", "add_gate"),
    "baseline": ("_evaluate", "add_baseline"),
    "diff": ("_gates", "add_diff"),
    "history": ("_gates", "add_history"),
    "schema": ("_fixtures", "add_schema"),
    "report": ("_evaluate", "add_report"),
    "notebook": ("_evaluate", "add_notebook"),
    "trec-eval": ("_measures", "add_trec_eval"),
    "fixture": ("_fixtures", "add_fixture"),
    "import": ("_fixtures", "add_import"),
    "scan": ("_scan", "add_scan"),
    "strip": ("_scan", "add_strip"),
    "hook": ("_hooks", "add_hook"),
}


def _registrar(name: str) -> Registrar:
    """The function that adds subcommand ``name`` to the parser. Its group's module loads
    here, when a parser is built: ``trec-eval`` builds none, and a command line that names one
    subcommand loads that one's module alone (the other groups' modules, about 4 ms)."""
    group, function = _SUBCOMMANDS[name]
    add: Registrar = getattr(_group_module(group), function)
    return add


def _group_module(group: str) -> ModuleType:
    """The module of one group of subcommands (``__import__`` with a ``fromlist``, which
    returns the submodule and which ``python -X importtime`` and the import-set tests see:
    ``importlib.import_module`` imports past the C import they time)."""
    module: ModuleType = __import__(f"evalkit.cli.{group}", fromlist=["_"])
    return module


def build_parser(
    command: str | None = None,
) -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser and the handler of each subcommand; with ``command`` (a
    subcommand's name; any other word: all of them), a parser with that subcommand alone, for
    a command line that names it: the other fifteen need not be built at every start (about
    15 ms). That subcommand parses and prints its help the same way in both."""
    import argparse

    from evalkit import __version__

    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Offline, deterministic evaluation of search and RAG retrieval "
        "(distribution evalkit-ir; also 'python -m evalkit').",
    )
    parser.add_argument(
        "--version", action="version", version=f"evalkit {__version__} (evalkit-ir)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    only = command if command in _SUBCOMMANDS else None
    for name in _SUBCOMMANDS:
        if only in (None, name):
            handlers[name] = _registrar(name)(sub)
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    SIGINT, SIGTERM and SIGHUP unwind the command (:mod:`evalkit.safety.interrupts`): everything it
    made is removed on the way, and it ends with one line and exit code 130, 143 or 129, never a
    traceback. An output a command had already written is complete (every write is atomic),
    and the command's own lines said so before the signal came.
    """
    words = sys.argv[1:] if argv is None else list(argv)
    run: Callable[[], int] | None = None
    if words[:1] == ["trec-eval"]:
        from evalkit.cli._measures import NO_OPTIONS, run_trec_eval

        if not any(word.startswith(NO_OPTIONS) for word in words):
            # its parser would hand getopt every word after "trec-eval": done here without
            # building it (argparse's parser looks up gettext catalogs, about 6 ms of the
            # command's start-up, which is measured against trec_eval's C binary)
            run = functools.partial(run_trec_eval, words[1:])
    if run is None:
        parser, handlers = build_parser(words[0] if words else None)
        args = parser.parse_args(words)
        run = functools.partial(handlers[args.command], args)
    try:
        with handle_signals(), signal_surfaces_as_interrupt():
            return run()
    except Interrupted as stop:
        print(interrupted_line(stop), file=sys.stderr)
        return stop.exit_code
    except (LeakError, SystemFailedError) as error:  # a failed check or evaluation, not usage
        print_error(error)
        return 1
    except EvalkitError as error:
        print_error(error)
        return 2


def main_then_exit() -> int:
    """The ``evalkit`` command (what the console script runs once its signal handlers are in
    place, :func:`evalkit.cli.console`): :func:`main`, then a quick exit.

    The process ends right after, so its objects are frozen out of the interpreter's final
    garbage collections (``gc.freeze``): after a report (pandas, matplotlib, an executed
    notebook in memory) those took about half a second and free nothing the operating system
    does not reclaim anyway. So are a cheap command's start-up objects, once its modules are
    imported and its inputs loaded (``freeze_start_up``). Exit handlers and finalizers still
    run; everything evalkit writes is closed before :func:`main` returns. In-process callers
    (tests) call :func:`main`.
    """
    freeze_start_up()
    code = main()
    import gc

    gc.freeze()
    return code
