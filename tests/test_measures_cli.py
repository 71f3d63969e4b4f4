"""`evalkit trec-eval` reproduces trec_eval's printed values on trec_eval's own test pair."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracles import trec_eval_measures
from trec_eval_oracle import measure_arguments, read_trec_eval_output

from evalkit.cli import main
from evalkit.measures import trec_name

DATA = Path(__file__).parent / "data" / "trec_eval"
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
MEASURES = [
    *trec_eval_measures(CUTOFFS, families=["P", "R", "AP", "nDCG"]),
    *(f"Success@{k}" for k in (1, 5, 10)),
]


def test_trec_eval_command_reproduces_trec_eval_per_query_and_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["trec-eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "-q", "--trec-names"]
    assert main([*argv, *measure_arguments(MEASURES)]) == 0
    printed = read_trec_eval_output(capsys.readouterr().out)
    # trec_eval 10.0 (= 9.0.8 for these measures): tests/data/trec_eval/out.test.aq
    expected = read_trec_eval_output((DATA / "out.test.aq").read_text())
    names = {trec_name(m) for m in MEASURES}
    wanted = {key: value for key, value in expected.items() if key[0] in names}
    assert len(wanted) == len(MEASURES) * 4  # 3 queries + all
    assert {key: printed[key] for key in wanted} == wanted
    assert set(printed) == set(wanted)


def test_default_names_and_all_only(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "trec-eval",
        str(DATA / "qrels.test"),
        str(DATA / "results.test"),
        "-m",
        "AP",
        "-m",
        "P@10",
    ]
    assert main(argv) == 0
    # trec_eval 10.0 default output, tests/data/trec_eval/out.test: map 0.1785, P_10 0.3000
    # (names padded to 22 characters, as trec_eval pads its own)
    assert capsys.readouterr().out.splitlines() == [
        f"{'AP':<22}\tall\t0.1785",
        f"{'P@10':<22}\tall\t0.3000",
    ]


def test_bad_file_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.txt"
    run.write_text("301 Q0 doc1 1 1.5 r\n301 Q0 doc2 2 secret-token r\n")
    assert main(["trec-eval", str(DATA / "qrels.test"), str(run), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert f"{run}:2: field score must be a number" in err
    assert "secret-token" not in err


def test_unknown_measure_suggests_a_close_name(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["trec-eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "-m", "nDGC@10"]
    assert main(argv) == 1  # trec_eval's exit code for an illegal measure
    assert "Did you mean 'nDCG'?" in capsys.readouterr().err


def test_duplicates_in_a_run_are_an_error_or_kept_first_by_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n", encoding="utf-8")
    # 'a' twice: ranked first (score 3) and second (score 2); b last
    (tmp_path / "run").write_text("q1 Q0 a 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 b 3 1 t\n", "utf-8")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert main(["trec-eval", *files, "-m", "P@2"]) == 2
    assert "pass --duplicates keep-first" in capsys.readouterr().err
    assert main(["trec-eval", *files, "-m", "P@2", "--duplicates", "keep-first"]) == 0
    # kept first: the ranking is a, b; P@2 = 1/2 (by hand)
    assert capsys.readouterr().out.split() == ["P@2", "all", "0.5000"]


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["-h"],
        ["--version"],
        ["--", "-q", "a", "b"],
        ["a", "b", "--"],
        ["-", "-"],
        [""],
        ["@file"],
        ["--trec-version=9", "-c", "-l2", "a", "b"],
        ["trec-eval", "-v"],
    ],
)
def test_main_hands_trec_eval_every_word_its_parser_would(words: list[str]) -> None:
    """``main`` runs ``trec-eval`` without building its argparse parser (start-up): the words
    after ``trec-eval`` are exactly what that parser would hand getopt."""
    from evalkit.cli import build_parser

    parser, _ = build_parser("trec-eval")
    assert parser.parse_args(["trec-eval", *words]).argv == words
