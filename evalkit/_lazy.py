"""Public names of a package that load on first use (PEP 562), so importing the package does
not import every module behind it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_attributes(
    package: str,
    namespace: MutableMapping[str, Any],
    module_of: Mapping[str, str],
    modules: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: a public name is taken
    from its module (``module_of[name]``) on first access and kept in ``namespace`` (the
    package's ``globals()``); a name of ``modules`` is that whole module
    (``modules[name]``, e.g. ``evalkit.plot``); ``__dir__`` lists those names with the
    package's own."""
    whole = dict(modules or {})

    def __getattr__(name: str) -> Any:
        if name in whole:
            value = importlib.import_module(whole[name])
            namespace[name] = value
            return value
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *module_of, *whole})

    return __getattr__, __dir__
