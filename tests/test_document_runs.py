"""Document-level runs on a chunked fixture: ``run:PATH?ids=documents`` (issue 33, Build 4).

Each document of the run stands for its best chunk for the query, and the system is scored
against the documents' grades (the maximum over their chunks). The oracle is ir_measures
(pytrec_eval's trec_eval code) on document-level qrels built here by max-aggregating the
fixture's chunk judgments, and the document run itself: every ranking measure must agree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli
from oracles import assert_per_query_values, ir_measures_values

from evalkit.errors import InputError
from evalkit.fixtures import Fixture, Judgment
from evalkit.fixtures.dump import dump_fixture
from evalkit.fixtures.generate import generate_fixture
from evalkit.measures.documents import document_judgments
from evalkit.run import evaluate
from evalkit.systems.external import RunFileRetriever, external_system

# named alike in evalkit and ir_measures, with the same (trec_eval) definitions
MEASURES = ["R@10", "RR@10", "nDCG@10", "P@5", "AP", "Bpref"]


@pytest.fixture(scope="module")
def chunked() -> Fixture:
    """A generated fixture of 3 chunks per document whose judgments grade several chunks of one
    document differently (seeded), without spans, as an imported collection."""
    fixture = generate_fixture(
        seed=11, documents=14, chunks_per_document=3, queries=20, languages=("en",)
    )
    rng = np.random.default_rng(11)
    chunks_of: dict[str, list[str]] = {}
    for chunk in fixture.chunks:
        chunks_of.setdefault(chunk.document_id, []).append(chunk.id)
    documents = sorted(chunks_of)
    queries = []
    for query in fixture.queries:
        if not query.answerable:
            queries.append(query)
            continue
        judgments = []
        for document in rng.choice(documents, size=4, replace=False):
            chosen = rng.choice(chunks_of[str(document)], size=rng.integers(1, 4), replace=False)
            judgments += [Judgment(chunk_id=str(c), grade=int(rng.integers(0, 4))) for c in chosen]
        if all(j.grade == 0 for j in judgments):
            judgments[0] = Judgment(chunk_id=judgments[0].chunk_id, grade=2)
        queries.append(query.model_copy(update={"judgments": tuple(judgments)}))
    meta = fixture.meta.model_copy(update={"requires_spans": False})
    return fixture.model_copy(update={"queries": tuple(queries), "meta": meta})


def _document_run(fixture: Fixture, seed: int = 3) -> list[tuple[str, str, int, float]]:
    """(query, document, rank, score) rows: 9 documents per query, distinct scores."""
    rng = np.random.default_rng(seed)
    documents = sorted({d.id for d in fixture.documents})
    rows = []
    for query in fixture.queries:
        ranked = rng.choice(documents, size=9, replace=False)
        rows += [(query.id, str(d), rank, 20.0 - rank) for rank, d in enumerate(ranked, start=1)]
    return rows


def _write_run(rows: list[tuple[str, str, int, float]], path: Path) -> Path:
    path.write_text(
        "".join(f"{q} Q0 {d} {rank} {score} docs\n" for q, d, rank, score in rows), "utf-8"
    )
    return path


def test_ranking_measures_equal_document_level_evaluation(chunked: Fixture, tmp_path: Path) -> None:
    rows = _document_run(chunked)
    run_file = _write_run(rows, tmp_path / "docs.trec")
    evaluation = evaluate(chunked, [f"run:{run_file}?ids=documents"], measures=MEASURES, repeats=1)
    # the oracle's qrels: document grade = the maximum over its judged chunks
    document_of = {c.id: c.document_id for c in chunked.chunks}
    qrels: dict[str, dict[str, int]] = {}
    for query in chunked.queries:
        for judgment in query.judgments:
            grades = qrels.setdefault(query.id, {})
            document = document_of[judgment.chunk_id]
            grades[document] = max(grades.get(document, 0), judgment.grade)
    several = sum(
        len({document_of[j.chunk_id] for j in q.judgments if j.grade})
        < sum(bool(j.grade) for j in q.judgments)
        for q in chunked.queries
    )
    assert several >= 3  # documents with two relevant chunks: chunk-level scoring would differ
    run: dict[str, dict[str, float]] = {}
    for query_id, document, _, score in rows:
        run.setdefault(query_id, {})[document] = score
    answerable = [q.id for q in chunked.queries if q.answerable]
    expected = ir_measures_values(
        MEASURES, {q: qrels[q] for q in answerable}, {q: run[q] for q in answerable}
    )
    per_query = evaluation.per_query[evaluation.per_query["measure"].isin(MEASURES)]
    assert len(per_query) == len(answerable) * len(MEASURES)
    assert_per_query_values(per_query, expected, tol=1e-12)
    # the rankings hold each document's best chunk, with the document's grade
    ranking = evaluation.rankings
    for query_id, chunk_id, grade in zip(
        ranking["query_id"], ranking["chunk_id"], ranking["grade"], strict=True
    ):
        assert grade == qrels.get(query_id, {}).get(document_of[chunk_id], 0)


def test_best_chunk_rule() -> None:
    document_of = {"a1": "a", "a2": "a", "a3": "a", "b1": "b", "b2": "b"}
    order = ["a1", "a2", "a3", "b1", "b2"]
    judgments = [
        Judgment(chunk_id="a3", grade=2),
        Judgment(chunk_id="a2", grade=2),  # same grade as a3, earlier in chunk order: chosen
        Judgment(chunk_id="a1", grade=1),
        Judgment(chunk_id="b2", grade=0),  # judged non-relevant: still the document's entry
    ]
    assert document_judgments(judgments, document_of, order) == {"a": ("a2", 2), "b": ("b2", 0)}
    assert document_judgments([], document_of, order) == {}


def test_the_run_spec_option(chunked: Fixture, tmp_path: Path) -> None:
    run_file = _write_run(_document_run(chunked), tmp_path / "docs.trec")
    documents = external_system(f"run:{run_file}?ids=documents")
    assert isinstance(documents, RunFileRetriever)
    assert documents.definition()["documentLevel"] is True
    chunks = external_system(f"run:{run_file}?ids=chunks")
    assert isinstance(chunks, RunFileRetriever)
    assert "documentLevel" not in chunks.definition()
    with pytest.raises(InputError, match=r"\?ids=documents") as refused:
        evaluate(chunked, [f"run:{run_file}"], repeats=1)  # document IDs as chunk IDs
    assert "they are document IDs" in str(refused.value)
    with pytest.raises(InputError, match="option"):
        external_system(f"run:{run_file}?ids=pages")
    chunk_rows = [
        (q, f"{d.replace('doc-', 'chunk-')}-00", r, s) for q, d, r, s in _document_run(chunked)
    ]
    chunk_file = _write_run(chunk_rows, tmp_path / "chunks.trec")
    with pytest.raises(InputError, match="they are chunk IDs"):
        evaluate(chunked, [f"run:{chunk_file}?ids=documents"], repeats=1)


def test_evalkit_run_takes_a_document_run(chunked: Fixture, tmp_path: Path) -> None:
    dump_fixture(chunked, tmp_path / "chunked")
    _write_run(_document_run(chunked), tmp_path / "docs.trec")
    argv = [
        "run",
        "chunked",
        "--systems",
        "lexical,run:docs.trec?ids=documents",
        "--output",
        "r.json",
    ]
    code, out, err = run_cli(argv, tmp_path)
    assert code == 0, out + err
    report = (tmp_path / "r.json").read_text("utf-8")
    assert '"spanMeasures": "optimistic"' in report
    assert "docs.trec" not in report
