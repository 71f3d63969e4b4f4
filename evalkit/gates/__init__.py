"""Quality gates, committed baselines and the comparison of two reports.

The public names are this package's (``from evalkit.gates import check_gates``); its modules
are private:

- ``_spec``: the ``gates.yaml`` schema and :func:`load_gates`.
- ``_baseline``: committed baselines: :func:`write_baseline`, :func:`load_report`, staleness
  (:func:`check_baseline_fresh`).
- ``_check``: :func:`check_gates`, a report against the gates and a baseline, one
  :class:`GateCheck` a row, and how the results are counted and shown.
- ``_explain``: the worst queries and the language rows of a failing check.
- ``_diff``: :func:`diff_reports`, what changed between two reports.
- ``_change``: :func:`compare_with_baseline`, every system against itself in a baseline.
- ``_verdict``: :func:`gate_verdict`, the one gate run and its :class:`GateVerdict`.
- ``_history``: :func:`baseline_history`, a committed baseline across commits (git).

The names are resolved on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.gates._baseline import (
        baseline_from_report,
        baseline_systems,
        changed_definitions,
        check_baseline_fresh,
        load_report,
        refresh_advice,
        refresh_options,
        write_baseline,
    )
    from evalkit.gates._change import (
        CHANGE_COLUMNS,
        LATENCY_CHANGE_COLUMNS,
        QUERY_CHANGE_COLUMNS,
        SYSTEM_CHANGE_COLUMNS,
        Change,
        ChangeSettings,
        change_sentence,
        compare_with_baseline,
    )
    from evalkit.gates._check import (
        GATE_COLUMNS,
        NOT_EVALUATED,
        GateCheck,
        check_gates,
        format_gate_table,
        gate_counts,
        gate_headline,
        gate_outcome,
        gate_systems,
        gates_failed,
        gates_to_report,
    )
    from evalkit.gates._diff import (
        DIFF_SCHEMA,
        PER_QUERY_DIFF_COLUMNS,
        SUMMARY_DIFF_COLUMNS,
        ReportDiff,
        diff_reports,
        diff_to_json,
        format_diff,
    )
    from evalkit.gates._explain import LANGUAGE_CHANGE_COLUMNS, language_changes, worst_queries
    from evalkit.gates._history import HISTORY_COLUMNS, baseline_history, format_history
    from evalkit.gates._spec import (
        DEFAULT_TOLERANCE,
        GATES_SCHEMA,
        AbsoluteGate,
        AbstentionGate,
        BaselineGate,
        Gates,
        RelativeGate,
        Tolerance,
        abstention_gate_ids,
        load_gates,
    )
    from evalkit.gates._verdict import DEFAULT_GATE_SOURCE, GateVerdict, gate_verdict

__all__ = [
    "CHANGE_COLUMNS",
    "DEFAULT_GATE_SOURCE",
    "DEFAULT_TOLERANCE",
    "DIFF_SCHEMA",
    "GATES_SCHEMA",
    "GATE_COLUMNS",
    "HISTORY_COLUMNS",
    "LANGUAGE_CHANGE_COLUMNS",
    "LATENCY_CHANGE_COLUMNS",
    "NOT_EVALUATED",
    "PER_QUERY_DIFF_COLUMNS",
    "QUERY_CHANGE_COLUMNS",
    "SUMMARY_DIFF_COLUMNS",
    "SYSTEM_CHANGE_COLUMNS",
    "AbsoluteGate",
    "AbstentionGate",
    "BaselineGate",
    "Change",
    "ChangeSettings",
    "GateCheck",
    "GateVerdict",
    "Gates",
    "RelativeGate",
    "ReportDiff",
    "Tolerance",
    "abstention_gate_ids",
    "baseline_from_report",
    "baseline_history",
    "baseline_systems",
    "change_sentence",
    "changed_definitions",
    "check_baseline_fresh",
    "check_gates",
    "compare_with_baseline",
    "diff_reports",
    "diff_to_json",
    "format_diff",
    "format_gate_table",
    "format_history",
    "gate_counts",
    "gate_headline",
    "gate_outcome",
    "gate_systems",
    "gate_verdict",
    "gates_failed",
    "gates_to_report",
    "language_changes",
    "load_gates",
    "load_report",
    "refresh_advice",
    "refresh_options",
    "worst_queries",
    "write_baseline",
]

# public name -> the private module that defines it
_MODULE_OF = {
    **dict.fromkeys(
        (
            "CHANGE_COLUMNS",
            "LATENCY_CHANGE_COLUMNS",
            "QUERY_CHANGE_COLUMNS",
            "SYSTEM_CHANGE_COLUMNS",
            "Change",
            "ChangeSettings",
            "change_sentence",
            "compare_with_baseline",
        ),
        "evalkit.gates._change",
    ),
    **dict.fromkeys(
        ("DEFAULT_GATE_SOURCE", "GateVerdict", "gate_verdict"), "evalkit.gates._verdict"
    ),
    **dict.fromkeys(
        ("HISTORY_COLUMNS", "baseline_history", "format_history"), "evalkit.gates._history"
    ),
    **dict.fromkeys(
        (
            "baseline_from_report",
            "baseline_systems",
            "changed_definitions",
            "check_baseline_fresh",
            "load_report",
            "refresh_advice",
            "refresh_options",
            "write_baseline",
        ),
        "evalkit.gates._baseline",
    ),
    **dict.fromkeys(
        (
            "GATE_COLUMNS",
            "NOT_EVALUATED",
            "GateCheck",
            "check_gates",
            "format_gate_table",
            "gate_counts",
            "gate_headline",
            "gate_outcome",
            "gate_systems",
            "gates_failed",
            "gates_to_report",
        ),
        "evalkit.gates._check",
    ),
    **dict.fromkeys(
        (
            "DIFF_SCHEMA",
            "PER_QUERY_DIFF_COLUMNS",
            "SUMMARY_DIFF_COLUMNS",
            "ReportDiff",
            "diff_reports",
            "diff_to_json",
            "format_diff",
        ),
        "evalkit.gates._diff",
    ),
    **dict.fromkeys(
        ("LANGUAGE_CHANGE_COLUMNS", "language_changes", "worst_queries"), "evalkit.gates._explain"
    ),
    **dict.fromkeys(
        (
            "DEFAULT_TOLERANCE",
            "GATES_SCHEMA",
            "AbsoluteGate",
            "AbstentionGate",
            "BaselineGate",
            "Gates",
            "RelativeGate",
            "Tolerance",
            "abstention_gate_ids",
            "load_gates",
        ),
        "evalkit.gates._spec",
    ),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
