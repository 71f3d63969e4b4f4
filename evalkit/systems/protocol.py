"""The contract between evalkit and a retrieval system.

A system is anything with a ``name``, a JSON-able ``definition()``, ``index(chunks)`` and
``search(query, k)``. ``definition()`` must describe the configuration completely: it is hashed
into reports (so a changed setting changes the evaluation definition) and is never printed or
written out raw, so it may hold private values such as a model name or an endpoint. It must be
deterministic: evaluation compares its hash across repeats. ``name`` is an ID that reaches every
report: it is checked by :func:`evalkit.safety.names.check_name` (the fixture ID rule, no path,
endpoint or credential shape, no private value of the definition).

Optional: ``use_aliases(table)``. A system that has it receives the fixture's concept table
(``evalkit.fixtures.AliasTable``, or ``None`` when the fixture has no ``aliases.yaml``) before
``definition()`` and ``index()`` are called (:func:`provide_aliases`). Systems never see queries
or judgments through it.

Optional: ``confidence(query, hits) -> float | None``. A system that has it *declares* how sure
it is that the corpus answers ``query``: evaluation calls it right after ``search``, with the
hits ``search`` returned (only when there is at least one; a query without a result is never
answered), inside the timed call. The value is what abstention thresholds
(:func:`evalkit.stats.abstention`, abstention gates) compare instead of the top result's score:
a finite number, higher meaning "answer", comparable across queries (a calibrated probability,
a classifier's score). ``None`` declares nothing for that query; a system declares for every
query it answers or for none (:func:`declared_confidence` checks one value; evaluation checks
the whole). Systems without the method keep the top score (backward compatible).
"""

from __future__ import annotations

import contextlib
import importlib
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from evalkit.errors import EvalkitError, InputError, SystemFailedError
from evalkit.safety.canonical import canonical_hash
from evalkit.safety.inputs import finite_number
from evalkit.safety.names import check_name

__all__ = [
    "BaseRetriever",
    "ChunkLike",
    "FunctionRetriever",
    "Hit",
    "QueryLike",
    "Retriever",
    "TextRetriever",
    "declared_confidence",
    "fingerprint",
    "hits_of",
    "load_factory",
    "provide_aliases",
]


class ChunkLike(Protocol):
    """What a retriever may read from a chunk (``evalkit.fixtures.Chunk`` satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...


class QueryLike(Protocol):
    """What a retriever may read from a query (``evalkit.fixtures.Query`` satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def text(self) -> str: ...


class Hit(NamedTuple):
    """One retrieved chunk; a ranking is a sequence of hits, best first."""

    chunk_id: str
    score: float


@runtime_checkable
class Retriever(Protocol):
    """A retrieval system under evaluation."""

    name: str

    def definition(self) -> dict[str, Any]:
        """A JSON-able description of the full configuration (hashed, never published raw)."""
        ...

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """Build whatever the system needs over ``chunks``; called once before searching."""
        ...

    def search(self, query: QueryLike, k: int) -> Sequence[Hit]:
        """Return at most ``k`` hits, best first; an empty sequence means "no answer"."""
        ...


class BaseRetriever:
    """Convenience base class: override ``index`` and ``search``; ``close`` frees resources."""

    name: str = "retriever"

    def definition(self) -> dict[str, Any]:
        return {"class": type(self).__qualname__}

    def index(self, chunks: Sequence[ChunkLike]) -> None:  # pragma: no cover - trivial default
        return None

    def search(self, query: QueryLike, k: int) -> Sequence[Hit]:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__qualname__}.search is not implemented")

    def close(self) -> None:
        """Release resources (temporary databases); evaluation calls it when done."""
        return


class TextRetriever(BaseRetriever):
    """A retriever that searches with the query's text alone: implement ``search_text``.

    Composite systems (hybrid, rerank) call ``search_text`` on their components with a deeper
    ``k`` than the evaluation's.
    """

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self.search_text(query.text, k)

    def search_text(self, text: str, k: int) -> list[Hit]:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__qualname__}.search_text is not implemented")


SearchFunction = Callable[[str, int], Sequence[tuple[str, float]]]


class FunctionRetriever(BaseRetriever):
    """Adapts a plain ``fn(query_text, k) -> [(chunk_id, score), ...]`` function.

    The function's own module-qualified name is its definition; pass ``definition`` to describe
    settings the function closes over. ``name`` defaults to the function's ``__name__`` with
    ``_`` written as ``-``; a name that breaks the name rule (:mod:`evalkit.safety.names`), such as
    a lambda's, is an :class:`InputError`: pass ``name=``. ``index()`` keeps the chunks in
    ``self.chunks`` and passes them to ``on_index(chunks)`` when given, so the function can
    build its index. ``concurrent=True`` says the function may be called from several threads
    at once (``evaluate(concurrency=N)``). ``confidence``, a ``fn(query_text, hits) -> float |
    None``, is the system's declared confidence (module docstring; its qualified name joins
    the definition); without it the top score is the confidence.
    """

    def __init__(
        self,
        fn: SearchFunction,
        *,
        name: str | None = None,
        definition: Mapping[str, Any] | None = None,
        on_index: Callable[[Sequence[ChunkLike]], object] | None = None,
        concurrent: bool = False,
        confidence: Callable[[str, Sequence[Hit]], float | None] | None = None,
    ) -> None:
        self._fn = fn
        self._confidence = confidence
        if name is None:
            default = str(getattr(fn, "__name__", "")).replace("_", "-")
            self.name = check_name(
                default, kind="system", where="FunctionRetriever (default name from the function)"
            )
        else:
            self.name = check_name(name, kind="system", where="FunctionRetriever(name=...)")
        self._definition = dict(definition or {})
        self._on_index = on_index
        self.concurrent_searches = concurrent
        self.chunks: Sequence[ChunkLike] = ()

    def definition(self) -> dict[str, Any]:
        qualname = (
            f"{getattr(self._fn, '__module__', '?')}:{getattr(self._fn, '__qualname__', '?')}"
        )
        declared = {}
        if self._confidence is not None:  # absent otherwise: existing definitions keep their hash
            confidence = self._confidence
            declared = {
                "confidence": f"{getattr(confidence, '__module__', '?')}:"
                f"{getattr(confidence, '__qualname__', '?')}"
            }
        return {"class": "FunctionRetriever", "function": qualname, **declared, **self._definition}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        self.chunks = chunks
        if self._on_index is not None:
            self._on_index(chunks)

    def search(self, query: QueryLike, k: int) -> Sequence[Hit]:
        who = f"the search function of system {self.name!r}"
        return hits_of(self._fn(query.text, k), who, getattr(query, "id", "?"))

    def confidence(self, query: QueryLike, hits: Sequence[Hit]) -> float | None:
        """``confidence(query_text, hits)`` when given, else None (the top score)."""
        return None if self._confidence is None else self._confidence(query.text, hits)


def hits_of(result: object, who: str, query_id: str) -> list[Hit]:
    """``result``, what ``who`` returned for a query, as a list of :class:`Hit`; an
    ``InputError`` naming ``who`` and the query when it is not a sequence of ``(chunk ID,
    score)`` pairs with numeric scores (a bare chunk ID would unpack into its characters).
    Materializing a generator runs the system's own code: its exceptions pass unchanged."""
    if (
        result is None
        or isinstance(result, (str, bytes, Mapping))
        or not isinstance(result, Iterable)
    ):
        raise InputError(
            f"{who} returned {type(result).__name__} for query {query_id!r}; search must return "
            "a list of hits: (chunk ID, score) pairs, best first, e.g. [('chunk-1', 0.9)]"
        )
    if type(result) is list and _plain_hits(result):
        return list(result)  # each item is already what Hit(str(id), float(score)) makes
    hits = []
    for item in result:
        try:
            if isinstance(item, (str, bytes)):
                raise TypeError
            hits.append(Hit(str(item[0]), float(item[1])))
        except (TypeError, ValueError, IndexError, KeyError):
            raise InputError(
                f"{who} returned a hit of type {type(item).__name__} for query {query_id!r}; a "
                "hit is a (chunk ID, score) pair with a numeric score, e.g. "
                "evalkit.Hit('chunk-1', 0.9)"
            ) from None
    return hits


def declared_confidence(
    system: object, query: QueryLike, hits: Sequence[Hit], who: str
) -> float | None:
    """What ``system``'s optional ``confidence(query, hits)`` declares for ``query`` (module
    docstring): a float, or None when the system has no such method, ``hits`` is empty or it
    returned None. An :class:`InputError` naming ``who`` and the query for anything but a
    finite real number (a bool is not one). The method's own exceptions pass unchanged (the
    caller runs it as the system's code)."""
    method = getattr(system, "confidence", None)
    if not callable(method) or not hits:
        return None
    value = method(query, hits)
    if value is None:
        return None
    number = finite_number(value)
    if number is None:
        shown = repr(float(value)) if isinstance(value, float) else type(value).__name__
        raise InputError(
            f"{who} declared confidence {shown} for query {getattr(query, 'id', '?')!r}; "
            "confidence(query, hits) must return a finite number (higher: more sure the corpus "
            "answers it) or None"
        )
    return number


def _plain_hits(items: list[Any]) -> bool:
    """Whether every item is a :class:`Hit` of a ``str`` ID and a ``float`` score, exactly
    (the reference systems' results: checked with C-level passes, not hit by hit)."""
    if not set(map(type, items)) <= {Hit}:
        return False
    return set(map(type, map(_FIRST, items))) <= {str} and set(map(type, map(_SECOND, items))) <= {
        float
    }


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def fingerprint(system: Retriever) -> str:
    """A stable ``sha256:...`` fingerprint of a system's definition (never its raw values)."""
    return canonical_hash({"name": system.name, "definition": system.definition()})


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})*"
_MODULE_RE = re.compile(_MODULE)
_SPEC_RE = re.compile(rf"^{_MODULE}:{_IDENTIFIER}$")


def load_factory(spec: str, *, where: str = "system spec") -> Retriever:
    """Build a user's system from ``"package.module:factory"`` (the factory takes no arguments).

    A factory returning a plain function is wrapped in :class:`FunctionRetriever` named after
    the factory (``_`` as ``-``). Raises ``InputError`` naming ``where`` (e.g. ``system #2``) and
    the part that failed; the spec is quoted only when it is a dotted name with no path,
    endpoint or credential shape.
    """
    from evalkit.fixtures.rules import find_sensitive

    if not isinstance(spec, str) or not _SPEC_RE.match(spec) or find_sensitive(spec):
        raise InputError(
            f"{where}: the system spec is not of the form 'package.module:factory' (Python "
            "identifiers separated by '.', then ':' and the factory's name) or looks like a "
            "path, endpoint or credential; name an importable module and a callable in it (the "
            "spec is not shown here)"
        )
    module_name, _, attribute = spec.partition(":")
    who = f"{where}: system spec {spec!r}"
    with running_user_code(who, f"while importing {module_name!r}", "import it in Python to see"):
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            missing = getattr(error, "name", None)
            own = missing == module_name or module_name.startswith(f"{missing}.")
            if isinstance(error, ModuleNotFoundError) and missing and not own:
                inner = missing if _MODULE_RE.fullmatch(missing) else "another module"
                raise InputError(
                    f"{who}: module {module_name!r} imports {inner!r}, which is not installed; "
                    "install it in this environment"
                ) from None
            raise InputError(
                f"{who}: cannot import module {module_name!r} ({type(error).__name__}); check "
                "the module is on PYTHONPATH or installed"
            ) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise InputError(f"{who}: module {module_name!r} has no callable {attribute!r}")
    # evalkit's own errors (e.g. a FunctionRetriever's invalid name) pass unchanged
    with running_user_code(who, "in its factory", "a factory takes no arguments"):
        system = factory()
    if isinstance(system, Retriever):
        return system
    if callable(system):
        return FunctionRetriever(system, name=attribute.replace("_", "-"))
    raise InputError(
        f"{where}: system spec {spec!r}: the factory returned {type(system).__name__}, expected "
        "an object with name, definition(), index(chunks) and search(query, k), or a search "
        "function"
    )


@contextlib.contextmanager
def running_user_code(who: str, step: str, fix: str) -> Iterator[None]:
    """Run a step of a user's system. An exception other than evalkit's own becomes a
    :class:`~evalkit.errors.SystemFailedError` naming ``who`` (the system), the ``step``, the
    exception's class and how to see more (``fix``), never the exception's message, which may
    quote fixture text (the exception is the error's ``__context__``, not shown)."""
    try:
        yield
    except EvalkitError:
        raise
    except Exception as error:
        raise SystemFailedError(
            f"{who} raised {type(error).__name__} {step} (the message is not shown: it may "
            f"quote fixture text; it is this error's __context__); {fix}"
        ) from None


def provide_aliases(system: object, table: Any) -> None:
    """Give ``system`` the fixture's concept table when it has a ``use_aliases`` method."""
    use = getattr(system, "use_aliases", None)
    if callable(use):
        use(table)
