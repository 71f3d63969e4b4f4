"""A static code-symbol index over installed Python packages, built with :mod:`ast`.

Symbols are modules, classes and functions (``def``/``async def`` at any nesting, so methods and
local helper functions too), named by qualified name: ``json.decoder.JSONDecoder.raw_decode``,
``json.encoder._make_iterencode._iterencode_dict``. Variables and attributes are not symbols.
Names brought in by ``import`` are bindings, not symbols: ``json.JSONDecoder`` is found as
``json.decoder.JSONDecoder``, where it is defined.

The index reads the package sources located with ``importlib.util.find_spec(...).origin``,
files in sorted order, and never stores or returns a file path: outputs carry qualified names,
module names and a content :attr:`CodeIndex.fingerprint` only.

The five query methods are the tools of the ``stdlib`` probe target:

- :meth:`CodeIndex.find_symbol` -- definitions by (dotted) name;
- :meth:`CodeIndex.search_symbols` -- a ranked search over identifier words;
- :meth:`CodeIndex.members_of` -- direct children in the symbol tree;
- :meth:`CodeIndex.subclasses_of` -- classes listing a class among their bases;
- :meth:`CodeIndex.callers_of` -- a static approximation of the call graph (see there).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evalkit.errors import InputError
from evalkit.safety.canonical import canonical_hash

__all__ = ["CodeIndex", "Symbol", "build_code_index", "words"]

SymbolKind = Literal["module", "class", "function"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX_LIMIT = 1000
_MAX_ALIAS_HOPS = 20


@dataclass(frozen=True)
class Symbol:
    """One definition: its qualified name, kind, enclosing symbol and 1-based source line."""

    qualified_name: str
    kind: SymbolKind
    module: str
    parent: str | None
    line: int

    @property
    def name(self) -> str:
        """The last component of the qualified name."""
        return self.qualified_name.rsplit(".", 1)[-1]


@dataclass
class _Scope:
    """A module, class or function body: what its names are bound to, and the calls it makes."""

    qualified_name: str
    kind: SymbolKind
    module: str
    package: str
    parent: _Scope | None
    bindings: dict[str, str] = field(default_factory=dict)  # name -> qualified target
    local_names: set[str] = field(default_factory=set)  # assigned/parameter names (unresolvable)
    self_name: str | None = None  # first parameter of a method
    calls: list[ast.expr] = field(default_factory=list)  # the ``func`` of each call
    bases: list[ast.expr] = field(default_factory=list)  # class bases (evaluated in parent)


def words(identifier: str) -> list[str]:
    """Lower-case words of an identifier: ``'JSONDecoder' -> ['json', 'decoder']``,
    ``'decode_rfc2231' -> ['decode', 'rfc', '2231']``."""
    return [w.lower() for w in _WORD.findall(identifier)]


class CodeIndex:
    """Symbols of some packages and a statically resolved call graph between them.

    Build with :func:`build_code_index`. All query methods return qualified names as a new list.
    """

    def __init__(
        self,
        packages: tuple[str, ...],
        symbols: dict[str, Symbol],
        callers: dict[str, tuple[str, ...]],
        bases: dict[str, tuple[str, ...]],
        fingerprint: str,
    ) -> None:
        self.packages = packages
        self._symbols = symbols
        self._callers = callers
        self._bases = bases
        self.fingerprint = fingerprint
        children: dict[str, list[str]] = {}
        for symbol in symbols.values():
            if symbol.parent is not None:
                children.setdefault(symbol.parent, []).append(symbol.qualified_name)
        self._children = {name: tuple(sorted(kids)) for name, kids in children.items()}
        self._words = {qn: frozenset(words(s.name)) for qn, s in symbols.items()}

    def __len__(self) -> int:
        return len(self._symbols)

    def __contains__(self, qualified_name: object) -> bool:
        return qualified_name in self._symbols

    def symbol(self, qualified_name: str) -> Symbol:
        """The symbol of that qualified name; ``LookupError`` if there is none."""
        self._require(qualified_name)
        return self._symbols[qualified_name]

    def symbols(self) -> list[Symbol]:
        """Every symbol, sorted by qualified name."""
        return [self._symbols[qn] for qn in sorted(self._symbols)]

    def find_symbol(self, name: str) -> list[str]:
        """Definitions whose qualified name is ``name`` or ends with ``"." + name``, sorted.

        ``name`` may be dotted: ``"JSONDecoder.decode"`` finds ``json.decoder.JSONDecoder.decode``.
        Matching is exact and case-sensitive on whole name components; no match gives ``[]``.
        """
        if not name or name.startswith(".") or name.endswith("."):
            raise ValueError("name must be a non-empty (dotted) identifier")
        suffix = "." + name
        return sorted(qn for qn in self._symbols if qn == name or qn.endswith(suffix))

    def search_symbols(self, query: str, limit: int = 10) -> list[str]:
        """Up to ``limit`` symbols ranked by how many words of ``query`` their name contains.

        Words come from splitting identifiers on underscores, digits and case changes
        (:func:`words`), lower-cased; only the last name component of a symbol is searched.
        A symbol matching no query word is not returned. Ranking rule (total, deterministic):
        more distinct query words matched first, then fewer words in the name (a tighter match),
        then qualified name in code-point order.
        """
        if isinstance(limit, bool) or not 1 <= limit <= _MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {_MAX_LIMIT}")
        wanted = set(words(query))
        if not wanted:
            raise ValueError("query has no words to search for")
        scored = []
        for qn, name_words in self._words.items():
            matched = len(wanted & name_words)
            if matched:
                scored.append((-matched, len(name_words), qn))
        scored.sort()
        return [qn for _, _, qn in scored[:limit]]

    def members_of(self, qualified_name: str) -> list[str]:
        """Direct children, sorted: submodules of a package; classes and functions defined
        directly in a module, class or function body. ``LookupError`` for an unknown name."""
        self._require(qualified_name)
        return list(self._children.get(qualified_name, ()))

    def subclasses_of(self, qualified_name: str) -> list[str]:
        """Indexed classes that list ``qualified_name`` among their bases (direct subclasses
        only), sorted. Bases are resolved like calls (see :meth:`callers_of`)."""
        if self.symbol(qualified_name).kind != "class":
            raise ValueError("subclasses_of needs the qualified name of a class")
        return sorted(qn for qn, bases in self._bases.items() if qualified_name in bases)

    def callers_of(self, qualified_name: str) -> list[str]:
        """Symbols whose own body calls ``qualified_name``, sorted (a static approximation).

        A caller is the innermost enclosing function, class body or module of a call
        expression. A call ``f(...)``, ``a.b.f(...)`` is attributed to its target only when the
        callee resolves by name within the indexed packages:

        - a bare name, looked up like Python does: the function's own nested definitions and
          imports, then enclosing functions, then the module's definitions and imports; a name
          the function assigns or takes as a parameter is a local variable and stays unresolved;
        - ``self.f``/``cls.f`` (the first parameter of a method) and ``super().f``: ``f`` is
          looked up in the enclosing class and its indexed bases, depth-first, left to right;
        - dotted names through imported modules and classes (``utils.quote``, ``Class.f``),
          following re-exports such as ``json.JSONDecoder``.

        Calling a class (instantiation) counts as calling the class. Not seen: calls through
        variables, attributes of other objects (``self.policy.fold(...)``), callbacks passed as
        values, ``getattr``, and dynamic dispatch to overriding methods of subclasses.
        """
        self._require(qualified_name)
        return list(self._callers.get(qualified_name, ()))

    def _require(self, qualified_name: str) -> None:
        if qualified_name not in self._symbols:
            raise LookupError("no indexed symbol has that qualified name")


def build_code_index(packages: Sequence[str]) -> CodeIndex:
    """Index the named installed packages (e.g. ``["email", "json"]``) from their source.

    The sources are read and hashed on every call; an index already built in this process
    from the same sources (same fingerprint) is returned again instead of parsed anew. A
    :class:`CodeIndex` cannot be changed, so sharing it is safe.
    """
    if not packages:
        raise InputError("build_code_index: expected at least one package name, found none")
    names = tuple(sorted(set(packages)))
    modules: list[tuple[str, bool, bytes]] = []
    file_hashes: dict[str, str] = {}
    for package in names:
        for module, path in _package_modules(package):
            source = path.read_bytes()
            file_hashes[module] = "sha256:" + hashlib.sha256(source).hexdigest()
            modules.append((module, path.name == "__init__.py", source))
    fingerprint = canonical_hash({"packages": list(names), "modules": file_hashes})
    built = _BUILT.get(fingerprint)
    if built is None:
        builder = _Builder()
        for module, is_package, source in modules:
            builder.add_module(module, is_package, ast.parse(source))
        built = _BUILT[fingerprint] = builder.finish(names, fingerprint)
    return built


_BUILT: dict[str, CodeIndex] = {}
"""Indexes built in this process, by fingerprint (which covers the package names)."""


def _package_modules(package: str) -> Iterator[tuple[str, Path]]:
    """(module name, source path) of every ``.py`` file of an installed package, sorted."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
        raise InputError(
            f"build_code_index: {package!r} is not an installed package with Python source; "
            "expected a package name such as 'json' or 'email'"
        )
    root = Path(spec.origin).parent
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join((package, *parts)), path


class _Builder:
    """Collects scopes module by module, then resolves calls and bases once all are known."""

    def __init__(self) -> None:
        self.symbols: dict[str, Symbol] = {}
        self.scopes: dict[str, _Scope] = {}
        self.bases: dict[str, tuple[str, ...]] = {}  # class -> resolved indexed bases

    # -- pass 1: definitions, bindings, calls ------------------------------------------------

    def add_module(self, module: str, is_package: bool, tree: ast.Module) -> None:
        parent_module = module.rpartition(".")[0] or None
        package = module if is_package else (parent_module or module)
        self.symbols[module] = Symbol(module, "module", module, parent_module, 1)
        scope = _Scope(module, "module", module, package, None)
        self.scopes[module] = scope
        self._collect(scope, tree.body)

    def _collect(self, scope: _Scope, body: Sequence[ast.AST]) -> None:
        for node in body:
            self._visit(scope, node)

    def _visit(self, scope: _Scope, node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for outer in (*node.decorator_list, *_outer_parts(node)):
                self._visit(scope, outer)
            self._define(scope, node)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.bindings[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    scope.bindings[head] = head
            return
        if isinstance(node, ast.ImportFrom):
            base = _import_base(scope, node)
            for alias in node.names:
                if alias.name != "*":
                    scope.bindings[alias.asname or alias.name] = f"{base}.{alias.name}"
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            scope.local_names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.local_names.add(node.name)
        elif isinstance(node, ast.Call):
            scope.calls.append(node.func)
        for child in ast.iter_child_nodes(node):
            self._visit(scope, child)

    def _define(
        self, scope: _Scope, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    ) -> None:
        qualified_name = f"{scope.qualified_name}.{node.name}"
        kind: SymbolKind = "class" if isinstance(node, ast.ClassDef) else "function"
        self.symbols[qualified_name] = Symbol(
            qualified_name, kind, scope.module, scope.qualified_name, node.lineno
        )
        scope.bindings[node.name] = qualified_name
        child = _Scope(qualified_name, kind, scope.module, scope.package, scope)
        self.scopes[qualified_name] = child
        if isinstance(node, ast.ClassDef):
            child.bases = list(node.bases)
        else:
            arguments = node.args
            params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            params += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            child.local_names.update(p.arg for p in params)
            positional = [*arguments.posonlyargs, *arguments.args]
            if scope.kind == "class" and positional:
                child.self_name = positional[0].arg
        self._collect(child, node.body)

    # -- pass 2: resolution --------------------------------------------------------------------

    def finish(self, packages: tuple[str, ...], fingerprint: str) -> CodeIndex:
        for scope in self.scopes.values():
            if scope.kind == "class" and scope.parent is not None:
                resolved = (self._resolve(scope.parent, base, None) for base in scope.bases)
                self.bases[scope.qualified_name] = tuple(
                    b for b in resolved if b is not None and self.symbols[b].kind == "class"
                )
        callers: dict[str, set[str]] = {}
        for scope in self.scopes.values():
            cls = _enclosing_class(scope)
            for func in scope.calls:
                target = self._resolve(scope, func, cls)
                if target is not None:
                    callers.setdefault(target, set()).add(scope.qualified_name)
        return CodeIndex(
            packages,
            dict(sorted(self.symbols.items())),
            {target: tuple(sorted(names)) for target, names in callers.items()},
            self.bases,
            fingerprint,
        )

    def _resolve(self, scope: _Scope, expr: ast.expr, cls: str | None) -> str | None:
        """The indexed symbol ``expr`` names when evaluated in ``scope``, or None."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        parts.reverse()
        if _is_super_call(expr):
            if cls is None or not parts:
                return None
            method = self._lookup_in_bases(cls, parts[0], skip_self=True)
            return self._walk(method, parts[1:]) if method else None
        if not isinstance(expr, ast.Name):
            return None
        if cls is not None and scope.self_name == expr.id and parts:
            method = self._lookup_in_bases(cls, parts[0], skip_self=False)
            return self._walk(method, parts[1:]) if method else None
        head = self._lookup_name(scope, expr.id)
        return self._walk(head, parts) if head else None

    def _lookup_name(self, scope: _Scope, name: str) -> str | None:
        current: _Scope | None = scope
        first = True
        while current is not None:
            if first or current.kind != "class":  # class bodies are not enclosing scopes
                if name in current.bindings:
                    return current.bindings[name]
                if name in current.local_names:
                    return None
            first = False
            current = current.parent
        return None

    def _walk(self, start: str, parts: Sequence[str]) -> str | None:
        current = self._canonical(start)
        for part in parts:
            if current is None:
                return None
            if self.symbols[current].kind == "class":
                current = self._lookup_in_bases(current, part, skip_self=False)
            else:
                current = self._canonical(f"{current}.{part}")
        return current

    def _canonical(self, qualified_name: str) -> str | None:
        """Follow import bindings (re-exports) until reaching an indexed symbol."""
        for _ in range(_MAX_ALIAS_HOPS):
            if qualified_name in self.symbols:
                return qualified_name
            owner, _, name = qualified_name.rpartition(".")
            scope = self.scopes.get(self._canonical(owner) or "") if owner else None
            if scope is None or scope.kind != "module" or name not in scope.bindings:
                return None
            qualified_name = scope.bindings[name]
        return None

    def _lookup_in_bases(self, cls: str, name: str, *, skip_self: bool) -> str | None:
        for klass in self._linearize(cls)[1 if skip_self else 0 :]:
            candidate = f"{klass}.{name}"
            if candidate in self.symbols:
                return candidate
        return None

    def _linearize(self, cls: str) -> list[str]:
        """``cls`` then its indexed bases, depth-first, left to right, each once."""
        order: list[str] = []
        pending = [cls]
        while pending:
            klass = pending.pop(0)
            if klass in order:
                continue
            order.append(klass)
            pending[0:0] = list(self.bases.get(klass, ()))
        return order


def _outer_parts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """Parts of a definition evaluated in the enclosing scope (defaults, bases, keywords)."""
    if isinstance(node, ast.ClassDef):
        return [*node.bases, *node.keywords]
    return [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]


def _import_base(scope: _Scope, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = scope.package.split(".")
    base = ".".join(package[: len(package) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def _is_super_call(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "super"
        and not expr.args
    )


def _enclosing_class(scope: _Scope) -> str | None:
    """The class a method belongs to (for ``self.f`` / ``super().f``), else None."""
    if scope.kind == "function" and scope.parent is not None and scope.parent.kind == "class":
        return scope.parent.qualified_name
    return None
