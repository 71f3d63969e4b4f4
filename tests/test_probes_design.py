"""Probes against the design (issue 16, item 6): nested args, repeated symbols, optional
description, and the ``got`` column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ProbeError, RepeatedSymbolWarning
from evalkit.probes import Tool, load_probes, probes_report, run_probes
from evalkit.registry import Registry


def _write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "p.yaml").write_text(text, encoding="utf-8")
    return directory


def pick(names: list[str], options: dict[str, bool]) -> list[str]:
    """The names, reversed when ``options['reverse']``."""
    return list(reversed(names)) if options.get("reverse") else list(names)


@pytest.fixture
def tools() -> Registry[Tool]:
    registry: Registry[Tool] = Registry("tool")
    registry.register("pick", Tool.from_function(pick, ordered=True))
    return registry


NESTED = """\
- id: nested
  probe:
    tool: pick
    args:
      names: [c, a, b, a]
      options: {reverse: true}
  expected: {symbols: [a, b, c]}
"""


def test_args_take_lists_and_mappings_and_description_is_optional(
    tmp_path: Path, tools: Registry[Tool]
) -> None:
    probes = load_probes(_write(tmp_path, NESTED), tools=tools.names())
    assert probes[0].description is None
    assert probes[0].probe.args == {"names": ["c", "a", "b", "a"], "options": {"reverse": True}}
    results = run_probes(tools, probes)
    row = results.iloc[0]
    assert row["status"] == "pass"
    # got: what pick returned, in its order, repeats kept (the reverse of [c, a, b, a])
    assert row["got"] == ("a", "b", "a", "c")
    assert row["missing"] == ()
    assert row["extra"] == ()
    report = probes_report(results, target="toy", fingerprint="sha256:00", probes=probes)
    assert report["probes"][0]["got"] == ["a", "b", "a", "c"]


def test_a_tool_cannot_change_the_probe_it_runs(tmp_path: Path) -> None:
    def greedy(names: list[str]) -> list[str]:
        names.append("z")
        return names

    registry: Registry[Tool] = Registry("tool")
    registry.register("pick", Tool.from_function(greedy, ordered=False))
    text = "- id: p\n  probe: {tool: pick, args: {names: [a]}}\n  expected: {symbols: [a]}\n"
    probes = load_probes(_write(tmp_path, text))
    assert run_probes(registry, probes).iloc[0]["got"] == ("a", "z")
    assert probes[0].probe.args == {"names": ["a"]}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ("{names: [a, null]}", "probe.args: names[1] must be a string, integer, number, boolean"),
        ("{names: [2024-01-01]}", "names[0] must be a string, integer, number, boolean, list or "),
        ("{options: {1: true}}", "options has a key that is not a non-empty string (int)"),
        ("{x: .nan}", "x must be a finite number"),
        ("{x: " + "[" * 70 + "]" * 70 + "}", "nested more than 64 levels deep"),
    ],
    ids=["null-item", "date-item", "int-key", "nan", "too-deep"],
)
def test_args_must_be_json_like(tmp_path: Path, args: str, fragment: str) -> None:
    text = f"- id: p\n  probe: {{tool: pick, args: {args}}}\n  expected: {{symbols: [a]}}\n"
    with pytest.raises(ProbeError) as info:
        load_probes(_write(tmp_path, text))
    assert ("p.yaml:2" if "deep" in fragment else "p.yaml:1") in str(info.value)
    assert fragment in str(info.value)


def test_repeated_expected_symbols_are_dropped_with_a_warning(tmp_path: Path) -> None:
    text = (
        "- id: p\n  probe: {tool: pick, args: {names: [a]}}\n"
        "  expected: {symbols: [zz-one, zz-two, zz-one, zz-two, zz-one]}\n"
    )
    with pytest.warns(RepeatedSymbolWarning) as caught:
        probes = load_probes(_write(tmp_path, text))
    assert probes[0].expected.symbols == ["zz-one", "zz-two"]
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("p.yaml:1 [p] expected.symbols[2]: repeats expected.symbols[0]")
    assert len(messages) == 3
    assert not any("zz-" in m for m in messages)  # positions only, never the symbol


def test_the_cli_prints_the_repeat_warning_once_and_still_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "- id: p\n  probe: {tool: find_symbol, args: {name: decode}}\n"
        "  expected: {symbols: [json.decoder.JSONDecoder.decode, json.decoder.JSONDecoder.decode]}"
        "\n"
    )
    code = main(["probes", str(_write(tmp_path / "probes", text)), "--target", "stdlib"])
    captured = capsys.readouterr()
    assert code in (0, 1)
    assert captured.err.count("evalkit: warning: p.yaml:1 [p] expected.symbols[1]: repeats") == 1
    assert "Traceback" not in captured.err


def test_got_is_in_the_committed_baseline() -> None:
    baseline = json.loads(Path("fixtures/probes/baseline.json").read_text(encoding="utf-8"))
    assert all(isinstance(row["got"], list) for row in baseline["probes"])
