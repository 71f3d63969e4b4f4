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
from evalkit.registry import did_you_mean

__all__ = [
    "MEASURE_NAMES",
    "SPAN_MEASURE_NAMES",
    "Measure",
    "MeasureSpec",
    "measure_range",
    "measure_spec",
    "parse_measure",
    "trec_name",
]

ParamValue = int | float | str
Cutoff = int | float


@dataclass(frozen=True)
class MeasureSpec:
    """What a measure name accepts: its parameters (name → default) and its cutoff rule, with
    its one-line ``description`` and its direction (``higher_is_better``)."""

    name: str
    description: str
    cutoff: str  # "required", "optional" or "none"
    params: tuple[tuple[str, ParamValue], ...] = ()
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fraction: bool = False  # the cutoff is a fraction (IPrec@0.5), not a rank
    higher_is_better: bool = True

    def default(self, param: str) -> ParamValue:
        """The default value of ``param``."""
        return dict(self.params)[param]


_REL = ("rel", 1)

_SPECS: tuple[MeasureSpec, ...] = (
    MeasureSpec(
        "P",
        "precision at k: relevant docs in the top k / k (judged_only: of the judged docs)",
        "required",
        (_REL, ("judged_only", False)),
    ),
    MeasureSpec(
        "R", "recall at k: relevant docs in the top k / relevant docs", "required", (_REL,)
    ),
    MeasureSpec("RR", "reciprocal rank of the first relevant doc (within k)", "optional", (_REL,)),
    MeasureSpec("AP", "average precision (of the top k)", "optional", (_REL,)),
    MeasureSpec(
        "nDCG",
        "normalized discounted cumulative gain (of the top k)",
        "optional",
        (("dcg", "log2"), ("gains", "")),
        (("dcg", ("log2", "exp-log2")),),
    ),
    MeasureSpec("Rprec", "precision at rank R, R = number of relevant docs", "none", (_REL,)),
    MeasureSpec("Success", "1 if a relevant doc is in the top k, else 0", "required", (_REL,)),
    MeasureSpec("Bpref", "binary preference (Buckley & Voorhees 2004)", "none", (_REL,)),
    MeasureSpec("Judged", "fraction of the top k that is in the qrels", "optional"),
    MeasureSpec("SetP", "relevant retrieved / retrieved", "none", (_REL,)),
    MeasureSpec("SetR", "relevant retrieved / relevant", "none", (_REL,)),
    MeasureSpec(
        "SetF",
        "(1 + beta) * SetP * SetR / (beta * SetP + SetR) (trec_eval's set_F weighting)",
        "none",
        (("beta", 1.0), _REL),
    ),
    MeasureSpec("NumRet", "number of retrieved docs", "none"),
    MeasureSpec("NumRel", "number of relevant docs in the qrels", "none", (_REL,)),
    MeasureSpec("NumRelRet", "number of relevant retrieved docs", "none", (_REL,)),
    # trec_eval 10.0's other per-query measures (ir_measures' names where it has one)
    MeasureSpec(
        "IPrec",
        "interpolated precision at a recall level (0..1)",
        "required",
        (_REL,),
        fraction=True,
    ),
    MeasureSpec(
        "11pt_avg", "mean interpolated precision at recall 0, 0.1, ..., 1", "none", (_REL,)
    ),
    MeasureSpec("SetAP", "relevant retrieved ** 2 / (retrieved * relevant)", "none", (_REL,)),
    MeasureSpec("set_relative_P", "relevant retrieved / min(retrieved, relevant)", "none", (_REL,)),
    MeasureSpec(
        "relative_P", "relevant docs in the top k / min(k, relevant docs)", "required", (_REL,)
    ),
    MeasureSpec(
        "num_nonrel_judged_ret", "number of judged non-relevant retrieved docs", "none", (_REL,)
    ),
    MeasureSpec("NumQ", "number of queries (1 per query; summed)", "none"),
    MeasureSpec(
        "infAP",
        "inferred AP (Yilmaz & Aslam 2006): negative grades are sampled-out",
        "none",
        (_REL,),
    ),
    MeasureSpec("unjudged", "docs in the top k not graded >= 0, / k", "required"),
    MeasureSpec(
        "utility",
        "p1 * rel. retrieved + p2 * nonrel. retrieved + p3 * rel. missed + p4 * nonrel. missed",
        "none",
        (_REL, ("p1", 1.0), ("p2", -1.0), ("p3", 0.0), ("p4", 0.0)),
    ),
    MeasureSpec(
        "Rprec_mult",
        "precision at rank m * R, R = number of relevant docs",
        "required",
        (_REL,),
        fraction=True,
    ),
    MeasureSpec(
        "G",
        "trec_eval's normalized gain: gain / log2(2 + ideal cost - gain so far), summed, "
        "/ ideal gain",
        "none",
    ),
    MeasureSpec(
        "binG", "mean over relevant docs of 1 / log2(2 + non-relevant above)", "none", (_REL,)
    ),
    MeasureSpec(
        "yaap",
        "Robertson's yet another AP: log((1 + S) / (1 + R - S)), S = AP * R",
        "none",
        (_REL,),
    ),
    MeasureSpec("ndcg_rel", "mean nDCG at the ranks of the docs graded > 0 (trec_eval)", "none"),
    MeasureSpec(
        "Rndcg",
        "mean nDCG at the cutoffs where the ideal gain changes (trec_eval)",
        "none",
        (_REL,),
    ),
    # gain-based measures: trec_eval 10.0's rbp, rbp_resid; ir_measures' RBP, ERR, Compat
    MeasureSpec(
        "RBP",
        "rank-biased precision (Moffat & Zobel 2008): (1 - p) * sum of gain * p ** (rank - 1); "
        "gain = grade, or 1 for grades >= rel when rel is given",
        "optional",
        (("p", 0.8), ("rel", 0)),
    ),
    MeasureSpec(
        "rbp",
        "trec_eval 10.0's rbp: RBP with each query's gains scaled into 0..1",
        "none",
        (("gains", ""), ("p", 0.9)),
    ),
    MeasureSpec(
        "rbp_resid",
        "trec_eval 10.0's rbp_resid: the RBP weight of unjudged retrieved docs and of the "
        "ranks past the run (0 without an unjudged retrieved doc)",
        "none",
        (("p", 0.9),),
        higher_is_better=False,
    ),
    MeasureSpec(
        "ERR",
        "expected reciprocal rank (Chapelle et al. 2009), gdeval's: grades 0..4, "
        "stop probability (2 ** grade - 1) / 16",
        "optional",
    ),
    MeasureSpec(
        "Compat",
        "compatibility (Clarke et al. 2021): rank-biased overlap with the ideal ranking",
        "none",
        (("normalize", True), ("p", 0.95)),
    ),
    # evalkit's own span / no-answer measures: computed by evalkit.run.evaluate, not by score().
    MeasureSpec("ContextPrecision", "answer-span characters / returned characters", "required"),
    MeasureSpec("ContextRecall", "answer-span characters returned / all span chars", "required"),
    MeasureSpec(
        "NoAnswerFP",
        "1 if a no-answer query returned anything, else 0",
        "none",
        higher_is_better=False,
    ),
    MeasureSpec(
        "NoResult",
        "1 if an answerable query returned nothing, else 0",
        "none",
        higher_is_better=False,
    ),
)

# alpha-nDCG and the intent-aware measures over subtopic qrels, as ndeval computes them
# (evalkit.measures.diversity; ir_measures' names and defaults)
_ALPHA, _BETA = ("alpha", 0.5), ("beta", 0.5)
_SPECS += (
    MeasureSpec(
        "alpha_DCG",
        "alpha-DCG (Clarke et al. 2008), over ndeval's ideal-ideal gain",
        "required",
        (_ALPHA, _REL),
    ),
    MeasureSpec(
        "alpha_nDCG",
        "alpha-DCG / alpha-DCG of ndeval's greedy ideal ranking",
        "required",
        (_ALPHA, _REL),
    ),
    MeasureSpec(
        "ERR_IA", "intent-aware ERR (ndeval, alpha 0.5), over ideal-ideal", "required", (_REL,)
    ),
    MeasureSpec("nERR_IA", "intent-aware ERR / ERR-IA of the ideal ranking", "required", (_REL,)),
    MeasureSpec(
        "NRBP",
        "novelty- and rank-biased precision (Clarke et al. 2009)",
        "none",
        (_ALPHA, _BETA, _REL),
    ),
    MeasureSpec("nNRBP", "NRBP / NRBP of the ideal ranking", "none", (_ALPHA, _BETA, _REL)),
    MeasureSpec("AP_IA", "mean over the subtopics of their average precision", "none", (_REL,)),
    MeasureSpec(
        "P_IA", "relevant (subtopic, doc) pairs in the top k / (k * subtopics)", "required", (_REL,)
    ),
    MeasureSpec(
        "StRecall", "subtopics with a relevant doc in the top k / subtopics", "required", (_REL,)
    ),
)

_SPEC_BY_NAME: dict[str, MeasureSpec] = {spec.name: spec for spec in _SPECS}


def measure_spec(name: str) -> MeasureSpec:
    """The registry's spec of the measure called ``name`` (a bare name such as ``nDCG``)."""
    return _SPEC_BY_NAME[name]


#: Every measure name the parser knows, in documentation order.
MEASURE_NAMES: tuple[str, ...] = tuple(spec.name for spec in _SPECS)
#: Measures for which a lower value is better (the registry's ``higher_is_better=False``).
LOWER_IS_BETTER: frozenset[str] = frozenset(s.name for s in _SPECS if not s.higher_is_better)


def higher_is_better(measure: str) -> bool:
    """The direction of ``measure`` (a name such as ``NoAnswerFP`` or ``nDCG@10``) from the
    registry: False for :data:`LOWER_IS_BETTER`, True otherwise (names the registry does not
    know, such as a gate's ``new-failures`` count, included)."""
    base = re.split(r"[(@]", measure, maxsplit=1)[0]
    spec = _SPEC_BY_NAME.get(base)
    return True if spec is None else spec.higher_is_better


# no upper end: counts, trec_eval's G, ir_measures' RBP (cwl_eval sums graded gains), and
# ndeval's alpha_DCG and ERR_IA (at cutoff 1 not divided: up to the number of subtopics)
_NONNEGATIVE: frozenset[str] = frozenset(
    {"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ", "G", "RBP"}
    | {"alpha_DCG", "ERR_IA"}
)
_UNBOUNDED: frozenset[str] = frozenset({"utility", "yaap"})


def measure_range(measure: str) -> tuple[float, float]:
    """``(lowest, highest)`` value of ``measure`` (a name such as ``RR@10``): ``(0, 1)`` for
    the registry's rates and averages; ``(0, inf)`` for counts, trec_eval's ``G``, ir_measures'
    graded ``RBP`` and ndeval's ``alpha_DCG`` and ``ERR_IA`` (not divided at cutoff 1);
    ``(-inf, inf)`` for ``utility``, ``yaap``, a measure with a ``gains`` map (a gain may be
    negative) and names the registry does not know."""
    base = measure.split("(", 1)[0].split("@", 1)[0]
    if base in _UNBOUNDED or base not in _SPEC_BY_NAME or "gains=" in measure:
        return -math.inf, math.inf
    if base in _NONNEGATIVE:
        return 0.0, math.inf
    return 0.0, 1.0


def describe_measure(measure: str) -> str:
    """The registry's one-line description of ``measure``'s name ("" for unknown names)."""
    spec = _SPEC_BY_NAME.get(re.split(r"[(@]", measure, maxsplit=1)[0])
    return "" if spec is None else spec.description


#: Measures that need a fixture with answer spans (computed by ``evalkit.run.evaluate``).
SPAN_MEASURE_NAMES: frozenset[str] = frozenset(
    {"ContextPrecision", "ContextRecall", "NoAnswerFP", "NoResult"}
)


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
        return given[name] if name in given else _SPEC_BY_NAME[self.name].default(name)

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{key}={value!r}" for key, value in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _check(measure: Measure) -> None:
    """Raise MeasureError unless ``measure`` is a known name with valid, canonical fields."""
    spec = _SPEC_BY_NAME.get(measure.name)
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
    if name not in _SPEC_BY_NAME:
        Measure(name)  # raises the unknown-name error with suggestions
    params = _parse_params(text, match["params"])
    spec = _SPEC_BY_NAME[name]
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
    return ",".join(f"{lvl}={_number(parsed[lvl])}" for lvl in sorted(parsed))


def parse_gains(gains: str) -> dict[int, float]:
    """The canonical gain string (``'1=3,2=9'``) as ``{level: gain}`` (``''``: empty)."""
    out: dict[int, float] = {}
    for item in gains.split(",") if gains else []:
        level, _, gain = item.partition("=")
        out[int(level)] = float(gain)
    return out


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


_TREC_BASE = {
    "P": "P",
    "R": "recall",
    "Success": "success",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetF": "set_F",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "11pt_avg": "11pt_avg",
    "SetAP": "set_map",
    "set_relative_P": "set_relative_P",
    "relative_P": "relative_P",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "NumQ": "num_q",
    "infAP": "infAP",
    "unjudged": "unj",
    "utility": "utility",
    "G": "G",
    "binG": "binG",
    "yaap": "yaap",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "Rndcg",
}


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
        written = ",".join(_number(float(m.param(key))) for key in ("p1", "p2", "p3", "p4"))
        return f"utility_{written}"  # as trec_eval names -m utility.2,-1,0,0
    if m.name == "Rprec_mult":
        return f"Rprec_mult_{k:.2f}"
    if m.name == "nDCG" and m.param("gains") and m.param("dcg") == "log2" and k is None:
        return f"ndcg_{m.param('gains')}"  # as trec_eval names -m ndcg.1=3,2=9
    if m.name in ("rbp", "rbp_resid"):
        given = [f"p={_number(float(m.param('p')))}"] if m.param("p") != 0.9 else []
        if m.name == "rbp" and m.param("gains"):
            given.append(str(m.param("gains")))
        return m.name + ("_" + ",".join(given) if given else "")
    if m.name == "P" and m.param("judged_only"):
        raise MeasureError(f"measure {str(m)!r} is trec_eval's P with -J; it has no own name")
    if m.name in _TREC_BASE:
        base = _TREC_BASE[m.name]
        return base if k is None else f"{base}_{k}"
    raise MeasureError(f"measure {str(m)!r} has no trec_eval equivalent")
