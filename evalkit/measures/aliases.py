"""trec_eval's measure names beside ir_measures-style names: one table, one lookup.

:data:`TREC_ALIASES` maps each trec_eval 10.0 measure (its ``-m`` root name) that evalkit
computes to the ir_measures-style name of :mod:`evalkit.measures.names`, with ``"@"`` when the
trec_eval measure takes cutoffs (``P`` → ``"P@"``: ``P.10`` and ``P_10`` are ``P@10``).
:func:`canonical_measure` turns either spelling into the canonical ir_measures string::

    map → AP          ndcg_cut.10 → nDCG@10     P_10 → P@10      recip_rank → RR
    recall.100 → R@100    bpref → Bpref         nDCG@10 → nDCG@10

A name of neither kind raises MeasureError with the closest name of both kinds.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from evalkit.errors import MeasureError
from evalkit.measures.names import MEASURE_NAMES, parse_measure
from evalkit.registry import did_you_mean

__all__ = ["TREC_ALIASES", "canonical_measure", "measure_list"]

#: trec_eval 10.0 root name → ir_measures-style name ("X@": the trec_eval name takes cutoffs).
TREC_ALIASES = MappingProxyType(
    {
        "num_q": "NumQ",
        "num_ret": "NumRet",
        "num_rel": "NumRel",
        "num_rel_ret": "NumRelRet",
        "map": "AP",
        "Rprec": "Rprec",
        "bpref": "Bpref",
        "recip_rank": "RR",
        "iprec_at_recall": "IPrec@",
        "P": "P@",
        "recall": "R@",
        "infAP": "infAP",
        "Rprec_mult": "Rprec_mult@",
        "utility": "utility",
        "11pt_avg": "11pt_avg",
        "binG": "binG",
        "G": "G",
        "ndcg": "nDCG",
        "ndcg_rel": "ndcg_rel",
        "Rndcg": "Rndcg",
        "ndcg_cut": "nDCG@",
        "map_cut": "AP@",
        "relative_P": "relative_P@",
        "success": "Success@",
        "set_P": "SetP",
        "set_relative_P": "set_relative_P",
        "set_recall": "SetR",
        "set_map": "SetAP",
        "set_F": "SetF",
        "num_nonrel_judged_ret": "num_nonrel_judged_ret",
        "yaap": "yaap",
        "rbp": "rbp",
        "rbp_resid": "rbp_resid",
        "unj": "unjudged@",
    }
)

# trec_eval's printed form of one cutoff: "P_10", "iprec_at_recall_0.10"
_NAME_HEAD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PRINTED = re.compile(r"^(?P<root>[A-Za-z][A-Za-z0-9_]*?)_(?P<cut>\d+(?:\.\d+)?)$")


def canonical_measure(name: str) -> str:
    """The canonical ir_measures-style string of ``name``, written either way.

    ``name`` is an ir_measures-style measure (``nDCG@10``, ``R(rel=2)@100``), a trec_eval root
    name of :data:`TREC_ALIASES` without cutoffs (``map``, ``bpref``), or with one cutoff as
    ``-m`` takes it (``ndcg_cut.10``) or as trec_eval prints it (``ndcg_cut_10``). Raises
    MeasureError for anything else, naming the closest measure of either kind.
    """
    if not isinstance(name, str):
        raise MeasureError(f"a measure name must be a string, got {type(name).__name__}")
    text = name.strip()
    root, _, cut = text.partition(".")
    printed = _PRINTED.match(text)
    if printed and printed["root"] in TREC_ALIASES and text not in TREC_ALIASES:
        root, cut = printed["root"], printed["cut"]
    alias = TREC_ALIASES.get(root)
    if alias is not None:
        if alias.endswith("@") != bool(cut) or "," in cut:
            wanted = "one cutoff, e.g. '" + root + ".10'" if alias.endswith("@") else "no cutoff"
            raise MeasureError(f"trec_eval measure {text!r} takes {wanted} here")
        return str(parse_measure(alias + cut))
    try:
        return str(parse_measure(text))
    except MeasureError:
        raise MeasureError(_unknown_measure(text)) from None


def _unknown_measure(text: str) -> str:
    """One short line for a name that is neither kind: the closest name with the same cutoff
    and parameters (``nDGC@10`` -> ``nDCG@10``), else examples of both kinds."""
    head = _NAME_HEAD.match(text)
    name, rest = (head[0], text[head.end() :]) if head else (text, "")
    hint = did_you_mean(name, (*MEASURE_NAMES, *TREC_ALIASES))
    if hint:
        close = hint.split("'")[1]
        return f"unknown measure {text!r}. Did you mean {close + rest!r}?"
    return (
        f"unknown measure {text!r}: e.g. nDCG@10, RR@10, AP (ir_measures) or ndcg_cut.10, map "
        "(trec_eval); every name: docs/measures.md"
    )


def measure_list(text: str) -> list[str]:
    """The canonical names (:func:`canonical_measure`) of a comma-separated list of measures,
    each written either way (``AP,P@5,map,ndcg_cut.10``); commas inside parentheses belong to
    a measure's parameters (``utility(p1=2,p2=-1)``). A measure named twice (``AP,map``: two
    names of one measure) is kept once, at its first place; an empty list is a MeasureError."""
    parts: list[str] = []
    depth, start = 0, 0
    for at, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    names = [canonical_measure(part) for part in parts if part.strip()]
    if not names:
        raise MeasureError("no measure given; e.g. --measures AP,P@5,nDCG@10 (or map,P.5)")
    return list(dict.fromkeys(names))
