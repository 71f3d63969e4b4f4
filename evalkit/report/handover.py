"""Parts of the report that ``evalkit report`` computes in a second process while the kernel
runs the notebook, and how the notebook takes them.

``evalkit report`` evaluates in its own process and hands the evaluation to the notebook
(:mod:`evalkit.report.evaluation_files`). While the kernel then runs the cells, the command's
process has a core to spare: it forks a helper (Linux only) that computes the verdict section and
draws the report's figures, so the kernel only displays them. Each result lands in the
evaluation folder:

- ``pending/<name>``: a result the helper is still working on (the verdict, or the figures of
  one plotting function, :func:`figure_pending`). A reader waits while the marker
  exists (at most :data:`WAIT_S`), then takes the result if it is there and otherwise computes
  it itself, as it does in JupyterLab, where there is no helper. The helper removes a marker
  when its result is written or has failed; ``evalkit report`` removes any that are left once
  the helper has exited, so a helper that crashed costs time, never a section.
- ``figures/<key>.json``: a figure as the notebook's inline backend prints it (the PNG and its
  ``text/plain``), under :func:`figure_key` of the drawing call: the function and its
  arguments. A cell that draws with other arguments finds no figure and draws its own.
- ``results/<key>.pickle``: what another call returned (a table), pickled, under the call's
  key as well (:meth:`ReportHandover.compute`); it is pending and claimed by that key
  (:func:`result_pending`). ``evalkit report`` refuses an ``evaluation_dir`` given to it, so
  there the notebook unpickles only what this command's helper wrote into its private folder;
  a notebook run by hand with an ``evaluation_dir`` trusts that folder as it trusts its own
  code.
- ``warnings/<key>.pickle``: the warnings a figure's or a result's call issued in the helper,
  issued again by the cell that takes it (:func:`save_warnings`).
- ``claims/<name>``: who computes a figure (or a result). The helper claims each before making
  it; a cell that finds one not yet claimed claims and makes it itself instead of waiting
  (the helper then skips it), so no figure is drawn twice and no cell waits for work that has
  not begun.
- ``taken/<name>``: what the notebook took from the helper, what it drew itself because the
  helper had not begun it (``<name>:notebook``) and what it made because the helper had no such
  work (``<name>:unplanned``: another call), for the command's accounting
  (:attr:`evalkit.report.RenderedReport.handed_over`).

The folder is private (it holds the evaluation) and is deleted with the command's temporary
directory.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import pickle
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "VERDICT_PENDING",
    "WAIT_S",
    "HandedOverFigure",
    "Helper",
    "ReportHandover",
    "claim",
    "figure_key",
    "figure_png",
    "helper_available",
    "load_result",
    "result_pending",
    "save_result",
    "save_warnings",
    "start_helper",
]

VERDICT_PENDING: Final = "verdict"
"""The pending name of the report's verdict section
(:func:`evalkit.report.evaluation_files.save_verdict`)."""
WAIT_S: Final = 120.0
"""The longest a reader waits for a pending result before computing it itself."""
PRINT_FIGURE_KWARGS: Final[Mapping[str, Any]] = {"bbox_inches": None}
"""What the report notebook sets as ``InlineBackend.print_figure_kwargs`` (its setup cell):
:func:`figure_png` prints with the same arguments, so a handed-over figure is the PNG the
kernel would have made."""
_POLL_S: Final = 0.005
_PENDING: Final = "pending"
_FIGURES: Final = "figures"
_RESULTS: Final = "results"
_WARNINGS: Final = "warnings"
_TAKEN: Final = "taken"
_CLAIMS: Final = "claims"
DRAWN_BY_NOTEBOOK: Final = ":notebook"
"""The suffix of a :func:`taken` name the notebook drew itself (it claimed it first)."""
NOT_PLANNED: Final = ":unplanned"
"""The suffix of a :func:`taken` name the notebook made itself because the helper had no such
work pending: a call other than the helper's (other arguments), or a helper that had stopped."""


# --- pending results ----------------------------------------------------------------------


def mark_pending(folder: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Mark ``names`` (file-name-safe) as being computed for ``folder``."""
    pending = Path(folder) / _PENDING
    pending.mkdir(parents=True, exist_ok=True)
    for name in names:
        (pending / name).touch()


def clear_pending(folder: str | os.PathLike[str], names: Iterable[str] | None = None) -> None:
    """Remove the pending markers of ``names`` (default: all) from ``folder``."""
    pending = Path(folder) / _PENDING
    markers = [pending / n for n in names] if names is not None else pending.glob("*")
    for marker in markers:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def wait_while_pending(
    folder: str | os.PathLike[str], name: str, *, timeout_s: float = WAIT_S
) -> None:
    """Return once ``name`` is no longer pending in ``folder`` (or after ``timeout_s``)."""
    marker = Path(folder) / _PENDING / name
    deadline = time.monotonic() + timeout_s
    while marker.exists() and time.monotonic() < deadline:
        time.sleep(_POLL_S)


def claim(folder: str | os.PathLike[str], name: str) -> bool:
    """Take ``name`` on to compute it: True for the first caller only, helper or notebook."""
    claims = Path(folder) / _CLAIMS
    claims.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(claims / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


def record_taken(folder: str | os.PathLike[str], name: str) -> None:
    """Note that the notebook took ``name`` from the helper."""
    taken = Path(folder) / _TAKEN
    taken.mkdir(parents=True, exist_ok=True)
    (taken / name).touch()


def taken(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """What the notebook took from the helper (:func:`record_taken`), sorted."""
    return tuple(sorted(p.name for p in (Path(folder) / _TAKEN).glob("*")))


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees all of it or nothing."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


# --- figures ------------------------------------------------------------------------------


def figure_key(
    function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> str | None:
    """A hex digest of the call ``function(*args, **kwargs)``: the project's canonical hash
    (:func:`evalkit.safety.canonical.canonical_hash`) of the function's module and name and every
    argument, a frame by a digest of its column names, index and values whatever their dtypes;
    None when an argument is of a kind it cannot hash (the call is then simply not handed
    over)."""
    from evalkit.errors import InputError
    from evalkit.safety.canonical import canonical_hash

    name = f"{function.__module__}.{function.__qualname__}"
    try:
        call = {"function": name, "args": _plain(list(args)), "kwargs": _plain(dict(kwargs))}
        return canonical_hash(call).removeprefix("sha256:")
    except InputError:  # a value canonical JSON refuses (an object, NaN)
        return None


def _plain(value: Any) -> Any:
    """``value`` with each frame (or series, or array) replaced by a digest of its values."""
    import numpy as np
    import pandas as pd

    if isinstance(value, pd.Series):
        value = value.to_frame()
    if isinstance(value, pd.DataFrame):
        digest = hashlib.sha256(repr((value.shape, [str(c) for c in value.columns])).encode())
        # as Python objects, so a category, string or object column of the same values
        # (a frame read back from Parquet) digests the same
        columns = [value.index.to_series(), *(value.iloc[:, i] for i in range(value.shape[1]))]
        for column in columns:
            hashed = pd.util.hash_pandas_object(column.astype(object), index=False)
            digest.update(hashed.to_numpy().tobytes())
        return {"frame": digest.hexdigest()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


def figure_png(figure: Figure) -> bytes:
    """``figure`` as the report notebook's inline backend prints it: a PNG at the figure's dpi
    (IPython's ``print_figure`` with :data:`PRINT_FIGURE_KWARGS`)."""
    from IPython.core.pylabtools import print_figure

    png = print_figure(figure, "png", **PRINT_FIGURE_KWARGS)  # type: ignore[no-untyped-call]
    return bytes(png or b"")


@dataclass(frozen=True)
class HandedOverFigure:
    """A figure drawn by the helper: Jupyter displays it as its PNG, with the same
    ``text/plain`` as the figure itself (``<Figure size ... with N Axes>``)."""

    png: bytes
    text: str

    def _repr_png_(self) -> bytes:
        return self.png

    def __repr__(self) -> str:
        return self.text


def save_figure(folder: str | os.PathLike[str], key: str, figure: Figure) -> None:
    """Print ``figure`` (:func:`figure_png`) into ``folder`` under ``key``."""
    figures = Path(folder) / _FIGURES
    figures.mkdir(parents=True, exist_ok=True)
    payload = {"png": base64.b64encode(figure_png(figure)).decode("ascii"), "text": repr(figure)}
    write_atomically(figures / f"{key}.json", json.dumps(payload).encode("utf-8"))


def figure_pending(function_name: str) -> str:
    """The pending name of the figures drawn by the plotting function ``function_name``."""
    return f"figure-{function_name}"


def load_figure(folder: str | os.PathLike[str], key: str) -> HandedOverFigure | None:
    """The figure saved under ``key`` in ``folder``; None when there is none (or it cannot be
    read: the caller draws it then)."""
    try:
        payload = json.loads((Path(folder) / _FIGURES / f"{key}.json").read_bytes())
        return HandedOverFigure(base64.b64decode(payload["png"]), str(payload["text"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def result_pending(key: str) -> str:
    """The pending (and claim) name of the result of the call whose :func:`figure_key` is
    ``key``."""
    return f"result-{key}"


def save_result(folder: str | os.PathLike[str], key: str, value: Any) -> None:
    """Keep ``value``, what the call of :func:`figure_key` ``key`` returned, in ``folder``."""
    results = Path(folder) / _RESULTS
    results.mkdir(parents=True, exist_ok=True)
    write_atomically(results / f"{key}.pickle", pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def load_result(folder: str | os.PathLike[str], key: str) -> tuple[bool, Any]:
    """``(True, value)`` saved under ``key`` in ``folder`` (:func:`save_result`, by this
    command's helper); ``(False, None)`` when there is none or it cannot be read (the caller
    computes it then)."""
    try:  # a folder the notebook was given to trust (module docs)
        return True, pickle.loads((Path(folder) / _RESULTS / f"{key}.pickle").read_bytes())
    except Exception:  # a missing or unreadable result is computed again
        return False, None


def save_warnings(
    folder: str | os.PathLike[str], key: str, warned: Sequence[warnings.WarningMessage]
) -> None:
    """Keep the warnings the call of :func:`figure_key` ``key`` issued in the helper (whose
    output nobody sees), for :meth:`ReportHandover` to issue again where the cell shows them."""
    if warned:
        kept = [(str(w.message), w.category, w.filename, w.lineno) for w in warned]
        path = Path(folder) / _WARNINGS / f"{key}.pickle"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, pickle.dumps(kept, pickle.HIGHEST_PROTOCOL))


def _issue_saved_warnings(folder: Path, key: str) -> None:
    """Issue again, from where they came, the warnings :func:`save_warnings` kept for ``key``."""
    with contextlib.suppress(OSError):
        for message, category, filename, lineno in pickle.loads(
            (folder / _WARNINGS / f"{key}.pickle").read_bytes()
        ):
            warnings.warn_explicit(message, category, filename, lineno)


class ReportHandover:
    """The report notebook's figures (:meth:`draw`) and tables (:meth:`compute`): handed over
    by ``evalkit report`` when its helper made the same call, else made here: when the helper
    has not begun it (it is claimed here), when it made another call, and always without a
    ``folder``, as in JupyterLab. What is handed over comes with the warnings its call issued
    in the helper (:func:`save_warnings`), issued again here as the cell would have issued them.

    ``folder`` is the notebook's ``evaluation_dir`` (None or empty: draw everything).
    """

    def __init__(self, folder: str | os.PathLike[str] | None) -> None:
        self.folder = Path(folder) if folder else None

    def draw(self, function: Callable[..., Figure], /, *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)``, or the helper's PNG of that very call (which
        displays the same); claimed and waited for by the figure's function."""

        def load(folder: Path) -> tuple[bool, Any, str]:
            key = figure_key(function, args, kwargs)
            handed = load_figure(folder, key) if key is not None else None
            return handed is not None, handed, key or ""

        name = figure_pending(function.__name__)
        return self._take(name, name, load, lambda: function(*args, **kwargs))

    def compute(self, function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` (a table), or what the helper's very same call
        returned; claimed and waited for by the call's key (:func:`result_pending`)."""
        key = figure_key(function, args, kwargs) if self.folder is not None else None
        if key is None:
            return function(*args, **kwargs)
        return self._take(
            result_pending(key),
            f"result-{function.__name__}",
            lambda folder: (*load_result(folder, key), key),
            lambda: function(*args, **kwargs),
        )

    def _take(
        self,
        name: str,
        shown: str,
        load: Callable[[Path], tuple[bool, Any, str]],
        make: Callable[[], Any],
    ) -> Any:
        """What ``load`` finds in the folder (found, value, the call's key) once the helper's
        work ``name`` is no longer pending, else ``make()``: at once when the helper has not
        begun it (it is claimed here: no waiting), and always without a folder. ``shown`` is
        the name :func:`taken` records."""
        if self.folder is None:
            return make()
        planned = (self.folder / _PENDING / name).exists()  # before the claim: the helper's own
        if claim(self.folder, name):
            record_taken(self.folder, shown + (DRAWN_BY_NOTEBOOK if planned else NOT_PLANNED))
            return make()
        wait_while_pending(self.folder, name)
        found, value, key = load(self.folder)
        if found:
            _issue_saved_warnings(self.folder, key)
            record_taken(self.folder, shown)
            return value
        return make()


# --- the helper process -------------------------------------------------------------------


@dataclass
class Helper:
    """A forked helper process working for ``folder`` (:func:`start_helper`)."""

    pid: int
    folder: Path
    exit_status: int | None = None

    def wait(self, timeout_s: float = 2 * WAIT_S) -> None:
        """Wait for the helper to exit (killing it after ``timeout_s``), then clear whatever
        it left pending. Safe to call more than once."""
        if self.exit_status is None:
            deadline = time.monotonic() + timeout_s
            while True:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.exit_status = status
                    break
                if time.monotonic() >= deadline:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self.pid, signal.SIGKILL)
                    _, self.exit_status = os.waitpid(self.pid, 0)
                    break
                time.sleep(_POLL_S)
        clear_pending(self.folder)


def helper_available() -> bool:
    """Whether :func:`start_helper` forks a helper here (Linux: elsewhere ``fork`` is not safe
    with the libraries a report has loaded)."""
    return sys.platform == "linux"


def start_helper(
    work: Callable[[], None], folder: str | os.PathLike[str], pending: Sequence[str]
) -> Helper | None:
    """Fork a helper that runs ``work()`` for ``folder``, with ``pending`` marked first; None
    where this platform has no safe ``fork`` (only Linux is used) or it fails, so the caller
    does the work itself or leaves it to the notebook.

    The helper writes nothing anywhere but ``folder`` (its standard streams, descriptors and
    Python objects, are ``/dev/null``: a traceback could quote fixture text) and exits with
    ``os._exit``, running none of this process's exit handlers. ``work`` must clear each
    pending name once its result is written or has failed.
    """
    if not helper_available():
        return None
    mark_pending(folder, pending)
    try:
        with warnings.catch_warnings():  # Python 3.12+ warns of fork() with threads running:
            # the helper runs no other thread's code and touches none of their state
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        clear_pending(folder, pending)
        return None
    if pid == 0:  # pragma: no cover - the helper (coverage does not follow a fork)
        status = 1
        try:
            quiet = os.open(os.devnull, os.O_RDWR)
            for stream in (0, 1, 2):
                os.dup2(quiet, stream)
            # and the Python streams, which may not be those descriptors (a kernel's streams
            # write to its sockets)
            sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
            work()
            status = 0
        finally:
            os._exit(status)
    return Helper(pid, Path(folder))
