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
from typing import TYPE_CHECKING

from evalkit.cli._common import Handler, freeze_start_up, print_error
from evalkit.cli._measures import NO_OPTIONS, run_trec_eval
from evalkit.errors import EvalkitError, Interrupted, LeakError, SystemFailedError
from evalkit.safety.interrupts import handle_signals, interrupted_line, reraise_if_interrupted

if TYPE_CHECKING:
    import argparse

__all__ = ["build_parser", "main", "main_then_exit"]

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], Handler]


def _subcommands() -> dict[str, Registrar]:
    """Each subcommand's name and the function that adds it (its arguments) to the parser.
    Their modules (and argparse) load when a parser is built: ``trec-eval`` builds none."""
    from evalkit.cli._evaluate import add_baseline, add_notebook, add_report, add_run
    from evalkit.cli._fixtures import add_fixture, add_import, add_schema, add_validate
    from evalkit.cli._gates import add_diff, add_gate, add_history
    from evalkit.cli._hooks import add_hook
    from evalkit.cli._measures import add_trec_eval
    from evalkit.cli._probes import add_probes
    from evalkit.cli._scan import add_scan, add_strip

    return {
        "validate": add_validate,
        "run": add_run,
        "probes": add_probes,
        "gate": add_gate,
        "baseline": add_baseline,
        "diff": add_diff,
        "history": add_history,
        "schema": add_schema,
        "report": add_report,
        "notebook": add_notebook,
        "trec-eval": add_trec_eval,
        "fixture": add_fixture,
        "import": add_import,
        "scan": add_scan,
        "strip": add_strip,
        "hook": add_hook,
    }


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
    registrars = _subcommands()
    only = command if command in registrars else None
    for name, add in registrars.items():
        if only in (None, name):
            handlers[name] = add(sub)
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    SIGINT, SIGTERM and SIGHUP unwind the command (:mod:`evalkit.safety.interrupts`): everything it
    made is removed on the way, and it ends with one line and exit code 130, 143 or 129, never a
    traceback. An output a command had already written is complete (every write is atomic),
    and the command's own lines said so before the signal came.
    """
    words = sys.argv[1:] if argv is None else list(argv)
    run: Callable[[], int]
    if words[:1] == ["trec-eval"] and not any(word.startswith(NO_OPTIONS) for word in words):
        # its parser would hand getopt every word after "trec-eval": done here without
        # building it (argparse's parser looks up gettext catalogs, about 6 ms of the
        # command's start-up, which is measured against trec_eval's C binary)
        run = functools.partial(run_trec_eval, words[1:])
    else:
        parser, handlers = build_parser(words[0] if words else None)
        args = parser.parse_args(words)
        run = functools.partial(handlers[args.command], args)
    try:
        with handle_signals():
            try:
                return run()
            except Exception:
                # a library turned the signal into another error (an import's RuntimeError
                # from __set_name__, an event loop's): still one line and 130/143
                reraise_if_interrupted()
                raise
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
