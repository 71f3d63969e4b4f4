"""The ranking builder's input columns as arrays, and its work on ID strings.

The ID columns become arrow string arrays (pandas' arrow-backed ``str`` columns are not
copied), grades and scores numpy arrays, each checked (InputError for missing or non-string
IDs, non-integer grades, NaN scores). Query IDs become integer codes (the qrels' sorted query
IDs), looked up once per block of consecutive rows with the same query ID. Also here: taking
strings by row number chunk by chunk, the first 8 bytes and length of IDs (tied documents are
compared by them), and the error messages that name IDs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalkit.errors import InputError
from evalkit.formats.rules import duplicates_error
from evalkit.measures._sorting import U64, IntArray, U64Array

# the ranking builder's (evalkit.measures.ranking, and evalkit.measures.diversity's columns)
__all__ = [
    "ALL_BITS",
    "id_array",
    "integer_column",
    "leading_words",
    "query_blocks",
    "quote_ids",
    "raise_duplicates",
    "score_column",
    "sorted_codes",
    "take",
]

ALL_BITS = U64(0xFFFFFFFFFFFFFFFF)


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


def score_column(run: pd.DataFrame, run_q: pa.ChunkedArray) -> npt.NDArray[np.float64]:
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
            f"{run_q[row].as_py()!r}); scores must be numbers to be ranked"
        )
    return values


def quote_ids(ids: pa.Array | pa.ChunkedArray, limit: int = 3) -> str:
    shown = ", ".join(repr(x) for x in ids.slice(0, limit).to_pylist())
    return shown + (", ..." if len(ids) > limit else "")


def raise_duplicates(
    what: str, verb: str, ids: tuple[pa.ChunkedArray, pa.ChunkedArray], dup_rows: IntArray, fix: str
) -> None:
    q, d = ids
    pairs = (pc.take(q, dup_rows).to_pylist(), pc.take(d, dup_rows).to_pylist())
    raise duplicates_error(what, verb, pairs, int(dup_rows[0]), fix)


def sorted_codes(ids: pa.Array) -> tuple[pa.Array, IntArray]:
    """The distinct ``ids``, sorted, and each ID's index among them (one hash pass)."""
    encoded = pc.dictionary_encode(ids)
    order = pc.sort_indices(encoded.dictionary).to_numpy(zero_copy_only=False)
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size, dtype=np.int64)
    return encoded.dictionary.take(pa.array(order)), rank[
        encoded.indices.to_numpy(zero_copy_only=False)
    ]


def query_blocks(run_q: pa.ChunkedArray) -> tuple[IntArray, IntArray]:
    """First row and length of each block of consecutive rows with the same query ID."""
    n = len(run_q)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    change = pc.not_equal(run_q.slice(1), run_q.slice(0, n - 1))
    starts = np.flatnonzero(change.to_numpy(zero_copy_only=False))
    starts += 1
    start = np.concatenate([np.zeros(1, dtype=np.int64), starts.astype(np.int64)])
    return start, np.diff(start, append=np.int64(n))


def take(strings: pa.ChunkedArray, at: IntArray) -> pa.Array:
    """``strings[at]`` as one array, taken chunk by chunk (``pc.take`` on a chunked array
    first concatenates all its chunks)."""
    if strings.num_chunks == 1:
        return strings.chunk(0).take(pa.array(at))
    in_order = bool(np.all(at[1:] >= at[:-1]))
    order = None if in_order else np.argsort(at, kind="stable")
    sorted_at = at if order is None else at[order]
    bounds = np.cumsum([0, *(len(chunk) for chunk in strings.chunks)])
    cuts = np.searchsorted(sorted_at, bounds).tolist()
    parts = [
        chunk.take(pa.array(sorted_at[cuts[k] : cuts[k + 1]] - bounds[k]))
        for k, chunk in enumerate(strings.chunks)
        if cuts[k + 1] > cuts[k]
    ]
    if not parts:
        return pa.array([], type=strings.type)
    if order is None:
        return pa.concat_arrays(parts)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return pa.concat_arrays(parts).take(pa.array(inverse))


def leading_words(strings: pa.ChunkedArray, at: IntArray) -> tuple[U64Array, IntArray]:
    """The first 8 bytes (zero-padded, big-endian: integer order is byte order) and the byte
    length of the strings at rows ``at``."""
    words = np.zeros(at.size, dtype=np.uint64)
    lengths = np.zeros(at.size, dtype=np.int64)
    lo = 0
    for chunk in strings.chunks:
        hi = lo + len(chunk)
        mine = np.flatnonzero((at >= lo) & (at < hi)) if strings.num_chunks > 1 else None
        local = at - lo if mine is None else at[mine] - lo
        lo = hi
        buffers = chunk.buffers()
        if local.size == 0 or buffers[2] is None or buffers[2].size == 0:
            continue  # no row here, or every string of the chunk is empty
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(buffers[1], dtype=offset_type)[chunk.offset :]
        start = offsets[local].astype(np.int64)
        length = offsets[local + 1].astype(np.int64) - start
        data = np.frombuffer(buffers[2], dtype=np.uint8)
        if data.size < 8:
            data = np.concatenate([data, np.zeros(8, dtype=np.uint8)])
        # every 8-byte window of the data as a big-endian integer (a strided view, no copy);
        # a string starting in the last 7 bytes is read from the last window, then shifted
        windows = np.ndarray((data.size - 7,), dtype=">u8", buffer=data, strides=(1,))
        first = np.minimum(start, data.size - 8)
        word = windows[first].astype(np.uint64)
        late = np.flatnonzero(first < start)
        shift = np.minimum(start[late] - first[late], 7).astype(np.uint64) * U64(8)
        word[late] <<= shift
        # zero the bytes past each string's end
        short = np.flatnonzero(length < 8)
        word[short] &= ~(ALL_BITS >> (length[short] * 8).astype(np.uint64))
        if mine is None:
            words, lengths = word, length
        else:
            words[mine], lengths[mine] = word, length
    return words, lengths
