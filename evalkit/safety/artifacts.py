"""THE way to write an artifact: every report, baseline, export or summary evalkit writes.

An *artifact* is any file evalkit produces from an evaluation or a probe run: the JSON of
``run --output``, ``gate --output`` and ``probes --output``, a baseline, the report's HTML and
executed notebook — and any future writer (JUnit XML, Markdown summaries, imported runs).
A new writer calls :func:`write_artifact` (or :func:`write_artifacts` for files that belong
together) and nothing else; it never opens a file itself. The one other writer is
:func:`evalkit.fixtures.dump_fixture`, which writes fixture files: they *are* the private text.

What :func:`write_artifacts` does, in this order, and nothing is written unless every step
passes for every artifact:

1. **Path.** :func:`evalkit.safety.output.resolve_output_path` checks each path
   (workspace-relative, no link, no control character, length limits, a writable folder; rules in
   :mod:`evalkit.safety.output`). An artifact never goes inside a fixture folder (a folder holding
   ``fixture.yaml``), where the loader would refuse the stranger, or replace one of its files,
   except a baseline as the fixture's ``baseline.json``; and no two artifacts of one write share
   a file.
   Call :func:`check_output` at the start of a command, before any work, to refuse a bad path
   early (:func:`check_distinct` for a command's several outputs); it creates nothing.
2. **Leak scan.** Each text is searched for every ``private`` string (fixture titles, chunk text,
   query text, spans, the systems' private definition values; see
   :func:`evalkit.safety.privacy.private_texts`; a probe report has none: probes name public code
   symbols) by the rule of :mod:`evalkit.safety.privacy`. A hit raises
   :class:`~evalkit.errors.LeakError` naming artifact kinds and object IDs only.
3. **Shape scan** (``json`` and ``text`` artifacts). Every JSON string and key (or the whole
   text) is checked by :func:`evalkit.fixtures.rules.find_sensitive` for an absolute path, a URL
   or endpoint, a private key or an API token; a hit raises ``LeakError`` naming the JSON
   location, never the value. HTML and notebooks are not shape-scanned: their embedded base64
   images look like paths; their paths are replaced by
   :func:`evalkit.report.scrub_notebook`.
4. **Write.** :func:`evalkit.safety.output.write_texts_atomic`: temporary files, then renames;
   missing folders are created now and removed again if the write fails.

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

from evalkit.errors import LeakError, UnsafePathError
from evalkit.safety.output import resolve_output_path, shown_path, write_texts_atomic
from evalkit.safety.privacy import NO_OWN_TEXT, OwnText, PrivateText, assert_no_leaks

__all__ = [
    "Artifact",
    "ArtifactKind",
    "artifact_label",
    "check_distinct",
    "check_output",
    "scan_artifact",
    "write_artifact",
    "write_artifacts",
]

ArtifactKind = Literal["json", "text", "html", "notebook"]
_LABELS: dict[str, str] = {
    "json": "the JSON file",
    "text": "the text file",
    "html": "the HTML report",
    "notebook": "the executed notebook",
}
# a text artifact's kind by its suffix (the CI outputs of `gate --markdown/--junit`, ...)
_TEXT_LABELS: dict[str, str] = {
    ".md": "the Markdown file",
    ".markdown": "the Markdown file",
    ".xml": "the JUnit XML file",
    ".tsv": "the TSV file",
}


def artifact_label(kind: ArtifactKind, path: str | os.PathLike[str] | None = None) -> str:
    """How messages name an artifact: its kind and, when known, its output path as given
    (``the Markdown file 'reports/gate.md'``)."""
    label = _LABELS[kind]
    if kind == "text" and path is not None:
        label = _TEXT_LABELS.get(Path(path).suffix.lower(), label)
    return label if path is None else f"{label} {shown_path(path)}"


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
    baseline: bool = False,
) -> Path:
    """The early output-path check of a command (creates nothing); the absolute destination.
    ``baseline``: the output is a baseline, which may be a fixture's ``baseline.json``.

    Raises :class:`~evalkit.errors.UnsafePathError`. Same rules as the write itself.
    """
    target = resolve_output_path(path, workspace=workspace, suffixes=suffixes)
    _outside_fixtures(target, path, baseline=baseline)
    return target


def check_distinct(outputs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse two of a command's outputs (``(option, path)``; None: not given) that name the
    same file, before any work; :class:`~evalkit.errors.UnsafePathError` naming the options."""
    seen: dict[Path, str] = {}
    for option, path in outputs:
        if path is None:
            continue
        target = Path(os.path.abspath(path))
        if target in seen:
            raise UnsafePathError(
                f"{seen[target]} and {option} name the same file; give each output its own "
                "path (nothing was written)"
            )
        seen[target] = option


BASELINE_FILE = "baseline.json"
"""The one artifact a fixture folder may hold (its gates' baseline). This and ``fixture.yaml``
below are written out rather than imported from :mod:`evalkit.fixtures` (``OPTIONAL_ENTRIES``,
``META_FILE``): importing the fixtures package costs 0.2 s, before the report's kernel starts."""


def _outside_fixtures(target: Path, path: str | os.PathLike[str], *, baseline: bool) -> None:
    """Refuse ``target`` inside a fixture folder, unless it is a ``baseline`` written as that
    folder's baseline."""
    for folder in target.parents:
        if (folder / "fixture.yaml").is_file():
            if baseline and target == folder / BASELINE_FILE:
                return
            raise UnsafePathError(
                f"output path {shown_path(path)} is inside a fixture folder (one holding "
                "fixture.yaml): it would replace a fixture file or add one the loader refuses; "
                f"expected a path outside it (a baseline may be the fixture's {BASELINE_FILE}); "
                "write it elsewhere, e.g. reports/"
            )


def scan_artifact(
    artifact: Artifact, private: Iterable[PrivateText], *, own: OwnText = NO_OWN_TEXT
) -> None:
    """Steps 2 and 3 above for one artifact; raises :class:`LeakError` (IDs and places only).
    ``own``: text the writer itself put there besides evalkit's (a report notebook's cells)."""
    label = artifact_label(artifact.kind, artifact.path)
    assert_no_leaks({label: artifact.text}, private, own=own)
    _scan_shapes(artifact)


def _scan_shapes(artifact: Artifact) -> None:
    """Step 3 above: path, endpoint and secret shapes in a JSON or text artifact's strings."""
    label = artifact_label(artifact.kind, artifact.path)
    if artifact.kind == "json":
        try:
            decoded = json.loads(artifact.text)
        except ValueError:
            raise LeakError(
                f"{label} is not valid JSON; nothing was written; expected the "
                "canonical JSON of a report (this is a bug in the writer)"
            ) from None
        places = list(_json_strings(decoded, "$"))
    elif artifact.kind == "text":
        places = [("the text", artifact.text)]
    else:
        return
    from evalkit.safety.sensitive import SENSITIVE_KINDS, find_sensitive

    for where, value in places:
        kinds = find_sensitive(value)
        if kinds:
            what = " and ".join(SENSITIVE_KINDS[k] for k in kinds)
            raise LeakError(
                f"{label} holds {what} at {where} (not shown); nothing was "
                "written. Reports carry IDs and hashes only: rename the system, gate, target or "
                "ID that holds it"
            )


def write_artifacts(
    artifacts: Sequence[Artifact],
    *,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
    allow_private_text: bool = False,
    baseline: bool = False,
    own: OwnText = NO_OWN_TEXT,
) -> list[Path]:
    """Check, scan and write ``artifacts`` together (steps above); their absolute paths.
    ``baseline``: they are baselines (:func:`check_output`). ``own``: text the writer put there
    itself besides evalkit's, not evidence (:class:`evalkit.safety.privacy.OwnText`).

    Raises :class:`~evalkit.errors.UnsafePathError` (path), :class:`LeakError` (scan),
    :class:`~evalkit.errors.OutputError` (file system); in every case nothing is written.
    """
    check_distinct((f"artifact #{n}", a.path) for n, a in enumerate(artifacts, start=1))
    for artifact in artifacts:
        check_output(artifact.path, workspace=workspace, baseline=baseline)
    if not allow_private_text:
        # one needle index for the whole set: the private texts are indexed once, not per file
        assert_no_leaks(_labelled(artifacts), private, own=own)
        for artifact in artifacts:
            _scan_shapes(artifact)
    return write_texts_atomic([(a.path, a.text) for a in artifacts], workspace=workspace)


def _labelled(artifacts: Sequence[Artifact]) -> dict[str, str]:
    """Each artifact's text under its label: kind and output path (distinct: the paths are)."""
    return {artifact_label(a.kind, a.path): a.text for a in artifacts}


def write_artifact(
    path: str | os.PathLike[str],
    text: str,
    *,
    kind: ArtifactKind,
    private: Iterable[PrivateText],
    workspace: str | os.PathLike[str] | None = None,
    baseline: bool = False,
) -> Path:
    """Check, scan and write one artifact (:func:`write_artifacts`); its absolute path."""
    artifacts = [Artifact(path, text, kind)]
    return write_artifacts(artifacts, private=private, workspace=workspace, baseline=baseline)[0]


def _json_strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(JSONPath-like location, string)`` for every string value and key in ``value``."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for index, (key, item) in enumerate(value.items()):
            key_text = str(key)
            from evalkit.safety.names import safe_id

            shown = safe_id(key_text)
            place = f"{where}.{shown}" if shown else f"{where}.<key {index + 1}>"
            yield f"{place} (key)", key_text
            yield from _json_strings(item, place)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_strings(item, f"{where}[{index}]")
