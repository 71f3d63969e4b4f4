"""The package's shape (ARCHITECTURE.md): no import cycles, small modules, few top-level modules,
a core that works without the optional extras.

The layers themselves are import-linter's contracts (``make lint``); these tests check what a
layers contract does not: cycles inside one package and function-level imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"
MAX_MODULE_LINES = 800
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


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


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
