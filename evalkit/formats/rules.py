"""The rules every run follows, whatever its source: one home for the measures engine (a
DataFrame, a TREC, Parquet or Dask run) and ``run:`` systems (a TREC or JSON Lines file).

- **Columns** (:func:`require_columns`): a run is a DataFrame with ``query_id``, ``doc_id`` and
  ``score`` (:data:`RUN_COLUMNS`), qrels one with ``query_id``, ``doc_id`` and ``relevance``.
- **Results** (:func:`no_results_error`): a run without any result (an empty file, only
  comments and blank lines, no rows) is refused: scored, every query would get 0.0, a
  real-looking regression with nothing behind it; trec_eval refuses such a run too.
- **Duplicates** (:func:`duplicated_rows`, :func:`duplicates_error`): a run listing one
  (query, doc) pair twice (or qrels judging it twice) is refused: which of the two ranks (or
  grades) counts is a guess either way. The engine finds such pairs on its own fingerprints
  (it can also keep the first, ``duplicates="keep-first"``); both say it in these words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from evalkit.errors import FormatError, InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "NO_RESULTS",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "duplicated_rows",
    "duplicates_error",
    "no_results_error",
    "require_columns",
]

RUN_COLUMNS: Final = ("query_id", "doc_id", "score")
QRELS_COLUMNS: Final = ("query_id", "doc_id", "relevance")

#: What is wrong with a run without any result (the message of :func:`no_results_error`).
NO_RESULTS: Final = (
    "holds no results (an empty file, only comments and blank lines, or no rows); "
    "expected at least one ranked document per query it answers: check that the job that "
    "wrote it finished (trec_eval -c scores such a run from memory it never filled: every "
    "value 0)"
)


def require_columns(frame: object, what: str, columns: tuple[str, ...]) -> None:
    """InputError unless ``frame`` is a DataFrame with every column of ``columns``."""
    import pandas as pd  # here: the numpy paths (evalkit trec-eval) use this module too

    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"{what} is missing column(s) {', '.join(missing)}; expected columns "
            f"{', '.join(columns)}, found {', '.join(map(str, frame.columns)) or 'none'}"
        )


def no_results_error(source: str) -> FormatError:
    """The error for a run (named ``source``) that holds no result."""
    return FormatError(NO_RESULTS, file=source)


def duplicated_rows(frame: pd.DataFrame) -> npt.NDArray[np.int64]:
    """The rows (positions, ascending) of every occurrence of a (``query_id``, ``doc_id``) pair
    that ``frame`` holds more than once."""
    repeated = frame.duplicated(["query_id", "doc_id"], keep=False).to_numpy()
    return np.flatnonzero(repeated).astype(np.int64)


def duplicates_error(
    what: str,
    verb: str,
    pairs: tuple[Sequence[str], Sequence[str]],
    first_row: int,
    fix: str,
    *,
    noun: str = "doc",
    shown: Callable[[str], str] = repr,
) -> InputError:
    """The error for ``what`` (``"run"``, ``"qrels"``) that ``verb`` (``"lists"``,
    ``"judges"``) a (query, ``noun``) pair more than once. ``pairs``: the query and doc IDs
    of every occurrence of a duplicated pair, in row order, the first at row ``first_row``
    (counting from 0); ``fix``: how to fix it; ``shown``: how an ID is shown."""
    queries, docs = pairs
    count = len(set(zip(queries, docs, strict=True)))
    return InputError(
        f"{what} {verb} {noun} {shown(docs[0])} more than once for query {shown(queries[0])} "
        f"({count} duplicated (query, {noun}) pair(s) in all, first at row {first_row}, "
        f"counting from 0); {fix}"
    )
