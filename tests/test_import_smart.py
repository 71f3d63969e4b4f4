"""``evalkit import smart``: the SMART family as it is written. Judgment layouts detected (or
given with ``--qrels-layout``), an ambiguous file refused, zero-padded IDs matched and reported,
the file-order guard, title-only documents, metadata fields, ``.X``, query ``.T``, the summary.

Each test writes its own small files; expected counts are computed from what the test wrote.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest
from cli_runner import run_cli

from evalkit.fixtures import load_fixture
from evalkit.importers import SourceDocument, SourceJudgment, SourceQuery, import_collection
from evalkit.importers.smart import QRELS_LAYOUTS, detect_qrels_layout

DOCUMENTS = """.I 1
.T
Tidal power stations
.A
Smith, A.
Jones, B.
.A
Brown, C.
.B
J. Ocean Eng. 12
.K
tides; energy
.C
engineering
.N
entered 1971
.W
The tide turns turbines twice a day.
.X
1\t5\t1
2\t1\t1
.I 2
.T
Wave energy converters of the oscillating kind
.I 3
.T
Sediment transport
.W
Rivers carry sand to the sea.
.Z
an unknown field
.I 4
"""

QUERIES = """.I 1
.T
Tides
.A
Someone, Q.
.W
How do tidal stations work?
.I 2
.W
Which devices convert waves?
.I 3
.W
How is sand carried?
"""

SECRET_METADATA = ("Smith, A.", "J. Ocean Eng. 12", "tides; energy", "entered 1971")


def write(root: pathlib.Path, qrels: str, queries: str = QUERIES) -> None:
    (root / "docs.all").write_text(DOCUMENTS, "utf-8")
    (root / "queries.qry").write_text(queries, "utf-8")
    (root / "judgments.rel").write_text(qrels, "utf-8")


def import_smart(root: pathlib.Path, *extra: str) -> tuple[int, str, str]:
    argv = [
        "import", "smart", "--documents", "docs.all", "--queries", "queries.qry",
        "--qrels", "judgments.rel", "--output", "fx", *extra,
    ]  # fmt: skip
    return run_cli(argv, root)


def judgments_of(root: pathlib.Path) -> dict[str, dict[str, int]]:
    fixture = load_fixture(root / "fx")
    return {q.id: {j.chunk_id: j.grade for j in q.judgments} for q in fixture.queries}


@pytest.mark.parametrize(
    ("qrels", "layout", "decision", "grades"),
    [
        ("1 1 2\n2 2 1\n3 3 3\n", "query-doc-grade", "judgments: query doc grade (", [2, 1, 3]),
        (
            "1 0 1 2\n2 0 2 1\n3 0 3 3\n",
            "query-0-doc-grade",
            "judgments: query 0 doc grade (TREC) (",
            [2, 1, 3],
        ),
        (
            "1     1\t0\t0.000000\n2 2\t0\t0.000000\n3 3\t0\t0.000000\n",
            "query-doc-binary",
            "judgments: query doc, binary: every listed pair relevant (",
            [1, 1, 1],
        ),
        ("1 1\n2 2\n3 3\n", "query-doc-binary", "binary: every listed pair relevant", [1, 1, 1]),
        ("1 1 0\n2 2 0\n3 3 0\n", "query-doc-binary", "binary", [1, 1, 1]),
    ],
)
def test_each_layout_is_detected_and_printed(
    tmp_path: pathlib.Path, qrels: str, layout: str, decision: str, grades: list[int]
) -> None:
    write(tmp_path, qrels)
    assert detect_qrels_layout(tmp_path / "judgments.rel").name == layout
    code, out, err = import_smart(tmp_path)
    assert code == 0, out + err
    assert decision in out
    assert "detected" in out.splitlines()[0]
    found = judgments_of(tmp_path)
    assert [found[q][d] for q, d in (("1", "1"), ("2", "2"), ("3", "3"))] == grades


def test_an_ambiguous_file_is_refused_naming_the_candidates(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "1 0 1 1\n")
    code, out, err = import_smart(tmp_path)
    assert code == 2, out + err
    assert "fit query-0-doc-grade and query-doc-binary" in err
    assert "--qrels-layout" in err
    assert not (tmp_path / "fx").exists()
    code, out, err = import_smart(tmp_path, "--qrels-layout", "query-0-doc-grade")
    assert code == 0, out + err
    assert "judgments: query 0 doc grade (TREC) (given by --qrels-layout)" in out


def test_a_forced_layout_reads_the_file_its_way(tmp_path: pathlib.Path) -> None:
    # detected as grades (column 3 holds 1 and 2); forced binary: every pair grade 1
    write(tmp_path, "1 1 2\n3 3 1\n")
    code, out, err = import_smart(tmp_path, "--qrels-layout", "query-doc-binary")
    assert code == 0, out + err
    assert judgments_of(tmp_path) == {"1": {"1": 1}, "3": {"3": 1}}
    code, out, err = import_smart(
        tmp_path, "--output", "fx2", "--qrels-layout", "query-0-doc-grade"
    )
    assert code == 2
    assert "judgments.rel line 1: 3 columns; the layout query-0-doc-grade has 4" in err


def test_mixed_column_counts_and_layoutless_files_are_refused(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "1 1 2\n2 0 2 1\n")
    code, _, err = import_smart(tmp_path)
    assert code == 2
    assert "3 columns (first on line 1), 4 columns (first on line 2)" in err
    write(tmp_path, "1 1 5 0\n2 2 7 0\n")  # column 2 varies, columns 3 and 4 not constant
    code, _, err = import_smart(tmp_path)
    assert code == 2
    assert "no judgment layout fits" in err
    assert "column 2 takes 2 values, so it is not TREC's iteration" in err
    assert set(QRELS_LAYOUTS) <= set(re.split(r"[\s,()]+", err))


def test_ids_differing_only_by_zero_padding_are_matched_and_reported(
    tmp_path: pathlib.Path,
) -> None:
    write(tmp_path, "01 0001 2\n2 02 1\n03 3 1\n")
    code, out, err = import_smart(tmp_path)
    assert code == 0, out + err
    assert "judgment IDs matched across zero-padding ('01' = '1'): queries 2, documents 2" in out
    # the fixture keeps the queries' and documents' own IDs
    assert judgments_of(tmp_path) == {"1": {"1": 2}, "2": {"2": 1}, "3": {"3": 1}}


def test_two_ids_with_one_unpadded_form_are_not_guessed(tmp_path: pathlib.Path) -> None:
    queries = QUERIES + ".I 01\n.W\nA second query numbered one?\n"
    write(tmp_path, "001 1 1\n3 3 1\n", queries=queries)
    code, out, err = import_smart(tmp_path)
    assert code == 0, out + err
    assert "dropped 1: judgment ID matches several IDs by zero-padding: 001 1" in out
    assert set(judgments_of(tmp_path)) == {"3"}


def test_judgments_numbering_queries_in_file_order_are_refused_without_query_ids(
    tmp_path: pathlib.Path,
) -> None:
    queries = QUERIES.replace(".I 2\n", ".I 5\n").replace(".I 3\n", ".I 9\n")
    write(tmp_path, "1 1 1\n2 2 1\n3 3 1\n", queries=queries)
    code, _, err = import_smart(tmp_path)
    assert code == 2
    assert "--query-ids order" in err
    assert "--query-ids as-written" in err
    assert not (tmp_path / "fx").exists()
    code, out, err = import_smart(tmp_path, "--query-ids", "order")
    assert code == 0, out + err
    assert set(judgments_of(tmp_path)) == {"1", "2", "3"}
    code, out, err = import_smart(tmp_path, "--query-ids", "as-written", "--output", "fx2")
    assert code == 0, out + err
    assert "dropped 2: judged query not in the queries: 2, 3" in out


def test_documents_titles_metadata_and_dropped_fields(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "1 1 1\n2 2 1\n3 3 1\n")
    code, out, err = import_smart(tmp_path)
    assert code == 0, out + err
    fixture = load_fixture(tmp_path / "fx")
    chunks = {c.document_id: c for c in fixture.chunks}
    # a title-only document is kept, its title its text; a record with neither is dropped
    assert chunks["2"].text == "Wave energy converters of the oscillating kind"
    assert "dropped 1: document text is empty: 4" in out
    assert (
        "documents read: 4: title and text 2, title only (kept, the title as text) 1, text "
        "only 0, neither 1"
    ) in out
    # metadata is counted by name (three authors in two .A fields), never printed
    assert (
        "document metadata read (never searched or printed in reports): author 3, categories "
        "1, keywords 1, notes 1, source 1"
    ) in out
    for value in SECRET_METADATA:
        assert value not in out + err
        assert all(value not in c.text and value not in c.title for c in fixture.chunks)
    # kept beside the fixture, only for imported documents; the fixture folder is unchanged
    sidecar = tmp_path / "fx.metadata.jsonl"
    rows = [json.loads(line) for line in sidecar.read_text("utf-8").splitlines()]
    assert rows == [
        {"document_id": "1", "field": "author", "value": "Smith, A."},
        {"document_id": "1", "field": "author", "value": "Jones, B."},
        {"document_id": "1", "field": "author", "value": "Brown, C."},
        {"document_id": "1", "field": "source", "value": "J. Ocean Eng. 12"},
        {"document_id": "1", "field": "keywords", "value": "tides; energy"},
        {"document_id": "1", "field": "categories", "value": "engineering"},
        {"document_id": "1", "field": "notes", "value": "entered 1971"},
    ]
    assert "document metadata kept beside the fixture (7 values of 1 documents" in out
    assert "fx.metadata.jsonl" in out
    assert (
        "fields not imported: .X citation triples in 1 records (2 lines of numbers); .Z in 1 "
        "records; query .A in 1 queries"
    ) in out
    # a query's .T joins its .W
    assert {q.id: q.text for q in fixture.queries}["1"] == "Tides How do tidal stations work?"
    assert "queries read: 3; .T joined before .W: 1" in out
    assert "grades as read: 1: 3; judged queries: 3" in out


def test_a_dropped_querys_judgments_are_counted(tmp_path: pathlib.Path) -> None:
    long_query = ".I 4\n.W\n" + "word " * 500 + "\n"
    write(tmp_path, "1 1 1\n4 1 1\n4 3 1\n", queries=QUERIES + long_query)
    code, out, err = import_smart(tmp_path)
    assert code == 0, out + err
    assert "dropped 2: judgment of a query not imported: 4 1, 4 3" in out
    assert "query text empty or over 2000 characters: 4" in out


def test_zero_padding_is_matched_for_every_format(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the format-free API: documents ``0005`` and ``7``, judgments of ``5`` and
    ``007``; a document value holding a credential is left out of the metadata, counted."""
    documents = [
        SourceDocument(id="0005", text="Harbour tides.", metadata=(("source", "Tide tables"),)),
        SourceDocument(id="7", text="River sand.", metadata=(("notes", "password=hunter2x9"),)),
    ]
    queries = [SourceQuery(id="q1", text="tides?"), SourceQuery(id="q2", text="sand?")]
    judgments = [SourceJudgment("q1", "5", 1), SourceJudgment("q2", "007", 2)]
    monkeypatch.chdir(tmp_path)
    summary = import_collection(
        documents, queries, judgments, "fx", fixture_name="fx", description="test"
    )
    assert summary.padded_ids == {"documents": 2}
    assert judgments_of(tmp_path) == {"q1": {"0005": 1}, "q2": {"7": 2}}
    assert summary.dropped == {"document metadata value holds a credential (left out)": ["7"]}
    rows = (tmp_path / "fx.metadata.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(row) for row in rows] == [
        {"document_id": "0005", "field": "source", "value": "Tide tables"}
    ]
