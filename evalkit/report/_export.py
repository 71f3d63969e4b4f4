"""Scrubbing an executed report notebook, and its offline HTML export.

- **Scrubbing** (:func:`scrub_notebook`): papermill's ``input_path``, ``output_path`` and
  ``environment_variables`` metadata are removed; every absolute path of this machine (working
  directory, notebook directory, home, temporary directory, Python prefixes) and any other
  absolute path under a common root (``/home``, ``/tmp``, ``/Users``, ...) is replaced by a
  placeholder such as ``<cwd>`` in cell sources, text outputs and metadata; an error output
  keeps its exception class name only (message and traceback may echo fixture text); stderr
  output is replaced by a one-line note. Image data is left untouched.
- **HTML** (:func:`export_html`): nbconvert's ``lab`` template without code cells, prompts or
  heading anchors, images embedded as ``data:`` URIs, and none of the template's scripts
  (require.js, MathJax, Mermaid, widgets) or its large stylesheet: a small inline stylesheet
  instead. nbconvert's closing BeautifulSoup pass over the page is skipped
  (:func:`_report_exporter_class`). The result loads
  nothing from the network (:func:`external_references` finds what would).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

import nbformat

from evalkit.report._nbformat import NBFORMAT
from evalkit.report._parameters import DEFAULT_REPORT_NOTEBOOK
from evalkit.report.render import CONTENT_SECURITY_POLICY
from evalkit.safety.privacy import OwnText, PrivateText

__all__ = [
    "STDERR_NOTE",
    "export_html",
    "external_references",
    "machine_paths",
    "report_own_text",
    "scrub_notebook",
    "warm_up_export",
]

STDERR_NOTE: Final = "[stderr output removed by evalkit: it may quote fixture text or paths]\n"

_PAPERMILL_PRIVATE_KEYS: Final = ("input_path", "output_path", "environment_variables")
# Absolute paths under these roots are machine-specific wherever they appear.
_COMMON_ROOTS: Final = (
    "home",
    "Users",
    "root",
    "tmp",
    "var/folders",
    "var/tmp",
    "private",
    "opt",
    "usr",
    "mnt",
    "srv",
    "work",
    "workspace",
    "builds",
    "runner",
    "github",
    "nix",
)
_ABSOLUTE_PATH_RE: Final = re.compile(
    r"(?<![\w/.~-])/(?:" + "|".join(re.escape(r) for r in _COMMON_ROOTS) + r")(?=[/\s'\"<>)\]]|$)"
    r"[^\s'\"<>)\]]*"
)
# (a backslash may be doubled: a path in a string literal's repr)
_WINDOWS_PATH_RE: Final = re.compile(
    r"(?<![\w])[A-Za-z]:\\{1,2}(?:[^\s'\"<>\\]+\\{1,2})*[^\s'\"<>\\]*"
)
_EXTERNAL_RE: Final = re.compile(
    r"""(?:\b(?:src|href|action|data|poster)\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|url\(\s*["']?\s*(?:https?:)?//|@import\s+["']?(?:url\()?\s*["']?\s*(?:https?:)?//"""
    r"""|\bhttps?://)""",
    re.IGNORECASE,
)
_TEXT_MIMES: Final = ("text/plain", "text/html", "text/markdown", "text/latex", "application/json")

_TEMPLATE_NAME: Final = "evalkit_report.html.j2"
_TEMPLATE: Final = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}
<meta http-equiv="Content-Security-Policy" content="{{ resources.evalkit_csp | e }}">
{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block data_png scoped -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}" alt="figure">
</div>
{%- endblock data_png -%}
{%- block notebook_css -%}
<style type="text/css">
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1f2328; background: #fff; line-height: 1.45; }
main { max-width: 1400px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .25rem; margin-top: 2rem; }
a.anchor-link { display: none; }
.jp-OutputArea-output { overflow-x: auto; margin: .5rem 0; }
.jp-OutputArea-output pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
       font-size: .85rem; }
table { border-collapse: collapse; font-size: .8rem; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .2rem .4rem; text-align: right;
         vertical-align: top; }
th.row_heading { white-space: nowrap; }
th { background: #f6f8fa; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
img { max-width: 100%; height: auto; }
.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"] { color: #8a6d3b; }
</style>
{%- endblock notebook_css -%}
"""


# --- scrubbing ----------------------------------------------------------------------------


def machine_paths(extra: Sequence[str | os.PathLike[str]] = ()) -> dict[str, str]:
    """Absolute paths of this machine -> placeholder, longest path first.

    Covers ``extra`` (as ``<path>``), the working directory (``<cwd>``), the repository
    (``<repo>``), the home directory (``<home>``), the temporary directory (``<tmp>``) and the
    Python prefixes (``<python>``), each also in its symlink-resolved form.
    """
    named: list[tuple[str, str]] = [(os.fspath(p), "<path>") for p in extra]
    named += [
        (os.getcwd(), "<cwd>"),
        (os.fspath(DEFAULT_REPORT_NOTEBOOK.parent.parent), "<repo>"),
        (os.path.expanduser("~"), "<home>"),
        (tempfile.gettempdir(), "<tmp>"),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        (sys.exec_prefix, "<python>"),
    ]
    found: dict[str, str] = {}
    for path, placeholder in named:
        for variant in {os.path.abspath(path), os.path.realpath(path)}:
            if len(variant) > 1 and variant not in found:
                found[variant] = placeholder
    return dict(sorted(found.items(), key=lambda item: (-len(item[0]), item[0])))


def scrub_notebook(
    nb: nbformat.NotebookNode, *, paths: Mapping[str, str] | None = None
) -> nbformat.NotebookNode:
    """A scrubbed copy of ``nb`` (rules in the module docstring); ``nb`` is not modified.

    ``paths`` maps absolute paths to placeholders (default :func:`machine_paths`).
    """
    replacements = machine_paths() if paths is None else dict(paths)
    result = copy.deepcopy(nb)
    papermill_meta = result.metadata.get("papermill", {})
    for key in _PAPERMILL_PRIVATE_KEYS:
        papermill_meta.pop(key, None)
    result.metadata.pop("widgets", None)
    result.metadata = _scrub_value(result.metadata, replacements)
    for cell in result.cells:
        cell.source = _scrub_text(cell.source, replacements)
        cell.metadata = _scrub_value(cell.metadata, replacements)
        if cell.cell_type != "code":
            cell.pop("attachments", None)
            continue
        cell.outputs = [_scrub_output(output, replacements) for output in cell.outputs]
    return result


def _scrub_output(
    output: nbformat.NotebookNode, replacements: Mapping[str, str]
) -> nbformat.NotebookNode:
    kind = output.get("output_type")
    if kind == "error":
        ename = str(output.get("ename", "Exception"))
        error: nbformat.NotebookNode = NBFORMAT.v4.new_output(
            "error",
            ename=ename,
            evalue="",
            traceback=[f"{ename} (message removed by evalkit: it may quote fixture text)"],
        )
        return error
    if kind == "stream":
        if output.get("name") == "stderr":
            stderr: nbformat.NotebookNode = NBFORMAT.v4.new_output(
                "stream", name="stderr", text=STDERR_NOTE
            )
            return stderr
        output.text = _scrub_text(output.text, replacements)
        return output
    if kind in ("display_data", "execute_result"):
        for mime in list(output.get("data", {})):
            if mime in _TEXT_MIMES or mime.endswith(("+json", "+xml")):  # +xml: SVG too
                output.data[mime] = _scrub_value(output.data[mime], replacements)
        output.metadata = _scrub_value(output.get("metadata", {}), replacements)
    return output


def _scrub_value(value: Any, replacements: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _scrub_text(value, replacements)
    if isinstance(value, dict):
        return type(value)(
            {k: _scrub_value(v, replacements) for k, v in value.items()}  # keeps NotebookNode
        )
    if isinstance(value, list):
        return [_scrub_value(v, replacements) for v in value]
    return value


def _scrub_text(text: str, replacements: Mapping[str, str]) -> str:
    for path, placeholder in replacements.items():
        if path in text:  # whole components only: /tmp/a is no part of /tmp/a-b
            boundary = re.compile(re.escape(path) + r"(?![\w.~-])")
            text = boundary.sub(placeholder.replace("\\", "\\\\"), text)  # literal
    text = _whole_paths(_ABSOLUTE_PATH_RE, text)
    return _whole_paths(_WINDOWS_PATH_RE, text)


_CLOSING: Final = {'"': '"', "'": "'", "`": "`", "(": ")"}
# words of a path after a space: a word holding a separator, then (when the path does not end
# in a file name yet) up to 4 more words, the last one ending in an extension
_CONTINUED_RE: Final = re.compile(r"(?: [^\s'\"<>()\[\]]*[/\\][^\s'\"<>()\[\]]*)*")
_NAME_TAIL_RE: Final = re.compile(r"(?: [^\s'\"<>/\\]+){0,3}? [^\s'\"<>/\\]*\.\w{1,8}(?![\w/\\])")
_EXTENSION_RE: Final = re.compile(r"\.\w{1,8}$")


def _whole_paths(pattern: re.Pattern[str], text: str) -> str:
    """``text`` with each path ``pattern`` finds replaced by ``<path>``, whole: a path after a
    quote or ``(`` runs to the closing one on its line; an unquoted one goes on across single
    spaces while the next word holds ``/`` or ``\\``, then up to 4 more words ending with the
    first one that ends in an extension (``/tmp/my runs/run one.trec``). Scrubbing a word too
    many is harmless; leaving one of a file name is not."""
    parts: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        if start < position:
            continue
        opening = text[start - 1] if start else ""
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        closing = text.find(_CLOSING[opening], end, line_end) if opening in _CLOSING else -1
        if closing >= 0:
            end = closing
        else:
            end = _CONTINUED_RE.match(text, end).end()  # type: ignore[union-attr]
            tail = _NAME_TAIL_RE.match(text, end)
            if tail is not None and not _EXTENSION_RE.search(text[start:end]):
                end = tail.end()
        parts += [text[position:start], "<path>"]
        position = end
    parts.append(text[position:])
    return "".join(parts)


# --- HTML ---------------------------------------------------------------------------------


def export_html(nb: nbformat.NotebookNode, *, title: str = "evalkit report") -> str:
    """Standalone HTML of ``nb``'s outputs and Markdown: no code, no prompts, no external
    resources; images are embedded as ``data:`` URIs. The page carries a Content-Security-Policy
    ``<meta>`` (:data:`evalkit.report.render.CONTENT_SECURITY_POLICY`: inline styles and ``data:``
    images only, no script), so markup that an escaping bug let through cannot run."""
    exporter = _exporter()
    prepared = copy.deepcopy(nb)
    prepared.metadata["title"] = title
    resources = {"metadata": {"name": title}, "evalkit_csp": CONTENT_SECURITY_POLICY}
    with _EXPORT_LOCK:  # one exporter per process, and an exporter is not thread-safe
        html, _ = exporter.from_notebook_node(prepared, resources=resources)
    return str(html)


_EXPORT_LOCK: Final = threading.Lock()


@functools.cache
def _exporter() -> Any:
    """The one exporter of this process (its compiled templates are kept for the next report)."""
    import jinja2

    return _report_exporter_class()(
        extra_loaders=[jinja2.DictLoader({_TEMPLATE_NAME: _TEMPLATE})],
        template_file=_TEMPLATE_NAME,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
        # no heading anchors: nbconvert writes them as <a ... />, which a browser reads as an
        # open <a> holding the rest of the page (its own BeautifulSoup pass, skipped here,
        # used to repair that)
        exclude_anchor_links=True,
    )


def warm_up_export(private: Sequence[PrivateText] = ()) -> None:
    """Import nbconvert and compile the report template (an empty notebook's export); index
    ``private`` for the leak scan."""
    from evalkit.safety.privacy import prepare_leak_scan

    with contextlib.suppress(Exception):  # export_html itself reports any real problem
        export_html(NBFORMAT.v4.new_notebook())
    prepare_leak_scan(private)


@functools.cache
def _report_exporter_class() -> type[Any]:
    """nbconvert's ``HTMLExporter`` without its closing BeautifulSoup pass.

    ``HTMLExporter.from_notebook_node`` re-parses the whole page to add a placeholder ``alt``
    to images and ``tabindex`` to outputs (about half of the export time of a report); the
    template below writes the ``alt`` text itself, and a page without script needs no
    ``tabindex``. Everything else is ``HTMLExporter``'s own code path.
    """
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters import highlight, widgetsdatatypefilter

    base: Any = HTMLExporter  # nbconvert's classes are partly typed
    template_exporter: Any = TemplateExporter
    Highlight2HTML: Any = highlight.Highlight2HTML
    WidgetsDataTypeFilter: Any = widgetsdatatypefilter.WidgetsDataTypeFilter

    class ReportExporter(base):  # type: ignore[misc]
        def from_notebook_node(
            self, nb: nbformat.NotebookNode, resources: dict[str, Any] | None = None, **kw: Any
        ) -> tuple[str, dict[str, Any]]:
            language = nb.metadata.get("language_info", {})
            lexer = language.get("pygments_lexer", language.get("name", None))
            highlight = self.filters.get(
                "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
            )
            resources = self._init_resources(resources)
            data_type = WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources
            )
            self.register_filter("highlight_code", highlight)
            self.register_filter("filter_data_type", data_type)
            html, resources = template_exporter.from_notebook_node(self, nb, resources, **kw)
            return str(html), resources

    return ReportExporter


def report_own_text(
    nb: Mapping[str, Any], *, title: str = "evalkit report", pages: bool = True
) -> OwnText:
    """What the leak scan of a report rendered from ``nb`` reads as written by the report, not
    by the fixture (:class:`evalkit.safety.privacy.OwnText`): the notebook's cells and
    skeleton and, with ``pages``, the HTML export of the notebook without its outputs (the
    template, pygments' and evalkit's stylesheets, the rendered Markdown cells). Outputs never
    count, nor the cell papermill injects."""
    if not pages:
        return OwnText.of_notebook(nb)
    bare = NBFORMAT.reads(json.dumps(nb), as_version=4)  # a copy, sources joined
    bare.cells = [
        cell for cell in bare.cells if "injected-parameters" not in cell.metadata.get("tags", [])
    ]
    for cell in bare.cells:
        cell.pop("attachments", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return OwnText.of_notebook(nb, pages=[export_html(bare, title=title)])


def external_references(html: str) -> list[str]:
    """Snippets of ``html`` that would load or link something over the network (``src=``,
    ``href=``, ``url()``, ``@import`` of ``http(s)://`` or ``//``, or any bare ``http(s)://``)."""
    return [html[m.start() : m.end() + 40] for m in _EXTERNAL_RE.finditer(html)]
