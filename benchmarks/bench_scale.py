"""Scale: a 100-million-row run streamed in bounded memory, and 10 million rows on a Dask cluster.

Usage::

    .venv/bin/python benchmarks/bench_scale.py                       # both cases (~10 min)
    .venv/bin/python benchmarks/bench_scale.py --case stream --rows 20_000_000
    .venv/bin/python benchmarks/bench_scale.py --case dask

Data (generated once into ``--dir``, default ``/tmp/evalkit-bench-scale``, streaming, seed 0; the
100M-row file is about 3.3 GB: ``--clean`` deletes the directory afterwards): runs of queries x
1,000 docs, TREC lines as ``bench_measures.py`` writes them (scores with one decimal, so ties are
common, tied docs in random order), about 20 judged docs per query (grades 0-3, about half of
them retrieved). 10 million rows are 10,000 queries; 100 million, 100,000 queries.

Cases, each measured in a fresh child process (time of ``score`` including reading the files,
and the child's peak resident memory, ``VmHWM``):

- ``stream``: the 10M-row file read whole (``read_qrels`` + ``read_run(rank=False)`` +
  ``score``: the in-memory path), then the ``--rows`` file streamed (``score(qrels, path)``);
  printed: the time against 10x the in-memory time (target at most 1.5x) and the peak (target at
  most 1.5 GB);
- ``dask``: the 10M rows in 8 Parquet files (cut at equal row counts, so queries straddle
  files), scored on a 2-worker ``LocalCluster`` (one thread per worker; started before the
  clock, one untimed round first) against the same dataset scored in-process (streamed); the
  overhead ratio (cluster / in-process) is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DEPTH = 1_000
MEASURES = ["nDCG@10", "R@10", "R@100", "RR@10", "AP", "P@10"]
SEED = 0
CHUNK_QUERIES = 2_000


# --- data ---------------------------------------------------------------------------------------


def generate(folder: Path, n_queries: int) -> tuple[Path, Path]:
    """Write (once) the run and qrels of ``n_queries`` x ``DEPTH``, chunk by chunk."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    run_path = folder / f"run-{n_queries}x{DEPTH}.txt"
    qrels_path = folder / f"qrels-{n_queries}x{DEPTH}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    corpus = max(100_000, n_queries * DEPTH // 10)
    doc_names = pa.array(np.char.add("D", np.char.zfill(np.arange(corpus).astype(str), 8)))
    width = len(str(n_queries))
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_schema = pa.schema(
        [
            ("q", pa.string()),
            ("q0", pa.string()),
            ("d", pa.string()),
            ("rank", pa.int64()),
            ("score", pa.float64()),
            ("tag", pa.string()),
        ]
    )
    qrels_schema = pa.schema(
        [("q", pa.string()), ("it", pa.int64()), ("d", pa.string()), ("rel", pa.int64())]
    )
    partial_run, partial_qrels = run_path.with_suffix(".part"), qrels_path.with_suffix(".part")
    with (
        pacsv.CSVWriter(str(partial_run), run_schema, write_options=options) as run_out,
        pacsv.CSVWriter(str(partial_qrels), qrels_schema, write_options=options) as qrels_out,
    ):
        for first in range(0, n_queries, CHUNK_QUERIES):
            n = min(CHUNK_QUERIES, n_queries - first)
            names = np.char.add("q", np.char.zfill(np.arange(first, first + n).astype(str), width))
            start = rng.integers(0, corpus, n)[:, None]
            step = rng.choice(np.array([1, 3, 7, 11, 13]), n)[:, None]
            docs = (start + step * np.arange(DEPTH)[None, :]) % corpus
            scores = np.round(np.sort(rng.gamma(2.0, 2.0, (n, DEPTH)), axis=1)[:, ::-1], 1)
            shuffle = np.lexsort((rng.random((n, DEPTH)), -scores), axis=1)
            docs = np.take_along_axis(docs, shuffle, axis=1)
            scores = np.take_along_axis(scores, shuffle, axis=1)
            rows = n * DEPTH
            run_out.write_table(
                pa.table(
                    [
                        pa.array(np.repeat(names, DEPTH)),
                        pa.array(np.full(rows, "Q0")),
                        doc_names.take(pa.array(docs.ravel())),
                        pa.array(np.tile(np.arange(1, DEPTH + 1), n)),
                        pa.array(scores.ravel()),
                        pa.array(np.full(rows, "bench")),
                    ],
                    schema=run_schema,
                )
            )
            picked = np.minimum(rng.geometric(0.02, (n, 10)) - 1, DEPTH - 1)
            retrieved = np.take_along_axis(docs, picked, axis=1)
            later = (start + step * (DEPTH + rng.integers(0, 5 * DEPTH, (n, 10)))) % corpus
            judged = np.sort(np.concatenate([retrieved, later], axis=1), axis=1)
            keep = np.ones_like(judged, dtype=bool)
            keep[:, 1:] = judged[:, 1:] != judged[:, :-1]
            owner = np.repeat(np.arange(n), judged.shape[1]).reshape(judged.shape)[keep]
            qrels_out.write_table(
                pa.table(
                    [
                        pa.array(names[owner]),
                        pa.array(np.zeros(owner.size, dtype=np.int64)),
                        doc_names.take(pa.array(judged[keep])),
                        pa.array(rng.choice(np.array([0, 0, 1, 1, 2, 3]), owner.size)),
                    ],
                    schema=qrels_schema,
                )
            )
    partial_run.rename(run_path)
    partial_qrels.rename(qrels_path)
    return run_path, qrels_path


def parquet_parts(folder: Path, run_path: Path, parts: int) -> Path:
    """The run as ``parts`` Parquet files of equal row counts (queries straddle files)."""
    import pyarrow.parquet as pq

    from evalkit.formats import read_run

    target = folder / f"{run_path.stem}-{parts}-parquet"
    if target.exists():
        return target
    import pyarrow as pa

    table = pa.Table.from_pandas(read_run(run_path, rank=False), preserve_index=False)
    partial = target.with_suffix(".part")
    partial.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, table.num_rows, parts + 1).astype(int)
    for i in range(parts):
        piece = table.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i]))
        pq.write_table(piece, partial / f"part-{i}.parquet")
    partial.rename(target)
    return target


# --- children -----------------------------------------------------------------------------------


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(case: str, qrels_path: str, run_path: str) -> dict[str, Any]:
    """One measured case (in this fresh process)."""
    import warnings

    from evalkit.formats import read_qrels, read_run
    from evalkit.measures import score

    warnings.simplefilter("ignore")
    started = time.perf_counter()
    qrels = read_qrels(qrels_path)
    if case == "in-memory":
        frame = score(qrels, read_run(run_path, rank=False), MEASURES)
    elif case == "stream":
        frame = score(qrels, run_path, MEASURES, progress=False)
    else:
        raise SystemExit(f"unknown case {case}")
    seconds = time.perf_counter() - started
    means = frame.groupby("measure", sort=False)["value"].mean().round(6).to_dict()
    return {"seconds": seconds, "peak_mb": _peak_mb(), "rows": len(frame), "means": means}


def measured(case: str, qrels: Path, run: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", case, str(qrels), str(run)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# --- cases --------------------------------------------------------------------------------------


def stream_case(folder: Path, rows: int) -> None:
    run10, qrels10 = generate(folder, 10_000_000 // DEPTH)
    started = time.perf_counter()
    big_run, big_qrels = generate(folder, rows // DEPTH)
    took = time.perf_counter() - started
    print(f"data: {big_run.stat().st_size / 1e9:.2f} GB run file ({took:.0f} s to write)")
    base = measured("in-memory", qrels10, run10)
    print(f"10M rows in memory:   {base['seconds']:6.2f} s, peak {base['peak_mb']:5.0f} MB")
    streamed = measured("stream", big_qrels, big_run)
    scale = rows / 10_000_000
    ratio = streamed["seconds"] / (scale * base["seconds"])
    print(
        f"{rows / 1e6:.0f}M rows streamed:  {streamed['seconds']:6.2f} s, peak "
        f"{streamed['peak_mb']:5.0f} MB"
    )
    print(
        f"time vs {scale:g}x the 10M in-memory time: {ratio:.2f}x (target <= 1.5x); "
        f"peak {streamed['peak_mb'] / 1024:.2f} GB (target <= 1.5 GB)"
    )


def dask_case(folder: Path) -> None:
    import warnings

    import distributed

    from evalkit.formats import read_qrels
    from evalkit.measures import score

    warnings.simplefilter("ignore")
    run10, qrels10 = generate(folder, 10_000_000 // DEPTH)
    dataset = parquet_parts(folder, run10, 8)
    qrels = read_qrels(qrels10)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        score(qrels, dataset, MEASURES, client=client)  # untimed: workers import evalkit
        started = time.perf_counter()
        on_cluster = score(qrels, dataset, MEASURES, client=client)
        cluster_s = time.perf_counter() - started
    score(qrels, dataset, MEASURES, progress=False)
    started = time.perf_counter()
    local = score(qrels, dataset, MEASURES, progress=False)
    local_s = time.perf_counter() - started
    same = on_cluster.equals(local)
    print(f"10M rows, 8 Parquet files, in-process (streamed): {local_s:6.2f} s")
    print(f"10M rows, 8 Parquet files, 2-worker LocalCluster: {cluster_s:6.2f} s")
    print(f"overhead ratio (cluster / in-process): {cluster_s / local_s:.2f}x; identical: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--case", choices=("stream", "dask", "both"), default="both")
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/evalkit-bench-scale"))
    parser.add_argument("--clean", action="store_true", help="delete --dir afterwards")
    parser.add_argument(
        "--child", nargs=3, metavar=("CASE", "QRELS", "RUN"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    try:
        if args.case in ("stream", "both"):
            stream_case(args.dir, args.rows)
        if args.case in ("dask", "both"):
            dask_case(args.dir)
    finally:
        if args.clean:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
