"""MkDocs hooks: pages made from the repository's own sources, so the site cannot drift.

- ``<!-- include: PATH -->`` is replaced by the Markdown file at ``PATH`` (relative to the
  repository root), its first heading dropped and its links to other repository files turned
  into code spans (the site holds only ``docs/``).
- ``<!-- measures-table -->`` is replaced by the table of every measure name evalkit parses
  (:data:`evalkit.measures.names.MEASURE_NAMES`), with its description, parameters, direction,
  trec_eval name and where its formula is defined.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_INCLUDE = re.compile(r"<!-- include: (\S+) -->")
_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#)([^)#\s]+)(#[^)]*)?\)")

# Where each measure's formula is defined, for those trec_eval does not compute. The others
# name trec_eval 10.0's source file of their trec_eval name (m_<name>.c).
_DEFINED_ELSEWHERE = {
    "RR": "trec_eval `m_recip_rank.c` (without a cutoff); with `@k`, ir_measures' `RR@k`",
    "Judged": "ir_measures' `Judged` (its judged provider)",
    "ERR": "gdeval (`gdeval.pl`), as ir_measures runs it",
    "RBP": "Moffat and Zobel (2008); cwl_eval, as ir_measures runs it",
    "Compat": "Clarke et al., ir_measures' compat provider",
    "alpha_nDCG": "ndeval (`ndeval.c`), as ir_measures' pyndeval provider",
    "alpha_DCG": "ndeval (`ndeval.c`)",
    "ERR_IA": "ndeval (`ndeval.c`)",
    "nERR_IA": "ndeval (`ndeval.c`)",
    "NRBP": "ndeval (`ndeval.c`)",
    "nNRBP": "ndeval (`ndeval.c`); evalkit gives 0.0 where ndeval divides 0 by 0 (NaN)",
    "AP_IA": "ndeval (`ndeval.c`)",
    "P_IA": "ndeval (`ndeval.c`)",
    "StRecall": "ndeval (`ndeval.c`)",
    **dict.fromkeys(
        ("AbstentionAUC", "AURC", "OpNoResult", "OpNoAnswerFP", "OpThreshold", "OpCoverage"),
        "evalkit: `evalkit.stats.abstention` (a summary over queries, "
        "[below](#abstention-as-a-curve))",
    ),
    "ContextPrecision": "evalkit: `evalkit.measures.spans`",
    "ContextRecall": "evalkit: `evalkit.measures.spans`",
    "NoResult": "evalkit: `evalkit.run.evaluate`",
    "NoAnswerFP": "evalkit: `evalkit.run.evaluate`",
}


# trec_eval names whose source file is named otherwise
_SOURCE_FILE = {
    "set_relative_P": "set_rel_P",
    "relative_P": "rel_P",
    "unj": "unjudged",
    "infAP": "infap",
}


def _delinked(text: str) -> str:
    return _LINK.sub(lambda m: f"{m.group(1)} (`{m.group(2)}`)", text)


def _include(match: re.Match[str]) -> str:
    text = (ROOT / match.group(1)).read_text(encoding="utf-8")
    body = text.split("\n", 1)[1] if text.startswith("# ") else text
    return _delinked(body).replace("\n## ", "\n### ").replace("\n# ", "\n## ")


def _example(spec: Any) -> str:
    if spec.cutoff == "required":
        return f"{spec.name}@{'0.5' if spec.fraction else '10'}"
    return spec.name


def _ir_measures_name(example: str) -> str:
    """``example`` when ir_measures (a dev dependency) parses it, else ``-``."""
    try:
        import ir_measures
    except ImportError:
        return "?"
    try:
        ir_measures.parse_measure(example)
    except Exception:  # ir_measures has no such measure
        return "-"
    return f"`{example}`"


def _measures_table() -> str:
    from evalkit.errors import MeasureError
    from evalkit.measures.names import MEASURE_NAMES, measure_spec, trec_name

    rows = [
        "| name | example | what it measures | parameters (default) | better | trec_eval name "
        "| ir_measures name | formula defined in |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in MEASURE_NAMES:
        spec = measure_spec(name)
        example = _example(spec)
        try:
            trec = trec_name(example)
        except MeasureError:  # a measure trec_eval does not compute
            trec = ""
        if name in _DEFINED_ELSEWHERE:
            source = _DEFINED_ELSEWHERE[name]
        elif trec:
            base = re.sub(r"_\d.*$|_p=.*$", "", trec)
            source = f"trec_eval 10.0 `m_{_SOURCE_FILE.get(base, base)}.c`"
        else:
            source = "ir_measures"
        params = ", ".join(f"`{key}={value!r}`" for key, value in spec.params) or "-"
        cutoff = {"required": " (`@k` required)", "optional": " (`@k` optional)"}.get(
            spec.cutoff, ""
        )
        rows.append(
            f"| `{name}` | `{example}` | {spec.description.replace('|', '/')}{cutoff} | {params} "
            f"| {'higher' if spec.higher_is_better else 'lower'} | "
            f"{f'`{trec}`' if trec else '-'} | {_ir_measures_name(example)} | {source} |"
        )
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Fill the include and measures-table markers of a page."""
    markdown = _INCLUDE.sub(_include, markdown)
    if "<!-- measures-table -->" in markdown:
        markdown = markdown.replace("<!-- measures-table -->", _measures_table())
    return markdown
