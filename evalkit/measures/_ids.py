"""The ranking builder's frame layer: the columns of qrels and run DataFrames as arrays.

The ID columns become arrow string arrays (pandas' arrow-backed ``str`` columns are not
copied) and then :class:`~evalkit.formats.strings.Strings` viewing the same bytes, grades and
scores numpy arrays, each checked (InputError for missing or non-string IDs, non-integer
grades, NaN scores). The ranking itself (:func:`evalkit.measures.ranking.rank_columns`) works
on these arrays with numpy only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from evalkit._arrays import IntArray
from evalkit.errors import InputError
from evalkit.formats.strings import StringChunk, Strings

# the ranking builder's (evalkit.measures.ranking, and evalkit.measures.diversity's columns)
__all__ = ["as_strings", "id_array", "integer_column", "score_column"]


def id_array(frame: pd.DataFrame, column: str, what: str) -> pa.ChunkedArray:
    """The column as a chunked arrow string array (pandas' arrow-backed ``str`` columns are
    not copied)."""
    series = frame[column]
    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = None
    if array is not None and array.null_count:
        missing = series.isna().to_numpy()
        row = int(np.flatnonzero(missing)[0])
        raise InputError(
            f"{what}.{column} has {int(missing.sum())} missing value(s) (first at row {row}); "
            "every ID must be a non-empty string"
        )
    if isinstance(array, pa.Array):
        array = pa.chunked_array([array])
    if array is not None and pa.types.is_dictionary(array.type):
        array = pa.chunked_array(
            [chunk.dictionary_decode() for chunk in array.chunks], array.type.value_type
        )
    if array is not None and len(array) == 0:
        array = pa.chunked_array([], type=pa.string())
    if array is None or not (
        pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
    ):
        raise InputError(
            f"{what}.{column} must hold strings (IDs are strings, '001' is not 1); "
            f"found dtype {series.dtype}; convert it with .astype(str)"
        )
    return array


def integer_column(frame: pd.DataFrame, column: str, what: str) -> IntArray:
    series = frame[column]
    values = series.to_numpy()
    limit = np.iinfo(np.int64)
    if values.dtype.kind == "i" or (values.dtype.kind == "u" and values.dtype.itemsize < 8):
        return values.astype(np.int64)
    if values.dtype.kind == "u":
        if values.size and int(values.max()) > limit.max:
            raise InputError(_too_large(what, column))
        return values.astype(np.int64)
    if (
        values.dtype.kind == "f"
        and np.all(np.isfinite(values))
        and np.all(values == np.round(values))
    ):
        # float64 holds integers exactly up to 2**53; past int64's range astype would wrap
        if values.size and (values.max() >= 2.0**63 or values.min() < -(2.0**63)):
            raise InputError(_too_large(what, column))
        return values.astype(np.int64)
    raise InputError(
        f"{what}.{column} must hold integers, found dtype {series.dtype}"
        + (" with missing or fractional values" if values.dtype.kind == "f" else "")
    )


def _too_large(what: str, column: str) -> str:
    return (
        f"{what}.{column} holds integers outside the 64-bit signed range; relevance grades are "
        "small integers (trec_eval reads them as long)"
    )


def score_column(run: pd.DataFrame, run_q: Strings) -> npt.NDArray[np.float64]:
    series = run["score"]
    values = series.to_numpy()
    if values.dtype.kind not in "iuf":
        raise InputError(f"run.score must be numeric, found dtype {series.dtype}")
    values = values.astype(np.float64, copy=False)
    nan = np.isnan(values)
    if nan.any():
        row = int(np.flatnonzero(nan)[0])
        raise InputError(
            f"run.score has {int(nan.sum())} NaN value(s) (first at row {row}, query "
            f"{run_q.to_list(np.array([row]))[0]!r}); scores must be numbers to be ranked"
        )
    return values


def as_strings(array: pa.ChunkedArray) -> Strings:
    """The arrow string column as :class:`Strings` over the same bytes (nothing copied but
    32-bit offsets, widened)."""
    chunks = []
    for chunk in array.chunks:
        buffers = chunk.buffers()
        n = len(chunk)
        if n == 0 or buffers[1] is None:
            continue
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        given = np.frombuffer(buffers[1], dtype=offset_type)[chunk.offset : chunk.offset + n + 1]
        offsets: IntArray = given.astype(np.int64, copy=False)
        data = (
            np.frombuffer(buffers[2], dtype=np.uint8)
            if buffers[2] is not None
            else np.zeros(0, dtype=np.uint8)
        )
        chunks.append(StringChunk(data, offsets[:-1], offsets[1:]))
    if not chunks:
        return Strings.from_list([])
    return Strings(chunks)
