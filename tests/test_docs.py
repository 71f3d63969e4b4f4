"""The documentation site builds in strict mode (a broken link or a missing reference fails), its
API reference documents ``score``, and its measures table is generated from the registry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="evalkit.measures.engine.score"' in api
    measures = (site / "measures" / "index.html").read_text(encoding="utf-8")
    # every registered measure has a row, with trec_eval's name where it has one
    from evalkit.measures.names import MEASURE_NAMES

    for name in MEASURE_NAMES:
        assert f"<code>{name}</code>" in measures, name
    assert "<code>ndcg</code>" in measures
    assert "<code>recip_rank</code>" in measures
