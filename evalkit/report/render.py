"""Escaping at the output boundary: every user-provided string (IDs, system, gate and probe names,
probe symbols, tags, fixture text, paths) goes through one of these before it reaches an output.

Which function for which output:

- **HTML** (the report's tables and text): :func:`html_text`, or :func:`styled` for a DataFrame
  (pandas ``Styler`` with ``escape="html"`` on cells and both index axes).
- **Markdown** (the notebook's Markdown outputs, pull-request summaries): :func:`markdown_text`
  for inline text, :func:`markdown_table` for a GFM table. Every ASCII punctuation character is
  backslash-escaped (CommonMark allows escaping any of them, and an escaped character is always
  literal text), so no emphasis, code span, link, image, heading, list, table pipe, HTML tag,
  entity or math delimiter can form. Line breaks become spaces. A WORD JOINER (U+2060, invisible)
  is put after each ``@`` and ``#`` and inside ``://`` and ``www.``, so GitHub neither mentions a
  user, links an issue nor autolinks a URL. :func:`markdown_plain` (and ``markdown_table(...,
  plain=True)``) is for text a person also reads raw, in a CI log: it escapes only the
  characters that can start Markdown inline markup (``\\ ` * _ [ ] < | & ~ $``) and, at the
  start of a line, a block marker (``# + - = >`` or ``1.``/``1)``), so ``RR@10``, ``0.7800``
  and ``q-zh-003`` stay as written (for GFM renderers: GitHub, GitLab; the notebook's math
  delimiters are :func:`markdown_text`'s concern); the word joiners go after an ``@`` or
  ``#`` that has no letter or digit before it (``RR@10`` mentions nobody), and inside ``://``
  and ``www.``.
- **XML** (JUnit reports): :func:`xml_text` for text built by hand, :func:`xml_chars` for a value
  handed to ``xml.etree`` (which escapes itself but writes characters XML 1.0 forbids).
- **CSV**: :func:`csv_cell` keeps a spreadsheet from reading a cell as a formula.
- **Plot labels** (matplotlib): :func:`plot_label` escapes ``$`` so mathtext never parses user
  text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "WORD_JOINER",
    "MarkdownCode",
    "csv_cell",
    "html_text",
    "markdown_code",
    "markdown_plain",
    "markdown_table",
    "markdown_text",
    "plot_label",
    "styled",
    "xml_chars",
    "xml_text",
]

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "font-src data:"
)
"""The policy of the exported report: inline styles (nbconvert's stylesheet, pandas Styler
tables) and ``data:`` images and fonts only; no script, no frame, no form target, no network."""

WORD_JOINER: Final = "\u2060"
"""U+2060, invisible: put after ``@`` and ``#`` and inside ``://`` and ``www.`` by
:func:`markdown_text`."""
_MD_PUNCTUATION: Final = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_LINE_BREAKS: Final = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_MD_UNLINK: Final = re.compile(r"(?<=[@#])|(?<=:)(?=\\/\\/)|(?<=www)(?=\\\.)", re.IGNORECASE)
_MD_INLINE: Final = re.compile(r"([\\`*_\[\]<|&~$])")  # what can open inline markup
_MD_BLOCK_START: Final = re.compile(r"^([ \t]*)([#+=>-]|[0-9]{1,9}[.)])")  # block markers
_MD_PLAIN_UNLINK: Final = re.compile(  # a mention or issue link needs no word character before
    r"(?<=^[@#])|(?<=[^0-9A-Za-z_][@#])|(?<=:)(?=//)|(?<=www)(?=\.)", re.IGNORECASE
)
_XML_ILLEGAL: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# OWASP's formula triggers, line feed, and the full-width = + - @ some spreadsheets also read.
_CSV_TRIGGERS: Final = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")


def html_text(value: object) -> str:
    """``str(value)`` escaped for HTML text and quoted attribute values (``& < > " '``)."""
    return html.escape(str(value), quote=True)


def markdown_text(value: object) -> str:
    """``str(value)`` as literal Markdown inline text (rules in the module docstring).

    Renders, in any CommonMark or GFM renderer, to exactly the original characters (line breaks
    as spaces, plus the invisible word joiners); safe inside a GFM table cell.
    """
    text = _LINE_BREAKS.sub(" ", str(value))
    return _MD_UNLINK.sub(WORD_JOINER, _MD_PUNCTUATION.sub(r"\\\1", text))


def markdown_plain(value: object, *, line_start: bool = True) -> str:
    """``str(value)`` as literal Markdown inline text that stays readable raw (rules in the
    module docstring); ``line_start=False`` for text that never starts a line (a table cell),
    where block markers mean nothing."""
    text = _MD_INLINE.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(value)))
    if line_start:
        text = _MD_BLOCK_START.sub(lambda m: m[1] + m[2][:-1] + "\\" + m[2][-1], text)
    return _MD_PLAIN_UNLINK.sub(WORD_JOINER, text)


class MarkdownCode(str):
    """A Markdown code span made by :func:`markdown_code`; :func:`markdown_table` puts it in a
    cell as it is (a ``|`` escaped, as GFM tables require even inside code spans)."""

    __slots__ = ()


def markdown_code(value: object) -> MarkdownCode:
    """``str(value)`` as a Markdown code span that renders, and copies, exactly as typed: a
    backtick fence longer than any run of backticks inside, padded with a space when the text
    starts or ends with a backtick or a space; line breaks become spaces. Nothing inside a
    code span is a mention or a link, so no invisible character is needed (measure names such
    as ``nDCG(dcg='exp-log2')@10`` go into Markdown this way)."""
    text = _LINE_BREAKS.sub(" ", str(value))
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return MarkdownCode(f"{fence}{pad}{text}{pad}{fence}")


def markdown_table(
    columns: Sequence[object], rows: Iterable[Sequence[object]], *, plain: bool = False
) -> str:
    """A GFM table: a header of ``columns``, then one line per row, every cell through
    :func:`markdown_text` (``plain``: :func:`markdown_plain`). A row must have one cell per
    column (``ValueError`` otherwise)."""
    width = len(columns)
    lines = [_markdown_row(columns, plain), "| " + " | ".join(["---"] * width) + " |"]
    for number, row in enumerate(rows, 1):
        if len(row) != width:
            raise ValueError(f"markdown_table: row {number} has {len(row)} cells, expected {width}")
        lines.append(_markdown_row(row, plain))
    return "\n".join(lines) + "\n"


def _markdown_cell(cell: object, plain: bool) -> str:
    if isinstance(cell, MarkdownCode):
        return cell.replace("|", "\\|")
    return markdown_plain(cell, line_start=False) if plain else markdown_text(cell)


def _markdown_row(cells: Sequence[object], plain: bool = False) -> str:
    return "| " + " | ".join(_markdown_cell(c, plain) for c in cells) + " |"


def xml_chars(value: object) -> str:
    """``str(value)`` with every character XML 1.0 forbids (most C0 controls, surrogates,
    U+FFFE/U+FFFF) replaced by U+FFFD; give this to ``xml.etree``, which escapes the rest."""
    return _XML_ILLEGAL.sub("\ufffd", str(value))


def xml_text(value: object) -> str:
    """:func:`xml_chars` of ``value`` escaped for XML text and attribute values
    (``& < > " '``), for XML written without an XML library."""
    return html.escape(xml_chars(value), quote=True).replace("&#x27;", "&apos;")


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet evaluates: a string starting with ``= + - @``, a tab or a
    line break (or their full-width forms) gets a leading ``'`` (OWASP's CSV-injection rule).
    Non-strings (numbers, booleans, ``None``) are returned unchanged; quoting is the ``csv``
    module's job."""
    if isinstance(value, str) and value.startswith(_CSV_TRIGGERS):
        return "'" + value
    return value


def plot_label(value: object) -> str:
    """``str(value)`` for a matplotlib text (title, tick, legend): every ``$`` escaped, so
    mathtext never parses it and it is drawn as written."""
    return str(value).replace("$", r"\$")


def styled(
    frame: pd.DataFrame,
    *,
    precision: int | None = None,
    na_rep: str | None = None,
    hide_index: bool = False,
) -> Styler:
    """``frame.style`` with every text cell, index label and column label HTML-escaped (pandas'
    own ``escape="html"``), floats at ``precision`` digits, missing values as ``na_rep``, and
    the table marked for MathJax to leave alone; text columns are left-aligned.

    Cells holding other objects than strings and numbers (lists, tuples, ...) are converted to
    strings first, so the escaping reaches them too. ``frame`` is not modified.
    """
    from pandas.api.types import is_object_dtype, is_string_dtype
    from pandas.io.formats.style import Styler

    shown = frame.copy()
    for column in [c for c, dtype in shown.dtypes.items() if is_object_dtype(dtype)]:
        shown[column] = shown[column].map(_as_cell)
    text_columns = [
        c for c, dtype in shown.dtypes.items() if is_object_dtype(dtype) or is_string_dtype(dtype)
    ]
    shown.index.names = [_name(n) for n in shown.index.names]
    shown.columns.names = [_name(n) for n in shown.columns.names]
    # No id on every cell (only on cells a style is applied to): half the HTML of a table.
    styler = Styler(shown, cell_ids=False)
    styler = styler.format(precision=precision, na_rep=na_rep, escape="html")
    styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    # MathJax (JupyterLab typesets HTML outputs) skips these classes: a "$" stays text.
    styler = styler.set_table_attributes('class="tex2jax_ignore mathjax_ignore"')
    # Text reads from the left (cells and their column heading), numbers stay right-aligned:
    # one CSS rule per text column and cell kind (``td.col<i>``), not one per cell.
    positions = [i for i, c in enumerate(shown.columns) if c in set(text_columns)]
    styler = styler.set_table_styles(
        [
            {"selector": f"{cell}.col{i}", "props": [("text-align", "left")]}
            for i in positions
            for cell in ("td", "th.col_heading")
        ],
        overwrite=False,
    )
    return styler.hide(axis="index") if hide_index else styler


def warm_up() -> None:
    """Render a small :func:`styled` table to HTML and throw it away: pandas' Styler templates
    are then compiled (the first table otherwise pays for it), e.g. in the report's kernel
    while it waits for the evaluation. Never raises."""
    import pandas as pd

    try:
        styled(pd.DataFrame({"a": [1.0], "b": ["x"]}), precision=3, hide_index=True).to_html()
    except Exception:  # a warm-up only: the real table reports any problem
        return


def _as_cell(value: Any) -> Any:
    """A cell as pandas' escaping sees it: strings and scalars as they are, anything else str."""
    import numpy as np  # loaded with pandas, whose frames this styles

    if value is None or isinstance(value, str | int | float | bool | np.generic):
        return value
    return str(value)


def _name(name: object) -> object:
    """An index or columns name, escaped (Styler prints names without escaping)."""
    return None if name is None else html_text(name)
