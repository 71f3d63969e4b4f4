"""Scoring on a Dask cluster (the optional extra ``pip install 'evalkit[dask]'``): the judged
ranking of a Dask DataFrame or a run source, built partition by partition on the workers.

A Dask DataFrame, or a run source (a TREC file, a list of them, a Parquet file or dataset; with
``client=``) is judged partition by partition on the workers, each partition into a
:class:`~evalkit.measures.stream.JudgedPiece` (the positions and grades of its judged docs,
at most one entry per qrels row). A query whose rows sit in more than one partition is judged
again from all its rows, in their order: when each such query is the first or last of its
partitions (a frame cut inside queries), from the rows of those queries the partitions sent
back with their pieces; otherwise those rows only are shuffled by query ID with Dask's
shuffle. The client combines the pieces into the judged ranking the in-memory engine
builds and runs the kernels once on it, so :func:`evalkit.measures.score` returns the same
**pandas** frame with values identical to the local path (the kernels' cost is that of the
qrels, not of the run). Dask itself is imported only when a cluster is used.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from evalkit.errors import EvalkitError, InputError, portable_error
from evalkit.formats import read_run
from evalkit.measures.judged import JudgedRanking
from evalkit.measures.stream import (
    JudgedPiece,
    QrelsIndex,
    RunFiles,
    RunSource,
    combine_pieces,
    judge_block,
)

__all__ = ["cluster_ranking", "connect", "is_dask_frame"]

_INSTALL = "install the extra: pip install 'evalkit[dask]'"
_ROW_BITS = 40  # order of a row: partition number << 40 | row within the partition


def is_dask_frame(source: object) -> bool:
    """Whether ``source`` is a Dask DataFrame (checked without importing Dask)."""
    module = type(source).__module__
    return module.startswith(("dask.", "dask_expr")) and hasattr(source, "npartitions")


def connect(scheduler: Any = None, *, timeout: float = 20.0) -> Any:
    """A ``dask.distributed.Client``: ``scheduler`` itself when it is one, else a client of the
    scheduler at that address (``tcp://host:8786``; InputError when it does not answer within
    ``timeout`` seconds), else (None) the current client."""
    try:
        from distributed import Client, get_client
    except ImportError:
        raise InputError(f"Dask is not installed; {_INSTALL}") from None
    if isinstance(scheduler, Client):
        return scheduler
    if scheduler is None:
        try:
            return get_client()
        except ValueError:
            raise InputError(
                "no Dask client: pass client=Client('tcp://HOST:8786') (or start one first)"
            ) from None
    try:
        return Client(str(scheduler), timeout=f"{timeout}s")
    except (OSError, TimeoutError) as error:
        raise InputError(
            f"cannot reach the Dask scheduler at the given address ({type(error).__name__}); "
            "expected a running scheduler, e.g. tcp://HOST:8786"
        ) from None


# --- scoring ------------------------------------------------------------------------------------


def cluster_ranking(index: QrelsIndex, source: Any, *, client: Any = None) -> JudgedRanking:
    """The judged ranking of ``source`` (module docs), judged partition by partition on the
    cluster of ``client`` (None: the current client), by the index's options."""
    import dask.dataframe as dd
    from dask.delayed import delayed

    client = connect(client)
    frame = _as_frame(source, client, rank=index.options.ties == "given")
    parts = frame.to_delayed()
    shared = delayed(index, pure=True)
    judged = client.compute(
        [delayed(_judge_with_edges)(shared, p, i) for i, p in enumerate(parts)],
        sync=True,
    )
    first = [piece for piece, _ in judged]
    counts = Counter(q for piece in first for q in piece.query_ids)
    split = sorted(q for q, n in counts.items() if n > 1)
    pieces = [_without(piece, set(split)) for piece in first] if split else list(first)
    if split and all(
        set(piece.query_ids).intersection(split) <= set(edges["query_id"])
        for piece, edges in judged
    ):
        # the usual case (a frame cut inside queries): the split queries are each partition's
        # first or last, whose rows came back with the pieces
        rows = pd.concat([edges for _, edges in judged], ignore_index=True)
        rows = rows[rows["query_id"].isin(split)]
        pieces.append(_judge_ordered(index, rows))  # a few queries: judged here
    elif split:
        # only the rows of the queries split across partitions move: shuffled by query ID
        wanted = delayed(tuple(split), pure=True)
        rows = [delayed(_rows_of)(p, wanted, i) for i, p in enumerate(parts)]
        meta = _meta(frame)
        moved = dd.from_delayed(rows, meta=meta, verify_meta=False)
        moved = moved.shuffle(on="query_id", npartitions=max(1, min(len(parts), len(split))))
        pieces += client.compute(
            [delayed(_judge_ordered)(shared, p) for p in moved.to_delayed()],
            sync=True,
        )
    return combine_pieces(index, pieces)


def _as_frame(source: RunSource | Any, client: Any, *, rank: bool) -> Any:
    """``source`` as a Dask DataFrame (a Parquet dataset by ``dask.dataframe.read_parquet``,
    TREC files one partition each)."""
    import dask.dataframe as dd

    if hasattr(source, "npartitions") and hasattr(source, "to_delayed"):
        return source
    if isinstance(source, pd.DataFrame):
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        return dd.from_pandas(source, npartitions=workers, sort=False)
    files = RunFiles(source, rank=rank).files
    if all(kind == "parquet" for _, kind in files):
        columns = ["query_id", "doc_id", "score", *(["rank"] if rank else [])]
        return dd.read_parquet([str(p) for p, _ in files], columns=columns)
    if any(kind == "parquet" for _, kind in files):
        raise InputError("run: give either TREC files or Parquet files, not both")
    meta = pd.DataFrame(
        {
            "query_id": pd.Series([], dtype="str"),
            "doc_id": pd.Series([], dtype="str"),
            "score": pd.Series([], dtype="float64"),
            **({"rank": pd.Series([], dtype="int64")} if rank else {}),
        }
    )
    return dd.from_map(_read_trec, [str(p) for p, _ in files], rank=rank, meta=meta)


def _read_trec(path: str, rank: bool) -> pd.DataFrame:
    try:
        return read_run(path, rank=rank)
    except EvalkitError as error:
        raise portable_error(error) from None


def _meta(frame: Any) -> pd.DataFrame:
    meta: pd.DataFrame = frame._meta  # dask's empty frame of the partitions' columns, dtypes
    if "query_id" not in meta.columns and meta.index.name == "query_id":
        meta = meta.reset_index()
    return meta.assign(_row=pd.Series([], dtype="int64"))


def _columns(part: pd.DataFrame) -> pd.DataFrame:
    if "query_id" not in part.columns and part.index.name == "query_id":
        return part.reset_index()
    return part.reset_index(drop=True)


def _judge(index: QrelsIndex, part: pd.DataFrame) -> JudgedPiece:
    try:
        return judge_block(index, _columns(part))
    except EvalkitError as error:
        raise portable_error(error) from None


def _judge_with_edges(
    index: QrelsIndex, part: pd.DataFrame, number: int
) -> tuple[JudgedPiece, pd.DataFrame]:
    """The partition's piece, and the rows (with their order) of its first and last query:
    the queries a frame cut inside queries splits."""
    frame = _columns(part)
    piece = _judge(index, frame)
    if frame.empty:
        return piece, _rows_of(frame, (), number)
    ends = (str(frame["query_id"].iloc[0]), str(frame["query_id"].iloc[-1]))
    return piece, _rows_of(frame, ends, number)


def _rows_of(part: pd.DataFrame, wanted: tuple[str, ...], number: int) -> pd.DataFrame:
    """The rows of the ``wanted`` queries, each with its order in the whole frame."""
    frame = _columns(part)
    order = (np.int64(number) << np.int64(_ROW_BITS)) + np.arange(len(frame), dtype=np.int64)
    keep = frame["query_id"].isin(wanted).to_numpy()
    return frame[keep].assign(_row=order[keep])


def _judge_ordered(index: QrelsIndex, part: pd.DataFrame) -> JudgedPiece:
    frame = part.sort_values("_row", kind="stable").drop(columns="_row")
    return _judge(index, frame)


def _without(piece: JudgedPiece, split: set[str]) -> JudgedPiece:
    """``piece`` without the queries of ``split``."""
    keep = np.array([q not in split for q in piece.query_ids], dtype=bool)
    if keep.all():
        return piece
    new_index = np.cumsum(keep) - 1
    entries = keep[piece.query]
    return replace(
        piece,
        query_ids=tuple(q for q, k in zip(piece.query_ids, keep, strict=True) if k),
        num_ret=piece.num_ret[keep],
        query=new_index[piece.query[entries]].astype(np.int64),
        position=piece.position[entries],
        grade=piece.grade[entries],
    )
