"""The privacy-safe report: schema, hashes, byte-identical projections, and the leak test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.fixtures import Chunk, Document, Fixture, generate_fixture, load_fixture
from evalkit.fixtures.records import RecordTable
from evalkit.results import REPORT_SCHEMA, deterministic_projection
from evalkit.run import Evaluation, evaluate
from evalkit.run.report_json import corpus_hash
from evalkit.safety.canonical import canonical_json
from evalkit.safety.privacy import find_leaks, private_texts
from evalkit.systems import FunctionRetriever

COMMITTED = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"
PRIVATE_DEFINITION = {"model": "acme-secret-embedder-v7", "endpoint": "internal-host-9b2f"}


class PrivateSystem(FunctionRetriever):
    """A user system whose definition holds private provider values."""

    def __init__(self) -> None:
        super().__init__(lambda q, k: [], name="private", definition=PRIVATE_DEFINITION)


@pytest.fixture(scope="module")
def committed() -> Fixture:
    return load_fixture(COMMITTED)


@pytest.fixture(scope="module")
def committed_evaluation(committed: Fixture) -> Evaluation:
    return evaluate(committed, ["lexical", "hybrid-rerank", PrivateSystem()])


@pytest.fixture(scope="module")
def random_fixture() -> Fixture:
    return generate_fixture(20261129, documents=12, chunks_per_document=3, queries=24)


def test_report_schema_and_sections(committed_evaluation: Evaluation) -> None:
    report = committed_evaluation.to_report()
    assert report["schema"] == REPORT_SCHEMA
    assert set(report) == {
        "schema",
        "fixture",
        "corpusHash",
        "evaluationDefinitionHash",
        "providerDefinitionsHash",
        "definitionHashes",
        "settings",
        "systems",
        "summary",
        "summaryByLanguage",
        "perQuery",
        "confidence",
        "queryLanguages",
        "failures",
        "systemNotes",
        "determinism",
        "latency",
        "machine",
    }
    assert report["fixture"] == {"id": "synthetic-bilingual-v1", "version": "1.1.0"}
    assert report["determinism"] == {"verdict": "deterministic", "repeats": 2}
    assert set(report["summaryByLanguage"]["lexical"]) == {"en", "zh"}
    queries = committed_evaluation.fixture.queries
    assert report["queryLanguages"] == {q.id: q.language for q in queries}
    assert "confidenceSource" not in report  # no reference system declares its confidence
    for key in ("corpusHash", "evaluationDefinitionHash", "providerDefinitionsHash"):
        assert report[key].startswith("sha256:")
        assert len(report[key]) == len("sha256:") + 64
    canonical_json(report)  # serializable: no NaN, no unknown types


def test_two_runs_give_byte_identical_projections(committed: Fixture) -> None:
    first = evaluate(committed, ["lexical", "alias-vector"]).to_report()
    second = evaluate(committed, ["lexical", "alias-vector"]).to_report()
    assert canonical_json(deterministic_projection(first)) == canonical_json(
        deterministic_projection(second)
    )


def test_corpus_hash_of_record_tables_is_that_of_the_models(committed: Fixture) -> None:
    # Large fixtures keep documents and chunks as record tables, hashed from their columns.
    tables = committed.model_copy(
        update={
            "documents": RecordTable.from_models(Document, committed.documents),
            "chunks": RecordTable.from_models(Chunk, committed.chunks),
        }
    )
    assert isinstance(tables.chunks, RecordTable)
    assert corpus_hash(tables) == corpus_hash(committed)


def test_judgment_change_moves_definition_hash_not_corpus_hash(tmp_path: Path) -> None:
    fixture = load_fixture(COMMITTED)
    query = next(q for q in fixture.queries if q.judgments)
    judgment = query.judgments[0]
    changed_judgment = judgment.model_copy(update={"grade": 1 if judgment.grade != 1 else 2})
    changed_query = query.model_copy(update={"judgments": (changed_judgment, *query.judgments[1:])})
    changed = fixture.model_copy(
        update={"queries": tuple(changed_query if q.id == query.id else q for q in fixture.queries)}
    )
    before = evaluate(fixture, ["lexical"], repeats=1).to_report()
    after = evaluate(changed, ["lexical"], repeats=1).to_report()
    assert before["corpusHash"] == after["corpusHash"]
    assert before["evaluationDefinitionHash"] != after["evaluationDefinitionHash"]
    # A changed system setting also changes the definition hash, not the corpus hash.
    other = evaluate(fixture, [FunctionRetriever(lambda q, k: [], name="lexical")], repeats=1)
    assert other.to_report()["corpusHash"] == before["corpusHash"]
    assert other.to_report()["evaluationDefinitionHash"] != before["evaluationDefinitionHash"]


@pytest.mark.parametrize("which", ["committed", "random"])
def test_leak_test_report_holds_no_fixture_text(
    which: str, committed_evaluation: Evaluation, random_fixture: Fixture
) -> None:
    if which == "committed":
        evaluation = committed_evaluation
    else:
        evaluation = evaluate(random_fixture, ["lexical", "hybrid", PrivateSystem()])
    text = canonical_json(evaluation.to_report())
    private = private_texts(evaluation.fixture, evaluation.definitions)
    assert any(p.object_id == "system:private" for p in private)
    assert find_leaks(text, private) == []


@pytest.mark.parametrize(
    "inject",
    [
        lambda f: f.queries[0].text,  # a whole query
        lambda f: f.chunks[3].text[5:45],  # a 40-character fragment of a chunk
        lambda f: f.documents[1].title,  # a title
        lambda f: next(q for q in f.queries if q.judgments).judgments[0].spans[0].text,  # a span
        lambda f: PRIVATE_DEFINITION["model"],  # a private provider value
        lambda f: f.chunks[2].text.upper(),  # case changes do not hide it
    ],
)
def test_leak_test_fails_on_an_injected_leak(inject, random_fixture: Fixture) -> None:  # type: ignore[no-untyped-def]
    evaluation = evaluate(random_fixture, ["lexical", PrivateSystem()], repeats=1)
    report = evaluation.to_report()
    private = private_texts(evaluation.fixture, evaluation.definitions)
    assert find_leaks(canonical_json(report), private) == []
    report["failures"].append({"note": inject(random_fixture)})
    assert find_leaks(canonical_json(report), private) != []


def test_cli_run_writes_report_and_refuses_unsafe_paths(
    tmp_path: Path,
    tiny_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(tiny_dir), "--systems", "lexical", "--output", "reports/run.json"]) == 0
    written = json.loads((tmp_path / "reports" / "run.json").read_text(encoding="utf-8"))
    assert written["schema"] == REPORT_SCHEMA
    assert "report: reports/run.json" in capsys.readouterr().out
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "link")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for unsafe in [
        "/tmp/evalkit-report.json",
        "../escape.json",
        "a/../b.json",
        "link/r.json",
        "bad\0.json",
    ]:
        assert main(["run", str(tiny_dir), "--systems", "lexical", "--output", unsafe]) == 2
        assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert not Path("/tmp/evalkit-report.json").exists()
