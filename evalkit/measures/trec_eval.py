"""trec_eval 10.0's program: its ``-m`` measure selection and the lines it prints.

:func:`select_measures` reads ``-m`` arguments as trec_eval's ``mark_measure`` does
(``trec_eval.c``, ``measures.c``, ``meas_init.c``): a name (``map``), a nickname (``official``,
``all_trec``, ``set``), or a name with parameters after the first ``.`` (``P.5,10``,
``iprec_at_recall..10,.5``, ``ndcg.1=3,2=9``, ``relstring.20``); the first ``-m`` of a name
sets its parameters. Long cutoffs are read with ``atol`` and sorted, double cutoffs with
``atof`` and sorted; an ir_measures-style name (``nDCG@10``) is evalkit's extension, printed
after trec_eval's measures. Measures print in ``measures.c`` order, each cutoff in ascending
order, under trec_eval's names (``P_10``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``).

:func:`trec_eval_lines` scores and prints as trec_eval's ``main`` does: per query (``-q``)
in the qrels' query order (byte order), then the ``all`` lines. Sums run query by query in
that order (so a mean on a rounding boundary prints as trec_eval's does), doubles print as
``%6.4f`` (NaN as ``-nan``: C's 0.0 / 0.0 carries the sign bit), counts as the truncated
``long`` of their sum; names are padded to 22 characters.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from evalkit.errors import MeasureError, TrecMeasureError
from evalkit.measures.judged import JudgedRanking
from evalkit.measures.names import (
    MEASURE_NAMES,
    Measure,
    measure_spec,
    parse_measure,
    trec_name,
)
from evalkit.registry import did_you_mean

__all__ = [
    "NICKNAMES",
    "Column",
    "atof",
    "atol",
    "format_lines",
    "format_value",
    "relstrings",
    "select_measures",
    "summary_values",
    "trec_measures",
]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TENTHS = tuple(i / 10 for i in range(11))


class _Def(NamedTuple):  # not a dataclass: faster to define at import
    """One entry of trec_eval's ``te_trec_measures`` (measures.c): its kind of parameters and
    values, evalkit's measure, the default parameters."""

    name: str
    kind: str  # runid num_q long double gm cut_long cut_double p_double p_pair relstring none
    base: str = ""
    defaults: tuple[float, ...] = ()


# measures.c's te_trec_measures, in order ("none": trec_eval has it, evalkit does not)
_TABLE: tuple[_Def, ...] = (
    _Def("runid", "runid"),
    _Def("num_q", "num_q", "NumQ"),
    _Def("num_ret", "long", "NumRet"),
    _Def("num_rel", "long", "NumRel"),
    _Def("num_rel_ret", "long", "NumRelRet"),
    _Def("map", "double", "AP"),
    _Def("gm_map", "gm", "AP"),
    _Def("Rprec", "double", "Rprec"),
    _Def("bpref", "double", "Bpref"),
    _Def("recip_rank", "double", "RR"),
    _Def("iprec_at_recall", "cut_double", "IPrec", _TENTHS),
    _Def("P", "cut_long", "P", _CUTS),
    _Def("relstring", "relstring", "", (10.0,)),
    _Def("recall", "cut_long", "R", _CUTS),
    _Def("infAP", "double", "infAP"),
    _Def("gm_bpref", "gm", "Bpref"),
    _Def("Rprec_mult", "cut_double", "Rprec_mult", tuple(i / 5 for i in range(1, 11))),
    _Def("utility", "p_double", "utility", (1.0, -1.0, 0.0, 0.0)),
    _Def("11pt_avg", "p_double", "11pt_avg", _TENTHS),
    _Def("binG", "double", "binG"),
    _Def("G", "p_pair", "G"),
    _Def("dcg", "none"),
    _Def("ideal_dcg", "none"),
    _Def("ndcg", "p_pair", "nDCG"),
    _Def("ndcg_rel", "p_pair", "ndcg_rel"),
    _Def("Rndcg", "p_pair", "Rndcg"),
    _Def("ndcg_cut", "cut_long", "nDCG", _CUTS),
    _Def("map_cut", "cut_long", "AP", _CUTS),
    _Def("relative_P", "cut_long", "relative_P", _CUTS),
    _Def("success", "cut_long", "Success", (1, 5, 10)),
    _Def("set_P", "double", "SetP"),
    _Def("set_relative_P", "double", "set_relative_P"),
    _Def("set_recall", "double", "SetR"),
    _Def("set_map", "double", "SetAP"),
    _Def("set_F", "p_double", "SetF", (1.0,)),
    _Def("num_nonrel_judged_ret", "long", "num_nonrel_judged_ret"),
    *(
        _Def(f"prefs_{name}", "none")
        for name in (
            "num_prefs_poss",
            "num_prefs_ful",
            "num_prefs_ful_ret",
            "simp",
            "pair",
            "avgjg",
            "avgjg_Rnonrel",
            "simp_ret",
            "pair_ret",
            "avgjg_ret",
            "avgjg_Rnonrel_ret",
            "simp_imp",
            "pair_imp",
            "avgjg_imp",
        )
    ),
    _Def("map_avgjg", "none"),
    _Def("P_avgjg", "none"),
    _Def("Rprec_mult_avgjg", "none"),
    _Def("yaap", "double", "yaap"),
    _Def("rbp", "p_pair", "rbp"),
    _Def("rbp_resid", "p_pair", "rbp_resid"),
    _Def("unj", "cut_long", "unjudged", (5, 10, 20)),
)
_BY_NAME = {d.name: d for d in _TABLE}

_OFFICIAL = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
]
#: trec_eval 10.0's nicknames (measures.c), each the measures it marks.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": tuple(_OFFICIAL),
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
    "all_trec": (
        *_OFFICIAL,
        *[
            "relstring",
            "recall",
            "unj",
            "rbp",
            "rbp_resid",
            "infAP",
            "gm_bpref",
            "utility",
            "11pt_avg",
            "ndcg",
            "relative_P",
            "Rprec_mult",
            "success",
            "map_cut",
            "ndcg_cut",
            "ndcg_rel",
            "Rndcg",
            "binG",
            "G",
            "set_P",
            "set_recall",
            "set_relative_P",
            "set_map",
            "set_F",
            "num_nonrel_judged_ret",
        ],
    ),
    "all_prefs": (
        "runid",
        "num_q",
        *(d.name for d in _TABLE if d.name.startswith("prefs_")),
    ),
    "prefs": (
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
_LONG_BASES = frozenset({"NumRet", "NumRel", "NumRelRet", "num_nonrel_judged_ret", "NumQ"})
#: measures trec_eval 10.0 added (9.0.8's measures.c lacks them; its nicknames too)
TREC_10_ONLY = frozenset({"rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"})


@dataclass(frozen=True)
class Column:
    """One printed measure: its trec_eval name, how it prints (``long``, ``double``, ``gm``,
    ``num_q``, ``num_rel``, ``runid``, ``relstring``), and the evalkit measures it reads (the
    mean of several for ``11pt_avg`` at custom recall levels)."""

    name: str
    kind: str
    measures: tuple[Measure, ...] = ()
    length: int = 0  # relstring's
    per_query: bool = True

    @property
    def mean_of(self) -> bool:
        return len(self.measures) > 1


class _Selection(NamedTuple):
    """The ``-m`` arguments read so far: the measures marked, the parameters each was given
    first, the ir_measures-style extensions."""

    marked: set[str]
    params: dict[str, str]
    extras: list[Measure]


def select_measures(
    args: Sequence[str], *, level: int = 1, trec_names: bool = False, trec_version: str = "10"
) -> list[Column]:
    """The columns ``-m args`` print (trec_eval's ``official`` without any), in print order.

    ``level`` is ``-l`` (evalkit's ``rel`` of every measure trec_eval judges by level);
    ``trec_names`` prints an ir_measures-style extension under its trec_eval name where one
    exists; ``trec_version`` ``"9"``: 9.0.8's measures only (its nicknames mark none of
    :data:`TREC_10_ONLY`, and naming one is illegal). Raises :class:`TrecMeasureError` as
    trec_eval refuses an argument."""
    chosen = _Selection(set(), {}, [])
    for arg in args or ["official"]:
        name = arg.partition(".")[0]
        if trec_version == "9" and name in TREC_10_ONLY:
            raise TrecMeasureError(f"trec_eval: illegal measure '{name}'", 1)
        _mark(arg, chosen)
    if trec_version == "9":
        chosen.marked.difference_update(TREC_10_ONLY)
    columns: list[Column] = []
    for definition in _TABLE:
        if definition.name in chosen.marked:
            columns += _columns(definition, chosen.params.get(definition.name), level)
    for measure in chosen.extras:
        columns.append(_extra_column(measure, trec_names))
    return columns


def _mark(arg: str, chosen: _Selection) -> None:
    name, dot, params = arg.partition(".")
    if dot:
        if not params:
            raise TrecMeasureError(
                f"trec_eval: improper measure in parameter '{name}'\n"
                f"trec_eval: illegal measure '{name}'",
                1,
            )
        chosen.params.setdefault(name, params)  # the first -m of a name sets its parameters
    if name in NICKNAMES:
        chosen.marked.update(NICKNAMES[name])
        return
    if name in _BY_NAME:
        chosen.marked.add(name)
        return
    try:
        measure = parse_measure(arg)
    except MeasureError:
        known = (*_BY_NAME, *NICKNAMES, *MEASURE_NAMES)
        raise TrecMeasureError(
            f"trec_eval: illegal measure '{name}': neither a trec_eval measure or nickname nor "
            "an ir_measures-style name such as nDCG@10."
            + did_you_mean(re.split(r"[(@]", name, maxsplit=1)[0], known),
            1,
        ) from None
    if measure not in chosen.extras:
        chosen.extras.append(measure)


def _columns(definition: _Def, params: str | None, level: int) -> list[Column]:
    name, kind, base = definition.name, definition.kind, definition.base
    if kind == "none":
        raise TrecMeasureError(
            f"trec_eval measure '{name}' is not computed by evalkit (preference, "
            "judgment-group and dcg measures are not); leave it out or use trec_eval itself",
            2,
        )
    if kind == "runid":
        return [Column("runid", "runid", per_query=False)]
    if kind in ("num_q", "long", "double", "gm"):
        measure = _measure(base, level)
        printed = "num_rel" if name == "num_rel" else kind
        return [Column(name, printed, (measure,), per_query=kind not in ("num_q", "gm"))]
    if kind in ("cut_long", "cut_double"):
        cuts: list[float] = list(definition.defaults)
        if params is not None:
            if kind == "cut_long":
                cuts = sorted(atol(p) for p in params.split(","))
                if cuts[0] <= 0:
                    raise _init_error(name, "trec_eval: Negative cutoff detected")
            else:
                cuts = sorted(atof(p) for p in params.split(","))
            if any(a == b for a, b in itertools.pairwise(cuts)):
                raise _init_error(name, "trec_eval: duplicate cutoffs detected")
        out = []
        for cut in cuts:
            label = f"{name}_{int(cut)}" if kind == "cut_long" else f"{name}_{cut:3.2f}"
            at = str(int(cut)) if kind == "cut_long" else repr(float(cut))
            out.append(Column(label, "double", (_measure(base, level, at),)))
        return out
    if kind == "relstring":
        length = int(atof(params.split(",")[0])) if params else 10
        label = f"relstring_{params}" if params else "relstring"
        return [Column(label, "relstring", length=max(length, 0))]
    label = f"{name}_{params}" if params else name
    if kind == "p_double":
        values = [atof(p) for p in params.split(",")] if params else list(definition.defaults)
        return [Column(label, "double", _double_param_measures(name, base, values, level))]
    return [Column(label, "double", (_pair_measure(name, base, params, level),))]


def _double_param_measures(
    name: str, base: str, values: list[float], level: int
) -> tuple[Measure, ...]:
    if name == "11pt_avg":
        if values == list(_TENTHS):
            return (_measure(base, level),)
        return tuple(_measure("IPrec", level, repr(v)) for v in values)
    if name == "utility":
        if len(values) != 4:
            raise _init_error(name, "utility takes 4 parameters (p1,p2,p3,p4)")
        given = ",".join(f"p{i + 1}={v!r}" for i, v in enumerate(values))
        return (_measure(base, level, params=given),)
    return (_measure(base, level, params=f"beta={values[0]!r}"),)  # set_F


def _pair_measure(name: str, base: str, params: str | None, level: int) -> Measure:
    if params is None:
        return _measure(base, level)
    pairs: list[tuple[str, float]] = []
    for item in params.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _init_error(name, f"trec_eval: malformed pair parameters in '{params}'")
        pairs.append((key, atof(value)))
    p = [v for k, v in pairs if k == "p"]
    gains = [(k, v) for k, v in pairs if k != "p"]
    given = []
    if p and name in ("rbp", "rbp_resid"):
        given.append(f"p={p[-1]!r}")
    elif p:
        raise _init_error(name, f"evalkit computes '{name}' without a 'p' parameter")
    if gains:
        if name not in ("ndcg", "rbp") or not all(re.fullmatch(r"\d+", k) for k, _ in gains):
            raise _init_error(
                name, f"evalkit computes '{name}' with gains given as level=gain only for ndcg, rbp"
            )
        given.append("gains='" + ",".join(f"{k}={v!r}" for k, v in gains) + "'")
    return _measure(base, level, params=",".join(given))


def _measure(base: str, level: int, cutoff: str = "", params: str = "") -> Measure:
    spec = measure_spec(base)
    every = [params] if params else []
    if "rel" in dict(spec.params) and base != "RBP":
        every.append(f"rel={level}")
    text = base + (f"({','.join(every)})" if every else "") + (f"@{cutoff}" if cutoff else "")
    return parse_measure(text)


def _init_error(name: str, reason: str) -> TrecMeasureError:
    return TrecMeasureError(f"{reason}\ntrec_eval: Cannot initialize measure '{name}'", 2)


def _extra_column(measure: Measure, trec_names: bool) -> Column:
    label = str(measure)
    if trec_names:
        with contextlib.suppress(MeasureError):
            label = trec_name(measure)
    if measure.name == "NumQ":
        return Column(label, "num_q", (measure,), per_query=False)
    return Column(label, "long" if measure.name in _LONG_BASES else "double", (measure,))


# patterns for re.match, compiled at first use (most command lines give no parameter)
_ATOL = r"^[ \t\n\v\f\r]*([+-]?\d+)"
_ATOF = r"(?i)^[ \t\n\v\f\r]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))"


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (0 without one)."""
    match = re.match(_ATOL, text)
    return int(match[1]) if match else 0


def atof(text: str) -> float:
    """C's ``atof`` for decimal text: the leading number of ``text`` (0.0 without one)."""
    match = re.match(_ATOF, text)
    return float(match[1]) if match else 0.0


def trec_measures(columns: Sequence[Column]) -> list[Measure]:
    """The evalkit measures the columns read, each once, in first-use order."""
    seen: dict[Measure, None] = {}
    for column in columns:
        for m in column.measures:
            seen.setdefault(m, None)
    return list(seen)


def relstrings(ranking: JudgedRanking, length: int) -> list[str]:
    """trec_eval's relstring of each query (``ranking`` after ``-M``/``-J``): per rank up to
    ``length``, the grade digit, ``>`` above 9, ``.`` for a negative grade (pooled, unjudged),
    ``-`` for a doc the qrels lack."""
    n = np.minimum(ranking.num_ret, length)
    out = []
    keep = ranking.position < length
    chars = np.where(
        ranking.grade > 9,
        ord(">"),
        np.where(ranking.grade >= 0, ord("0") + np.clip(ranking.grade, 0, 9), ord(".")),
    )
    query, position, char = ranking.query[keep], ranking.position[keep], chars[keep]
    bounds = np.searchsorted(query, np.arange(ranking.n_queries + 1))
    for q in range(ranking.n_queries):
        text = bytearray(b"-" * int(n[q]))
        lo, hi = bounds[q], bounds[q + 1]
        for p, c in zip(position[lo:hi].tolist(), char[lo:hi].tolist(), strict=True):
            if p < len(text):
                text[p] = c
        out.append(text.decode())
    return out


def format_value(kind: str, value: float) -> str:
    """``%ld`` of the truncated value (counts), else ``%6.4f`` (NaN as ``-nan``)."""
    if kind in ("long", "num_rel", "num_q"):
        return str(int(value)) if math.isfinite(value) else str(-(2**63))
    if math.isnan(value):
        return "  -nan"
    return f"{value:6.4f}"


def format_lines(rows: Sequence[tuple[str, str, str]]) -> str:
    """``name<padded to 22>\\tquery\\tvalue`` lines, as trec_eval prints them."""
    return "".join(f"{name:<22}\t{query}\t{text}\n" for name, query, text in rows)


def summary_values(
    column: Column,
    values: npt.NDArray[np.float64],
    *,
    divisor: int,
    missing: int,
    num_rel_all: int | None,
) -> float:
    """The ``all`` value of a column from its per-query ``values`` (the queries evaluated, in
    order): summed one by one as trec_eval's ``te_acc_meas_*`` adds them, then its
    ``te_calc_avg_*``: divided by ``divisor`` (doubles), the sum (counts), the count of
    queries (``num_q``), ``num_rel_all`` (``num_rel`` with ``-c``: every grade > 0 of the
    qrels), or the geometric mean with ``missing`` queries at trec_eval's 0.00001."""
    if column.kind == "num_q":
        return float(divisor)
    if column.kind == "num_rel" and num_rel_all is not None:
        return float(num_rel_all)
    if column.kind == "gm":
        total = 0.0
        for v in values.tolist():
            total += math.log(max(v, _MIN_GEO_MEAN))
        total += missing * math.log(_MIN_GEO_MEAN)
        return math.exp(total / divisor) if divisor else total
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if column.kind in ("long", "num_rel"):
        return total
    return total / divisor if divisor else total


_MIN_GEO_MEAN = 0.00001  # trec_eval.h MIN_GEO_MEAN
