"""The report kernel is quiet on a successful run (issue 16, item 7): no interrupt on shutdown
(ipykernel logs "KeyboardInterrupt caught in kernel" for it), no unencrypted TCP (ipykernel
warns "Kernel is running over TCP without encryption")."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

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
    silence between. The client stops reading at that idle status: the execute request's
    messages are still there to read, its busy status first. (jupyter_client's own
    wait_for_ready reads IOPub until 0.2 s of silence and would have read them all.)"""
    from evalkit.report._kernel import _ReadyKernelClient

    executes: list[str] = []

    class Followed(_ReadyKernelClient):
        def kernel_info(self) -> str:
            request = str(super().kernel_info())
            executes.append(self.execute("1"))
            return request

    class Manager(InterpreterKernelManager):
        client_factory = Followed

    async def messages_after_ready() -> list[dict[str, object]]:
        manager = Manager()
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            # Read until every execute request's idle status. A message without a parent
            # (the kernel's "starting" status) may come in between and is skipped.
            seen: list[dict[str, object]] = []
            idle: set[str] = set()
            while idle != set(executes):
                message = await client.iopub_channel.get_msg(timeout=30)
                parent = message["parent_header"].get("msg_id")
                if parent in executes:
                    seen.append(message)
                    if message["content"] == {"execution_state": "idle"}:
                        idle.add(parent)
            return seen
        finally:
            client.stop_channels()
            await manager.shutdown_kernel(now=True)

    ours = asyncio.run(messages_after_ready())
    assert ours, "the execute request's messages were read by wait_for_ready"
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
