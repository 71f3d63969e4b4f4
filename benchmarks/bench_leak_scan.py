"""Time the leak scan of one report-sized artifact against a large fixture's private text.

Usage: ``.venv/bin/python benchmarks/bench_leak_scan.py [--chunks 20000] [--queries 2000]``.

With ``--fixture FIXTURE --files FILE...`` (a real collection's report and gate Markdown, e.g.
Cranfield's, see benchmarks/README.md) it times instead what a command pays for the scan of
those files: building the needle index (with the scan of evalkit's own text it now includes)
and searching every file, each in a fresh process, for this tree's
:mod:`evalkit.safety.privacy` and for the one on ``--old`` (a git revision, default ``main``),
and prints the ratio new / old (the median of ``--repeats`` runs each).
The private side is ``chunks`` random-word texts of 80 words (seed 7), like chunk texts; the
artifact is the JSON of a ``perQuery`` section for 5 systems x ``queries`` queries x 7 measures.
It prints the scan time of :func:`evalkit.safety.privacy.find_leaks` and, for comparison measured in
the same run, the time of the plain rule (one substring search per needle), extrapolated from
the needles of the first 200 texts.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalkit.safety.privacy import PrivateText, _needles, artifact_text, find_leaks

MEASURES = ("R@5", "R@10", "RR@10", "nDCG@10", "ContextPrecision@10", "ContextRecall@10")


# run in a fresh process: import one privacy module from a file, load the fixture, time the
# index build and the scan of every file (the fixture's loading is not timed)
_CHILD = """
import importlib.util, json, sys, time
from evalkit.fixtures import load_fixture
spec = importlib.util.spec_from_file_location("privacy_under_test", sys.argv[1])
privacy = sys.modules["privacy_under_test"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(privacy)
private = tuple(privacy.private_texts(load_fixture(sys.argv[2])))
texts = [open(p, encoding="utf-8").read() for p in sys.argv[3:]]
started = time.perf_counter()
privacy.prepare_leak_scan(private)
built = time.perf_counter()
found = [privacy.find_leaks(text, private) for text in texts]
done = time.perf_counter()
leaks = [len(f) for f in found]
print(json.dumps({"index": built - started, "scan": done - built, "leaks": leaks}))
"""


def _time_files(privacy_file: str, fixture: str, files: list[str]) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, privacy_file, fixture, *files],
        check=True,
        capture_output=True,
        text=True,
    )
    timed: dict[str, object] = json.loads(result.stdout)
    return timed


def compare_files(fixture: str, files: list[str], old: str, repeats: int) -> None:
    """Old against new scan time of ``files`` (module docstring)."""
    repository = Path(__file__).resolve().parents[1]
    new_file = str(repository / "evalkit" / "safety" / "privacy.py")
    source = subprocess.run(
        ["git", "show", f"{old}:evalkit/safety/privacy.py"],
        cwd=repository,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        old_file = str(Path(folder) / "privacy_old.py")
        Path(old_file).write_text(source, encoding="utf-8")
        totals: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(repeats):
            for name, path in (("old", old_file), ("new", new_file)):
                timed = _time_files(path, fixture, files)
                index, scan = float(str(timed["index"])), float(str(timed["scan"]))
                totals[name].append(index + scan)
                print(f"{name}: index {index:.3f} s, scan {scan:.3f} s, IDs {timed['leaks']}")
    old_s, new_s = statistics.median(totals["old"]), statistics.median(totals["new"])
    ratio = new_s / old_s
    print(f"median index+scan: old ({old}) {old_s:.3f} s, new {new_s:.3f} s, ratio {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--fixture", default=None, help="a fixture; with --files")
    parser.add_argument("--files", nargs="+", default=None, help="files to scan (with --fixture)")
    parser.add_argument("--old", default="main", help="git revision of the old privacy module")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.fixture is not None:
        compare_files(args.fixture, args.files or [], args.old, args.repeats)
        return
    rng = random.Random(7)
    words = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(5_000)
    ]
    private = [
        PrivateText(f"chunk:c{i}", " ".join(rng.choice(words) for _ in range(80)))
        for i in range(args.chunks)
    ]
    per_query = {
        f"system-{s}": {
            f"q-{q:05d}": {m: rng.random() for m in (*MEASURES, "NoAnswerFP")}
            for q in range(args.queries)
        }
        for s in range(5)
    }
    artifact = json.dumps({"perQuery": per_query})
    needles = sum(len(_needles(p.text)) for p in private)
    started = time.perf_counter()
    leaks = find_leaks(artifact, private)
    scan_s = time.perf_counter() - started
    haystack = artifact_text(artifact)
    sample = [n for p in private[:200] for n in _needles(p.text)]
    started = time.perf_counter()
    found = any(n in haystack for n in sample)
    naive_s = (time.perf_counter() - started) / len(sample) * needles
    print(f"artifact {len(artifact) / 1e6:.1f} MB, {needles:,} needles, leaks {leaks or found}")
    print(f"find_leaks: {scan_s:.1f} s; one search per needle (extrapolated): {naive_s:.0f} s")


if __name__ == "__main__":
    main()
