"""``evalkit trec-eval`` as a drop-in for trec_eval 10.0: the same arguments and files give the
same bytes on stdout and the same exit code as the 10.0 binary built from its source
(``trec_eval_oracle``; every expected output here comes from that binary).

The data are generated nasty runs (``nasty_runs.nasty``: tied scores, queries of 1 to 60 rows,
run-only queries, qrels queries the run lacks, negative grades) made nastier: grades up to 12
(relstring's ``>``), grade -2, scores moved by 1e-12 and 3e-9 (ties that only float64 breaks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from nasty_runs import nasty, nasty_for_trec_eval
from trec_eval_oracle import TrecEval10

from evalkit.cli import main
from evalkit.errors import MeasureError
from evalkit.formats import read_qrels, read_run, write_qrels, write_run
from evalkit.measures.aliases import TREC_ALIASES, canonical_measure
from evalkit.measures.names import trec_name


def _files(folder: Path, seed: int) -> tuple[str, str]:
    qrels, run = nasty_for_trec_eval(seed, n_queries=60)
    write_qrels(qrels, folder / "qrels")
    write_run(run, folder / "run", run_id=f"nasty{seed}")
    return str(folder / "qrels"), str(folder / "run")


def _ours(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["trec-eval", *args])
    return code, capsys.readouterr().out


ALL_TREC = [
    ["-q", "-c", "-m", "all_trec"],
    ["-c", "-m", "all_trec"],
    ["-q", "-c", "-J", "-M", "50", "-m", "all_trec"],
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("options", ALL_TREC, ids=" ".join)
def test_all_trec_is_byte_identical_to_trec_eval_10(
    seed: int,
    options: list[str],
    *,
    trec_eval10_rbp_fixed: TrecEval10,
    trec_eval10_plain: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = _files(tmp_path, seed)
    code, out = _ours([*options, qrels, run], capsys)
    fixed = trec_eval10_rbp_fixed.run([*options, qrels, run])
    assert (code, out) == (fixed.returncode, fixed.stdout)
    # the release itself: every line but rbp's (it reads two variables it never set)
    plain = trec_eval10_plain.run([*options, qrels, run])
    assert plain.returncode == 0
    released = [line for line in plain.stdout.splitlines() if not line.startswith("rbp ")]
    assert [line for line in out.splitlines() if not line.startswith("rbp ")] == released


def test_rbp_after_other_measures_is_the_fixed_programs(
    trec_eval10_rbp_fixed: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # rbp after map, P and ndcg_cut: m_rbp.c's min/max start with what those left on the stack
    qrels, run = _files(tmp_path, 3)
    options = ["-q", "-c", "-m", "map", "-m", "P.5", "-m", "ndcg_cut.10", "-m", "rbp"]
    _, out = _ours([*options, qrels, run], capsys)
    fixed = trec_eval10_rbp_fixed.run([*options, qrels, run]).stdout
    rbp = [line for line in fixed.splitlines() if line.startswith("rbp ")]
    assert len(rbp) > 40  # every query and all
    assert [line for line in out.splitlines() if line.startswith("rbp ")] == rbp


@pytest.mark.parametrize(
    "options",
    [
        [],  # trec_eval's official set without -m
        ["-q", "-m", "set", "-m", "relstring.5"],
        ["-q", "-mP.5,10", "-m", "map", "-l2", "-mndcg_cut.10"],
        ["--level_for_rel=2", "-q", "-m", "recall.20,5", "--measure", "bpref"],
        ["-q", "-c", "-n", "-mrelstring.5", "-m", "utility.1,-2,3,0", "-N", "1000"],
        ["-q", "-c", "-m", "set_F.0.5", "-m", "rbp_resid.p=0.8", "-m", "unj.3"],
    ],
    ids=" ".join,
)
def test_other_command_lines_are_byte_identical(
    options: list[str],
    trec_eval10_plain: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = _files(tmp_path, 4)
    # the options after the files too, as trec_eval's getopt_long permutes them
    code, out = _ours([qrels, *options[:1], run, *options[1:]], capsys)
    expected = trec_eval10_plain.run([*options, qrels, run])
    assert (code, out) == (expected.returncode, expected.stdout)


def test_a_qrels_query_missing_from_the_run_stops_10_without_c(
    trec_eval10_plain: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = _files(tmp_path, 1)
    expected = trec_eval10_plain.run(["-q", "-m", "map", qrels, run])
    assert expected.returncode == 4  # nasty() leaves every 7th query out of the run
    code = main(["trec-eval", "-q", "-m", "map", qrels, run])
    captured = capsys.readouterr()
    assert (code, captured.out) == (4, expected.stdout)  # the queries before it printed
    assert "pass -c" in captured.err


def test_version_9_without_c_averages_over_the_queries_of_both_files(
    trec_eval10_plain: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 9.0.8 skips a qrels query the run lacks: the same as 10.0 on the qrels of the queries in
    # both files, for scores that float32 and float64 order alike (nasty()'s own: 0.5 ... 7.25)
    qrels_path, _ = _files(tmp_path, 1)
    write_run(nasty(1, n_queries=60)[1].drop(columns=["rank"]), tmp_path / "plain")
    run_path = str(tmp_path / "plain")
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    both = qrels[qrels["query_id"].isin(set(run["query_id"]))]
    write_qrels(both, tmp_path / "both")
    options = ["-m", "map", "-m", "num_rel", "-m", "num_q", "-m", "P.10"]
    expected = trec_eval10_plain.run([*options, str(tmp_path / "both"), run_path])
    assert expected.returncode == 0
    code, out = _ours(["--trec-version", "9", *options, qrels_path, run_path], capsys)
    assert code == 0
    assert out == expected.stdout


def test_illegal_and_improper_measures_exit_as_trec_eval(
    trec_eval10_plain: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels, run = _files(tmp_path, 1)
    for options in (["-m", "mapp"], ["-m", "P."], ["-m", "P.5,5"], ["-m", "P.0"], ["-x"]):
        expected = trec_eval10_plain.run(["-c", *options, qrels, run])
        code, out = _ours(["-c", *options, qrels, run], capsys)
        assert (code, out) == (expected.returncode, expected.stdout), options
    main(["trec-eval", "-m", "mapp", qrels, run])
    assert "Did you mean 'map'?" in capsys.readouterr().err


# --- the alias table ---------------------------------------------------------------------------

# trec_eval 10.0's names (measures.c, its -h text) and ir_measures' names for the same measure
GOLDEN = {
    "map": "AP",
    "ndcg_cut.10": "nDCG@10",
    "ndcg_cut_10": "nDCG@10",
    "P.10": "P@10",
    "P_10": "P@10",
    "recip_rank": "RR",
    "recall.100": "R@100",
    "bpref": "Bpref",
    "map_cut.5": "AP@5",
    "iprec_at_recall_0.10": "IPrec@0.1",
    "success.1": "Success@1",
    "set_recall": "SetR",
    "nDCG@10": "nDCG@10",
    "R(rel=2)@100": "R(rel=2)@100",
}


@pytest.mark.parametrize(("name", "canonical"), GOLDEN.items())
def test_canonical_measure_reads_both_spellings(name: str, canonical: str) -> None:
    assert canonical_measure(name) == canonical


def test_every_alias_is_the_measure_trec_name_prints() -> None:
    # names.trec_name (written separately, for --trec-names) maps each alias back
    for root, alias in TREC_ALIASES.items():
        cut = (
            {"IPrec@": "0.5", "Rprec_mult@": "0.5"}.get(alias, "10") if alias.endswith("@") else ""
        )
        printed = trec_name(canonical_measure(alias + cut))
        assert printed in (root, f"{root}_{cut}", f"{root}_0.50"), (root, printed)


def test_unknown_names_suggest_either_kind() -> None:
    with pytest.raises(MeasureError, match="Did you mean 'recip_rank'"):
        canonical_measure("recip_rnk")
    with pytest.raises(MeasureError, match="Did you mean 'nDCG'"):
        canonical_measure("nDGC")
    with pytest.raises(MeasureError, match="takes one cutoff"):
        canonical_measure("P")
