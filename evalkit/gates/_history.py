"""A committed baseline across commits: :func:`baseline_history` reads its versions from git.

``git log --follow`` lists the commits that changed the file (renames followed, first parent
only by default, so a merged branch's intermediate states are left out), ``git show`` reads each
version. Per version, system and measure: the mean of its per-query values with a percentile
bootstrap interval (:func:`evalkit.stats.summarize_with_ci`). A version **moved** when the
version before it has the same shared definition (``definitionHashes.shared``, else
``evaluationDefinitionHash``) and its mean lies outside that version's interval (a mean on a
bound, within :mod:`evalkit.stats`' rule of equality, is no move); ``first_move`` marks, per
system and measure, the oldest such commit. Only commit hashes and times are read: never
subjects or authors. Needs nothing but ``git``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import pandas as pd

from evalkit.errors import InputError
from evalkit.measures.names import higher_is_better
from evalkit.results import report_measure_order, report_per_query
from evalkit.safety.inputs import load_json
from evalkit.stats import EQUAL_RTOL, SUMMARY_COLUMNS, summarize_with_ci

__all__ = ["HISTORY_COLUMNS", "baseline_history", "format_history"]

HISTORY_COLUMNS: Final = (
    "order",
    "commit",
    "committed_at",
    "system",
    "measure",
    *SUMMARY_COLUMNS,  # n, mean, ci_low, ci_high
    "comparable",
    "moved",
    "first_move",
)
"""Columns of :func:`baseline_history`: ``order`` 0 the oldest version; ``commit`` its full
hash; ``committed_at`` UTC ISO time; ``comparable`` (the version before has the same shared
definition); ``moved`` ``worse``/``better``/``""``; ``first_move`` True on the oldest move of
its system and measure."""

_SHA: Final = re.compile(r"[0-9a-f]{40,64}")
_MAX_BYTES: Final = 64 * 1024 * 1024


def _git(args: Sequence[str], cwd: Path) -> str:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
        )
    except FileNotFoundError:
        raise InputError(
            "git was not found; evalkit history reads the file's versions with git"
        ) from None
    if done.returncode != 0:
        raise InputError(
            f"git {args[0]} failed (exit {done.returncode}); run evalkit history inside the git "
            "work tree where the baseline is committed"
        )
    return done.stdout


def _versions(path: Path, first_parent: bool) -> tuple[list[tuple[str, str, str]], Path]:
    """(commit, UTC time, the file's path at that commit), oldest first, and the work tree."""
    folder = path.resolve().parent
    top = Path(_git(["rev-parse", "--show-toplevel"], folder).strip())
    relative = path.resolve().relative_to(top).as_posix()
    args = ["log", "--follow", "-M", "--format=%x00%H%x09%ct", "--name-only"]
    if first_parent:
        args.append("--first-parent")
    out = _git([*args, "--", relative], top)
    versions = []
    for block in out.split("\x00")[1:]:
        lines = [line for line in block.splitlines() if line.strip()]
        sha, _, seconds = lines[0].partition("\t")
        if not _SHA.fullmatch(sha) or len(lines) < 2:
            continue
        stamp = pd.Timestamp(int(seconds), unit="s", tz="UTC").isoformat()
        versions.append((sha, stamp, lines[-1]))
    if not versions:
        raise InputError("the baseline was never committed; commit it, then run evalkit history")
    return list(reversed(versions)), top


def baseline_history(
    path: str | os.PathLike[str],
    *,
    systems: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    first_parent: bool = True,
) -> pd.DataFrame:
    """Every committed version of the baseline at ``path``, per system and measure
    (:data:`HISTORY_COLUMNS`, module docs). Raises :class:`InputError` when git is missing,
    ``path`` is not in a work tree or was never committed."""
    versions, top = _versions(Path(path), first_parent)
    rows: list[dict[str, Any]] = []
    previous: dict[tuple[str, str], dict[str, Any]] = {}
    previous_definition: object = None
    for order, (sha, stamp, name) in enumerate(versions):
        size = _git(["cat-file", "-s", f"{sha}:{name}"], top).strip()
        if not size.isdigit() or int(size) > _MAX_BYTES:
            continue
        try:
            report = load_json(_git(["show", f"{sha}:{name}"], top))
        except ValueError:
            continue  # a version that is not JSON (e.g. mid-conflict) is skipped
        if not isinstance(report, dict):
            continue
        hashes = report.get("definitionHashes")
        definition = (hashes.get("shared") if isinstance(hashes, dict) else None) or report.get(
            "evaluationDefinitionHash"
        )
        per_query = report_per_query(report, "baseline")
        order_of = report_measure_order(report)
        tidy = [
            (system, query, measure, value)
            for system, queries in per_query.items()
            if systems is None or system in systems
            for query, values in queries.items()
            for measure, value in values.items()
            if measures is None or measure in measures
        ]
        if not tidy:
            continue
        frame = pd.DataFrame(tidy, columns=["system", "query_id", "measure", "value"])
        summary = summarize_with_ci(
            frame, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
        rank = {m: i for i, m in enumerate(order_of)}
        summary = summary.assign(_m=summary["measure"].map(rank)).sort_values(
            ["system", "_m"], kind="stable"
        )
        current: dict[tuple[str, str], dict[str, Any]] = {}
        for row in summary.to_dict("records"):
            key = (str(row["system"]), str(row["measure"]))
            before = previous.get(key)
            comparable = before is not None and definition == previous_definition
            moved = ""
            if comparable and before is not None:
                mean, low, high = float(row["mean"]), before["ci_low"], before["ci_high"]
                unit = EQUAL_RTOL * max(abs(mean), abs(low), abs(high), 1e-300)
                sign = 1.0 if higher_is_better(key[1]) else -1.0
                if mean < low - unit:
                    moved = "worse" if sign > 0 else "better"
                elif mean > high + unit:
                    moved = "better" if sign > 0 else "worse"
            record = {
                "order": order,
                "commit": sha,
                "committed_at": stamp,
                "system": key[0],
                "measure": key[1],
                "n": int(row["n"]),
                "mean": float(row["mean"]),
                "ci_low": float(row["ci_low"]),
                "ci_high": float(row["ci_high"]),
                "comparable": comparable,
                "moved": moved,
                "first_move": False,
            }
            rows.append(record)
            current[key] = record
        previous, previous_definition = current, definition
    history = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    seen: set[tuple[str, str]] = set()
    for index in history.index[history["moved"] != ""]:
        key = (str(history.at[index, "system"]), str(history.at[index, "measure"]))
        if key not in seen:
            seen.add(key)
            history.at[index, "first_move"] = True
    return history.astype({"comparable": bool, "first_move": bool})


def format_history(history: pd.DataFrame) -> str:
    """A fixed-width table (12-character hashes), then one ``first move:`` line per system and
    measure that moved: the commit, its mean and the interval of the commit before it."""
    lines = [
        f"{'commit':12}  {'committed (UTC)':25}  {'system':20}  {'measure':28}  "
        f"{'mean':>6}  {'interval':>17}  moved"
    ]
    for row in history.to_dict("records"):
        lines.append(
            f"{row['commit'][:12]:12}  {row['committed_at']:25}  {row['system'][:20]:20}  "
            f"{row['measure'][:28]:28}  {row['mean']:6.3f}  "
            f"[{row['ci_low']:6.3f}, {row['ci_high']:6.3f}]  {row['moved'] or '-'}"
        )
    for row in history[history["first_move"]].to_dict("records"):
        before = history[
            (history["system"] == row["system"])
            & (history["measure"] == row["measure"])
            & (history["order"] < row["order"])
        ].iloc[-1]
        lines.append(
            f"first move: {row['system']} {row['measure']} got {row['moved']} at "
            f"{row['commit'][:12]} ({row['committed_at']}): {row['mean']:.3f} outside "
            f"[{before['ci_low']:.3f}, {before['ci_high']:.3f}] of {str(before['commit'])[:12]}"
        )
    if not history["first_move"].any():
        lines.append("no commit moved a mean beyond the interval of the commit before it")
    return "\n".join(lines) + "\n"
