"""The ``evalkit`` command: :func:`console` (the console script, ``python -m evalkit.cli.entry``)
installs the signal handlers, then :func:`main` parses and dispatches.

:func:`main` takes the arguments and returns the exit code (for in-process callers such as
tests); :func:`build_parser` is the parser and each subcommand's handler. The commands live in
private modules, one per group (``_fixtures``, ``_evaluate``, ``_gates``, ``_measures``,
``_probes``, ``_scan``), with the helpers they share in ``_common``; :mod:`evalkit.cli.entry`
is the console script's module. The names are resolved on first use (PEP 562), so the
console script installs its handlers before the command line's modules load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.cli._main import build_parser as build_parser, main as main
    from evalkit.cli.entry import console as console


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
