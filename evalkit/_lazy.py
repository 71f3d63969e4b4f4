"""Public names of a package that load on first use (PEP 562), listed once.

A package's ``__init__.py`` names its public API in one place: the explicit re-exports of its
``if TYPE_CHECKING:`` block (``from evalkit.gates._spec import load_gates as load_gates``), which
type checkers, editors and the documentation read. :func:`lazy_attributes` reads that same
block from the file's syntax tree (as SPEC 1's ``lazy_loader.attach_stub`` reads a stub), so
``__all__`` and the name-to-module map are derived from it, never written a second time; the
modules behind the names are imported on first access, so importing a package does not import
every module behind it. The block itself is read on first need too (a public name, ``__all__``
or ``dir()``): importing a package to reach one of its modules (the console script imports
``evalkit.cli.entry``) parses nothing, and does not import :mod:`ast`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, MutableMapping
from typing import Any


class _Export:
    """Where one public name comes from: ``getattr(module, attribute)``, or the submodule
    ``module.attribute`` when the package does not hold it yet (``plot`` is a module)."""

    __slots__ = ("attribute", "module")

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute

    def load(self) -> Any:
        module = importlib.import_module(self.module)
        try:
            return getattr(module, self.attribute)
        except AttributeError:
            return importlib.import_module(f"{self.module}.{self.attribute}")


def declared_exports(source: str, package: str) -> dict[str, tuple[str, str]]:
    """The public names of a package ``__init__``'s source: ``{name: (module, attribute)}`` for
    each ``from MODULE import ATTRIBUTE as NAME`` in its top-level ``if TYPE_CHECKING:`` block
    (relative modules resolved against ``package``). A plain ``from M import X`` there is a
    name the package uses in annotations, not one it exports, as type checkers read it."""
    import ast  # at first use, not at start-up (see the module docstring)

    exports: dict[str, tuple[str, str]] = {}
    for statement in ast.parse(source).body:
        if not isinstance(statement, ast.If):
            continue
        if not (isinstance(statement.test, ast.Name) and statement.test.id == "TYPE_CHECKING"):
            continue
        for node in statement.body:
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            module = node.module
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}"
            for alias in node.names:
                if alias.asname is not None and not alias.asname.startswith("_"):
                    exports[alias.asname] = (module, alias.name)
    return exports


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def lazy_attributes(
    package: str, namespace: MutableMapping[str, Any], init_file: str | None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``, whose ``__init__.py``
    is ``init_file``. ``__all__`` is the names its ``if TYPE_CHECKING:`` block re-exports,
    sorted; it, like every name, is taken on first access and then kept in ``namespace`` (the
    package's ``globals()``). A name is taken from its module."""
    if init_file is None:  # pragma: no cover - a package is always a file here
        raise ImportError(f"{package}: lazy public names need the package's __init__.py")

    @functools.cache
    def exports() -> dict[str, _Export]:
        declared = declared_exports(_read(init_file), package)
        return {name: _Export(module, attribute) for name, (module, attribute) in declared.items()}

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(exports())
        else:
            export = exports().get(name)
            if export is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = export.load()
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports(), "__all__"})

    return __getattr__, __dir__
