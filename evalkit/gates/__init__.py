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
        baseline_from_report as baseline_from_report,
        baseline_systems as baseline_systems,
        changed_definitions as changed_definitions,
        check_baseline_fresh as check_baseline_fresh,
        load_report as load_report,
        refresh_advice as refresh_advice,
        refresh_options as refresh_options,
        write_baseline as write_baseline,
    )
    from evalkit.gates._change import (
        ABSTENTION_CHANGE_COLUMNS as ABSTENTION_CHANGE_COLUMNS,
        CHANGE_COLUMNS as CHANGE_COLUMNS,
        LATENCY_CHANGE_COLUMNS as LATENCY_CHANGE_COLUMNS,
        QUERY_CHANGE_COLUMNS as QUERY_CHANGE_COLUMNS,
        SYSTEM_CHANGE_COLUMNS as SYSTEM_CHANGE_COLUMNS,
        Change as Change,
        ChangeSettings as ChangeSettings,
        change_sentence as change_sentence,
        compare_with_baseline as compare_with_baseline,
    )
    from evalkit.gates._check import (
        GATE_COLUMNS as GATE_COLUMNS,
        NOT_EVALUATED as NOT_EVALUATED,
        GateCheck as GateCheck,
        check_digits as check_digits,
        check_gates as check_gates,
        format_gate_table as format_gate_table,
        gate_cannot_fail as gate_cannot_fail,
        gate_counts as gate_counts,
        gate_headline as gate_headline,
        gate_outcome as gate_outcome,
        gate_systems as gate_systems,
        gates_failed as gates_failed,
        gates_to_report as gates_to_report,
        threshold_text as threshold_text,
    )
    from evalkit.gates._diff import (
        DIFF_SCHEMA as DIFF_SCHEMA,
        PER_QUERY_DIFF_COLUMNS as PER_QUERY_DIFF_COLUMNS,
        SUMMARY_DIFF_COLUMNS as SUMMARY_DIFF_COLUMNS,
        ReportDiff as ReportDiff,
        diff_reports as diff_reports,
        diff_to_json as diff_to_json,
        format_diff as format_diff,
    )
    from evalkit.gates._explain import (
        LANGUAGE_CHANGE_COLUMNS as LANGUAGE_CHANGE_COLUMNS,
        language_changes as language_changes,
        worst_queries as worst_queries,
    )
    from evalkit.gates._history import (
        HISTORY_COLUMNS as HISTORY_COLUMNS,
        baseline_history as baseline_history,
        format_history as format_history,
    )
    from evalkit.gates._spec import (
        DEFAULT_TOLERANCE as DEFAULT_TOLERANCE,
        GATES_SCHEMA as GATES_SCHEMA,
        AbsoluteGate as AbsoluteGate,
        AbstentionGate as AbstentionGate,
        BaselineGate as BaselineGate,
        Gates as Gates,
        RelativeGate as RelativeGate,
        Tolerance as Tolerance,
        abstention_gate_ids as abstention_gate_ids,
        load_gates as load_gates,
    )
    from evalkit.gates._verdict import (
        DEFAULT_GATE_SOURCE as DEFAULT_GATE_SOURCE,
        GateVerdict as GateVerdict,
        gate_verdict as gate_verdict,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
