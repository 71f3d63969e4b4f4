"""Hostile ``http:`` responses (issue #49): seconds and peak memory of one ``search`` each.

A service on 127.0.0.1 answers with, in turn:

- ``bomb``: ``Content-Encoding: gzip, gzip`` around ``--bomb-mib`` MiB of JSON white space
  (a few hundred bytes on the wire): refused before a byte is decoded;
- ``gzip``: one gzip layer around the same (about 1/1000 of it on the wire): refused when the
  decoded pieces pass ``max_response_bytes`` (64 MiB);
- ``large``: ``--hits`` hits (1M: 57 MB) without compression, k = 10, at concurrency 1 and 4.

Each case runs in a fresh child process, which prints its peak resident memory (``VmHWM``,
Linux) before the call (the interpreter and imports) and after it.

    .venv/bin/python benchmarks/bench_http_body.py [--hits 1000000] [--bomb-mib 256]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from raw_http import raw_serving

CHILD = """
import sys, threading, time
def peak_mb():  # VmHWM: this process's own peak (ru_maxrss is inherited from the parent)
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
from evalkit.errors import ExternalSystemError
from evalkit.fixtures.schema import Query
from evalkit.systems.http import HttpRetriever
concurrency = int(sys.argv[1])
system = HttpRetriever("bench")
queries = [Query(id=f"q-{i}", language="en", text="a question") for i in range(concurrency)]
before = peak_mb()
outcome = []
def call(query):
    try:
        outcome.append(len(system.search(query, 10)))
    except ExternalSystemError as error:
        outcome.append(str(error).split(": ", 1)[1][:60])
started = time.perf_counter()
threads = [threading.Thread(target=call, args=(q,)) for q in queries]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
seconds = time.perf_counter() - started
peak = peak_mb()
print(f"{seconds:.2f}\\t{before:.0f}\\t{peak:.0f}\\t{outcome[0]}")
"""


def measure(body: bytes, headers: list[tuple[str, str]], concurrency: int) -> str:
    with raw_serving(body, headers, path="/") as url:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(concurrency)],
            env={**os.environ, "EVALKIT_HTTP_BENCH_URL": url},
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1]}"
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hits", type=int, default=1_000_000)
    parser.add_argument("--bomb-mib", type=int, default=256)
    args = parser.parse_args()
    inner = gzip.compress(b'{"hits": []' + b" " * (args.bomb_mib << 20) + b"}", mtime=0)
    bomb = gzip.compress(inner, mtime=0)
    hits = [{"chunk_id": f"c{i}", "score": 1.0 / (i + 1)} for i in range(args.hits)]
    large = json.dumps({"hits": hits}).encode()
    del hits
    print("case\twire bytes\tconcurrency\tseconds\tMB before\tpeak MB\toutcome")
    for name, body, headers, concurrency in (
        ("bomb (gzip, gzip)", bomb, [("Content-Encoding", "gzip, gzip")], 1),
        ("gzip (one layer)", inner, [("Content-Encoding", "gzip")], 1),
        (f"large ({args.hits} hits)", large, [], 1),
        (f"large ({args.hits} hits)", large, [], 4),
    ):
        print(f"{name}\t{len(body)}\t{concurrency}\t{measure(body, headers, concurrency)}")


if __name__ == "__main__":
    main()
