"""An :class:`~evalkit.run.Evaluation` written to a folder and read back, exactly.

``evalkit report`` evaluates in its own process while the notebook's kernel starts (two cores at
work instead of one) and hands the result to the notebook through such a folder, in a private
temporary directory that it deletes afterwards. Run in JupyterLab, the notebook evaluates by
itself; both give the same frames.

The folder holds ``per_query.parquet``, ``rankings.parquet`` and ``latency.parquet`` (pyarrow,
with pandas' metadata, so dtypes and categories come back as they were) and ``evaluation.json``
(systems, k, measures, repeats, notes, the systems' definitions, and the fixture's ID and
content hash), and ``report.json`` when the writer had the report at hand. The definitions are
private (model names, endpoints): the folder is never an artifact and must not be published.

Reading checks the format and that the fixture given is the one evaluated (same content hash),
and raises :class:`~evalkit.errors.InputError` otherwise. Given the fixture's path instead of the
fixture, :func:`load_evaluation` loads it, or takes the one :func:`preload_fixture` loaded in
this process (``evalkit report``'s kernel does that while the command evaluates) when none of
its files changed since.

The folder may also hold the report's verdict section (:func:`save_verdict`: the gate results
and the :class:`~evalkit.report.verdict.Verdict`, ``verdict.json`` plus one Parquet file per frame),
computed by ``evalkit report`` while the kernel starts or runs the first cells (then it is
pending, :mod:`evalkit.report.handover`), together with the settings it was computed with;
:func:`load_verdict` returns it only for the same settings.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pandas as pd
from pandas.api.types import is_object_dtype

from evalkit.errors import InputError, InputFileError
from evalkit.report.handover import (
    VERDICT_PENDING,
    record_taken,
    wait_while_pending,
    write_atomically,
)
from evalkit.safety.inputs import load_json, read_input_bytes

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.report.verdict import GatedVerdict
    from evalkit.run import Evaluation

__all__ = [
    "load_evaluation",
    "load_saved_report",
    "load_verdict",
    "preload_fixture",
    "save_evaluation",
    "save_verdict",
]

FORMAT: Final = "evalkit-evaluation/1"
_FRAMES: Final = ("per_query", "rankings", "latency")
_META: Final = "evaluation.json"
_REPORT: Final = "report.json"
_VERDICT_FORMAT: Final = "evalkit-verdict/1"
_VERDICT: Final = "verdict.json"
_HINT: Final = (
    "expected the folder evalkit report writes; run the notebook with evaluation_dir empty to "
    "evaluate in the notebook itself"
)


def save_evaluation(
    evaluation: Evaluation,
    folder: str | os.PathLike[str],
    *,
    report: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``evaluation`` into ``folder`` (created if missing; a private place, see module
    docs); the folder's path. ``report``, its :meth:`~evalkit.run.Evaluation.to_report`
    when already computed, is kept too (:func:`load_saved_report`)."""
    from evalkit.fixtures.diff import fixture_content_hash

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    for name in _FRAMES:
        frame: pd.DataFrame = getattr(evaluation, name)
        frame.to_parquet(target / f"{name}.parquet", engine="pyarrow", index=False)
    meta = {
        "format": FORMAT,
        "fixture": {
            "id": evaluation.fixture.meta.id,
            "contentHash": fixture_content_hash(evaluation.fixture),
        },
        "systems": list(evaluation.systems),
        "k": evaluation.k,
        "measures": list(evaluation.measures),
        "repeats": evaluation.repeats,
        "notes": evaluation.notes,
        "definitions": evaluation.definitions,
    }
    (target / _META).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    if report is not None:
        (target / _REPORT).write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    return target


def load_saved_report(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The report dict :func:`save_evaluation` kept in ``folder`` (read after
    :func:`load_evaluation`, which checks the folder); None when it kept none."""
    report = _read_json(Path(folder) / _REPORT, "report", missing_ok=True)
    if report is not None and not isinstance(report, dict):
        raise InputError(f"evaluation_dir holds a damaged report; {_HINT}")
    return report


def _read_json(path: Path, what: str, *, missing_ok: bool = False) -> Any:
    """The JSON in ``path`` (one of the folder's files, ``what`` names it in errors), read with
    the project's input readers; None when it is missing and ``missing_ok``."""
    try:
        return load_json(read_input_bytes(path))
    except InputFileError as error:
        if missing_ok and not path.exists():
            return None
        raise InputError(f"evaluation_dir: the saved {what} {error.reason}; {_HINT}") from None
    except ValueError as error:
        raise InputError(
            f"evaluation_dir: the saved {what} is damaged ({error}); {_HINT}"
        ) from None


def _read_frame(path: Path, what: str) -> pd.DataFrame:
    """The Parquet frame in ``path``; :class:`InputError` when it cannot be read."""
    try:
        return pd.read_parquet(path, engine="pyarrow")
    except (OSError, ValueError) as error:
        raise InputError(
            f"evaluation_dir: the saved {what} cannot be read ({type(error).__name__}); {_HINT}"
        ) from None


class _Preloaded(NamedTuple):
    """A fixture :func:`preload_fixture` loaded: the ``path`` it was given, the ``files`` it
    was read from as :func:`_fixture_files` saw them, and its content hash."""

    path: str
    files: tuple[tuple[str, int, int, int], ...]
    fixture: Fixture
    content_hash: str


_preloaded: list[_Preloaded] = []  # at most one: the report kernel's fixture


def _fixture_files(root: str) -> tuple[tuple[str, int, int, int], ...]:
    """Every file below the fixture directory ``root``: (relative path, size, modification time
    in ns, inode), sorted. A file rewritten, added, removed or renamed changes it."""
    files = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            info = os.stat(path)
            files.append((os.path.relpath(path, root), info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(sorted(files))


def preload_fixture(path: str) -> None:
    """Load the fixture at ``path`` and its content hash now, for :func:`load_evaluation` given
    the same ``path`` to take instead of loading it again (once, and only if no file of the
    fixture changed meanwhile). ``evalkit report``'s kernel calls it as it starts, while the
    command evaluates and the kernel would otherwise wait: on 10,000 chunks the load and the
    hash cost the notebook's first cell about 1 s. Never raises: a fixture that does not load
    is loaded, and its problems reported, by the notebook as usual."""
    from evalkit.fixtures import load_fixture
    from evalkit.fixtures.diff import fixture_content_hash

    _preloaded.clear()
    try:
        # the files as they were before the load: a change made while it read them (or later)
        # makes _fixture_and_hash load the fixture again
        files = _fixture_files(path)
        fixture = load_fixture(path)
        _preloaded.append(_Preloaded(path, files, fixture, fixture_content_hash(fixture)))
    except Exception:  # the notebook's own load reports the problem
        return


def _fixture_and_hash(fixture: Fixture | str | os.PathLike[str]) -> tuple[Fixture, str]:
    """``fixture`` (or the fixture at that path: preloaded, or loaded now) and its content
    hash."""
    from evalkit.fixtures import Fixture, load_fixture
    from evalkit.fixtures.diff import fixture_content_hash

    if isinstance(fixture, Fixture):
        return fixture, fixture_content_hash(fixture)
    path = os.fspath(fixture)
    preloaded = _preloaded.pop() if _preloaded else None
    # the same folder, however each process spelled it (a relative or symlinked working folder)
    same = preloaded is not None and os.path.realpath(preloaded.path) == os.path.realpath(path)
    if preloaded is not None and same:
        with contextlib.suppress(OSError):
            if _fixture_files(path) == preloaded.files:
                return preloaded.fixture, preloaded.content_hash
    loaded = load_fixture(path)
    return loaded, fixture_content_hash(loaded)


def load_evaluation(
    folder: str | os.PathLike[str], fixture: Fixture | str | os.PathLike[str]
) -> Evaluation:
    """The evaluation :func:`save_evaluation` wrote into ``folder``, of ``fixture`` (a
    :class:`~evalkit.fixtures.Fixture`, or the path of its directory: then the fixture
    :func:`preload_fixture` loaded from that path when no file of it changed since, else
    loaded now). The evaluation's ``fixture`` is that fixture."""
    from evalkit.run import Evaluation

    source = Path(folder)
    meta = _read_json(source / _META, "evaluation")
    frames = {name: _read_frame(source / f"{name}.parquet", name) for name in _FRAMES}
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"evaluation_dir: expected format {FORMAT!r}; {_HINT}")
    recorded = meta.get("fixture", {})
    fixture, content_hash = _fixture_and_hash(fixture)
    if recorded.get("contentHash") != content_hash:
        raise InputError(
            "evaluation_dir holds an evaluation of another fixture (its content hash differs "
            f"from this fixture's); {_HINT}"
        )
    return Evaluation(
        fixture=fixture,
        systems=tuple(meta["systems"]),
        k=int(meta["k"]),
        measures=tuple(meta["measures"]),
        per_query=frames["per_query"],
        rankings=frames["rankings"],
        latency=frames["latency"],
        definitions=dict(meta["definitions"]),
        repeats=int(meta["repeats"]),
        notes=dict(meta["notes"]),
    )


def save_verdict(
    gated: GatedVerdict, folder: str | os.PathLike[str], settings: Mapping[str, Any]
) -> None:
    """Write ``gated`` (see :func:`evalkit.report.verdict.gate_and_judge`) into the evaluation
    ``folder``, with the JSON-able ``settings`` it was computed with (for
    :func:`load_verdict` to compare)."""
    target = Path(folder)
    frames: dict[str, pd.DataFrame] = {}
    scalars: dict[str, Any] = {}
    for item in dataclasses.fields(gated.verdict):
        value = getattr(gated.verdict, item.name)
        if isinstance(value, pd.DataFrame):
            frames[item.name] = value
        else:
            scalars[item.name] = list(value) if isinstance(value, tuple) else value
    if gated.gate_results is not None:
        frames["gate_results"] = gated.gate_results
    for name, frame in frames.items():
        frame.to_parquet(target / f"verdict-{name}.parquet", engine="pyarrow")
    meta = {
        "format": _VERDICT_FORMAT,
        "settings": dict(settings),
        "gated": gated.gate_results is not None,
        "staleBaseline": gated.stale_baseline,
        "verdict": scalars,
        # text columns held as Python objects: pandas reads Parquet text as its string dtype
        "objectColumns": {
            name: [str(c) for c, kind in frame.dtypes.items() if is_object_dtype(kind)]
            for name, frame in frames.items()
        },
    }
    # written last and whole: a reader finds the complete verdict or none
    write_atomically(target / _VERDICT, json.dumps(meta, ensure_ascii=False).encode("utf-8"))


def load_verdict(
    folder: str | os.PathLike[str], settings: Mapping[str, Any]
) -> GatedVerdict | None:
    """The verdict section :func:`save_verdict` wrote into ``folder`` for the same
    ``settings``; None when there is none or it was computed with other settings (the caller
    computes it then). Waits while ``evalkit report``'s helper is still computing it."""
    from evalkit.report.verdict import GatedVerdict, Verdict

    source = Path(folder)
    wait_while_pending(source, VERDICT_PENDING)
    meta = _read_json(source / _VERDICT, "verdict", missing_ok=True)
    if meta is None:
        return None
    if not isinstance(meta, dict) or meta.get("format") != _VERDICT_FORMAT:
        raise InputError(f"evaluation_dir: expected verdict format {_VERDICT_FORMAT!r}; {_HINT}")
    if meta.get("settings") != json.loads(json.dumps(dict(settings))):
        return None
    frames = {
        name: _read_frame(source / f"verdict-{name}.parquet", "verdict").astype(
            dict.fromkeys(columns, object)
        )
        for name, columns in meta["objectColumns"].items()
    }
    values: dict[str, Any] = {}
    for item in dataclasses.fields(Verdict):
        if item.name in frames:
            values[item.name] = frames[item.name]
        else:
            value = meta["verdict"][item.name]
            values[item.name] = tuple(value) if isinstance(value, list) else value
    gate_results = frames["gate_results"] if meta["gated"] else None
    record_taken(source, VERDICT_PENDING)
    return GatedVerdict(gate_results, bool(meta["staleBaseline"]), Verdict(**values))
