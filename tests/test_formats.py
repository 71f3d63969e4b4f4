"""TREC qrels/run, JSON Lines run and BEIR readers and writers; the rules every run follows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.errors import FormatError, InputError
from evalkit.formats import (
    read_beir,
    read_qrels,
    read_run,
    read_run_file,
    write_qrels,
    write_run,
)
from evalkit.formats.rules import (
    NO_RESULTS,
    RUN_COLUMNS,
    duplicated_rows,
    duplicates_error,
    no_results_error,
    require_columns,
)
from evalkit.formats.runs import run_file_format

DATA = Path(__file__).parent / "data" / "trec_eval"


def test_reads_trec_eval_test_pair() -> None:
    qrels = read_qrels(DATA / "qrels.test")
    run = read_run(DATA / "results.test")  # tab separated, scores padded with spaces
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]
    assert list(run.columns) == ["query_id", "doc_id", "score", "rank"]
    assert (len(qrels), len(run)) == (3681, 1500)  # `wc -l` of the files
    assert [str(t) for t in run.dtypes] == ["str", "str", "float64", "int64"]
    first = run.iloc[0]  # first line: 301 Q0 FR940202-2-00150 104   2.129133 STANDARD
    assert (first["query_id"], first["doc_id"], first["score"], first["rank"]) == (
        "301",
        "FR940202-2-00150",
        2.129133,
        104,
    )


def test_run_without_its_rank_column(tmp_path: Path) -> None:
    full = read_run(DATA / "results.test")
    lean = read_run(DATA / "results.test", rank=False)
    pd.testing.assert_frame_equal(lean, full.drop(columns="rank"))
    # like trec_eval, which never reads it, rank=False does not check the rank field
    path = tmp_path / "r.txt"
    path.write_text("q Q0 d first 1.0 r\n")
    assert read_run(path, rank=False)["doc_id"].tolist() == ["d"]


@pytest.mark.parametrize("compress", [False, True])
def test_ids_stay_strings_with_comments_tabs_and_gzip(tmp_path: Path, compress: bool) -> None:
    text = "# a comment line\n001 0 007 2\n\n1\t0\t7\t0\n  01  0 x  -1\n"
    path = tmp_path / ("qrels.txt.gz" if compress else "qrels.txt")
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    qrels = read_qrels(path)
    assert qrels.values.tolist() == [["001", "007", 2], ["1", "7", 0], ["01", "x", -1]]
    assert str(qrels["query_id"].dtype) == "str"


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        ("q 0 d 1\nq 0 d\n", 2, "expected 4 whitespace-separated fields"),
        ("q 0 d 1\nq 0 e high\n", 2, "field relevance must be an integer"),
        ("q 0 d 1.5\n", 1, "field relevance must be an integer"),
    ],
)
def test_malformed_qrels_name_file_and_line(
    tmp_path: Path, content: str, line: int, fragment: str
) -> None:
    path = tmp_path / "q.txt"
    path.write_text(content)
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    assert (info.value.file, info.value.line) == (str(path), line)
    assert fragment in str(info.value)
    assert "high" not in str(info.value)  # never quotes the file's content


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        ("q Q0 d 1 1.0 r\nq Q0 e 2 1.0\n", 2, "expected 6 whitespace-separated fields"),
        ("q Q0 d 1 1.0 r\nq Q0 e 2 NA r\n", 2, "field score must be a number"),
        ("q Q0 d 1 nan r\n", 1, "field score is NaN"),
        ("q Q0 d first 1.0 r\n", 1, "field rank must be an integer"),
        (b"q Q0 \xff 1 1.0 r\n", 1, "not valid UTF-8"),
    ],
)
def test_malformed_runs_name_file_and_line(
    tmp_path: Path, content: str | bytes, line: int, fragment: str
) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert (info.value.file, info.value.line) == (str(path), line)
    assert fragment in str(info.value)


def test_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="file not found"):
        read_run(tmp_path / "nope.txt")


@pytest.mark.parametrize("name", ["run.txt", "run.txt.gz"])
def test_run_round_trip(tmp_path: Path, name: str) -> None:
    run = pd.DataFrame(
        {
            "query_id": ["q2", "001", "001"],
            "doc_id": ["a", "b", "c"],
            "score": [0.1, 1.000000001, 1.000000001],
        }
    )
    write_run(run, tmp_path / name, run_id="sys1")
    back = read_run(tmp_path / name)
    # rows by query, then trec order (score desc, doc ID desc) with ranks 1..n
    assert back.values.tolist() == [
        ["001", "c", 1.000000001, 1],
        ["001", "b", 1.000000001, 2],
        ["q2", "a", 0.1, 1],
    ]
    if name.endswith(".txt"):
        assert (tmp_path / name).read_text().splitlines()[0] == "001 Q0 c 1 1.000000001 sys1"


def test_qrels_round_trip_and_bad_ids(tmp_path: Path) -> None:
    qrels = pd.DataFrame({"query_id": ["001", "2"], "doc_id": ["x", "y"], "relevance": [3, -1]})
    write_qrels(qrels, tmp_path / "q.txt")
    pd.testing.assert_frame_equal(
        read_qrels(tmp_path / "q.txt"), qrels.astype({"query_id": "str", "doc_id": "str"})
    )
    with pytest.raises(InputError, match="contains whitespace"):
        write_qrels(qrels.assign(doc_id=["x y", "z"]), tmp_path / "bad.txt")


def _write_beir(root: Path, *, compress_corpus: bool = False) -> None:
    (root / "qrels").mkdir(parents=True)
    corpus = "\n".join(
        json.dumps(r)
        for r in [{"_id": "001", "title": "T", "text": "alpha"}, {"_id": 7, "text": "beta"}]
    )
    if compress_corpus:
        (root / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus.encode()))
    else:
        (root / "corpus.jsonl").write_text(corpus + "\n")
    (root / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "what", "metadata": {}}) + "\n"
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t001\t2\nq1\t7\t0\n")


@pytest.mark.parametrize("compress", [False, True])
def test_read_beir(tmp_path: Path, compress: bool) -> None:
    _write_beir(tmp_path, compress_corpus=compress)
    corpus, queries, qrels = read_beir(tmp_path)
    assert corpus.values.tolist() == [["001", "T", "alpha"], ["7", "", "beta"]]
    assert queries.values.tolist() == [["q1", "what"]]
    assert qrels.values.tolist() == [["q1", "001", 2], ["q1", "7", 0]]
    assert [str(t) for t in qrels.dtypes] == ["str", "str", "int64"]


def test_beir_errors_name_file_line_and_split(tmp_path: Path) -> None:
    _write_beir(tmp_path)
    with pytest.raises(FormatError, match="no qrels for split 'dev'; available splits: test"):
        read_beir(tmp_path, split="dev")
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "ok"}\n{"_id": "q2", "text": 5}\n'
    )
    with pytest.raises(FormatError) as info:
        read_beir(tmp_path)
    assert (info.value.line, "field text must be a string ([q2])" in str(info.value)) == (2, True)
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "secret words"\n')
    with pytest.raises(FormatError, match="not a valid JSON object") as info:
        read_beir(tmp_path)
    assert "secret" not in str(info.value)


# --- run files in either text format, and the rules every run follows ------------------------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("run.trec", b"q Q0 d 1 1.0 r\n", "trec"),
        ("run.jsonl", b"", "jsonl"),  # the name decides, before any byte is read
        ("run.ndjson.gz", b"", "jsonl"),
        ("run.txt", b'\xef\xbb\xbf \n\n {"query_id": "q"}\n', "jsonl"),  # BOM, blank lines
        ("run.bin", gzip.compress(b'\n{"query_id": "q"}\n', mtime=0), "jsonl"),
        ("run.bin.gz", gzip.compress(b"q Q0 d 1 1.0 r\n", mtime=0), "trec"),
        ("empty", b"", "trec"),
    ],
)
def test_run_file_format_by_name_then_first_character(
    tmp_path: Path, name: str, content: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert run_file_format(path) == expected


def test_run_file_format_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="file not found"):
        run_file_format(tmp_path / "absent.trec")
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b\x08 not gzip")
    with pytest.raises(FormatError, match="is not valid gzip"):
        run_file_format(tmp_path / "bad.gz")


def test_read_run_file_gives_one_frame_for_both_formats(tmp_path: Path) -> None:
    trec = tmp_path / "run.trec"
    trec.write_text("q1 Q0 d2 7 0.5 r\nq1 Q0 d1 3 0.5 r\n", encoding="utf-8")
    jsonl = tmp_path / "run.jsonl"
    rows = [{"query_id": "q1", "chunk_id": "d2", "score": 0.5, "extra": 1}]
    rows.append({"query_id": "q1", "chunk_id": "d1", "score": 0.5})
    jsonl.write_text("\n" + "\n\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    from_trec, from_jsonl = read_run_file(trec), read_run_file(jsonl)
    assert list(from_trec.columns) == list(from_jsonl.columns)
    assert list(from_trec.columns) == ["query_id", "doc_id", "score", "order"]
    assert [str(t) for t in from_jsonl.dtypes] == ["str", "str", "float64", "int64"]
    assert from_trec["order"].tolist() == [7, 3]  # the rank as written
    assert from_jsonl["order"].tolist() == [2, 4]  # the line numbers
    pd.testing.assert_frame_equal(from_trec.drop(columns="order"), from_jsonl.drop(columns="order"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "is not valid JSON"),
        ("[1]", "expected an object, found list"),
        ('{"chunk_id": "d", "score": 1}', "'query_id' should be a string"),
        ('{"query_id": "q", "chunk_id": true, "score": 1}', "'chunk_id' should be a string"),
        ('{"query_id": "q", "chunk_id": "d", "score": "1"}', "'score' should be a finite"),
        ('{"query_id": "q", "chunk_id": "d", "score": NaN}', "'score' should be a finite"),
    ],
)
def test_malformed_jsonl_runs_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q", "chunk_id": "c", "score": 1}\n' + line + "\n", "utf-8")
    with pytest.raises(FormatError, match=f"run.jsonl:2: {message}") as caught:
        read_run_file(path)
    assert caught.value.line == 2


def test_duplicates_are_one_rule_in_one_message() -> None:
    run = pd.DataFrame(
        {"query_id": ["a", "b", "a", "b", "a"], "doc_id": ["d1", "d2", "d3", "d1", "d3"]}
    )
    rows = duplicated_rows(run)
    assert rows.tolist() == [2, 4]  # every occurrence of the pair listed twice
    pairs = (run["query_id"].iloc[rows].tolist(), run["doc_id"].iloc[rows].tolist())
    error = duplicates_error("run", "lists", pairs, int(rows[0]), "remove them")
    assert isinstance(error, InputError)
    assert str(error) == (
        "run lists doc 'd3' more than once for query 'a' (1 duplicated (query, doc) pair(s) "
        "in all, first at row 2, counting from 0); remove them"
    )
    assert duplicated_rows(run.iloc[:4]).size == 0


def test_a_run_without_results_is_refused_in_the_engines_words() -> None:
    error = no_results_error("run.trec")
    assert isinstance(error, FormatError)
    assert str(error) == f"run.trec: {NO_RESULTS}"
    with pytest.raises(InputError, match="run is missing column"):
        require_columns(pd.DataFrame({"query_id": []}), "run", RUN_COLUMNS)
