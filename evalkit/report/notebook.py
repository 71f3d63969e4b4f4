"""Report notebooks: papermill execution, scrubbing, offline HTML export and the leak scan.

The pipeline of :func:`render_report` (nothing is written by it)::

    notebook + parameters --papermill--> executed notebook --scrub--> scrubbed notebook
        --nbconvert--> HTML (no code, no external resources) --leak scan--> RenderedReport

Rules:

- **Kernel.** The notebook runs on a kernel started with the interpreter that runs evalkit
  (``sys.executable -m ipykernel_launcher``), whatever kernel specs are installed: no kernel spec
  needs installing, and a user's own ``python3`` spec can never pick another environment.
  The notebook's metadata names the ``python3`` kernel, so JupyterLab opens it as usual.
  :func:`render_report` starts the kernel first, importing :data:`REPORT_KERNEL_PRELOAD` and
  making the :data:`REPORT_KERNEL_WARM_UP` calls, and meanwhile checks the fixture and the
  systems, evaluates and computes the verdict section for the notebook (``evaluation_dir``,
  :mod:`evalkit.report.evaluation_files`); the notebook then runs on that kernel (papermill, every
  cell as usual). The nbconvert template and the leak-scan index are prepared once the first
  cell runs, while this process would otherwise wait.
  Its connection is encrypted with CurveZMQ, or (pyzmq without CurveZMQ, POSIX) uses Unix
  sockets in Jupyter's per-user runtime folder, never plain TCP; shutting it down sends no
  interrupt (see ``_InterpreterKernelManager``), so a successful run prints nothing from the
  kernel.
- **Parameters** are those of the notebook's cell tagged ``parameters``; a value given as text
  (``-p NAME VALUE`` on the command line) is converted to the type of the default value.
- **Scrubbing** (:func:`scrub_notebook`): papermill's ``input_path``, ``output_path`` and
  ``environment_variables`` metadata are removed; every absolute path of this machine (working
  directory, notebook directory, home, temporary directory, Python prefixes) and any other
  absolute path under a common root (``/home``, ``/tmp``, ``/Users``, ...) is replaced by a
  placeholder such as ``<cwd>`` in cell sources, text outputs and metadata; an error output
  keeps its exception class name only (message and traceback may echo fixture text); stderr
  output is replaced by a one-line note. Image data is left untouched.
- **HTML** (:func:`export_html`): nbconvert's ``lab`` template without code cells, prompts or
  heading anchors, images embedded as ``data:`` URIs, and none of the template's scripts
  (require.js, MathJax, Mermaid, widgets) or its large stylesheet: a small inline stylesheet
  instead. nbconvert's closing BeautifulSoup pass over the page is skipped
  (:func:`_report_exporter_class`). The result loads
  nothing from the network (:func:`external_references` finds what would).
- **Leak scan.** With ``redact`` true, :func:`render_report` refuses with
  :class:`~evalkit.errors.LeakError` (naming object IDs only) when the HTML or the scrubbed
  notebook contains fixture text or a private value of a system definition
  (:mod:`evalkit.safety.privacy` rule). With ``redact`` false it refuses to run at all unless
  ``allow_unredacted=True``; the notebook then shows a "contains private text" banner.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import TYPE_CHECKING, Any, Final

import nbformat
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type, default

from evalkit.errors import InputError, NotebookError, UnknownNameError
from evalkit.forking import usable_cores
from evalkit.registry import did_you_mean
from evalkit.report.handover import (
    VERDICT_PENDING,
    Helper,
    claim,
    clear_pending,
    figure_key,
    figure_pending,
    save_figure,
    start_helper,
    taken,
)
from evalkit.report.render import CONTENT_SECURITY_POLICY
from evalkit.safety.artifacts import Artifact, check_output, write_artifacts
from evalkit.safety.inputs import find_input
from evalkit.safety.output import shown_path
from evalkit.safety.privacy import PrivateText

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.run.evaluate import Evaluation

__all__ = [
    "DEFAULT_REPORT_NOTEBOOK",
    "KERNEL_NAME",
    "RenderedReport",
    "check_report_output",
    "check_report_parameters",
    "coerce_parameters",
    "execute_notebook",
    "export_html",
    "external_references",
    "find_input",
    "machine_paths",
    "notebook_parameters",
    "render_report",
    "scrub_notebook",
    "write_rendered_report",
]

KERNEL_NAME: Final = "python3"
_NBFORMAT: Any = nbformat  # nbformat's functions carry no type hints
DEFAULT_REPORT_NOTEBOOK: Final = (
    Path(__file__).resolve().parents[2] / "notebooks" / "retrieval_report.ipynb"
)
DEFAULT_TIMEOUT_S: Final = 600
STDERR_NOTE: Final = "[stderr output removed by evalkit: it may quote fixture text or paths]\n"

_PAPERMILL_PRIVATE_KEYS: Final = ("input_path", "output_path", "environment_variables")
# Absolute paths under these roots are machine-specific wherever they appear.
_COMMON_ROOTS: Final = (
    "home",
    "Users",
    "root",
    "tmp",
    "var/folders",
    "var/tmp",
    "private",
    "opt",
    "usr",
    "mnt",
    "srv",
    "work",
    "workspace",
    "builds",
    "runner",
    "github",
    "nix",
)
_ABSOLUTE_PATH_RE: Final = re.compile(
    r"(?<![\w/.~-])/(?:" + "|".join(re.escape(r) for r in _COMMON_ROOTS) + r")(?=[/\s'\"<>)\]]|$)"
    r"[^\s'\"<>)\]]*"
)
_WINDOWS_PATH_RE: Final = re.compile(r"(?<![\w])[A-Za-z]:\\(?:[^\s'\"<>\\]+\\)*[^\s'\"<>\\]*")
_EXTERNAL_RE: Final = re.compile(
    r"""(?:\b(?:src|href|action|data|poster)\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|url\(\s*["']?\s*(?:https?:)?//|@import\s+["']?(?:url\()?\s*["']?\s*(?:https?:)?//"""
    r"""|\bhttps?://)""",
    re.IGNORECASE,
)
_TEXT_MIMES: Final = ("text/plain", "text/html", "text/markdown", "text/latex", "application/json")

_TEMPLATE_NAME: Final = "evalkit_report.html.j2"
_TEMPLATE: Final = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}
<meta http-equiv="Content-Security-Policy" content="{{ resources.evalkit_csp | e }}">
{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block data_png scoped -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}" alt="figure">
</div>
{%- endblock data_png -%}
{%- block notebook_css -%}
<style type="text/css">
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1f2328; background: #fff; line-height: 1.45; }
main { max-width: 1400px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .25rem; margin-top: 2rem; }
a.anchor-link { display: none; }
.jp-OutputArea-output { overflow-x: auto; margin: .5rem 0; }
.jp-OutputArea-output pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
       font-size: .85rem; }
table { border-collapse: collapse; font-size: .8rem; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .2rem .4rem; text-align: right;
         vertical-align: top; }
th.row_heading { white-space: nowrap; }
th { background: #f6f8fa; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
img { max-width: 100%; height: auto; }
.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"] { color: #8a6d3b; }
</style>
{%- endblock notebook_css -%}
"""


# --- parameters ---------------------------------------------------------------------------


def notebook_parameters(notebook: str | os.PathLike[str]) -> dict[str, Any]:
    """Name -> default value of each assignment in the notebook's cell tagged ``parameters``.

    Raises :class:`InputError` when the notebook cannot be read, has no ``parameters`` cell, or
    a default is not a Python literal.
    """
    nb = _read_notebook(notebook)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise InputError(
            f"notebook {_display(notebook)!r} has no cell tagged 'parameters'; tag the cell "
            "holding the parameter assignments (View > Cell metadata in JupyterLab)"
        )
    defaults: dict[str, Any] = {}
    try:
        tree = ast.parse(cells[0].source)
    except SyntaxError as error:
        raise InputError(
            f"notebook {_display(notebook)!r}: the parameters cell is not valid Python "
            f"(line {error.lineno})"
        ) from None
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or node.value is None:
                    continue
                try:
                    defaults[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise InputError(
                        f"notebook {_display(notebook)!r}: parameter {target.id!r} (line "
                        f"{node.lineno}) is not a literal; expected a string, number or bool"
                    ) from None
    return defaults


def coerce_parameters(
    values: Sequence[tuple[str, str]], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Convert ``(name, text)`` pairs to the type of each parameter's default value.

    Booleans accept ``true/false/yes/no/1/0`` (any case); ints and floats their Python syntax;
    strings are taken as they are. Raises :class:`UnknownNameError` for a name the notebook
    does not declare and :class:`InputError` for a value of the wrong type. Later pairs win.
    """
    result: dict[str, Any] = {}
    known = sorted(defaults)
    for name, text in values:
        if name not in defaults:
            raise _unknown_parameter(name, known)
        result[name] = _coerce(name, text, defaults[name])
    return result


def _unknown_parameter(name: str, known: list[str]) -> UnknownNameError:
    """The error for a parameter the notebook does not declare (``known``: sorted names)."""
    return UnknownNameError(
        f"unknown notebook parameter {name!r}; the notebook declares: "
        f"{', '.join(known) or 'none'}." + did_you_mean(name, known)
    )


def _coerce(name: str, text: str, default: Any) -> Any:
    if isinstance(default, bool):
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise InputError(
            f"notebook parameter {name!r} expects true or false, found {text!r}; "
            f"e.g. -p {name} false"
        )
    for kind, label in ((int, "an integer"), (float, "a number")):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise InputError(
                    f"notebook parameter {name!r} expects {label}, found {text!r}; "
                    f"e.g. -p {name} {default!r}"
                ) from None
    return text


# --- execution ----------------------------------------------------------------------------


def _curve_available() -> bool:
    """Whether pyzmq can encrypt the kernel's connection (CurveZMQ)."""
    import zmq

    return bool(zmq.has("curve"))


class _ReadyKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel is.

    jupyter_client's ``wait_for_ready`` asks ``kernel_info`` until the kernel answers on the
    shell channel and publishes on IOPub, then reads IOPub until it has been silent for 0.2 s:
    every report would wait that 0.2 s before its first cell. Here the read ends at the
    ``idle`` status of the request a reply answers, the last message the kernel publishes for
    it (IOPub keeps a socket's order). The rest is jupyter_client's loop: a kernel that has not
    answered within 1 s is asked again, as is one whose IOPub stays silent for 0.2 s (not
    connected yet), until ``timeout``. Every request of the call counts: a late reply to an
    earlier one, whose idle status was read while waiting for another, is ready too.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        sent: set[str] = set()  # this call's kernel_info requests
        idle: set[str] = set()  # those whose idle status has been read
        while True:
            sent.add(self.kernel_info())
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                answered = reply["parent_header"].get("msg_id")
                if await self._idle_published(answered, sent, idle, deadline):
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    async def _idle_published(
        self, answered: str | None, sent: set[str], idle: set[str], deadline: float
    ) -> bool:
        """Read IOPub until the idle status of ``answered`` has been seen (recording in
        ``idle`` those of the other ``sent`` requests); False when IOPub is silent for 0.2 s
        or ``deadline`` passes first."""
        while answered not in idle:
            wait = min(0.2, deadline - time.monotonic())
            if wait <= 0:
                return False
            try:
                message = await self.iopub_channel.get_msg(timeout=wait)
            except Empty:
                return False
            parent = message["parent_header"].get("msg_id")
            state = message["content"].get("execution_state")
            if message["msg_type"] == "status" and state == "idle" and parent in sent:
                idle.add(parent)
        return True


class _InterpreterKernelManager(AsyncKernelManager):
    """A kernel manager that always runs ipykernel on ``sys.executable`` (see module docs).

    The local connection is encrypted with CurveZMQ keys when pyzmq supports it; without
    CurveZMQ (POSIX) the kernel listens on Unix sockets in Jupyter's per-user runtime folder
    instead of unencrypted TCP, which ipykernel would (rightly) warn about on the terminal.
    Its clients are ``_ReadyKernelClient``.
    """

    client_class = DottedObjectName("evalkit.report.notebook._ReadyKernelClient")
    client_factory = Type(klass=_ReadyKernelClient)

    @default("transport_encryption")
    def _default_transport_encryption(self) -> str:
        return "auto" if _curve_available() else "disabled"

    @default("transport")
    def _default_transport(self) -> str:
        return "tcp" if _curve_available() or os.name == "nt" else "ipc"

    async def _async_interrupt_kernel(self) -> None:
        # jupyter_client's shutdown_kernel() interrupts the kernel before asking it to shut down,
        # in case a cell still runs. evalkit only shuts a kernel down once the notebook has
        # finished or failed, and a SIGINT that lands while ipykernel handles a message is
        # logged on the terminal as "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel".
        # The shutdown request needs no interrupt; a kernel that ignores it is killed after
        # shutdown_wait_time.
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()

    preload: tuple[str, ...] = ()
    """Modules the kernel imports while it starts (see :func:`_start_kernel`)."""
    warm_up: tuple[WarmUpCall, ...] = ()
    """Calls the kernel makes after those imports (see :func:`_start_kernel`)."""

    @property
    def kernel_spec(self) -> KernelSpec:
        if self._kernel_spec is None:
            # No command history: nothing is written to the user's IPython profile, and a kernel
            # stopped at once cannot leave a half-written history database behind.
            argv = [
                sys.executable,
                "-m",
                "ipykernel_launcher",
                "-f",
                "{connection_file}",
                "--HistoryManager.enabled=False",
            ]
            if self.preload:
                # One expression statement that evaluates to None: it defines no name in the
                # user namespace and displays nothing.
                names = ", ".join(repr(m) for m in self.preload)
                lines = [f"[__import__(m) for m in ({names},)] and None"]
                # Each call's module, function and text arguments are written as literals.
                lines += [
                    f"getattr(__import__({module!r}, fromlist=['_']), {function!r})"
                    f"({', '.join(repr(a) for a in arguments)}) and None"
                    for module, function, arguments in self.warm_up
                ]
                argv.append(f"--IPKernelApp.exec_lines={lines!r}")
            self._kernel_spec = KernelSpec(
                argv=argv,
                display_name=f"Python {sys.version_info[0]} (evalkit)",
                language="python",
                metadata={"debugger": False, "supported_encryption": ["curve"]},
            )
        return self._kernel_spec


WarmUpCall = tuple[str, str, tuple[str, ...]]
"""``(module, function, arguments)``: a call the report's kernel makes as it starts; the
function takes text arguments, returns None and never raises."""

REPORT_KERNEL_PRELOAD: Final = (
    "pandas",
    "pandas.io.formats.style",  # the tables' Styler (and jinja2)
    "pyarrow.parquet",  # the saved evaluation's frames
    "pyarrow.dataset",
    "matplotlib.figure",
    "matplotlib.pyplot",
    "matplotlib_inline.backend_inline",
    "evalkit.fixtures.load",  # load_fixture, the models and the rules
    "evalkit.fixtures.diff",  # the fixture's content hash, checked by load_evaluation
    "evalkit.run.evaluate",
    "evalkit.report.evaluation_files",
    "evalkit.report.plots",
    "evalkit.report.render",
    "evalkit.report.tables",
    "evalkit.report.verdict",
    "evalkit.gates.check",
    "evalkit.gates.diff",
    "evalkit.stats.multi",
    "evalkit.probes",
)
"""What the kernel of :func:`render_report` imports while it starts: the report notebook's
imports, so they load while this process checks the parameters and evaluates (two cores at
work instead of one). Not ``scipy.special``: its t quantile serves the paired comparisons,
which this process computes for the verdict section. Importing defines no name in the
notebook's namespace; a notebook that does not use a module has only paid for loading it. A
notebook without the ``evaluation_dir`` parameter evaluates in its kernel, which then also
loads the systems."""
REPORT_KERNEL_WARM_UP: Final[tuple[WarmUpCall, ...]] = (
    ("PIL.Image", "preinit", ()),  # the image plugins matplotlib's first PNG would load
    ("evalkit.report.plots", "warm_up", ()),  # fonts, text layout and the PNG writer
    ("evalkit.report.render", "warm_up", ()),  # pandas' Styler templates
)
"""Calls the report's kernel makes after :data:`REPORT_KERNEL_PRELOAD`; :func:`render_report`
adds the notebook's probe target (``probe_target``), whose code index is then built while
the kernel would otherwise wait for the evaluation."""
_ENGINE_NAME: Final = "evalkit-started-kernel"
EVALUATION_DIR_PARAMETER: Final = "evaluation_dir"
"""The report notebook's parameter for a saved evaluation (:mod:`evalkit.report.evaluation_files`):
:func:`render_report` evaluates in its own process while the kernel starts and passes the
folder; empty (the default, as in JupyterLab), the notebook evaluates by itself."""
REPORT_REPEATS: Final = 2
"""Runs per system of the report's evaluation (the notebook's setup cell: ``repeats=2``)."""


def _start_kernel(
    cwd: str | os.PathLike[str],
    preload: Sequence[str] = (),
    warm_up: Sequence[WarmUpCall] = (),
) -> _InterpreterKernelManager:
    """A kernel started now in ``cwd`` (not waited for) that imports ``preload`` and then makes
    the ``warm_up`` calls (only with a ``preload``); hand it to :func:`execute_notebook`, which
    shuts it down."""
    from jupyter_core.utils import run_sync

    manager = _InterpreterKernelManager()
    manager.preload = tuple(preload)
    manager.warm_up = tuple(warm_up)
    run_sync(manager.start_kernel)(cwd=os.fspath(cwd))
    return manager


def _stop_kernel(manager: _InterpreterKernelManager) -> None:
    """Shut down a kernel of :func:`_start_kernel` that no notebook ran on."""
    from jupyter_core.utils import run_sync

    if manager.has_kernel:
        run_sync(manager.shutdown_kernel)(now=True)  # cleans its connection files up too


@functools.cache
def _register_started_kernel_engine() -> None:
    """Register the papermill engine that runs a notebook on an already started kernel.

    papermill's own engine creates its kernel; given a kernel manager (``km``) it runs on that
    kernel but leaves it running. This engine is the same call, plus ``cleanup_kc=True``
    (nbclient's switch), so the kernel is shut down and its channels closed when the notebook
    ends, as with papermill's own kernels. The shutdown is immediate (the kernel keeps no state
    worth a graceful exit: its command history is off, see ``_InterpreterKernelManager``).
    """
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger

    class StartedKernelEngine(NBClientEngine):  # type: ignore[misc]
        @classmethod
        def execute_managed_notebook(  # noqa: PLR0917 - papermill's signature
            cls,
            nb_man: Any,
            kernel_name: str,
            log_output: bool = False,
            stdout_file: Any = None,
            stderr_file: Any = None,
            start_timeout: int = 60,
            execution_timeout: int | None = None,
            **kwargs: Any,
        ) -> nbformat.NotebookNode:
            hooks = {key: kwargs[key] for key in ("on_cell_execute",) if key in kwargs}
            client = PapermillNotebookClient(
                nb_man,
                km=kwargs["km"],
                **hooks,
                timeout=execution_timeout,
                startup_timeout=start_timeout,
                kernel_name=kernel_name,
                log=logger,
                log_output=log_output,
                stdout_file=stdout_file,
                stderr_file=stderr_file,
                # Every output has arrived when the last cell's reply has: the kernel is
                # stopped at once instead of waiting for its own exit (over a second).
                shutdown_kernel="immediate",
            )
            executed: nbformat.NotebookNode = client.execute(cleanup_kc=True)
            return executed

    papermill_engines.register(_ENGINE_NAME, StartedKernelEngine)


def execute_notebook(
    notebook: str | os.PathLike[str],
    parameters: Mapping[str, Any],
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    kernel: _InterpreterKernelManager | None = None,
    on_first_cell: Callable[[], None] | None = None,
) -> nbformat.NotebookNode:
    """Execute ``notebook`` with ``parameters`` headless (papermill); the executed notebook.

    Runs in ``cwd`` (default: the working directory), writes nothing, logs no cell output.
    ``kernel`` (private: :func:`_start_kernel`) is a kernel already started in ``cwd``; it is
    shut down when the notebook ends. ``on_first_cell`` (with ``kernel`` only) is called once,
    when the first cell is sent to the kernel: work for this process that should not delay the
    notebook's start. Raises :class:`NotebookError` naming the cell index and
    exception class only (the message may quote fixture text): open the notebook in
    JupyterLab to see the full error.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    name = _display(notebook)
    _read_notebook(notebook)  # a clear InputError for a missing or malformed file
    engine: dict[str, Any] = {"kernel_manager_class": _InterpreterKernelManager}
    if kernel is not None:
        _register_started_kernel_engine()
        engine = {"engine_name": _ENGINE_NAME, "km": kernel}
        if on_first_cell is not None:
            engine["on_cell_execute"] = _once(on_first_cell)
    try:
        executed: nbformat.NotebookNode = papermill.execute_notebook(
            os.fspath(notebook),
            None,
            parameters=dict(parameters),
            kernel_name=KERNEL_NAME,
            progress_bar=False,
            log_output=False,
            report_mode=True,
            cwd=os.fspath(cwd) if cwd is not None else None,
            execution_timeout=timeout_s,
            **engine,
        )
    except PapermillExecutionError as error:
        raise NotebookError(
            f"notebook {name!r}: cell {error.cell_index} raised {error.ename}; the message is "
            "not shown because it may quote fixture text. Open the notebook in JupyterLab with "
            "the same parameters to see it."
        ) from None
    except Exception as error:
        raise NotebookError(
            f"notebook {name!r} could not be executed ({type(error).__name__}); check that "
            "ipykernel is installed in this environment and the notebook runs in JupyterLab"
        ) from None
    finally:
        if kernel is not None:
            _stop_kernel(kernel)  # nothing left when papermill stopped before the kernel ran
    return executed


def _once(call: Callable[[], None]) -> Callable[..., None]:
    """An nbclient cell hook (keyword arguments ``cell``, ``cell_index``) calling ``call`` the
    first time only."""
    pending = [call]

    def hook(**_: Any) -> None:
        if pending:
            pending.pop()()

    return hook


# --- scrubbing ----------------------------------------------------------------------------


def machine_paths(extra: Sequence[str | os.PathLike[str]] = ()) -> dict[str, str]:
    """Absolute paths of this machine -> placeholder, longest path first.

    Covers ``extra`` (as ``<path>``), the working directory (``<cwd>``), the repository
    (``<repo>``), the home directory (``<home>``), the temporary directory (``<tmp>``) and the
    Python prefixes (``<python>``), each also in its symlink-resolved form.
    """
    named: list[tuple[str, str]] = [(os.fspath(p), "<path>") for p in extra]
    named += [
        (os.getcwd(), "<cwd>"),
        (os.fspath(DEFAULT_REPORT_NOTEBOOK.parent.parent), "<repo>"),
        (os.path.expanduser("~"), "<home>"),
        (tempfile.gettempdir(), "<tmp>"),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        (sys.exec_prefix, "<python>"),
    ]
    found: dict[str, str] = {}
    for path, placeholder in named:
        for variant in {os.path.abspath(path), os.path.realpath(path)}:
            if len(variant) > 1 and variant not in found:
                found[variant] = placeholder
    return dict(sorted(found.items(), key=lambda item: (-len(item[0]), item[0])))


def scrub_notebook(
    nb: nbformat.NotebookNode, *, paths: Mapping[str, str] | None = None
) -> nbformat.NotebookNode:
    """A scrubbed copy of ``nb`` (rules in the module docstring); ``nb`` is not modified.

    ``paths`` maps absolute paths to placeholders (default :func:`machine_paths`).
    """
    replacements = machine_paths() if paths is None else dict(paths)
    result = copy.deepcopy(nb)
    papermill_meta = result.metadata.get("papermill", {})
    for key in _PAPERMILL_PRIVATE_KEYS:
        papermill_meta.pop(key, None)
    result.metadata.pop("widgets", None)
    result.metadata = _scrub_value(result.metadata, replacements)
    for cell in result.cells:
        cell.source = _scrub_text(cell.source, replacements)
        cell.metadata = _scrub_value(cell.metadata, replacements)
        if cell.cell_type != "code":
            cell.pop("attachments", None)
            continue
        cell.outputs = [_scrub_output(output, replacements) for output in cell.outputs]
    return result


def _scrub_output(
    output: nbformat.NotebookNode, replacements: Mapping[str, str]
) -> nbformat.NotebookNode:
    kind = output.get("output_type")
    if kind == "error":
        ename = str(output.get("ename", "Exception"))
        error: nbformat.NotebookNode = _NBFORMAT.v4.new_output(
            "error",
            ename=ename,
            evalue="",
            traceback=[f"{ename} (message removed by evalkit: it may quote fixture text)"],
        )
        return error
    if kind == "stream":
        if output.get("name") == "stderr":
            stderr: nbformat.NotebookNode = _NBFORMAT.v4.new_output(
                "stream", name="stderr", text=STDERR_NOTE
            )
            return stderr
        output.text = _scrub_text(output.text, replacements)
        return output
    if kind in ("display_data", "execute_result"):
        for mime in list(output.get("data", {})):
            if mime in _TEXT_MIMES or mime.endswith(("+json", "+xml")):  # +xml: SVG too
                output.data[mime] = _scrub_value(output.data[mime], replacements)
        output.metadata = _scrub_value(output.get("metadata", {}), replacements)
    return output


def _scrub_value(value: Any, replacements: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _scrub_text(value, replacements)
    if isinstance(value, dict):
        return type(value)(
            {k: _scrub_value(v, replacements) for k, v in value.items()}  # keeps NotebookNode
        )
    if isinstance(value, list):
        return [_scrub_value(v, replacements) for v in value]
    return value


def _scrub_text(text: str, replacements: Mapping[str, str]) -> str:
    for path, placeholder in replacements.items():
        if path in text:  # whole components only: /tmp/a is no part of /tmp/a-b
            boundary = re.compile(re.escape(path) + r"(?![\w.~-])")
            text = boundary.sub(placeholder.replace("\\", "\\\\"), text)  # literal
    text = _ABSOLUTE_PATH_RE.sub("<path>", text)
    return _WINDOWS_PATH_RE.sub("<path>", text)


# --- HTML ---------------------------------------------------------------------------------


def export_html(nb: nbformat.NotebookNode, *, title: str = "evalkit report") -> str:
    """Standalone HTML of ``nb``'s outputs and Markdown: no code, no prompts, no external
    resources; images are embedded as ``data:`` URIs. The page carries a Content-Security-Policy
    ``<meta>`` (:data:`evalkit.report.render.CONTENT_SECURITY_POLICY`: inline styles and ``data:``
    images only, no script), so markup that an escaping bug let through cannot run."""
    exporter = _exporter()
    prepared = copy.deepcopy(nb)
    prepared.metadata["title"] = title
    resources = {"metadata": {"name": title}, "evalkit_csp": CONTENT_SECURITY_POLICY}
    with _EXPORT_LOCK:  # one exporter per process, and an exporter is not thread-safe
        html, _ = exporter.from_notebook_node(prepared, resources=resources)
    return str(html)


_EXPORT_LOCK: Final = threading.Lock()


@functools.cache
def _exporter() -> Any:
    """The one exporter of this process (its compiled templates are kept for the next report)."""
    import jinja2

    return _report_exporter_class()(
        extra_loaders=[jinja2.DictLoader({_TEMPLATE_NAME: _TEMPLATE})],
        template_file=_TEMPLATE_NAME,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
        # no heading anchors: nbconvert writes them as <a ... />, which a browser reads as an
        # open <a> holding the rest of the page (its own BeautifulSoup pass, skipped here,
        # used to repair that)
        exclude_anchor_links=True,
    )


def _warm_up_export(private: Sequence[PrivateText] = ()) -> None:
    """Import nbconvert and compile the report template (an empty notebook's export); index
    ``private`` for the leak scan."""
    from evalkit.safety.privacy import prepare_leak_scan

    with contextlib.suppress(Exception):  # export_html itself reports any real problem
        export_html(_NBFORMAT.v4.new_notebook())
    prepare_leak_scan(private)


def _evaluate_for_notebook(fixture: Fixture, parameters: Mapping[str, Any]) -> Evaluation:
    """The evaluation the report notebook's setup cell would run, with its parameters."""
    from evalkit.run.evaluate import evaluate

    names = [s.strip() for s in str(parameters["systems"]).split(",") if s.strip()]
    return evaluate(
        fixture,
        names or None,
        k=int(parameters["k"]),
        repeats=REPORT_REPEATS,
        concurrency=int(parameters.get("concurrency", 1)),
        workers=_report_workers(),
    )


def _report_workers() -> int:
    """Processes for the report's evaluation (:mod:`evalkit.run.parallel`): this machine's cores
    but one, which the kernel needs while it imports, at most 4. On 2 cores that is 1: two
    workers beside the importing kernel measured slower than one (2.1-2.2 s against 2.0 s)."""
    return max(1, min(4, usable_cores() - 1))


VERDICT_PARAMETERS: Final = ("base_system", "n_resamples", "seed", "baseline")
"""The report notebook's parameters its verdict cell depends on (besides the evaluation)."""


@dataclass(frozen=True)
class _ReportParts:
    """What the command computes parts of the report notebook from (the evaluation, its
    report dict, the fixture's folder and the notebook's parameters) and the evaluation
    ``folder`` they go to (:mod:`evalkit.report.handover`)."""

    evaluation: Evaluation
    report: Mapping[str, Any]
    fixture_path: Path
    parameters: Mapping[str, Any]
    folder: Path


def _save_verdict_for_notebook(parts: _ReportParts) -> None:
    """Compute the notebook's verdict section (:func:`evalkit.report.verdict.gate_and_judge`, its
    settings from the parameters) into the evaluation folder, as the notebook's verdict cell
    would. A notebook without those parameters gets nothing; a failure leaves nothing behind,
    and the cell then computes the section itself and reports the problem as it always does."""
    from evalkit.gates.check import load_report
    from evalkit.report.evaluation_files import save_verdict
    from evalkit.report.verdict import gate_and_judge

    if not set(VERDICT_PARAMETERS) <= set(parts.parameters):
        return
    base, n_resamples, seed, baseline = (parts.parameters[n] for n in VERDICT_PARAMETERS)
    try:
        given = load_report(find_input(str(baseline))) if baseline else None
        gated = gate_and_judge(
            parts.evaluation,
            parts.report,
            parts.fixture_path,
            baseline=given,
            base=str(base),
            n_resamples=int(n_resamples),
            seed=int(seed),
        )
    except Exception:  # an optimization only: the notebook then computes it itself
        return
    settings = {"base": base, "n_resamples": n_resamples, "seed": seed, "baseline": baseline}
    save_verdict(gated, parts.folder, settings)


REPORT_HELPER_FIGURES: Final = ("paired_difference_figure", "latency_figure")
"""The :mod:`evalkit.report.plots` functions whose figures ``evalkit report``'s helper draws for the
report notebook (its difference and latency cells), with the arguments those cells pass, in
this order: the later and larger figure first. The kernel usually reaches the latency cell
while the helper still draws the differences, claims the latency figure and draws it itself
(0.2 s) instead of waiting; the other order left the difference cell waiting. Interleaved
runs of ``evalkit report``, 10 each: median 7.4 s against 7.8 s."""


def _start_report_helper(parts: _ReportParts, workdir: Path) -> Helper | None:
    """Fork the helper (:mod:`evalkit.report.handover`) that computes the notebook's verdict section
    and draws :data:`REPORT_HELPER_FIGURES` into the evaluation folder while the kernel runs
    the first cells, in the notebook's working directory ``workdir`` (a baseline path is
    relative to it); None without one (no ``fork``), and the verdict is then computed here,
    before the notebook starts."""

    def work() -> None:  # in the helper: its own process, so changing directory is safe
        os.chdir(workdir)
        _draw_report_parts(parts)

    pending = [VERDICT_PENDING, *(figure_pending(name) for name in REPORT_HELPER_FIGURES)]
    helper = start_helper(work, parts.folder, pending)
    if helper is None:
        with contextlib.chdir(workdir):
            _save_verdict_for_notebook(parts)
    return helper


def _draw_report_parts(parts: _ReportParts) -> None:
    """In the helper: the verdict section, then the figures of :data:`REPORT_HELPER_FIGURES`
    as the notebook's cells call them; each pending name is cleared once done (or failed)."""
    evaluation, parameters, folder = parts.evaluation, parts.parameters, parts.folder
    try:
        _save_verdict_for_notebook(parts)
    finally:
        clear_pending(folder, [VERDICT_PENDING])
    from evalkit.report import plots

    systems = list(evaluation.systems)
    calls: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
        "latency_figure": ((evaluation.latency,), {"systems": systems}),
        "paired_difference_figure": (
            (evaluation.per_query,),
            {
                "base": parameters.get("base_system"),
                "systems": systems,
                "measures": plots.difference_measures(list(evaluation.measures)),
            },
        ),
    }
    for name in REPORT_HELPER_FIGURES:
        if not claim(folder, figure_pending(name)):  # the notebook got there first
            continue
        function = getattr(plots, name)
        args, kwargs = calls[name]
        try:
            key = figure_key(function, args, kwargs)
            if key is not None:
                save_figure(folder, key, function(*args, **kwargs))
        except Exception:  # an optimization only: the notebook then draws the figure itself
            pass
        finally:
            clear_pending(folder, [figure_pending(name)])


def _after_helper(helper: Helper | None, private: Sequence[PrivateText]) -> None:
    """Wait for the report's helper (if any) to exit, then warm the export up."""
    if helper is not None:
        helper.wait()
    _warm_up_export(private)


@functools.cache
def _report_exporter_class() -> type[Any]:
    """nbconvert's ``HTMLExporter`` without its closing BeautifulSoup pass.

    ``HTMLExporter.from_notebook_node`` re-parses the whole page to add a placeholder ``alt``
    to images and ``tabindex`` to outputs (about half of the export time of a report); the
    template below writes the ``alt`` text itself, and a page without script needs no
    ``tabindex``. Everything else is ``HTMLExporter``'s own code path.
    """
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters import highlight, widgetsdatatypefilter

    base: Any = HTMLExporter  # nbconvert's classes are partly typed
    template_exporter: Any = TemplateExporter
    Highlight2HTML: Any = highlight.Highlight2HTML
    WidgetsDataTypeFilter: Any = widgetsdatatypefilter.WidgetsDataTypeFilter

    class ReportExporter(base):  # type: ignore[misc]
        def from_notebook_node(
            self, nb: nbformat.NotebookNode, resources: dict[str, Any] | None = None, **kw: Any
        ) -> tuple[str, dict[str, Any]]:
            language = nb.metadata.get("language_info", {})
            lexer = language.get("pygments_lexer", language.get("name", None))
            highlight = self.filters.get(
                "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
            )
            resources = self._init_resources(resources)
            data_type = WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources
            )
            self.register_filter("highlight_code", highlight)
            self.register_filter("filter_data_type", data_type)
            html, resources = template_exporter.from_notebook_node(self, nb, resources, **kw)
            return str(html), resources

    return ReportExporter


def external_references(html: str) -> list[str]:
    """Snippets of ``html`` that would load or link something over the network (``src=``,
    ``href=``, ``url()``, ``@import`` of ``http(s)://`` or ``//``, or any bare ``http(s)://``)."""
    return [html[m.start() : m.end() + 40] for m in _EXTERNAL_RE.finditer(html)]


# --- the whole pipeline -------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedReport:
    """An executed, scrubbed report: ``html`` and ``notebook`` (``.ipynb`` JSON text);
    ``private`` is what :func:`write_rendered_report` scans both for again before writing."""

    html: str
    notebook: str
    redacted: bool
    parameters: dict[str, Any]
    private: tuple[PrivateText, ...] = field(default=(), repr=False)
    handed_over: tuple[str, ...] = ()
    """What the notebook took from the command's helper process instead of computing it, and
    what it drew itself because the helper had not begun it (:func:`evalkit.report.handover.taken`:
    ``verdict``, ``figure-<plotting function>``, ``figure-<plotting function>:notebook``)."""


def render_report(
    parameters: Mapping[str, Any],
    *,
    notebook: str | os.PathLike[str] = DEFAULT_REPORT_NOTEBOOK,
    cwd: str | os.PathLike[str] | None = None,
    allow_unredacted: bool = False,
    timeout_s: int = DEFAULT_TIMEOUT_S,
) -> RenderedReport:
    """Execute, scrub and export the report notebook; scan it for leaks. Writes nothing.

    ``parameters`` override the notebook's defaults (unknown names are refused). The notebook
    must declare ``fixture`` (a fixture directory), ``systems`` (comma-separated names, empty
    for all reference systems) and ``redact`` (bool). Raises :class:`InputError` when
    ``redact`` is false and ``allow_unredacted`` is not set, :class:`NotebookError` when the
    notebook fails or the HTML would load external resources, and
    :class:`~evalkit.errors.LeakError` (object IDs only) when a redacted report contains
    fixture text.
    """
    from evalkit.safety.privacy import assert_no_leaks, private_texts

    defaults = notebook_parameters(notebook)
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise _unknown_parameter(unknown[0], sorted(defaults))
    for required in ("fixture", "systems", "redact"):
        if required not in defaults:
            raise InputError(
                f"notebook {_display(notebook)!r} declares no {required!r} parameter; a report "
                "notebook needs fixture, systems and redact"
            )
    merged = {**defaults, **parameters}
    redact = merged["redact"]
    if not isinstance(redact, bool):
        raise InputError(f"notebook parameter 'redact' must be a bool, found {redact!r}")
    if not redact and not allow_unredacted:
        raise InputError(
            "redact=false puts query and chunk text into the report; refusing. Pass "
            "allow_unredacted=True (CLI: --allow-unredacted) to write a private, unscanned "
            "report that must not be published"
        )
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    fixture_path = find_input(str(merged["fixture"]), base=workdir)
    if parameters.get(EVALUATION_DIR_PARAMETER):
        raise InputError(
            f"notebook parameter {EVALUATION_DIR_PARAMETER!r} is set by evalkit report itself "
            "(it evaluates while the kernel starts); leave it out"
        )
    # The kernel starts (and imports what the notebook needs) while this process loads the
    # fixture and, when the notebook takes a saved evaluation, evaluates; see
    # REPORT_KERNEL_PRELOAD and evalkit.report.evaluation_files.
    preload: tuple[str, ...] = REPORT_KERNEL_PRELOAD
    if EVALUATION_DIR_PARAMETER not in defaults:
        preload = (*preload, "evalkit.systems.reference")
    kernel_calls = REPORT_KERNEL_WARM_UP
    if merged.get("probes") and isinstance(merged.get("probe_target"), str):
        target = merged["probe_target"]
        kernel_calls = (*kernel_calls, ("evalkit.probes.targets", "warm_up_target", (target,)))
    kernel = _start_kernel(workdir, preload, kernel_calls)
    with tempfile.TemporaryDirectory(prefix="evalkit-report-") as private_dir:
        try:
            # imported once the kernel is starting: pandas and the fixture models take a while
            from evalkit.fixtures import load_fixture
            from evalkit.report.evaluation_files import save_evaluation

            fixture = load_fixture(fixture_path)
            # a run:PATH system is relative to the notebook's working directory
            with contextlib.chdir(workdir):
                definitions = _system_definitions(str(merged["systems"]))
            parameters = check_report_parameters(
                merged,
                parameters,
                list(definitions),
                query_ids=fixture.queries_by_id,
                workdir=workdir,
            )
            merged = {**merged, **parameters}
            private = tuple(private_texts(fixture, definitions))
            helper: Helper | None = None
            saved: Path | None = None
            if EVALUATION_DIR_PARAMETER in defaults:
                with contextlib.chdir(workdir):
                    evaluation = _evaluate_for_notebook(fixture, merged)
                report = evaluation.to_report()
                saved = save_evaluation(evaluation, Path(private_dir) / "evaluation", report=report)
                parts = _ReportParts(evaluation, report, fixture_path, merged, saved)
                helper = _start_report_helper(parts, workdir)
                parameters = {**parameters, EVALUATION_DIR_PARAMETER: os.fspath(saved)}
        except BaseException:
            _stop_kernel(kernel)
            raise
        # nbconvert loads its templates and the leak scan indexes the private texts while the
        # notebook runs: from the first cell on (before, the warm-up would compete for this
        # process, one interpreter lock, with papermill's start, which the kernel waits on),
        # and after the helper (which has the other core until then).
        warm_up = threading.Thread(target=_after_helper, args=(helper, private), daemon=True)
        try:
            executed = execute_notebook(
                notebook,
                parameters,
                cwd=workdir,
                timeout_s=timeout_s,
                kernel=kernel,
                on_first_cell=warm_up.start,
            )
        finally:
            if warm_up.ident is None:  # no cell ran: the helper is waited for all the same
                warm_up.start()
            warm_up.join()
        handed_over = taken(saved) if saved is not None else ()
        extra = [
            Path(private_dir),
            workdir,
            fixture_path.resolve(),
            Path(notebook).resolve().parent,
        ]
        scrubbed = scrub_notebook(executed, paths=machine_paths(extra))
    html = export_html(scrubbed, title=f"evalkit report: {fixture.meta.id}")
    notebook_text = str(_NBFORMAT.writes(scrubbed))
    external = external_references(html)
    if external:
        raise NotebookError(
            f"the exported HTML would load {len(external)} external resource(s); a report must "
            "open offline: remove links and remote images from the notebook's outputs"
        )
    if redact:
        assert_no_leaks({"HTML": html, "notebook": notebook_text}, private)
    return RenderedReport(
        html=html,
        notebook=notebook_text,
        redacted=redact,
        parameters=dict(merged),
        private=private,
        handed_over=handed_over,
    )


def check_report_output(
    output: str | os.PathLike[str], *, workspace: str | os.PathLike[str] | None = None
) -> tuple[Path, Path]:
    """Check ``output`` (must end in ``.html``/``.htm``) and the ``.ipynb`` beside it with THE
    output-path check (:func:`evalkit.safety.artifacts.check_output`, creates nothing); both
    absolute paths. The CLI calls it before executing the notebook."""
    html_path = Path(output)
    if html_path.suffix.lower() not in (".html", ".htm"):
        raise InputError(
            f"report output {shown_path(output)} should end in .html; the executed notebook is "
            "written beside it with the .ipynb suffix"
        )
    return (
        check_output(html_path, workspace=workspace),
        check_output(html_path.with_suffix(".ipynb"), workspace=workspace),
    )


def check_report_parameters(
    merged: Mapping[str, Any],
    given: Mapping[str, Any],
    systems: Sequence[str],
    *,
    query_ids: Collection[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Check the report parameters before the notebook runs; ``given`` with ``base_system``
    settled.

    ``merged`` holds every parameter (defaults and ``given``), ``systems`` the names of the
    systems the ``systems`` parameter resolves to, in order. Rules: ``k`` is an integer >= 1;
    ``n_resamples`` >= 1 and ``worst`` and ``seed`` >= 0 when declared; ``base_system`` (a
    name or a spec of ``systems``) must be one of the systems. When ``base_system`` was not
    given and its default is not among the systems, the first system is the base. With the
    fixture's ``query_ids``, a ``query_id`` to drill into must be one of them; with the
    notebook's ``workdir``, a given ``baseline`` must be an existing file and a given
    ``probes`` an existing folder there. Raises :class:`InputError` saying which parameter is
    wrong and what is expected.
    """
    from evalkit.safety.names import safe_id  # not at import: the kernel starts first

    result = dict(given)
    query_id = str(merged.get("query_id") or "")
    if query_ids is not None and query_id and query_id not in query_ids:
        shown = repr(query_id) if safe_id(query_id) else "(not shown: no fixture ID)"
        raise InputError(
            f"notebook parameter query_id {shown} is not a query of the fixture; give one of "
            "its query IDs, or leave query_id empty"
        )
    if workdir is not None:
        for name, folder in (("baseline", False), ("probes", True)):
            value = str(given.get(name) or "")  # a default may be absent: the notebook skips it
            if not value:
                continue
            try:
                found = find_input(value, base=workdir)
            except InputError as error:
                raise InputError(f"notebook parameter {name}: {error}") from None
            if folder != found.is_dir():
                raise InputError(
                    f"notebook parameter {name} {shown_path(value)} is not a "
                    f"{'folder' if folder else 'file'}; expected "
                    f"{'a probe fixture folder' if folder else 'a report or baseline JSON file'}"
                )
    for name, minimum in (("k", 1), ("n_resamples", 1), ("worst", 0), ("seed", 0)):
        if name not in merged:
            continue
        value = merged[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InputError(
                f"notebook parameter {name!r} must be an integer >= {minimum}, found {value!r}; "
                f"e.g. -p {name} {max(minimum, 5)}"
            )
    if "base_system" in merged and systems:
        specs = [s.strip() for s in str(merged.get("systems", "")).split(",") if s.strip()]
        by_spec = dict(zip(specs, systems, strict=False))
        base = str(merged["base_system"]).strip()
        if base in systems:
            pass
        elif base in by_spec:
            result["base_system"] = by_spec[base]
        elif "base_system" not in given:
            result["base_system"] = systems[0]
        else:
            raise InputError(
                f"notebook parameter base_system {base!r} is not among the systems of this "
                f"report ({', '.join(systems)}); every other system is compared with the base, "
                f"so choose one of them, e.g. -p base_system {systems[0]}"
            )
    return result


def write_rendered_report(
    report: RenderedReport,
    output: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.html`` to ``output`` (must end in ``.html``) and the notebook beside it
    (same name, ``.ipynb``) through :func:`evalkit.safety.artifacts.write_artifacts`: both paths are
    checked and both texts leak-scanned against ``report.private`` (unless the report is
    unredacted by permission) before either is written; (html, ipynb) paths."""
    check_report_output(output, workspace=workspace)
    html_path = Path(output)
    written = write_artifacts(
        [
            Artifact(html_path, report.html, "html"),
            Artifact(html_path.with_suffix(".ipynb"), report.notebook, "notebook"),
        ],
        private=report.private,
        workspace=workspace,
        allow_private_text=not report.redacted,
    )
    return written[0], written[1]


def _system_definitions(systems: str) -> dict[str, dict[str, Any]]:
    """``definition()`` of each named system (built, not indexed), for the leak scan."""
    from evalkit.systems.reference import REFERENCE_SYSTEMS, resolve_system

    names = [s.strip() for s in systems.split(",") if s.strip()] or list(REFERENCE_SYSTEMS)
    definitions: dict[str, dict[str, Any]] = {}
    for name in names:
        system = resolve_system(name)
        try:
            definitions[str(system.name)] = system.definition()
        finally:
            close = getattr(system, "close", None)
            if callable(close):
                close()
    return definitions


def _read_notebook(notebook: str | os.PathLike[str]) -> nbformat.NotebookNode:
    try:
        notebook_node: nbformat.NotebookNode = _NBFORMAT.read(os.fspath(notebook), as_version=4)
        return notebook_node
    except FileNotFoundError:
        raise InputError(
            f"notebook {_display(notebook)!r} does not exist; expected an .ipynb file such as "
            "notebooks/retrieval_report.ipynb"
        ) from None
    except (OSError, ValueError) as error:
        raise InputError(
            f"notebook {_display(notebook)!r} cannot be read as a Jupyter notebook "
            f"({type(error).__name__})"
        ) from None


def _display(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when inside it, else its file name only."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.name
