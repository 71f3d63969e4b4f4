"""THE way to write an artifact: every report, baseline, export or summary evalkit writes.

An *artifact* is any file evalkit produces from an evaluation or a probe run: the JSON of
``run --output``, ``gate --output`` and ``probes --output``, a baseline, the report's HTML and
executed notebook — and any future writer (JUnit XML, Markdown summaries, imported runs).
A new writer calls :func:`write_artifact` (or :func:`write_artifacts` for files that belong
together) and nothing else; it never opens a file itself. The one other writer is
:func:`evalkit.fixtures.dump_fixture`, which writes fixture files: they *are* the private text.

What :func:`write_artifacts` does, in this order, and nothing is written unless every step
passes for every artifact:

1. **Path.** :func:`evalkit.output.resolve_output_path` checks each path (workspace-relative,
   no link, no control character, length limits, a writable folder; rules in
   :mod:`evalkit.output`). Call :func:`check_output` at the start of a command, before any work,
   to refuse a bad path early; it creates nothing.
2. **Leak scan.** Each text is searched for every ``private`` string (fixture titles, chunk text,
   query text, spans, the systems' private definition values; see
   :func:`evalkit.privacy.private_texts`; a probe report has none: probes name public code
   symbols) by the rule of :mod:`evalkit.privacy`. A hit raises
   :class:`~evalkit.errors.LeakError` naming artifact kinds and object IDs only.
3. **Shape scan** (``json`` and ``text`` artifacts). Every JSON string and key (or the whole
   text) is checked by :func:`evalkit.fixtures.rules.find_sensitive` for an absolute path, a URL
   or endpoint, a private key or an API token; a hit raises ``LeakError`` naming the JSON
   location, never the value. HTML and notebooks are not shape-scanned: their embedded base64
   images look like paths; their paths are replaced by :func:`evalkit.notebooks.scrub_notebook`.
4. **Write.** :func:`evalkit.output.write_texts_atomic`: temporary files, then renames; missing
   folders are created now and removed again if the write fails.

``allow_private_text=True`` skips steps 2 and 3: only for a report the user explicitly asked
to contain private text (``evalkit report --allow-unredacted``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalkit.errors import LeakError
from evalkit.output import resolve_output_path, write_texts_atomic
from evalkit.privacy import PrivateText, assert_no_leaks

__all__ = [
    "Artifact",
    "ArtifactKind",
    "check_output",
    "scan_artifact",
    "write_artifact",
    "write_artifacts",
]

ArtifactKind = Literal["json", "text", "html", "notebook"]
_LABELS: dict[str, str] = {
    "json": "JSON",
    "text": "text file",
    "html": "HTML",
    "notebook": "notebook",
}


@dataclass(frozen=True)
class Artifact:
    """One file to write: its workspace-relative ``path``, its ``text`` and its ``kind``."""

    path: str | os.PathLike[str]
    text: str
    kind: ArtifactKind


def check_output(
    path: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
    suffixes: Sequence[str] = (),
) -> Path:
    """The early output-path check of a command (creates nothing); the absolute destination.

    Raises :class:`~evalkit.errors.UnsafePathError`. Same rules as the write itself.
    """
    return resolve_output_path(path, workspace=workspace, suffixes=suffixes)


def scan_artifact(artifact: Artifact, private: Iterable[PrivateText]) -> None:
    """Steps 2 and 3 above for one artifact; raises :class:`LeakError` (IDs and places only)."""
    assert_no_leaks({_LABELS[artifact.kind]: artifact.text}, private)
    _scan_shapes(artifact)


def _scan_shapes(artifact: Artifact) -> None:
    """Step 3 above: path, endpoint and secret shapes in a JSON or text artifact's strings."""
    label = _LABELS[artifact.kind]
    if artifact.kind == "json":
        try:
            decoded = json.loads(artifact.text)
        except ValueError:
            raise LeakError(
                f"the {label} artifact is not valid JSON; nothing was written; expected the "
                "canonical JSON of a report (this is a bug in the writer)"
            ) from None
        places = list(_json_strings(decoded, "$"))
    elif artifact.kind == "text":
        places = [("the text", artifact.text)]
    else:
        return
    from evalkit.fixtures.scan import SENSITIVE_KINDS, find_sensitive

    for where, value in places:
        kinds = find_sensitive(value)
        if kinds:
            what = " and ".join(SENSITIVE_KINDS[k] for k in kinds)
            raise LeakError(
                f"the {label} artifact holds {what} at {where} (not shown); nothing was "
                "written. Reports carry IDs and hashes only: rename the system, gate, target or "
                "ID that holds it"
            )


def write_artifacts(
    artifacts: Sequence[Artifact],
    *,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
    allow_private_text: bool = False,
) -> list[Path]:
    """Check, scan and write ``artifacts`` together (steps above); their absolute paths.

    Raises :class:`~evalkit.errors.UnsafePathError` (path), :class:`LeakError` (scan),
    :class:`~evalkit.errors.OutputError` (file system); in every case nothing is written.
    """
    for artifact in artifacts:
        resolve_output_path(artifact.path, workspace=workspace)
    if not allow_private_text:
        # one needle index for the whole set: the private texts are indexed once, not per file
        assert_no_leaks(_labelled(artifacts), private)
        for artifact in artifacts:
            _scan_shapes(artifact)
    return write_texts_atomic([(a.path, a.text) for a in artifacts], workspace=workspace)


def _labelled(artifacts: Sequence[Artifact]) -> dict[str, str]:
    """Each artifact's text under its kind's label (numbered when a kind repeats)."""
    labels = [_LABELS[a.kind] for a in artifacts]
    return {
        (label if labels.count(label) == 1 else f"{label} #{labels[:i].count(label) + 1}"): a.text
        for i, (label, a) in enumerate(zip(labels, artifacts, strict=True))
    }


def write_artifact(
    path: str | os.PathLike[str],
    text: str,
    *,
    kind: ArtifactKind,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
) -> Path:
    """Check, scan and write one artifact (:func:`write_artifacts`); its absolute path."""
    return write_artifacts([Artifact(path, text, kind)], private=private, workspace=workspace)[0]


def _json_strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(JSONPath-like location, string)`` for every string value and key in ``value``."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for index, (key, item) in enumerate(value.items()):
            key_text = str(key)
            from evalkit.fixtures.rules import safe_id

            shown = safe_id(key_text)
            place = f"{where}.{shown}" if shown else f"{where}.<key {index + 1}>"
            yield f"{place} (key)", key_text
            yield from _json_strings(item, place)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_strings(item, f"{where}[{index}]")
