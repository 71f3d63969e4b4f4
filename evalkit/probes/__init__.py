"""Probes: YAML probe fixtures, a tool registry, set scoring and code-intelligence targets
(ranked answers are scored with RR and nDCG by the measures engine).

>>> target = get_target("stdlib")
>>> probes = load_probes("fixtures/probes", tools=target.tools.names())  # doctest: +SKIP
>>> results = run_probes(target.tools, probes)  # doctest: +SKIP
"""

from evalkit.probes.codeindex import CodeIndex, build_code_index
from evalkit.probes.load import Probe, load_probes
from evalkit.probes.report import baseline_drops, format_table, probes_report
from evalkit.probes.runner import RESULT_COLUMNS, run_probes, run_target_probes
from evalkit.probes.scoring import SetScore, score_symbols
from evalkit.probes.targets import TARGETS, Target, get_target
from evalkit.probes.tools import Param, Tool, ToolResult, dispatch

__all__ = [
    "RESULT_COLUMNS",
    "TARGETS",
    "CodeIndex",
    "Param",
    "Probe",
    "SetScore",
    "Target",
    "Tool",
    "ToolResult",
    "baseline_drops",
    "build_code_index",
    "dispatch",
    "format_table",
    "get_target",
    "load_probes",
    "probes_report",
    "run_probes",
    "run_target_probes",
    "score_symbols",
]
