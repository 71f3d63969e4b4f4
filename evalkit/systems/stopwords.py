"""bm25s's stopword lists, read without importing the bm25s package.

``import bm25s.stopwords`` runs ``bm25s/__init__``, which imports numba when it is installed
(about a third of a second) although the lists are plain tuples; the reference systems need the
lists only. :func:`bm25s_stopwords` loads that one module of the installed bm25s on its own.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

__all__ = ["bm25s_stopwords"]


@functools.cache
def bm25s_stopwords(name: str) -> frozenset[str]:
    """The stopword tuple ``name`` of ``bm25s.stopwords`` (e.g. ``"STOPWORDS_EN"``)."""
    package = importlib.util.find_spec("bm25s")
    locations = list(package.submodule_search_locations or []) if package else []
    if not locations:
        raise ModuleNotFoundError("bm25s is not installed; pip install bm25s")
    path = Path(locations[0]) / "stopwords.py"
    spec = importlib.util.spec_from_file_location("evalkit._bm25s_stopwords", path)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"bm25s has no stopwords module at {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(getattr(module, name))
