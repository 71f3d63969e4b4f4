"""A griffe extension: Sphinx roles in evalkit's docstrings become cross-references.

The docstrings name other objects the Sphinx way (``:func:`~evalkit.fixtures.load_fixture```,
``:class:`Fixture```); mkdocstrings renders docstrings as Markdown, where such a role would be
shown as raw text. Each role is replaced by an *optional* autorefs reference: a link when the
API reference documents the object, else the name as code (a private helper is not a page).
A short name is resolved in the scope of the docstring's object (its module's imports).
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(
    r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|type|ref|term):`(?P<body>[^`]+)`"
)


def _identifier(obj: griffe.Object, target: str) -> str:
    try:
        return obj.resolve(target.split(".", 1)[0]) + (
            "." + target.split(".", 1)[1] if "." in target else ""
        )
    except (griffe.NameResolutionError, ValueError, AttributeError, KeyError):
        return target


def _reference(obj: griffe.Object, match: re.Match[str]) -> str:
    body = match["body"].strip()
    titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body)
    if titled:
        title, target = titled["title"], titled["target"]
    else:
        target = body.lstrip("~").lstrip(".")
        title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
    identifier = html.escape(_identifier(obj, target), quote=True)
    return f'<autoref optional identifier="{identifier}"><code>{html.escape(title)}</code></autoref>'


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every loaded object's docstring (module docstring)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = _ROLE.sub(lambda m: _reference(obj, m), obj.docstring.value)
