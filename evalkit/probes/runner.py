"""Run probes against a tool registry: one scored row per probe, dispatch errors kept apart."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalkit.errors import DispatchError
from evalkit.measures import score_list
from evalkit.probes.load import Probe, load_probes
from evalkit.probes.scoring import score_symbols
from evalkit.probes.targets import get_target
from evalkit.probes.tools import Tool, dispatch
from evalkit.registry import Registry

__all__ = ["RANKING_MEASURES", "RESULT_COLUMNS", "run_probes", "run_target_probes"]

#: The ranking measures of a tool that returns a ranking: the measures engine's RR and nDCG of
#: the whole list (each expected name graded 1; a repeated name keeps its first place), by
#: their columns.
RANKING_MEASURES = {"rr": "RR", "ndcg": "nDCG"}

#: Columns of :func:`run_probes`, in order, with their dtypes.
RESULT_COLUMNS: dict[str, str] = {
    "id": "str",
    "tool": "str",
    "status": "str",  # "pass", "fail" (a threshold missed) or "error" (could not run)
    "recall": "float64",
    "precision": "float64",
    "f1": "float64",
    "rr": "float64",  # NaN unless the tool returns a ranking
    "ndcg": "float64",  # NaN unless the tool returns a ranking
    "recall_min": "float64",
    "precision_min": "float64",
    "pass_recall": "bool",
    "pass_precision": "bool",
    "n_expected": "int64",
    "n_returned": "int64",  # distinct names returned
    "missing": "object",  # tuple[str, ...], sorted: expected but not returned
    "extra": "object",  # tuple[str, ...], sorted: returned but not expected
    "got": "object",  # tuple[str, ...]: what the tool returned, in its order, repeats kept
    "error": "str",  # the DispatchError message, NaN when the probe ran
    "latency_ms": "float64",  # wall-clock time of the tool call (not deterministic)
}


def run_probes(tools: Registry[Tool], probes: Sequence[Probe]) -> pd.DataFrame:
    """Dispatch every probe in input order and score its answer.

    Returns one row per probe with :data:`RESULT_COLUMNS`. A probe that could not run
    (unknown tool, bad arguments, the tool raised) has ``status == "error"``, the reason in
    ``error``, NaN scores and both pass flags False; it is never scored as zero. A probe that
    ran passes when ``recall >= recall_min`` and ``precision >= precision_min``.
    """
    rows = [_run_one(tools, probe) for probe in probes]
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    return frame.astype(RESULT_COLUMNS)


def run_target_probes(target: str, probe_dir: str | Path) -> pd.DataFrame:
    """The probes of ``probe_dir`` run against the registered target named ``target``
    (:func:`~evalkit.probes.get_target`): :func:`run_probes` of its tools on
    :func:`~evalkit.probes.load_probes` of the folder, for the tools it has. A call of plain
    values, so that ``evalkit report``'s helper can make it for the notebook's probe cell."""
    tools = get_target(target).tools
    return run_probes(tools, load_probes(probe_dir, tools=tools.names()))


def _run_one(tools: Registry[Tool], probe: Probe) -> dict[str, object]:
    expected = probe.expected.symbols
    row: dict[str, object] = {
        "id": probe.id,
        "tool": probe.probe.tool,
        "recall_min": probe.scoring.recall_min,
        "precision_min": probe.scoring.precision_min,
        "n_expected": len(set(expected)),
        "rr": math.nan,
        "ndcg": math.nan,
    }
    started = time.perf_counter()
    try:
        result = dispatch(tools, probe.probe.tool, probe.probe.args)
    except DispatchError as error:
        row.update(
            status="error",
            recall=math.nan,
            precision=math.nan,
            f1=math.nan,
            pass_recall=False,
            pass_precision=False,
            n_returned=0,
            missing=(),
            extra=(),
            got=(),
            error=f"probe {probe.id!r}: {error}",
            latency_ms=(time.perf_counter() - started) * 1000.0,
        )
        return row
    latency_ms = (time.perf_counter() - started) * 1000.0
    score = score_symbols(expected, result.symbols)
    pass_recall = score.recall >= probe.scoring.recall_min
    pass_precision = score.precision >= probe.scoring.precision_min
    row.update(
        status="pass" if pass_recall and pass_precision else "fail",
        recall=score.recall,
        precision=score.precision,
        f1=score.f1,
        pass_recall=pass_recall,
        pass_precision=pass_precision,
        n_returned=len(set(result.symbols)),
        missing=score.missing,
        extra=score.extra,
        got=result.symbols,
        error=math.nan,
        latency_ms=latency_ms,
    )
    if result.ordered:
        values = score_list(
            result.symbols, dict.fromkeys(expected, 1), list(RANKING_MEASURES.values())
        )
        row.update({column: values[name] for column, name in RANKING_MEASURES.items()})
    return row
