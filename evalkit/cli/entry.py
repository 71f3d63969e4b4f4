"""The ``evalkit`` console script: SIGINT, SIGTERM and SIGHUP handled from the first moment.

The handlers (:mod:`evalkit.safety.interrupts`, a few standard-library imports) are installed
before the command line's modules are imported (most of a second), so a signal that arrives
while they load ends the command like one that arrives later: one line, exit 130, 143 or 129.
"""

from __future__ import annotations

import signal
import sys

from evalkit.errors import Interrupted, OutputError
from evalkit.safety.interrupts import (
    handle_signals,
    interrupted_line,
    signal_surfaces_as_interrupt,
)

__all__ = ["console"]


def console() -> int:
    """The ``evalkit`` command (:func:`evalkit.cli.main`, then a quick exit) inside
    :func:`~evalkit.safety.interrupts.handle_signals`. It first sweeps what a killed evalkit
    process left in the temporary folder, and at the end removes its own temporary folder and
    says in one line what the sweeps removed (:mod:`evalkit.safety.scratch`)."""
    try:
        with handle_signals():
            with signal_surfaces_as_interrupt():  # a signal inside an import, as another error
                from evalkit.cli._main import main_then_exit as run
                from evalkit.safety.scratch import sweep
            sweep()
            return run()
    except Interrupted as stop:  # before main() took over, or after it returned
        print(interrupted_line(stop), file=sys.stderr)
        return stop.exit_code
    except OutputError as error:  # the temporary folder is not evalkit's
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        _release()
        # The command is over and the process exits next: a late Ctrl-C ends it quietly
        # (exit -2) rather than as a KeyboardInterrupt traceback inside the interpreter's exit.
        signal.signal(signal.SIGINT, signal.SIG_DFL)


def _release() -> None:
    """:func:`evalkit.safety.scratch.release`, once the module was loaded (before, this
    process made no temporary state)."""
    scratch = sys.modules.get("evalkit.safety.scratch")
    if scratch is not None:
        scratch.release()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
