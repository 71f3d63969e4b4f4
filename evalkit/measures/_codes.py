"""Query IDs as integer codes, and the error messages that name IDs (numpy only).

Query IDs become integer codes (the qrels' sorted query IDs, in byte order as ``strcmp``
sorts them), looked up once per block of consecutive rows with the same query ID: a run lists
each query's rows together, so there are about as many lookups as queries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalkit._arrays import IntArray
from evalkit.formats.rules import duplicates_error
from evalkit.formats.strings import Strings

# the ranking builder's (evalkit.measures.ranking)
__all__ = ["query_blocks", "quote_ids", "raise_duplicates", "sorted_codes"]


def quote_ids(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(repr(x) for x in ids[:limit])
    return shown + (", ..." if len(ids) > limit else "")


def raise_duplicates(
    what: str, verb: str, ids: tuple[Strings, Strings], dup_rows: IntArray, fix: str
) -> None:
    q, d = ids
    pairs = (q.to_list(dup_rows), d.to_list(dup_rows))
    raise duplicates_error(what, verb, pairs, int(dup_rows[0]), fix)


def sorted_codes(ids: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    """The distinct ``ids``, sorted (code point order, which is UTF-8's byte order), and each
    ID's index among them."""
    distinct = sorted(set(ids))
    index = {query: i for i, query in enumerate(distinct)}
    return tuple(distinct), np.array([index[q] for q in ids], dtype=np.int64)


def query_blocks(run_q: Strings) -> tuple[IntArray, IntArray]:
    """First row and length of each block of consecutive rows with the same query ID."""
    n = len(run_q)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(run_q.differs_from_next())
    starts += 1
    start = np.concatenate([np.zeros(1, dtype=np.int64), starts.astype(np.int64)])
    return start, np.diff(start, append=np.int64(n))
