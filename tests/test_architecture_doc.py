"""ARCHITECTURE.md states only what is true: its claims that can be checked are checked here
against the code and ``pyproject.toml``: the layers, the modules and names each package's row
names, which dependencies are optional and where they may be imported, and that the exception
tree drawn in ``evalkit.errors`` names every public exception class."""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import pytest

import evalkit.errors

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CONTRACTS = {c["id"]: c for c in PYPROJECT["tool"]["importlinter"]["contracts"]}


def _layer_block() -> list[set[str]]:
    block = DOC.split("## The layers, top to bottom", 1)[1].split("```")[1]
    layers = []
    for line in block.splitlines():
        names = re.match(r"(?:evalkit[.\w]*\s*\|\s*)*evalkit[.\w]*", line)
        if names:
            layers.append({part.strip() for part in names.group(0).split("|")})
    return layers


def _table_rows(heading: str) -> list[list[str]]:
    section = DOC.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows[1:]  # without the header


def test_the_drawn_layers_are_the_import_contract() -> None:
    contract = [
        {part.strip() for part in layer.split("|")} for layer in CONTRACTS["layers"]["layers"]
    ]
    assert _layer_block() == contract


def test_every_package_of_the_layers_has_a_row_and_each_row_names_what_exists() -> None:
    rows = _table_rows("## What each package owns")
    packages = {row[0].strip("`") for row in rows}
    layered = {name.removeprefix("evalkit.") for layer in _layer_block() for name in layer}
    assert layered - {"forking", "_lazy", "_arrays"} == packages
    for package, owns, start in rows:
        name = package.strip("`")
        assert (ROOT / "evalkit" / start.strip("`")).is_file(), start
        if not (ROOT / "evalkit" / name).is_dir():
            continue  # a top-level module (registry, errors)
        module = importlib.import_module(f"evalkit.{name}")
        for token in re.findall(r"`([^`]+)`", owns):
            if "/" in token:
                assert (ROOT / "evalkit" / token).exists(), (name, token)
            elif re.fullmatch(r"_?[a-z][a-z0-9_]*", token) and not token.startswith("_run"):
                is_module = (ROOT / "evalkit" / name / f"{token}.py").is_file()
                assert is_module or token in module.__all__, (name, token)
            elif re.fullmatch(r"[A-Z][A-Za-z]+", token):
                assert (
                    token in module.__all__
                    or hasattr(module, token)
                    or any(
                        token in vars(importlib.import_module(f"evalkit.{name}.{path.stem}"))
                        for path in (ROOT / "evalkit" / name).glob("*.py")
                    )
                ), (name, token)


def test_the_optional_dependencies_are_the_extras_and_stay_where_the_page_says() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    rows = _table_rows("## The direction of imports")
    assert {row[0].strip("`") for row in rows} == set(extras) - {"dev"}
    for extra, packages, modules in rows:
        required = {  # "dask[distributed]>=1" requires dask and distributed
            name
            for requirement in extras[extra.strip("`")]
            for name in re.findall(r"[\w.-]+", re.split(r"[<>=; ]", requirement)[0])
        }
        named = {p.strip() for p in packages.split(",")}
        assert named == required, extra
        allowed = set(re.findall(r"`(evalkit\.[a-z0-9_.]+)`", modules))
        ignored = {
            line.split(" -> ")[0]
            for contract in CONTRACTS.values()
            if contract["type"] == "forbidden"
            for line in contract.get("ignore_imports", [])
            if line.split(" -> ")[1] in named
        }
        assert allowed == ignored, extra
    core = {re.split(r"[<>=\[ ]", r, maxsplit=1)[0] for r in PYPROJECT["project"]["dependencies"]}
    for library in ("papermill", "nbconvert", "nbclient", "nbformat", "matplotlib"):
        assert library in core  # the page calls them core dependencies
        assert library in CONTRACTS["report-stack"]["forbidden_modules"]


@pytest.mark.parametrize(
    "name",
    sorted(
        name
        for name, value in vars(evalkit.errors).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException | Warning)
        and value.__module__ == "evalkit.errors"
        and not name.startswith("_")
    ),
)
def test_the_drawn_exception_tree_names_every_public_exception(name: str) -> None:
    assert re.search(rf"\b{name}\b", evalkit.errors.__doc__ or ""), name
