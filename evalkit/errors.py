"""Every exception and warning evalkit raises, in one place: each public exception class of
evalkit is defined here, in one tree::

    Exception
    ├── EvalkitError                            what evalkit raises on purpose
    │   ├── FixtureError, ValueError            fixture or gates file breaks the schema;
    │   │                                       ``.problems`` lists every problem found
    │   ├── FormatError, ValueError             a qrels/run/BEIR file is unreadable
    │   ├── MeasureError, ValueError            unknown measure name or parameter
    │   │   └── TrecMeasureError                a ``-m`` trec_eval refuses; ``.exit_code``
    │   ├── TrecEvalExit                        trec_eval stops: ``.exit_code``, ``.printed``
    │   ├── InputError, ValueError              an argument has wrong shape or values
    │   ├── UnknownNameError, LookupError       a registry has no entry of that name
    │   ├── ProbeError, ValueError              a probe file breaks the probe schema
    │   ├── DispatchError, RuntimeError         a probe could not run
    │   ├── DeterminismError, RuntimeError      two repeats of one evaluation differ
    │   ├── UnsafePathError, ValueError         an output path is unsafe
    │   ├── OutputError, OSError                the file system refused an output write
    │   ├── LeakError, RuntimeError             an artifact contains fixture text
    │   ├── StaleBaselineError, ValueError      baseline of another evaluation definition
    │   ├── NotebookError, RuntimeError         the report notebook failed to execute
    │   ├── SystemFailedError, RuntimeError     a user's system raised
    │   └── ExternalSystemError, RuntimeError   an ``http:`` system failed
    │       └── HttpResponseError               its response was refused (encoding, JSON)
    ├── InputFileError(OSError)                 an input file cannot be read
    └── YamlFileError(ValueError)               a small YAML file (a config) cannot be read

    BaseException                               a signal as control flow, not an Exception
    ├── Interrupted(KeyboardInterrupt)          the command was stopped; ``.exit_code`` 129/130/143
    └── WorkerInterrupted(SystemExit)           a forked worker was stopped

    EvalkitWarning(UserWarning)
    ├── RunOnlyQueriesWarning                   a run has queries the qrels do not judge
    └── RepeatedSymbolWarning                   a probe lists an expected symbol twice

``A, B`` under ``EvalkitError`` reads ``class A(EvalkitError, B)``: an error is also the builtin
it resembles. ``InputFileError`` and ``YamlFileError`` are the low-level readers' errors: their
``.reason`` is a message fragment (never a path or content) that each reader's caller maps to
its own ``EvalkitError``, naming the file. Foreign errors (PyYAML's, httpx's, pydantic's, an
``OSError``) are mapped to one of these where evalkit calls the library; a module may keep a
private exception (``_Stop``) for its own control flow, never letting it out.

Messages say what is wrong, where (file, line or field, ID), what was expected, what was found and
how to fix it. Messages never quote fixture text or secret values: IDs and field names only.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DeterminismError",
    "DispatchError",
    "EvalkitError",
    "EvalkitWarning",
    "ExternalSystemError",
    "FixtureError",
    "FormatError",
    "HttpResponseError",
    "InputError",
    "InputFileError",
    "Interrupted",
    "LeakError",
    "MeasureError",
    "NotebookError",
    "OutputError",
    "ProbeError",
    "Problem",
    "RepeatedSymbolWarning",
    "RunOnlyQueriesWarning",
    "StaleBaselineError",
    "SystemFailedError",
    "TrecEvalExit",
    "TrecMeasureError",
    "UnknownNameError",
    "UnsafePathError",
    "WorkerInterrupted",
    "YamlFileError",
    "portable_error",
]


class EvalkitError(Exception):
    """Base class of every error evalkit raises on purpose."""


def portable_error(error: EvalkitError, message: str | None = None) -> EvalkitError:
    """``error`` (with ``message``) as an error that survives pickling to another process: its
    own type when that takes the message alone, else an :class:`InputError` with the same
    message."""
    import pickle

    text = str(error) if message is None else message
    try:
        copy = type(error)(text)
        pickle.loads(pickle.dumps(copy))
    except Exception:
        return InputError(text)
    return copy


@dataclass(frozen=True, order=True)
class Problem:
    """One validation problem: where it is and what is wrong (never the offending value)."""

    file: str
    object_id: str
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.object_id:
            where += f" [{self.object_id}]"
        if self.field:
            where += f" {self.field}"
        return f"{where}: {self.message}"


class FixtureError(EvalkitError, ValueError):
    """A fixture (or gates file) is malformed; ``problems`` holds every problem found."""

    def __init__(self, problems: Sequence[Problem], *, source: str = "fixture") -> None:
        self.problems = tuple(sorted(problems))
        lines = [f"{source} has {len(self.problems)} problem(s):"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class FormatError(EvalkitError, ValueError):
    """A TREC/BEIR file cannot be parsed."""

    def __init__(self, message: str, *, file: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {message}")


class MeasureError(EvalkitError, ValueError):
    """A measure name or parameter is unknown or malformed."""


class TrecMeasureError(MeasureError):
    """A ``-m`` argument trec_eval refuses: ``exit_code`` is trec_eval's (1: an illegal
    measure, 2: a measure it cannot initialize, such as duplicate cutoffs)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class TrecEvalExit(EvalkitError):
    """trec_eval stops with ``exit_code`` after printing ``printed`` (its lines so far)."""

    def __init__(self, message: str, exit_code: int, printed: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.printed = printed


class InputError(EvalkitError, ValueError):
    """A DataFrame or argument handed to evalkit has the wrong columns, types or values."""


class UnknownNameError(EvalkitError, LookupError):
    """A registry lookup failed; the message lists what exists and the closest match."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def __str__(self) -> str:  # LookupError would repr() the message otherwise
        return str(self.args[0])


class ProbeError(EvalkitError, ValueError):
    """A probe file is malformed."""


class DispatchError(EvalkitError, RuntimeError):
    """A probe could not run: unknown tool, bad arguments, or the tool raised."""


class DeterminismError(EvalkitError, RuntimeError):
    """Repeated runs of one evaluation gave different deterministic results."""

    def __init__(self, message: str, *, differences: Sequence[tuple[str, str]] = ()) -> None:
        self.differences = tuple(differences)  # (system, query_id) pairs
        super().__init__(message)


class UnsafePathError(EvalkitError, ValueError):
    """An output path was refused; nothing was written."""


class OutputError(EvalkitError, OSError):
    """Writing an output file failed in the file system (permissions, space); nothing was
    written."""


class LeakError(EvalkitError, RuntimeError):
    """An artifact about to be written contains fixture text; ``object_ids`` names the sources."""

    def __init__(self, message: str, *, object_ids: Sequence[str] = ()) -> None:
        self.object_ids = tuple(object_ids)
        super().__init__(message)


class StaleBaselineError(EvalkitError, ValueError):
    """A baseline was produced for a different evaluation definition."""


class NotebookError(EvalkitError, RuntimeError):
    """Executing the report notebook failed; the message holds no fixture text."""


class SystemFailedError(EvalkitError, RuntimeError):
    """A user's system raised: its factory, ``definition()``, ``index()`` or ``search()``.

    The message names the system, the step, the query ID and the exception's class, never the
    exception's message (it may quote fixture text); the exception itself is kept as this
    error's ``__context__`` for debugging, and not shown with it (in the process that ran the
    system: an error from an ``evaluate(workers=...)`` process carries the message only). The
    command line exits 1, as for a failed evaluation."""


class ExternalSystemError(EvalkitError, RuntimeError):
    """An external system (HTTP service) failed; names the system and query ID only."""


class HttpResponseError(ExternalSystemError):
    """An ``http:`` response was refused (its encoding or its JSON); ``problem`` says why,
    without the URL or the body. :class:`evalkit.systems.http.HttpRetriever` raises it as an
    :class:`ExternalSystemError` naming the system and the query."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class InputFileError(OSError):
    """An input file cannot be read; ``reason`` says why (no file content, no path)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class YamlFileError(ValueError):
    """A small YAML file cannot be read: ``reason`` says why and where (``line L, column C``),
    never the file's content or path."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Interrupted(KeyboardInterrupt):
    """The command was stopped by ``signum``; ``exit_code`` is ``128 + signum`` (129, 130, 143)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(signal.Signals(signum).name)


class WorkerInterrupted(SystemExit):
    """A forked worker was stopped by ``signum`` (its exit code ``128 + signum``)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(128 + signum)


class EvalkitWarning(UserWarning):
    """Base class of evalkit's warnings."""


class RunOnlyQueriesWarning(EvalkitWarning):
    """A run contains queries that are not in the qrels; they were ignored."""


class RepeatedSymbolWarning(EvalkitWarning):
    """A probe's expected symbols list one symbol twice; the repeat was dropped."""
