"""Escaping helpers (evalkit.report.render) and the report's tables and figures with hostile names.

Every check renders or parses with a real third-party implementation: html5lib (the WHATWG
parsing algorithm browsers use) through BeautifulSoup, nbconvert's own Markdown renderer (the
one that renders the report), markdown-it-py and mistune for GitHub-style tables, xml.etree,
the csv module and matplotlib's mathtext detection and drawing.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import xml.etree.ElementTree as ET
from typing import Any

import matplotlib
import mistune
import nbformat
import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup, Tag
from markdown_it import MarkdownIt
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_code_cell, new_notebook, new_output

from evalkit.report import DEFAULT_REPORT_NOTEBOOK, export_html
from evalkit.report.plots import latency_figure, paired_difference_figure
from evalkit.report.render import (
    CONTENT_SECURITY_POLICY,
    WORD_JOINER,
    csv_cell,
    html_text,
    markdown_plain,
    markdown_table,
    markdown_text,
    plot_label,
    styled,
    xml_chars,
    xml_text,
)
from evalkit.report.tables import (
    ablation_table,
    failure_counts,
    failures_by_kind,
    ranking_grid,
    style_ablation,
)

# Payloads of every family the report must show as text. "evk" marks each one.
PAYLOADS = (
    '<script>document.title="evk-1"</script>',
    "<img src=x onerror=\"document.title='evk-2'\">",
    "<a href=\"javascript:document.title='evk-3'\">evk-3</a>",
    "</td></tr></table><b>evk-4</b>",
    "| --- | evk-5 |",
    '=HYPERLINK("http://evil.example/x","evk-6")',
    "![evk-7](http://evil.example/x.png)",
    "[evk-8](javascript:alert(1))",
    "**evk-9** _evk-10_ `evk-11` ~~evk-12~~",
    "``` evk-13 ` \\` \\\\| a\\b",
    "# evk-14",
    "- evk-15\n\n1. evk-16\n> evk-17\n    evk-18",
    "line one\nline two\r\nline three\u2028four",
    "@evk-19 please look, see #123 and user@example.com",
    "https://evil.example/evk-20 www.evil.example <https://evil.example>",
    "$\\frac{evk}{21}$ $$x$$ \\(y\\)",
    "&amp; &lt;b&gt; &#60;evk-22&#62; &copy",
    "<!-- evk-23 --> <![CDATA[ evk-24 ]]> <?php evk-25 ?>",
    "{{ 'evk-26' }} {% raw %}",
    "<style>body{display:none}</style><svg onload=alert(1)>",
    "evk-27\ttab | pipe \\| escaped pipe",
    "<details open ontoggle=alert(1)>evk-28",
    "+SUM(1,1) -2+3 @SUM(1) \t=1",
)
HOSTILE_NAME = "<img src=x onerror=\"document.title='evk-name'\">|**evk**|$\\frac{1$"


def _visible(text: str) -> str:
    """What a reader sees: word joiners dropped, white-space runs as one space."""
    return re.sub(r"\s+", " ", text.replace(WORD_JOINER, "")).strip()


def _parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


def _attribute_values(element: Tag) -> list[str]:
    values: list[str] = []
    for value in element.attrs.values():
        values.extend(value if isinstance(value, list) else [value])
    return values


def _assert_no_markup_from(soup: BeautifulSoup | Tag, allowed: set[str]) -> None:
    """No element outside ``allowed``, no event handler, no attribute made from a payload."""
    for element in soup.find_all(True):
        assert element.name in allowed, element.name
        for name, value in element.attrs.items():
            assert not name.lower().startswith("on"), (element.name, name)
            joined = " ".join(value) if isinstance(value, list) else value
            assert "evk" not in joined, (element.name, name, joined)
            assert "javascript:" not in joined.lower(), (element.name, name, joined)


# --- HTML ---------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
def test_html_text_is_text_in_a_cell_and_an_attribute(payload: str) -> None:
    soup = _parse(
        f'<table><tr><td title="{html_text(payload)}">{html_text(payload)}</td></tr></table>'
    )
    cells = soup.find_all("td")
    assert len(cells) == 1
    assert cells[0].find(True) is None  # no element inside the cell
    expected = payload.replace("\r\n", "\n").replace("\r", "\n")  # HTML's newline rule
    assert cells[0].get_text() == expected
    assert cells[0].attrs == {"title": expected}  # the one attribute, whole
    del cells[0]["title"]
    body = soup.body
    assert body is not None
    _assert_no_markup_from(body, {"table", "tbody", "tr", "td"})


def test_styled_escapes_cells_labels_names_and_objects() -> None:
    frame = pd.DataFrame(
        {HOSTILE_NAME: list(PAYLOADS[:3]), "objects": [[PAYLOADS[0]], (PAYLOADS[1],), None]},
        index=pd.Index(list(PAYLOADS[3:6]), name=PAYLOADS[1]),
    )
    frame.columns.name = PAYLOADS[0]
    before = frame.copy()
    soup = _parse(styled(frame, precision=2, na_rep="n/a").to_html())
    _assert_no_markup_from(soup, {"html", "head", "body", "style", *_TABLE_TAGS})
    text = _visible(soup.get_text())
    for shown in (HOSTILE_NAME, *PAYLOADS[:6], str([PAYLOADS[0]]), str((PAYLOADS[1],))):
        assert _visible(shown) in text
    pd.testing.assert_frame_equal(frame, before)  # the input is not modified


def test_pandas_styler_alone_does_not_escape() -> None:
    """Why styled() exists: a Styler without escape="html" emits the markup itself."""
    frame = pd.DataFrame({"x": [PAYLOADS[1]]}, index=pd.Index(["r"], name=PAYLOADS[1]))
    assert _parse(frame.style.to_html()).find("img") is not None
    styler = frame.style.format(escape="html").format_index(escape="html", axis=0)
    assert _parse(styler.to_html()).find("img") is not None  # the index name is not escaped
    assert _parse(styled(frame).to_html()).find("img") is None


def test_styled_keeps_numbers_and_hides_the_index() -> None:
    frame = pd.DataFrame({"a": [0.123456, np.nan], "n": [1, 2], "s": ["x", "y"]})
    soup = _parse(styled(frame, precision=3, na_rep="-", hide_index=True).to_html())
    rows = [[c.get_text() for c in tr.find_all("td")] for tr in soup.find_all("tr")[1:]]
    assert rows == [["0.123", "1", "x"], ["-", "2", "y"]]
    table = soup.find("table")
    assert isinstance(table, Tag)
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set(table["class"])  # MathJax skips it


_TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td", "caption"}


# --- Markdown -----------------------------------------------------------------------------


def _one_paragraph(html: str) -> Tag:
    soup = _parse(html)
    body = soup.body
    assert body is not None
    paragraphs = body.find_all(True)
    assert [p.name for p in paragraphs] == ["p"], html
    return paragraphs[0]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_text_renders_as_exactly_the_text(payload: str) -> None:
    source = f"before {markdown_text(payload)} after"
    assert "\n" not in source
    expected = _visible(f"before {payload} after")
    renderers = {
        "nbconvert": markdown2html_mistune,  # what the report's HTML export uses
        "markdown-it": MarkdownIt("commonmark").enable(["table", "strikethrough"]).render,
        "mistune+gfm": mistune.create_markdown(
            escape=False, plugins=["table", "strikethrough", "url"]
        ),
    }
    for name, render in renderers.items():
        paragraph = _one_paragraph(str(render(source)))
        assert _visible(paragraph.get_text()) == expected, name
        assert paragraph.find(True) is None, name  # no element: no link, image, code, emphasis


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("where", ["line start", "inline"])
def test_markdown_plain_renders_as_exactly_the_text(payload: str, where: str) -> None:
    # issue 34: the CI summary escapes only what Markdown needs, and stays just as safe
    text = payload if where == "line start" else f"before {payload} after"
    source = markdown_plain(text)
    assert "\n" not in source
    renderers = {  # what renders a CI summary (not nbconvert's math: that is markdown_text's)
        "markdown-it": MarkdownIt("commonmark").enable(["table", "strikethrough"]).render,
        "mistune+gfm": mistune.create_markdown(
            escape=False, plugins=["table", "strikethrough", "url"]
        ),
    }
    for name, render in renderers.items():
        html = str(render(source))
        if not _visible(text).strip():
            continue  # nothing visible: no paragraph either
        paragraph = _one_paragraph(html)
        assert _visible(paragraph.get_text()) == _visible(text).strip(), name
        assert paragraph.find(True) is None, name


def test_markdown_plain_reads_raw_and_markdown_text_does_not() -> None:
    line = "my-system RR@10 (zh) >= 0.7800: actual 0.1219; worst q-zh-001, q-zh-018"
    assert markdown_plain(line) == line
    assert markdown_plain("- 1. # x") == f"\\- 1. #{WORD_JOINER} x"
    assert markdown_text(line) != line  # every punctuation character escaped
    table = markdown_table(["measure", "threshold"], [["RR@10", ">= 0.78"]], plain=True)
    assert table.splitlines()[2] == "| RR@10 | >= 0.78 |"


def test_markdown_text_cannot_mention_link_or_reference() -> None:
    source = markdown_text("@octocat hi @team/x #42 see www.github.com and https://evil.example")
    rendered = _parse(mistune.create_markdown(plugins=["url"])(source)).get_text()
    # GitHub's mention, issue reference and autolink triggers, which the joiner interrupts:
    assert not re.search(r"(?<![\w`])@[A-Za-z0-9]", rendered)
    assert not re.search(r"(?<![\w])#\d", rendered)
    assert "www." not in rendered
    assert "://" not in rendered
    assert _visible(rendered) == (
        "@octocat hi @team/x #42 see www.github.com and https://evil.example"
    )


def _tables(html: str) -> list[list[list[Tag]]]:
    """Rows of cells (th or td) of every table in ``html``."""
    soup = _parse(html)
    tables = soup.find_all("table")
    return [[row.find_all(["th", "td"]) for row in t.find_all("tr")] for t in tables]


def test_markdown_table_keeps_its_shape_and_every_cell_as_text() -> None:
    rows = [(f"r{i}", payload, HOSTILE_NAME) for i, payload in enumerate(PAYLOADS)]
    source = markdown_table(["id", "payload", HOSTILE_NAME], rows)
    assert source.count("\n") == len(rows) + 2  # header, delimiter row, one line per row
    for render in (
        MarkdownIt("commonmark").enable(["table", "strikethrough"]).render,
        mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"]),
    ):
        tables = _tables(str(render(source)))
        assert len(tables) == 1
        (table,) = tables
        assert len(table) == len(rows) + 1
        expected = [["id", "payload", HOSTILE_NAME], *[list(r) for r in rows]]
        for cells, want in zip(table, expected, strict=True):
            assert [_visible(c.get_text()) for c in cells] == [_visible(w) for w in want]
            assert all(c.find(True) is None for c in cells)


def test_markdown_table_refuses_a_ragged_row() -> None:
    with pytest.raises(ValueError, match="row 2 has 1 cells, expected 2"):
        markdown_table(["a", "b"], [("1", "2"), ("3",)])


def test_unescaped_payloads_do_form_markup() -> None:
    """The renderers above are not inert by themselves: raw payloads become elements."""
    raw = markdown2html_mistune(f"x {PAYLOADS[1]} {PAYLOADS[6]} **b**")
    soup = _parse(raw)
    assert soup.find("img", attrs={"onerror": True}) is not None
    assert soup.find("strong") is not None
    raw_table = markdown_table(["a"], [("x",)]).replace("x", "x | y")
    assert len(_tables(MarkdownIt("commonmark").enable("table").render(raw_table))[0][1]) == 1


# --- XML ----------------------------------------------------------------------------------

_XML_HOSTILE = (*PAYLOADS, "nul\x00 escape\x1b bell\x07 \ud800 \ufffe ok\U0001f600", "]]>")


@pytest.mark.parametrize("payload", _XML_HOSTILE)
def test_xml_text_makes_valid_xml_without_live_markup(payload: str) -> None:
    document = (
        f'<testsuite name="{xml_text(payload)}"><testcase name="{xml_text(payload)}">'
        f'<failure message="{xml_text(payload)}">{xml_text(payload)}</failure>'
        "</testcase></testsuite>"
    )
    root = ET.fromstring(document)
    assert [e.tag for e in root.iter()] == ["testsuite", "testcase", "failure"]
    expected = xml_chars(payload)
    failure = root.find("testcase/failure")
    assert failure is not None
    # XML normalizes line breaks in text and every white-space character in attributes.
    assert failure.text == expected.replace("\r\n", "\n").replace("\r", "\n")
    assert failure.get("message") == re.sub(r"\r\n|[\t\n\r]", " ", expected)


def test_xml_chars_is_what_elementtree_needs() -> None:
    bad = "a\x00b\x1bc\ufffed"
    element = ET.Element("failure", message=bad)
    element.text = bad
    with pytest.raises(ET.ParseError):  # ElementTree writes what it cannot read back
        ET.fromstring(ET.tostring(element, encoding="unicode"))
    element = ET.Element("failure", message=xml_chars(bad))
    element.text = xml_chars(bad)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.text == parsed.get("message") == "a\ufffdb\ufffdc\ufffdd"


# --- CSV ----------------------------------------------------------------------------------


def test_csv_cell_neutralizes_formulas_and_keeps_other_values() -> None:
    # Triggers from OWASP's "CSV Injection" page: = + - @ tab carriage return.
    values: list[object] = [
        '=HYPERLINK("http://evil.example","x")',
        "+SUM(1,1)",
        "-2+3",
        "@SUM(1)",
        "\t=1",
        "\r=1",
        "＝1+1",  # full-width equals sign, read as a formula by some spreadsheets
        "plain text",
        "a=b",
        -2,
        3.5,
        None,
        True,
    ]
    buffer = io.StringIO()
    csv.writer(buffer).writerow([csv_cell(v) for v in values])
    (row,) = csv.reader(io.StringIO(buffer.getvalue()))
    for original, cell in zip(values, row, strict=True):
        if isinstance(original, str) and original[:1] in "=+-@\t\r＝":
            assert cell == "'" + original
        else:
            assert cell == ("" if original is None else str(original))


# --- plot labels --------------------------------------------------------------------------


def _draw(figure: Any) -> None:
    """Render ``figure`` to PNG (Agg), as Jupyter's inline backend does."""
    figure.savefig(io.BytesIO(), format="png")


@pytest.mark.parametrize("name", ["$x$", "$\\frac{1$", "a $b$ c $d", "\\$5 and $6$", "plain"])
def test_plot_label_is_never_mathtext(name: str) -> None:
    from matplotlib.figure import Figure

    label = plot_label(name)
    assert not matplotlib.cbook.is_math_text(label)
    figure = Figure()
    text = figure.text(0, 0, label)
    _draw(figure)  # a mathtext parse error would raise here
    assert text.get_text() == label


def test_raw_dollar_names_are_mathtext() -> None:
    """Without plot_label the same names are parsed (and one of them cannot be drawn)."""
    from matplotlib.figure import Figure

    assert matplotlib.cbook.is_math_text("$x$")
    figure = Figure()
    figure.text(0, 0, "$\\frac{1$")
    with pytest.raises(ValueError, match="frac"):
        _draw(figure)


HOSTILE_SYSTEMS = [HOSTILE_NAME, "<b>evk</b> $y$", "_underscore-first", "lexical"]


def _per_query(systems: list[str]) -> pd.DataFrame:
    rows = []
    for s, system in enumerate(systems):
        for q in range(6):
            for measure in ("nDCG@10", "NoAnswerFP"):
                value = ((q * 7 + s * 3) % 5) / 4
                rows.append((system, f"q{q}", measure, value, "en" if q % 2 else "zh", True))
    return pd.DataFrame(
        rows, columns=["system", "query_id", "measure", "value", "language", "answerable"]
    )


def test_figures_draw_hostile_names_as_text() -> None:
    per_query = _per_query(HOSTILE_SYSTEMS)
    latency = pd.DataFrame({"system": HOSTILE_SYSTEMS * 4, "latency_ms": np.linspace(1.0, 9.0, 16)})
    figure = latency_figure(latency, systems=HOSTILE_SYSTEMS)
    _draw(figure)
    box_axes, cdf_axes = figure.axes
    labels = [t.get_text() for t in box_axes.get_yticklabels()]
    assert labels == [plot_label(s) for s in HOSTILE_SYSTEMS]
    legend = cdf_axes.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [plot_label(s) for s in HOSTILE_SYSTEMS]
    differences = paired_difference_figure(
        per_query, base="lexical", systems=HOSTILE_SYSTEMS, measures=["nDCG@10"]
    )
    _draw(differences)
    titles = [axes.get_title() for axes in differences.axes]
    assert all(not matplotlib.cbook.is_math_text(t) for t in titles)
    assert titles[0].startswith(plot_label(HOSTILE_NAME) + " − lexical")


def test_log_scale_latency_ticks_are_plain_numbers() -> None:
    # 0.05 ms to 800 ms spans more than LOG_SPREAD: both axes are logarithmic
    latency = pd.DataFrame({"system": ["a", "b"] * 8, "latency_ms": np.geomspace(0.05, 800, 16)})
    figure = latency_figure(latency, systems=["a", "b"])
    _draw(figure)
    for axes in figure.axes:
        assert axes.get_xscale() == "log"
        labels = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
        # the decades from 0.1 to 100 ms at least, written as numbers, not as mathtext powers
        assert {"0.1", "1", "10", "100"} <= set(labels), labels
        assert not any(matplotlib.cbook.is_math_text(label) for label in labels)


# --- the report's tables with hostile names -----------------------------------------------


def test_report_tables_with_hostile_system_names_stay_text() -> None:
    per_query = _per_query(HOSTILE_SYSTEMS)
    measures = ["nDCG@10", "NoAnswerFP"]
    allowed = {"html", "head", "body", "style", *_TABLE_TAGS}
    overall = ablation_table(
        per_query, systems=HOSTILE_SYSTEMS, measures=measures, n_resamples=50, seed=1
    )
    by_language = ablation_table(
        per_query, systems=HOSTILE_SYSTEMS, measures=measures, by=["language"], n_resamples=50
    )
    for table in (overall, by_language):
        soup = _parse(style_ablation(table, caption=PAYLOADS[0]).to_html())
        _assert_no_markup_from(soup, allowed)
        text = _visible(soup.get_text())
        assert _visible(HOSTILE_NAME) in text
        assert _visible(PAYLOADS[0]) in text  # the caption, as text

    failures = pd.DataFrame(
        {
            "system": [HOSTILE_NAME, HOSTILE_SYSTEMS[1], HOSTILE_NAME],
            "query_id": ["q:_em_:1", "q-2", "q-2"],
            "language": ["en", "en", "en"],
            "kind": ["missed-relevant", "answered-no-answer", "missed-relevant"],
            "chunk_ids": ["c1", "c2", "c3"],
        }
    )
    rankings = pd.DataFrame(
        {
            "system": HOSTILE_SYSTEMS[:3],
            "query_id": ["q-2"] * 3,
            "chunk_id": ["c:_em_:1", "c-2", "c-3"],
            "rank": [1, 1, 2],
            "grade": [3, 0, 1],
        }
    )
    for frame in (
        failure_counts(failures, systems=HOSTILE_SYSTEMS),
        failures_by_kind(failures, systems=HOSTILE_SYSTEMS),
        ranking_grid(rankings, "q-2", systems=HOSTILE_SYSTEMS, k=3),
    ):
        soup = _parse(styled(frame).to_html())
        _assert_no_markup_from(soup, allowed)
        assert _visible(HOSTILE_NAME) in _visible(soup.get_text())
        # Markdown-significant IDs are not emphasis either (the HTML has no <em>).
    raw = failure_counts(failures, systems=HOSTILE_SYSTEMS).style.to_html()
    assert _parse(raw).find("img") is not None  # what styled() prevents


# --- Content-Security-Policy --------------------------------------------------------------


def test_export_html_carries_a_script_free_content_security_policy() -> None:
    nb = new_notebook(
        cells=[
            new_code_cell(
                "x",
                outputs=[new_output("display_data", data={"text/html": "<p>hi</p>"})],
            )
        ]
    )
    soup = _parse(export_html(nb))
    head = soup.head
    assert head is not None
    policies = head.find_all("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert [m["content"] for m in policies] == [CONTENT_SECURITY_POLICY]
    # The policy precedes every style, script and link, so it governs all of them.
    order = soup.find_all(True)
    governed = [order.index(e) for e in soup.find_all(["style", "script", "link"])]
    assert governed
    assert order.index(policies[0]) < min(governed)
    directives = {part.split()[0]: part.split()[1:] for part in CONTENT_SECURITY_POLICY.split(";")}
    assert directives["default-src"] == ["'none'"]
    assert directives["script-src"] == ["'none'"]
    assert directives["img-src"] == ["data:"]
    assert directives["style-src"] == ["'unsafe-inline'"]
    assert soup.find("script") is None  # nbconvert's template adds no script of its own


# --- the notebook shows user strings through evalkit.report.render only --------------------------

_SAFE_FORMATTED = {"markdown_text", "len"}  # f-string parts of a Markdown(...) text
_SAFE_NAMES = {"verdict"}  # one of two literal strings chosen in the notebook


def _shown_safely(node: ast.expr) -> bool:
    """A displayed value: a styled() table, a Markdown(...) text, a figure, the ablation view."""
    if isinstance(node, ast.IfExp):
        return _shown_safely(node.body) and _shown_safely(node.orelse)
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    first = node.args[0] if node.args else None
    if isinstance(func, ast.Attribute) and func.attr == "draw" and isinstance(first, ast.Attribute):
        # a figure of evalkit.report.plots, drawn here or handed over (ReportHandover.draw)
        return isinstance(first.value, ast.Name) and first.value.id == "plots"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        # figures (labels through plot_label) and the ablation view (styled() inside)
        # and the verdict's coloured changes (styled() inside)
        return func.value.id == "plots" or ast.unparse(func) in {
            "report_tables.style_ablation",
            "verdict_view.style_changes",
        }
    if isinstance(func, ast.Name) and func.id == "HTML":  # markup of escaped parts only
        # the verdict badge: fixed words and counts, escaped by verdict_badge itself
        if first is not None and ast.unparse(first).startswith("verdict_view.verdict_badge("):
            return True
        # the first screen: every name and number escaped by first_screen itself
        if first is not None and ast.unparse(first).startswith("verdict_view.first_screen("):
            return True
        return _markdown_text_is_escaped(node)
    return isinstance(func, ast.Name) and func.id in {"styled", "Markdown"}


def _is_styled_html(node: ast.expr) -> bool:
    """``styled(...).to_html()``: HTML whose every cell and label is escaped."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_html"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "styled"
    )


def _markdown_text_is_escaped(call: ast.Call) -> bool:
    (argument,) = call.args
    if isinstance(argument, ast.Constant):
        return True
    if (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Name)
        and argument.func.id == "markdown_text"
    ):
        return True  # Markdown(markdown_text(...)): the whole text is escaped
    if not isinstance(argument, ast.JoinedStr):
        return False
    for part in argument.values:
        if isinstance(part, ast.FormattedValue):
            value = part.value
            called = isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            if called and value.func.id in _SAFE_FORMATTED:  # type: ignore[union-attr]
                continue
            if isinstance(value, ast.Name) and value.id in _SAFE_NAMES:
                continue
            if _is_styled_html(value):  # an escaped table inside HTML (a <details> block)
                continue
            return False
    return True


def test_the_report_notebook_shows_user_strings_only_through_render() -> None:
    """Every table is styled(), every Markdown text escapes its parts, no bare .style."""
    notebook = nbformat.read(DEFAULT_REPORT_NOTEBOOK, as_version=4)
    displayed = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith("%")
        )
        tree = ast.parse(source)
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.Attribute) and node.attr == "style"), index
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == "display":
                    displayed += 1
                    assert _shown_safely(node.args[0]), (index, ast.unparse(node))
                if node.func.id == "Markdown":
                    assert _markdown_text_is_escaped(node), (index, ast.unparse(node))
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and not (
            isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Name)
            and last.value.func.id == "display"
        ):
            assert _shown_safely(last.value), (index, ast.unparse(last))
    assert displayed >= 15  # the check saw the notebook's displays


def test_styled_left_aligns_text_columns_only() -> None:
    frame = pd.DataFrame({"system": ["lexical", "hybrid"], "mean": [0.5, 0.25]})
    html = styled(frame).to_html()
    rules = re.findall(r"([^{}]*)\{[^}]*text-align: left", html)
    columns = {c for selectors in rules for c in re.findall(r"td\.col(\d+)", selectors)}
    assert columns == {"0"}  # column 0 (text) only, pandas 3's str dtype included
    assert len(rules) == 2  # one rule for the cells of the column and one for its heading
    assert 'id="T_' not in html.split("<table", 1)[1].split(">", 1)[1]  # no id on plain cells
