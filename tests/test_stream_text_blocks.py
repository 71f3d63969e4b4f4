"""The streamed TREC run reader (evalkit.formats.trec.stream_run): a plain file cut into text
blocks of whole lines (``text_blocks``), each parsed on every core, gives exactly the rows
``read_run`` reads, whatever the block size; a block the CSV reader refuses hands the rest of
the file to the line parser without losing or repeating a row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from oracles import write_trec_run

from evalkit.formats import read_run
from evalkit.formats.trec import stream_run, text_blocks
from tests.nasty_runs import nasty


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.tuples(st.text("ab ", max_size=12), st.sampled_from(["\n", "\r\n", "\r", ""])),
        max_size=30,
    ),
    block_size=st.integers(1, 40),
)
def test_text_blocks_keep_every_byte_and_cut_after_line_ends(
    tmp_path_factory: pytest.TempPathFactory, lines: list[tuple[str, str]], block_size: int
) -> None:
    text = "".join(body + end for body, end in lines).encode()
    path = tmp_path_factory.mktemp("blocks") / "run.txt"
    path.write_bytes(text)
    blocks = list(text_blocks(path, block_size))
    assert b"".join(bytes(block) for block, _ in blocks) == text
    for block, _ in blocks[:-1]:
        assert bytes(block).endswith((b"\n", b"\r"))
    assert all(block.size for block, _ in blocks)
    assert [read for _, read in blocks] == list(
        np.cumsum([block.size for block, _ in blocks], dtype=np.int64)
    )


def _streamed(path: Path, block_size: int, *, rank: bool = False) -> pd.DataFrame:
    tables = list(stream_run(path, rank=rank, block_size=block_size))
    frame: pd.DataFrame = pa.concat_tables(tables).to_pandas()
    return frame.astype({"query_id": "str", "doc_id": "str"})


@pytest.mark.parametrize("block_size", [64, 1000, 1 << 20])
@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_stream_run_reads_the_rows_read_run_reads(
    tmp_path: Path, block_size: int, suffix: str
) -> None:
    _, run = nasty(4)
    path = write_trec_run(run, tmp_path / f"run{suffix}")
    expected = read_run(path, rank=True)
    got = _streamed(path, block_size, rank=True)
    pd.testing.assert_frame_equal(got, expected[list(got.columns)], check_exact=True)


@pytest.mark.parametrize("block_size", [64, 300])
def test_a_refused_block_hands_the_rest_to_the_line_parser(tmp_path: Path, block_size: int) -> None:
    _, run = nasty(5)
    path = write_trec_run(run, tmp_path / "run.txt")
    lines = path.read_text().splitlines()
    at = len(lines) * 2 // 3  # in a later block than the first
    lines[at] = lines[at].replace(" ", "\t", 2)  # a mix of tabs and spaces
    lines.insert(at + 3, "# a comment line")
    path.write_text("\r\n".join(lines) + "\r\n")
    got = _streamed(path, block_size)
    expected = read_run(path, rank=False)
    assert len(got) == len(run)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert np.array_equal(got["score"].to_numpy(), run["score"].to_numpy())


@pytest.mark.parametrize(("block", "part"), [(256, 64), (1000, 300), (1 << 25, 1 << 23)])
def test_read_run_and_read_qrels_in_small_blocks_read_the_same_frames(
    tmp_path: Path, block: int, part: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.csv as pacsv

    from evalkit.formats import _lines, read_qrels

    qrels, run = nasty(6)
    run_path = write_trec_run(run, tmp_path / "run.txt")
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    expected_run = read_run(run_path)
    expected_qrels = read_qrels(qrels_path)
    # the oracle: pyarrow's reader over the whole file, converted by to_pandas
    whole = pacsv.read_csv(
        str(run_path),
        **_lines.csv_options(
            ("query_id", "q0", "doc_id", "rank", "score", "run_id"),
            {
                "query_id": pa.large_string(),
                "doc_id": pa.large_string(),
                "score": pa.float64(),
                "rank": pa.int64(),
            },
            " ",
            1 << 20,
        ),
    ).to_pandas()
    pd.testing.assert_frame_equal(expected_run, whole, check_exact=True)
    # many blocks and parts: tables of many chunks, copied into numpy chunk by chunk
    monkeypatch.setattr(_lines, "_BLOCK_BYTES", block)
    monkeypatch.setattr(_lines, "_PART_BYTES", part)
    got_run = read_run(run_path)
    got_qrels = read_qrels(qrels_path)
    pd.testing.assert_frame_equal(got_run, expected_run, check_exact=True)
    pd.testing.assert_frame_equal(got_qrels, expected_qrels, check_exact=True)
    assert np.array_equal(got_run["score"].to_numpy(), run["score"].to_numpy())
    assert np.array_equal(got_qrels["relevance"].to_numpy(), qrels["relevance"].to_numpy())
