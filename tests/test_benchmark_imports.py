"""Every evalkit name a benchmark imports still exists: in its own code and in the child
scripts it runs from strings (``python -c CODE``). The benchmarks are run on demand, not by
``make test``, so a rename in evalkit would otherwise surface only in the next person's run
(``bench_yaml_load.py`` kept importing a module renamed private for several sessions)."""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
_MAGIC = re.compile(r"(?m)^(\s*)%.*$")  # a line magic (%matplotlib inline) in a cell


def _trees(source: str) -> list[ast.Module]:
    """The script's syntax tree and those of its string constants that are Python code."""
    trees = [ast.parse(source)]
    for node in ast.walk(trees[0]):
        code = node.value if isinstance(node, ast.Constant) else None
        if isinstance(code, str) and ("import evalkit" in code or "from evalkit" in code):
            # indented child scripts (textwrap.dedent) and notebook cells (IPython magics)
            python = _MAGIC.sub(r"\1pass", textwrap.dedent(code))
            try:
                trees.append(ast.parse(python))
            except SyntaxError:  # prose that mentions an import, not code
                continue
    return trees


def _evalkit_imports(path: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of every ``from evalkit... import name`` (name "" for ``import``)."""
    found: set[tuple[str, str]] = set()
    for tree in _trees(path.read_text(encoding="utf-8")):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalkit"):
                found |= {(str(node.module), alias.name) for alias in node.names}
            elif isinstance(node, ast.Import):
                found |= {(a.name, "") for a in node.names if a.name.startswith("evalkit")}
    return found


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.name)
def test_every_evalkit_import_of_a_benchmark_resolves(path: Path) -> None:
    missing = []
    for module_name, name in sorted(_evalkit_imports(path)):
        module = importlib.import_module(module_name)
        if name and not hasattr(module, name):
            try:
                importlib.import_module(f"{module_name}.{name}")
            except ModuleNotFoundError:
                missing.append(f"{module_name}.{name}")
    assert not missing, f"{path.name} imports names evalkit no longer has: {missing}"


def test_the_child_scripts_are_read() -> None:
    """The scan sees an import that only a child script's string makes, indented or a
    notebook cell with a magic too."""
    found = _evalkit_imports(BENCHMARKS / "bench_report.py")
    assert ("evalkit.report._notebook", "_draw_report_parts") in found
    for indented in ("bench_startup_phases.py", "bench_report_floor.py"):
        assert _evalkit_imports(BENCHMARKS / indented), indented
