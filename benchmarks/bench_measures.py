"""Speed and memory of evalkit's measures engine against ranx, pytrec-eval-terrier, ir-measures.

Usage::

    .venv/bin/python benchmarks/bench_measures.py            # all three sizes
    .venv/bin/python benchmarks/bench_measures.py --sizes 1k-100 --repeats 1

Generates (once, cached in benchmarks/data/, seed 0) TREC run and qrels files of three sizes:
1,000 x 100, 10,000 x 100 and 10,000 queries x 1,000 docs, about 20 judged docs per query
(grades 0-3, about half of them retrieved), scores rounded to one decimal so that ties are
common, tied docs written in random order. Each library runs in its own fresh process per size:
a first call on the smallest files (its time is reported: for ranx that is numba's JIT
compilation), one untimed warm-up round on the size's own files, then timed rounds (``--repeats``;
by default 5, or 3 for the 10-million-row size) of (a) loading both files into the library's
input objects and (b) computing nDCG@10, R@10, R@100, RR@10, AP, P@10 for every query; medians
are printed (wall, and the CPU seconds of (a) and (b) together), with the process's peak
resident memory, the load average before and after the timed rounds and each peer's ratio to
evalkit. ``evalkit`` reads the run into a DataFrame (``read_run``) and scores it;
``evalkit-stream`` gives ``score`` the run's path, which reads and scores it in blocks of whole
queries (its "load" is the qrels only: the run is read in "compute").

``--wide`` times the 10,000 x 1,000 files measure by measure instead, one fresh process per
library (inputs loaded once, one untimed warm-up call, then one timed call per measure,
``--repeats`` rounds, median): the six measures above plus infAP, IPrec@0.5, ERR@20, RBP,
Judged@10 and alpha_nDCG@20 (over generated subtopic qrels: each judged doc of grade > 0 is
relevant to 1-3 of its query's 4 subtopics), each where the library computes it. A measure a
library cannot compute is reported as such: "n/a in this build" for a name this evalkit does
not parse yet (the peers then skip it: there is no ratio to print), "-" where a peer has no
such measure, "error" where the peer's provider fails. ir_measures computes ERR@20 with gdeval
(numeric query IDs only: it gets copies of the inputs with "q00042" as "42") and RBP with
trectools (``pip install trectools``; not in its default pipeline).
The table prints each measure's seconds per library and each peer's ratio to evalkit::

    .venv/bin/python benchmarks/bench_measures.py --wide
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
SIZES = {"1k-100": (1_000, 100), "10k-100": (10_000, 100), "10k-1000": (10_000, 1_000)}
LIBRARIES = ("evalkit", "evalkit-stream", "pytrec_eval", "ranx", "ir_measures")
EVALKIT_MEASURES = ["nDCG@10", "R@10", "R@100", "RR@10", "AP", "P@10"]
SEED = 0
WIDE_SIZE = "10k-1000"
WIDE_LIBRARIES = ("evalkit", "pytrec_eval", "ir_measures")
#: (evalkit name, pytrec_eval measure or None, ir_measures name or None) of the wide case
WIDE_MEASURES: list[tuple[str, str | None, str | None]] = [
    ("nDCG@10", "ndcg_cut.10", "nDCG@10"),
    ("R@10", "recall.10", "R@10"),
    ("R@100", "recall.100", "R@100"),
    ("RR@10", "recip_rank", "RR@10"),  # pytrec_eval: recip_rank, cut to 0 below 1/10
    ("AP", "map", "AP"),
    ("P@10", "P.10", "P@10"),
    ("infAP", "infAP", "infAP"),
    ("IPrec@0.5", "iprec_at_recall.0.50", "IPrec@0.5"),
    ("ERR@20", None, "ERR@20"),
    ("RBP", None, "RBP"),
    ("RBP(rel=1)", None, "RBP(rel=1)"),  # binary RBP: ir_measures computes it with cwl_eval
    ("Judged@10", None, "Judged@10"),
    ("alpha_nDCG@20", None, "alpha_nDCG@20"),
]
NA_BUILD = "n/a in this build"


# --- data --------------------------------------------------------------------------------------


def generate(size: str) -> tuple[Path, Path]:
    """Write (once) the run and qrels files of ``size``; returns their paths."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    n_queries, depth = SIZES[size]
    run_path, qrels_path = DATA / f"run-{size}.txt", DATA / f"qrels-{size}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    DATA.mkdir(exist_ok=True)
    rng = np.random.default_rng(SEED)
    corpus = max(100_000, n_queries * depth // 10)
    doc_names = np.char.add("D", np.char.zfill(np.arange(corpus).astype(str), 7))
    query_names = np.char.add("q", np.char.zfill(np.arange(n_queries).astype(str), 5))
    # each query retrieves `depth` distinct docs: an arithmetic progression modulo the corpus
    start = rng.integers(0, corpus, n_queries)[:, None]
    step = rng.choice(np.array([1, 3, 7, 11, 13]), n_queries)[:, None]
    docs = (start + step * np.arange(depth)[None, :]) % corpus
    scores = np.round(np.sort(rng.gamma(2.0, 2.0, (n_queries, depth)), axis=1)[:, ::-1], 1)
    # tied docs in random order within each query (the trec rule must re-order them)
    shuffle = np.lexsort((rng.random((n_queries, depth)), -scores), axis=1)
    docs = np.take_along_axis(docs, shuffle, axis=1)
    scores = np.take_along_axis(scores, shuffle, axis=1)
    n = n_queries * depth
    run = pa.table(
        {
            "q": np.repeat(query_names, depth),
            "q0": np.full(n, "Q0"),
            "d": doc_names[docs.ravel()],
            "rank": np.tile(np.arange(1, depth + 1), n_queries),
            "score": scores.ravel(),
            "tag": np.full(n, "bench"),
        }
    )
    write = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(run, run_path, write)
    # ~10 judged docs among the retrieved (biased to the top) + ~10 unretrieved, grades 0-3
    picked = np.minimum(rng.geometric(0.02, (n_queries, 10)) - 1, depth - 1)
    retrieved = np.take_along_axis(docs, picked, axis=1)
    unretrieved = (start + step * (depth + rng.integers(0, 5 * depth, (n_queries, 10)))) % corpus
    judged = np.concatenate([retrieved, unretrieved], axis=1)
    judged.sort(axis=1)
    keep = np.ones_like(judged, dtype=bool)
    keep[:, 1:] = judged[:, 1:] != judged[:, :-1]  # no (query, doc) judged twice
    q_index = np.repeat(np.arange(n_queries), judged.shape[1]).reshape(judged.shape)[keep]
    qrels = pa.table(
        {
            "q": query_names[q_index],
            "it": np.zeros(q_index.size, dtype=np.int64),
            "d": doc_names[judged[keep]],
            "rel": rng.choice(np.array([0, 0, 1, 1, 2, 3]), q_index.size),
        }
    )
    pacsv.write_csv(qrels, qrels_path, write)
    return run_path, qrels_path


# --- one library, in a child process -----------------------------------------------------------


def _loader_and_scorer(library: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    if library == "evalkit":
        from evalkit.formats import read_qrels, read_run
        from evalkit.measures import score

        def load(qrels: Path, run: Path) -> Any:
            # without the rank column, which every peer skips too (trec_eval ranks by score)
            return read_qrels(qrels), read_run(run, rank=False)

        def compute(loaded: Any) -> Any:
            return score(loaded[0], loaded[1], EVALKIT_MEASURES)

        return load, compute
    if library == "evalkit-stream":
        from evalkit.formats import read_qrels
        from evalkit.measures import score

        def load(qrels: Path, run: Path) -> Any:
            # the run is read while it is scored: score() streams a run given as a path
            return read_qrels(qrels), run

        def compute(loaded: Any) -> Any:
            return score(loaded[0], loaded[1], EVALKIT_MEASURES, progress=False)

        return load, compute
    if library == "pytrec_eval":
        import pytrec_eval

        def load(qrels: Path, run: Path) -> Any:
            with open(qrels) as q, open(run) as r:
                return pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)

        def compute(loaded: Any) -> Any:
            measures = {"ndcg_cut.10", "recall.10,100", "P.10", "map", "recip_rank"}
            values = pytrec_eval.RelevanceEvaluator(loaded[0], measures).evaluate(loaded[1])
            # RR@10 = recip_rank when the first relevant doc is in the top 10, else 0
            for per_query in values.values():
                rr = per_query["recip_rank"]
                per_query["RR@10"] = rr if rr >= 0.1 else 0.0
            return values

        return load, compute
    if library == "ranx":
        from ranx import Qrels, Run, evaluate

        def load(qrels: Path, run: Path) -> Any:
            return Qrels.from_file(str(qrels), kind="trec"), Run.from_file(str(run), kind="trec")

        def compute(loaded: Any) -> Any:
            metrics = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "map", "precision@10"]
            return evaluate(loaded[0], loaded[1], metrics, return_mean=False)

        return load, compute
    if library == "ir_measures":
        import ir_measures

        def load(qrels: Path, run: Path) -> Any:
            return (
                list(ir_measures.read_trec_qrels(str(qrels))),
                list(ir_measures.read_trec_run(str(run))),
            )

        def compute(loaded: Any) -> Any:
            measures = [ir_measures.parse_measure(m) for m in EVALKIT_MEASURES]
            return list(ir_measures.iter_calc(measures, loaded[0], loaded[1]))

        return load, compute
    raise SystemExit(f"unknown library {library!r}; choose from {', '.join(LIBRARIES)}")


def default_repeats(size: str) -> int:
    """Timed rounds when ``--repeats`` is not given: 5, or 3 for 10 million rows (where the
    slowest peer takes about 30 s a round)."""
    n_queries, depth = SIZES[size]
    return 3 if n_queries * depth >= 10_000_000 else 5


def child(library: str, size: str, repeats: int) -> None:
    """Time one library on one size in this (fresh) process; print a JSON line."""
    started = time.perf_counter()
    load, compute = _loader_and_scorer(library)
    import_s = time.perf_counter() - started
    warm_qrels, warm_run = DATA / "qrels-1k-100.txt", DATA / "run-1k-100.txt"
    loaded = load(warm_qrels, warm_run)
    t = time.perf_counter()
    compute(loaded)
    first_call_s = time.perf_counter() - t
    t = time.perf_counter()
    compute(loaded)
    second_call_s = time.perf_counter() - t
    del loaded
    run_path, qrels_path = DATA / f"run-{size}.txt", DATA / f"qrels-{size}.txt"
    # one untimed round at this size: every library starts its timed rounds with its memory
    # allocator and the machine's caches in the same warm state
    compute(load(qrels_path, run_path))
    loads, computes, cpus = [], [], []
    load_before = os.getloadavg()[0]
    for _ in range(repeats):
        cpu = time.process_time()
        t = time.perf_counter()
        loaded = load(qrels_path, run_path)
        loads.append(time.perf_counter() - t)
        t = time.perf_counter()
        compute(loaded)
        computes.append(time.perf_counter() - t)
        cpus.append(time.process_time() - cpu)
        del loaded
    peak_mb = _peak_rss_mb()
    print(
        json.dumps(
            {
                "library": library,
                "size": size,
                "import_s": import_s,
                "first_call_s": first_call_s,
                "warm_call_s": second_call_s,
                "load_s": statistics.median(loads),
                "compute_s": statistics.median(computes),
                "total_s": statistics.median(a + b for a, b in zip(loads, computes, strict=True)),
                "cpu_s": statistics.median(cpus),
                "peak_mb": peak_mb,
                "load_avg": [load_before, os.getloadavg()[0]],
            }
        )
    )


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM; unlike ru_maxrss it is not inherited from
    the parent across fork + exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the wide case ----------------------------------------------------------------------------


def generate_subtopics(size: str) -> Path:
    """Write (once) subtopic qrels for ``size``'s qrels: every judged doc of grade > 0 is
    relevant (1) to 1-3 of its query's subtopics 1-4, every other judged doc is judged 0 for
    subtopic 1. Returns the path."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path = DATA / f"subtopics-{size}.txt"
    if path.exists():
        return path
    _, qrels_path = generate(size)
    read = pacsv.ReadOptions(column_names=["q", "it", "d", "rel"])
    qrels = pacsv.read_csv(
        qrels_path,
        read_options=read,
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(
            column_types={"q": pa.string(), "d": pa.string(), "rel": pa.int64()}
        ),
    )
    rng = np.random.default_rng(SEED + 1)
    rel = qrels["rel"].to_numpy()
    n = rel.size
    # a random subset of the 4 subtopics per relevant doc: bit masks 1..15 with 1-3 bits
    masks = np.array([m for m in range(1, 16) if bin(m).count("1") <= 3])
    mask = np.where(rel > 0, rng.choice(masks, n), 0)
    rows, subtopic, grade = [], [], []
    for bit in range(4):
        on = (mask >> bit) & 1 == 1
        rows.append(np.flatnonzero(on))
        subtopic.append(np.full(int(on.sum()), str(bit + 1)))
        grade.append(np.ones(int(on.sum()), dtype=np.int64))
    zero = np.flatnonzero(rel <= 0)
    rows.append(zero)
    subtopic.append(np.full(zero.size, "1"))
    grade.append(np.zeros(zero.size, dtype=np.int64))
    at = np.concatenate(rows)
    order = np.argsort(at, kind="stable")
    table = pa.table(
        {
            "q": qrels["q"].take(pa.array(at[order])),
            "s": np.concatenate(subtopic)[order],
            "d": qrels["d"].take(pa.array(at[order])),
            "rel": np.concatenate(grade)[order],
        }
    )
    write = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, path, write)
    return path


def _wide_compute(library: str) -> tuple[Callable[..., Any], dict[str, Callable[[Any], Any]]]:
    """The library's loader and, per wide measure it computes, a function of the loaded inputs
    (values are "n/a in this build" or "-" where it computes none)."""
    computes: dict[str, Any] = {}
    if library == "evalkit":
        from evalkit.errors import MeasureError
        from evalkit.formats import read_qrels, read_run, read_subtopic_qrels
        from evalkit.measures import parse_measure, score

        def load(qrels: Path, run: Path, subtopics: Path) -> Any:
            return read_qrels(qrels), read_run(run, rank=False), read_subtopic_qrels(subtopics)

        for name, _, _ in WIDE_MEASURES:
            try:
                parse_measure(name)
            except MeasureError:
                computes[name] = NA_BUILD
                continue

            def run_one(loaded: Any, name: str = name) -> Any:
                return score(loaded[0], loaded[1], [name], subtopics=loaded[2])

            computes[name] = run_one
        return load, computes
    if library == "pytrec_eval":
        import pytrec_eval

        def load(qrels: Path, run: Path, subtopics: Path) -> Any:
            with open(qrels) as q, open(run) as r:
                return pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)

        for name, trec, _ in WIDE_MEASURES:
            if trec is None:
                computes[name] = "-"
                continue

            def run_one(loaded: Any, trec: str = trec, name: str = name) -> Any:
                values = pytrec_eval.RelevanceEvaluator(loaded[0], {trec}).evaluate(loaded[1])
                if name == "RR@10":
                    for per_query in values.values():
                        rr = per_query["recip_rank"]
                        per_query["RR@10"] = rr if rr >= 0.1 else 0.0
                return values

            computes[name] = run_one
        return load, computes
    if library == "ir_measures":
        import ir_measures

        def load(qrels: Path, run: Path, subtopics: Path) -> Any:
            loaded_qrels = list(ir_measures.read_trec_qrels(str(qrels)))
            loaded_run = list(ir_measures.read_trec_run(str(run)))
            # gdeval (ERR) reads numeric query IDs only: "q00042" becomes "42" (not timed)
            numeric = (
                [q._replace(query_id=str(int(q.query_id[1:]))) for q in loaded_qrels],
                [r._replace(query_id=str(int(r.query_id[1:]))) for r in loaded_run],
            )
            return (
                loaded_qrels,
                loaded_run,
                list(ir_measures.read_trec_qrels(str(subtopics))),
                numeric,
            )

        for name, _, peer in WIDE_MEASURES:
            if peer is None:
                computes[name] = "-"
                continue

            def run_one(loaded: Any, peer: str = peer) -> Any:
                measure = ir_measures.parse_measure(peer)
                if peer.startswith("alpha_"):  # ndeval's: the subtopic qrels
                    return list(ir_measures.iter_calc([measure], loaded[2], loaded[1]))
                if peer.startswith("ERR"):  # gdeval's: numeric query IDs only
                    qrels, run = loaded[3]
                    return list(ir_measures.iter_calc([measure], qrels, run))
                if peer.startswith("RBP(rel"):  # cwl_eval's (binary gains)
                    return list(ir_measures.cwl_eval.iter_calc([measure], loaded[0], loaded[1]))
                if peer.startswith("RBP"):  # trectools' (not in the default pipeline)
                    return list(ir_measures.trectools.iter_calc([measure], loaded[0], loaded[1]))
                return list(ir_measures.iter_calc([measure], loaded[0], loaded[1]))

            computes[name] = run_one
        return load, computes
    raise SystemExit(f"unknown library {library!r}; choose from {', '.join(WIDE_LIBRARIES)}")


def wide_child(library: str, size: str, repeats: int, skip: list[str]) -> None:
    """Time one library measure by measure on the wide case (not the ``skip`` ones); print a
    JSON line."""
    load, computes = _wide_compute(library)
    for name in skip:
        if callable(computes.get(name)):
            computes[name] = "skipped"
    run_path, qrels_path = DATA / f"run-{size}.txt", DATA / f"qrels-{size}.txt"
    t = time.perf_counter()
    loaded = load(qrels_path, run_path, DATA / f"subtopics-{size}.txt")
    load_s = time.perf_counter() - t
    callable_ = [f for f in computes.values() if callable(f)]
    if callable_:
        callable_[0](loaded)  # one untimed warm-up call
    times: dict[str, Any] = {}
    for name, compute in computes.items():
        if not callable(compute):
            times[name] = compute
            continue
        rounds = []
        try:
            for _ in range(repeats):
                t = time.perf_counter()
                compute(loaded)
                rounds.append(time.perf_counter() - t)
        except Exception as error:  # a peer's provider that fails (e.g. not installed)
            times[name] = f"error: {type(error).__name__}: {str(error)[:60]}"
            continue
        times[name] = statistics.median(rounds)
        print(f"    {library} {name}: {times[name]:.2f} s", file=sys.stderr, flush=True)
    print(json.dumps({"library": library, "load_s": load_s, "times": times}))


def wide_table(results: list[dict[str, Any]]) -> str:
    """A Markdown table: seconds per measure per library, each peer's ratio to evalkit."""
    by = {r["library"]: r["times"] for r in results}
    peers = [lib for lib in by if lib != "evalkit"]
    head = "| measure | " + " | ".join(f"{lib} s" for lib in by)
    head += "".join(f" | {peer} / evalkit" for peer in peers) + " |"
    lines = [head, "| --- |" + " ---: |" * (len(by) + len(peers))]

    def shown(value: Any) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    for name, _, _ in WIDE_MEASURES:
        cells = [shown(by[lib].get(name, "-")) for lib in by]
        base = by.get("evalkit", {}).get(name)
        for peer in peers:
            value = by[peer].get(name)
            if isinstance(value, float) and isinstance(base, float):
                cells.append(f"{value / base:.1f}x")
            else:
                cells.append("-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    loads = ", ".join(f"{r['library']} {r['load_s']:.1f} s" for r in results)
    return "\n".join(lines) + f"\n\nloading the files (once per library): {loads}"


def wide_main(libraries: list[str], size: str, repeats: int, only: list[str] | None = None) -> None:
    """The wide case; ``only``: time just these measures (the others print as skipped)."""
    t = time.perf_counter()
    generate("1k-100")
    generate(size)
    generate_subtopics(size)
    print(f"data ready in {time.perf_counter() - t:.1f} s ({DATA})", flush=True)
    results: list[dict[str, Any]] = []
    chosen = [name for name, _, _ in WIDE_MEASURES if only is None or name in only]
    not_chosen = [name for name, _, _ in WIDE_MEASURES if name not in chosen]
    skip: list[str] = list(not_chosen)
    # evalkit first: the peers skip the measures it cannot compute in this build (no ratio)
    for library in sorted(libraries, key=lambda lib: lib != "evalkit"):
        command = [sys.executable, __file__, "--wide-child", library, size]
        command += ["--repeats", str(repeats), "--skip", *skip]
        out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        if library == "evalkit":
            skip = not_chosen + [
                m for m, value in results[-1]["times"].items() if value == NA_BUILD
            ]
    print()
    print(wide_table(results))


# --- parent ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed rounds (default: 5, or 3 at 10M rows)"
    )
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--wide", action="store_true", help="time each of 12 measures at 10,000 x 1,000"
    )
    parser.add_argument(
        "--wide-size", default=WIDE_SIZE, choices=list(SIZES), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--measures", nargs="+", default=None, help="with --wide: time only these measures"
    )
    parser.add_argument("--wide-child", nargs=2, metavar=("LIB", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--skip", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.wide_child:
        wide_child(args.wide_child[0], args.wide_child[1], args.repeats or 1, args.skip)
        return
    if args.wide:
        libraries = [lib for lib in args.libraries if lib in WIDE_LIBRARIES]
        wide_main(
            libraries or list(WIDE_LIBRARIES), args.wide_size, args.repeats or 1, args.measures
        )
        return
    if args.child:
        child(args.child[0], args.child[1], args.repeats or default_repeats(args.child[1]))
        return
    t = time.perf_counter()
    for size in dict.fromkeys(["1k-100", *args.sizes]):
        generate(size)
    print(f"data ready in {time.perf_counter() - t:.1f} s ({DATA})", flush=True)
    results: list[dict[str, Any]] = []
    for size in args.sizes:
        for library in args.libraries:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    library,
                    size,
                    "--repeats",
                    str(args.repeats or default_repeats(size)),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = results[-1]
            print(
                f"  {size:9s} {library:14s} load {r['load_s']:7.2f} s  compute "
                f"{r['compute_s']:7.2f} s  end to end {r['total_s']:7.2f} s  CPU "
                f"{r['cpu_s']:7.2f} s  peak {r['peak_mb']:7.0f} MB  load average "
                f"{r['load_avg'][0]:.1f} -> {r['load_avg'][1]:.1f}",
                flush=True,
            )
    print()
    print(table(results))


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table of the results with each peer's ratio to evalkit."""
    lines = [
        "| size (queries x docs) | library | load s | compute s | end to end s | CPU s | peak MB "
        "| end to end vs evalkit | compute vs evalkit | first call s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in dict.fromkeys(r["size"] for r in results):
        rows = [r for r in results if r["size"] == size]
        base = next((r for r in rows if r["library"] == "evalkit"), None)
        for r in rows:
            total_ratio = f"{r['total_s'] / base['total_s']:.1f}x" if base else "-"
            compute_ratio = f"{r['compute_s'] / base['compute_s']:.1f}x" if base else "-"
            lines.append(
                f"| {size.replace('-', ' x ').replace('k', ',000')} | {r['library']} "
                f"| {r['load_s']:.2f} | {r['compute_s']:.2f} | {r['total_s']:.2f} "
                f"| {r['cpu_s']:.2f} | {r['peak_mb']:.0f} | {total_ratio} | {compute_ratio} "
                f"| {r['first_call_s']:.2f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
