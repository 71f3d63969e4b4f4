"""Measure names in ir_measures' syntax: parsing, canonical formatting and trec_eval names.

A measure string is ``Name``, ``Name@k`` or ``Name(param=value,...)@k``, for example ``nDCG@10``,
``nDCG(dcg='exp-log2')@10``, ``R(rel=2)@100`` or ``AP``. :func:`parse_measure` turns it into a
frozen :class:`Measure`; ``str(measure)`` gives the canonical string (parameters sorted by name,
parameters equal to their default left out), which is also the value of the ``measure`` column of
:func:`evalkit.measures.score`. ``str(parse_measure(s))`` parses back to an equal measure.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

from evalkit.errors import MeasureError
from evalkit.measures import abstention, binary, diversity, gain, spans
from evalkit.measures._catalog import (
    DECLARED,
    MeasureSpec,
    ParamValue,
    canonical_gains,
    number_text,
)
from evalkit.measures.judged import KERNELS  # filled by the family modules just imported
from evalkit.registry import did_you_mean

__all__ = [
    "KERNELS",
    "LOWER_IS_BETTER",
    "MEASURE_NAMES",
    "SPAN_MEASURE_NAMES",
    "SUMMARY_MEASURE_NAMES",
    "Cutoff",
    "Measure",
    "MeasureSpec",
    "describe_measure",
    "higher_is_better",
    "measure_range",
    "measure_spec",
    "parse_measure",
    "summary_measure_problem",
    "trec_name",
]

Cutoff = int | float

# each family module declares its measures next to their kernels (evalkit.measures._catalog):
# imported above, they complete the catalog; this is their documentation order
_FAMILIES = tuple(family.__name__ for family in (binary, gain, spans, diversity, abstention))


def measure_spec(name: str) -> MeasureSpec:
    """The catalog's spec of the measure called ``name`` (a bare name such as ``nDCG``)."""
    return DECLARED[name]


#: Every measure name the parser knows, in documentation order (by family, then as declared).
MEASURE_NAMES: tuple[str, ...] = tuple(
    sorted(DECLARED, key=lambda name: _FAMILIES.index(DECLARED[name].family))
)
#: Measures for which a lower value is better (declared with ``higher_is_better=False``).
LOWER_IS_BETTER: frozenset[str] = frozenset(
    s.name for s in DECLARED.values() if not s.higher_is_better
)
#: Measures that need a fixture with answer spans (computed by ``evalkit.run.evaluate``).
SPAN_MEASURE_NAMES: frozenset[str] = frozenset(
    s.name for s in DECLARED.values() if s.needs == "fixture"
)
#: Summaries over an evaluation's queries, not per-query values (:mod:`evalkit.measures.
#: abstention`, computed by ``evalkit.stats.abstention``).
SUMMARY_MEASURE_NAMES: frozenset[str] = frozenset(
    s.name for s in DECLARED.values() if s.needs == "summary"
)


def summary_measure_problem(measure: str) -> str:
    """Why a summary measure (:data:`SUMMARY_MEASURE_NAMES`) is not computed per query."""
    return (
        f"measure {measure!r} summarizes an evaluation's queries (abstention over every "
        "confidence threshold); it has no per-query value: compute it with "
        "evalkit.abstention(evaluation), or bound it with an abstention: gate"
    )


def higher_is_better(measure: str) -> bool:
    """The direction of ``measure`` (a name such as ``NoAnswerFP`` or ``nDCG@10``) from the
    catalog: False for :data:`LOWER_IS_BETTER`, True otherwise (names the catalog does not
    know, such as a gate's ``new-failures`` count, included)."""
    base = re.split(r"[(@]", measure, maxsplit=1)[0]
    spec = DECLARED.get(base)
    return True if spec is None else spec.higher_is_better


def measure_range(measure: str) -> tuple[float, float]:
    """``(lowest, highest)`` value of ``measure`` (a name such as ``RR@10``): its declared
    ``bounds``: ``(0, 1)`` for rates and averages; ``(0, inf)`` for counts, trec_eval's ``G``,
    ir_measures' graded ``RBP`` and ndeval's ``alpha_DCG`` and ``ERR_IA`` (not divided at
    cutoff 1); ``(-inf, inf)`` for ``utility``, ``yaap``, a measure with a ``gains`` map (a
    gain may be negative) and names the catalog does not know."""
    spec = DECLARED.get(measure.split("(", 1)[0].split("@", 1)[0])
    if spec is None or "gains=" in measure:
        return -math.inf, math.inf
    return spec.bounds


def describe_measure(measure: str) -> str:
    """The catalog's one-line description of ``measure``'s name ("" for unknown names)."""
    spec = DECLARED.get(re.split(r"[(@]", measure, maxsplit=1)[0])
    return "" if spec is None else spec.description


@dataclass(frozen=True)
class Measure:
    """One measure: ``name``, non-default ``params`` sorted by name, and ``cutoff`` (or None).

    >>> m = parse_measure("nDCG(dcg='exp-log2')@10")
    >>> (m.name, m.params, m.cutoff, str(m))
    ('nDCG', (('dcg', 'exp-log2'),), 10, "nDCG(dcg='exp-log2')@10")
    """

    name: str
    params: tuple[tuple[str, ParamValue], ...] = field(default=())
    cutoff: Cutoff | None = None

    def __post_init__(self) -> None:
        _check(self)

    def param(self, name: str) -> ParamValue:
        """The value of parameter ``name`` (its default when not set)."""
        given = dict(self.params)
        return given[name] if name in given else DECLARED[self.name].default(name)

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{key}={value!r}" for key, value in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _check(measure: Measure) -> None:
    """Raise MeasureError unless ``measure`` is a known name with valid, canonical fields."""
    spec = DECLARED.get(measure.name)
    if spec is None:
        raise MeasureError(
            f"unknown measure {measure.name!r}; known measures: {', '.join(MEASURE_NAMES)}."
            + did_you_mean(measure.name, MEASURE_NAMES)
        )
    known = dict(spec.params)
    choices = dict(spec.choices)
    names = [key for key, _ in measure.params]
    if names != sorted(set(names)):
        raise MeasureError(
            f"measure {measure.name!r}: params must be unique and sorted by name, got {names}"
        )
    for key, value in measure.params:
        if key not in known:
            allowed = ", ".join(known) or "none"
            raise MeasureError(
                f"measure {measure.name!r} has no parameter {key!r}; its parameters: {allowed}."
                + did_you_mean(key, tuple(known))
            )
        if key in choices:
            if not isinstance(value, str) or value not in choices[key]:
                raise MeasureError(
                    f"measure {measure.name!r}: {key} must be one of "
                    f"{', '.join(repr(c) for c in choices[key])}, got {value!r}"
                )
        elif type(value) is not type(known[key]) and not (
            isinstance(known[key], float) and type(value) is int
        ):
            raise MeasureError(
                f"measure {measure.name!r}: {key} must be {type(known[key]).__name__}, "
                f"got {value!r}"
            )
        if key == "gains" and isinstance(value, str) and value != canonical_gains(value, str(key)):
            raise MeasureError(
                f"measure {measure.name!r}: gains must be written 'level=gain,...' sorted by "
                f"level, e.g. '1=3,2=9' (parse_measure normalizes it), got {value!r}"
            )
        if key == "p" and isinstance(value, int | float) and not 0 < value < 1:
            raise MeasureError(f"measure {measure.name!r}: p must be in (0, 1), got {value}")
        if key == "max_fp" and isinstance(value, int | float) and not 0 <= value <= 1:
            raise MeasureError(f"measure {measure.name!r}: max_fp must be in [0, 1], got {value}")
        if key == "rel" and isinstance(value, int) and value < 0:
            raise MeasureError(f"measure {measure.name!r}: rel must be >= 0, got {value}")
        if value == known[key]:
            raise MeasureError(
                f"measure {measure.name!r}: {key}={value!r} is the default; leave it out "
                "(use parse_measure to normalize)"
            )
    if (
        measure.name == "nDCG"
        and dict(measure.params).get("gains")
        and (measure.cutoff is not None or "dcg" in dict(measure.params))
    ):
        raise MeasureError(
            f"measure {measure.name!r}: gains (trec_eval's ndcg gain map) take no cutoff and no "
            "dcg; write e.g. \"nDCG(gains='1=3,2=9')\""
        )
    if measure.cutoff is None and spec.cutoff == "required":
        raise MeasureError(f"measure {measure.name!r} needs a cutoff, e.g. '{measure.name}@10'")
    if measure.cutoff is not None:
        if spec.cutoff == "none":
            raise MeasureError(
                f"measure {measure.name!r} takes no cutoff; write '{measure.name}' without '@k'"
            )
        if spec.fraction:
            if isinstance(measure.cutoff, bool) or not isinstance(measure.cutoff, int | float):
                raise MeasureError(f"measure {measure.name!r}: cutoff must be a number")
            if not 0 <= measure.cutoff <= (1 if measure.name == "IPrec" else 1e9):
                raise MeasureError(
                    f"measure {measure.name!r}: cutoff must be a recall level in 0..1, got "
                    f"{measure.cutoff}"
                    if measure.name == "IPrec"
                    else f"measure {measure.name!r}: cutoff must be >= 0, got {measure.cutoff}"
                )
            return
        if isinstance(measure.cutoff, bool) or not isinstance(measure.cutoff, int):
            raise MeasureError(f"measure {measure.name!r}: cutoff must be an integer")
        if measure.cutoff < 1:
            raise MeasureError(
                f"measure {measure.name!r}: cutoff must be >= 1, got {measure.cutoff}"
            )


_SYNTAX = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_]*)\s*(?:\((?P<params>.*)\))?\s*"
    r"(?:@\s*(?P<cutoff>\d+(?:\.\d*)?|\.\d+))?\s*$",
    re.DOTALL,
)


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``'nDCG@10'``, ``"R(rel=2)@5"`` ... into a :class:`Measure` (Measures pass through).

    Parameters equal to their default are dropped, so ``nDCG(dcg='log2')@10 == nDCG@10``.
    Raises MeasureError for a malformed string, an unknown name or parameter (listing what
    exists and the closest match) or a wrong cutoff.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise MeasureError(
            f"a measure must be a string such as 'nDCG@10', got {type(text).__name__}"
        )
    match = _SYNTAX.match(text)
    if match is None:
        raise MeasureError(
            f"cannot parse measure {text!r}; expected Name, Name@k or Name(param=value)@k, "
            "e.g. 'nDCG@10' or \"R(rel=2)@100\""
        )
    name = match["name"]
    if name not in DECLARED:
        Measure(name)  # raises the unknown-name error with suggestions
    params = _parse_params(text, match["params"])
    spec = DECLARED[name]
    defaults = dict(spec.params)
    kept = tuple(
        sorted((k, v) for k, v in params.items() if not (k in defaults and v == defaults[k]))
    )
    cutoff: Cutoff | None = None
    if match["cutoff"] is not None:
        text_cut = match["cutoff"]
        if spec.fraction:
            cutoff = float(text_cut)
        elif "." in text_cut:
            raise MeasureError(f"measure {name!r}: cutoff must be an integer, got {text_cut}")
        else:
            cutoff = int(text_cut)
    return Measure(name, kept, cutoff)


def _parse_params(text: str, inner: str | None) -> dict[str, ParamValue]:
    if inner is None or not inner.strip():
        return {}
    try:
        call = ast.parse(f"f({inner})", mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or call.args:
        raise MeasureError(
            f"cannot parse the parameters of measure {text!r}; expected param=value pairs "
            "separated by commas, e.g. \"nDCG(dcg='exp-log2')@10\""
        )
    params: dict[str, ParamValue] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise MeasureError(f"measure {text!r}: '**' is not allowed in parameters")
        try:
            value = ast.literal_eval(keyword.value)
        except ValueError:
            raise MeasureError(
                f"measure {text!r}: parameter {keyword.arg!r} must be a number or a quoted string"
            ) from None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if keyword.arg == "gains" and isinstance(value, dict | str):
            value = canonical_gains(value, text)
        if not isinstance(value, int | float | str):
            raise MeasureError(
                f"measure {text!r}: parameter {keyword.arg!r} must be a number or a string"
            )
        params[keyword.arg] = value
    return params


def trec_name(measure: Measure | str) -> str:
    """trec_eval's name for ``measure``: ``nDCG@10`` → ``ndcg_cut_10``, ``AP`` → ``map``, ...

    The relevance level (``rel=``) is not part of a trec_eval name (trec_eval takes it as ``-l``).
    Raises MeasureError for measures trec_eval does not compute (``RR@k``, ``Judged``,
    ``nDCG(dcg='exp-log2')``, the span measures).
    """
    m = parse_measure(measure)
    k = m.cutoff
    if m.name == "nDCG" and m.param("dcg") == "log2" and not m.param("gains"):
        return "ndcg" if k is None else f"ndcg_cut_{k}"
    if m.name == "RR" and k is None:
        return "recip_rank"
    if m.name == "AP":
        return "map" if k is None else f"map_cut_{k}"
    if m.name == "IPrec":
        return f"iprec_at_recall_{k:.2f}"
    if m.name == "SetF" and m.param("beta") != 1.0:
        return f"set_F_{m.param('beta'):g}"  # as trec_eval names -m set_F.0.5
    if m.name == "utility" and any(key != "rel" for key, _ in m.params):
        written = ",".join(number_text(float(m.param(key))) for key in ("p1", "p2", "p3", "p4"))
        return f"utility_{written}"  # as trec_eval names -m utility.2,-1,0,0
    if m.name == "Rprec_mult":
        return f"Rprec_mult_{k:.2f}"
    if m.name == "nDCG" and m.param("gains") and m.param("dcg") == "log2" and k is None:
        return f"ndcg_{m.param('gains')}"  # as trec_eval names -m ndcg.1=3,2=9
    if m.name in ("rbp", "rbp_resid"):
        given = [f"p={number_text(float(m.param('p')))}"] if m.param("p") != 0.9 else []
        if m.name == "rbp" and m.param("gains"):
            given.append(str(m.param("gains")))
        return m.name + ("_" + ",".join(given) if given else "")
    if m.name == "P" and m.param("judged_only"):
        raise MeasureError(f"measure {str(m)!r} is trec_eval's P with -J; it has no own name")
    base = DECLARED[m.name].trec
    if base:
        return base if k is None else f"{base}_{k}"
    raise MeasureError(f"measure {str(m)!r} has no trec_eval equivalent")
