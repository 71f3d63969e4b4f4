"""A fixture's optional ``aliases.yaml``: strict loading, hashing, and its use by alias-vector."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import fixture_problems

from evalkit.fixtures import (
    AliasConcept,
    AliasTable,
    dump_fixture,
    fixture_json_schema,
    load_fixture,
    validate_fixture,
)
from evalkit.run import evaluate
from evalkit.run.report_json import build_report

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = [
    ROOT / "fixtures" / "synthetic-bilingual-v1",
    ROOT / "fixtures" / "synthetic-bilingual-dev-v1",
]
TABLE: dict[str, Any] = {
    "concepts": [
        {"id": "ferry", "aliases": ["ferry", "渡轮"]},
        {"id": "fare", "aliases": ["ticket", "票价", "多少钱"]},
    ]
}


def test_committed_fixtures_ship_their_tables() -> None:
    for path in COMMITTED:
        fixture = load_fixture(path)
        assert fixture.aliases is not None
        assert len(fixture.aliases.concepts) >= 50
    assert not (ROOT / "evalkit" / "systems" / "data" / "alias_concepts.yaml").exists()


def test_a_table_loads_and_round_trips(make_fixture: Any, tmp_path: Path) -> None:
    path = make_fixture(lambda data: data.update({"aliases.yaml": TABLE}))
    fixture = load_fixture(path)
    assert fixture.aliases == AliasTable(
        concepts=(
            AliasConcept(id="ferry", aliases=("ferry", "渡轮")),
            AliasConcept(id="fare", aliases=("ticket", "票价", "多少钱")),
        )
    )
    dump_fixture(fixture, tmp_path / "out")
    assert load_fixture(tmp_path / "out") == fixture
    assert load_fixture(make_fixture()).aliases is None  # optional


@pytest.mark.parametrize(
    ("table", "item", "field", "message"),
    [
        ({"concepts": [{"id": "ferry", "aliases": ["ferry"], "en": ["x"]}]}, "ferry", "en",
         "is not a known field"),
        ({"concepts": [{"id": "ferry", "aliases": ["  "]}]}, "ferry", "aliases[0]", "is blank"),
        ({"concepts": [{"id": "ferry", "aliases": ["a\tb"]}]}, "ferry", "aliases[0]",
         "control character"),
        ({"concepts": [{"id": "ferry", "aliases": []}]}, "ferry", "aliases", "too few items"),
        ({"concepts": [{"id": "bad id", "aliases": ["x"]}]}, "item 1", "id", "not a valid ID"),
        ({"concepts": [{"id": "a", "aliases": ["ferry"]}, {"id": "a", "aliases": ["boat"]}]},
         "a", "id", "duplicate concept ID"),
        ({"concepts": [{"id": "a", "aliases": ["Ferry"]}, {"id": "b", "aliases": ["ferry"]}]},
         "b", "aliases[0]", "repeats an alias of concept 'a'"),
        ({"concepts": [{"id": "a", "aliases": ["ferry", "FERRY"]}]}, "a", "aliases[1]",
         "repeats an alias of this concept"),
        ({"concepts": []}, "", "concepts", "non-empty list"),
        ({"concept": [{"id": "a", "aliases": ["x"]}]}, "", "concept", "is not a known field"),
        (["ferry"], "", "", "expected a mapping"),
    ],
)  # fmt: skip
def test_bad_tables_name_file_id_and_field(
    make_fixture: Any, table: Any, item: str, field: str, message: str
) -> None:
    problems = fixture_problems(make_fixture(lambda data: data.update({"aliases.yaml": table})))
    assert any(
        p.file == "aliases.yaml"
        and p.object_id == item
        and p.field == field
        and message in p.message
        for p in problems
    ), problems


def test_sensitive_aliases_are_reported_by_field_without_the_value(make_fixture: Any) -> None:
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    table = {
        "concepts": [
            {"id": "c", "aliases": ["ferry", secret]},
            {"id": "p", "aliases": ["/etc/passwd"]},
        ]
    }
    problems = fixture_problems(make_fixture(lambda data: data.update({"aliases.yaml": table})))
    fields = {(p.object_id, p.field) for p in problems}
    assert {("c", "aliases[1]"), ("p", "aliases[0]")} <= fields
    assert not any(secret in str(p) or "/etc/passwd" in str(p) for p in problems)
    # validate_fixture runs the same rules on a table built in Python.
    fixture = load_fixture(make_fixture())
    built = fixture.model_copy(
        update={"aliases": AliasTable(concepts=(AliasConcept(id="c", aliases=(secret,)),))}
    )
    assert [(p.file, p.object_id, p.field) for p in validate_fixture(built)] == [
        ("aliases.yaml", "c", "aliases[0]")
    ]


def test_invalid_yaml_in_the_table_is_reported_with_its_line(make_fixture: Any) -> None:
    problems = fixture_problems(
        make_fixture(lambda data: data.update({"aliases.yaml": "concepts: [\n"}))
    )
    assert [p.file for p in problems] == ["aliases.yaml"]
    assert "invalid YAML" in problems[0].message


def test_the_table_enters_the_evaluation_definition_hash(make_fixture: Any) -> None:
    plain = load_fixture(make_fixture())
    with_table = load_fixture(make_fixture(lambda data: data.update({"aliases.yaml": TABLE})))
    other = with_table.model_copy(
        update={"aliases": AliasTable(concepts=(AliasConcept(id="ferry", aliases=("boat",)),))}
    )
    hashes = [
        build_report(evaluate(f, ["lexical"], repeats=1))["evaluationDefinitionHash"]
        for f in (plain, with_table, other)
    ]
    assert len(set(hashes)) == 3  # even lexical, which ignores the table


def test_alias_vector_uses_the_fixture_table(make_fixture: Any) -> None:
    fixture = load_fixture(make_fixture(lambda data: data.update({"aliases.yaml": TABLE})))
    rankings = evaluate(fixture, ["alias-vector"], repeats=1).rankings
    # "单程票多少钱？" mentions the fare concept (多少钱), as do c-en-2 ("ticket") and
    # c-zh-1 ("票价").
    returned = set(rankings.loc[rankings["query_id"] == "q-zh-1", "chunk_id"])
    assert returned == {"c-en-2", "c-zh-1"}


def test_without_a_table_alias_vector_returns_nothing_and_says_so_once(
    make_fixture: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from evalkit.systems import vectors

    vectors._NOTICED.clear()
    fixture = load_fixture(make_fixture())
    with caplog.at_level(logging.INFO, logger="evalkit.systems"):
        evaluation = evaluate(fixture, ["alias-vector", "hybrid", "lexical"], repeats=2)
    notices = [r for r in caplog.records if "no aliases.yaml" in r.getMessage()]
    assert len(notices) == 1
    rankings = evaluation.rankings
    assert rankings[rankings["system"] == "alias-vector"].empty
    # hybrid then ranks with its lexical component alone: the same chunks in the same order.
    hybrid = rankings[rankings["system"] == "hybrid"][["query_id", "chunk_id"]]
    lexical = rankings[rankings["system"] == "lexical"][["query_id", "chunk_id"]]
    assert hybrid.to_numpy().tolist() == lexical.to_numpy().tolist()


def test_the_command_line_prints_the_notice_once(
    make_fixture: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    plain = make_fixture()
    assert main(["run", str(plain), "--systems", "lexical,hybrid", "--repeats", "1"]) == 0
    assert capsys.readouterr().err.count("has no aliases.yaml") == 1
    assert main(["run", str(plain), "--systems", "lexical", "--repeats", "1"]) == 0
    assert "aliases.yaml" not in capsys.readouterr().err
    with_table = make_fixture(lambda data: data.update({"aliases.yaml": TABLE}))
    assert main(["run", str(with_table), "--repeats", "1"]) == 0
    assert "aliases.yaml" not in capsys.readouterr().err


def test_committed_aliases_schema_is_current_and_accepts_the_tables() -> None:
    committed = json.loads((ROOT / "evalkit" / "schema" / "aliases.schema.json").read_text())
    assert committed == fixture_json_schema("aliases"), (
        "regenerate with: evalkit schema aliases > evalkit/schema/aliases.schema.json"
    )
    validator = jsonschema.Draft202012Validator(committed)
    for path in COMMITTED:
        validator.validate(yaml.safe_load((path / "aliases.yaml").read_text(encoding="utf-8")))
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"concepts": [{"id": "a", "aliases": ["x"], "why": "y"}]})
