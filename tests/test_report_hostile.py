"""The real report (``evalkit report``: papermill, nbconvert) on hostile input stays inert.

Two executions, shared by module-scoped fixtures:

- **fixture text**: ``tests/data/hostile-fixture`` (valid; every text field holds HTML,
  JavaScript, Markdown and spreadsheet-formula payloads) with ``redact = False`` and
  ``--allow-unredacted``, the probes of ``tests/data/hostile-probes`` (hostile symbols), and a
  user system that finds nothing, so every answerable query reaches the drill-down.
- **names**: the default, redacted report of a user system whose *name* is markup, as the base
  system, with gates and a baseline over it, on a generated random-text fixture (the leak scan
  would refuse the hostile fixture's text, which shares pieces with the name). Skipped once
  system names are refused at evaluation (ID validation): then no such name reaches a report.

The exported HTML is parsed with html5lib (the WHATWG algorithm browsers use). A payload is
marked by ``evk``: no element, attribute or URL may carry it, and each shown text must appear
verbatim as text. With Chromium installed, a browser opens the pages and reads
``document.title`` back (a payload that runs sets it).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup, Tag
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_code_cell, new_notebook, new_output

from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.fixtures import dump_fixture, generate_fixture, load_fixture
from evalkit.gates import write_baseline
from evalkit.report import export_html
from evalkit.report.render import CONTENT_SECURITY_POLICY, WORD_JOINER
from evalkit.run import evaluate

DATA = Path(__file__).resolve().parent / "data"
HOSTILE_FIXTURE = DATA / "hostile-fixture"
HOSTILE_PROBES = DATA / "hostile-probes"
MARKER = "evk"
FAST_RESAMPLES = "200"
TITLE = "evalkit report: hostile-markup-v1"
NAMES_TITLE = "evalkit report: generated-s11"  # generate_fixture(11, ...)
HOSTILE_NAME = (
    "<img src=x onerror=\"document.title='evk-name'\"><script>document.title='evk-name'</script>"
    "|**evk**| `evk` $\\frac{evk$ [evk](javascript:void(0)) @evk"
)
SYSTEMS_MODULE = "evk_hostile_systems"
SYSTEMS_SOURCE = f'''
"""User systems of tests/test_report_hostile.py (written to a temporary directory)."""
from evalkit import FunctionRetriever

HOSTILE_NAME = {HOSTILE_NAME!r}


def _nothing(text, k):
    return []


def nothing():
    return FunctionRetriever(_nothing, name="finds-nothing")


def hostile():
    return FunctionRetriever(_nothing, name=HOSTILE_NAME)
'''
GATES_YAML = """\
schema: evalkit.gates/1
absolute:
  - id: gate:_em_:floor
    system: lexical
    measure: RR@10
    min: 0.001
baseline:
  path: baseline.json
  tolerance: 1.0
"""
# Where escaped payload text may legitimately sit: table cells, Markdown paragraphs, text output.
TEXT_CONTAINERS = {"td", "th", "p", "pre"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster", "srcset", "background"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _visible(text: str) -> str:
    """What a reader sees: word joiners dropped, white-space runs as one space."""
    return re.sub(r"\s+", " ", text.replace(WORD_JOINER, "")).strip()


def _own_scripts() -> list[str]:
    """The ``<script>`` elements nbconvert's export puts in a page by itself."""
    soup = BeautifulSoup(export_html(new_notebook()), "html5lib")
    return [str(s) for s in soup.find_all("script")]


def _assert_no_live_payload(soup: BeautifulSoup | Tag, where: str) -> None:
    """No event handler, no attribute or URL from a payload, no element made of payload text."""
    for element in soup.find_all(True):
        for name, value in element.attrs.items():
            assert not name.lower().startswith("on"), (where, element.name, name)
            for item in value if isinstance(value, list) else [value]:
                if item.startswith("data:image/png;base64,"):  # a figure: base64 of pixels,
                    continue  # which may spell the marker by chance
                assert MARKER not in item, (where, element.name, name, item)
                assert "javascript:" not in item.lower().replace(" ", ""), (where, name, item)
                if name.lower() in URL_ATTRIBUTES:  # the page's own: anchors, embedded images
                    assert item.startswith(("#", "data:image/")), (where, name, item)
    for string in soup.find_all(string=lambda s: MARKER in s):
        parent = string.parent
        assert parent is not None
        assert parent.name in TEXT_CONTAINERS, (where, parent.name, str(string)[:80])
    # The notebook's own Markdown makes no table, image or link: one there came from a payload.
    for markdown in soup.select('[data-mime-type="text/markdown"]'):
        assert markdown.find(["table", "img"]) is None
        assert all(a.get("class") == ["anchor-link"] for a in markdown.find_all("a"))


def _assert_inert(html: str, notebook: str, shown: Iterable[str], title: str) -> None:
    """The whole check of one exported report and its notebook (see the module docstring)."""
    soup = BeautifulSoup(html, "html5lib")
    assert [str(s) for s in soup.find_all("script")] == _own_scripts()
    assert soup.title is not None
    assert soup.title.get_text() == title
    metas = soup.find_all("meta", attrs={"http-equiv": True})
    assert [(m["http-equiv"], m["content"]) for m in metas] == [
        ("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    ]
    assert soup.find_all(["iframe", "object", "embed", "form", "svg", "base", "link"]) == []
    _assert_no_live_payload(soup, "HTML")
    text = _visible(soup.get_text())
    for item in shown:
        assert _visible(item) in text, item[:80]
    # The executed notebook's own outputs, as JupyterLab would render them.
    for cell in nbformat.reads(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data:
                fragment = BeautifulSoup(data["text/html"], "html5lib")
                assert fragment.find("script") is None
                _assert_no_live_payload(fragment, "notebook text/html")
            if "text/markdown" in data:
                rendered = BeautifulSoup(markdown2html_mistune(data["text/markdown"]), "html5lib")
                assert rendered.find(["script", "img", "table"]) is None
                assert all(a.get("class") == ["anchor-link"] for a in rendered.find_all("a"))
                _assert_no_live_payload(rendered, "notebook text/markdown")


@contextlib.contextmanager
def _importable_systems(directory: Path) -> Iterator[None]:
    """``evk_hostile_systems`` importable here and in the report's kernel (``PYTHONPATH``)."""
    (directory / f"{SYSTEMS_MODULE}.py").write_text(SYSTEMS_SOURCE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(directory))
        previous = os.environ.get("PYTHONPATH")
        patch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(directory), previous) if p))
        try:
            yield
        finally:
            sys.modules.pop(SYSTEMS_MODULE, None)


def _report(workspace: Path, *argv: str) -> tuple[Path, str, str]:
    """``evalkit report ARGV --output reports/report.html`` run in ``workspace``."""
    previous = os.getcwd()
    os.chdir(workspace)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["report", *argv, "--output", "reports/report.html"])
        assert code == 0, out.getvalue()
    finally:
        os.chdir(previous)
    html_path = workspace / "reports" / "report.html"
    notebook = (workspace / "reports" / "report.ipynb").read_text(encoding="utf-8")
    return html_path, html_path.read_text(encoding="utf-8"), notebook


@pytest.fixture(scope="module")
def text_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """The unredacted report of the hostile fixture and probes: (html path, html, ipynb)."""
    root = tmp_path_factory.mktemp("hostile-text")
    with _importable_systems(root):
        yield _report(
            root,
            str(HOSTILE_FIXTURE),
            *("-p", "systems", f"lexical,{SYSTEMS_MODULE}:nothing"),
            *("-p", "base_system", "lexical"),
            *("-p", "redact", "false"),
            *("-p", "n_resamples", FAST_RESAMPLES),
            *("-p", "worst", "10"),
            *("-p", "probes", str(HOSTILE_PROBES)),
            "--allow-unredacted",
        )


@pytest.fixture(scope="module")
def names_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """The redacted report with a markup-named user system as the base, gates and baseline."""
    root = tmp_path_factory.mktemp("hostile-names")
    fixture_dir = root / "fixture"
    dump_fixture(generate_fixture(11, documents=8, queries=8), fixture_dir)
    (fixture_dir / "gates.yaml").write_text(GATES_YAML, encoding="utf-8")
    systems = ["lexical", f"{SYSTEMS_MODULE}:hostile"]
    with _importable_systems(root):
        try:
            evaluation = evaluate(load_fixture(fixture_dir), systems, k=10, repeats=2)
        except EvalkitError as error:  # names validated as IDs: no such name reaches a report
            pytest.skip(f"a markup system name is refused at evaluation ({type(error).__name__})")
        assert HOSTILE_NAME in evaluation.systems
        write_baseline(evaluation.to_report(), "baseline.json", workspace=fixture_dir)
        yield _report(
            root,
            str(fixture_dir),
            *("-p", "systems", ",".join(systems)),
            *("-p", "base_system", HOSTILE_NAME),
            *("-p", "n_resamples", FAST_RESAMPLES),
            *("-p", "baseline", str(fixture_dir / "baseline.json")),
            *("-p", "probes", ""),
        )


def _shown_fixture_texts() -> list[str]:
    """Query and chunk texts of the hostile fixture (each short enough to be shown whole)."""
    fixture = load_fixture(HOSTILE_FIXTURE)
    texts = [c.text for c in fixture.chunks] + [q.text for q in fixture.queries]
    assert all(len(t) <= 400 for t in texts)  # report_tables.display_text cuts at 400
    return texts


def _probe_symbols() -> list[str]:
    from evalkit.probes import get_target, load_probes

    target = get_target("stdlib")
    probes = load_probes(HOSTILE_PROBES, tools=target.tools.names())
    return [symbol for probe in probes for symbol in probe.expected.symbols]


@pytest.mark.slow
def test_hostile_fixture_text_renders_as_text(text_report: tuple[Path, str, str]) -> None:
    _path, html, notebook = text_report
    assert "DO NOT PUBLISH" in html
    _assert_inert(html, notebook, [*_shown_fixture_texts(), *_probe_symbols()], TITLE)


@pytest.mark.slow
def test_hostile_system_and_gate_names_render_as_text(
    names_report: tuple[Path, str, str],
) -> None:
    _path, html, notebook = names_report
    assert "Redacted report" in html
    _assert_inert(html, notebook, [HOSTILE_NAME, "gate:_em_:floor"], NAMES_TITLE)
    soup = BeautifulSoup(html, "html5lib")
    visible = _visible(soup.get_text())
    assert "Gates: all passed" in visible
    # The name is in the tables of every section that lists systems, always as text.
    cells = [c for c in soup.find_all(["td", "th"]) if _visible(HOSTILE_NAME) in _visible(c.text)]
    assert len(cells) >= 10


# --- in a browser (Chromium, when installed) ---------------------------------------------


def _browser_title(page: Path) -> str:
    """``document.title`` after Chromium opened ``page`` and ran its timers and events."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=3000",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    title = BeautifulSoup(done.stdout, "html5lib").title
    assert title is not None, done.stdout[:200]
    return title.get_text()


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


@pytest.mark.slow
@needs_chromium
def test_browser_opens_the_hostile_reports_with_their_title(
    text_report: tuple[Path, str, str], names_report: tuple[Path, str, str]
) -> None:
    assert _browser_title(text_report[0]) == TITLE
    assert _browser_title(names_report[0]) == NAMES_TITLE


@pytest.mark.slow
@needs_chromium
def test_browser_csp_blocks_markup_an_escaping_bug_lets_through(tmp_path: Path) -> None:
    """An output that is raw markup (as an escaping bug would make) runs only without the CSP."""
    live = (
        "<img src=x onerror=\"document.title='evk-ran'\"><script>document.title='evk-ran'</script>"
    )
    nb = new_notebook(
        cells=[new_code_cell("", outputs=[new_output("display_data", data={"text/html": live})])]
    )
    html = export_html(nb, title="csp check")
    protected = tmp_path / "protected.html"
    protected.write_text(html, encoding="utf-8")
    unprotected = tmp_path / "unprotected.html"
    meta = re.compile(r'<meta[^>]*http-equiv="Content-Security-Policy"[^>]*>')
    assert len(meta.findall(html)) == 1
    unprotected.write_text(meta.sub("", html), encoding="utf-8")
    assert _browser_title(unprotected) == "evk-ran"  # the check sees a payload that runs
    assert _browser_title(protected) == "csp check"


def test_the_hostile_fixture_is_valid_and_hostile_everywhere() -> None:
    assert main(["validate", str(HOSTILE_FIXTURE)]) == 0
    fixture = load_fixture(HOSTILE_FIXTURE)
    fields = [fixture.meta.description]
    fields += [d.title for d in fixture.documents]
    fields += [t for c in fixture.chunks for t in (c.title, c.text)]
    fields += [q.text for q in fixture.queries]
    families = {
        "HTML tag": r"</?[a-z]+[\s>]",
        "Markdown": r"\||`|\*\*|!\[|\]\(|(^|\n)# ",
        "formula": r"(^|\s|\")[=+@-][A-Za-z0-9(]",
    }
    for field in fields:
        for family, pattern in families.items():
            assert re.search(pattern, field), (family, field[:60])
        assert MARKER in field
    spans = [s.text for q in fixture.queries for j in q.judgments for s in j.spans]
    assert sum(bool(re.search(families["HTML tag"], s)) for s in spans) >= 2
