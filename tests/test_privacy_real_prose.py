"""A redacted report on real prose nobody here wrote (a fixture of standard-library docstring
paragraphs, built at test time) is written and scans clean; each kind of leak planted into it
is caught, in every encoding (issue 43's Must show)."""

from __future__ import annotations

import base64
import json
import struct
import urllib.parse
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from conftest import load_benchmark

from evalkit.fixtures import load_fixture
from evalkit.report import report_own_text
from evalkit.safety.privacy import PrivateText, find_leaks, private_texts

CHINESE = "渡轮每天早上六点四十分从北码头出发然后每九十分钟一班"


@pytest.fixture(scope="module")
def prose_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """(workspace holding ``prose`` and ``reports/prose.html|.ipynb``, the paragraphs)."""
    bench = load_benchmark("bench_false_findings.py")
    root = tmp_path_factory.mktemp("prose")
    paragraphs = bench.docstring_paragraphs(120, seed=43)
    bench.write_prose_fixture(root / "prose", paragraphs)
    argv = ["report", "prose", "--output", "reports/prose.html", "-p", "systems", "lexical"]
    code, out, err = run_cli([*argv, "-p", "n_resamples", "200"], root)
    assert code == 0, out + err
    return root, paragraphs


def test_the_report_on_real_prose_is_written_and_scans_clean(
    prose_report: tuple[Path, list[str]],
) -> None:
    root, _ = prose_report
    code, out, err = run_cli(["scan", "prose", "reports/prose.html", "reports/prose.ipynb"], root)
    assert code == 0, out + err
    assert out.count("clean:") == 2


def _png(text: str) -> str:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    png += chunk(b"tEXt", b"Comment\x00" + text.encode("latin-1", "replace"))
    png += chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


PLANTINGS: dict[str, Callable[[str], str]] = {
    "HTML text": lambda s: f"<td>{s}</td>",
    "tags between words": lambda s: (
        "<td><span>" + "</span> <span>".join(s.split()) + "</span></td>"
    ),
    "HTML entities": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "JSON escapes": lambda s: json.dumps(s).replace(" ", "\\u0020"),
    "URL escapes": lambda s: "<a>?q=" + urllib.parse.quote_plus(s) + "</a>",
    "base64 PNG text": _png,
    "file-name separators": lambda s: "run:" + "-".join(s.split()) + ".trec",
}


def _kinds_of_leak(paragraphs: list[str]) -> list[tuple[str, list[PrivateText], str, str]]:
    """(kind, private texts, object ID, copied text) for each kind of leak."""
    paragraph = next(p for p in paragraphs[60:] if len(p) >= 120)
    mixed = f"{paragraph[:60]} {CHINESE} {paragraph[60:120]}"
    return [
        (
            "31 Latin characters",
            [PrivateText("chunk:c60", paragraph)],
            "chunk:c60",
            paragraph[40:71],
        ),
        ("11 Chinese characters", [PrivateText("chunk:zh", CHINESE)], "chunk:zh", CHINESE[3:14]),
        ("Chinese inside English", [PrivateText("chunk:mix", mixed)], "chunk:mix", CHINESE[5:16]),
        (
            "a whole private value",
            [PrivateText("system:svc", "bge-m3-prod-eu")],
            "system:svc",
            "bge-m3-prod-eu",
        ),
    ]


def _planted_notebook(notebook: dict[str, Any], html: str) -> str:
    planted = json.loads(json.dumps(notebook))
    cell = next(c for c in planted["cells"] if c["cell_type"] == "code" and c["outputs"])
    cell["outputs"].append(
        {"output_type": "display_data", "metadata": {}, "data": {"text/html": html}}
    )
    return json.dumps(planted, indent=1)


def test_each_kind_of_leak_planted_into_the_report_is_caught(
    prose_report: tuple[Path, list[str]],
) -> None:
    root, paragraphs = prose_report
    html = (root / "reports/prose.html").read_text("utf-8")
    notebook = json.loads((root / "reports/prose.ipynb").read_text("utf-8"))
    own = report_own_text(notebook)
    fixture_private = private_texts(load_fixture(root / "prose"))
    middle = html.index("</body>")
    for kind, private, object_id, copied in _kinds_of_leak(paragraphs):
        for encoding, plant in PLANTINGS.items():
            if encoding == "base64 PNG text" and not copied.isascii():
                continue  # a PNG tEXt chunk is Latin-1
            planted_html = html[:middle] + plant(copied) + html[middle:]
            for name, artifact in (
                ("HTML", planted_html),
                ("notebook", _planted_notebook(notebook, plant(copied))),
            ):
                found = find_leaks(artifact, [*fixture_private, *private], own=own)
                assert object_id in found, (kind, encoding, name)
