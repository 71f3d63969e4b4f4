"""Progress bars for indexing, shown only when the caller asks (``evaluate(progress=True)``).

``evaluate`` turns bars on for the duration of one system's ``index`` call with
:func:`indexing_progress`; the reference systems then wrap each pass over the chunks in
:func:`chunk_bar`. A bar goes to stderr and shows counts only (``indexing pass 2``, chunks done,
rate): never a system's name, a path or any fixture text. Outside :func:`indexing_progress`
(tests, reports, the library used directly) every bar is disabled and prints nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tqdm import tqdm

__all__ = ["chunk_bar", "indexing_progress"]

# The number of passes started so far while bars are on, or None when they are off.
_PASSES: ContextVar[list[int] | None] = ContextVar("evalkit_indexing_passes", default=None)


@contextmanager
def indexing_progress(enabled: bool) -> Iterator[None]:
    """Show a bar for each indexing pass started inside the block when ``enabled``."""
    token = _PASSES.set([0] if enabled else None)
    try:
        yield
    finally:
        _PASSES.reset(token)


def chunk_bar(total: int) -> tqdm:
    """A bar over ``total`` chunks for one indexing pass (disabled unless bars are on).

    Call ``update(n)`` after each batch and ``close()`` at the end (or use it as a context
    manager).
    """
    passes = _PASSES.get()
    if passes is not None:
        passes[0] += 1
    return tqdm(
        total=total,
        desc=f"indexing pass {passes[0]}" if passes is not None else "indexing",
        unit="chunk",
        unit_scale=True,
        disable=passes is None,
        leave=False,
    )
