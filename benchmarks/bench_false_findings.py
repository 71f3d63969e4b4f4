"""False findings of the leak scan on real prose nobody here wrote (issue 43), and its recall.

Usage (from the repository root; a workspace folder is created)::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_false_findings.py --workspace /tmp/ff \
        [--documents 600] [--fixture /path/to/cran --fixture /path/to/cisi] [--doc-texts 64]

Text sources: **A** the standard library's docstrings (read with :mod:`ast`, nothing
imported; on every machine), **B** ``/usr/share/doc`` (every ``.txt``/``.md``/``.rst``/``.gz``
/``.html``/``.css``/``.json``/``.xml`` file, up to ``--doc-texts`` MB; Debian-family machines,
skipped when absent), and **C** any fixture given with ``--fixture`` (Cranfield and CISI,
imported as in ``benchmarks/README.md``).

1. **End to end.** A fixture is built from A (``--documents`` docstring paragraphs as
   chunks; the first sentence of every 20th as a query judged on it). For it and each
   ``--fixture``, through the CLI with its real scan: ``report`` with the defaults, one system,
   two systems at k=1000, a subset of three, custom measures, a baseline, a custom notebook
   (the default one plus a Markdown cell of team prose and a code cell printing a pandas
   table); ``gate --junit --markdown``; ``run --output``. A refusal's object IDs are counted.
2. **Cross-scan.** Every artifact written in part 1 is scanned (as ``evalkit scan`` does)
   against the private texts of the *other* sources: docstrings not in the fixture and B,
   text that never entered an artifact, so every finding is false.
3. **Recall.** Into each artifact kind, 31-character copies of 50 private strings are planted
   in each encoding (HTML text, tags between words, JSON escapes, URL escapes, a PNG ``tEXt``
   chunk) and must all be found.

Prints one line per variant and the totals; the target is 0 false findings and 100% recall.
"""

from __future__ import annotations

import argparse
import ast
import base64
import gzip
import json
import random
import re
import struct
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s")


def docstring_paragraphs(limit: int | None = None, *, seed: int = 0) -> list[str]:
    """Paragraphs of the standard library's docstrings (module, class and function), read with
    ``ast`` (nothing imported), white space collapsed, 80-1,500 characters and mostly letters;
    ``limit`` of them drawn with ``seed`` (all, sorted by file, without)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found: dict[str, None] = {}
    for path in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py")):
        if "test" in path.parts[-2:][0] or path.name.startswith("test"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                for paragraph in (doc or "").split("\n\n"):
                    text = " ".join(paragraph.split())
                    letters = sum(c.isalpha() for c in text)
                    if 80 <= len(text) <= 1500 and letters >= 0.7 * len(text):
                        found.setdefault(text)
    # a fixture never holds a credential's shape (the validator refuses it; prose may hold
    # paths, URLs and e-mail addresses when declared)
    from evalkit.safety.sensitive import find_sensitive

    credentials = {"private_key", "token"}
    found = {t: None for t in found if not credentials.intersection(find_sensitive(t))}
    paragraphs = list(found)
    if limit is not None and limit < len(paragraphs):
        paragraphs = random.Random(seed).sample(paragraphs, limit)
    return paragraphs


def write_prose_fixture(directory: Path, paragraphs: list[str], *, every: int = 20) -> Path:
    """A fixture of ``paragraphs`` (one document and chunk each, English) with the first
    sentence of every ``every``-th paragraph as a query judged on its chunk (grade 2)."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "id": "stdlib-prose-v1",
        "version": "1.0.0",
        "license": "PSF-2.0",
        "description": "Docstring paragraphs of the Python standard library.",
        "languages": ["en"],
        "requires_spans": False,
        "prose_may_hold": ["posix_path", "windows_path", "url", "email"],
    }
    documents = [
        {"id": f"d{i}", "language": "en", "title": f"paragraph {i}"} for i in range(len(paragraphs))
    ]
    chunks = [
        {
            "id": f"c{i}",
            "document_id": f"d{i}",
            "language": "en",
            "title": f"paragraph {i}",
            "text": t,
        }
        for i, t in enumerate(paragraphs)
    ]
    queries = []
    for i in range(0, len(paragraphs), every):
        first = _SENTENCE_RE.split(paragraphs[i], maxsplit=1)[0][:300]
        queries.append(
            {
                "id": f"q{i}",
                "language": "en",
                "text": first,
                "judgments": [{"chunk_id": f"c{i}", "grade": 2}],
            }
        )
    # two no-answer queries: the report's all-pairs table needs two queries per measure
    queries.append({"id": "q-none-1", "language": "en", "text": "Is there a night bus?"})
    queries.append({"id": "q-none-2", "language": "en", "text": "Can I bring a bicycle?"})
    for name, data in (
        ("fixture.yaml", meta),
        ("documents.yaml", documents),
        ("chunks.yaml", chunks),
        ("queries.yaml", queries),
    ):
        (directory / name).write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return directory


def doc_texts(limit_mb: int) -> Iterator[str]:
    """Texts of ``/usr/share/doc`` (module docstring), up to ``limit_mb`` MB, in paragraphs."""
    root = Path("/usr/share/doc")
    budget = limit_mb << 20
    suffixes = (".txt", ".md", ".rst", ".gz", ".html", ".css", ".json", ".xml")
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        if budget <= 0:
            return
        if not path.is_file() or path.is_symlink():
            continue
        if not (path.suffix in suffixes or path.name in ("copyright", "changelog", "README")):
            continue
        try:
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
            continue
        text = data.decode("utf-8", "replace")
        budget -= len(text)
        for paragraph in text.split("\n\n"):
            if len(paragraph.strip()) >= 31:
                yield paragraph.strip()


def _variants(fixture: Path, out: Path, workspace: Path) -> list[tuple[str, list[str]]]:
    name = fixture.name
    base = ["-p", "n_resamples", "200"]
    notebook = _team_notebook(workspace)
    baseline = out / f"{name}-baseline.json"
    return [
        (
            "baseline",
            ["baseline", str(fixture), "--systems", "lexical,hybrid", "--output", str(baseline)],
        ),
        (
            "report defaults",
            ["report", str(fixture), "--output", str(out / f"{name}-default.html"), *base],
        ),
        (
            "report one system",
            [
                "report",
                str(fixture),
                "--output",
                str(out / f"{name}-one.html"),
                "-p",
                "systems",
                "lexical",
                *base,
            ],
        ),
        (
            "report two systems k=1000",
            [
                "report",
                str(fixture),
                "--output",
                str(out / f"{name}-k1000.html"),
                "-p",
                "systems",
                "lexical,hybrid",
                "-p",
                "k",
                "1000",
                *base,
            ],
        ),
        (
            "report subset",
            [
                "report",
                str(fixture),
                "--output",
                str(out / f"{name}-subset.html"),
                "-p",
                "systems",
                "lexical,token-hash,hybrid",
                *base,
            ],
        ),
        (
            "report custom measures",
            [
                "report",
                str(fixture),
                "--output",
                str(out / f"{name}-measures.html"),
                "-p",
                "measures",
                "AP,P@5,nDCG@10,RR@10",
                *base,
            ],
        ),
        (
            "report baseline",
            [
                "report",
                str(fixture),
                "--output",
                str(out / f"{name}-withbase.html"),
                "-p",
                "systems",
                "lexical,hybrid",
                "-p",
                "baseline",
                str(baseline),
                *base,
            ],
        ),
        (
            "report custom notebook",
            [
                "report",
                str(fixture),
                "--notebook",
                str(notebook),
                "--output",
                str(out / f"{name}-team.html"),
                *base,
            ],
        ),
        (
            "gate junit markdown",
            [
                "gate",
                str(fixture),
                "--gates",
                str(_gates(workspace)),
                "--junit",
                str(out / f"{name}-junit.xml"),
                "--markdown",
                str(out / f"{name}-gate.md"),
            ],
        ),
        (
            "run output",
            [
                "run",
                str(fixture),
                "--systems",
                "lexical,hybrid",
                "--output",
                str(out / f"{name}-run.json"),
            ],
        ),
    ]


GATES = """schema: evalkit.gates/1
relative:
  - id: hybrid-not-below-lexical
    system: hybrid
    reference: lexical
    measure: nDCG(dcg='exp-log2')@10
    max_drop: 0.05
"""


def _gates(workspace: Path) -> Path:
    target = workspace / "gates.yaml"
    target.write_text(GATES, "utf-8")
    return target


def _team_notebook(workspace: Path) -> Path:
    """The default report notebook plus a team's Markdown cell and a pandas table cell."""
    import nbformat

    from evalkit.report import DEFAULT_REPORT_NOTEBOOK

    target = workspace / "team.ipynb"
    if not target.exists():
        nb: Any = nbformat.read(DEFAULT_REPORT_NOTEBOOK, as_version=4)
        nb.cells.append(
            nbformat.v4.new_markdown_cell(
                "## Team notes\n\nThe valves open at dawn and close at dusk; each morning the "
                "operator checks the system and records the parameters of the run."
            )
        )
        nb.cells.append(
            nbformat.v4.new_code_cell(
                "import pandas as pd\npd.DataFrame({'system': ['lexical'], 'note': ['baseline']})"
            )
        )
        nbformat.write(nb, target)
    return target


_CLI = (
    "import sys; from evalkit.cli.entry import console; sys.argv[0] = 'evalkit'; "
    "sys.exit(console())"
)
_IDS_RE = re.compile(r"\b(?:chunk|query|document|system):[^\s,;]+")


def end_to_end(fixture: Path, workspace: Path) -> tuple[int, list[Path]]:
    """Part 1 for one fixture: (findings, files written)."""
    out = workspace / "out"
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for label, argv in _variants(fixture, Path("out"), workspace):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _CLI, *argv],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=False,
        )
        ids = set(_IDS_RE.findall(done.stderr)) if "leak scan matched" in done.stderr else set()
        total += len(ids)
        print(
            f"  {fixture.name}: {label}: exit {done.returncode}, findings {len(ids)}, "
            f"{time.perf_counter() - started:.0f} s"
            + ("" if done.returncode in (0, 1) or ids else f" ({done.stderr.strip()[-200:]})")
        )
    files = sorted(p for p in out.iterdir() if p.name.startswith(fixture.name))
    return total, files


def cross_scan(files: list[Path], private_sources: list[list[str]]) -> int:
    """Part 2: findings of ``files`` (as ``evalkit scan`` reads them) against each batch."""
    from evalkit.report import report_own_text
    from evalkit.safety.privacy import NO_OWN_TEXT, PrivateText, find_leaks

    owns = {}
    for path in files:
        beside = path.with_suffix(".ipynb")
        owns[path] = (
            report_own_text(json.loads(beside.read_text("utf-8")))
            if path.suffix in (".html", ".ipynb") and beside.is_file()
            else NO_OWN_TEXT
        )
    total = 0
    for batch, texts in enumerate(private_sources):
        private = [PrivateText(f"text:{batch}-{i}", t) for i, t in enumerate(texts)]
        for path in files:
            found = find_leaks(path.read_text("utf-8", "replace"), private, own=owns[path])
            if found:
                print(f"  cross-scan batch {batch}: {path.name}: {len(found)} finding(s)")
            total += len(found)
    return total


def _png_with_text(text: str) -> str:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    data = chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    png = (
        b"\x89PNG\r\n\x1a\n"
        + header
        + chunk(b"tEXt", b"Comment\x00" + text.encode("latin-1", "replace"))
        + data
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii") * 1


PLANTINGS = {
    "html text": lambda s: f"<td>{s}</td>",
    "tags between words": lambda s: "<td>" + "</span> <span>".join(s.split(" ")) + "</td>",
    "json escapes": lambda s: json.dumps(s, ensure_ascii=True).replace(" ", "\\u0020"),
    "url escapes": lambda s: "https://x.example/?q=" + urllib.parse.quote(s),
    "png text chunk": lambda s: f'<img src="{_png_with_text(s)}">',
}


def recall(
    files: list[Path], texts: list[str], *, count: int = 50, seed: int = 43
) -> tuple[int, int]:
    """Part 3: (caught, planted): ``count`` copies per file and encoding."""
    from evalkit.safety.privacy import PrivateText, find_leaks

    rng = random.Random(seed)
    chosen = rng.sample([t for t in texts if len(t) >= 40], min(count, len(texts)))
    caught = planted = 0
    for path in files:
        original = path.read_text("utf-8", "replace")
        for kind, plant in PLANTINGS.items():
            for number, text in enumerate(chosen):
                start = rng.randrange(0, len(text) - 31)
                copy = text[start : start + 31]
                private = [PrivateText(f"chunk:p{number}", text)]
                middle = len(original) // 2
                planted += 1
                artifact = original[:middle] + plant(copy) + original[middle:]
                if path.suffix in (".json", ".ipynb"):
                    artifact = original + "\n" + plant(copy)
                if find_leaks(artifact, private) == [f"chunk:p{number}"]:
                    caught += 1
                else:
                    print(f"  recall: missed a copy in {path.name} as {kind}")
    return caught, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=600)
    parser.add_argument("--fixture", type=Path, action="append", default=[])
    parser.add_argument("--doc-texts", type=int, default=64, help="MB of /usr/share/doc")
    parser.add_argument("--recall-texts", type=int, default=50, help="copies per encoding")
    parser.add_argument("--skip-reports", action="store_true", help="part 2-3 on existing files")
    args = parser.parse_args()
    args.workspace.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    paragraphs = docstring_paragraphs()
    chosen = set(random.Random(0).sample(range(len(paragraphs)), args.documents))
    inside = [p for i, p in enumerate(paragraphs) if i in chosen]
    outside = [p for i, p in enumerate(paragraphs) if i not in chosen]
    prose = write_prose_fixture(args.workspace / "stdlib-prose", inside)
    print(
        f"A: {len(paragraphs)} docstring paragraphs "
        f"({sum(map(len, paragraphs)) / 1e6:.1f} MB); fixture of {len(inside)}"
    )
    fixtures = [prose, *[f.resolve() for f in args.fixture]]
    findings, files = 0, []
    for fixture in fixtures:
        if args.skip_reports:
            files += sorted(p for p in (args.workspace / "out").glob(f"{fixture.name}-*"))
            continue
        found, written = end_to_end(fixture, args.workspace)
        findings += found
        files += written
    print(f"part 1: {findings} finding(s) in {len(fixtures)} fixture(s), {len(files)} files")
    batches: list[list[str]] = [outside]
    size = sum(map(len, outside))
    current: list[str] = []
    current_size = 0
    for text in doc_texts(args.doc_texts):
        current.append(text)
        size += len(text)
        current_size += len(text)
        if current_size > 8 << 20:
            batches.append(current)
            current, current_size = [], 0
    if current:
        batches.append(current)
    print(
        f"part 2: {len(batches)} batches, {size / 1e6:.1f} MB of private text "
        "(A outside the fixture, B)"
    )
    cross = cross_scan(files, batches)
    print(f"part 2: {cross} finding(s)")
    kinds = {f.suffix: f for f in reversed(files)}  # one file of each kind
    caught, planted = recall(sorted(kinds.values()), paragraphs, count=args.recall_texts)
    print(f"part 3: recall {caught}/{planted}")
    print(f"total false findings: {findings + cross}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
