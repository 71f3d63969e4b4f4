"""Issue 16, items 4 and 5 at the library level: readers refuse what is not a regular file,
bound nesting depth, keep grades in int64, refuse empty qrels; fixture text rules agree with
fixtures/README.md (CR allowed, C1 refused, short credentials and e-mail addresses flagged).
The command-line view of the same rules is the corpus in tests/malformed/."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.errors import FixtureError, FormatError, InputError, InputFileError, ProbeError
from evalkit.fixtures import Document, find_sensitive, load_fixture
from evalkit.formats import read_beir, read_qrels, read_run
from evalkit.gates import load_gates, load_report
from evalkit.probes import Probe, load_probes
from evalkit.safety.inputs import MAX_DEPTH, load_json, read_input_bytes
from evalkit.safety.yamlio import compose_and_load

# --- non-regular files ------------------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    return path


def test_every_reader_refuses_a_fifo_without_blocking(fifo: Path) -> None:
    # each call would block forever on open() or read() if the FIFO were opened for reading
    with pytest.raises(InputFileError, match=r"is a FIFO \(named pipe\), not a regular file"):
        read_input_bytes(fifo)
    for reader in (read_qrels, read_run):
        with pytest.raises(FormatError, match=re.escape("pipe.txt: is a FIFO")):
            reader(fifo)
    with pytest.raises(InputError, match=re.escape("pipe.txt' is a FIFO")):
        load_report(fifo)
    with pytest.raises(FixtureError, match=re.escape("pipe.txt: is a FIFO")):
        load_gates(fifo)


def test_a_directory_or_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="is a directory, not a regular file"):
        read_qrels(tmp_path)
    with pytest.raises(FormatError, match="/dev/null: is a character device"):
        read_run("/dev/null")


# --- TREC and BEIR values --------------------------------------------------------------------


@pytest.mark.parametrize("grade", ["9223372036854775808", "-9223372036854775809", "1" * 40])
def test_a_grade_beyond_int64_names_file_and_line(tmp_path: Path, grade: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(f"q1 0 d1 1\n# comment\nq1 0 d2 {grade}\n", encoding="utf-8")
    with pytest.raises(FormatError, match="outside the 64-bit integer range") as info:
        read_qrels(path)
    assert (info.value.file, info.value.line) == (str(path), 3)


def test_int64_extremes_still_read(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 9223372036854775807\nq1 0 d2 -9223372036854775808\n")
    assert read_qrels(path)["relevance"].tolist() == [2**63 - 1, -(2**63)]


@pytest.mark.parametrize("text", ["", "\n\n", "# one\n  \n# two\n"])
def test_qrels_without_judgments_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match="holds no judgments"):
        read_qrels(path)


def test_an_empty_run_is_still_a_run(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_text("# nothing retrieved\n", encoding="utf-8")
    assert read_run(path).empty  # a system may return nothing; trec_eval scores that as 0


def test_beir_grade_beyond_int64_and_deep_json(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d", "text": "x"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "y"}\n')
    (tmp_path / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq\td\t{'9' * 30}\n")
    with pytest.raises(
        FormatError, match=re.escape("test.tsv:2: field score is outside the 64-bit")
    ):
        read_beir(tmp_path)
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "y"}\n' + "[" * 50_000 + "\n")
    with pytest.raises(FormatError, match=re.escape("queries.jsonl:2: is not a valid JSON object")):
        read_beir(tmp_path)


# --- nesting depth ---------------------------------------------------------------------------


def test_json_nested_too_deep_is_a_value_error_not_a_recursion_error() -> None:
    assert load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(ValueError, match=r"line 2: nested more than 64 levels deep"):
        load_json("{\n" + '"a": [' * 100_000)
    # brackets inside strings do not count
    assert load_json(json.dumps({"a": "[" * 1000})) == {"a": "[" * 1000}


def test_a_report_nested_100000_deep_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(
        InputError, match=re.escape("r.json' line 1: nested more than 64 levels deep")
    ):
        load_report(path)


def test_yaml_nested_too_deep_is_a_syntax_error_at_its_line() -> None:
    assert compose_and_load("a: " + "[" * 60 + "]" * 60)[1] == {"a": [[[]]] and _nest(59)}
    with pytest.raises(yaml.YAMLError) as info:
        compose_and_load("a: 1\nb: " + "[" * 100_000)
    assert "nested more than 64 levels deep" in str(info.value)


def _nest(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_deep_fixture_file_is_one_problem(make_fixture: Any) -> None:
    def deepen(data: dict[str, Any]) -> None:
        data["documents.yaml"][1]["title"] = _nest(200)

    with pytest.raises(FixtureError) as info:
        load_fixture(make_fixture(deepen))
    messages = [str(p) for p in info.value.problems]
    assert "documents.yaml [item 2]: is nested more than 64 levels deep" in messages[0]


# --- fixture text rules ----------------------------------------------------------------------


def test_cr_and_crlf_are_line_breaks_in_text(make_fixture: Any) -> None:
    def breaks(data: dict[str, Any]) -> None:
        data["chunks.yaml"][1]["text"] = "A single ticket\r\ncosts four\rcrowns."
        data["documents.yaml"][0]["title"] = "Ferry\r\nguide"

    fixture = load_fixture(make_fixture(breaks))
    assert fixture.chunk("c-en-2").text == "A single ticket\r\ncosts four\rcrowns."  # as written


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_a_fixture_written_with_crlf_or_cr_line_endings_loads(tiny_dir: Path, ending: str) -> None:
    for path in tiny_dir.glob("*.yaml"):
        path.write_bytes(path.read_bytes().replace(b"\n", ending.encode()))
    assert len(load_fixture(tiny_dir).chunks) == 3


@pytest.mark.parametrize("char", ["\x80", "\x85", "\x9b", "\x9f", "\x7f", "\x0b", "\x1b", "\x00"])
def test_c0_c1_and_del_are_refused_in_text(char: str) -> None:
    with pytest.raises(ValueError, match=r"string_pattern_mismatch|should match pattern"):
        Document.model_validate({"id": "d", "language": "en", "title": f"A{char}B"})


def test_an_escaped_c1_character_in_a_fixture_file_is_one_problem(tiny_dir: Path) -> None:
    # written as a YAML escape: a raw U+0085 in a YAML file is itself a line break (YAML 1.1)
    path = tiny_dir / "documents.yaml"
    path.write_text(
        '- {id: doc-en-1, language: en, title: "Ferry\\x9bguide"}\n'
        "- {id: doc-zh-1, language: zh, title: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(FixtureError) as info:
        load_fixture(tiny_dir)
    assert [str(p) for p in info.value.problems] == [
        "documents.yaml [doc-en-1] title: contains a control character (C0, DEL or C1 "
        "U+0080-U+009F); only tab and line breaks (LF, CR, CRLF) are allowed"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "password = hunter2",
        "api_key = abc123",
        "token: xyz",
        "Log in with PASSWORD=a",
        "db_password: 'x'",
        "secret_key = k",
        "the auth-token: q.",
        "anna.berg@example.org",
        "Mail KUNDEN+info@post.example.co.uk today",
    ],
)
def test_short_credentials_and_email_addresses_are_flagged(text: str) -> None:
    assert find_sensitive(text)


@pytest.mark.parametrize(
    "text",
    [
        "The password: remember it well.",
        "tokens: 5 per word, and passwords = plural.",
        "Enter your password and press OK.",
        "the @ sign and user@host",
        "ratio 3:2 = 1.5",
    ],
)
def test_prose_about_passwords_and_at_signs_is_not_flagged(text: str) -> None:
    assert find_sensitive(text) == ()


def test_email_is_its_own_kind() -> None:
    assert find_sensitive("write to a.b@example.org") == ("email",)


def test_a_refused_chunk_file_does_not_cascade(tiny_dir: Path, tmp_path: Path) -> None:
    chunks = yaml.safe_load((tiny_dir / "chunks.yaml").read_text(encoding="utf-8"))
    (tiny_dir / "chunks.yaml").unlink()
    (tiny_dir / "chunks").mkdir()
    (tiny_dir / "chunks" / "a.yaml").write_text(yaml.safe_dump(chunks[:1]), encoding="utf-8")
    outside = tmp_path / "outside.yaml"
    outside.write_text(yaml.safe_dump(chunks[1:], allow_unicode=True), encoding="utf-8")
    (tiny_dir / "chunks" / "b.yaml").symlink_to(outside)
    with pytest.raises(FixtureError) as info:
        load_fixture(tiny_dir)
    messages = [str(p) for p in info.value.problems]
    assert len(messages) == 1, messages  # not also q-zh-1's judgment of c-zh-1
    assert messages[0].startswith("chunks/b.yaml: is a symlink that leads outside")
    assert "references to what it defines are not checked" in messages[0]


def test_an_unclosed_quote_is_reported_at_the_quote(tiny_dir: Path) -> None:
    (tiny_dir / "queries.yaml").write_text(
        "- id: q-en-1\n  language: en\n  text: 'When does it leave?\n\n\n\n", encoding="utf-8"
    )
    with pytest.raises(FixtureError) as info:
        load_fixture(tiny_dir)
    assert str(info.value.problems[0]) == (
        "queries.yaml line 3, column 9: invalid YAML: a quoted scalar starts here and is never "
        "closed (the file ends first)"
    )


# --- probes ----------------------------------------------------------------------------------


def test_probe_args_validate_json_like_values_in_python_too() -> None:
    base = {"id": "p", "probe": {"tool": "t"}, "expected": {"symbols": ["a"]}}
    ok = Probe.model_validate({**base, "probe": {"tool": "t", "args": {"x": [1, {"y": [True]}]}}})
    assert ok.probe.args == {"x": [1, {"y": [True]}]}
    with pytest.raises(ValueError, match="x is nested more than 64 levels deep"):
        Probe.model_validate({**base, "probe": {"tool": "t", "args": {"x": _nest(70)}}})
    with pytest.raises(ValueError, match=r"x\[0\] must be a string, integer, number, boolean"):
        Probe.model_validate({**base, "probe": {"tool": "t", "args": {"x": [(1, 2)]}}})


def test_a_probe_file_that_is_a_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").mkdir()
    with (
        warnings.catch_warnings(),
        pytest.raises(ProbeError, match=re.escape("p.yaml: is a directory")),
    ):
        load_probes(tmp_path)


# --- report JSON content is never echoed -----------------------------------------------------


def test_diff_prints_only_name_shaped_header_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    report = {
        "schema": "evalkit.report/1",
        "summary": {},
        "summaryByLanguage": {},
        "perQuery": {},
    }
    leaky = {**report, "fixture": {"id": "/home/anna/secret fixture", "version": "1.0.0"}}
    (tmp_path / "old.json").write_text(json.dumps(report), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(leaky), encoding="utf-8")
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    out = capsys.readouterr().out
    assert "new: fixture ? 1.0.0" in out
    assert "anna" not in out


def test_a_beir_file_that_is_a_fifo_is_named(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    os.mkfifo(tmp_path / "corpus.jsonl")
    with pytest.raises(FormatError, match=re.escape("corpus.jsonl: is a FIFO (named pipe)")):
        read_beir(tmp_path)
