"""Probe targets: named, buildable sets of tools (``evalkit probes DIR --target NAME``).

A target is registered in :data:`TARGETS` as a zero-argument factory; :func:`get_target` builds
it. The first target, ``stdlib``, is a code-symbol index over the standard library's ``email``
and ``json`` packages (:mod:`evalkit.probes.codeindex`), built at run time from the installed
source, so its answers depend on the Python version (recorded by :attr:`Target.fingerprint`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from evalkit.probes.codeindex import build_code_index
from evalkit.probes.tools import Tool
from evalkit.registry import Registry

__all__ = ["STDLIB_PACKAGES", "TARGETS", "Target", "get_target", "warm_up_target"]

STDLIB_PACKAGES = ("email", "json")


@dataclass(frozen=True)
class Target:
    """A named tool registry, with a content hash of what the tools answer from."""

    name: str
    tools: Registry[Tool]
    fingerprint: str  # "sha256:..." of the target's data, e.g. the indexed source files


TARGETS: Registry[Callable[[], Target]] = Registry("target", ids=True)


def get_target(name: str) -> Target:
    """Build the target registered under ``name`` (unknown name: ``UnknownNameError``)."""
    return TARGETS.get(name)()


def warm_up_target(name: str) -> None:
    """Build the target ``name`` once, so that a later :func:`get_target` in this process
    reuses its code index (see :func:`~evalkit.probes.codeindex.build_code_index`). Never
    raises: an unknown name or a failing build is reported by the later ``get_target``. The
    report's kernel calls it while it waits for the evaluation."""
    with contextlib.suppress(Exception):
        get_target(name)


def _stdlib_target() -> Target:
    index = build_code_index(STDLIB_PACKAGES)
    tools: Registry[Tool] = Registry("tool")
    tools.register("find_symbol", Tool.from_function(index.find_symbol, ordered=False))
    tools.register("search_symbols", Tool.from_function(index.search_symbols, ordered=True))
    tools.register("members_of", Tool.from_function(index.members_of, ordered=False))
    tools.register("subclasses_of", Tool.from_function(index.subclasses_of, ordered=False))
    tools.register("callers_of", Tool.from_function(index.callers_of, ordered=False))
    return Target("stdlib", tools, index.fingerprint)


TARGETS.register("stdlib", _stdlib_target)
