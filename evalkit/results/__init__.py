"""The report file format (schema ``evalkit.report/1``): reader, deterministic projection,
writer and machine record. Below :mod:`evalkit.run` and :mod:`evalkit.gates`: the runner
builds reports (:func:`evalkit.run.report_json.build_report`), the gates read them, and the
gates never import the runner. Its module is private (``_format``); the names are these.
"""

from __future__ import annotations

from evalkit.results._format import (
    ALL_LANGUAGES,
    MEASURES_VERSION,
    NONDETERMINISTIC_KEYS,
    RANGE_SLACK,
    REPORT_SCHEMA,
    check_report_schema,
    deterministic_projection,
    machine_record,
    read_json_object,
    read_report,
    report_list,
    report_means,
    report_measure_order,
    report_name,
    report_per_query,
    short_repr,
    write_report,
)

__all__ = [
    "ALL_LANGUAGES",
    "MEASURES_VERSION",
    "NONDETERMINISTIC_KEYS",
    "RANGE_SLACK",
    "REPORT_SCHEMA",
    "check_report_schema",
    "deterministic_projection",
    "machine_record",
    "read_json_object",
    "read_report",
    "report_list",
    "report_means",
    "report_measure_order",
    "report_name",
    "report_per_query",
    "short_repr",
    "write_report",
]
