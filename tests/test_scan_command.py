"""``evalkit scan FIXTURE FILE...``: the leak scan on any file; IDs only; exit 0, 1 or 2."""

from __future__ import annotations

from pathlib import Path

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


def test_scan_refuses_a_missing_file_or_fixture(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    code, _, err = run_cli(["scan", "tiny", "missing.txt"], root)
    assert code == 2
    assert "file to scan 'missing.txt' does not exist" in err
    (root / "a.txt").write_text("x", "utf-8")
    code, _, err = run_cli(["scan", "no-such-fixture", "a.txt"], root)
    assert code == 2
