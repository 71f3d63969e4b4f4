"""``evalkit scan FIXTURE FILE...``: the leak scan on any file; IDs only; exit 0, 1 or 2."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from cli_runner import run_cli


def test_scan_reports_ids_only_and_exits_1_on_fixture_text(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    # a CI log quoting a chunk (escaped, as a Python repr would) and a clean one
    (root / "ci.log").write_text(
        "step 3: 'The ferry leaves at 06:40 and then every\\nninety minutes.'\n", "utf-8"
    )
    (root / "clean.md").write_text("R@10 0.389; the ferry is late\n", "utf-8")
    code, out, err = run_cli(["scan", "tiny", "ci.log", "clean.md"], root)
    assert code == 1, err
    # the chunk, and the query whose answer span ("every ninety minutes") it holds
    assert "fixture text found: ci.log: 2 object(s): chunk:c-en-1, query:q-en-1" in out
    assert "clean: clean.md" in out
    assert "ninety" not in out + err


def test_scan_of_clean_files_exits_0(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    (root / "notes.txt").write_text("the ferry is late; every measure compared\n", "utf-8")
    (root / "binary.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    code, out, _ = run_cli(["scan", "tiny", "notes.txt", "binary.bin"], root)
    assert code == 0
    assert out.count("clean:") == 2


def test_a_page_alone_is_scanned_with_evalkit_s_notebook_named_not_its_path(
    tiny_dir: Path,
) -> None:
    import evalkit

    root = tiny_dir.parent
    (root / "page.html").write_text("<html><body><p>R@10 0.389</p></body></html>", "utf-8")
    code, out, _ = run_cli(["scan", "tiny", "page.html"], root)
    assert code == 0
    assert "clean: page.html (cells of evalkit's report notebook are own text)" in out
    assert str(Path(evalkit.__file__).parent) not in out  # the installed path shows the home


def test_scan_refuses_a_missing_file_or_fixture(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    code, _, err = run_cli(["scan", "tiny", "missing.txt"], root)
    assert code == 2
    assert "file to scan 'missing.txt' does not exist" in err
    (root / "a.txt").write_text("x", "utf-8")
    code, _, err = run_cli(["scan", "no-such-fixture", "a.txt"], root)
    assert code == 2


_PEAK_CHILD = """
import resource, sys
from evalkit.cli import main
code = main(["scan", *sys.argv[1:]])
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux
"""


def _scan_peak(root: Path, fixture: str, path: str) -> tuple[int, int]:
    """``evalkit scan fixture path`` in a child process: (exit code, peak RSS in bytes)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _PEAK_CHILD, fixture, path],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    code, peak = done.stdout.split("\n")[-2].split()
    return int(code), int(peak) * 1024


@pytest.mark.slow  # about 20 s of scanning in a child process
def test_scan_memory_is_bounded_whatever_the_file_size(tiny_dir: Path) -> None:
    # a 16 MB log with one copied chunk near its end: the scan's peak over a 1 KB file's stays
    # far below the file's size (reading it whole cost about 17 times its size)
    root = tiny_dir.parent
    line = "step 42 of the nightly job finished; 1,024 rows checked, nothing to report\n"
    big = root / "big.log"
    with big.open("w", encoding="utf-8") as handle:
        for _ in range(16_000_000 // len(line)):
            handle.write(line)
        handle.write("copied: The ferry leaves at 06:40 and then every ninety minutes.\n")
        handle.write(line * 100)
    (root / "small.log").write_text(line * 10, "utf-8")
    code, peak = _scan_peak(root, "tiny", "big.log")
    assert code == 1
    code, baseline = _scan_peak(root, "tiny", "small.log")
    assert code == 0
    assert peak - baseline < big.stat().st_size // 4


def test_a_streamed_scan_finds_copies_across_every_block_boundary(tiny_dir: Path) -> None:
    from evalkit.fixtures import load_fixture
    from evalkit.safety.privacy import find_leaks_in_stream, private_texts

    private = private_texts(load_fixture(tiny_dir))
    copy = "The ferry leaves at 06:40 and then every ninety minutes."
    block = 4096
    for offset in range(block - len(copy) - 2, block + 2, 7):  # the copy straddles the cut
        for padding, form in ((" " * 3000, copy), ("", copy.replace(" ", "&#32;"))):
            text = ("x" * (offset - 1)) + "\n" + padding + form + "\n" + "y" * 9000
            found = find_leaks_in_stream(
                io.BytesIO(text.encode()), private, whole_chars=0, block_chars=block
            )
            assert "chunk:c-en-1" in found, (offset, len(padding))
