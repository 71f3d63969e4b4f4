"""Names that reach reports (issue 16, item 1): systems, probe targets and gates are IDs, scanned
for path, endpoint and secret shapes, and refused without being echoed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.errors import FixtureError, InputError, UnknownNameError
from evalkit.fixtures import load_fixture
from evalkit.gates import load_gates
from evalkit.registry import Registry
from evalkit.run import evaluate
from evalkit.safety.names import check_name, name_problem
from evalkit.systems import BaseRetriever, FunctionRetriever, Hit
from evalkit.systems.protocol import load_factory

TOKEN = "sk-proj-" + "Q7w9E2r4T6y8U1i3" * 2  # an OpenAI-style key shape, made up
UNSAFE_NAMES = [
    pytest.param(f"prod-api_key={TOKEN}", id="key-assignment"),
    pytest.param(TOKEN, id="bare-token"),
    pytest.param("AKIAIOSFODNN7EXAMPLE", id="aws-key-id"),
    pytest.param("10.0.12.7", id="ip-address"),
    pytest.param("localhost:8080", id="endpoint"),
    pytest.param("/srv/models/m", id="absolute-path"),
    pytest.param("my system", id="space"),
    pytest.param("système", id="non-ascii"),
    pytest.param("-leading-dash", id="leading-dash"),
    pytest.param("x" * 129, id="too-long"),
    pytest.param("", id="empty"),
]


class Named(BaseRetriever):
    """A retriever with a given name and definition that returns nothing."""

    def __init__(self, name: str, definition: dict[str, Any] | None = None) -> None:
        self.name = name
        self._definition = definition or {"class": "Named"}

    def definition(self) -> dict[str, Any]:
        return dict(self._definition)

    def search(self, query: Any, k: int) -> Sequence[Hit]:
        return []


def unsafe_ones() -> list[str]:
    return [str(p.values[0]) for p in UNSAFE_NAMES]


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_unsafe_names_are_refused_without_echo(name: str) -> None:
    with pytest.raises(InputError, match=r"system #1 of 1: the system name") as info:
        check_name(name, kind="system", where="system #1 of 1")
    if name:
        assert name not in str(info.value)
    assert "not shown" in str(info.value)


@pytest.mark.parametrize("name", ["lexical", "hybrid-rerank", "candidate.v2", "team:prod-1"])
def test_id_like_names_pass(name: str) -> None:
    assert name_problem(name) is None


def test_a_name_holding_a_private_definition_value_is_refused() -> None:
    # The README's contract: no model name in a report. This one is in the definition.
    definition = {"model": "BAAI/bge-m3", "endpoint": "https://embed.internal:8443/v1"}
    assert "private value" in str(name_problem("bge-m3-prod", definition=definition))
    assert "private value" in str(name_problem("EMBED.internal:8443", definition=definition))
    assert name_problem("candidate", definition=definition) is None


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_evaluate_refuses_an_unsafe_user_system_name(tiny_dir: Path, name: str) -> None:
    fixture = load_fixture(tiny_dir)
    with pytest.raises(InputError, match=r"system #2 of 2") as info:
        evaluate(fixture, ["lexical", Named(name)], repeats=1)
    if name:
        assert name not in str(info.value)


def test_evaluate_refuses_a_model_name_from_the_definition(tiny_dir: Path) -> None:
    system = Named("bge-m3-prod", {"class": "Embedder", "model": "BAAI/bge-m3"})
    with pytest.raises(InputError, match="private value") as info:
        evaluate(load_fixture(tiny_dir), [system], repeats=1)
    assert "bge" not in str(info.value)


def test_registry_refuses_unsafe_names_and_does_not_echo_unknown_ones() -> None:
    registry: Registry[int] = Registry("system", ids=True)
    for name in unsafe_ones():
        with pytest.raises(InputError) as info:
            registry.register(name, 1)
        if name:
            assert name not in str(info.value)
    registry.register("lexical", 1)
    with pytest.raises(UnknownNameError) as unknown:
        registry.get(TOKEN)
    assert TOKEN not in str(unknown.value)
    assert "lexical" in str(unknown.value)
    with pytest.raises(UnknownNameError, match="Did you mean 'lexical'"):
        registry.get("lexicl")


def test_tool_registries_keep_python_names_but_refuse_secrets() -> None:
    tools: Registry[int] = Registry("tool")
    tools.register("find_symbol", 1)
    with pytest.raises(InputError):
        tools.register(f"api_key={TOKEN}", 2)


def test_function_retriever_names_are_checked() -> None:
    def search_docs(query: str, k: int) -> list[tuple[str, float]]:
        return []

    assert FunctionRetriever(search_docs).name == "search-docs"
    with pytest.raises(InputError, match=r"pass name=|FunctionRetriever"):
        FunctionRetriever(lambda q, k: [])
    with pytest.raises(InputError) as info:
        FunctionRetriever(search_docs, name=TOKEN)
    assert TOKEN not in str(info.value)


@pytest.mark.parametrize(
    "spec",
    [f"{TOKEN}:make", "pkg/mod:make", "https://host/mod:make", "mod:make system", "mod:"],
)
def test_unsafe_system_specs_are_refused_without_echo(spec: str) -> None:
    with pytest.raises(InputError, match="system #3: the system spec") as info:
        load_factory(spec, where="system #3")
    assert spec not in str(info.value)


def test_cli_does_not_echo_an_unsafe_system_name(
    tiny_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tiny_dir), "--systems", f"lexical,{TOKEN}", "--repeats", "1"]) == 2
    err = capsys.readouterr().err
    assert TOKEN not in err
    assert "not shown" in err


def test_cli_does_not_echo_an_unsafe_target_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probes", "fixtures/probes", "--target", TOKEN]) == 2
    err = capsys.readouterr().err
    assert TOKEN not in err
    assert "stdlib" in err


def test_gates_refuse_token_like_system_and_gate_names(tmp_path: Path) -> None:
    gates = tmp_path / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\n"
        "absolute:\n"
        f"  - {{system: {TOKEN}, measure: R@5, min: 0.5}}\n"
        f"  - {{id: {TOKEN}, system: lexical, measure: R@5, min: 0.5}}\n"
        "relative:\n"
        f"  - {{system: lexical, reference: {TOKEN}, measure: R@5, max_drop: 0.1}}\n"
        f"baseline: {{systems: [{TOKEN}]}}\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError) as info:
        load_gates(gates)
    message = str(info.value)
    assert TOKEN not in message
    assert message.count("API key") == 4
    assert "absolute[1]" in message  # the refused gate ID is replaced by its position


def test_a_token_like_gates_file_name_is_not_echoed(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / f"{TOKEN}.yaml"
    assert main(["gate", str(tiny_dir), "--gates", str(missing)]) == 2
    err = capsys.readouterr().err
    assert TOKEN not in err
    assert "not shown" in err


def test_a_gate_naming_a_system_missing_from_the_report_is_named_safely(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = tmp_path / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\nabsolute:\n  - {system: hybrid, measure: R@5, min: 0.001}\n",
        encoding="utf-8",
    )
    argv = ["gate", str(tiny_dir), "--systems", "lexical", "--repeats", "1", "--gates"]
    # A gate on a system the evaluation lacks is "not evaluated" (issue #13), named by its ID;
    # a run that evaluated no check fails unless that is allowed (issue 34)
    assert main([*argv, str(gates), "--allow-none-evaluated"]) == 0
    out = capsys.readouterr().out
    assert "absolute[0]: system hybrid not in the evaluation (lexical)" in out
    assert "not evaluated: hybrid (gated, but left out by --systems)" in out
    assert main([*argv, str(gates)]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("FAIL: no check was evaluated")


def test_reports_hold_checked_names_only(tiny_dir: Path) -> None:
    evaluation = evaluate(load_fixture(tiny_dir), ["lexical", Named("candidate")], repeats=1)
    report = json.dumps(evaluation.to_report())
    assert all(name_problem(s) is None for s in evaluation.to_report()["systems"])
    assert "candidate" in report


def test_validate_does_not_echo_a_token_like_fixture_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / TOKEN)]) == 2
    err = capsys.readouterr().err
    assert TOKEN not in err
    assert "does not exist" in err
