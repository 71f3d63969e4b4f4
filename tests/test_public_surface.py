"""The surface a user meets first (issue 44): the version, ``python -m evalkit``, the notebook
copy, help text naming every importer and report parameter, ``dir(evalkit)``, short errors
for a wrong measure name, a run with its columns out of order and a path that is not there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_cli

import evalkit
from evalkit.cli import build_parser
from evalkit.errors import FixtureError, FormatError, MeasureError
from evalkit.measures.aliases import canonical_measure
from evalkit.report import DEFAULT_REPORT_NOTEBOOK, notebook_parameters

REPO = Path(__file__).resolve().parent.parent


def test_dir_of_the_package_is_its_public_api() -> None:
    assert dir(evalkit) == sorted([*evalkit.__all__, "__version__"])
    for helper in ("sys", "types", "Any", "TYPE_CHECKING", "lazy_attributes", "annotations"):
        assert not hasattr(evalkit, helper), helper


def test_version_and_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "--version"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"evalkit {evalkit.__version__} (evalkit-ir)"


def test_notebook_writes_a_copy_of_the_package_notebook(tmp_path: Path) -> None:
    code, out, _ = run_cli(["notebook", "--output", "lab/my-report.ipynb"], tmp_path)
    assert code == 0
    assert "lab/my-report.ipynb" in out
    copy = (tmp_path / "lab" / "my-report.ipynb").read_text(encoding="utf-8")
    assert json.loads(copy) == json.loads(DEFAULT_REPORT_NOTEBOOK.read_text(encoding="utf-8"))
    again, _, err = run_cli(["notebook", "--output", "lab/my-report.ipynb"], tmp_path)
    assert again == 2
    assert "exists" in err
    wrong, _, err = run_cli(["notebook", "--output", "lab/report.html"], tmp_path)
    assert wrong == 2


def _help(*command: str) -> str:
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[command[0]].format_help() if command else parser.format_help()  # type: ignore[attr-defined]


def test_a_command_line_naming_a_subcommand_builds_that_one_alone_with_the_same_help() -> None:
    full, handlers = build_parser()
    names = list(handlers)
    sub = next(a for a in full._actions if a.dest == "command")
    assert names == list(sub.choices)  # type: ignore[arg-type]
    for name in names:
        alone, only = build_parser(name)
        assert list(only) == [name]
        assert only[name] is handlers[name]
        alone_sub = next(a for a in alone._actions if a.dest == "command")
        assert list(alone_sub.choices) == [name]  # type: ignore[arg-type]
        assert alone_sub.choices[name].format_help() == _help(name)  # type: ignore[index]


def test_help_names_every_importer_and_report_parameter() -> None:
    top = " ".join(_help().split())
    assert "SMART" in top
    report = " ".join(_help("report").split())
    for name in notebook_parameters(DEFAULT_REPORT_NOTEBOOK):
        assert f"{name}," in report or f"{name} " in report, name
    assert "Evaluate your own system" not in _help("import")


@pytest.mark.parametrize(
    ("wrong", "suggested"),
    [("nDGC@10", "nDCG@10"), ("ndgc_cut.10", "ndcg_cut.10"), ("Frobnicate@5", None)],
)
def test_a_wrong_measure_name_is_one_short_line(wrong: str, suggested: str | None) -> None:
    with pytest.raises(MeasureError) as info:
        canonical_measure(wrong)
    message = str(info.value)
    assert "\n" not in message
    assert len(message) < 160
    if suggested is not None:
        assert f"Did you mean {suggested!r}?" in message
    else:  # no name is close: examples of both kinds instead
        assert "nDCG@10" in message
        assert "ndcg_cut.10" in message


def test_a_run_with_columns_out_of_order_is_a_column_problem(tmp_path: Path) -> None:
    from evalkit.formats import read_run

    run = tmp_path / "swapped.trec"
    run.write_text("q1 d1 Q0 1 2.0 sys\nq1 d2 Q0 2 1.0 sys\nq2 d1 Q0 1 3.0 sys\n", "utf-8")
    with pytest.raises(FormatError, match=r"column 3 \(doc_id\)") as info:
        read_run(run)
    assert "out of order" in str(info.value)


def test_a_missing_path_is_named_as_given_with_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FixtureError) as fixture:
        evalkit.load_fixture("fixtures/nowhere")
    assert "'fixtures/nowhere'" in str(fixture.value)
    assert repr(str(tmp_path)) in str(fixture.value)
    with pytest.raises(FormatError) as run:
        evalkit.read_run("runs/missing.trec")
    assert str(run.value).startswith("runs/missing.trec: file not found")
    assert repr(str(tmp_path)) in str(run.value)
