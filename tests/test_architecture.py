"""The package's shape (ARCHITECTURE.md): no import cycles, no module using another module's
private names, one home per public name, few top-level modules, a core that works without the
optional extras.

The layers themselves are import-linter's contracts (``make lint``); these tests check what a
layers contract does not: cycles inside one package and function-level imports, and the
public/private line. A module holds one concern, whatever its length (there is no line cap):
what it hides from the rest of its package is a ``_name``, and what a package hides from the
rest of evalkit is a private module ``_name.py`` whose public names the package re-exports.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import types
from pathlib import Path
from typing import NamedTuple

import grimp

import evalkit
import evalkit.errors

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"
MAX_TOP_LEVEL_MODULES = 12


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_function_level_imports_included() -> None:
    graph = grimp.build_graph(
        "evalkit", include_external_packages=False, exclude_type_checking_imports=True
    )
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(edges) == []


class PrivateImport(NamedTuple):
    """A module (``module``, at ``line``) using another module's private name (``what``)."""

    module: str
    line: int
    what: str


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module of ``from <level dots><name> import ...`` written in ``module``."""
    if level == 0:
        return name or ""
    base = module.split(".")[: None if is_package else -1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private_imports(root: Path) -> list[PrivateImport]:
    """Every use, in the modules of ``root/evalkit``, of another module's private name: ``from
    M import _n`` or ``M._n`` on an imported evalkit module, and any import of a private module
    ``pkg/_m.py`` from outside ``pkg``. A package's own private submodule (``from pkg import
    _m`` inside ``pkg``) and dunders are not private names."""
    found: list[PrivateImport] = []
    for path in sorted((root / "evalkit").rglob("*.py")):
        module = _module_name(path, root)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}  # a local name -> the evalkit module or name it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, is_package, node.level, node.module)
                if not _inside(source, "evalkit"):
                    continue
                parts = source.split(".")
                owner = next(
                    (".".join(parts[:i]) for i, part in enumerate(parts) if _private(part)), None
                )
                for alias in node.names:
                    if owner is not None and not _inside(module, owner):
                        what = f"private module {source}.{alias.name}"
                        found.append(PrivateImport(module, node.lineno, what))
                    own_submodule = _inside(module, source) and (
                        root.joinpath(*parts, alias.name + ".py").exists()
                    )
                    if _private(alias.name) and source != module and not own_submodule:
                        what = f"from {source} import {alias.name}"
                        found.append(PrivateImport(module, node.lineno, what))
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if _inside(alias.name, "evalkit"):
                        bound = alias.name if alias.asname else alias.name.split(".")[0]
                        modules[alias.asname or bound] = bound
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            chain: list[str] = []
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in modules:
                target = ".".join([modules[value.id], *reversed(chain)])
                where = root.joinpath(*target.split("."))
                is_module = where.with_suffix(".py").exists() or (where / "__init__.py").exists()
                if is_module and target != module:
                    found.append(PrivateImport(module, node.lineno, f"{target}.{node.attr}"))
    return found


def test_the_private_import_finder_finds_each_kind_of_use(tmp_path: Path) -> None:
    files = {
        "evalkit/__init__.py": "",
        "evalkit/a.py": "def _hidden(): ...\ndef shown(): ...\n",
        "evalkit/b.py": "from evalkit.a import _hidden, shown\n",  # a private name: found
        "evalkit/c.py": "import evalkit.a as a\na._hidden()\nx = a.__name__\n",  # found once
        "evalkit/pkg/__init__.py": "from evalkit.pkg import _m\nfrom evalkit.pkg._m import y\n",
        "evalkit/pkg/_m.py": "y = 1\n",
        "evalkit/pkg/inner.py": "from . import _m\nfrom ._m import y\n",  # inside pkg: fine
        "evalkit/d.py": "from evalkit.pkg._m import y\n",  # a private module from outside: found
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert private_imports(tmp_path) == [
        PrivateImport("evalkit.b", 1, "from evalkit.a import _hidden"),
        PrivateImport("evalkit.c", 2, "evalkit.a._hidden"),
        PrivateImport("evalkit.d", 1, "private module evalkit.pkg._m.y"),
    ]


def test_no_module_uses_another_modules_private_names() -> None:
    assert private_imports(PACKAGE.parent) == []


def _packages() -> list[types.ModuleType]:
    names = [evalkit.__name__]
    names += [m.name for m in pkgutil.walk_packages(evalkit.__path__, "evalkit.") if m.ispkg]
    return [importlib.import_module(name) for name in names]


def test_every_package_names_its_public_entry_points() -> None:
    assert [p.__name__ for p in _packages() if not getattr(p, "__all__", None)] == []


def test_no_package_exports_a_name_that_is_also_its_submodule() -> None:
    """Importing a submodule binds it as an attribute of its package: a public name equal to a
    submodule's name would turn into the module once the submodule was imported."""
    clashes = [
        f"{package.__name__}.{name}"
        for package in _packages()
        for name in package.__all__
        if (Path(package.__file__ or "").parent / f"{name}.py").exists()
        or (Path(package.__file__ or "").parent / name / "__init__.py").exists()
    ]
    assert clashes == []


def test_evaluate_stays_the_function_once_its_module_is_imported() -> None:
    implementation = importlib.import_module("evalkit.run._evaluate")
    from evalkit.run import evaluate

    assert inspect.isfunction(evaluate)
    assert evaluate is implementation.evaluate
    assert evalkit.evaluate is implementation.evaluate


def test_every_public_exception_class_is_defined_in_errors() -> None:
    elsewhere = sorted(
        f"{module.__name__}.{name}"
        for info in pkgutil.walk_packages(evalkit.__path__, "evalkit.")
        if info.name not in ("evalkit.errors", "evalkit.systems.fts5_writer")  # (Numba)
        for module in [importlib.import_module(info.name)]
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
        and not _private(name)
    )
    assert elsewhere == []
    assert {
        name
        for name, value in vars(evalkit.errors).items()
        if inspect.isclass(value) and issubclass(value, BaseException | Warning)
    } <= set(evalkit.errors.__all__)


def test_few_modules_at_the_top_of_the_package() -> None:
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_the_core_path_works_without_numba() -> None:
    """With Numba unimportable (the core install, no ``fast-index`` extra), an index large
    enough for the direct segment writer is built by FTS5's inserts and answers queries, and
    one logged line says so. (``tests/test_fts5_segment.py`` checks that both paths write the
    same segment.)"""
    probe = """
import logging, sys
sys.modules["numba"] = None  # import numba -> ImportError, as without the extra
logging.basicConfig(format="%(message)s", stream=sys.stdout)
from evalkit.systems import store
from evalkit.systems.lexical import LexicalRetriever
store.SEGMENT_FROM = 50  # a "large" index at this size, so the writer is asked for
import evalkit.systems.lexical as lexical
lexical.MEMORY_INDEX_BELOW = 0  # the FTS5 store, not lexical's arrays (evalkit.systems.bm25)
from evalkit.fixtures import generate_fixture
fixture = generate_fixture(7, documents=40, queries=4)
system = LexicalRetriever()
system.index(fixture.chunks)
hits = [system.search(q, 5) for q in fixture.queries]
print("hits", sum(len(h) for h in hits) > 0)
print("numba loaded", "numba" in sys.modules and sys.modules["numba"] is not None)
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert "hits True" in lines
    assert "numba loaded False" in lines
    notices = [line for line in lines if "evalkit[fast-index]" in line]
    assert len(notices) == 1


def test_declared_exports_reads_only_the_type_checking_re_exports() -> None:
    from evalkit._lazy import declared_exports

    source = (
        "from typing import TYPE_CHECKING\n"
        "from a.b import eager as eager\n"
        "if TYPE_CHECKING:\n"
        "    from a.b import used_in_annotations\n"
        "    from a.b import name as name, module as alias, _hidden as _hidden\n"
        "    from .c import relative as relative\n"
        "    from ..d import parent as parent\n"
    )
    assert declared_exports(source, "pkg.sub") == {
        "name": ("a.b", "name"),
        "alias": ("a.b", "module"),
        "relative": ("pkg.sub.c", "relative"),
        "parent": ("pkg.d", "parent"),
    }


def test_every_lazy_package_exports_exactly_its_declared_names() -> None:
    """``__all__`` is derived from the ``if TYPE_CHECKING:`` block; every name in it loads."""
    from evalkit._lazy import declared_exports

    for package in _packages():
        init = Path(package.__file__ or "")
        declared = declared_exports(init.read_text(encoding="utf-8"), package.__name__)
        if not declared:
            continue  # an eager package: ordinary imports and a literal __all__
        assert sorted(package.__all__) == sorted(declared), package.__name__
        for name in declared:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
