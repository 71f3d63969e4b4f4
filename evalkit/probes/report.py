"""The deterministic probe report (a JSON-ready dict), baseline comparison and a text table.

Report shape (``schema: evalkit.probes/1``)::

    {"schema": "evalkit.probes/1",
     "target": {"name": "stdlib", "fingerprint": "sha256:..."},
     "probes_hash": "sha256:...",            # hash of the probe definitions
     "probes": [{"id", "tool", "status", "recall", "precision", "f1", "rr", "ndcg",
                 "recall_min", "precision_min", "pass_recall", "pass_precision",
                 "missing", "extra", "got", "error"}, ...],   # in run order; NaN -> null
                                              # got: what the tool returned, in its order
     "summary": {"probes", "passed", "failed", "errors", "mean_recall", "mean_precision",
                 "mean_f1"}}                  # means over probes that ran (null if none)

Latency is deliberately absent, so two runs on the same inputs give byte-identical JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalkit.errors import InputError, StaleBaselineError
from evalkit.probes.load import Probe
from evalkit.safety.canonical import canonical_hash

__all__ = ["DROP_COLUMNS", "REPORT_SCHEMA", "baseline_drops", "format_table", "probes_report"]

REPORT_SCHEMA = "evalkit.probes/1"
_REPORTED = (
    "id",
    "tool",
    "status",
    "recall",
    "precision",
    "f1",
    "rr",
    "ndcg",
    "recall_min",
    "precision_min",
    "pass_recall",
    "pass_precision",
    "missing",
    "extra",
    "got",
    "error",
)
_GATED = ("recall", "precision")
#: Columns of :func:`baseline_drops`.
DROP_COLUMNS = ("id", "measure", "baseline", "current")


def probes_report(
    results: pd.DataFrame, *, target: str, fingerprint: str, probes: Sequence[Probe]
) -> dict[str, Any]:
    """The JSON-ready report of a :func:`~evalkit.probes.run_probes` frame (shape above)."""
    rows = [
        {key: _plain(row[key]) for key in _REPORTED} for row in results.to_dict(orient="records")
    ]
    ran = results[results["status"] != "error"]
    summary: dict[str, int | float | None] = {
        "probes": len(results),
        "passed": int((results["status"] == "pass").sum()),
        "failed": int((results["status"] == "fail").sum()),
        "errors": int((results["status"] == "error").sum()),
    }
    for measure in ("recall", "precision", "f1"):
        summary[f"mean_{measure}"] = float(ran[measure].mean()) if len(ran) else None
    return {
        "schema": REPORT_SCHEMA,
        "target": {"name": target, "fingerprint": fingerprint},
        "probes_hash": canonical_hash([p.model_dump(mode="json") for p in probes]),
        "probes": rows,
        "summary": summary,
    }


def baseline_drops(report: Mapping[str, Any], baseline: Mapping[str, Any]) -> pd.DataFrame:
    """Probes whose recall or precision is lower than in ``baseline`` (or that no longer run).

    Returns columns :data:`DROP_COLUMNS` (``current`` is NaN when the probe now errors or is
    gone), sorted by id then measure. Raises :class:`StaleBaselineError` when the baseline has
    another schema or target, :class:`InputError` when it is not a probes report.
    """
    if baseline.get("schema") != REPORT_SCHEMA:
        raise StaleBaselineError(
            f"baseline schema is not {REPORT_SCHEMA!r}; regenerate it with "
            "`evalkit probes DIR --target NAME --output PATH`"
        )
    base_target = baseline.get("target")
    if not isinstance(base_target, Mapping) or base_target.get("name") != report["target"]["name"]:
        raise StaleBaselineError(
            f"baseline was made for another target than {report['target']['name']!r}; "
            "compare against a baseline of the same target"
        )
    current = {row["id"]: row for row in report["probes"]}
    drops = []
    for entry in _baseline_rows(baseline):
        now = current.get(entry["id"], {})
        for measure in _GATED:
            before, after = entry.get(measure), now.get(measure)
            if not isinstance(before, int | float) or isinstance(before, bool):
                continue  # the probe did not run in the baseline: nothing to drop from
            if after is None or after < before:
                drops.append((entry["id"], measure, float(before), _nan_if_none(after)))
    frame = pd.DataFrame(sorted(drops), columns=list(DROP_COLUMNS))
    return frame.astype(
        {"id": "str", "measure": "str", "baseline": "float64", "current": "float64"}
    )


def format_table(results: pd.DataFrame) -> str:
    """A fixed-width text table of a results frame (IDs, scores, status; no fixture text)."""
    columns = ["id", "tool", "recall", "precision", "f1", "rr", "ndcg", "status", "latency_ms"]
    shown = results[columns]
    if shown.empty:
        return "(no probes)"
    return shown.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-")


def _baseline_rows(baseline: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rows = baseline.get("probes")
    if not isinstance(rows, list) or not all(
        isinstance(r, Mapping) and isinstance(r.get("id"), str) for r in rows
    ):
        raise InputError(
            "baseline field 'probes' must be a list of objects with an 'id'; "
            "regenerate the baseline with `evalkit probes ... --output PATH`"
        )
    return rows


def _plain(value: object) -> object:
    """A frame cell as a JSON value: NaN -> None, tuples -> lists, numpy scalars -> Python."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else float(value)
