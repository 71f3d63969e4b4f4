"""The report notebook's kernel, and papermill's execution of a notebook on it.

- **Kernel.** The notebook runs on a kernel started with the interpreter that runs evalkit
  (``sys.executable`` running ipykernel's launcher, ``_LAUNCHER``), whatever kernel specs are
  installed: no kernel spec needs installing, and a user's own ``python3`` spec can never pick
  another environment.
  The notebook's metadata names the ``python3`` kernel, so JupyterLab opens it as usual.
  :func:`evalkit.report.render_report` starts the kernel first (:func:`start_kernel`),
  importing :data:`REPORT_KERNEL_PRELOAD` and making the :data:`REPORT_KERNEL_WARM_UP` calls,
  while it prepares the notebook's inputs; the notebook then runs on that kernel
  (:func:`execute_notebook`: papermill, every cell as usual).
  Its connection is encrypted with CurveZMQ, or (pyzmq without CurveZMQ, POSIX) uses Unix
  sockets in Jupyter's per-user runtime folder, never plain TCP; shutting it down sends no
  interrupt (see ``InterpreterKernelManager``), so a successful run prints nothing from the
  kernel.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from queue import Empty
from typing import Any, Final

import nbformat
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type, default

from evalkit.errors import NotebookError
from evalkit.report._parameters import notebook_label, read_notebook
from evalkit.safety.interrupts import deferred, reraise_if_interrupted
from evalkit.safety.scratch import scratch_dir

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "KERNEL_NAME",
    "REPORT_KERNEL_PRELOAD",
    "REPORT_KERNEL_WARM_UP",
    "InterpreterKernelManager",
    "WarmUpCall",
    "execute_notebook",
    "start_kernel",
    "stop_kernel",
]

KERNEL_NAME: Final = "python3"
DEFAULT_TIMEOUT_S: Final = 600


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


_LAUNCHER: Final = (
    "import sys, os\n"
    "if sys.path[0] in ('', os.getcwd()):\n"
    "    del sys.path[0]\n"
    "sys.modules['debugpy'] = None\n"
    "from ipykernel import kernelapp\n"
    "kernelapp.launch_new_instance()\n"
)
"""What the report's kernel runs: ``python -m ipykernel_launcher`` (the working directory out
of ``sys.path`` while ipykernel loads; IPython puts it back), except that ``debugpy`` cannot be
imported. ipykernel then starts without its debugger, as where debugpy is not installed: no
client of this kernel attaches one (its spec says ``"debugger": false``), and loading it cost
every report 0.15-0.2 s of the kernel's start."""


class InterpreterKernelManager(AsyncKernelManager):
    """A kernel manager that always runs ipykernel on ``sys.executable`` (see module docs).

    The local connection is encrypted with CurveZMQ keys when pyzmq supports it; without
    CurveZMQ (POSIX) the kernel listens on Unix sockets in Jupyter's per-user runtime folder
    instead of unencrypted TCP, which ipykernel would (rightly) warn about on the terminal.
    Its clients are ``_ReadyKernelClient``.
    """

    client_class = DottedObjectName("evalkit.report._kernel._ReadyKernelClient")
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
    """Modules the kernel imports while it starts (see :func:`start_kernel`)."""
    warm_up: tuple[WarmUpCall, ...] = ()
    """Calls the kernel makes after those imports (see :func:`start_kernel`)."""

    @property
    def kernel_spec(self) -> KernelSpec:
        if self._kernel_spec is None:
            # No command history: nothing is written to the user's IPython profile, and a kernel
            # stopped at once cannot leave a half-written history database behind.
            argv = [
                sys.executable,
                "-c",
                _LAUNCHER,
                "-f",
                "{connection_file}",
                "--HistoryManager.enabled=False",
            ]
            if self.preload:
                # One expression statement that evaluates to None: it defines no name in the
                # user namespace and displays nothing.
                names = ", ".join(repr(m) for m in self.preload)
                # The cyclic collector is paused meanwhile: the modules' objects and the
                # warm-up's all live on, and the collections it would make over them while they
                # are created cost about a tenth of the imports (0.15-0.2 s); they are then
                # frozen (gc.freeze), so that no later collection walks them again.
                lines = ["__import__('gc').disable()"]
                lines += [f"[__import__(m) for m in ({names},)] and None"]
                # Each call's module, function and text arguments are written as literals.
                lines += [
                    f"getattr(__import__({module!r}, fromlist=['_']), {function!r})"
                    f"({', '.join(repr(a) for a in arguments)}) and None"
                    for module, function, arguments in self.warm_up
                ]
                lines += ["__import__('gc').freeze() or __import__('gc').enable()"]
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
    "evalkit.run._evaluate",
    "evalkit.report.evaluation_files",
    "evalkit.report.plots",
    "evalkit.report.render",
    "evalkit.report.tables",
    "evalkit.report.verdict",
    "evalkit.gates._check",
    "evalkit.gates._diff",
    "evalkit.stats._multi",
    "evalkit.probes",
)
"""What the kernel of :func:`evalkit.report.render_report` imports while it starts:
the modules behind the report notebook's imports (private ones named as the packages that
re-export them resolve them), so they load while this process checks the parameters and
evaluates (two cores at work instead of one). Not ``scipy.special``: its t quantile serves the
paired comparisons, which this process computes for the verdict section. Importing defines no
name in the notebook's namespace; a notebook that does not use a module has only paid for
loading it. A notebook without the ``evaluation_dir`` parameter evaluates in its kernel, which
then also loads the systems."""
REPORT_KERNEL_WARM_UP: Final[tuple[WarmUpCall, ...]] = (
    ("PIL.Image", "preinit", ()),  # the image plugins matplotlib's first PNG would load
    ("evalkit.report.plots", "warm_up", ()),  # fonts, text layout and the PNG writer
    ("evalkit.report.render", "warm_up", ()),  # pandas' Styler templates
)
"""Calls the report's kernel makes after :data:`REPORT_KERNEL_PRELOAD`;
:func:`evalkit.report.render_report` adds the fixture's load
(:func:`evalkit.report.evaluation_files.preload_fixture`) and, where it forks no helper to run
the probes, the notebook's probe target (``probe_target``), whose code index is then built
while the kernel would otherwise wait for the evaluation."""
_ENGINE_NAME: Final = "evalkit-started-kernel"


def start_kernel(
    cwd: str | os.PathLike[str],
    preload: Sequence[str] = (),
    warm_up: Sequence[WarmUpCall] = (),
) -> InterpreterKernelManager:
    """A kernel started now in ``cwd`` (not waited for) that imports ``preload`` and then makes
    the ``warm_up`` calls (only with a ``preload``); hand it to :func:`execute_notebook`, which
    shuts it down."""
    from jupyter_core.utils import run_sync

    manager = InterpreterKernelManager()
    # its connection file (with the HMAC key) in this process's temporary folder, not a
    # tmpXXXX.json of its own, so a killed report's file is swept by the next run
    manager.connection_file = os.fspath(scratch_dir("kernel") / "kernel.json")
    manager.preload = tuple(preload)
    manager.warm_up = tuple(warm_up)
    try:
        # the kernel's own stderr (its log lines, a traceback that may quote fixture text) is
        # not shown: a notebook's errors reach the user as NotebookError, without the message
        run_sync(manager.start_kernel)(cwd=os.fspath(cwd), stderr=subprocess.DEVNULL)
    except BaseException:  # an interrupt while it starts: no caller can stop it, so stop it here
        stop_kernel(manager)
        raise
    return manager


def _remove_kernel_files(manager: InterpreterKernelManager) -> None:
    """Remove the kernel's connection file (with its HMAC key) and other resources, whatever
    state an interrupt left the manager in."""
    from jupyter_core.utils import run_sync

    with contextlib.suppress(Exception):
        run_sync(manager.cleanup_resources)()  # a coroutine on this (async) manager
    with contextlib.suppress(Exception):
        manager.cleanup_connection_file()  # plain file removal: works with a broken loop too


def stop_kernel(manager: InterpreterKernelManager) -> None:
    """Shut down a kernel of :func:`start_kernel` that no notebook ran on; safe to call twice.
    A signal that arrives meanwhile waits until the kernel and its files are gone."""
    with deferred():
        try:
            _stop_kernel_now(manager)
        finally:  # its folder in the temporary folder (scratch_dir), once its files are gone
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(manager.connection_file))


def _stop_kernel_now(manager: InterpreterKernelManager) -> None:
    from jupyter_core.utils import run_sync

    if not manager.has_kernel:
        _remove_kernel_files(manager)  # a connection file written before the process started
        return
    try:
        run_sync(manager.shutdown_kernel)(now=True)  # cleans its connection files up too
    except Exception:  # its event loop broken by SIGINT/SIGTERM: kill it, remove its files
        process = getattr(manager.provisioner, "process", None)
        with contextlib.suppress(Exception):
            process.kill()  # type: ignore[union-attr]
        _remove_kernel_files(manager)
        raise  # after a signal, evalkit.cli.main reports it as the interrupt it was


@functools.cache
def _register_started_kernel_engine() -> None:
    """Register the papermill engine that runs a notebook on an already started kernel.

    papermill's own engine creates its kernel; given a kernel manager (``km``) it runs on that
    kernel but leaves it running. This engine is the same call, plus ``cleanup_kc=True``
    (nbclient's switch), so the kernel is shut down and its channels closed when the notebook
    ends, as with papermill's own kernels. The shutdown is immediate (the kernel keeps no state
    worth a graceful exit: its command history is off, see ``InterpreterKernelManager``).
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
    kernel: InterpreterKernelManager | None = None,
    on_first_cell: Callable[[], None] | None = None,
) -> nbformat.NotebookNode:
    """Execute ``notebook`` with ``parameters`` headless (papermill); the executed notebook.

    Runs in ``cwd`` (default: the working directory), writes nothing, logs no cell output.
    ``kernel`` (private: :func:`start_kernel`) is a kernel already started in ``cwd``; it is
    shut down when the notebook ends. ``on_first_cell`` (with ``kernel`` only) is called once,
    when the first cell is sent to the kernel: work for this process that should not delay the
    notebook's start. Raises :class:`NotebookError` naming the cell index and
    exception class only (the message may quote fixture text): open the notebook in
    JupyterLab to see the full error.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    name = notebook_label(notebook)
    read_notebook(notebook)  # a clear InputError for a missing or malformed file
    engine: dict[str, Any] = {"kernel_manager_class": InterpreterKernelManager}
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
    # Before a NotebookError (which ``evalkit report`` turns into exit 1, not an interrupt):
    except PapermillExecutionError as error:
        reraise_if_interrupted()  # the kernel got the terminal's SIGINT too
        raise NotebookError(
            f"notebook {name!r}: cell {error.cell_index} raised {error.ename}; the message is "
            "not shown because it may quote fixture text. Open the notebook in JupyterLab with "
            "the same parameters to see it."
        ) from None
    except Exception as error:
        reraise_if_interrupted()  # papermill's event loop turned SIGINT/SIGTERM into an error
        raise NotebookError(
            f"notebook {name!r} could not be executed ({type(error).__name__}); check that "
            "ipykernel is installed in this environment and the notebook runs in JupyterLab"
        ) from None
    finally:
        if kernel is not None:
            stop_kernel(kernel)  # nothing left when papermill stopped before the kernel ran
    return executed


def _once(call: Callable[[], None]) -> Callable[..., None]:
    """An nbclient cell hook (keyword arguments ``cell``, ``cell_index``) calling ``call`` the
    first time only."""
    pending = [call]

    def hook(**_: Any) -> None:
        if pending:
            pending.pop()()

    return hook
