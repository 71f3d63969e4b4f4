"""The first hour on the README's own-data example: measures by either name on every command,
importers that refuse a column the file lacks, trec_eval's names in ``evalkit trec-eval``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.errors import MeasureError
from evalkit.measures.aliases import measure_list
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "own-data"
TREC_EVAL = REPO.parent / "shared" / "data" / "trec_eval"

IMPORT = [
    "import",
    "table",
    "--documents",
    "examples/own-data/documents.jsonl",
    "--queries",
    "examples/own-data/queries.jsonl",
    "--judgments",
    "examples/own-data/judgments.csv",
    "--doc-title",
    "title",
    "--judgment-grade",
    "grade",
    "--judgment-answers",
    "answer",
    "--output",
    "my-fixture",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples" / "own-data")
    return tmp_path


def test_measure_lists_take_either_name_once() -> None:
    assert measure_list("AP,P@5,map") == ["AP", "P@5"]  # map is AP: kept once
    assert measure_list("ndcg_cut.10, recip_rank,P.10") == ["nDCG@10", "RR", "P@10"]
    # a comma inside parentheses is a parameter's (p2=-1 is the default, so it is left out)
    assert measure_list("utility(p1=2,p2=-1),R@5") == ["utility(p1=2)", "R@5"]
    with pytest.raises(MeasureError, match="Did you mean"):
        measure_list("mapp")


def test_run_takes_measures_by_either_name(workspace: Path) -> None:
    assert run_cli(IMPORT, workspace)[0] == 0
    argv = ["run", "my-fixture", "--systems", "lexical", "--measures", "AP,P@5,map"]
    code, out, err = run_cli([*argv, "--repeats", "1"], workspace)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("measure"))
    assert header.split()[1:3] == ["AP", "P@5"]
    assert "R@10" not in header  # the defaults are replaced, not extended


def test_an_unknown_measure_is_refused_before_any_work(workspace: Path) -> None:
    assert run_cli(IMPORT, workspace)[0] == 0
    code, out, err = run_cli(["run", "my-fixture", "--measures", "ndcg_cutt.10"], workspace)
    assert code == 2
    assert "Did you mean" in err
    assert out == ""


@pytest.mark.parametrize(
    ("option", "column", "expected"),
    [
        ("--doc-title", "heading", "documents.jsonl: no column 'heading' (--doc-title)"),
        ("--judgment-grade", "grad", "Did you mean 'grade'?"),
    ],
)
def test_import_table_refuses_a_column_the_file_lacks(
    workspace: Path, option: str, column: str, expected: str
) -> None:
    argv = list(IMPORT)
    argv[argv.index(option) + 1] = column
    code, _out, err = run_cli(argv, workspace)
    assert code == 2
    assert expected in err
    assert not (workspace / "my-fixture").exists()


def test_trec_eval_names_give_the_same_values_as_ir_measures_names(tmp_path: Path) -> None:
    qrels, run = TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"
    if not qrels.is_file():
        pytest.skip(f"trec_eval's test files are not at {TREC_EVAL} (../shared/data/trec_eval)")
    trec = ["trec-eval", "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", str(qrels), str(run)]
    ours = ["trec-eval", "-m", "AP", "-m", "nDCG@10", "-m", "P@10", str(qrels), str(run)]
    code_trec, out_trec, err_trec = run_cli(trec, tmp_path)
    code_ours, out_ours, err_ours = run_cli(ours, tmp_path)
    assert code_trec == 0, err_trec
    assert code_ours == 0, err_ours

    def values(out: str) -> dict[str, str]:
        """Each printed line's value under its measure's canonical name (trec_eval prints its
        names in its own order, evalkit's names in the order given)."""
        lines = [line.split() for line in out.splitlines() if not line.startswith("runid")]
        return {measure_list(name)[0]: value for name, _query, value in lines}

    assert values(out_trec) == values(out_ours)
    assert set(values(out_trec)) == {"AP", "nDCG@10", "P@10"}
