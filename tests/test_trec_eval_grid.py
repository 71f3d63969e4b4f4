"""A grid of trec_eval command lines, byte for byte (stdout and exit code) against the binaries.

Every line of :data:`OPTIONS` runs on every data set of :func:`_data_sets` (trec_eval's own
``test/`` files and generated nasty ones), in evalkit's process (``main``) and as the 10.0
binary built from its source (``trec_eval10_rbp_fixed``: the release with only ``m_rbp.c``'s two
unset variables set to 0, so that ``rbp`` after other measures prints a value, not the stack).
A smaller grid runs ``--trec-version 9`` against 9.0.8 built from its source. Each test is one
loop over its lines, collecting every difference, so a failure names all the lines at once.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from nasty_runs import nasty_for_trec_eval
from trec_eval_oracle import TEST_DIR, TrecEval10

from evalkit.cli import main
from evalkit.formats import write_qrels, write_run

#: option lines (the two files follow each)
OPTIONS: list[list[str]] = [
    [],
    ["-q"],
    ["-c"],
    ["-q", "-c"],
    ["-q", "-n"],
    ["-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-c", "-l2", "-m", "all_trec"],
    ["-q", "-c", "-J", "-m", "all_trec"],
    ["-q", "-c", "-m", "set"],
    ["-q", "-M", "0", "-m", "official"],
    ["-c", "-M", "x", "-m", "11pt_avg", "-m", "iprec_at_recall"],
    ["-q", "-M", "0", "-m", "iprec_at_recall.0,.1,.5"],
    ["-q", "-M", "3", "-m", "all_trec"],
    ["-q", "-l0", "-m", "Rndcg", "-m", "ndcg"],
    ["-q", "-c", "-l0", "-m", "Rndcg"],
    ["-l", "x", "-m", "num_rel", "-m", "map"],
    ["-l", "2x", "-q", "-m", "P.5,10"],
    ["-q", "-m", "relstring.10", "-M", "5"],
    ["-c", "-N", "100", "-m", "utility.1,-1,0,1"],
    ["-q", "-m", "ndcg.1=3,2=9", "-m", "ndcg_rel"],
    ["-q", "-m", "bpref", "-m", "infAP", "-m", "gm_map", "-m", "gm_bpref"],
    ["-q", "-c", "-m", "yaap", "-m", "unj.3", "-m", "rbp.p=0.9"],
    ["-m", "recall.5,1000", "-m", "Rprec_mult.0.5,2", "-m", "set_F.0.5"],
    ["-c", "-J", "-M", "10"],
    ["-q", "-m", "success.1,5", "-m", "recip_rank"],
    ["--level_for_rel=2", "-m", "map", "--measure", "P.5"],
    ["-mP.5", "-mndcg_cut.5,10", "-q"],
    ["-m", "P.0"],  # an improper cutoff: trec_eval cannot initialize it, exit 2
    ["-m", "no_such_measure"],  # exit 1
    ["-x"],  # an illegal option: usage, exit 1
    ["--", "-q"],  # three operands after "--": usage, exit 1
]

#: --trec-version 9 against 9.0.8 (whose measures are a subset of 10.0's)
OPTIONS_9: list[list[str]] = [
    [],
    ["-q"],
    ["-c"],
    ["-q", "-c", "-m", "all_trec"],
    ["-c", "-m", "set"],
    ["-q", "-c", "-m", "utility.1,-1,0,0"],
    ["-q", "-M", "0", "-m", "11pt_avg"],
    ["-q", "-m", "P.5,10", "-m", "map", "-l2"],
    ["-c", "-l2", "-m", "all_trec"],  # num_rel's all line counts every grade > 0
    ["-q", "-c", "-J", "-m", "all_trec"],  # a query the run lacks adds 0, not -nan
    ["-m", "rbp"],  # a 10.0 measure: illegal in 9.0.8, exit 1
]


def _nasty_files(folder: Path, seed: int) -> tuple[Path, Path]:
    qrels, run = nasty_for_trec_eval(seed, n_queries=40)
    # a query whose judged documents all have grade 0 (Rndcg's 0 / 0 under -l0)
    first = qrels["query_id"] == qrels["query_id"].iloc[0]
    qrels.loc[first, "relevance"] = 0
    write_qrels(qrels, folder / f"qrels{seed}")
    write_run(run, folder / f"run{seed}", run_id=f"nasty{seed}")
    return folder / f"qrels{seed}", folder / f"run{seed}"


def _data_sets(folder: Path, *, complete_runs_only: bool = False) -> list[tuple[Path, Path]]:
    """``(qrels, run)`` pairs: trec_eval's test files, then generated nasty runs (with qrels
    queries the run lacks, unless ``complete_runs_only``)."""
    if not (TEST_DIR / "qrels.test").is_file():
        pytest.skip(f"trec_eval's test files not found at {TEST_DIR}")
    pairs = [
        (TEST_DIR / "qrels.test", TEST_DIR / "results.test"),
        (TEST_DIR / "qrels.test", TEST_DIR / "results.trunc"),
        (TEST_DIR / "qrels.rel_level", TEST_DIR / "results.test"),
        (TEST_DIR / "qrels-302.test", TEST_DIR / "results-302.test"),
    ]
    if not complete_runs_only:
        pairs += [_nasty_files(folder, seed) for seed in (1, 2, 3)]
    return pairs


def _differences(
    binary: TrecEval10,
    lines: list[list[str]],
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
) -> list[str]:
    differ = []
    for args in lines:
        code = main(["trec-eval", *extra, *args])
        out = capsys.readouterr().out
        expected = binary.run(args)
        if (code, out) != (expected.returncode, expected.stdout):
            differ.append(f"{' '.join(args)}: exit {code} vs {expected.returncode}")
    return differ


def test_the_grid_is_byte_identical_to_trec_eval_10(
    trec_eval10_rbp_fixed: TrecEval10, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [[*o, str(q), str(r)] for q, r in _data_sets(tmp_path) for o in OPTIONS]
    assert len(lines) >= 200
    assert _differences(trec_eval10_rbp_fixed, lines, capsys, []) == []


def test_the_version_9_grid_is_byte_identical_to_trec_eval_9(
    trec_eval9: TrecEval10, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = _data_sets(tmp_path)
    lines = [[*o, str(q), str(r)] for q, r in pairs for o in OPTIONS_9]
    assert _differences(trec_eval9, lines, capsys, ["--trec-version", "9"]) == []


@pytest.mark.parametrize("measure", ["yaap", "utility", "all_trec", "set"])
def test_version_9_with_c_scores_yaap_and_utility_without_a_crash(
    measure: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 9.0.8 mode set the values of queries the run lacks in a read-only array (issue 48)
    qrels, run = _nasty_files(tmp_path, 1)
    code = main(
        ["trec-eval", "--trec-version", "9", "-c", "-q", "-m", measure, str(qrels), str(run)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("\tall\t") >= 1


def test_a_run_on_stdin_is_read_as_trec_eval_reads_it(
    trec_eval10_plain: TrecEval10,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = TEST_DIR / "qrels.test", TEST_DIR / "results.test"
    if not qrels.is_file():
        pytest.skip(f"trec_eval's test files not found at {TEST_DIR}")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(run.read_bytes())))
    code = main(["trec-eval", "-q", str(qrels), "-"])
    expected = trec_eval10_plain.run(["-q", str(qrels), str(run)])
    assert (code, capsys.readouterr().out) == (expected.returncode, expected.stdout)
