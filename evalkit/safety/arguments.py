"""Checking what a caller passed to a public function: a path where a file or folder is expected.

``evaluate``, ``score``, ``load_fixture`` and their neighbours take a path as ``str`` or any
``os.PathLike`` wherever they read a fixture, qrels or a run; anything else is a ``TypeError``
that names the function, the parameter and the accepted types (never the value, which may be
private).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["path_argument", "require_path"]

_PATH = "a path (str or os.PathLike)"


def require_path(value: object, parameter: str, *, function: str, accepted: str = _PATH) -> Path:
    """``value`` (a ``str`` or ``os.PathLike`` of text) as a :class:`~pathlib.Path`; else
    ``TypeError`` naming ``function``'s ``parameter`` and what it ``accepted``."""
    if isinstance(value, str | os.PathLike):
        text = os.fspath(value)
        if isinstance(text, str):
            return Path(text)
    raise TypeError(f"{function}(): {parameter} must be {accepted}, got {type(value).__name__}")


def path_argument(
    value: object, parameter: str, *, function: str, also: tuple[type, ...], what: str
) -> Path | None:
    """``None`` when ``value`` is an instance of one of ``also`` (the other types the function
    accepts, named by ``what``, e.g. ``"a Fixture"``), else :func:`require_path`."""
    if isinstance(value, also):
        return None
    return require_path(value, parameter, function=function, accepted=f"{what} or {_PATH}")
