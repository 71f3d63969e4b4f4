"""Issue #49: every JSON Lines reader checks a line's nesting depth without recursion before
``json`` reads it, and a number too large for a float is refused naming its field: a fixture's
``queries.jsonl``, a BEIR corpus, an import table, a table's answers cell, a JSONL run and a
release record. Before, each of them gave a raw ``RecursionError`` (or ``OverflowError``)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from evalkit.errors import FormatError, InputError, Problem
from evalkit.fixtures import columnar
from evalkit.fixtures.versioning import read_releases
from evalkit.formats.runs import read_run_file
from evalkit.importers import beir_source, sources
from evalkit.importers.sources import table_rows
from evalkit.safety.inputs import MAX_DEPTH, finite_number, json_depth_error, json_too_deep

DEEP = "[" * 100_000 + "]" * 100_000
NESTED = f"nested more than {MAX_DEPTH} levels deep"


def test_a_deep_fixture_jsonl_line_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text('{"id": "q1"}\n' + json.dumps({"id": "q2", "x": 1})[:-1] + f', "d": {DEEP}}}\n')
    problems: list[Problem] = []
    lines = columnar.read_jsonl(path, "queries.jsonl", problems)
    assert lines is not None
    values = list(lines)
    assert values[0] == (1, {"id": "q1"})
    assert values[1] == (2, columnar.UNPARSED)
    assert [(p.field, p.message) for p in problems] == [("line 2", f"invalid JSON: {NESTED}")]


def test_a_deep_beir_corpus_line_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "a question"}\n')
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "a text"}\n' + f'{{"_id": "d2", "text": {DEEP}}}\n'
    )
    documents, _, _ = beir_source(tmp_path)
    with pytest.raises(InputError, match=f"corpus.jsonl line 2: not valid JSON \\({NESTED}\\)"):
        list(documents)


def test_a_deep_table_row_and_answers_cell_are_input_errors(tmp_path: Path) -> None:
    table = tmp_path / "documents.jsonl"
    table.write_text('{"doc_id": "d1"}\n' + f'{{"doc_id": {DEEP}}}\n')
    with pytest.raises(InputError, match=f"documents.jsonl line 2: not valid JSON \\({NESTED}\\)"):
        list(table_rows(table))
    with pytest.raises(InputError, match=f"row 3: the answers are a JSON list {NESTED}"):
        sources._answers(DEEP, "row 3")
    assert sources._answers('["a", "b"]', "row 3") == ("a", "b")
    assert sources._answers("[1" + "0" * 5000 + "]", "row 3") == ("[1" + "0" * 5000 + "]",)


def test_a_deep_or_overflowing_jsonl_run_line_is_a_format_error(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(
        '{"query_id": "q1", "chunk_id": "c1", "score": 1.5}\n'
        f'{{"query_id": "q1", "chunk_id": "c2", "score": {DEEP}}}\n'
    )
    with pytest.raises(FormatError, match=f"run.jsonl:2: .*{NESTED}"):
        read_run_file(run)
    run.write_text('{"query_id": "q1", "chunk_id": "c1", "score": 1' + "0" * 400 + "}\n")
    with pytest.raises(FormatError, match=r"run\.jsonl:1: 'score' should be a finite number"):
        read_run_file(run)


def test_a_deep_release_record_is_an_input_error(tmp_path: Path) -> None:
    record = tmp_path / "releases.json"
    record.write_text(f'{{"schema": 1, "releases": {DEEP}}}')
    with pytest.raises(InputError, match="cannot read release record"):
        read_releases(record)


def test_the_depth_check_and_finite_number() -> None:
    assert json_too_deep(DEEP)
    assert not json_too_deep("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert json_too_deep("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert not json_too_deep('["' + "[" * 1000 + '"]')  # brackets inside a string
    assert finite_number(10**400) is None
    assert finite_number(True) is None
    assert finite_number(float("nan")) is None
    assert finite_number("1") is None
    assert finite_number(3) == 3.0
    assert finite_number(-2.5) == -2.5


def test_a_baseline_value_too_large_for_a_float_names_its_place(tmp_path: Path) -> None:
    """Before: ``OverflowError`` from ``math.isfinite`` of a 400-digit integer (diff, gate)."""
    from cli_runner import run_cli

    committed = Path(__file__).resolve().parent.parent / "fixtures" / "synthetic-bilingual-v1"
    text = (committed / "baseline.json").read_text(encoding="utf-8")
    huge = text.replace('"mean": 0.03199234074476199', '"mean": 1' + "0" * 400, 1)
    assert huge != text
    (tmp_path / "baseline.json").write_text(huge, encoding="utf-8")
    code, _, err = run_cli(["diff", str(committed / "baseline.json"), "baseline.json"], tmp_path)
    assert code == 2, err
    assert "summary['alias-vector']['ContextPrecision@10'].mean should be a finite number" in err
    assert "OverflowError" not in err


def test_a_gate_threshold_too_large_for_a_float_names_its_field(tmp_path: Path) -> None:
    from evalkit.errors import FixtureError
    from evalkit.gates import load_gates

    committed = Path(__file__).resolve().parent.parent / "fixtures" / "synthetic-bilingual-v1"
    text = (committed / "gates.yaml").read_text(encoding="utf-8")
    (tmp_path / "gates.yaml").write_text(text.replace("min: 0.78", "min: 1" + "0" * 400, 1))
    with pytest.raises(FixtureError, match="min: out of range: an integer too large for a float"):
        load_gates(tmp_path / "gates.yaml")


def _depth_by_regex(data: str) -> str | None:
    """The bracket counter json_depth_error was (one regex match per bracket): the oracle."""
    raw = data.encode("utf-8", "surrogatepass")
    strings = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
    stripped = strings.sub(lambda m: b"\n" * m.group().count(b"\n"), raw)
    depth = 0
    for match in re.finditer(rb"[\[\]{}]", stripped):
        if match.group() in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = stripped.count(b"\n", 0, match.start()) + 1
                return (
                    f"line {line}: nested more than {MAX_DEPTH} levels deep; an evalkit report "
                    "nests 5 levels"
                )
        else:
            depth = max(depth - 1, 0)
    return None


def test_the_block_depth_check_agrees_with_the_bracket_counter() -> None:
    """Random texts of brackets, strings, escapes and newlines, half of them too deep."""
    rng = random.Random(49)
    symbols = ["[", "]", "{", "}", '"', "\\", "a", "\n", " ", ":", ","]
    deep = 0
    for _ in range(600):
        size = rng.choice([70, 300, 2000])
        text = "".join(
            rng.choice(symbols) if rng.random() < 0.5 else rng.choice("[[[[{]") for _ in range(size)
        )
        expected = _depth_by_regex(text)
        assert json_depth_error(text) == expected, text
        deep += expected is not None
    assert 100 < deep < 500


# Modules whose json calls read only what evalkit wrote itself (or catch RecursionError):
# the report's figure hand-over, the settings round trip, the artifact self-check, the leak
# scan's decoding of an artifact (it falls back to the raw text on RecursionError).
OWN_JSON = {
    "evalkit/safety/inputs.py",
    "evalkit/report/handover.py",
    "evalkit/report/evaluation_files.py",
    "evalkit/safety/artifacts.py",
    "evalkit/safety/privacy.py",
    "evalkit/safety/canonical.py",  # reads back the text json.dumps just wrote from data
}
DEPTH_CHECKS = {"json_too_deep", "json_depth_error", "load_json"}


def test_every_json_read_of_input_checks_the_depth_first() -> None:
    """A function that calls ``json.load``/``json.loads`` or a ``JSONDecoder``'s ``decode``
    also calls a depth check (outside the modules of ``OWN_JSON``)."""
    import ast

    root = Path(__file__).resolve().parent.parent
    unchecked = []
    for path in sorted((root / "evalkit").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in OWN_JSON:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
            names = {
                n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                for n in calls
            }
            reads = any(
                isinstance(n.func, ast.Attribute)
                and (
                    (isinstance(n.func.value, ast.Name) and n.func.value.id == "json"
                     and n.func.attr in {"load", "loads"})
                    or (n.func.attr == "decode" and isinstance(n.func.value, ast.Name)
                        and n.func.value.id == "decoder")
                )
                for n in calls
            )  # fmt: skip
            if reads and not names & DEPTH_CHECKS:
                unchecked.append(f"{relative}:{function.lineno} {function.name}")
    assert unchecked == []
