"""Safety: what every input and output passes through.

- :mod:`~evalkit.safety.inputs`: reading user-named files (regular files only, bounded JSON).
- :mod:`~evalkit.safety.yamlio`: the YAML readers with line numbers.
- :mod:`~evalkit.safety.output`: the output-path check and atomic writes.
- :mod:`~evalkit.safety.artifacts`: the one way to write an artifact (path check, leak scan, write).
- :mod:`~evalkit.safety.privacy`: the leak scan of an artifact against a fixture's private text.
- :mod:`~evalkit.safety.sensitive`: the detector of paths, endpoints and credentials in strings.
- :mod:`~evalkit.safety.names`: the rules for names that reach reports (systems, targets, gates).
- :mod:`~evalkit.safety.canonical`: canonical JSON and the content hashes.
- :mod:`~evalkit.safety.arguments`: a public function's path arguments.
- :mod:`~evalkit.safety.interrupts`: SIGINT, SIGTERM and SIGHUP as exceptions, so what was made is
  removed.
- :mod:`~evalkit.safety.scratch`: temporary state named by its process, swept by the next run
  after a ``kill -9``.

Each module is one concern that every layer above uses, so the modules are public; the names
below are their entry points, resolved on first use (PEP 562): the console script imports
:mod:`~evalkit.safety.interrupts` and :mod:`~evalkit.safety.scratch` before anything else,
and nothing more.

This layer imports only :mod:`evalkit.errors`, :mod:`evalkit.forking` and ``evalkit._lazy``
from evalkit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.safety.arguments import path_argument
    from evalkit.safety.artifacts import (
        Artifact,
        check_output,
        scan_artifact,
        write_artifact,
        write_artifacts,
    )
    from evalkit.safety.canonical import canonical_hash, canonical_json, text_hash
    from evalkit.safety.inputs import check_regular_file, find_input, load_json, read_input_bytes
    from evalkit.safety.interrupts import cancelled, deferred, handle_signals
    from evalkit.safety.names import check_name, safe_id
    from evalkit.safety.output import (
        resolve_output_path,
        shown_path,
        write_text_atomic,
        write_texts_atomic,
    )
    from evalkit.safety.privacy import PrivateText, assert_no_leaks, find_leaks, private_texts
    from evalkit.safety.sensitive import find_sensitive
    from evalkit.safety.yamlio import dump_yaml, load_strict, read_yaml_file

__all__ = [
    "Artifact",
    "PrivateText",
    "assert_no_leaks",
    "cancelled",
    "canonical_hash",
    "canonical_json",
    "check_name",
    "check_output",
    "check_regular_file",
    "deferred",
    "dump_yaml",
    "find_input",
    "find_leaks",
    "find_sensitive",
    "handle_signals",
    "load_json",
    "load_strict",
    "path_argument",
    "private_texts",
    "read_input_bytes",
    "read_yaml_file",
    "resolve_output_path",
    "safe_id",
    "scan_artifact",
    "shown_path",
    "text_hash",
    "write_artifact",
    "write_artifacts",
    "write_text_atomic",
    "write_texts_atomic",
]

# public name -> the module that defines it
_MODULE_OF = {
    "path_argument": "evalkit.safety.arguments",
    **dict.fromkeys(
        ("Artifact", "check_output", "scan_artifact", "write_artifact", "write_artifacts"),
        "evalkit.safety.artifacts",
    ),
    **dict.fromkeys(("canonical_hash", "canonical_json", "text_hash"), "evalkit.safety.canonical"),
    **dict.fromkeys(
        ("check_regular_file", "find_input", "load_json", "read_input_bytes"),
        "evalkit.safety.inputs",
    ),
    **dict.fromkeys(("cancelled", "deferred", "handle_signals"), "evalkit.safety.interrupts"),
    **dict.fromkeys(("check_name", "safe_id"), "evalkit.safety.names"),
    **dict.fromkeys(
        ("resolve_output_path", "shown_path", "write_text_atomic", "write_texts_atomic"),
        "evalkit.safety.output",
    ),
    **dict.fromkeys(
        ("PrivateText", "assert_no_leaks", "find_leaks", "private_texts"),
        "evalkit.safety.privacy",
    ),
    "find_sensitive": "evalkit.safety.sensitive",
    **dict.fromkeys(("dump_yaml", "load_strict", "read_yaml_file"), "evalkit.safety.yamlio"),
}

__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)
