"""Fixtures at corpus scale (issue 21): load + validate, dump and hash, YAML against columnar.

Generates (once, cached in ``benchmarks/data/fixtures-<chunks>-<generator key>/``, git-ignored;
the key hashes the generator's code, see ``bench_index.generator_key``) a fixture with
``evalkit.fixtures.generate.generate_fixture(21, documents=chunks // 4, chunks_per_document=4,
queries=...)`` and writes it in each form asked for (``dump_fixture(..., form=...)``). Each
(size, form) case then runs in a fresh process, three steps in turn:

* **load**: ``load_fixture`` (parse, validate every object and every cross-object rule, the
  path/endpoint/secret scan);
* **dump**: ``dump_fixture`` of the loaded fixture in its own form to a temporary directory;
* **hash**: ``fixture_content_hash`` (the form-independent content hash).

Per step it prints the wall time, the CPU time of the process (user + system: on a shared
machine the wall time also counts the time other processes held the cores), and the peak
resident memory of that step (``VmHWM``, reset before each step through
``/proc/self/clear_refs``; it includes the interpreter, the imports and what earlier steps
left alive). ``--before SRC`` also runs the YAML cases with the evalkit source tree ``SRC``
(e.g. ``git archive <commit> | tar -x -C SRC``), for before/after numbers.

    .venv/bin/python benchmarks/bench_fixtures.py                       # 100k and 1M chunks
    .venv/bin/python benchmarks/bench_fixtures.py --sizes 100000 --forms yaml parquet

Targets (issue 21, 2 cores): columnar 1,000,000 chunks + 10,000 queries loaded and validated
in at most 30 s within 3 GB; YAML 100,000 chunks in at most 8 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
QUERIES = {100_000: 5_000, 1_000_000: 10_000}  # the sizes; others: chunks // 100
TARGETS = {("parquet", 1_000_000): (30.0, 3072.0), ("yaml", 100_000): (8.0, None)}


def _queries(chunks: int) -> int:
    return QUERIES.get(chunks, max(40, chunks // 100))


def _peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")  # resets VmHWM to the current resident size
    except OSError:
        pass


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def run_case(directory: Path, form: str) -> dict[str, Any]:
    """The three steps on one fixture directory (runs in the case's own process)."""
    from evalkit.fixtures import dump_fixture, load_fixture
    from evalkit.fixtures.diff import fixture_content_hash

    steps: dict[str, Any] = {"imports_mb": _peak_mb()}
    _reset_peak()
    wall, cpu = time.perf_counter(), _cpu()
    fixture = load_fixture(directory)
    steps["load"] = (time.perf_counter() - wall, _cpu() - cpu, _peak_mb())
    out = Path(tempfile.mkdtemp(prefix="evalkit-bench-dump-"))
    try:
        _reset_peak()
        wall, cpu = time.perf_counter(), _cpu()
        if form == "yaml":
            dump_fixture(fixture, out)
        else:
            dump_fixture(fixture, out, form=form)
        steps["dump"] = (time.perf_counter() - wall, _cpu() - cpu, _peak_mb())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    _reset_peak()
    wall, cpu = time.perf_counter(), _cpu()
    steps["hash_value"] = fixture_content_hash(fixture)
    steps["hash"] = (time.perf_counter() - wall, _cpu() - cpu, _peak_mb())
    steps["chunks"], steps["queries"] = len(fixture.chunks), len(fixture.queries)
    return steps


def generate(chunks: int, forms: list[str]) -> Path:
    """The cached fixture directories of one size (written by a child process)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    # the key is the generator's code, so a stale cache is not read
    from bench_index import generator_key, write_generated

    root = DATA / f"fixtures-{chunks}-{generator_key()}"
    arguments = {
        "seed": 21,
        "documents": chunks // 4,
        "chunks_per_document": 4,
        "queries": _queries(chunks),
    }
    write_generated(arguments, {form: root / form for form in forms})
    return root


def _case(directory: Path, form: str, source: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source
    done = subprocess.run(
        [sys.executable, __file__, "--case", str(directory), "--case-form", form],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _size_mb(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--forms",
        nargs="+",
        default=["yaml", "parquet", "jsonl"],
        choices=["yaml", "jsonl", "parquet"],
    )
    parser.add_argument(
        "--yaml-up-to",
        type=int,
        default=100_000,
        help="largest size also run as YAML (default 100000: a 1M-chunk YAML file is 480 MB)",
    )
    parser.add_argument("--before", help="evalkit source tree to run the YAML cases with too")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--case-form", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(Path(args.case), args.case_form)))
        return
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        "| chunks | queries | form | code | MB on disk | load s (cpu) | load peak MB "
        "| dump s (cpu) | dump peak MB | hash s (cpu) | hash peak MB | target |"
    )
    print("| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    hashes: dict[int, set[str]] = {}
    for chunks in args.sizes:
        forms = [f for f in args.forms if f != "yaml" or chunks <= args.yaml_up_to]
        root = generate(chunks, forms)
        runs = [(form, None) for form in forms]
        if args.before and "yaml" in forms:
            runs.append(("yaml", args.before))
        for form, source in runs:
            r = _case(root / form, form, source)
            hashes.setdefault(chunks, set()).add(r["hash_value"])
            load, dump, digest = r["load"], r["dump"], r["hash"]
            target = TARGETS.get((form, chunks))
            verdict = ""
            if target is not None and source is None:
                seconds, megabytes = target
                memory_ok = megabytes is None or load[2] <= megabytes
                limit = f"<= {seconds:.0f} s" + (f", <= {megabytes:.0f} MB" if megabytes else "")
                if load[0] <= seconds and memory_ok:
                    verdict = f"{limit}: met"
                elif load[1] <= seconds and memory_ok:
                    verdict = f"{limit}: met in CPU time only (the cores were shared)"
                else:
                    verdict = f"{limit}: NOT met"
            print(
                f"| {chunks:,} | {r['queries']:,} | {form} | {'before' if source else 'this'} "
                f"| {_size_mb(root / form):.0f} | {load[0]:.1f} ({load[1]:.1f}) | {load[2]:.0f} "
                f"| {dump[0]:.1f} ({dump[1]:.1f}) | {dump[2]:.0f} "
                f"| {digest[0]:.1f} ({digest[1]:.1f}) | {digest[2]:.0f} | {verdict} |",
                flush=True,
            )
    for chunks, values in hashes.items():
        same = "the same in every form" if len(values) == 1 else "DIFFERENT across forms"
        print(f"content hash of the {chunks:,}-chunk fixture: {same}")


if __name__ == "__main__":
    main()
