"""The parse floor of the 10M-row run of ``bench_measures.py``: how long reading its columns takes.

Run from the repository root (after ``bench_measures.py`` has generated its files)::

    python benchmarks/bench_parse_floor.py --rounds 3

Times, in this process, medians of ``--rounds`` of wall and CPU seconds (with the load average
before and after):

- ``pyarrow``: ``pyarrow.csv.read_csv`` of the three columns scored (query, doc, score), on
  every core: the fastest reader installed here, and so the floor of "read and score";
- ``read_run``: evalkit's reader (the same pyarrow reader over 32 MB text blocks, then the
  pandas frame ``score`` takes), and ``read_qrels``;
- ``stream_run``: the blocks ``score`` reads when given the run's path (8 MB of text each,
  parsed on every core);
- ``numpy``: :func:`evalkit.formats.trec_arrays.read_run_columns` (``evalkit trec-eval``'s
  reader, numpy only; its size limit lifted for this file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUN = HERE / "data" / "run-10k-1000.txt"
QRELS = HERE / "data" / "qrels-10k-1000.txt"


def _pyarrow(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["query_id", "q0", "doc_id", "rank", "score", "run_id"]
    types = {"query_id": pa.large_string(), "doc_id": pa.large_string(), "score": pa.float64()}
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pacsv.ConvertOptions(column_types=types, include_columns=list(types)),
    )


def _read_run(path: Path) -> Any:
    from evalkit.formats import read_run

    return read_run(path, rank=False)


def _read_qrels(path: Path) -> Any:
    from evalkit.formats import read_qrels

    return read_qrels(path)


def _stream_run(path: Path) -> Any:
    from evalkit.formats.trec import stream_run

    return sum(table.num_rows for table in stream_run(path, rank=False, block_size=1 << 23))


def _numpy(path: Path) -> Any:
    from evalkit.formats import trec_arrays

    trec_arrays.MAX_ARRAY_BYTES = 1 << 40  # type: ignore[misc]  # this file is over the limit
    columns = trec_arrays.read_run_columns(path)
    if columns is None:
        raise SystemExit("the numpy reader declined the file")
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    if not RUN.exists():
        raise SystemExit("run benchmarks/bench_measures.py --sizes 10k-1000 first")
    readers: list[tuple[str, Callable[[Path], Any], Path]] = [
        ("pyarrow read_csv, 3 columns (the floor)", _pyarrow, RUN),
        ("evalkit read_run(rank=False)", _read_run, RUN),
        ("evalkit stream_run (8 MB blocks)", _stream_run, RUN),
        ("evalkit read_qrels", _read_qrels, QRELS),
        ("numpy reader (trec-eval's)", _numpy, RUN),
    ]
    print(f"load average before: {os.getloadavg()}")
    times: dict[str, list[float]] = {name: [] for name, _, _ in readers}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in readers}
    for _ in range(options.rounds):  # alternated, so the load weighs on each alike
        for name, read, path in readers:
            cpu = time.process_time()
            start = time.perf_counter()
            read(path)
            times[name].append(time.perf_counter() - start)
            cpus[name].append(time.process_time() - cpu)
    for name, _, _ in readers:
        print(
            f"{name}: {statistics.median(times[name]):.3f} s, CPU "
            f"{statistics.median(cpus[name]):.3f} s (medians of {options.rounds})"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
