"""Time and peak memory of reading and writing a large fixture's YAML, before and after the
event-stream loader and the column scan.

Usage::

    .venv/bin/python benchmarks/bench_yaml_load.py                  # 100,000 chunks
    .venv/bin/python benchmarks/bench_yaml_load.py --documents 2500  # 10,000 chunks, a quick look
    .venv/bin/python benchmarks/bench_yaml_load.py --pure           # also PyYAML's pure parser

The fixture is ``generate_fixture(1, documents=25000, chunks_per_document=4, queries=5000)``
(100,000 chunks, 5,000 queries, 48 MB of YAML), written once with ``dump_fixture`` to a
temporary directory (or ``--fixture DIR``). Each step runs in its own fresh process, which
reports its wall and CPU time and its peak resident memory (``ru_maxrss`` of
``RUSAGE_SELF``: the interpreter, the imports and the step's input included):

- **parse**: ``load_strict`` on the four YAML files. Before: PyYAML's C parser with its Python
  constructor and the strict hooks (``events=False``, the fixture loader until now); after: the
  event path (since issue 48's part 3, with the line reader of flat lists of one-line mappings,
  the documents and chunks, in front of it). With ``--pure``, the same two on PyYAML's
  pure-Python parser (``libyaml=False``).
- **scan**: the sensitive-string rule on the loaded fixture. Before: the old scan (one
  ``find_sensitive`` per object on its NUL-joined strings, then one per string of a flagged
  object; ``tests/sensitive_oracle.py``); after: ``rules.string_problems`` (``scan_sensitive``).
- **validate**: the models built from the parsed data (``model_validate``) and the cross-object
  rules (``check_objects``); the same code before and after.
- **load**: ``load_fixture``, end to end. Before: with the parse and scan steps swapped back
  and every file read whole by one process. After, the list file of chunks (38 MB) is parsed
  and validated in two processes (``evalkit.fixtures.load._load_split``): the CPU column is
  this process's only, here and in **parse**.
- **dump**: ``dump_fixture``. Before: ``yaml.dump`` with the representer (``events=False``);
  the two outputs are compared byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STEPS = ("parse", "scan", "validate", "load", "dump")
YAML_FILES = ("fixture.yaml", "documents.yaml", "chunks.yaml", "queries.yaml")


def _old_string_problems(meta: Any, documents: Any, chunks: Any, queries: Any, context: Any = None):
    """The scan before the column scan: one per-string scan per object on its joined strings."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from sensitive_oracle import find_sensitive_per_string

    from evalkit.errors import Problem
    from evalkit.fixtures import rules

    ctx = context or rules.Context()

    def object_strings(model: Any) -> list[tuple[str, str]]:
        strings = list(rules._model_strings(model, ""))
        if not find_sensitive_per_string("\x00".join(text for _, text in strings)):
            return []
        return [
            (path, rules.sensitive_message(kinds))
            for path, text in strings
            if (kinds := find_sensitive_per_string(text))
        ]

    problems: list[Problem] = []
    if meta is not None:
        label = rules.safe_id(meta.id) or "fixture"
        problems += (Problem(rules.META_FILE, label, f, m) for f, m in object_strings(meta))
    for kind, items in rules._by_kind(documents, chunks, queries):
        for index, item in enumerate(items):
            found = object_strings(item)
            if found:
                at = rules._At(ctx.origin(kind, index), item.id)
                problems += (at.problem(f, m) for f, m in found)
    return problems


def _step(name: str, mode: str, fixture: Path, out: Path) -> dict[str, Any]:
    """Run one step in this process; its timings (setup excluded) and a summary count."""
    from evalkit.fixtures import (
        Chunk,
        Document,
        Query,
        _layout as layout,
        dump,
        dump_fixture,
        load,
        load_fixture,
        rules,
    )
    from evalkit.safety.yamlio import dump_yaml, load_strict

    before = mode.startswith("before")
    libyaml = not mode.endswith("pure")
    timed: Callable[[], Any]
    if name == "parse":
        texts = [(fixture / f).read_text(encoding="utf-8") for f in YAML_FILES]

        def timed() -> Any:
            return [load_strict(t, events=not before, libyaml=libyaml) for t in texts]

    elif name == "scan":
        fx = load_fixture(fixture)
        scan = _old_string_problems if before else rules.string_problems

        def timed() -> Any:
            return scan(fx.meta, fx.documents, fx.chunks, fx.queries)

    elif name == "validate":
        data = {f: load_strict((fixture / f).read_text(encoding="utf-8")) for f in YAML_FILES}
        kinds: Sequence[tuple[str, Any]] = (
            ("documents.yaml", Document),
            ("chunks.yaml", Chunk),
            ("queries.yaml", Query),
        )

        def timed() -> Any:
            meta = load.FixtureMeta.model_validate(data["fixture.yaml"])
            built = [[model.model_validate(item) for item in data[f]] for f, model in kinds]
            return rules.check_objects(meta, *built)

    elif name == "load":
        if before:
            from evalkit.safety import yamlio

            layout.load_strict_shallow = lambda text, **_: (load_strict(text, events=False), False)
            load.string_problems = _old_string_problems
            yamlio.SPLIT_FROM = 10**15  # one process reads each file whole

        def timed() -> Any:
            return load_fixture(fixture)

    else:
        fx = load_fixture(fixture)
        if before:
            dump.dump_yaml = lambda value: dump_yaml(value, events=False)

        def timed() -> Any:
            return dump_fixture(fx, out)

    wall, cpu = time.perf_counter(), time.process_time()
    result = timed()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    count = len(result) if isinstance(result, list) else len(getattr(result, "chunks", ()))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"wall": wall, "cpu": cpu, "peak_mb": peak, "count": count}


def _run(name: str, mode: str, fixture: Path, out: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, mode, str(fixture), str(out)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=25_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--fixture", type=Path, help="an existing fixture directory to read")
    parser.add_argument("--pure", action="store_true", help="also PyYAML's pure-Python parser")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, mode, fixture, out = args.child
        print(json.dumps(_step(name, mode, Path(fixture), Path(out))))
        return
    import yaml

    from evalkit.fixtures import dump_fixture
    from evalkit.fixtures.generate import generate_fixture

    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        fixture = args.fixture
        if fixture is None:
            fixture = root / "fixture"
            dump_fixture(
                generate_fixture(1, documents=args.documents, queries=args.queries), fixture
            )
        size = sum((fixture / f).stat().st_size for f in YAML_FILES) / 1e6
        print(f"fixture: {size:.0f} MB of YAML; libyaml: {yaml.__with_libyaml__}")
        print("| step | before s (cpu) | after s (cpu) | before/after | before MB | after MB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        modes = [("", "before", "after")]
        if args.pure:
            modes.append((" (pure)", "before-pure", "after-pure"))
        for name in STEPS:
            for label, old, new in modes if name == "parse" else modes[:1]:
                a = _run(name, old, fixture, root / f"{name}-before")
                b = _run(name, new, fixture, root / f"{name}-after")
                assert a["count"] == b["count"], (name, a, b)
                print(
                    f"| {name}{label} | {a['wall']:.2f} ({a['cpu']:.2f}) | {b['wall']:.2f} "
                    f"({b['cpu']:.2f}) | {a['wall'] / b['wall']:.1f}x | {a['peak_mb']:.0f} | "
                    f"{b['peak_mb']:.0f} |",
                    flush=True,
                )
        names = sorted(p.name for p in (root / "dump-after").iterdir())
        same = filecmp.cmpfiles(root / "dump-before", root / "dump-after", names, shallow=False)
        print(f"dump output byte-identical before/after: {same[0] == names} ({len(names)} files)")


if __name__ == "__main__":
    main()
