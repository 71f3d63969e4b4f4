"""The TREC readers read what trec_eval 10.0 reads, with the same meaning (get_trec_results.c,
get_qrels.c): checked by scoring the same files with the 10.0 binary and ``evalkit trec-eval``.

The files mix what trec_eval's line parsers allow: comment lines (in the run also after
leading whitespace: trec_eval's qrels parser reads an indented ``#`` line as a judgment), blank
lines of whitespace in the run (trec_eval rejects them in qrels; evalkit skips them), CRLF line
ends, tabs, vertical tabs and form feeds between fields, extra fields after the run ID, a rank
field that is not a number (trec_eval skips it), scores written as ``1e-3``, ``+2``, ``.5``,
``5.`` and ``-0``, and IDs holding bytes that Python's ``str.split`` would split at but C's
``isspace`` does not (no-break space, U+2003, ``\\x1c``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trec_eval_oracle import TrecEval10, measure_arguments, read_trec_eval_output

from evalkit.cli import main
from evalkit.formats import read_qrels, read_run

QRELS = (
    "# a comment\n"
    "1 0 a\u00a0b 2\r\n"
    "1\t0\tc\u2003d\t1\n"
    "1 0 e\x1cf 0\n"
    "1 0 g 1\x0b\n"
    "2 0 a\u00a0b 1\n"
    "2 0 h -1\n"
)
RUN = (
    "# produced by hand\n"
    "   # an indented comment\n"
    "1 Q0 a\u00a0b x 1e-3 run extra fields\r\n"
    "1\tQ0\tc\u2003d\t2\t+2\trun\n"
    "1 Q0 e\x1cf 3 .5 run\x0c\n"
    "1 Q0 a 4 5. run\n"
    "   \n"
    "1 Q0 g 5 -0 run # not a comment here\n"
    "2 Q0 h 1 3 run\n"
    "2 Q0 a\u00a0b 2 3 run\n"
    "2 Q0 zz 3 3.0000000001 run\n"
)
MEASURES = {"map": "AP", "P.2": "P@2", "ndcg": "nDCG", "num_ret": "NumRet", "bpref": "Bpref"}


def _files(folder: Path) -> tuple[Path, Path]:
    qrels, run = folder / "qrels", folder / "run"
    qrels.write_bytes(QRELS.encode())
    run.write_bytes(RUN.encode())
    return qrels, run


def test_readers_keep_ids_and_fields_as_trec_eval(tmp_path: Path) -> None:
    qrels_path, run_path = _files(tmp_path)
    qrels = read_qrels(qrels_path)
    run = read_run(run_path, rank=False)
    assert qrels["doc_id"].tolist() == ["a\u00a0b", "c\u2003d", "e\x1cf", "g", "a\u00a0b", "h"]
    assert qrels["relevance"].tolist() == [2, 1, 0, 1, 1, -1]
    assert run["doc_id"].tolist() == [
        "a\u00a0b",
        "c\u2003d",
        "e\x1cf",
        "a",
        "g",
        "h",
        "a\u00a0b",
        "zz",
    ]
    assert run["score"].tolist() == [1e-3, 2.0, 0.5, 5.0, -0.0, 3.0, 3.0, 3.0000000001]


def test_trec_eval_10_reads_the_same_files(
    trec_eval10: TrecEval10,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels_path, run_path = _files(tmp_path)
    oracle = trec_eval10.values(qrels_path, run_path, list(MEASURES))
    args = ["trec-eval", str(qrels_path), str(run_path), "-q", "--trec-names"]
    assert main([*args, *measure_arguments(MEASURES.values())]) == 0
    printed = read_trec_eval_output(capsys.readouterr().out)
    names = {"P.2": "P_2"}
    checked = 0
    for (name, query), value in oracle.items():
        ours = float(printed[(names.get(name, name), query)])
        assert ours == pytest.approx(value, abs=5e-5), (name, query)  # evalkit prints 4 decimals
        checked += 1
    assert checked == len(MEASURES) * 3  # queries 1, 2 and "all"
    assert oracle[("num_ret", "1")] == 5
