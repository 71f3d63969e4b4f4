"""Shared parts of the malformed-input corpus (``tests/test_malformed.py``) and the fuzz targets
(``tests/test_fuzz_*.py``): mutations of a valid input file, running the real command line on
it, and the assertions every bad input shares.

``make test`` runs a fixed, small slice of examples (``SLICE``; the suite's hypothesis profile
is derandomized); ``make fuzz`` (``HYPOTHESIS_PROFILE=fuzz``) runs the fuzz profile's larger
count on new random examples.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings, strategies as st

from evalkit.cli import main

#: Text that must never appear in any output: it is only ever file content (prose, a comment
#: or a description); the spaces keep it from ever becoming an ID.
SENTINEL = "zebra quartz sentinel"

_FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
#: The settings of every fuzz target: the profile's example count under ``make fuzz``, a few
#: fixed examples in ``make test``.
FUZZ = settings(
    max_examples=settings.default.max_examples if _FUZZING else 12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Characters and fragments that break parsers: control and line-break characters (C0, C1,
# NEL, LINE SEPARATOR, BOM), quotes and brackets, YAML anchors/aliases/tags, comments, numbers
# out of any range, NaN, and multi-byte text.
PIECES = [
    "\x00", "\x1b", "\x7f", "\x85", "\x9b", "\r", "\r\n", "\t", "\n", " ", "\ufeff", "\u2028",
    '"', "'", "[", "]", "{", "}", ",", ":", ": ", "- ", "? ", "|", ">", "&a ", "*a", "!!str ",
    "!!python/object:os.system ", "%YAML 1.1\n", "---\n", "...\n", "#", "# c\n", "null", "~",
    "99999999999999999999999", "-9223372036854775809", "1e999", "nan", "-0", "0x1F", "1_0",
    "é", "渡轮", "\U0001f600", "[" * 80, "{" * 80, "9" * 5000,
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> bytes:
    """``seed`` after 1-4 random edits (insert, delete, replace, duplicate a line, truncate,
    or an undecodable byte); UTF-8 bytes."""
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "line", "truncate", "byte"]))
        at = draw(st.integers(0, len(text)))
        piece = draw(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)))
        if op == "insert":
            text = text[:at] + piece + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif op == "replace":
            text = text[:at] + piece + text[at + len(piece) :]
        elif op == "line":
            lines = text.splitlines(keepends=True) or [""]
            index = draw(st.integers(0, len(lines) - 1))
            lines.insert(index, lines[index])
            text = "".join(lines)
        elif op == "truncate":
            text = text[:at]
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
    return data


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``root`` (symlinks not followed): relative path -> (mode, size+mtime)."""
    entries: dict[str, tuple[int, int]] = {}
    for directory, names, files in os.walk(root):
        for name in names + files:
            path = Path(directory) / name
            info = path.lstat()
            entries[str(path.relative_to(root))] = (info.st_mode, info.st_size + info.st_mtime_ns)
    return entries


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and the combined stdout + stderr of ``evalkit argv`` (in this process: any
    exception other than a handled evalkit error fails the test with its traceback)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as error:  # argparse's usage errors
        code = int(error.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def check_failure(code: int, output: str, *, names: list[str], never: list[str]) -> None:
    """A failed command: exit 1 or 2, one paragraph naming one of ``names``, no traceback,
    none of ``never`` (file content) echoed."""
    assert code in (1, 2), output
    assert "Traceback" not in output
    assert output.strip(), "a bad input must produce a message"
    assert "\n\n" not in output.strip(), f"more than one paragraph:\n{output}"
    assert any(name in output for name in names), f"no file named in:\n{output}"
    for text in never:
        assert text not in output, f"echoed input text {text!r}"
