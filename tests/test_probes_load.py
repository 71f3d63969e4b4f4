"""load_probes: the strict probe schema, one test per kind of malformed file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.errors import ProbeError
from evalkit.probes import load_probes

TOOLS = ("find_symbol", "callers_of")
SECRET_TEXT = "zebra-quartz-unique-description-text"


def _probe(probe_id: str = "p1", **overrides: str) -> str:
    fields = {
        "id": f"id: {probe_id}",
        "description": f"description: {SECRET_TEXT}",
        "probe": "probe: {tool: find_symbol, args: {name: decode}}",
        "scoring": "scoring: {recall_min: 0.5, precision_min: 0.25}",
        "expected": "expected: {symbols: [json.decoder.JSONDecoder.decode]}",
    }
    fields.update(overrides)
    lines = [value for value in fields.values() if value]
    return "- " + "\n  ".join(lines) + "\n"


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text, encoding="utf-8")
    return directory


def _problems(directory: Path, tools: tuple[str, ...] | None = TOOLS) -> str:
    with pytest.raises(ProbeError) as info:
        load_probes(directory, tools=tools)
    message = str(info.value)
    assert SECRET_TEXT not in message  # never quote fixture text
    return message


# -- valid input ----------------------------------------------------------------------------


def test_valid_probes_load_sorted_by_id_across_files(tmp_path: Path) -> None:
    _write(tmp_path, "b.yaml", _probe("zeta") + _probe("alpha"))
    _write(tmp_path, "a.yml", _probe("mid"))
    (tmp_path / "README.md").write_text("not a probe file", encoding="utf-8")
    (tmp_path / "baseline.json").write_text("{}", encoding="utf-8")
    probes = load_probes(tmp_path, tools=TOOLS)
    assert [p.id for p in probes] == ["alpha", "mid", "zeta"]
    first = probes[0]
    assert first.probe.tool == "find_symbol"
    assert first.probe.args == {"name": "decode"}
    assert first.expected.symbols == ["json.decoder.JSONDecoder.decode"]
    assert (first.scoring.recall_min, first.scoring.precision_min) == (0.5, 0.25)


def test_scoring_defaults_to_zero_and_a_single_mapping_file_is_one_probe(tmp_path: Path) -> None:
    text = _probe("solo", scoring="").removeprefix("- ").replace("\n  ", "\n")
    _write(tmp_path, "one.yaml", text)
    (probe,) = load_probes(tmp_path)
    assert (probe.scoring.recall_min, probe.scoring.precision_min) == (0.0, 0.0)


def test_tool_names_are_not_checked_without_a_tool_list(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(probe="probe: {tool: not_registered}"))
    (probe,) = load_probes(tmp_path, tools=None)
    assert probe.probe.tool == "not_registered"
    assert probe.probe.args == {}


def test_committed_probes_load() -> None:
    probes = load_probes(Path(__file__).parents[1] / "fixtures" / "probes")
    assert len(probes) >= 25
    assert [p.id for p in probes] == sorted(p.id for p in probes)


# -- one test per error kind ----------------------------------------------------------------


def test_missing_id(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(id=""))
    message = _problems(tmp_path)
    assert re.search(r"p\.yaml:1 \[probe #1\] id: required field is missing", message)


def test_malformed_id(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe("has space"))
    assert re.search(r"p\.yaml:1 \[probe #1\] id: must be an ID matching", _problems(tmp_path))


def test_duplicate_id_within_a_file(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe("same") + _probe("same"))
    message = _problems(tmp_path)
    assert re.search(
        r"p\.yaml:6 \[same\] id: duplicate probe ID, first defined at p\.yaml:1", message
    )


def test_duplicate_id_across_files(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", _probe("same"))
    _write(tmp_path, "b.yaml", _probe("same"))
    message = _problems(tmp_path)
    assert re.search(
        r"b\.yaml:1 \[same\] id: duplicate probe ID, first defined at a\.yaml:1", message
    )


def test_unknown_tool_with_suggestion(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(probe="probe: {tool: find_symbols, args: {name: x}}"))
    message = _problems(tmp_path)
    assert "p.yaml:1 [p1] probe.tool: unknown tool 'find_symbols'" in message
    assert "known tools: callers_of, find_symbol" in message
    assert "Did you mean 'find_symbol'?" in message


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param(
            {"expected": "expected: {}"},
            "[p1] expected.symbols: required field is missing",
            id="missing-expected-symbols",
        ),
        pytest.param(
            {"expected": ""}, "[p1] expected: required field is missing", id="missing-expected"
        ),
        pytest.param(
            {"expected": "expected: {symbols: []}"},
            "[p1] expected.symbols: must list at least one expected symbol",
            id="empty-expected-symbols",
        ),
        pytest.param(
            {"expected": "expected: {symbols: [a, '']}"},
            "[p1] expected.symbols.1: must be a non-empty string",
            id="empty-string-expected-symbol",
        ),
        pytest.param(
            {"scoring": "scoring: {recall_minimum: 0.5}"},
            "[p1] scoring.recall_minimum: unknown field",
            id="unknown-nested-field",
        ),
        pytest.param(
            {"scoring": "scoring: {precision_min: 1.5}"},
            "[p1] scoring.precision_min: must be a number between 0.0 and 1.0",
            id="threshold-out-of-range",
        ),
    ],
)
def test_field_problem(tmp_path: Path, overrides: dict[str, str], expected: str) -> None:
    _write(tmp_path, "p.yaml", _probe(**overrides))
    assert expected in _problems(tmp_path)


def test_unknown_top_level_field(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe().replace("  expected:", "  colour: red\n  expected:"))
    assert "[p1] colour: unknown field" in _problems(tmp_path)


def test_wrong_type_threshold(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(scoring="scoring: {recall_min: '0.5'}"))
    message = _problems(tmp_path)
    assert re.search(r"\[p1\] scoring\.recall_min: wrong type: .*, found str", message)


def test_wrong_type_argument_value(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(probe="probe: {tool: find_symbol, args: {name: null}}"))
    message = _problems(tmp_path)
    assert (
        "[p1] probe.args: name must be a string, integer, number, boolean, list or mapping, "
        "found null" in message
    )


def test_wrong_type_symbols_not_a_list(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(expected="expected: {symbols: json.dumps}"))
    assert re.search(r"\[p1\] expected\.symbols: wrong type: .*found str", _problems(tmp_path))


def test_wrong_type_id(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe(id="id: 12"))
    assert re.search(r"\[probe #1\] id: wrong type: .*found int", _problems(tmp_path))


def test_probe_item_not_a_mapping(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe("ok") + "- just a string\n")
    assert "p.yaml:6 [probe #2]: expected a probe mapping, found str" in _problems(tmp_path)


def test_file_not_a_list(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", "42\n")
    assert "p.yaml: expected a list of probes (or one probe mapping), found int" in _problems(
        tmp_path
    )


@pytest.mark.parametrize("text", ["# only a comment\n", "[]\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    _write(tmp_path, "p.yaml", text)  # an empty list would pass CI and check nothing
    assert "p.yaml: is empty; expected a list of probes" in _problems(tmp_path)


def test_invalid_yaml_names_line_but_not_text(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe() + f"- id: [unclosed {SECRET_TEXT}\n")
    problems = _problems(tmp_path)
    # reported where the bracket opens (line 6, column 7), not at the end of the file
    assert (
        "p.yaml:6: is not valid YAML (a flow sequence starts here and is never closed" in problems
    )
    assert "column 7)" in problems
    assert SECRET_TEXT not in problems


def test_duplicate_key_in_a_mapping(tmp_path: Path) -> None:
    _write(tmp_path, "p.yaml", _probe().replace("  scoring:", "  id: p2\n  scoring:"))
    assert "p.yaml:4 id: this key appears twice in one mapping" in _problems(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    tmp_path.joinpath("p.yaml").write_bytes(b"- id: \xff\xfe\n")
    assert "p.yaml: is not UTF-8 (byte 6); save it as UTF-8" in _problems(tmp_path)


def test_no_probe_files(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x", encoding="utf-8")
    assert "has no .yaml/.yml files" in _problems(tmp_path)


def test_not_a_directory(tmp_path: Path) -> None:
    assert "does not exist or is not a directory" in _problems(tmp_path / "missing")


def test_every_problem_of_every_file_is_reported_together(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", _probe("one", expected="expected: {symbols: []}"))
    _write(tmp_path, "b.yaml", _probe("two", scoring="scoring: {recall_min: 2}"))
    message = _problems(tmp_path)
    assert message.startswith(f"probe directory {str(tmp_path)!r} has 2 problem(s):")
    assert "a.yaml:1 [one] expected.symbols" in message
    assert "b.yaml:1 [two] scoring.recall_min" in message
