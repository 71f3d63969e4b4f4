"""trec_eval 10.0's own expected files, reproduced by ``evalkit trec-eval``.

Each ``test/out.test*`` file of the trec_eval 10.0 source (NIST) is the output of a command in
its Makefile's ``quicktest``. For every line whose measure evalkit computes, ``evalkit
trec-eval`` with the same options must print the same value (4 decimals, or the integer of a
count). The files are read from the source folder (skipped without it); nothing here is
computed by evalkit. The inputs include ``results.trunc``, whose lines carry extra trailing
fields, mixed tabs and spaces, and which lacks query 302 (the ``-c`` files count it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from trec_eval_oracle import HOW_TO_ENABLE, TEST_DIR

from evalkit.cli.main import main
from evalkit.formats import read_run

# trec_eval name pattern -> evalkit measure (``{}``: the name's number)
_NAMES: list[tuple[str, str]] = [
    (r"P_(\d+)", "P@{}"),
    (r"recall_(\d+)", "R@{}"),
    (r"success_(\d+)", "Success@{}"),
    (r"map_cut_(\d+)", "AP@{}"),
    (r"ndcg_cut_(\d+)", "nDCG@{}"),
    (r"relative_P_(\d+)", "relative_P@{}"),
    (r"iprec_at_recall_([\d.]+)", "IPrec@{}"),
    (r"Rprec_mult_([\d.]+)", "Rprec_mult@{}"),
    (r"map", "AP"),
    (r"ndcg", "nDCG"),
    (r"recip_rank", "RR"),
    (r"Rprec", "Rprec"),
    (r"bpref", "Bpref"),
    (r"set_P", "SetP"),
    (r"set_recall", "SetR"),
    (r"set_F", "SetF"),
    (r"set_map", "SetAP"),
    (r"set_relative_P", "set_relative_P"),
    (r"num_ret", "NumRet"),
    (r"num_rel", "NumRel"),
    (r"num_rel_ret", "NumRelRet"),
    (r"num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    (r"num_q", "NumQ"),
    (r"11pt_avg", "11pt_avg"),
    (r"infAP", "infAP"),
    (r"unj_(\d+)", "unjudged@{}"),
    (r"utility", "utility"),
    (r"G", "G"),
    (r"binG", "binG"),
    (r"yaap", "yaap"),
    (r"ndcg_rel", "ndcg_rel"),
    (r"Rndcg", "Rndcg"),
    (r"rbp", "rbp"),
    (r"rbp_resid", "rbp_resid"),
    (r"ndcg_(\d+=[^,]+(?:,\d+=[^,]+)*)", "nDCG(gains='{}')"),
    (r"utility_([^,]+),([^,]+),([^,]+),([^,]+)", "utility(p1={},p2={},p3={},p4={})"),
]
_NO_REL = {"nDCG", "NumRet", "NumQ", "unjudged", "G", "ndcg_rel", "rbp", "rbp_resid"}


def _measure(trec: str, rel: int) -> str | None:
    for pattern, template in _NAMES:
        match = re.fullmatch(pattern, trec)
        if match:
            measure = template.format(*match.groups())
            if rel != 1 and measure.partition("@")[0] not in _NO_REL:
                base, _, cut = measure.partition("@")
                measure = f"{base}(rel={rel})" + (f"@{cut}" if cut else "")
            return measure
    return None


def _expected(name: str) -> list[tuple[str, str, str]]:
    path = TEST_DIR / name
    if not path.is_file():
        pytest.skip(f"trec_eval 10.0 test files not found at {TEST_DIR}; {HOW_TO_ENABLE}")
    rows = []
    for line in path.read_text().splitlines():
        trec, query, value = (part.strip() for part in line.split("\t"))
        rows.append((trec, query, value))
    return rows


# (expected file, qrels, run, evalkit options); the Makefile's quicktest commands
CASES = [
    ("out.test", "qrels.test", "results.test", ["--no-complete"]),
    ("out.test", "qrels.test.with-comments", "results.test", ["--no-complete"]),
    ("out.test.a", "qrels.test", "results.test", ["--no-complete"]),
    ("out.test.aq", "qrels.test", "results.test", ["--no-complete", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-q"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-q", "-M", "100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["--no-complete", "-q"]),
    # measures with parameters: P_3, recall_2000, Rprec_mult_5.00, ndcg_cut_23 (from 23.4), ...
    ("out.test.meas_params", "qrels.test", "results.test", ["--no-complete", "-q"]),
]


@pytest.mark.parametrize(("expected", "qrels", "run", "options"), CASES)
def test_trec_eval_expected_files(
    expected: str,
    qrels: str,
    run: str,
    options: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _expected(expected)
    rel = 2 if expected == "out.test.aql" else 1
    wanted: dict[str, str] = {}
    for trec, _, _ in rows:
        measure = _measure(trec, rel)
        if measure is not None:
            wanted.setdefault(trec, measure)
    assert len(wanted) >= 10  # most of the file's measures are checked
    args = ["trec-eval", str(TEST_DIR / qrels), str(TEST_DIR / run), "--trec-names", *options]
    for measure in wanted.values():
        args += ["-m", measure]
    assert main(args) == 0
    printed = {}
    for line in capsys.readouterr().out.splitlines():
        name, query, value = line.split("\t")
        printed[(name, query)] = value
    checked = 0
    for trec, query, value in rows:
        if trec not in wanted:
            continue
        if rel != 1 and trec == "num_rel" and query == "all" and "-q" in options:
            continue  # see test_trec_eval10: trec_eval -c sums num_rel ignoring -l
        assert printed[(trec, query)] == value, (expected, trec, query)
        checked += 1
    assert checked == sum(1 for trec, _, _ in rows if trec in wanted) - (
        1 if rel != 1 and "-q" in options else 0
    )


def test_results_trunc_reads_as_trec_eval_reads_it() -> None:
    # results.trunc: 584 lines, tab-separated with leading spaces before the score, some with
    # extra words after the run ID (ignored by trec_eval's get_trec_results.c)
    path = TEST_DIR / "results.trunc"
    if not path.is_file():
        pytest.skip(f"trec_eval 10.0 test files not found at {TEST_DIR}; {HOW_TO_ENABLE}")
    run = read_run(path, rank=False)
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    assert len(run) == len(lines) == 584
    assert run["query_id"].tolist() == [parts[0] for parts in lines]
    assert run["doc_id"].tolist() == [parts[2] for parts in lines]
    assert run["score"].tolist() == [float(parts[4]) for parts in lines]


def test_run_lines_with_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("q Q0 d1 1 2.5 sys more junk\nq\tQ0\td2\t2\t  1.5\tsys\n")
    run = read_run(path)
    assert run[["query_id", "doc_id", "rank", "score"]].values.tolist() == [
        ["q", "d1", 1, 2.5],
        ["q", "d2", 2, 1.5],
    ]
