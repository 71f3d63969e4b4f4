"""Report notebook: parameters, scrubbing, offline HTML, leak-scan refusal, the report tables and
figures, and (marked slow) headless executions of the real notebook through ``evalkit report``.

Executions are shared through module-scoped fixtures: the committed fixture (redacted, via the
CLI), a generated random-text fixture (redacted), and the same generated fixture unredacted.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from evalkit.cli import main
from evalkit.errors import (
    InputError,
    LeakError,
    NotebookError,
    UnknownNameError,
    UnsafePathError,
)
from evalkit.fixtures import dump_fixture, generate_fixture, load_fixture
from evalkit.gates import write_baseline
from evalkit.report import (
    DEFAULT_REPORT_NOTEBOOK,
    STDERR_NOTE,
    RenderedReport,
    coerce_parameters,
    execute_notebook,
    export_html,
    external_references,
    machine_paths,
    notebook_parameters,
    render_report,
    scrub_notebook,
    write_rendered_report,
)
from evalkit.report._notebook import REPORT_HELPER_FIGURES, REPORT_HELPER_STEPS
from evalkit.report.plots import latency_figure, paired_difference_figure, uses_log_scale
from evalkit.report.tables import (
    ablation_table,
    chunk_table,
    display_text,
    failure_counts,
    failures_by_kind,
    judgment_table,
    ranking_grid,
    style_ablation,
    text_hash,
    worst_queries,
)
from evalkit.run import evaluate
from evalkit.safety.inputs import find_input
from evalkit.safety.privacy import find_leaks, private_texts

REPO = Path(__file__).resolve().parent.parent
COMMITTED_FIXTURE = REPO / "fixtures" / "synthetic-bilingual-v1"
SECTION_TITLES = (
    "1. Fixture, hashes, determinism and environment",
    "2. Ablation table",
    "3. Ablation table per language",
    "4. Latency",
    "5. Per-query differences against the base system",
    "6. Paired comparisons against the base system",
    "7. Failure drill-down",
    "8. Baseline and gates",
    "9. Abstention",
)
PROBES_TITLE = "10. Code-intelligence probes"  # only when a probe directory is named, last
GATES_YAML = """\
schema: evalkit.gates/1
absolute:
  - id: lexical-abstains-rarely
    system: lexical
    measure: NoResult
    max: 0.99
relative:
  - id: rerank-near-hybrid
    system: hybrid-rerank
    reference: hybrid
    measure: RR@10
    max_drop: 1.0
"""
FAST_RESAMPLES = "300"  # keeps each execution short; the default (2000) is for `make report`


# --- helpers ------------------------------------------------------------------------------


def _notebook(*cells: Any) -> nbformat.NotebookNode:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _write_notebook(path: Path, *cells: Any) -> Path:
    nbformat.write(_notebook(*cells), path)
    return path


def _parameters_cell(source: str) -> Any:
    cell = new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    return cell


def _visible_text(html: str) -> str:
    """The HTML without style blocks, embedded images and tags."""
    html = re.sub(r"<style.*?</style>", " ", html, flags=re.S)
    html = re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", " ", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- parameters ---------------------------------------------------------------------------


def test_report_notebook_declares_the_documented_parameters() -> None:
    defaults = notebook_parameters(DEFAULT_REPORT_NOTEBOOK)
    assert defaults == {
        "fixture": "fixtures/synthetic-bilingual-v1",
        "systems": "",
        "k": 10,
        "measures": "",
        "base_system": "hybrid",
        "redact": True,
        "baseline": "",
        "gates": "",
        "history": "",
        "seed": 0,
        "n_resamples": 2000,
        "worst": 5,
        "query_id": "",
        "probes": "",
        "probe_target": "stdlib",
        "concurrency": 1,
        "evaluation_dir": "",
    }


def test_coerce_parameters_converts_to_the_default_type() -> None:
    defaults = {"k": 10, "redact": True, "name": "x", "ratio": 0.5}
    pairs = [("k", "5"), ("redact", "FALSE"), ("name", "lexical,hybrid"), ("ratio", "2")]
    assert coerce_parameters(pairs, defaults) == {
        "k": 5,
        "redact": False,
        "name": "lexical,hybrid",
        "ratio": 2.0,
    }
    assert coerce_parameters([("redact", "yes"), ("redact", "0")], defaults) == {"redact": False}


@pytest.mark.parametrize(("name", "value"), [("k", "ten"), ("redact", "maybe"), ("ratio", "x")])
def test_coerce_parameters_refuses_a_wrong_type(name: str, value: str) -> None:
    with pytest.raises(InputError, match=f"parameter '{name}' expects"):
        coerce_parameters([(name, value)], {"k": 10, "redact": True, "ratio": 0.5})


def test_coerce_parameters_suggests_a_close_name() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'systems'"):
        coerce_parameters([("sytems", "x")], {"systems": "", "seed": 0})


def test_notebook_without_parameters_cell_is_refused(tmp_path: Path) -> None:
    path = _write_notebook(tmp_path / "plain.ipynb", new_code_cell("x = 1"))
    with pytest.raises(InputError, match="no cell tagged 'parameters'"):
        notebook_parameters(path)


def test_find_input_looks_in_the_working_directory_then_its_parent(tmp_path: Path) -> None:
    (tmp_path / "fixtures" / "f").mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    assert find_input("fixtures/f", base=tmp_path) == tmp_path / "fixtures" / "f"
    assert find_input("fixtures/f", base=tmp_path / "notebooks") == tmp_path / "fixtures" / "f"
    with pytest.raises(InputError, match="does not exist") as raised:
        find_input("fixtures/missing", base=tmp_path)
    # the folders looked in are described, not named (a working directory shows the home)
    assert "looked in the working directory and its parent" in str(raised.value)
    assert str(tmp_path) not in str(raised.value)


# --- scrubbing ----------------------------------------------------------------------------


def _executed_like_notebook(home: str) -> nbformat.NotebookNode:
    """What papermill leaves behind, written by hand: paths, an error, stderr, an image."""
    code = new_code_cell(f"data = load('{home}/fixtures/x')")
    code.outputs = [
        new_output("stream", name="stdout", text=f"read {home}/fixtures/x and /tmp/abc/def\n"),
        new_output("stream", name="stderr", text="UserWarning: the secret query text\n"),
        new_output(
            "display_data",
            data={"text/plain": f"'{home}/x'", "image/png": "iVBORw0KGgo+/home/abc/x=="},
        ),
        new_output(
            "error",
            ename="KeyError",
            evalue="'the secret chunk text'",
            traceback=[f"File {home}/evalkit/x.py", "KeyError: 'the secret chunk text'"],
        ),
    ]
    nb = _notebook(new_markdown_cell(f"see {home}/notes"), code)
    nb.metadata["papermill"] = {
        "input_path": f"{home}/notebooks/report.ipynb",
        "output_path": None,
        "environment_variables": {"HOME": home},
        "parameters": {"fixture": f"{home}/fixtures/x", "k": 10},
        "version": "2.7.0",
    }
    return nb


def test_scrub_removes_paths_tracebacks_stderr_and_papermill_environment() -> None:
    home = "/home/alice/project"
    original = _executed_like_notebook(home)
    before = nbformat.writes(original)
    scrubbed = scrub_notebook(original, paths={home: "<repo>"})
    text = nbformat.writes(scrubbed)

    assert nbformat.writes(original) == before  # the input is not modified
    assert "/home/" not in text.replace("iVBORw0KGgo+/home/abc/x==", "")
    assert "/tmp/abc" not in text
    assert "secret" not in text
    meta = scrubbed.metadata["papermill"]
    assert set(meta) == {"parameters", "version"}
    assert meta["parameters"] == {"fixture": "<repo>/fixtures/x", "k": 10}
    code = scrubbed.cells[1]
    assert code.source == "data = load('<repo>/fixtures/x')"
    assert code.outputs[0].text == "read <repo>/fixtures/x and <path>\n"
    assert code.outputs[1].text == STDERR_NOTE
    assert code.outputs[2].data["image/png"] == "iVBORw0KGgo+/home/abc/x=="  # images untouched
    assert code.outputs[2].data["text/plain"] == "'<repo>/x'"
    error = code.outputs[3]
    assert (error.ename, error.evalue) == ("KeyError", "")
    assert error.traceback == ["KeyError (message removed by evalkit: it may quote fixture text)"]
    assert scrubbed.cells[0].source == "see <repo>/notes"
    nbformat.validate(scrubbed)


def test_a_machine_path_is_scrubbed_as_whole_components() -> None:
    # /tmp/work is the working directory; /tmp/work-b is another folder, never half-replaced
    from evalkit.report._export import _scrub_text

    text = "baseline /tmp/work-b/baseline.json fixture /tmp/work/fixtures/x cwd /tmp/work"
    assert _scrub_text(text, {"/tmp/work": "<cwd>"}) == (
        "baseline <path> fixture <cwd>/fixtures/x cwd <cwd>"
    )


def test_machine_paths_cover_cwd_home_tmp_and_python(tmp_path: Path) -> None:
    paths = machine_paths([tmp_path])
    assert paths[os.getcwd()] == "<cwd>"
    assert paths[os.path.expanduser("~")] == "<home>"
    assert paths[sys.prefix] == "<python>"
    assert paths[str(tmp_path)] == "<path>"
    lengths = [len(p) for p in paths]
    assert lengths == sorted(lengths, reverse=True)  # longest first: nested paths scrub fully


# --- HTML ---------------------------------------------------------------------------------

_PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)


def test_export_html_has_outputs_only_and_loads_nothing_external() -> None:
    code = new_code_cell("secret_code_marker = 1\nsecret_code_marker")
    code.outputs = [
        new_output("display_data", data={"image/png": _PNG_1X1, "text/plain": "<Figure>"}),
        new_output("execute_result", data={"text/plain": "visible_output_marker"}),
    ]
    code.execution_count = 1
    html = export_html(_notebook(new_markdown_cell("# Title marker"), code), title="t")
    assert "secret_code_marker" not in html
    assert "visible_output_marker" in html
    assert "Title marker" in html
    assert f"data:image/png;base64,{_PNG_1X1}" in html
    assert "In&nbsp;[" not in html
    assert "Out[" not in html
    assert external_references(html) == []
    assert "<script" not in html  # no require.js, MathJax or Mermaid
    assert len(html) < 30_000  # the lab stylesheet (~240 kB) is replaced by a small one


def test_exported_html_parses_as_a_browser_reads_it() -> None:
    """Bug: without nbconvert's BeautifulSoup pass, heading anchors came out as
    ``<a ... />``, which HTML parsers read as an open link holding the rest of the page (and
    the report hid it all with ``a.anchor-link {display: none}``). html5lib parses as browsers
    do (the WHATWG algorithm)."""
    import html5lib

    code = new_code_cell("1")
    code.outputs = [new_output("execute_result", data={"text/plain": "output_marker"})]
    html = export_html(_notebook(new_markdown_cell("# Title\n\n## Section two"), code))
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    assert tree.findall(".//a") == []  # no anchor link: nothing can swallow the page
    (h2,) = tree.findall(".//h2")
    assert "".join(h2.itertext()) == "Section two"
    assert "/>" not in re.sub(r"<(?:meta|img|br|hr|link|input)\b[^>]*>", "", html)


@pytest.mark.parametrize(
    "snippet",
    [
        '<script src="https://cdn.example/x.js"></script>',
        "<link rel='stylesheet' href='//fonts.example/css'>",
        "<style>@import url(https://fonts.example/a.css);</style>",
        "<div style=\"background: url('http://img.example/a.png')\"></div>",
        "see http://example.org for more",
    ],
)
def test_external_references_are_found(snippet: str) -> None:
    assert len(external_references(f"<p>ok</p>{snippet}")) == 1


def test_a_link_in_markdown_is_an_external_reference() -> None:
    html = export_html(_notebook(new_markdown_cell("[docs](https://example.org/docs)")))
    assert external_references(html)


# --- writing ------------------------------------------------------------------------------


def _rendered() -> RenderedReport:
    return RenderedReport(html="<html></html>\n", notebook="{}\n", redacted=True, parameters={})


def test_write_rendered_report_writes_html_and_notebook_beside_it(tmp_path: Path) -> None:
    html, ipynb = write_rendered_report(_rendered(), "reports/r.html", workspace=tmp_path)
    assert html == tmp_path / "reports" / "r.html"
    assert ipynb == tmp_path / "reports" / "r.ipynb"
    assert html.read_text(encoding="utf-8") == "<html></html>\n"
    assert ipynb.read_text(encoding="utf-8") == "{}\n"


@pytest.mark.parametrize(
    ("output", "error"),
    [("../r.html", UnsafePathError), ("/tmp/r.html", UnsafePathError), ("r.json", InputError)],
)
def test_write_rendered_report_refuses_bad_paths(
    tmp_path: Path, output: str, error: type[Exception]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with pytest.raises(error):
        write_rendered_report(_rendered(), output, workspace=workspace)
    assert list(workspace.iterdir()) == []


# --- report tables ------------------------------------------------------------------------


def _per_query(rows: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["system", "query_id", "language", "measure", "value"])
    return frame.assign(answerable=frame["measure"] != "NoAnswerFP")


def test_text_hash_is_the_sha256_prefix() -> None:
    # FIPS 180-2 test vector: SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223...
    assert text_hash("abc") == "ba7816bf8f01"
    assert display_text("abc", redact=True) == "sha256:ba7816bf8f01"
    assert display_text("abc", redact=False) == "abc"


def test_ablation_table_means_intervals_and_best() -> None:
    per_query = _per_query(
        [
            ("a", "q1", "en", "R@5", 1.0),
            ("a", "q2", "zh", "R@5", 0.5),
            ("b", "q1", "en", "R@5", 0.5),
            ("b", "q2", "zh", "R@5", 0.5),
            ("a", "q3", "en", "NoAnswerFP", 1.0),
            ("b", "q3", "en", "NoAnswerFP", 0.0),
        ]
    )
    before = per_query.copy()
    table = ablation_table(
        per_query, systems=["b", "a"], measures=["R@5", "NoAnswerFP"], n_resamples=200, seed=1
    )
    pd.testing.assert_frame_equal(per_query, before)
    assert list(table.columns) == ["system", "measure", "n", "mean", "ci_low", "ci_high", "best"]
    assert list(zip(table["system"], table["measure"], strict=True)) == [
        ("b", "R@5"),
        ("b", "NoAnswerFP"),
        ("a", "R@5"),
        ("a", "NoAnswerFP"),
    ]
    # Hand computation: a R@5 = (1.0 + 0.5) / 2 = 0.75, b R@5 = 0.5; NoAnswerFP a 1.0, b 0.0.
    assert table["mean"].tolist() == [0.5, 0.0, 0.75, 1.0]
    assert table["n"].tolist() == [2, 1, 2, 1]
    # Constant values give the zero-width interval; a's resampled means lie in {0.5, .75, 1}.
    assert (table.loc[0, "ci_low"], table.loc[0, "ci_high"]) == (0.5, 0.5)
    assert 0.5 <= table.loc[2, "ci_low"] <= table.loc[2, "ci_high"] <= 1.0
    # Higher R@5 is better; lower NoAnswerFP is better.
    assert table["best"].tolist() == [False, True, True, False]
    again = ablation_table(
        per_query, systems=["b", "a"], measures=["R@5", "NoAnswerFP"], n_resamples=200, seed=1
    )
    pd.testing.assert_frame_equal(table, again)  # seeded: reproducible


def test_ablation_table_by_language_and_styled_view() -> None:
    per_query = _per_query(
        [
            ("a", "q1", "en", "R@5", 1.0),
            ("a", "q2", "zh", "R@5", 0.0),
            ("b", "q1", "en", "R@5", 0.0),
            ("b", "q2", "zh", "R@5", 1.0),
        ]
    )
    table = ablation_table(
        per_query, systems=["a", "b"], measures=["R@5"], by=["language"], n_resamples=50
    )
    assert list(table.columns[:3]) == ["language", "system", "measure"]
    assert table[["language", "system", "best"]].values.tolist() == [
        ["en", "a", True],
        ["en", "b", False],
        ["zh", "a", False],
        ["zh", "b", True],
    ]
    html = style_ablation(table).to_html()
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", html.split("</style>")[0])
    bold = {
        cell
        for selector, body in rules
        if "font-weight: bold" in body
        for cell in re.findall(r"row\d+_col\d+", selector)
    }
    assert bold == {"row0_col0", "row3_col0"}  # en/a and zh/b, the best per language
    # one line: no-break spaces inside the cell, and the table does not wrap its cells
    assert "1.00\u00a0[1.00,\u00a01.00]" in html
    assert re.search(r"#T_ablation-language-system td \{\s*white-space: nowrap;", html)
    empty = ablation_table(per_query, systems=["c"], measures=["R@5"], by=["language"])
    assert list(empty.columns) == list(table.columns)
    assert empty.empty


def test_failure_counts_and_worst_queries() -> None:
    failures = pd.DataFrame(
        [
            ("a", "q2", "en", "missed-relevant", "c1"),
            ("b", "q2", "en", "missed-relevant", "c1"),
            ("a", "q1", "en", "near-duplicate-above", "c9,c1"),
            ("b", "q3", "zh", "answered-no-answer", "c4"),
            ("a", "q4", "zh", "missed-relevant", "c5"),
        ],
        columns=["system", "query_id", "language", "kind", "chunk_ids"],
    )
    counts = failure_counts(failures, systems=["b", "a", "c"])
    assert counts.index.tolist() == [
        "answered-no-answer",
        "missed-relevant",
        "near-duplicate-above",
    ]
    assert counts.columns.tolist() == ["b", "a", "c", "total"]
    assert counts.loc["missed-relevant"].tolist() == [1, 2, 0, 3]

    grouped = failures_by_kind(failures, systems=["b", "a"])
    assert grouped.values.tolist() == [
        ["answered-no-answer", "b", 1, "q3"],
        ["missed-relevant", "b", 1, "q2"],
        ["missed-relevant", "a", 2, "q2, q4"],
        ["near-duplicate-above", "a", 1, "q1"],
    ]
    assert failures_by_kind(failures.iloc[0:0], systems=["a"]).columns.tolist() == [
        "kind",
        "system",
        "count",
        "query_ids",
    ]

    per_query = _per_query(
        [
            ("a", "q1", "en", "M", 0.5),
            ("b", "q1", "en", "M", 0.1),
            ("a", "q2", "en", "M", 0.0),
            ("b", "q2", "en", "M", 0.0),
            ("a", "q4", "zh", "M", 0.2),
            ("b", "q4", "zh", "M", 0.2),
        ]
    )
    worst = worst_queries(per_query, failures, measure="M", limit=3)
    # q2 fails for 2 systems; then 1 system each: q3 (no M value: 0.0), q4 (0.2), q1 (0.3).
    assert worst["query_id"].tolist() == ["q2", "q3", "q4"]
    assert worst["failing_systems"].tolist() == [2, 1, 1]
    assert worst["mean_value"].tolist() == [0.0, 0.0, 0.2]
    empty = worst_queries(per_query, failures.iloc[0:0], measure="M")
    assert list(empty.columns) == list(worst.columns)
    assert empty.empty


def test_judgment_table_and_ranking_grid_redact_text() -> None:
    fixture = generate_fixture(5, documents=4, chunks_per_document=2, queries=4)
    query = next(q for q in fixture.queries if q.judgments)
    judged = sorted(query.judgments, key=lambda j: (-j.grade, j.chunk_id))
    top = judged[0].chunk_id
    rankings = pd.DataFrame(
        [("a", query.id, 1, "other", 1.0, 0), ("a", query.id, 2, top, 0.5, judged[0].grade)],
        columns=["system", "query_id", "rank", "chunk_id", "score", "grade"],
    )
    table = judgment_table(fixture, rankings, query.id, systems=["a", "b"])
    assert table.columns.tolist() == ["chunk_id", "grade", "chunk", "a", "b"]
    assert table["chunk_id"].tolist() == [j.chunk_id for j in judged]
    assert table.loc[0, "a"] == "2"
    assert table.loc[0, "b"] == "-"
    assert table.loc[0, "chunk"] == "sha256:" + text_hash(fixture.chunk(top).text)
    shown = judgment_table(fixture, rankings, query.id, systems=["a"], redact=False)
    assert shown.loc[0, "chunk"] == fixture.chunk(top).text[:400] + (
        "…" if len(fixture.chunk(top).text) > 400 else ""
    )

    chunks = chunk_table(fixture, ["other", top, top], redact=True)
    assert chunks.columns.tolist() == ["chunk_id", "chunk"]
    assert chunks["chunk_id"].tolist() == [top]  # unknown IDs are skipped, duplicates dropped
    assert chunks.loc[0, "chunk"] == "sha256:" + text_hash(fixture.chunk(top).text)
    assert (
        chunk_table(fixture, [top], redact=False)
        .loc[0, "chunk"]
        .startswith(fixture.chunk(top).text[:50])
    )

    grid = ranking_grid(rankings, query.id, systems=["a", "b"], k=3, near_duplicates={"other": top})
    assert grid.index.tolist() == [1, 2, 3]
    assert grid.loc[1, "a"] == f"other (g0) ~{top}"
    assert grid.loc[2, "a"] == f"{top} (g{judged[0].grade})"
    assert grid.loc[3, "a"] == ""
    assert grid["b"].tolist() == ["no results (abstained)", "", ""]  # b returned nothing
    # With the query's judged chunks given, an unjudged chunk is not shown as grade 0.
    judged_grid = ranking_grid(
        rankings,
        query.id,
        systems=["a"],
        k=3,
        near_duplicates={"other": top},
        judged=[j.chunk_id for j in judged],
    )
    assert judged_grid.loc[1, "a"] == f"other (unjudged) ~{top}"
    assert judged_grid.loc[2, "a"] == f"{top} (g{judged[0].grade})"


def test_a_deep_ranking_grid_keeps_the_top_ranks_and_the_judged_ones_below() -> None:
    rows = [("a", "q", rank, f"c{rank}", 1.0 / rank, 0) for rank in range(1, 101)]
    rows += [("b", "q", rank, f"d{rank}", 1.0 / rank, 0) for rank in range(1, 51)]
    rankings = pd.DataFrame(
        rows, columns=["system", "query_id", "rank", "chunk_id", "score", "grade"]
    )
    judged = ["c3", "c40", "d77", "d45", "missing"]  # d77 is beyond b's ranking
    full = ranking_grid(rankings, "q", systems=["a", "b"], k=100, judged=judged)
    deep = ranking_grid(rankings, "q", systems=["a", "b"], k=100, judged=judged, depth=5)
    assert deep.index.tolist() == [1, 2, 3, 4, 5, 40, 45]
    assert deep.index.name == "rank"
    pd.testing.assert_frame_equal(deep, full.loc[deep.index])  # the kept rows, unchanged
    assert deep.loc[40, "a"] == "c40 (g0)"
    assert deep.loc[45, "b"] == "d45 (g0)"
    # without the query's judged chunks, the deeper rows are those with a relevant grade
    graded = rankings.assign(grade=[2 if chunk == "c60" else 0 for chunk in rankings["chunk_id"]])
    by_grade = ranking_grid(graded, "q", systems=["a", "b"], k=100, depth=5)
    assert by_grade.index.tolist() == [1, 2, 3, 4, 5, 60]
    # a depth at or beyond k changes nothing
    pd.testing.assert_frame_equal(
        ranking_grid(rankings, "q", systems=["a"], k=10, judged=judged, depth=10),
        ranking_grid(rankings, "q", systems=["a"], k=10, judged=judged),
    )


# --- figures ------------------------------------------------------------------------------


def test_uses_log_scale_threshold() -> None:
    assert not uses_log_scale([1.0, 19.9])
    assert uses_log_scale([1.0, 20.0])
    assert not uses_log_scale([0.0, 5.0])  # non-positive values are ignored
    assert not uses_log_scale([])


def test_latency_figure_axes_and_log_scale() -> None:
    latency = pd.DataFrame(
        {"system": ["a"] * 4 + ["b"] * 4, "latency_ms": [1.0, 2.0, 3.0, 4.0, 1, 50, 60, 70]}
    )
    figure = latency_figure(latency, systems=["a", "b", "empty"])
    box, cdf = figure.axes
    assert box.get_xscale() == cdf.get_xscale() == "log"  # 70 / 1 >= 20
    assert [t.get_text() for t in box.get_yticklabels()] == ["a", "b", "empty"]
    assert [t.get_text() for t in cdf.get_legend().get_texts()] == ["a", "b"]
    linear = latency_figure(latency[latency["system"] == "a"], systems=["a"])
    assert linear.axes[0].get_xscale() == "linear"


def test_paired_difference_figure_counts() -> None:
    per_query = _per_query(
        [
            ("base", "q1", "en", "M", 0.5),
            ("base", "q2", "en", "M", 0.5),
            ("base", "q3", "en", "M", 0.5),
            ("x", "q1", "en", "M", 1.0),
            ("x", "q2", "en", "M", 0.5),
            ("x", "q3", "en", "M", 0.0),
            ("y", "q1", "en", "M", 0.75),
            ("y", "q2", "en", "M", 0.75),
            ("y", "q3", "en", "M", 0.75),
        ]
    )
    figure = paired_difference_figure(
        per_query, base="base", systems=["base", "x", "y"], measures=["M"]
    )
    titles = [axes.get_title() for axes in figure.axes]
    assert titles == ["x − base\nM\n1 up, 1 tied, 1 down", "y − base\nM\n3 up, 0 tied, 0 down"]
    # sorted differences, by hand: 1-.5, .5-.5, 0-.5: a green bar at x=0, a tie dot at x=1 and
    # a red bar at x=2 (bars are step patches spanning x-0.5 .. x+0.5)
    bars = [
        (patch.get_data().edges.tolist(), patch.get_data().values.tolist(), patch.get_facecolor())
        for patch in figure.axes[0].patches
    ]
    assert [(edges, values) for edges, values, _ in bars] == [
        ([-0.5, 0.5], [0.5]),
        ([1.5, 2.5], [-0.5]),
    ]
    assert [to_hex(color) for *_, color in bars] == ["#2a9d55", "#c44e52"]
    ties = figure.axes[0].lines[0]
    assert ties.get_xdata().tolist() == [1]
    assert ties.get_ydata().tolist() == [0.0]


# --- execution (slow: starts kernels) -------------------------------------------------------


@pytest.mark.slow
def test_kernel_runs_this_interpreter_and_errors_hide_their_message(tmp_path: Path) -> None:
    path = _write_notebook(
        tmp_path / "nb.ipynb",
        _parameters_cell("word = 'x'"),
        new_code_cell("import sys\nprint(sys.executable)"),
        new_code_cell("raise KeyError('secret ' + word)"),
    )
    with pytest.raises(NotebookError) as caught:
        execute_notebook(path, {"word": "hidden-value"}, cwd=tmp_path)
    message = str(caught.value)
    assert "cell 3 raised KeyError" in message  # 0 parameters, 1 injected, 2 print, 3 raise
    assert "secret" not in message
    assert "hidden-value" not in message

    ok = _write_notebook(tmp_path / "ok.ipynb", new_code_cell("import sys\nprint(sys.executable)"))
    executed = execute_notebook(ok, {}, cwd=tmp_path)
    assert executed.cells[0].outputs[0].text.strip() == sys.executable


@pytest.fixture(scope="module")
def generated_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random-text fixture (12 documents, 12 queries, English and Chinese) with gates
    that pass by construction (each answerable query shares words with its span, so lexical
    returns something for it: NoResult 0; RR@10 values lie in [0, 1], so no drop exceeds 1).
    A bound no value can fail (``min: 0``) is refused when gates are loaded."""
    directory = tmp_path_factory.mktemp("generated") / "fixture"
    dump_fixture(generate_fixture(7, documents=12, queries=12), directory)
    (directory / "gates.yaml").write_text(GATES_YAML, encoding="utf-8")
    return directory


def _leaky_notebook(path: Path) -> Path:
    """A 'report' notebook that prints a chunk's text whatever ``redact`` says."""
    return _write_notebook(
        path,
        _parameters_cell('fixture = ""\nsystems = ""\nredact = True'),
        new_code_cell(
            "from evalkit.fixtures import load_fixture\nprint(load_fixture(fixture).chunks[0].text)"
        ),
    )


@pytest.mark.slow
def test_leak_scan_refuses_an_injected_leak(
    generated_fixture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    notebook = _leaky_notebook(tmp_path / "leaky.ipynb")
    fixture = load_fixture(generated_fixture)
    leaked = f"chunk:{fixture.chunks[0].id}"
    with pytest.raises(LeakError) as caught:
        render_report({"fixture": str(generated_fixture), "systems": "lexical"}, notebook=notebook)
    assert leaked in caught.value.object_ids
    assert fixture.chunks[0].text not in str(caught.value)

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    argv = [
        "report",
        str(generated_fixture),
        "--notebook",
        str(notebook),
        "-p",
        "systems",
        "lexical",
    ]
    assert main([*argv, "--output", "out/r.html"]) == 1
    err = capsys.readouterr().err
    assert leaked in err
    assert fixture.chunks[0].text not in err
    # nothing written on refusal (the early path check may create the empty output directory)
    assert [p for p in workspace.rglob("*") if not p.is_dir()] == []


@pytest.mark.slow
def test_unredacted_needs_explicit_permission(generated_fixture: Path, tmp_path: Path) -> None:
    notebook = _leaky_notebook(tmp_path / "leaky.ipynb")
    params = {"fixture": str(generated_fixture), "systems": "lexical", "redact": False}
    with pytest.raises(InputError, match="allow_unredacted"):
        render_report(params, notebook=notebook)
    rendered = render_report(params, notebook=notebook, allow_unredacted=True)
    assert load_fixture(generated_fixture).chunks[0].text in rendered.html


def _report_via_cli(workspace: Path, *argv: str) -> tuple[str, str, str]:
    """Run ``evalkit report`` in ``workspace``; (stdout, html, ipynb)."""
    previous = os.getcwd()
    os.chdir(workspace)
    try:
        from contextlib import redirect_stdout
        from io import StringIO

        out = StringIO()
        with redirect_stdout(out):
            code = main(["report", *argv, "--output", "reports/report.html"])
        assert code == 0, out.getvalue()
    finally:
        os.chdir(previous)
    html = (workspace / "reports" / "report.html").read_text(encoding="utf-8")
    ipynb = (workspace / "reports" / "report.ipynb").read_text(encoding="utf-8")
    return out.getvalue(), html, ipynb


@pytest.fixture(scope="module")
def committed_rendered() -> RenderedReport:
    """The notebook with its default fixture, run as JupyterLab would from a folder one level
    below the repository root (``examples/``): ``fixtures/...`` is found from its parent."""
    return render_report(
        {"n_resamples": int(FAST_RESAMPLES), "probes": "fixtures/probes"},
        cwd=Path(__file__).resolve().parents[1] / "examples",
    )


@pytest.fixture(scope="module")
def committed_report(
    committed_rendered: RenderedReport, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, str]:
    workspace = tmp_path_factory.mktemp("committed")
    html, ipynb = write_rendered_report(
        committed_rendered, "reports/report.html", workspace=workspace
    )
    return "", html.read_text(encoding="utf-8"), ipynb.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def generated_report(
    generated_fixture: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, str]:
    workspace = tmp_path_factory.mktemp("generated-report")
    evaluation = evaluate(load_fixture(generated_fixture))
    write_baseline(
        evaluation.to_report(),
        "baseline.json",
        private=evaluation.private_texts(),
        workspace=workspace,
    )
    return _report_via_cli(
        workspace,
        str(generated_fixture),
        "-p",
        "n_resamples",
        FAST_RESAMPLES,
        "-p",
        "baseline",
        "baseline.json",
    )


@pytest.fixture(scope="module")
def unredacted_report(
    generated_fixture: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, str]:
    workspace = tmp_path_factory.mktemp("unredacted-report")
    return _report_via_cli(
        workspace,
        str(generated_fixture),
        "-p",
        "n_resamples",
        FAST_RESAMPLES,
        "-p",
        "redact",
        "false",
        "--allow-unredacted",
    )


def _assert_complete_and_clean(html: str, ipynb: str, fixture_dir: Path) -> None:
    visible = _visible_text(html)
    positions = [visible.find(title) for title in SECTION_TITLES]
    assert all(p >= 0 for p in positions), dict(zip(SECTION_TITLES, positions, strict=True))
    assert positions == sorted(positions)  # the sections come in the documented order
    for marker in ("corpusHash", "evaluationDefinitionHash", "deterministic (2 repeats)", "numpy"):
        assert marker in visible
    assert "p_adjusted" in visible
    assert "wins" in visible
    assert html.count("data:image/png;base64,") >= 2  # latency and per-query differences
    assert "No gates" in visible or "Gates:" in visible
    assert "Traceback" not in html
    assert STDERR_NOTE.strip() not in html  # nothing was written to stderr
    assert external_references(html) == []
    fixture = load_fixture(fixture_dir)
    private = private_texts(fixture)
    assert find_leaks(html, private) == []
    assert find_leaks(ipynb, private) == []
    for path in {os.getcwd(), str(REPO), os.path.expanduser("~"), str(fixture_dir), sys.prefix}:
        assert path not in html
        assert path not in ipynb
    nbformat.validate(nbformat.reads(ipynb, as_version=4))  # opens in JupyterLab
    metadata = json.loads(ipynb)["metadata"]["papermill"]
    assert not {"input_path", "output_path", "environment_variables"} & set(metadata)


@pytest.mark.slow
def test_report_on_the_committed_fixture(committed_report: tuple[str, str, str]) -> None:
    _stdout, html, ipynb = committed_report
    _assert_complete_and_clean(html, ipynb, COMMITTED_FIXTURE)
    assert "synthetic-bilingual-v1" in html
    # The probe section ran against the committed probes (found from examples/ as in JupyterLab),
    # after every other section.
    visible = _visible_text(html)
    assert "callers-decode-uxxxx" in visible
    assert visible.find(PROBES_TITLE) > visible.find(SECTION_TITLES[-1]) > 0
    # the passing gate checks are folded into one <details> block, their table inside it
    folded = re.search(
        r"<details><summary>(\d+) passing checks[^<]*</summary>(.*?)</details>", html, re.S
    )
    assert folded is not None
    assert int(folded.group(1)) > 0
    assert folded.group(2).count("<tr>") >= int(folded.group(1))


@pytest.mark.slow
def test_the_kernel_takes_the_helpers_verdict_and_figures(
    committed_rendered: RenderedReport,
) -> None:
    """The command's helper computed exactly what the notebook's cells ask for: the verdict
    for the same settings, the figures and tables for the same calls. A figure the
    helper had not begun when its cell ran is drawn by the notebook (``:notebook``); a cell
    that asked for another call makes it itself, said so by ``:unplanned``."""
    handed_over = set(committed_rendered.handed_over)
    assert not [name for name in handed_over if name.endswith(":unplanned")]
    assert "verdict" in handed_over
    for name in REPORT_HELPER_FIGURES:
        assert len({f"figure-{name}", f"figure-{name}:notebook"} & handed_over) == 1
    # the other steps are results (the ablation tables are two calls of one function)
    for name in set(REPORT_HELPER_STEPS) - set(REPORT_HELPER_FIGURES):
        assert {f"result-{name}", f"result-{name}:notebook"} & handed_over


@pytest.mark.slow
def test_report_on_a_generated_fixture(
    generated_report: tuple[str, str, str], generated_fixture: Path
) -> None:
    stdout, html, ipynb = generated_report
    assert stdout.splitlines()[-1] == "report: reports/report.html"
    _assert_complete_and_clean(html, ipynb, generated_fixture)
    assert "Redacted report" in html
    visible = _visible_text(html)
    assert "Against the baseline: 0 changed" in visible  # the same evaluation as the baseline
    assert "Gates: all passed" in visible
    assert "lexical-abstains-rarely" in visible
    assert "rerank-near-hybrid" in visible
    assert "sha256:" in html  # the drill-down shows hashes instead of text
    # no probe directory named: the report has no probe section at all
    assert PROBES_TITLE not in visible
    assert "probe" not in visible.lower()


@pytest.mark.slow
def test_unredacted_report_shows_text_and_a_banner(
    unredacted_report: tuple[str, str, str], generated_fixture: Path
) -> None:
    stdout, html, _ipynb = unredacted_report
    assert "do not publish" in stdout
    assert "DO NOT PUBLISH" in html
    leaked = find_leaks(html, private_texts(load_fixture(generated_fixture)))
    assert any(i.startswith("query:") for i in leaked)  # the drill-down shows query text
    assert any(i.startswith("chunk:") for i in leaked)  # ... and chunk text


def test_kernel_warm_up_calls_are_literal_expressions() -> None:
    import ast

    from evalkit.report._kernel import InterpreterKernelManager

    hostile = "x'); __import__('os').system('false'); ('"
    manager = InterpreterKernelManager()
    manager.preload = ("json",)
    manager.warm_up = (
        ("evalkit.probes.targets", "warm_up_target", (hostile,)),
        ("PIL.Image", "preinit", ()),
    )
    option = next(a for a in manager.kernel_spec.argv if a.startswith("--IPKernelApp.exec_lines="))
    lines = ast.literal_eval(option.split("=", 1)[1])
    assert len(lines) == 5
    # the collector paused around the imports and warm-ups, then their objects frozen
    assert lines[0] == "__import__('gc').disable()"
    assert lines[-1] == "__import__('gc').freeze() or __import__('gc').enable()"
    call = ast.parse(lines[2], mode="eval").body
    # `getattr(__import__(module), function)(argument) and None`: the name is one constant
    assert isinstance(call, ast.BoolOp)
    assert isinstance(call.values[0], ast.Call)
    assert [a.value for a in call.values[0].args if isinstance(a, ast.Constant)] == [hostile]
    # each line runs as it stands and leaves the value None (no output); the collector lines
    # are not run here, where they would pause this process's collector
    for line in lines[1:-1]:
        assert eval(compile(line, "<exec_lines>", "eval"), {}) is None


@pytest.mark.parametrize("name_length", [3, 30])
def test_figures_keep_their_text_inside_and_apart(name_length: int) -> None:
    """The measured layout (no layout engine) gives every label room, short or long names."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from evalkit.report.plots import headline_figure

    names = [f"{i}{'s' * name_length}" for i in range(4)]
    latency = pd.DataFrame(
        {"system": [n for n in names for _ in range(5)], "latency_ms": [1.0, 2, 5, 40, 90] * 4}
    )
    per_query = _per_query(
        [
            (n, f"q{q}", "en", m, (i + q) % 3 / 2)
            for i, n in enumerate(names)
            for q in range(6)
            for m in ("RR@10", "nDCG@10")
        ]
    )
    headline = pd.DataFrame(
        [(n, m, 0.5, 0.4, 0.6) for m in ("RR@10", "nDCG@10") for n in names],
        columns=["system", "measure", "mean", "ci_low", "ci_high"],
    )
    for figure in (
        latency_figure(latency, systems=names),
        paired_difference_figure(
            per_query, base=names[0], systems=names, measures=["RR@10", "nDCG@10"]
        ),
        headline_figure(headline, base=names[0]),
    ):
        assert figure.get_layout_engine() is None
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        width, height = canvas.get_width_height()
        for axes in figure.axes:  # what is drawn of each panel: ticks, labels, title
            box = axes.get_tightbbox(renderer)
            assert box is not None
            assert box.x0 >= -1, axes.get_title()
            assert box.y0 >= -1, axes.get_title()
            assert box.x1 <= width + 1, axes.get_title()
            assert box.y1 <= height + 1, axes.get_title()
        titles = [a.title.get_window_extent(renderer) for a in figure.axes if a.title.get_text()]
        for one, other in itertools.combinations(titles, 2):
            assert not one.overlaps(other)
        for axes in figure.axes:  # no title runs into the panel above's x label
            label = axes.xaxis.label.get_window_extent(renderer)
            assert not any(label.overlaps(t) for t in titles)
