"""An :class:`~evalkit.evaluate.Evaluation` written to a folder and read back, exactly.

``evalkit report`` evaluates in its own process while the notebook's kernel starts (two cores
at work instead of one) and hands the result to the notebook through such a folder, in a
private temporary directory that it deletes afterwards. Run in JupyterLab, the notebook
evaluates by itself; both give the same frames.

The folder holds ``per_query.parquet``, ``rankings.parquet`` and ``latency.parquet`` (pyarrow,
with pandas' metadata, so dtypes and categories come back as they were) and
``evaluation.json`` (systems, k, measures, repeats, notes, the systems' definitions, and the
fixture's ID and content hash). The definitions are private (model names, endpoints): the
folder is never an artifact and must not be published.

Reading checks the format and that the fixture given is the one evaluated (same content hash),
and raises :class:`~evalkit.errors.InputError` otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.evaluate import Evaluation
    from evalkit.fixtures import Fixture

__all__ = ["load_evaluation", "save_evaluation"]

FORMAT: Final = "evalkit-evaluation/1"
_FRAMES: Final = ("per_query", "rankings", "latency")
_META: Final = "evaluation.json"


def save_evaluation(evaluation: Evaluation, folder: str | os.PathLike[str]) -> Path:
    """Write ``evaluation`` into ``folder`` (created if missing; a private place, see module
    docs); the folder's path."""
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
    return target


def load_evaluation(folder: str | os.PathLike[str], fixture: Fixture) -> Evaluation:
    """The evaluation :func:`save_evaluation` wrote into ``folder``, of ``fixture``."""
    from evalkit.evaluate import Evaluation
    from evalkit.fixtures.diff import fixture_content_hash

    source = Path(folder)
    hint = "run the notebook with evaluation_dir empty to evaluate in the notebook itself"
    try:
        meta: Any = json.loads((source / _META).read_text(encoding="utf-8"))
        frames = {
            name: pd.read_parquet(source / f"{name}.parquet", engine="pyarrow") for name in _FRAMES
        }
    except (OSError, ValueError) as error:
        raise InputError(
            f"evaluation_dir holds no readable saved evaluation ({type(error).__name__}); "
            f"expected the folder evalkit report writes; {hint}"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"evaluation_dir: expected format {FORMAT!r}; {hint}")
    recorded = meta.get("fixture", {})
    if recorded.get("contentHash") != fixture_content_hash(fixture):
        raise InputError(
            "evaluation_dir holds an evaluation of another fixture (its content hash differs "
            f"from this fixture's); {hint}"
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
