"""The documentation site builds in strict mode (a broken link or a missing reference fails), its
API reference documents every public name, its measures table is generated from the registry,
it opens from disk (every internal link names a file that exists), and no Sphinx role
(``:func:`...```) is left as text anywhere in it (issue 44)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="install the dev extra: pip install -e '.[dev]'")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    api = (site / "api.html").read_text(encoding="utf-8")
    assert 'id="evalkit.measures.score"' in api
    measures = (site / "measures.html").read_text(encoding="utf-8")
    # every registered measure has a row, with trec_eval's name where it has one
    from evalkit.measures.names import MEASURE_NAMES

    for name in MEASURE_NAMES:
        assert f"<code>{name}</code>" in measures, name
    assert "<code>ndcg</code>" in measures
    assert "<code>recip_rank</code>" in measures
    _opens_from_disk(site)
    _no_raw_roles(site)
    _every_public_name_documented(api)


# a Sphinx role as the site would show it: :func:`...`, or :func: before a rendered <code>
_RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):(?=[`<~\w])")
_HREF = re.compile(r'(?:href|src)="([^"]+)"')


def _opens_from_disk(site: Path) -> None:
    """Every relative link of every page names a file of the site (no directory to list).
    404.html is a web server's page, with links from the site's root."""
    broken = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        for href in _HREF.findall(page.read_text(encoding="utf-8")):
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert broken == []


def _no_raw_roles(site: Path) -> None:
    found = [
        f"{path.relative_to(site)}: {match.group(0)}"
        for path in sorted(site.rglob("*"))
        if path.suffix in (".html", ".json", ".xml", ".txt")
        for match in _RAW_ROLE.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def _every_public_name_documented(api: str) -> None:
    import types

    import evalkit

    def documented(name: str) -> bool:
        value = getattr(evalkit, name)
        if isinstance(value, types.ModuleType):  # ek.plot: the module's own entry
            return f'id="{value.__name__}"' in api
        return re.search(rf'id="evalkit\.[\w.]*\.{name}"', api) is not None

    missing = [name for name in evalkit.__all__ if not documented(name)]
    assert missing == []
