"""trec_eval 10.0's own expected files, reproduced byte for byte by ``evalkit trec-eval``.

Each ``test/out.test*`` file of the trec_eval 10.0 source (NIST) is the output of a command in
its Makefile's ``quicktest`` target. ``evalkit trec-eval`` with the same arguments must print
the same bytes. The files are read from the source folder (skipped without it); nothing here is
computed by evalkit. The inputs include ``results.trunc``, whose lines carry extra trailing
fields, mixed tabs and spaces, and which lacks query 302 (the ``-c`` files count it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from trec_eval_oracle import HOW_TO_ENABLE, TEST_DIR

from evalkit.cli import main
from evalkit.formats import read_run


def _quicktest() -> list[tuple[list[str], str]]:
    """``(trec_eval's arguments, expected file)`` of each line of the Makefile's ``quicktest``
    target (``./trec_eval ARGS | diff - test/OUT``); the preference (``-R prefs``,
    ``-R qrels_prefs``), judgment-group (``-R qrels_jg``) and Z-score (``-Z``) lines are left
    out: evalkit does not read those formats."""
    makefile = TEST_DIR.parent / "Makefile"
    if not makefile.is_file():
        pytest.skip(f"trec_eval 10.0 source not found at {TEST_DIR.parent}; {HOW_TO_ENABLE}")
    text = makefile.read_text()
    target = text.split("\nquicktest:", 1)[1].split("\n\n", 1)[0]
    cases = []
    for line in target.splitlines():
        match = re.match(r"\s*\./trec_eval (.*) \| diff - (test/\S+)\s*$", line)
        if match is None:
            continue
        args = match[1].split()
        if "-R" in args or "-Z" in args:
            continue
        cases.append((args, match[2]))
    return cases


def test_quicktest_lines_are_byte_identical(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval 10.0's own expected outputs (NIST, test/out.*), compared byte for byte
    cases = _quicktest()
    assert len(cases) == 9  # out.test twice, out.comment.test, .a .aq .aqc .aqcM .aql, params
    monkeypatch.chdir(TEST_DIR.parent)  # the command lines name test/...
    for args, expected in cases:
        missing = [a for a in args if a.startswith("test/") and not Path(a).is_file()]
        if missing:  # the shared copy may lack the large comment files (README of oracles/)
            continue
        code = main(["trec-eval", *args])
        out = capsys.readouterr().out
        assert code == 0, args
        assert out.encode() == (TEST_DIR.parent / expected).read_bytes(), args


def test_results_trunc_reads_as_trec_eval_reads_it() -> None:
    # results.trunc: 584 lines, tab-separated with leading spaces before the score, some with
    # extra words after the run ID (ignored by trec_eval's get_trec_results.c)
    path = TEST_DIR / "results.trunc"
    if not path.is_file():
        pytest.skip(f"trec_eval 10.0 test files not found at {TEST_DIR}; {HOW_TO_ENABLE}")
    run = read_run(path, rank=False)
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    assert len(run) == len(lines) == 584
    assert run["query_id"].tolist() == [parts[0] for parts in lines]
    assert run["doc_id"].tolist() == [parts[2] for parts in lines]
    assert run["score"].tolist() == [float(parts[4]) for parts in lines]


def test_run_lines_with_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("q Q0 d1 1 2.5 sys more junk\nq\tQ0\td2\t2\t  1.5\tsys\n")
    run = read_run(path)
    assert run[["query_id", "doc_id", "rank", "score"]].values.tolist() == [
        ["q", "d1", 1, 2.5],
        ["q", "d2", 2, 1.5],
    ]
