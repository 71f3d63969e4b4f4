"""The ``evalkit`` console script: SIGINT, SIGTERM and SIGHUP handled from the first moment.

The handlers (:mod:`evalkit.safety.interrupts`, a few standard-library imports) are installed
before the command line's modules are imported (most of a second), so a signal that arrives
while they load ends the command like one that arrives later: one line, exit 130, 143 or 129.
"""

from __future__ import annotations

import sys

from evalkit.errors import Interrupted
from evalkit.safety.interrupts import handle_signals, interrupted_line, reraise_if_interrupted

__all__ = ["console"]


def console() -> int:
    """The ``evalkit`` command (:func:`evalkit.cli.main`, then a quick exit) inside
    :func:`~evalkit.safety.interrupts.handle_signals`."""
    try:
        with handle_signals():
            try:
                from evalkit.cli._main import main_then_exit as run
            except Exception:  # a signal inside an import can surface as another error
                reraise_if_interrupted()
                raise
            return run()
    except Interrupted as stop:  # before main() took over, or after it returned
        print(interrupted_line(stop), file=sys.stderr)
        return stop.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
