"""A small named registry: the plugin point for systems, probe targets and probe tools.

Every registered name is checked by :func:`evalkit.safety.names.check_name` (no path, endpoint or
credential shapes; with ``ids=True``, as for systems and targets, also the fixture ID rule), and
an unknown name is only quoted back in an error when it passes the same check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from evalkit.errors import UnknownNameError
from evalkit.safety.names import check_name, shown_name

__all__ = ["Registry", "did_you_mean"]

T = TypeVar("T")


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest choice, or ``""`` when none is close."""
    import difflib  # on the error path only: not at every start

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


class Registry(Generic[T]):
    """Maps names to entries; ``get`` of an unknown name lists what exists and the closest match.

    >>> r: Registry[int] = Registry("system")
    >>> r.register("lexical", 1)
    >>> r.get("lexical")
    1
    """

    def __init__(self, kind: str, *, ids: bool = False) -> None:
        self.kind = kind
        self.ids = ids
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T, *, replace: bool = False) -> None:
        """Add ``entry`` under ``name``; re-registering a name needs ``replace=True``.

        Raises :class:`~evalkit.errors.InputError` (a ``ValueError``) for a refused name.
        """
        check_name(name, kind=self.kind, where=f"{self.kind} registry", ids=self.ids)
        if name in self._entries and not replace:
            raise ValueError(
                f"{self.kind} {name!r} is already registered; pass replace=True to override it"
            )
        self._entries[name] = entry

    def get(self, name: str) -> T:
        """Return the entry registered under ``name``."""
        try:
            return self._entries[name]
        except KeyError:
            known = sorted(self._entries)
            shown = shown_name(name, kind=self.kind, ids=self.ids)
            hint = did_you_mean(name, known) if shown.startswith(("'", '"')) else ""
            raise UnknownNameError(
                f"unknown {self.kind} {shown}; known {self.kind}s: {', '.join(known) or 'none'}."
                + hint
            ) from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
