"""``evalkit import`` on damaged or unusual source files: one clear error (file, line, what to
fix) and exit 2, never a traceback, nothing left behind; a byte-order mark is no defect; no
message shows source text. The inputs are built by hand in each test."""

from __future__ import annotations

import gzip
import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import run_cli

DOCS = [{"doc_id": "d1", "text": "alpha beta"}, {"doc_id": "d2", "text": "gamma delta"}]
QUERIES = [{"query_id": "q1", "text": "alpha"}, {"query_id": "q2", "text": "gamma"}]


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "docs.jsonl").write_text(_jsonl(DOCS), encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(_jsonl(QUERIES), encoding="utf-8")
    (tmp_path / "judgments.csv").write_text("query_id,doc_id,grade\nq1,d1,2\nq2,d2,1\n", "utf-8")
    return tmp_path


def _table(
    workspace: pathlib.Path,
    documents: str = "docs.jsonl",
    judgments: str = "judgments.csv",
    queries: str = "queries.jsonl",
    extra: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """``evalkit import table`` of the workspace's files; ``extra``: more options."""
    argv = ["import", "table", "--documents", documents, "--queries", queries]
    argv += ["--judgments", judgments, "--judgment-grade", "grade", *extra]
    return run_cli([*argv, "--output", "out/fixture"], workspace)


def _refused(workspace: pathlib.Path, result: tuple[int, str, str], *expected: str) -> str:
    code, out, err = result
    assert code == 2, out + err
    assert "Traceback" not in err
    for part in expected:
        assert part in err, err
    assert not (workspace / "out").exists()  # nothing left behind, not even the parent
    return err


@pytest.mark.parametrize(
    ("grade", "found"), [("inf", "no number"), ("1e999", "no number"), ("0.5", "a fraction")]
)
def test_a_grade_must_be_a_whole_number(workspace: pathlib.Path, grade: str, found: str) -> None:
    (workspace / "bad.csv").write_text(f"query_id,doc_id,grade\nq1,d1,2\nq2,d2,{grade}\n", "utf-8")
    _refused(workspace, _table(workspace, judgments="bad.csv"), "bad.csv line 3", found)


def test_a_grade_written_as_a_whole_float_is_accepted(workspace: pathlib.Path) -> None:
    (workspace / "floats.csv").write_text("query_id,doc_id,grade\nq1,d1,2.0\nq2,d2,1\n", "utf-8")
    code, out, err = _table(workspace, judgments="floats.csv")
    assert code == 0, out + err


def test_beir_qrels_with_an_infinite_score(workspace: pathlib.Path) -> None:
    root = workspace / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(_jsonl([{"_id": "d1", "text": "alpha"}]), "utf-8")
    (root / "queries.jsonl").write_text(_jsonl([{"_id": "q1", "text": "alpha"}]), "utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tinf\n", "utf-8")
    result = run_cli(["import", "beir", "beir", "--output", "out/fixture"], workspace)
    _refused(workspace, result, "test.tsv line 2", "whole number")


@pytest.mark.parametrize("damage", ["not gzip", "truncated"])
def test_a_damaged_gzip_file(workspace: pathlib.Path, damage: str) -> None:
    data = gzip.compress(_jsonl(DOCS).encode("utf-8"))
    (workspace / "docs.jsonl.gz").write_bytes(b"hello\n" if damage == "not gzip" else data[:20])
    err = _refused(workspace, _table(workspace, documents="docs.jsonl.gz"), "docs.jsonl.gz line")
    assert "damaged or truncated" in err


def test_a_damaged_parquet_page(workspace: pathlib.Path) -> None:
    table = pa.table({"doc_id": [f"d{i}" for i in range(200)], "text": ["alpha"] * 200})
    pq.write_table(table, workspace / "docs.parquet", compression="snappy")
    data = bytearray((workspace / "docs.parquet").read_bytes())
    for i in range(8, 400):  # the first data page, after the 4-byte magic
        data[i] ^= 0x5A
    (workspace / "docs.parquet").write_bytes(bytes(data))
    _refused(workspace, _table(workspace, documents="docs.parquet"), "cannot be read as Parquet")


def test_bytes_that_are_not_utf8_are_named_by_their_line(workspace: pathlib.Path) -> None:
    (workspace / "latin1.csv").write_bytes(b"query_id,doc_id,grade\nq1,d\xe91,2\n")
    _refused(workspace, _table(workspace, judgments="latin1.csv"), "latin1.csv line 2", "UTF-8")


def test_an_open_quote_does_not_swallow_the_rows_after_it(workspace: pathlib.Path) -> None:
    (workspace / "docs.csv").write_text(
        'doc_id,text\nd1,"alpha one\nd2,beta two\nd3,gamma three\n', encoding="utf-8"
    )
    err = _refused(workspace, _table(workspace, documents="docs.csv"), "docs.csv lines 2-4")
    assert "beta two" not in err


def test_more_cells_than_the_header(workspace: pathlib.Path) -> None:
    (workspace / "docs.csv").write_text("doc_id,text\nd1,alpha\nd2,beta,extra\n", "utf-8")
    _refused(workspace, _table(workspace, documents="docs.csv"), "docs.csv line 3", "more cells")


def test_a_column_of_lists_or_floats_is_not_stringified(workspace: pathlib.Path) -> None:
    pq.write_table(
        pa.table({"doc_id": ["d1", "d2"], "text": [["a", "b"], ["alpha beta"]]}),
        workspace / "docs.parquet",
    )
    _refused(workspace, _table(workspace, documents="docs.parquet"), "column 'text'", "list")
    pq.write_table(pa.table({"doc_id": [1.0, 2.0], "text": ["a", "b"]}), workspace / "f.parquet")
    _refused(workspace, _table(workspace, documents="f.parquet"), "column 'doc_id'", "float")


def test_a_byte_order_mark_is_read_as_nothing(workspace: pathlib.Path) -> None:
    bom = "\ufeff"
    (workspace / "docs.jsonl").write_text(bom + _jsonl(DOCS), encoding="utf-8")
    (workspace / "judgments.csv").write_text(
        bom + "query_id,doc_id,grade\nq1,d1,2\nq2,d2,1\n", "utf-8"
    )
    code, out, err = _table(workspace)
    assert code == 0, out + err
    assert "2 queries" in out


def test_a_directory_given_as_a_file(workspace: pathlib.Path) -> None:
    (workspace / "judgments_dir.csv").mkdir()
    _refused(workspace, _table(workspace, judgments="judgments_dir.csv"), "is a directory")


def test_no_importable_query_is_an_error(workspace: pathlib.Path) -> None:
    (workspace / "other.csv").write_text("query_id,doc_id,grade\nq9,d9,2\n", "utf-8")
    _refused(workspace, _table(workspace, judgments="other.csv"), "no importable query")


def test_an_id_column_holding_text_shows_hashes_only(workspace: pathlib.Path) -> None:
    text = "A delivery address can be changed until the parcel leaves the depot. " * 3
    rows = [{"doc_id": text, "text": "x"}, *DOCS]
    (workspace / "docs.jsonl").write_text(_jsonl(rows), "utf-8")
    code, out, err = _table(workspace)
    assert code == 0, out + err
    assert "too long to map (hashes): sha256:" in out
    assert "delivery address" not in out + err


def test_a_document_whose_chunk_ids_are_taken_is_dropped(workspace: pathlib.Path) -> None:
    # 'a' splits into a#c0 and a#c1; a document named 'a#c0' would repeat a chunk ID
    docs = [
        {"doc_id": "a", "text": "first para alpha\n\nsecond para beta"},
        {"doc_id": "a#c0", "text": "gamma other doc"},
        *DOCS,
    ]
    (workspace / "docs.jsonl").write_text(_jsonl(docs), encoding="utf-8")
    code, out, err = _table(workspace, extra=("--size", "20"))
    assert code == 0, out + err
    assert "dropped 1: document's chunk IDs equal another document's: a#c0" in out
    code, out, err = run_cli(["validate", "out/fixture"], workspace)
    assert code == 0, out + err


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--version", "1.0"),
        ("--id", "bad id/x"),
        ("--language", "english!!"),
        ("--license", "not a license((("),
        # the pattern's form, but longer than the schema's 35 characters: refused, not written
        ("--language", "en-" + "-".join(["abcdefgh"] * 5)),
    ],
)
def test_fixture_metadata_options_are_checked_first(
    workspace: pathlib.Path, option: str, value: str
) -> None:
    _refused(workspace, _table(workspace, extra=(option, value)), "nothing was written")


def test_a_row_language_that_is_no_language_tag(workspace: pathlib.Path) -> None:
    rows = [{**DOCS[0], "language": "EN"}, DOCS[1]]
    (workspace / "docs.jsonl").write_text(_jsonl(rows), encoding="utf-8")
    result = _table(workspace, extra=("--doc-language", "language"))
    _refused(workspace, result, "document 'd1': its language (not shown) is not a BCP 47 tag")


def test_a_duplicate_query_after_a_dropped_copy_is_kept(workspace: pathlib.Path) -> None:
    queries = [{"query_id": "q1", "text": ""}, *QUERIES]
    (workspace / "queries.jsonl").write_text(_jsonl(queries), encoding="utf-8")
    code, out, err = _table(workspace)
    assert code == 0, out + err
    assert "2 queries" in out
    assert "appears twice" not in out


def test_trec_elements_anywhere_on_a_line_and_one_left_open(workspace: pathlib.Path) -> None:
    (workspace / "corpus.sgml").write_text(
        "<DOC><DOCNO>a</DOCNO><TEXT>alpha one</TEXT></DOC><DOC><DOCNO>b</DOCNO>"
        "<TEXT>beta two</TEXT></DOC>\n<doc>\n<DOCNO>c</DOCNO>\n<TEXT>gamma</TEXT>\n</DOC>\n",
        encoding="utf-8",
    )
    (workspace / "topics.txt").write_text(
        "<top> <num> 1 </num> <title> alpha </title> </top>\n"
        "<top>\n<num> Number: 2\n<title> beta\n</top><top><num>3<title>gamma</top>\n",
        encoding="utf-8",
    )
    (workspace / "qrels.txt").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n", encoding="utf-8")
    argv = ["import", "trec", "--qrels", "qrels.txt", "--topics", "topics.txt"]
    code, out, err = run_cli([*argv, "--corpus", "corpus.sgml", "--output", "fx"], workspace)
    assert code == 0, out + err
    from evalkit.fixtures import load_fixture

    fixture = load_fixture(workspace / "fx")
    assert [(c.id, c.text) for c in fixture.chunks] == [
        ("a", "alpha one"),
        ("b", "beta two"),
        ("c", "gamma"),
    ]
    assert [(q.id, q.text) for q in fixture.queries] == [
        ("1", "alpha"),
        ("2", "beta"),
        ("3", "gamma"),
    ]
    with (workspace / "corpus.sgml").open("a", encoding="utf-8") as handle:
        handle.write("<DOC>\n<DOCNO>d</DOCNO>\n<TEXT>delta\n")  # never closed
    result = run_cli([*argv, "--corpus", "corpus.sgml", "--output", "out/fixture"], workspace)
    _refused(workspace, result, "corpus.sgml line 6: a <DOC> is never closed")


def test_a_query_judged_only_non_relevant_is_dropped_not_made_no_answer(
    workspace: pathlib.Path,
) -> None:
    (workspace / "zeros.csv").write_text("query_id,doc_id,grade\nq1,d1,0\nq2,d2,2\n", "utf-8")
    code, out, err = _table(workspace, judgments="zeros.csv")
    assert code == 0, out + err
    assert "dropped 1: query has no relevant judgment (only grade 0): q1" in out
    from evalkit.fixtures import load_fixture

    fixture = load_fixture(workspace / "out" / "fixture")
    assert [(q.id, q.answerable) for q in fixture.queries] == [("q2", True)]
