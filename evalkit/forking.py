"""Work handed to a forked process on another core, its result or error sent back through a pipe.

Used where a large input is cut in parts that run side by side: the ranges of rows of an FTS5
index (:mod:`evalkit.systems.store`) and the two halves of a large YAML list
(:mod:`evalkit.safety.yamlio`). A forked process inherits everything, so nothing is pickled on the
way in; only the result (or the error) is pickled on the way back. Only where ``fork`` exists, from
a process that may have children, and with a second core to run on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

# multiprocessing is imported where it is used: importing this module (every YAML read
# imports it) costs a command's start-up nothing

__all__ = ["ForkedCall", "can_fork_helpers", "fork_available", "usable_cores"]

T = TypeVar("T")


def fork_available() -> bool:
    """Whether this platform can fork processes."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork_helpers() -> bool:
    """Whether forking a helper can pay here: ``fork`` exists, this process may have children
    (it is no daemon), and there is a second core."""
    import multiprocessing

    return fork_available() and not multiprocessing.current_process().daemon and usable_cores() >= 2


class ForkedCall(Generic[T]):
    """``function(*args)`` run in a forked process; :meth:`result` waits for its value or
    raises what it raised. :meth:`close` ends the process if it still runs. ``what`` names the
    work in the error of a process that died (e.g. ``indexing rows 1-500000``)."""

    def __init__(self, function: Callable[..., T], *args: Any, what: str = "its work") -> None:
        import multiprocessing

        self._what = what
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_run_and_send, args=(send, function, args), daemon=True
        )
        self._process.start()
        send.close()

    def result(self, tick: Callable[[], None] | None = None) -> T:
        """The function's value, waiting for it (calling ``tick`` about every 0.2 s meanwhile);
        its error, raised here, if it raised one."""
        try:
            while tick is not None and not self._receive.poll(0.2):
                tick()
            ok, value = self._receive.recv()
        except EOFError:
            self.close()  # joined first: only then is the exit code known
            raise RuntimeError(
                f"{self._what}: the forked worker process exited with code "
                f"{self._process.exitcode} before it finished"
            ) from None
        finally:
            self.close()
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def close(self) -> None:
        """End the process if it still runs; safe to call twice."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._receive.close()


def _run_and_send(send: Connection, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """In the forked process: send ``(True, value)`` or ``(False, error)``."""
    try:
        outcome: tuple[bool, Any] = (True, function(*args))
    except BaseException as error:  # sent to the parent, which raises it
        outcome = (False, error)
    try:
        send.send(outcome)
    except Exception:  # a value or an error that cannot be pickled
        ok, value = outcome
        told = f"{type(value).__name__}: {value}" if not ok else "its result could not be sent"
        send.send((False, RuntimeError(f"a forked worker process failed: {told}")))
    send.close()
