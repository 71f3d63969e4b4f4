"""The report file format (schema ``evalkit.report/1``): reader, deterministic projection,
writer and machine record. Below :mod:`evalkit.run` and :mod:`evalkit.gates`: the runner
builds reports (:func:`evalkit.run.report_json.build_report`), the gates read them, and the
gates never import the runner. Its module is private (``_format``); the names are these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.results._format import (
        ALL_LANGUAGES as ALL_LANGUAGES,
        CONFIDENCE_DECLARED as CONFIDENCE_DECLARED,
        CONFIDENCE_SOURCES as CONFIDENCE_SOURCES,
        CONFIDENCE_TOP_SCORE as CONFIDENCE_TOP_SCORE,
        MEASURES_VERSION as MEASURES_VERSION,
        NONDETERMINISTIC_KEYS as NONDETERMINISTIC_KEYS,
        RANGE_SLACK as RANGE_SLACK,
        REPORT_SCHEMA as REPORT_SCHEMA,
        check_report_schema as check_report_schema,
        deterministic_projection as deterministic_projection,
        machine_record as machine_record,
        read_json_object as read_json_object,
        read_report as read_report,
        report_confidence as report_confidence,
        report_list as report_list,
        report_means as report_means,
        report_measure_order as report_measure_order,
        report_name as report_name,
        report_per_query as report_per_query,
        report_query_languages as report_query_languages,
        short_repr as short_repr,
        write_report as write_report,
    )

__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
