"""pyproject.toml metadata that setuptools accepts without deprecation warnings (issue 16,
item 7: ``pip install`` printed setuptools' deprecation of ``project.license`` as a table)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.specifiers import SpecifierSet

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_license_is_an_spdx_expression_string() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    license_ = project["license"]
    assert isinstance(license_, str)  # PEP 639; a {text = ...} table is deprecated
    assert canonicalize_license_expression(license_) == "Apache-2.0"  # the license it always had


def test_the_build_backend_understands_license_strings() -> None:
    build = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["build-system"]
    setuptools = [r for r in build["requires"] if r.startswith("setuptools")]
    assert len(setuptools) == 1
    allowed = SpecifierSet(setuptools[0].removeprefix("setuptools"))
    # setuptools reads PEP 639 license expressions from 77.0.0 on (its changelog, v77.0.0).
    assert "76.1.0" not in allowed
    assert "77.0.0" in allowed
