"""Streaming scoring (evalkit.measures.stream): a run file, list of files or Parquet dataset read in
blocks of whole queries gives exactly the in-memory engine's values (the oracle here: ``score``
on the same rows as a DataFrame, itself checked against trec_eval elsewhere).

Blocks are made tiny (``block_rows`` of 1 to 50 rows) so that queries straddle block and file
boundaries; shuffled runs take the on-disk partition pass.
"""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from oracles import quiet_score, write_parquet_run, write_trec_run

from evalkit.errors import FormatError, InputError, RunOnlyQueriesWarning
from evalkit.formats import write_run
from evalkit.measures import score
from evalkit.measures.stream import QrelsIndex, stream_ranking
from tests.nasty_runs import every_measure, nasty

MEASURES = every_measure()


def streamed(qrels: pd.DataFrame, source: Any, **options: Any) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        return score(qrels, source, [*map(_parse, MEASURES)], **options)


def _parse(text: str) -> Any:
    from evalkit.measures import parse_measure

    return parse_measure(text)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block_rows", [1, 13, 50])
def test_grouped_text_run_equals_in_memory(tmp_path: Path, seed: int, block_rows: int) -> None:
    qrels, run = nasty(seed)
    path = write_trec_run(run, tmp_path / "run.txt")
    expected = quiet_score(qrels, run, MEASURES)
    got = streamed(qrels, path, block_rows=block_rows)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize(
    "options",
    [
        {"complete": False},
        {"max_docs": 7},
        {"judged_only": True},
        {"max_docs": 3, "judged_only": True, "complete": False},
        {"trec_version": "9"},
        {"num_docs": 1000},
        {"ties": "given"},
        {"ties": "given", "judged_only": True},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_trec_eval_options_equal_in_memory(tmp_path: Path, options: dict[str, Any]) -> None:
    qrels, run = nasty(3)
    path = write_trec_run(run, tmp_path / "run.txt.gz")
    expected = quiet_score(qrels, run, MEASURES, **options)
    got = streamed(qrels, path, block_rows=17, **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("seed", [4, 5])
def test_ungrouped_run_takes_the_partition_pass(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = nasty(seed, grouped=False)
    path = write_trec_run(run, tmp_path / "shuffled.txt")
    expected = quiet_score(qrels, run, MEASURES)
    got = streamed(qrels, path, block_rows=40, progress=True, tmp_dir=tmp_path)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert "partitioning run" in capsys.readouterr().err  # the bar of the second pass
    assert [p.name for p in tmp_path.iterdir()] == ["shuffled.txt"]  # partitions deleted


def test_ungrouped_given_order_keeps_each_querys_row_order(tmp_path: Path) -> None:
    # ties="given" without a rank column ranks by row order: the partitions must keep it
    qrels, run = nasty(6, grouped=False)
    run = run.drop(columns="rank")
    path = write_parquet_run(run, tmp_path / "run.parquet", row_group_size=29)
    expected = quiet_score(qrels, run, MEASURES, ties="given")
    got = streamed(qrels, path, block_rows=25, ties="given")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_parquet_dataset_and_file_lists_split_queries_across_files(tmp_path: Path) -> None:
    qrels, run = nasty(7)
    cuts = [0, 101, 102, 350, len(run)]  # cut inside queries
    folder = tmp_path / "dataset"
    folder.mkdir()
    texts = []
    for i, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        write_parquet_run(run.iloc[lo:hi], folder / f"part-{i}.parquet", row_group_size=11)
        texts.append(write_trec_run(run.iloc[lo:hi], tmp_path / f"part-{i}.txt"))
    expected = quiet_score(qrels, run, MEASURES)
    for source in (folder, texts, [str(p) for p in texts]):
        got = streamed(qrels, source, block_rows=9)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_score_takes_a_path_and_warns_once_about_run_only_queries(tmp_path: Path) -> None:
    qrels, run = nasty(8)
    path = tmp_path / "run.trec"
    write_run(run, path)
    with pytest.warns(RunOnlyQueriesWarning) as expected_warnings:
        expected = score(qrels, run, ["nDCG@10", "AP"])
    with pytest.warns(RunOnlyQueriesWarning) as got_warnings:
        got = score(qrels, path, ["nDCG@10", "AP"])
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert len(got_warnings) == 1
    count = str(expected_warnings[0].message).split(" queries")[0]
    assert str(got_warnings[0].message).startswith(count)  # "the run has N"


def test_duplicates_across_blocks_are_found_or_kept_first(tmp_path: Path) -> None:
    qrels, run = nasty(9)
    query = run["query_id"].iloc[0]
    first_doc = run["doc_id"].iloc[0]
    extra = pd.DataFrame({"query_id": [query], "doc_id": [first_doc], "score": [0.1], "rank": [99]})
    size = int((run["query_id"] == query).sum())
    twice = pd.concat([run.iloc[:size], extra, run.iloc[size:]], ignore_index=True)
    path = write_trec_run(twice, tmp_path / "dup.txt")
    with pytest.raises(InputError, match="more than once for query"):
        streamed(qrels, path, block_rows=2)
    expected = quiet_score(qrels, twice, MEASURES, duplicates="keep-first")
    got = streamed(qrels, path, block_rows=2, duplicates="keep-first")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_odd_whitespace_falls_back_to_the_line_parser(tmp_path: Path) -> None:
    qrels, run = nasty(10)
    path = write_trec_run(run, tmp_path / "run.txt")
    text = path.read_text().splitlines()
    text[5] = text[5].replace(" ", "\t", 2)  # a mix of tabs and spaces
    text.insert(9, "# a comment line")
    path.write_text("\n".join(text) + "\n")
    pd.testing.assert_frame_equal(
        streamed(qrels, path, block_rows=3), quiet_score(qrels, run, MEASURES), check_exact=True
    )


def test_malformed_line_reports_its_line(tmp_path: Path) -> None:
    qrels, run = nasty(11)
    path = write_trec_run(run, tmp_path / "run.txt")
    lines = path.read_text().splitlines()
    lines[200] = "q1 Q0 d3 1 not-a-number tag"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError) as caught:
        streamed(qrels, path)
    assert caught.value.line == 201


def test_bad_sources_are_input_errors(tmp_path: Path) -> None:
    qrels, _ = nasty(12)
    index = QrelsIndex(qrels)
    with pytest.raises(InputError, match=r"holds no \.parquet file"):
        stream_ranking(index, tmp_path)
    with pytest.raises(InputError, match="must be a DataFrame, the path"):
        stream_ranking(index, 42)
    with pytest.raises(InputError, match="block_rows"):
        stream_ranking(index, tmp_path, block_rows=0)
    table = pa.table({"query_id": ["q1"], "doc": ["d1"], "score": [1.0]})
    pq.write_table(table, tmp_path / "bad.parquet")
    with pytest.raises(InputError, match="missing column"):
        stream_ranking(index, tmp_path / "bad.parquet")
    integers = pa.table({"query_id": [1, 2], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    pq.write_table(integers, tmp_path / "integers.parquet")
    with pytest.raises(InputError, match="column query_id holds int64, expected strings"):
        stream_ranking(index, tmp_path / "integers.parquet")
    good = pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    pq.write_table(good, tmp_path / "good.parquet")
    data = (tmp_path / "good.parquet").read_bytes()
    for name, damaged in (("magic", b"PAR1xx"), ("truncated", data[: len(data) // 2])):
        (tmp_path / f"{name}.parquet").write_bytes(damaged)
        with pytest.raises(InputError, match="cannot be read as Parquet"):
            stream_ranking(index, tmp_path / f"{name}.parquet")
    with pytest.raises(InputError, match="does not exist"):
        stream_ranking(index, tmp_path / "absent.parquet")


@pytest.mark.parametrize(
    "grades",
    [np.array([2**63 + 1, 1], dtype=np.uint64), np.array([1e19, 1.0])],
    ids=["uint64", "float"],
)
def test_grades_past_the_int64_range_are_refused_not_wrapped(grades: Any) -> None:
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": grades})
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="outside the 64-bit signed range"):
        score(qrels, run, ["AP"])


def test_cli_trec_eval_streams_a_parquet_run(tmp_path: Path) -> None:
    from evalkit.cli import main
    from evalkit.formats import write_qrels

    qrels, run = nasty(13)
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt")
    write_parquet_run(run, tmp_path / "run.parquet")
    outputs = []
    for name in ("run.txt", "run.parquet"):
        code, out = _cli(
            main,
            [
                "trec-eval",
                str(tmp_path / "qrels.txt"),
                str(tmp_path / name),
                "-m",
                "nDCG@10",
                "-m",
                "AP",
                "-q",
                "-c",
            ],
        )
        assert code == 0
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") > 20


def _cli(main: Any, argv: list[str]) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def test_identical_values_even_for_running_sums_across_queries(tmp_path: Path) -> None:
    # ndcg_rel and Rndcg take running sums of float weights across queries: kernels run on
    # half of these queries alone give 17 values of each that differ in the last bits (up to
    # 4e-15); the pieces are combined before the kernels run, so the bits match
    qrels, run = nasty(14, n_queries=120)
    path = write_trec_run(run, tmp_path / "run.txt")
    measures = ["G", "ndcg_rel", "Rndcg", "nDCG"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        expected = score(qrels, run, measures)
        got = score(qrels, path, measures)
    assert np.array_equal(got["value"].to_numpy(), expected["value"].to_numpy())


@pytest.mark.parametrize("form", ["empty", "comments", "parquet"])
def test_a_run_source_without_rows_is_refused(tmp_path: Path, form: str) -> None:
    # trec_eval refuses an empty results file; scoring it would give every query 0.0
    qrels, run = nasty(3)
    if form == "parquet":
        path = tmp_path / "run.parquet"
        write_parquet_run(run.iloc[:0], path)
    else:
        path = tmp_path / "run.txt"
        path.write_text("" if form == "empty" else "# nothing\n\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"holds no results"):
        score(qrels, str(path), ["AP"])
    assert not score(qrels, run.iloc[:0], ["AP"]).empty  # an empty frame is the caller's choice


def test_a_run_dataset_may_mix_its_files_column_types(tmp_path: Path) -> None:
    # files of one dataset written by different jobs: string, dictionary or large_string IDs,
    # float32 or float64 scores; read as one run, streamed or in memory (the diversity path)
    from evalkit.measures.stream import read_source

    qrels, run = nasty(5)
    run = run.assign(score=np.round(run["score"].to_numpy() * 4) / 4)  # exact in float32
    queries = sorted(run["query_id"].unique())
    parts = [run[run["query_id"].isin(queries[i::3])] for i in range(3)]
    (tmp_path / "run").mkdir()
    kinds = [
        {"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()},
        {
            "query_id": pa.dictionary(pa.int32(), pa.string()),
            "doc_id": pa.string(),
            "score": pa.float32(),
        },
        {"query_id": pa.large_string(), "doc_id": pa.large_string(), "score": pa.float64()},
    ]
    for i, (part, kind) in enumerate(zip(parts, kinds, strict=True)):
        columns = {name: pa.array(part[name].to_list()).cast(kind[name]) for name in kind}
        pq.write_table(pa.table(columns), tmp_path / "run" / f"part-{i}.parquet")
    expected = quiet_score(qrels, run, MEASURES).sort_values(["query_id", "measure"])
    got = streamed(qrels, str(tmp_path / "run")).sort_values(["query_id", "measure"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))
    read = read_source(str(tmp_path / "run"))
    assert sorted(map(tuple, read.to_numpy().tolist())) == sorted(
        map(tuple, run[["query_id", "doc_id", "score"]].to_numpy().tolist())
    )
