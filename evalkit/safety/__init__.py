"""Safety: what every input and output passes through.

- :mod:`~evalkit.safety.inputs`: reading user-named files (regular files only, bounded JSON).
- :mod:`~evalkit.safety.yamlio`: the YAML readers with line numbers.
- :mod:`~evalkit.safety.output`: the output-path check and atomic writes.
- :mod:`~evalkit.safety.artifacts`: the one way to write an artifact (path check, leak scan, write).
- :mod:`~evalkit.safety.privacy`: the leak scan of an artifact against a fixture's private text.
- :mod:`~evalkit.safety.sensitive`: the detector of paths, endpoints and credentials in strings.
- :mod:`~evalkit.safety.names`: the rules for names that reach reports (systems, targets, gates).
- :mod:`~evalkit.safety.canonical`: canonical JSON and the content hashes.

This layer imports only :mod:`evalkit.errors` and :mod:`evalkit.forking` from evalkit.
"""
