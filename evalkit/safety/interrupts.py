"""SIGINT, SIGTERM and SIGHUP as exceptions, so a command unwinds and every ``finally``
removes what it made (temporary stores, evaluation folders, staging folders, ``.tmp`` files).

:func:`handle_signals` (the CLI wraps each command in it) installs one handler for the three
signals (SIGHUP, a closed terminal, is handled like SIGTERM, where the platform has it: exit
129). In the process that installed it, the handler raises :class:`Interrupted` (a
``KeyboardInterrupt``, so code that already cleans up after Ctrl-C does the same after SIGTERM)
in the main thread; in a process forked from it (a worker of ``run --repeats``) it raises
:class:`WorkerInterrupted`, a ``SystemExit``, which a process pool's worker reports as its task's
result, or which ends the worker quietly between tasks. Either way it first sets the flag
:func:`cancelled` reads, so threads that wait on the network (``http:`` calls) stop within
:data:`POLL_S` seconds: a thread cannot be interrupted by a signal, so it polls.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Final

from evalkit.errors import Interrupted, WorkerInterrupted

__all__ = [
    "POLL_S",
    "cancelled",
    "deferred",
    "handle_signals",
    "interrupted_line",
    "raise_if_cancelled",
    "record_written",
    "reraise_if_interrupted",
    "signal_surfaces_as_interrupt",
]

#: How often a thread that waits (on a socket, a backoff) checks :func:`cancelled`, in seconds.
POLL_S: Final = 0.2

#: A signal raised where it could not be (see :func:`_unraisable`) is sent again after this
#: many seconds.
REDELIVER_S: Final = 0.05

_SIGNALS: Final = (
    signal.SIGINT,
    signal.SIGTERM,
    *((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()),
)
_CANCELLED = threading.Event()
_OWNER: list[int] = []  # the pid of the process that installed the handler
_DEFERRED: list[int] = []  # signals that arrived inside deferred(), raised when it ends
_STATE = {"deferring": 0, "written": 0}
_HOOKS: list[Callable[[Any], object]] = []  # the unraisable hook each handle_signals() replaced


def cancelled() -> bool:
    """True once SIGINT, SIGTERM or SIGHUP arrived (in this process, or before it was forked)."""
    return _CANCELLED.is_set()


def raise_if_cancelled() -> None:
    """Raise :class:`WorkerInterrupted` (SIGTERM) when :func:`cancelled`; for a worker's next
    task after a signal."""
    if _CANCELLED.is_set():
        raise WorkerInterrupted(signal.SIGTERM)


def reraise_if_interrupted() -> None:
    """Raise :class:`Interrupted` again when a signal came: for code whose library turned the
    first one into another error (an event loop's ``RuntimeError``)."""
    if _CANCELLED.is_set() and _OWNER and os.getpid() == _OWNER[-1]:
        raise Interrupted(_STATE.get("signum") or signal.SIGINT)


@contextlib.contextmanager
def signal_surfaces_as_interrupt() -> Iterator[None]:
    """Within the block, an error a library made of the signal is :class:`Interrupted` again
    (:func:`reraise_if_interrupted`) when a signal came: an import's ``RuntimeError`` from
    ``__set_name__``, an event loop's error, or a Rust extension's ``PanicException``, which
    PyO3 raises when a Python exception (the signal's) reaches code that expected none, and
    which is a ``BaseException``, not an ``Exception``: all end the command with one line and
    130/143, never a traceback. Any other error passes unchanged."""
    try:
        yield
    except KeyboardInterrupt:  # Interrupted itself, or Python's own
        raise
    except BaseException:
        reraise_if_interrupted()
        raise


def interrupted_line(stop: Interrupted) -> str:
    """The one line an interrupted command ends with: the signal, and what it left (nothing,
    or the files it had put in place, complete: every write is atomic)."""
    count = _STATE["written"]  # files put in place since handle_signals() began
    left = f"{count} file(s) were written before it (complete), nothing else"
    return f"evalkit: interrupted ({stop}); {left if count else 'nothing was written'}"


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` within :func:`handle_signals`: an :class:`Interrupted` (or
    :class:`WorkerInterrupted`) raised where Python cannot raise it, in a finalizer or a weak
    reference's callback (a progress bar's ``__del__``, importlib's module-lock callback), is
    not printed as "Exception ignored in ..." and dropped: the signal is sent again after
    :data:`REDELIVER_S` (from a thread: sent from here, the handler would run inside this hook,
    which cannot raise either), and the handler raises it at the next point that can. Anything
    else goes to the hook the outermost :func:`handle_signals` replaced (an inner block's
    "previous" hook is this one)."""
    stop = unraisable.exc_value
    if isinstance(stop, Interrupted | WorkerInterrupted):
        timer = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), stop.signum))
        timer.daemon = True
        timer.start()
        return
    _HOOKS[0](unraisable)


def _handler(signum: int, frame: FrameType | None) -> None:
    _CANCELLED.set()
    _STATE["signum"] = signum
    if _OWNER and os.getpid() != _OWNER[-1]:
        raise WorkerInterrupted(signum)
    if _STATE["deferring"]:
        _DEFERRED.append(signum)
        return
    raise Interrupted(signum)  # raised where it cannot be, it comes back (see _unraisable)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal that arrives within the block is raised when the block ends, so the block
    (renaming a report's HTML and notebook into place) is done whole or not begun."""
    _STATE["deferring"] += 1
    try:
        yield
    finally:
        _STATE["deferring"] -= 1
        if not _STATE["deferring"] and _DEFERRED:
            signum = _DEFERRED[0]
            _DEFERRED.clear()
            raise Interrupted(signum)


def record_written(count: int = 1) -> None:
    """Count files put in place (by :func:`evalkit.safety.output.write_texts_atomic`)."""
    _STATE["written"] += count


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main
    thread (the previous handlers are restored after it). Outside the main thread it does
    nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    _OWNER.append(os.getpid())
    _CANCELLED.clear()
    _DEFERRED.clear()
    _STATE["written"] = 0
    _HOOKS.append(sys.unraisablehook)
    sys.unraisablehook = _unraisable
    try:
        for signum in _SIGNALS:
            signal.signal(signum, _handler)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = _HOOKS.pop()
        _OWNER.pop()
