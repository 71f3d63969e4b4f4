"""``evalkit run --rankings PATH``: every system's ranking as one six-column TREC run file that
other tools read (ir_measures as the oracle reader), with the same values evalkit computed."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pandas as pd
import pytest

from evalkit.fixtures import load_fixture
from evalkit.run import evaluate
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "synthetic-bilingual-dev-v1"


def test_rankings_are_one_trec_run_that_ir_measures_reads(tmp_path: Path) -> None:
    argv = ["run", str(FIXTURE), "--systems", "lexical,token-hash", "--repeats", "1"]
    code, out, err = run_cli([*argv, "--rankings", "out/rankings.trec"], tmp_path)
    assert code == 0, err
    assert "rankings: out/rankings.trec" in out
    lines = (tmp_path / "out" / "rankings.trec").read_text(encoding="utf-8").splitlines()
    assert lines
    assert all(len(line.split()) == 6 for line in lines)
    assert {line.split()[5] for line in lines} == {"lexical", "token-hash"}

    run = pd.DataFrame(
        [line.split() for line in lines],
        columns=["query_id", "q0", "doc_id", "rank", "score", "run_id"],
    )
    fixture = load_fixture(FIXTURE)
    qrels = [
        ir_measures.Qrel(q.id, j.chunk_id, j.grade)
        for q in fixture.queries
        if q.answerable
        for j in q.judgments
    ]
    evaluation = evaluate(fixture, ["lexical", "token-hash"], repeats=1)
    ours = evaluation.summary().set_index(["system", "measure"])["value"]
    for system in ("lexical", "token-hash"):
        mine = run[run["run_id"] == system]
        scored = [
            ir_measures.ScoredDoc(q, d, float(s))
            for q, d, s in zip(mine["query_id"], mine["doc_id"], mine["score"], strict=True)
        ]
        # ir_measures averages over the qrels' queries; evalkit over answerable queries (the same)
        theirs = ir_measures.calc_aggregate([ir_measures.R @ 10], qrels, scored)
        assert theirs[ir_measures.R @ 10] == pytest.approx(ours[(system, "R@10")], abs=1e-12)


def test_an_unsafe_rankings_path_is_refused_before_any_work(tmp_path: Path) -> None:
    code, out, err = run_cli(["run", str(FIXTURE), "--rankings", "../x.trec"], tmp_path)
    assert code == 2
    assert "output path" in err
    assert out == ""  # refused before the evaluation printed anything
    assert not (tmp_path.parent / "x.trec").exists()
