"""A system that is another system in every respect its definition shows (test helper): the
gate tests wrap a reference system in a subclass that changes ``search`` for some queries, a
regression the definition hash cannot see."""

from __future__ import annotations

from typing import Any


class WrappedSystem:
    """``inner``'s name, definition, aliases, index, search and close; subclasses override
    ``search`` for the queries in ``query_ids``."""

    def __init__(self, inner: Any, query_ids: frozenset[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.query_ids = query_ids

    def definition(self) -> dict[str, Any]:
        return dict(self.inner.definition())

    def use_aliases(self, table: Any) -> None:  # a wrapper forwards the fixture's aliases.yaml
        self.inner.use_aliases(table)

    def index(self, chunks: Any) -> None:
        self.inner.index(chunks)

    def search(self, query: Any, k: int) -> Any:
        return self.inner.search(query, k)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
