"""Every exception and warning evalkit raises, in one place.

Hierarchy::

    EvalkitError(Exception)
    ├── FixtureError(EvalkitError, ValueError)       fixture or gates file breaks the schema;
    │                                                ``.problems`` lists every problem found
    ├── FormatError(EvalkitError, ValueError)        a qrels/run/BEIR file is unreadable
    ├── MeasureError(EvalkitError, ValueError)       unknown measure name or parameter
    ├── InputError(EvalkitError, ValueError)         an argument has wrong shape or values
    ├── UnknownNameError(EvalkitError, LookupError)  a registry has no entry of that name
    ├── ProbeError(EvalkitError, ValueError)         a probe file breaks the probe schema
    ├── DispatchError(EvalkitError, RuntimeError)    a probe could not run
    ├── DeterminismError(EvalkitError, RuntimeError) two repeats of one evaluation differ
    ├── UnsafePathError(EvalkitError, ValueError)    an output path is unsafe
    ├── OutputError(EvalkitError, OSError)           the file system refused an output write
    ├── LeakError(EvalkitError, RuntimeError)        an artifact contains fixture text
    ├── StaleBaselineError(EvalkitError, ValueError) baseline of another evaluation definition
    ├── NotebookError(EvalkitError, RuntimeError)    the report notebook failed to execute
    └── SystemFailedError(EvalkitError, RuntimeError) a user's system raised

    EvalkitWarning(UserWarning)
    ├── RunOnlyQueriesWarning                       a run has queries the qrels do not judge
    └── RepeatedSymbolWarning                       a probe lists an expected symbol twice

Messages say what is wrong, where (file, line or field, ID), what was expected, what was found and
how to fix it. Messages never quote fixture text or secret values: IDs and field names only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DeterminismError",
    "DispatchError",
    "EvalkitError",
    "EvalkitWarning",
    "FixtureError",
    "FormatError",
    "InputError",
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
    "UnknownNameError",
    "UnsafePathError",
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


class EvalkitWarning(UserWarning):
    """Base class of evalkit's warnings."""


class RunOnlyQueriesWarning(EvalkitWarning):
    """A run contains queries that are not in the qrels; they were ignored."""


class RepeatedSymbolWarning(EvalkitWarning):
    """A probe's expected symbols list one symbol twice; the repeat was dropped."""
