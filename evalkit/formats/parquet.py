"""Reading a user's Parquet file: whatever is wrong with the file is one :class:`InputError`
naming it (``what``), never an Arrow traceback: missing, not Parquet (a damaged or truncated
footer), or a page that fails to read or decode."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from evalkit.errors import InputError

__all__ = ["open_parquet", "parquet_batches"]

T = TypeVar("T")

_DAMAGE = (OSError, ValueError, pa.ArrowException)  # ValueError: bytes that are no UTF-8


def open_parquet(path: str | os.PathLike[str], what: str) -> pq.ParquetFile:
    """The Parquet file at ``path`` (``what``: how messages name it, e.g. its file name)."""
    try:
        return pq.ParquetFile(path)
    except FileNotFoundError:
        raise InputError(f"{what} does not exist") from None
    except _DAMAGE as error:
        raise InputError(
            f"{what} cannot be read as Parquet ({type(error).__name__}); write it again"
        ) from None


def parquet_batches(
    file: pq.ParquetFile,
    what: str,
    convert: Callable[[pa.RecordBatch], T],
    *,
    batch_size: int,
    columns: Sequence[str] | None = None,
) -> Iterator[T]:
    """``convert(batch)`` of each batch of ``file`` in order; reading and converting a batch
    that turns out damaged is an ``InputError`` naming ``what`` and the rows read before it."""
    batches: Iterator[Any] = file.iter_batches(
        batch_size=batch_size, columns=list(columns) if columns is not None else None
    )
    rows = 0
    while True:
        try:
            batch = next(batches, None)
            if batch is None:
                return
            converted = convert(batch)
        except _DAMAGE as error:
            raise InputError(
                f"{what} cannot be read as Parquet after row {rows} ({type(error).__name__}); "
                "write it again"
            ) from None
        rows += batch.num_rows
        yield converted
