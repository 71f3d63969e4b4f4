"""The report's second process (:mod:`evalkit.report.handover`): what it hands over is what the
kernel would have made, a reader waits for it and falls back to its own work, and the helper process
cleans up after itself."""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from matplotlib.figure import Figure
from nbformat.v4 import new_code_cell, new_notebook

from evalkit.errors import RepeatedSymbolWarning
from evalkit.report import execute_notebook
from evalkit.report.handover import (
    ReportHandover,
    claim,
    clear_pending,
    figure_key,
    figure_pending,
    mark_pending,
    result_pending,
    save_figure,
    save_result,
    start_helper,
    taken,
    wait_while_pending,
)
from evalkit.report.plots import paired_difference_figure

PER_QUERY = pd.DataFrame(
    {
        "system": ["base", "base", "x", "x"],
        "query_id": ["q1", "q2", "q1", "q2"],
        "measure": ["RR@10"] * 4,
        "value": [0.5, 1.0, 1.0, 0.25],
    }
)
DRAW = {"base": "base", "systems": ["base", "x"], "measures": ["RR@10"]}


def test_figure_key_follows_values_not_dtypes(tmp_path: Path) -> None:
    key = figure_key(paired_difference_figure, (PER_QUERY,), DRAW)
    assert key is not None
    # read back from Parquet (pandas may give its string dtype) or as categories: same values
    PER_QUERY.to_parquet(tmp_path / "f.parquet", index=False)
    again = pd.read_parquet(tmp_path / "f.parquet")
    assert figure_key(paired_difference_figure, (again,), DRAW) == key
    categories = PER_QUERY.astype({"system": "category"})
    assert figure_key(paired_difference_figure, (categories,), DRAW) == key
    # any other value, argument or function is another key
    changed = PER_QUERY.assign(value=[0.5, 1.0, 1.0, 0.26])
    assert figure_key(paired_difference_figure, (changed,), DRAW) != key
    assert figure_key(paired_difference_figure, (PER_QUERY,), {**DRAW, "base": "x"}) != key
    assert figure_key(figure_key, (PER_QUERY,), DRAW) != key
    assert figure_key(paired_difference_figure, (object(),), DRAW) is None  # not digestible


def test_a_reader_waits_while_pending_then_goes_on(tmp_path: Path) -> None:
    mark_pending(tmp_path, ["verdict"])
    releaser = threading.Timer(0.3, clear_pending, args=(tmp_path, ["verdict"]))
    started = time.monotonic()
    releaser.start()
    wait_while_pending(tmp_path, "verdict")
    assert time.monotonic() - started >= 0.25
    # a result that never comes: the reader gives up after its timeout
    mark_pending(tmp_path, ["lost"])
    started = time.monotonic()
    wait_while_pending(tmp_path, "lost", timeout_s=0.2)
    assert 0.2 <= time.monotonic() - started < 5


def test_report_figures_draw_what_was_not_handed_over(tmp_path: Path) -> None:
    figure = paired_difference_figure(PER_QUERY, **DRAW)
    key = figure_key(paired_difference_figure, (PER_QUERY,), DRAW)
    assert key is not None
    save_figure(tmp_path, key, figure)
    assert claim(tmp_path, figure_pending("paired_difference_figure"))  # as the helper does
    handed = ReportHandover(tmp_path).draw(paired_difference_figure, PER_QUERY, **DRAW)
    assert repr(handed) == repr(figure)
    assert handed._repr_png_().startswith(b"\x89PNG")
    assert taken(tmp_path) == (figure_pending("paired_difference_figure"),)
    # other arguments, or no folder (JupyterLab): the figure is drawn here
    other = {**DRAW, "base": "x"}
    assert (
        type(ReportHandover(tmp_path).draw(paired_difference_figure, PER_QUERY, **other)) is Figure
    )
    assert type(ReportHandover(None).draw(paired_difference_figure, PER_QUERY, **DRAW)) is Figure


def test_a_computed_table_is_handed_over_by_its_call_only(tmp_path: Path) -> None:
    from evalkit.report.tables import ablation_table

    call = {"systems": ["base", "x"], "measures": ["RR@10"], "n_resamples": 50, "seed": 1}
    computed = ablation_table(PER_QUERY, **call)
    key = figure_key(ablation_table, (PER_QUERY,), call)
    assert key is not None
    # as the helper does: pending before it starts, then claimed, computed and saved
    mark_pending(tmp_path, [result_pending(key)])
    assert claim(tmp_path, result_pending(key))
    releaser = threading.Timer(
        0.2,
        lambda: (save_result(tmp_path, key, computed), clear_pending(tmp_path)),
    )
    releaser.start()
    handed = ReportHandover(tmp_path).compute(ablation_table, PER_QUERY, **call)  # waits
    pd.testing.assert_frame_equal(handed, computed)
    assert taken(tmp_path) == ("result-ablation_table",)
    # another call (another seed) is not that result: computed here, and said so
    other = ReportHandover(tmp_path).compute(ablation_table, PER_QUERY, **{**call, "seed": 2})
    pd.testing.assert_frame_equal(other, ablation_table(PER_QUERY, **{**call, "seed": 2}))
    assert "result-ablation_table:unplanned" in taken(tmp_path)  # the helper had no such call
    # a result that cannot be read is computed again; no folder (JupyterLab) computes
    (tmp_path / "results" / f"{key}.pickle").write_bytes(b"not a pickle")
    pd.testing.assert_frame_equal(
        ReportHandover(tmp_path).compute(ablation_table, PER_QUERY, **call), computed
    )
    pd.testing.assert_frame_equal(
        ReportHandover(None).compute(ablation_table, PER_QUERY, **call), computed
    )


def _warns_and_doubles(value: int) -> int:
    warnings.warn("probe p1 lists an expected symbol twice", RepeatedSymbolWarning, stacklevel=1)
    return 2 * value


def test_a_handed_over_result_brings_its_warnings_along(tmp_path: Path) -> None:
    """A warning the helper's call issued (where nobody sees it) is issued again by the cell
    that takes the result, as the cell's own call would have issued it; a result made here
    warns once, by itself."""
    import evalkit.report._notebook as notebook_module

    key = figure_key(_warns_and_doubles, (21,), {})
    assert key is not None
    mark_pending(tmp_path, [result_pending(key)])
    assert claim(tmp_path, result_pending(key))  # as the helper does
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the helper records it: nothing escapes
        notebook_module._save_made(save_result, tmp_path, (key, _warns_and_doubles, (21,), {}))
    clear_pending(tmp_path)
    with pytest.warns(RepeatedSymbolWarning, match="lists an expected symbol twice") as caught:
        assert ReportHandover(tmp_path).compute(_warns_and_doubles, 21) == 42
    assert len(caught) == 1
    assert caught[0].filename == __file__  # where the call issued it
    assert taken(tmp_path) == ("result-_warns_and_doubles",)
    with pytest.warns(RepeatedSymbolWarning) as made_here:
        assert ReportHandover(tmp_path).compute(_warns_and_doubles, 5) == 10
    assert len(made_here) == 1


@pytest.mark.slow
def test_a_handed_over_figure_is_the_output_the_kernel_makes(tmp_path: Path) -> None:
    """The same figure displayed by the report's kernel (inline backend, the notebook's print
    settings) and handed over through ``save_figure``/``ReportHandover``: equal outputs."""
    PER_QUERY.to_parquet(tmp_path / "per_query.parquet", index=False)
    setup = "\n".join(
        [
            "%matplotlib inline",
            '%config InlineBackend.print_figure_kwargs = {"bbox_inches": None}',
            "import pandas as pd",
            "from evalkit.report.plots import paired_difference_figure",
            "from evalkit.report.handover import ReportHandover, claim, figure_key, save_figure",
            "frame = pd.read_parquet('per_query.parquet')",
            f"draw = {DRAW!r}",
        ]
    )
    handed = "\n".join(
        [
            "key = figure_key(paired_difference_figure, (frame,), draw)",
            "save_figure('handed', key, paired_difference_figure(frame, **draw))",
            "claim('handed', 'figure-paired_difference_figure')",
            "ReportHandover('handed').draw(paired_difference_figure, frame, **draw)",
        ]
    )
    notebook = new_notebook(
        cells=[
            new_code_cell(setup),
            new_code_cell("paired_difference_figure(frame, **draw)"),
            new_code_cell(handed),
        ]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    nbformat.write(notebook, tmp_path / "nb.ipynb")
    executed = execute_notebook(tmp_path / "nb.ipynb", {}, cwd=tmp_path)
    drawn, handed_over = (executed.cells[i].outputs for i in (1, 2))
    assert len(drawn) == len(handed_over) == 1
    assert drawn[0]["data"]["image/png"]  # a real PNG, not an empty output
    assert handed_over[0]["data"] == drawn[0]["data"]  # the PNG and its text/plain
    assert taken(tmp_path / "handed") == ("figure-paired_difference_figure",)


def test_the_helper_runs_apart_silently_and_cleans_up(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    def work() -> None:
        print("helper output goes nowhere")
        (tmp_path / "pid").write_text(str(os.getpid()))
        clear_pending(tmp_path, ["done"])

    helper = start_helper(work, tmp_path, ["done", "never"])
    if helper is None:
        pytest.skip("no fork on this platform: the work is done in-process instead")
    helper.wait()
    assert int((tmp_path / "pid").read_text()) == helper.pid != os.getpid()
    assert helper.exit_status == 0
    assert not list((tmp_path / "pending").iterdir())  # "never" was cleared after the exit
    assert "helper output" not in capfd.readouterr().out

    def crash() -> None:
        raise RuntimeError("quoting fixture text")

    failed = start_helper(crash, tmp_path, ["result"])
    assert failed is not None
    failed.wait()
    assert failed.exit_status != 0
    assert not list((tmp_path / "pending").iterdir())
    assert "quoting" not in "".join(capfd.readouterr())


def test_a_stuck_helper_is_killed(tmp_path: Path) -> None:
    helper = start_helper(lambda: time.sleep(60), tmp_path, ["result"])
    if helper is None:
        pytest.skip("no fork on this platform")
    started = time.monotonic()
    helper.wait(timeout_s=0.3)
    assert time.monotonic() - started < 10
    assert helper.exit_status is not None
    assert not (tmp_path / "pending" / "result").exists()


def test_a_figure_the_helper_has_not_begun_is_drawn_by_the_notebook(tmp_path: Path) -> None:
    name = figure_pending("paired_difference_figure")
    mark_pending(tmp_path, [name])  # pending, but nobody claimed it: no waiting for it
    started = time.monotonic()
    drawn = ReportHandover(tmp_path).draw(paired_difference_figure, PER_QUERY, **DRAW)
    assert type(drawn) is Figure
    assert time.monotonic() - started < 5
    assert taken(tmp_path) == (name + ":notebook",)
    assert not claim(tmp_path, name)  # so the helper skips it
