"""Run the ``evalkit`` command line in-process, in a given working directory (test helper)."""

from __future__ import annotations

import contextlib
import io
import pathlib
import warnings
from collections.abc import Mapping, Sequence

import pytest


def run_cli(
    argv: Sequence[str], workspace: pathlib.Path, env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    """Run ``evalkit argv`` in ``workspace`` with ``env`` set; (exit code, stdout, stderr).

    ``EVALKIT_OUTPUT`` is unset so the caller's environment cannot redirect a report.
    """
    from evalkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        patch.chdir(workspace)
        patch.delenv("EVALKIT_OUTPUT", raising=False)
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
