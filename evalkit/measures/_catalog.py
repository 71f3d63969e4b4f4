"""The catalog of declared measures: what each measure name accepts.

A measure is declared once, in its family's module and next to its kernel, by :func:`declare`
(through :func:`evalkit.measures.judged.kernel` for a kernel over the judged ranking, or
:func:`evalkit.measures.diversity.subtopic_kernel` for one over subtopic qrels).
:mod:`evalkit.measures.names` imports every family module, so the catalog is complete wherever
a measure name is parsed or looked up. The families: :mod:`~evalkit.measures.binary` (binary
relevance), :mod:`~evalkit.measures.gain` (graded gains), :mod:`~evalkit.measures.spans` (the
fixture measures ``evalkit.run.evaluate`` computes), :mod:`~evalkit.measures.diversity`
(subtopic qrels) and :mod:`~evalkit.measures.abstention` (summaries of an evaluation's
confidences, computed by ``evalkit.stats.abstention``). Also here: the canonical form of the
``gains`` parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypedDict, Unpack

from evalkit.errors import MeasureError

__all__ = [
    "DECLARED",
    "NONNEGATIVE",
    "REL",
    "UNBOUNDED",
    "UNIT",
    "CutoffRule",
    "MeasureSpec",
    "Needs",
    "ParamValue",
    "SpecOptions",
    "canonical_gains",
    "declare",
    "number_text",
    "parse_gains",
]

ParamValue = int | float | str
CutoffRule = Literal["required", "optional", "none"]
Needs = Literal["ranking", "subtopics", "fixture", "summary"]

#: The relevance level parameter most measures take: a doc is relevant at grade >= rel.
REL: tuple[str, ParamValue] = ("rel", 1)
#: ``(lowest, highest)`` of the rates and averages (the default bounds).
UNIT = (0.0, 1.0)
#: Counts and sums of gains: no upper end.
NONNEGATIVE = (0.0, math.inf)
#: Measures that may be negative.
UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True)
class MeasureSpec:
    """What a measure name accepts: its parameters (name → default, in documentation order),
    their ``choices``, its cutoff rule (``"required"``, ``"optional"`` or ``"none"``; a
    ``fraction`` cutoff such as ``IPrec@0.5`` is not a rank), with its one-line
    ``description``, its direction (``higher_is_better``), the ``bounds`` of its values, its
    trec_eval name (``trec``, printed ``trec`` or ``trec_k``; "" when trec_eval has none or
    names it by a rule of :func:`~evalkit.measures.names.trec_name`), what its kernel reads
    (``needs``: a judged ``"ranking"``, ``"subtopics"`` qrels, a ``"fixture"``, when
    ``evalkit.run.evaluate`` computes it, or an evaluation's queries for a ``"summary"`` of
    them, the abstention measures of :func:`evalkit.stats.abstention`) and the ``family``
    module that declares it."""

    name: str
    description: str
    family: str
    cutoff: CutoffRule = "none"
    params: tuple[tuple[str, ParamValue], ...] = ()
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fraction: bool = False
    higher_is_better: bool = True
    bounds: tuple[float, float] = UNIT
    trec: str = ""
    needs: Needs = "ranking"

    def default(self, param: str) -> ParamValue:
        """The default value of ``param``."""
        return dict(self.params)[param]


class SpecOptions(TypedDict, total=False):
    """The keyword arguments of a declaration: the fields of :class:`MeasureSpec` after
    ``name``, ``description`` and ``family``, but ``needs`` (which the declaring function
    sets)."""

    cutoff: CutoffRule
    params: tuple[tuple[str, ParamValue], ...]
    choices: tuple[tuple[str, tuple[str, ...]], ...]
    fraction: bool
    higher_is_better: bool
    bounds: tuple[float, float]
    trec: str


#: Every declared measure by name (in the order the family modules were imported).
DECLARED: dict[str, MeasureSpec] = {}


def declare(
    name: str,
    description: str,
    family: str,
    *,
    needs: Needs = "ranking",
    **options: Unpack[SpecOptions],
) -> MeasureSpec:
    """Add the measure ``name``, declared by the module ``family``, to the catalog; a name is
    declared once (ValueError)."""
    if name in DECLARED:
        raise ValueError(f"measure {name!r} is declared twice")
    spec = MeasureSpec(name, description, family, needs=needs, **options)
    DECLARED[name] = spec
    return spec


# --- the gain map parameter (nDCG, rbp) -----------------------------------------------------


def canonical_gains(gains: object, where: str) -> str:
    """A gain map (``{1: 3, 2: 9}``, or trec_eval's ``'1=3,2=9'``) as the canonical string
    ``'1=3,2=9'``: levels (integers >= 0) ascending, gains as the shortest exact decimals.
    Raises MeasureError for anything else (``where``: the measure, for the message)."""
    if isinstance(gains, str):
        pairs: list[tuple[object, object]] = []
        for item in gains.split(",") if gains.strip() else []:
            level, sep, gain = item.partition("=")
            if not sep:
                pairs = [(None, None)]
                break
            pairs.append((level.strip(), gain.strip()))
    elif isinstance(gains, dict):
        pairs = list(gains.items())
    else:
        pairs = [(None, None)]
    parsed: dict[int, float] = {}
    for key, number in pairs:
        try:
            lvl = int(str(key)) if not isinstance(key, bool) else -1
            value = float(str(number)) if not isinstance(number, bool) else float("nan")
        except ValueError:
            lvl, value = -1, float("nan")
        if lvl < 0 or lvl in parsed or not -1e300 < value < 1e300:
            raise MeasureError(
                f"measure {where!r}: gains must map grades (integers >= 0, each once) to finite "
                "numbers, e.g. gains={1:3,2:9} or gains='1=3,2=9'"
            )
        parsed[lvl] = value
    return ",".join(f"{lvl}={number_text(parsed[lvl])}" for lvl in sorted(parsed))


def parse_gains(gains: str) -> dict[int, float]:
    """The canonical gain string (``'1=3,2=9'``) as ``{level: gain}`` (``''``: empty)."""
    out: dict[int, float] = {}
    for item in gains.split(",") if gains else []:
        level, _, gain = item.partition("=")
        out[int(level)] = float(gain)
    return out


def number_text(value: float) -> str:
    """``value`` as the shortest exact decimal: ``3`` for 3.0, ``0.5``, ``1e-05``."""
    return str(int(value)) if value.is_integer() else repr(value)
