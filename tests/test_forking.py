"""``evalkit.forking.ForkedCall``: a function run in a forked process, its value or its error
brought back (real forks)."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from evalkit import forking

pytestmark = pytest.mark.skipif(not forking.fork_available(), reason="needs fork")


def test_the_value_comes_back_and_the_process_ends() -> None:
    call = forking.ForkedCall(sum, [1, 2, 3])
    assert call.result() == 6
    assert not call._process.is_alive()
    call.close()  # twice is fine


def test_the_error_is_raised_here() -> None:
    with pytest.raises(ZeroDivisionError):
        forking.ForkedCall(divmod, 1, 0).result()


def test_a_process_that_dies_is_reported_with_its_exit_code() -> None:
    ticks: list[int] = []
    call = forking.ForkedCall(os._exit, 3, what="indexing rows 1-9")
    with pytest.raises(RuntimeError, match=r"^indexing rows 1-9: .* exited with code 3"):
        call.result(lambda: ticks.append(1))


def test_a_value_that_cannot_be_sent_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="could not be sent"):
        forking.ForkedCall(threading.Lock).result()


def test_helpers_are_forked_only_with_a_second_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forking, "usable_cores", lambda: 1)
    assert not forking.can_fork_helpers()
    monkeypatch.setattr(forking, "usable_cores", lambda: 2)
    assert forking.can_fork_helpers() is not multiprocessing.current_process().daemon
