"""``evalkit scan`` names the cells of a notebook whose outputs hold fixture text, ``evalkit
strip`` removes exactly those outputs (evalkit.report.notebook_leaks); and the exploration
notebook (evalkit/report/notebooks/explore.ipynb) executed with papermill on the committed
fixture: its unredacted drill-down holds the query text and a highlighted span, the scan
flags it, strip cleans it, and the stripped notebook validates."""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from pathlib import Path

import nbformat
import pytest
from cli_runner import run_cli
from nbformat.v4 import new_code_cell, new_notebook, new_output

from evalkit.fixtures import load_fixture
from evalkit.report import execute_notebook
from evalkit.report.notebook_leaks import notebook_leaks, strip_leaks
from evalkit.safety.privacy import private_texts

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "fixtures" / "synthetic-bilingual-v1"
CHUNK_TEXT = "The ferry leaves at 06:40 and then every ninety minutes."  # tiny fixture, c-en-1


def _notebook() -> nbformat.NotebookNode:
    """Cell 1: a clean output and one quoting chunk c-en-1; cell 2: clean; cell 3: fixture
    text typed into the source."""
    leaking = new_output("display_data", data={"text/html": f"<p>{html.escape(CHUNK_TEXT)}</p>"})
    clean = new_output("stream", name="stdout", text="R@10 0.5\n")
    return new_notebook(
        cells=[
            new_code_cell("evaluation.explain('q-en-1')", id="a", outputs=[clean, leaking]),
            new_code_cell(
                "1 + 1", id="b", outputs=[new_output("stream", name="stdout", text="2\n")]
            ),
            new_code_cell(f"# {CHUNK_TEXT}", id="c"),
        ]
    )


def test_leaking_cells_are_named_by_position_and_id(tiny_dir: Path) -> None:
    private = private_texts(load_fixture(tiny_dir))
    leaks = notebook_leaks(nbformat.writes(_notebook()), private)
    assert [(c.index, c.cell_id, c.outputs, c.source) for c in leaks] == [
        (0, "a", (1,), False),
        (2, "c", (), True),
    ]
    assert "chunk:c-en-1" in leaks[0].object_ids
    assert leaks[0].describe().startswith("cell 1 (id a): outputs 2: ")


def test_strip_removes_exactly_the_leaking_outputs(tiny_dir: Path) -> None:
    private = private_texts(load_fixture(tiny_dir))
    stripped, _ = strip_leaks(nbformat.writes(_notebook()), private)
    notebook = nbformat.reads(stripped, as_version=4)
    nbformat.validate(notebook)
    assert [o.get("text") for o in notebook.cells[0].outputs] == ["R@10 0.5\n"]
    assert [o.get("text") for o in notebook.cells[1].outputs] == ["2\n"]
    assert notebook.cells[2].source == f"# {CHUNK_TEXT}"  # a source is never rewritten


def test_scan_and_strip_commands(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    notebook = _notebook()
    notebook.cells.pop()  # no fixture text in a source: strip leaves the notebook clean
    nbformat.write(notebook, root / "nb.ipynb")
    code, out, err = run_cli(["scan", "tiny", "nb.ipynb"], root)
    assert code == 1, err
    assert "cell 1 (id a): outputs 2: chunk:c-en-1" in out
    assert "cell 2" not in out
    code, out, err = run_cli(["strip", "tiny", "nb.ipynb"], root)
    assert code == 0, err
    assert "stripped 1 output(s) of 1 cell(s)" in out
    assert "ninety" not in out + err
    assert run_cli(["scan", "tiny", "nb.ipynb"], root)[0] == 0
    nbformat.validate(nbformat.read(root / "nb.ipynb", as_version=4))


def test_strip_exits_1_when_a_source_holds_fixture_text(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    nbformat.write(_notebook(), root / "nb.ipynb")
    code, out, _ = run_cli(["strip", "tiny", "nb.ipynb", "--output", "clean.ipynb"], root)
    assert code == 1
    assert "cell 3 (id c): source (edit it by hand)" in out
    assert "fixture text remains" in out
    assert (root / "clean.ipynb").exists()
    assert json.loads((root / "nb.ipynb").read_text("utf-8"))["cells"][0]["outputs"]  # untouched


def test_strip_refuses_what_is_not_a_notebook(tiny_dir: Path) -> None:
    root = tiny_dir.parent
    (root / "nb.ipynb").write_text("not json", "utf-8")
    code, _, err = run_cli(["strip", "tiny", "nb.ipynb"], root)
    assert code == 2
    assert "not a Jupyter notebook" in err


@pytest.mark.slow
def test_explore_notebook_runs_and_strips_clean(tmp_path: Path) -> None:
    source = files("evalkit.report") / "notebooks" / "explore.ipynb"
    nbformat.validate(nbformat.reads(source.read_text("utf-8"), as_version=4))
    executed = execute_notebook(str(source), {"redact": False}, cwd=ROOT)
    cells = {cell.get("id"): cell for cell in executed.cells}
    page = "".join(o.get("data", {}).get("text/html", "") for o in cells["explain"].outputs)
    query_id = re.search(r"<h3>Query ([\w-]+) \(", page)
    assert query_id is not None
    fixture = load_fixture(COMMITTED)
    assert html.escape(fixture.query(query_id.group(1)).text) in page  # the query text
    assert re.search(r"<mark>[^<]+</mark>", page)  # a highlighted answer span
    assert "CONTAINS FIXTURE TEXT" in page
    nbformat.write(executed, tmp_path / "explore.ipynb")

    code, out, err = run_cli(["scan", str(COMMITTED), "explore.ipynb"], tmp_path)
    assert code == 1, err
    assert "(id explain): outputs 1:" in out
    code, out, err = run_cli(["strip", str(COMMITTED), "explore.ipynb"], tmp_path)
    assert code == 0, err
    code, out, err = run_cli(["scan", str(COMMITTED), "explore.ipynb"], tmp_path)
    assert code == 0, out + err
    stripped = nbformat.read(tmp_path / "explore.ipynb", as_version=4)
    nbformat.validate(stripped)
    kept = {cell.get("id"): len(cell.get("outputs", [])) for cell in stripped.cells}
    assert kept["explain"] == 0
    assert kept["evaluate"] > 0  # the fixture's and the evaluation's summaries: IDs only
    assert kept["worst"] > 0
    assert kept["scatter"] > 0
