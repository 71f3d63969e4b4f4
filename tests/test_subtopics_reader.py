"""The subtopic qrels reader and ``evalkit trec-eval --subtopic-qrels`` (bad lines: the
``tests/malformed/subtopics-*`` cases)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from cli_runner import run_cli
from oracles import pyndeval_values, run_frame
from trec_eval_oracle import measure_arguments, read_trec_eval_output

from evalkit.errors import FormatError
from evalkit.formats import read_subtopic_qrels

# ir_measures' test/test_pyndeval.py data: qrels with two subtopics per query
SUBTOPICS = (
    "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 1 D2 1\n0 1 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 1 D5 2\n"
)
RUN = (
    "0 Q0 D0 1 0.8 run\n0 Q0 D2 2 0.7 run\n0 Q0 D1 3 0.3 run\n0 Q0 D3 4 0.4 run\n"
    "0 Q0 D4 5 0.1 run\n1 Q0 D1 1 0.8 run\n1 Q0 D3 2 0.7 run\n1 Q0 D4 3 0.3 run\n"
    "1 Q0 D2 4 0.4 run\n"
)


def test_reads_columns_as_strings_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "sub.txt"
    path.write_text("# comment\n007\t01 d1  1\n\n007 2 d1 -1\r\n")
    frame = read_subtopic_qrels(path)
    assert list(frame.columns) == ["query_id", "subtopic", "doc_id", "relevance"]
    assert frame.to_dict("list") == {
        "query_id": ["007", "007"],
        "subtopic": ["01", "2"],
        "doc_id": ["d1", "d1"],
        "relevance": [1, -1],
    }
    assert str(frame["relevance"].dtype) == "int64"


def test_fast_and_line_readers_agree(tmp_path: Path) -> None:
    clean, messy = tmp_path / "clean.txt", tmp_path / "messy.txt.gz"
    clean.write_text(SUBTOPICS)
    messy.write_bytes(gzip.compress(("# header\n" + SUBTOPICS.replace(" ", "\t", 3)).encode()))
    pd.testing.assert_frame_equal(read_subtopic_qrels(clean), read_subtopic_qrels(messy))


def test_duplicate_found_by_the_fast_reader_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "sub.txt"
    path.write_text("q 1 a 1\nq 1 b 1\nq 2 a 1\nq 1 b 0\n")
    with pytest.raises(FormatError, match=r"sub\.txt:4: judges the same .* as line 2"):
        read_subtopic_qrels(path)


def test_cli_prints_ir_measures_values(tmp_path: Path) -> None:
    (tmp_path / "sub.txt").write_text(SUBTOPICS)
    (tmp_path / "run.txt").write_text(RUN)
    # the ordinary qrels: each doc at its best grade over the subtopics
    best: dict[tuple[str, str], int] = {}
    for line in SUBTOPICS.splitlines():
        q, _, d, r = line.split()
        best[q, d] = max(best.get((q, d), -1), int(r))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for (q, d), r in best.items()))
    measures = ["ERR_IA@20", "alpha_nDCG@10", "NRBP", "AP_IA", "P_IA@5", "StRecall@10"]
    args = ["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-q"]
    args += [*measure_arguments(measures), "--subtopic-qrels", str(tmp_path / "sub.txt")]
    code, out, _ = run_cli(args, tmp_path)
    assert code == 0
    printed = {key: float(value) for key, value in read_trec_eval_output(out).items()}
    # the oracle: ir_measures' pyndeval provider on the same files (ranked by score; this
    # run has no tied scores), one measure per call
    qrels = pd.DataFrame(
        [line.split() for line in SUBTOPICS.splitlines()],
        columns=["query_id", "iteration", "doc_id", "relevance"],
    ).astype({"relevance": int})
    run = run_frame(
        (q, d, float(s)) for q, _, d, _, s, _ in (line.split() for line in RUN.splitlines())
    )
    for (query, m), value in pyndeval_values(measures, qrels, run).items():
        assert printed[m, query] == pytest.approx(value, abs=5e-5)
    # 4 decimals, as ir_measures' own test asserts (0.4659 and 0.1803, mean 0.3231)
    assert printed["ERR_IA@20", "all"] == pytest.approx(0.3231, abs=1e-4)


def test_cli_diversity_reads_a_parquet_run_as_the_trec_one(tmp_path: Path) -> None:
    # the diversity measures rank an in-memory run: read from any run source the streamed
    # measures take (here a Parquet file, and an empty one, refused as trec_eval refuses it)
    from evalkit.formats import read_run

    (tmp_path / "sub.txt").write_text(SUBTOPICS)
    (tmp_path / "run.txt").write_text(RUN)
    frame = read_run(tmp_path / "run.txt", rank=False)
    frame.to_parquet(tmp_path / "run.parquet", index=False)
    frame.iloc[:0].to_parquet(tmp_path / "empty.parquet", index=False)
    (tmp_path / "qrels.txt").write_text(
        "".join(
            f"{q} 0 {d} 1\n"
            for q, d in {(line.split()[0], line.split()[2]) for line in SUBTOPICS.splitlines()}
        )
    )
    outputs = []
    for run in ("run.txt", "run.parquet", "empty.parquet"):
        args = ["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / run), "-q"]
        args += ["-m", "alpha_nDCG@10", "-m", "AP", "--subtopic-qrels", str(tmp_path / "sub.txt")]
        outputs.append(run_cli(args, tmp_path))
    assert outputs[0][0] == outputs[1][0] == 0
    assert outputs[0][1] == outputs[1][1]
    assert f"{'alpha_nDCG@10':<22}\tall\t" in outputs[0][1]
    assert outputs[2][0] == 2
    assert "holds no results" in outputs[2][2]
