"""``evalkit import``: BEIR, TREC and tables round-trip through ``evalkit validate``; IDs;
chunking (property tests); judgments and answer spans moved to chunks; the summary.

Expected values are written by hand from the small inputs built in each test.
"""

from __future__ import annotations

import json
import os
import pathlib
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import run_cli
from hypothesis import HealthCheck, given, settings, strategies as st

from evalkit.errors import InputError
from evalkit.fixtures import load_fixture
from evalkit.fixtures.chunking import ChunkingPolicy, chunk_offsets, spans_in_chunk
from evalkit.fixtures.schema import ID_PATTERN
from evalkit.importers import (
    SourceDocument,
    SourceJudgment,
    SourceQuery,
    fixture_id,
    import_collection,
    locate_answer,
    original_id,
)

LONG_PARAGRAPH = "Paragraph words repeat here. " * 200  # 5,800 characters


def validate(workspace: pathlib.Path, fixture: str) -> str:
    code, out, err = run_cli(["validate", fixture], workspace)
    assert code == 0, out + err
    return out


def write_jsonl(path: pathlib.Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


# --- BEIR ---------------------------------------------------------------------------------------


@pytest.fixture
def beir_folder(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "collection"
    (root / "qrels").mkdir(parents=True)
    write_jsonl(
        root / "corpus.jsonl",
        [
            {"_id": "12#3", "title": "Miracl", "text": "Short passage about tides."},
            {"_id": "msmarco_v2.1_doc_00_0#3_1", "title": "", "text": "A segment of a doc."},
            {"_id": "long/doc 1", "title": "Long", "text": f"Intro.\n\n{LONG_PARAGRAPH}"},
            {"_id": "blank", "title": "x", "text": "  "},
        ],
    )
    write_jsonl(
        root / "queries.jsonl",
        [
            {"_id": "q1", "text": "what about tides"},
            {"_id": "q 2", "text": "segment"},
            {"_id": "q3", "text": "not judged"},
        ],
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        "q1\t12#3\t2\n"
        "q1\tlong/doc 1\t1\n"
        "q 2\tmsmarco_v2.1_doc_00_0#3_1\t4\n"
        "q 2\tblank\t1\n",
        encoding="utf-8",
    )
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq3\t12#3\t1\n", "utf-8")
    return root


def test_beir_import_round_trips_through_validate(
    beir_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    argv = ["import", "beir", "collection", "--output", "fx", "--size", "2000", "--id", "mine"]
    code, _, err = run_cli(argv, tmp_path)
    # the source's grade 4 is refused, named, until a map says what it means
    assert code == 2
    assert "grades above 3: 4 (1 judgments)" in err
    assert "--grade-map" in err
    assert not (tmp_path / "fx").exists()
    code, out, err = run_cli([*argv, "--grade-map", "4:3"], tmp_path)
    assert code == 0, out + err
    assert "mine 1.0.0: valid — 3 documents" in validate(tmp_path, "fx")
    fixture = load_fixture(tmp_path / "fx")
    ids = {c.id for c in fixture.chunks}
    assert {"12#3", "msmarco_v2.1_doc_00_0#3_1"} <= ids  # real IDs unchanged
    mapped = fixture_id("long/doc 1")
    assert mapped == "x~long~2Fdoc~201"
    long_chunks = [c for c in fixture.chunks if c.document_id == mapped]
    # "Intro.", then the 5,800-character paragraph in windows of <= 2,000 characters that
    # overlap by 200 (size // 10): about 0-2000, 1800-3800, 3600-5600, 5400-5800
    assert len(long_chunks) == 5
    assert all(len(c.text) <= 2000 for c in long_chunks)
    assert fixture.meta.chunking is not None
    assert fixture.meta.chunking.model_dump() == {"mode": "paragraphs", "size": 2000, "overlap": 0}
    q1 = fixture.query("q1")
    # a document-level judgment: every chunk of the long document gets its grade
    assert {(j.chunk_id, j.grade) for j in q1.judgments} == {("12#3", 2)} | {
        (c.id, 1) for c in long_chunks
    }
    q2 = fixture.query(fixture_id("q 2") or "")
    assert [(j.chunk_id, j.grade) for j in q2.judgments] == [("msmarco_v2.1_doc_00_0#3_1", 3)]
    # summary: IDs and counts, never text
    assert "grades mapped by --grade-map: 1" in out
    assert fixture.meta.grade_map == "4:3"
    assert "dropped 1: document text is empty: blank" in out
    assert "dropped 1: query has no judgment of an imported document: q3" in out
    assert "tides" not in out
    assert "Paragraph" not in out


def test_beir_split_and_existing_output(beir_folder: pathlib.Path, tmp_path: pathlib.Path) -> None:
    code, _, _ = run_cli(
        ["import", "beir", "collection", "--split", "dev", "--output", "d"], tmp_path
    )
    assert code == 0
    assert [q.id for q in load_fixture(tmp_path / "d").queries] == ["q3"]
    code, _, err = run_cli(["import", "beir", "collection", "--output", "d"], tmp_path)
    assert code == 2
    assert "already exists and is not an empty directory" in err
    code, _, err = run_cli(["import", "beir", "collection", "--output", "/tmp/abs"], tmp_path)
    assert code == 2
    code, _, err = run_cli(
        ["import", "beir", "collection", "--split", "x", "--output", "e"], tmp_path
    )
    assert code == 2
    assert "no qrels/x.tsv; its splits: dev, test; pick one with --split" in err
    argv = ["import", "beir", "collection/corpus.jsonl", "--output", "e"]
    code, _, err = run_cli(argv, tmp_path)
    assert code == 2
    assert "'corpus.jsonl' is a file; expected the BEIR folder" in err


def test_chunking_none_refuses_a_long_document_with_its_id(
    beir_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    argv = ["import", "beir", "collection", "--output", "n", "--chunking", "none", "--size", "100"]
    argv += ["--grade-map", "4:3"]
    code, _, err = run_cli(argv, tmp_path)
    assert code == 2
    assert "document 'x~long~2Fdoc~201': a document of" in err
    assert "Traceback" not in err
    assert not (tmp_path / "n").exists()  # a failed import leaves nothing behind
    assert [p.name for p in tmp_path.iterdir()] == ["collection"]


# --- TREC ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["sgml+top", "jsonl+tsv"])
def test_trec_import_round_trips_through_validate(layout: str, tmp_path: pathlib.Path) -> None:
    (tmp_path / "qrels.txt").write_text(
        "301 0 FBIS3-10082 1\n301 0 LA010189-0001 0\n302 0 FBIS3-10082 2\n", "utf-8"
    )
    if layout == "sgml+top":
        (tmp_path / "corpus.sgml").write_text(
            "<DOC>\n<DOCNO> FBIS3-10082 </DOCNO>\n<HEADLINE>Harbour news</HEADLINE>\n"
            "<TEXT>\nShips arrived in the harbour.\n</TEXT>\n</DOC>\n"
            "<DOC>\n<DOCNO>LA010189-0001</DOCNO>\n<TEXT>Weather report.</TEXT>\n</DOC>\n",
            "utf-8",
        )
        (tmp_path / "topics.txt").write_text(
            "<top>\n<num> Number: 301\n<title> harbour ships\n\n<desc> Description:\nShips.\n"
            "</top>\n\n<top>\n<num> Number: 302\n<title> news\n</top>\n",
            "utf-8",
        )
        corpus, topics = "corpus.sgml", "topics.txt"
    else:
        write_jsonl(
            tmp_path / "corpus.jsonl",
            [
                {"id": "FBIS3-10082", "title": "Harbour news", "contents": "Ships arrived."},
                {"docno": "LA010189-0001", "text": "Weather report."},
            ],
        )
        (tmp_path / "topics.tsv").write_text("301\tharbour ships\n302\tnews\n", "utf-8")
        corpus, topics = "corpus.jsonl", "topics.tsv"
    argv = ["import", "trec", "--qrels", "qrels.txt", "--topics", topics, "--corpus", corpus]
    code, out, err = run_cli([*argv, "--output", "t"], tmp_path)
    assert code == 0, out + err
    validate(tmp_path, "t")
    fixture = load_fixture(tmp_path / "t")
    assert [d.id for d in fixture.documents] == ["FBIS3-10082", "LA010189-0001"]
    assert fixture.query("301").text == "harbour ships"
    assert [(j.chunk_id, j.grade) for j in fixture.query("301").judgments] == [
        ("FBIS3-10082", 1),
        ("LA010189-0001", 0),
    ]
    if layout == "sgml+top":
        assert fixture.document("FBIS3-10082").title == "Harbour news"
        assert fixture.chunk("FBIS3-10082").text.strip() == "Ships arrived in the harbour."


# --- tables -------------------------------------------------------------------------------------


def test_table_import_locates_answers_as_verbatim_spans(tmp_path: pathlib.Path) -> None:
    (tmp_path / "docs.csv").write_text(
        "doc,body,heading\n"
        'd1,"The ferry leaves at 08:15 from Pier 3.\n\nTickets cost 4 euros.",Ferry\n'
        "d2,Library opens at nine.,Library\n",
        encoding="utf-8",
    )
    write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {"qid": "q-ferry", "question": "When does the ferry leave?"},
            {"qid": "q-price", "question": "What does a ticket cost?"},
            {"qid": "q-lib", "question": "When does the library open?"},
        ],
    )
    judgments = pa.table(
        {
            "qid": ["q-ferry", "q-price", "q-lib"],
            "doc": ["d1", "d1", "d2"],
            "grade": [3, 2, 3],
            "answers": [["at 08:15"], ["4 EUROS"], ["at 10"]],
        }
    )
    pq.write_table(judgments, tmp_path / "judgments.parquet")
    argv = ["import", "table", "--documents", "docs.csv", "--queries", "queries.jsonl"]
    argv += ["--judgments", "judgments.parquet", "--doc-id", "doc", "--doc-text", "body"]
    argv += ["--doc-title", "heading", "--query-id", "qid", "--query-text", "question"]
    argv += ["--judgment-query", "qid", "--judgment-doc", "doc", "--judgment-grade", "grade"]
    argv += ["--judgment-answers", "answers", "--chunking", "paragraphs", "--size", "40"]
    code, out, err = run_cli([*argv, "--output", "tb"], tmp_path)
    assert code == 0, out + err
    validate(tmp_path, "tb")
    fixture = load_fixture(tmp_path / "tb")
    assert [c.id for c in fixture.chunks] == ["d1#c0", "d1#c1", "d2"]
    [ferry] = fixture.query("q-ferry").judgments
    assert (ferry.chunk_id, ferry.grade) == ("d1#c0", 3)  # only the chunk holding the answer
    assert [(s.text, s.start, s.end) for s in ferry.spans] == [("at 08:15", 17, 25)]
    [price] = fixture.query("q-price").judgments
    assert price.chunk_id == "d1#c1"
    assert [s.text for s in price.spans] == ["4 euros"]  # matched ignoring case, text verbatim
    # "at 10" is not in d2: the judgment covers the whole document, and the summary says so
    [library] = fixture.query("q-lib").judgments
    assert (library.chunk_id, library.spans) == ("d2", ())
    assert "answers not found in their document (1 judgments" in out
    assert "queries: q-lib" in out


def test_locate_answer() -> None:
    assert locate_answer("a b a b", "a b") == [(0, 3), (4, 7)]
    assert locate_answer("Pier  Three", "pier three") == [(0, 11)]
    assert locate_answer("anything", "  ") == []


# --- IDs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw", ["12#3", "msmarco_v2.1_doc_00_0#3_1", "FBIS3-10082", "clueweb09-en0000-00-00000"]
)
def test_real_collection_ids_are_kept(raw: str) -> None:
    assert fixture_id(raw) == raw


@pytest.mark.parametrize(
    ("raw", "mapped"),
    [
        ("a/b", "x~a~2Fb"),
        ("../etc", "x~~2E.~2Fetc"),  # a first "." is escaped, the second is safe
        ("q 1", "x~q~201"),
        ("文档1", "x~~E6~96~87~E6~A1~A31"),
        ("x~y", "x~x~7Ey"),
        ("_lead", "x~~5Flead"),
        (":", "x~~3A"),
        ("a\udc80", "x~a~80"),  # a byte decoded with surrogateescape maps back to it
    ],
)
def test_other_ids_are_mapped_reversibly(raw: str, mapped: str) -> None:
    assert fixture_id(raw) == mapped
    assert original_id(mapped) == raw


def test_a_lone_surrogate_has_no_fixture_id() -> None:
    assert fixture_id("a\ud800") is None  # no byte stands for it: not an ID, not a traceback


@given(st.text(min_size=1, max_size=40))
def test_id_mapping_round_trips_and_is_always_a_valid_id(raw: str) -> None:
    mapped = fixture_id(raw)
    if mapped is None:
        assert len(raw.encode("utf-8")) * 3 + 2 > 128
        return
    assert re.fullmatch(ID_PATTERN, mapped)
    assert original_id(mapped) == raw


def test_too_long_ids_are_dropped_not_truncated() -> None:
    assert fixture_id("/" * 50) is None
    assert fixture_id("a" * 129) is None


# --- chunking: property tests -------------------------------------------------------------------


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A text of unique words (``w<i><letters>``) in paragraphs, and word-aligned spans, so
    every span and every chunk of 20+ characters has exactly one position in the text."""
    suffixes = draw(st.lists(st.sampled_from(["", "x", "yz", "zzx"]), min_size=1, max_size=80))
    count = len(suffixes)
    words = [f"w{i}{suffix}" for i, suffix in enumerate(suffixes)]
    separator = st.sampled_from([" ", " ", "  ", "\n", "\n\n", "\n \n"])
    separators = draw(st.lists(separator, min_size=count, max_size=count))
    text, starts, ends = "", [], []
    for word, separator in zip(words, separators, strict=True):
        starts.append(len(text))
        text += word
        ends.append(len(text))
        text += separator
    spans = []
    for _ in range(draw(st.integers(0, 6))):
        first = draw(st.integers(0, count - 1))
        last = draw(st.integers(first, min(count - 1, first + 3)))
        spans.append((starts[first], ends[last]))
    return text, sorted(set(spans))


policies = st.one_of(
    st.builds(
        ChunkingPolicy,
        st.just("characters"),
        st.integers(20, 200),
        st.integers(0, 19),
    ),
    st.builds(ChunkingPolicy, st.just("paragraphs"), st.integers(20, 200), st.integers(0, 2)),
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), policies)
def test_chunks_are_verbatim_bounded_and_cover_the_text(
    document: tuple[str, list[tuple[int, int]]], policy: ChunkingPolicy
) -> None:
    text, _ = document
    offsets = chunk_offsets(text, policy)
    assert offsets == sorted(offsets)
    assert all(0 <= s < e <= len(text) and e - s <= policy.size for s, e in offsets)
    covered = set().union(*(range(s, e) for s, e in offsets))
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=documents(), policy=policies)
def test_every_span_lands_verbatim_in_exactly_the_chunks_that_contain_it(
    document: tuple[str, list[tuple[int, int]]],
    policy: ChunkingPolicy,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    text, spans = document
    workspace = tmp_path_factory.mktemp("prop")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(workspace)
        import_collection(
            [SourceDocument("doc", text, "Title")],
            [SourceQuery("q", "the query")],
            [SourceJudgment("q", "doc", 2, spans=tuple(spans))],
            "fx",
            fixture_name="prop",
            description="Property test fixture.",
            policy=policy,
        )
    fixture = load_fixture(workspace / "fx")
    # Where each chunk sits in the text, found by search (words are unique, chunks verbatim).
    position: dict[str, int] = {}
    previous = 0
    for chunk in fixture.chunks:
        previous = text.index(chunk.text, previous)
        position[chunk.id] = previous
    landed: dict[tuple[int, int], set[str]] = {}
    for judgment in fixture.query("q").judgments:
        for span in judgment.spans:
            assert span.start is not None
            assert span.end is not None
            chunk = fixture.chunk(judgment.chunk_id)
            assert chunk.text[span.start : span.end] == span.text  # verbatim
            where = (position[chunk.id] + span.start, position[chunk.id] + span.end)
            assert text[where[0] : where[1]] == span.text
            landed.setdefault(where, set()).add(chunk.id)
    for start, end in spans:
        containing = {
            c.id
            for c in fixture.chunks
            if position[c.id] <= start and end <= position[c.id] + len(c.text)
        }
        assert landed.get((start, end), set()) == containing


def test_spans_in_chunk_is_containment() -> None:
    assert spans_in_chunk([(0, 3), (2, 8), (5, 10)], (2, 10)) == [(0, 6), (3, 8)]


def test_policy_errors() -> None:
    with pytest.raises(InputError, match="overlap"):
        ChunkingPolicy("characters", 10, 10)
    with pytest.raises(InputError, match="mode"):
        ChunkingPolicy("sentences", 10, 0)  # type: ignore[arg-type]


def test_chunking_changes_the_definition_hash(
    beir_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    from evalkit.run import evaluate

    hashes = []
    for size in ("2000", "3000"):
        out = f"fx{size}"
        argv = ["import", "beir", "collection", "--output", out, "--size", size, "--id", "same"]
        argv += ["--grade-map", "4:3"]
        assert run_cli(argv, tmp_path)[0] == 0
        report = evaluate(load_fixture(tmp_path / out), ["lexical"], repeats=1).to_report()
        hashes.append(report["evaluationDefinitionHash"])
    assert hashes[0] != hashes[1]


def test_python_beir_reader_gives_evalkit_errors_not_validation_errors(
    tmp_path: pathlib.Path,
) -> None:
    from evalkit.errors import FixtureError
    from evalkit.fixtures.beir import fixture_from_beir

    root = tmp_path / "b"
    (root / "qrels").mkdir(parents=True)
    write_jsonl(
        root / "corpus.jsonl",
        [
            {"_id": "12#3", "title": "", "text": "fine"},
            {"_id": "has space", "title": "", "text": "bad id"},
            {"_id": "long", "title": "", "text": "x" * 20_001},
        ],
    )
    write_jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "q"}])
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t12#3\t1\n", "utf-8")
    with pytest.raises(FixtureError) as caught:
        fixture_from_beir(root)
    message = str(caught.value)
    assert "evalkit import beir" in message
    assert "has space" not in message  # an unsafe ID is not echoed
    assert "long" in message  # the over-long document is named
    assert {p.field for p in caught.value.problems} == {"id", "text"}


def test_awkward_text_round_trips_verbatim(tmp_path: pathlib.Path) -> None:
    text = 'He said: "no" \\ # - [x] {y} \u2028 line\u2029 tab\tend \ufeff 文字 \x85 é\n- item'
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        import_collection(
            [SourceDocument("d", text, "Title: # x")],
            [SourceQuery("q", "query")],
            [SourceJudgment("q", "d", 1)],
            "fx",
            fixture_name="awkward",
            description="Awkward characters.",
        )
    fixture = load_fixture(tmp_path / "fx")
    # U+0085 is a C1 control character: it becomes a space, everything else is kept
    assert fixture.chunk("d").text == text.replace("\x85", " ")
    assert fixture.document("d").title == "Title: # x"


def test_a_250_character_output_name_imports(
    beir_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """Issue 49: the staging folder was ``.<name>.<random>``, over the 255-byte name limit for a
    250-character output (a raw OSError); it is now named by the process, in .evalkit-staging."""
    name = "x" * 250
    code, _, err = run_cli(
        ["import", "beir", "collection", "--split", "dev", "--output", f"out/{name}"], tmp_path
    )
    # its dropped-objects table (<name>.dropped.tsv) is over the limit: refused by the path rule
    assert code == 2, err
    assert "the file name is 262 bytes long; expected at most 255 bytes" in err
    assert not (tmp_path / "out").exists()  # nothing left: no staging, no reserved folder
    code, _, err = run_cli(
        ["import", "beir", "collection", "--split", "dev", "--output", f"out/{name[:240]}"],
        tmp_path,
    )
    assert code == 0, err


def test_the_staging_container_is_git_ignored_and_goes_with_its_last_folder(
    tmp_path: pathlib.Path,
) -> None:
    from evalkit.safety.scratch import STAGING_FOLDER, remove_staging, staging_dir

    first = staging_dir(tmp_path, [])
    second = staging_dir(tmp_path, [])
    container = tmp_path / STAGING_FOLDER
    assert (container / ".gitignore").read_text(encoding="utf-8") == "*\n"
    remove_staging(first)
    assert sorted(p.name for p in container.iterdir()) == [".gitignore", second.name]
    remove_staging(second)
    assert list(tmp_path.iterdir()) == []


def test_a_killed_imports_staging_folder_is_swept_by_the_next_import(
    beir_folder: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    import subprocess

    from evalkit.safety.scratch import STAGING_FOLDER

    (tmp_path / "out").mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()  # a PID that is gone (its start time does not matter once it is gone)
    host = os.path.basename(str(staging_dir_of(tmp_path / "out"))).split("-")[0]
    left = tmp_path / "out" / STAGING_FOLDER / f"{host}-{dead.pid}-1-x_y8"
    left.mkdir(parents=True)
    (left / "chunks.parquet").write_bytes(b"partial")
    code, _, err = run_cli(
        ["import", "beir", "collection", "--split", "dev", "--output", "out/f"], tmp_path
    )
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["f", "f.dropped.tsv"]


def staging_dir_of(parent: pathlib.Path) -> pathlib.Path:
    from evalkit.safety.scratch import remove_staging, staging_dir

    folder = staging_dir(parent, [])
    remove_staging(folder)
    return folder
