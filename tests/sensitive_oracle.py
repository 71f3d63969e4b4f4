"""The per-string sensitive-string scan as it was before the column scan (the test oracle).

``find_sensitive_per_string`` is the original loop of ``evalkit.fixtures.rules.find_sensitive``
(commit 75c3beb): every detector checks its guards with ``in`` and, on a hit, runs its pattern
on the whole string. It uses the package's detector table, so the oracle checks the scan's
machinery (joining, blocks, offsets, guards, bounded searches), not the patterns themselves.
"""

from __future__ import annotations

from evalkit.safety.sensitive import _DETECTORS, SENSITIVE_KINDS


def find_sensitive_per_string(text: str) -> tuple[str, ...]:
    """Kinds of sensitive content in ``text``, in ``SENSITIVE_KINDS`` order (old algorithm)."""
    found: set[str] = set()
    folded: str | None = None
    for detector in _DETECTORS:
        if detector.kind in found:
            continue
        hit = any(guard in text for guard in detector.guards)
        if not hit and detector.folded_guards:
            folded = text.lower() if folded is None else folded
            hit = any(guard in folded for guard in detector.folded_guards)
        if hit and detector.pattern.search(text):
            found.add(detector.kind)
    return tuple(kind for kind in SENSITIVE_KINDS if kind in found)
