"""``evalkit.plot``: the report's figures drawn from an Evaluation (evalkit.report.plots)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure
from test_evaluate import make_user_system

import evalkit as ek
from evalkit.fixtures import load_fixture
from evalkit.report import plots
from evalkit.run import Evaluation, evaluate


@pytest.fixture
def result(tiny_dir: Path) -> Evaluation:
    return evaluate(load_fixture(tiny_dir), [make_user_system(), "lexical"], k=10, repeats=2)


def test_evalkit_plot_is_the_report_plots_module() -> None:
    assert ek.plot is plots
    assert "plot" in dir(ek)
    assert "plot" in ek.__all__


def test_import_evalkit_does_not_import_matplotlib() -> None:
    code = "import sys, evalkit; evalkit.evaluate; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_each_figure_is_a_figure(result: Evaluation) -> None:
    for figure in (
        ek.plot.intervals(result, measures=["RR@10", "R@10"]),
        ek.plot.differences(result, base="lexical"),
        ek.plot.scatter(result, "lexical", "user"),
        ek.plot.latency(result),
    ):
        assert isinstance(figure, Figure)
        assert figure.axes


def test_intervals_draw_one_panel_per_measure(result: Evaluation) -> None:
    figure = ek.plot.intervals(result, measures=["RR@10", "R@10"])
    assert [a.get_title().split("\n")[0] for a in figure.axes] == ["RR@10", "R@10"]


def test_scatter_labels_the_outlying_query_ids_and_draws_into_ax() -> None:
    # hand-made values: q3 is farthest from the diagonal, then q1; q2 is a tie
    per_query = pd.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b", "b"],
            "query_id": ["q1", "q2", "q3", "q1", "q2", "q3"],
            "measure": "RR@10",
            "value": [0.5, 1.0, 0.0, 0.25, 1.0, 1.0],
        }
    )
    figure = Figure()
    left, right = figure.subplots(1, 2)
    assert plots.scatter_figure(per_query, x="a", y="b", measure="RR@10", ax=right) is figure
    assert not left.texts  # nothing drawn outside the given axes
    assert [t.get_text() for t in right.texts] == ["q3", "q1"]
    one = plots.scatter_figure(per_query, x="a", y="b", measure="RR@10", label=1)
    assert [t.get_text() for t in one.axes[0].texts] == ["q3"]
    assert "better on 1, worse on 1 of 3" in one.axes[0].get_title()
