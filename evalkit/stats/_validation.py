"""Input checks shared by the statistics (:mod:`paired`, :mod:`paired_tests`, :mod:`multi`).

The tidy per-query frame (columns present, real and finite values, IDs present, no duplicated
``(system, query_id, measure)`` rows), the measures and ``by`` columns selected, the argument
values (choices, confidence, resamples, seed, 1-D finite arrays), and the short listings that
their :class:`~evalkit.errors.InputError` messages use (IDs, positions and column names, never
query attribute values).

**Not applicable.** A ``(query_id, measure)`` whose value is NaN in *every* row (every system)
does not apply to that query (a span measure on a query without annotated spans, see
:func:`evalkit.run.evaluate`): its rows are left out before any check, so a measure that
applies to no query is absent, as if it had no rows. A NaN beside a finite value of the same
query and measure is still an error.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit._arrays import FloatArray
from evalkit.errors import InputError
from evalkit.registry import did_you_mean

__all__ = [
    "check_choice",
    "check_resampling",
    "column_names",
    "describe_key",
    "finite_vector",
    "selected_measures",
    "short_list",
    "validated_frame",
]


_ID_COLUMNS = ("system", "query_id", "measure")
_MAX_LISTED_IDS = 5
_MAX_LISTED_NAMES = 20  # measure names are all listed up to this many


def validated_frame(
    per_query: pd.DataFrame, by_columns: tuple[str, ...], *, function: str
) -> pd.DataFrame:
    """A checked copy with ``query_id, value``, the ID columns present and the ``by`` columns."""
    if not isinstance(per_query, pd.DataFrame):
        raise InputError(
            f"{function}: 'per_query' must be a pandas DataFrame; found {type(per_query).__name__}"
        )
    paired = function != "summarize_with_ci"  # every other function pairs systems by query
    required = ("system", "query_id", "measure") if paired else ("query_id",)
    reserved = (*required, "value") if paired else ("value",)
    clashing = [c for c in by_columns if c in reserved]
    if clashing:
        raise InputError(
            f"{function}: 'by' cannot name {short_list(clashing)}; group by query attributes "
            "such as 'language' or 'answerable'"
        )
    needed = list(dict.fromkeys((*required, *by_columns, "value")))
    missing = [c for c in needed if c not in per_query.columns]
    if missing:
        raise InputError(
            f"{function}: 'per_query' lacks column(s) {short_list(missing)}; expected the tidy "
            f"per-query frame with columns {short_list(needed)}"
        )
    if not pd.api.types.is_numeric_dtype(per_query["value"]) or pd.api.types.is_complex_dtype(
        per_query["value"]
    ):
        raise InputError(
            f"{function}: column 'value' must hold real numbers; found dtype "
            f"{per_query['value'].dtype}"
        )
    ids = [c for c in _ID_COLUMNS if c in per_query.columns]
    kept = list(dict.fromkeys((*ids, *by_columns, "value")))
    frame = per_query[kept].copy()
    for column in ids:
        absent_ids = int(frame[column].isna().sum())
        if absent_ids:
            raise InputError(
                f"{function}: column {column!r} has missing IDs in {absent_ids} row(s); every "
                "row needs a system, query_id and measure"
            )
        if column not in by_columns:
            frame[column] = frame[column].astype("str")
    frame["value"] = frame["value"].astype(np.float64)
    frame = _applicable_rows(frame)

    bad_value = ~np.isfinite(frame["value"].to_numpy())
    if bad_value.any():
        raise InputError(
            f"{function}: column 'value' is missing (NaN) or not finite at "
            f"{short_list(_row_ids(frame[bad_value]))}; every (system, query_id, measure) needs a "
            "finite value"
        )
    for column in by_columns:
        absent = frame[column].isna().to_numpy()
        if absent.any():
            raise InputError(
                f"{function}: 'by' column {column!r} is missing at "
                f"{short_list(_row_ids(frame[absent]))}; fill it or group by other columns"
            )
    duplicated = frame.duplicated(ids, keep="first").to_numpy() if len(ids) == 3 else None
    if duplicated is not None and duplicated.any():
        raise InputError(
            f"{function}: duplicated (system, query_id, measure) rows at "
            f"{short_list(_row_ids(frame[duplicated]))}; expected one row each"
        )
    return frame


def _applicable_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the rows of a ``(query_id, measure)`` that is NaN in every row (not
    applicable: module docstring); the same frame when no value is NaN."""
    missing = frame["value"].isna()
    if not missing.any():
        return frame
    keys = [c for c in ("query_id", "measure") if c in frame.columns]
    some_value = (~missing).groupby([frame[c] for c in keys], sort=False).transform("any")
    return frame[~missing | some_value.to_numpy()]


def selected_measures(
    frame: pd.DataFrame, measures: str | Sequence[str] | None, *, function: str = "compare"
) -> list[str]:
    """The measures to compare: all present (sorted) or the given ones, which must be present."""
    present = sorted(frame["measure"].unique())
    if measures is None:
        return present
    wanted = list(dict.fromkeys(column_names(measures, "measures")))
    for measure in wanted:
        if measure not in present:
            shown = short_list(present, limit=_MAX_LISTED_NAMES)
            raise InputError(
                f"{function}: measure {measure!r} has no rows (or only NaN: not applicable "
                "to any query); measures present: "
                f"{shown}.{_closest_measure(measure, present)}"
            )
    return wanted


def _closest_measure(name: str, present: Sequence[str]) -> str:
    """``" Did you mean 'x'?"``, or ``""``: the measure whose name without parameters in
    parentheses equals ``name``'s ignoring case (``nDCG@10`` finds
    ``nDCG(dcg='exp-log2')@10``), else the closest full name
    (:func:`evalkit.registry.did_you_mean`), else the closest bare name."""
    bare = {_bare(m): m for m in sorted(present, reverse=True)}
    if _bare(name) in bare:
        return f" Did you mean {bare[_bare(name)]!r}?"
    hint = did_you_mean(name, list(present))
    if hint:
        return hint
    close = difflib.get_close_matches(_bare(name), list(bare), n=1, cutoff=0.6)
    return f" Did you mean {bare[close[0]]!r}?" if close else ""


def _bare(measure: str) -> str:
    return re.sub(r"\([^)]*\)", "", measure).lower()


def column_names(names: str | Sequence[str] | None, argument: str) -> tuple[str, ...]:
    """``None`` → (), a string → (it,), a sequence of strings → tuple."""
    if names is None:
        return ()
    if isinstance(names, str):
        return (names,)
    result = tuple(names)
    if not all(isinstance(n, str) for n in result):
        raise InputError(f"'{argument}' must be a string or a sequence of strings")
    if len(set(result)) != len(result):
        raise InputError(f"'{argument}' names a column twice: {short_list(result)}")
    return result


def check_choice(argument: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(
            f"unknown {argument} {value!r}; expected one of {short_list(choices)}."
            + did_you_mean(str(value).lower(), choices)
        )


def check_resampling(*, confidence: float | None = None, n_resamples: int, seed: int) -> None:
    """Check the resampling arguments; ``confidence=None`` when the function has none."""
    if confidence is not None and not (
        isinstance(confidence, float | int) and 0.0 < confidence < 1.0
    ):
        raise InputError(f"'confidence' must be a number in (0, 1); found {confidence!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise InputError(f"'n_resamples' must be an int; found {type(n_resamples).__name__}")
    if n_resamples < 1:
        raise InputError(f"'n_resamples' must be at least 1; found {n_resamples}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"'seed' must be a non-negative int; found {seed!r}")


def finite_vector(values: npt.ArrayLike, name: str) -> FloatArray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"'{name}' must be a 1-D array of numbers") from None
    if array.ndim != 1:
        raise InputError(f"'{name}' must be 1-D; found {array.ndim} dimensions")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InputError(
            f"'{name}' has missing (NaN) or infinite values at positions "
            f"{short_list(str(i) for i in bad)}; expected finite numbers"
        )
    return array


def _row_ids(rows: pd.DataFrame) -> list[str]:
    """``system/query_id/measure`` labels of rows, for error messages (IDs only)."""
    ids = [c for c in _ID_COLUMNS if c in rows.columns]
    return ["/".join(str(v) for v in row) for row in rows[ids].itertuples(index=False)]


def describe_key(columns: Sequence[str], key: Iterable[Hashable]) -> str:
    """``column=value`` for ID columns and the bare name for attributes (no attribute values)."""
    return ", ".join(
        f"{c}={v!s}" if c in _ID_COLUMNS else c for c, v in zip(columns, key, strict=True)
    )


def short_list(items: Iterable[object], *, limit: int = _MAX_LISTED_IDS) -> str:
    """Up to ``limit`` (five) items, quoted, then how many more."""
    listed = [str(i) for i in items]
    shown = ", ".join(repr(i) for i in listed[:limit])
    more = len(listed) - limit
    return shown + (f" and {more} more" if more > 0 else "")
