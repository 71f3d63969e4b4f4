"""The leak scan sees through the escaping evalkit.render applies to Markdown output."""

from __future__ import annotations

from evalkit.privacy import PrivateText, find_leaks
from evalkit.render import markdown_text

SECRET_TEXT = "The harbour ferry @noon leaves from pier #4 (see https://example.invalid/x)."


def test_markdown_escaped_text_is_still_a_leak() -> None:
    escaped = markdown_text(SECRET_TEXT)
    assert escaped != SECRET_TEXT  # backslashes and word joiners were inserted
    findings = find_leaks(f"| q-1 | {escaped} |", [PrivateText("chunk:c-1", SECRET_TEXT)])
    assert findings == ["chunk:c-1"]


def test_invisible_characters_do_not_hide_a_leak() -> None:
    hidden = "\u200b".join(SECRET_TEXT[:40]) + "\u2060\u00ad"
    findings = find_leaks(hidden, [PrivateText("chunk:c-1", SECRET_TEXT)])
    assert findings == ["chunk:c-1"]
