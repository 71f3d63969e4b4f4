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
    from evalkit.safety.arguments import path_argument as path_argument
    from evalkit.safety.artifacts import (
        Artifact as Artifact,
        check_output as check_output,
        scan_artifact as scan_artifact,
        write_artifact as write_artifact,
        write_artifacts as write_artifacts,
    )
    from evalkit.safety.canonical import (
        canonical_hash as canonical_hash,
        canonical_json as canonical_json,
        text_hash as text_hash,
    )
    from evalkit.safety.inputs import (
        check_regular_file as check_regular_file,
        find_input as find_input,
        load_json as load_json,
        read_input_bytes as read_input_bytes,
    )
    from evalkit.safety.interrupts import (
        cancelled as cancelled,
        deferred as deferred,
        handle_signals as handle_signals,
    )
    from evalkit.safety.names import check_name as check_name, safe_id as safe_id
    from evalkit.safety.output import (
        resolve_output_path as resolve_output_path,
        shown_path as shown_path,
        write_text_atomic as write_text_atomic,
        write_texts_atomic as write_texts_atomic,
    )
    from evalkit.safety.privacy import (
        PrivateText as PrivateText,
        assert_no_leaks as assert_no_leaks,
        find_leaks as find_leaks,
        private_texts as private_texts,
    )
    from evalkit.safety.sensitive import find_sensitive as find_sensitive
    from evalkit.safety.yamlio import (
        dump_yaml as dump_yaml,
        load_strict as load_strict,
        read_yaml_file as read_yaml_file,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
