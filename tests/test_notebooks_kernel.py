"""The report kernel is quiet on a successful run (issue 16, item 7): no interrupt on shutdown
(ipykernel logs "KeyboardInterrupt caught in kernel" for it), no unencrypted TCP (ipykernel
warns "Kernel is running over TCP without encryption")."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import nbformat
import pytest
import zmq
from nbformat.v4 import new_code_cell, new_notebook

from evalkit.report._kernel import InterpreterKernelManager, execute_notebook


class _Recording(InterpreterKernelManager):
    """The real kernel manager, recording every signal it sends to the kernel process."""

    sent: list[int]

    async def _async_signal_kernel(self, signum: int) -> None:
        self.sent.append(signum)
        await super()._async_signal_kernel(signum)


@pytest.mark.slow
def test_a_clean_kernel_shutdown_sends_no_interrupt() -> None:
    async def start_and_stop() -> _Recording:
        manager = _Recording()
        manager.sent = []
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        client.stop_channels()
        await manager.shutdown_kernel()
        return manager

    manager = asyncio.run(start_and_stop())
    assert signal.SIGINT not in manager.sent
    assert not manager.has_kernel


@pytest.mark.slow
def test_ready_ends_at_the_kernel_info_idle_status_not_after_a_silence() -> None:
    """Each kernel_info request is followed at once by an execute request, so the kernel
    publishes that request's messages right after the kernel_info's idle status, with no
    silence between. The client stops reading at the idle status of the kernel_info it was
    answered for: the messages of the execute request sent right after that one are still
    there to read, its busy status first. (jupyter_client's own wait_for_ready reads IOPub
    until 0.2 s of silence and would have read them all.) The execute requests that followed
    earlier, unanswered kernel_info requests may have been published before IOPub was
    connected, or read while waiting: they are not looked at."""
    from evalkit.report._kernel import _ReadyKernelClient

    executes: dict[str, str] = {}  # kernel_info request -> the execute request sent after it
    answered: list[str] = []

    class Followed(_ReadyKernelClient):
        def kernel_info(self) -> str:
            request = str(super().kernel_info())
            executes[request] = self.execute("1")
            return request

        def _handle_kernel_info_reply(self, msg: dict[str, Any]) -> None:
            answered.append(msg["parent_header"]["msg_id"])
            super()._handle_kernel_info_reply(msg)

    class Manager(InterpreterKernelManager):
        client_factory = Followed

    async def messages_after_ready() -> list[dict[str, Any]]:
        manager = Manager()
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            following = executes[answered[-1]]
            seen: list[dict[str, Any]] = []
            while not seen or seen[-1]["content"] != {"execution_state": "idle"}:
                message = await client.iopub_channel.get_msg(timeout=30)
                if message["parent_header"].get("msg_id") == following:
                    seen.append(message)
            return seen
        finally:
            client.stop_channels()
            await manager.shutdown_kernel(now=True)

    ours = asyncio.run(messages_after_ready())
    assert ours[0]["msg_type"] == "status"
    assert ours[0]["content"] == {"execution_state": "busy"}


def _notebook(path: Path) -> Path:
    nb = new_notebook()
    nb.cells = [
        new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        new_code_cell("print(x + 1)"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_without_curve_the_kernel_does_not_run_on_unencrypted_tcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    real_has = zmq.has
    monkeypatch.setattr(zmq, "has", lambda feature: feature != "curve" and real_has(feature))
    executed = execute_notebook(_notebook(tmp_path / "nb.ipynb"), {"x": 41}, cwd=tmp_path)
    assert executed.cells[-1].outputs[0].text == "42\n"
    err = capfd.readouterr().err
    assert "without encryption" not in err
    assert "KeyboardInterrupt" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]  # no socket files left


@pytest.mark.slow
def test_the_kernel_runs_without_its_debugger_and_imports_from_the_working_directory(
    tmp_path: Path,
) -> None:
    """The launcher keeps debugpy from loading (nobody attaches a debugger to this kernel);
    the notebook's working directory is on the path as with ``python -m ipykernel_launcher``."""
    (tmp_path / "local_helper.py").write_text("VALUE = 41\n", encoding="utf-8")
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        new_code_cell(
            "import sys\nimport local_helper\n"
            "print(local_helper.VALUE + 1, sys.modules.get('debugpy', 'absent'))"
        )
    ]
    path = tmp_path / "check.ipynb"
    nbformat.write(notebook, path)
    executed = execute_notebook(path, {}, cwd=tmp_path)
    printed = "".join(o.get("text", "") for o in executed.cells[0].outputs)
    assert printed.split() == ["42", "None"]
