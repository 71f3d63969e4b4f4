"""``evaluate(..., workers=N)`` (:mod:`evalkit.run._parallel`): the systems run in forked worker
processes and the evaluation is the serial one; errors come back as the serial loop raises
them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from oracles import write_trec_run

from evalkit.errors import DeterminismError, InputError
from evalkit.fixtures import generate_fixture
from evalkit.run import evaluate
from evalkit.run._parallel import fork_available

pytestmark = pytest.mark.skipif(not fork_available(), reason="no fork on this platform")

FIXTURE = generate_fixture(5, documents=14, queries=12)


def test_workers_give_the_serial_evaluation(tmp_path: Path) -> None:
    serial = evaluate(FIXTURE, ["lexical", "token-hash"], repeats=1)
    run_file = tmp_path / "mine.trec"
    rankings = serial.rankings[serial.rankings["system"] == "lexical"]
    write_trec_run(  # a run file missing a third of its rows: notes count the missing queries
        rankings.rename(columns={"chunk_id": "doc_id"}).iloc[: len(rankings) * 2 // 3],
        run_file,
    )
    systems = ["lexical", f"run:{run_file}", "token-hash", "hybrid"]
    here = evaluate(FIXTURE, systems, repeats=2)
    apart = evaluate(FIXTURE, systems, repeats=2, workers=2)
    assert apart.systems == here.systems
    pd.testing.assert_frame_equal(apart.per_query, here.per_query, check_exact=True)
    pd.testing.assert_frame_equal(apart.rankings, here.rankings, check_exact=True)
    assert apart.definitions == here.definitions
    assert apart.notes == here.notes
    assert apart.notes  # the run: file's notes came back from its worker
    latency, expected = apart.latency, here.latency
    pd.testing.assert_frame_equal(
        latency.drop(columns="latency_ms"), expected.drop(columns="latency_ms")
    )
    assert latency[latency["system"] == "lexical"]["latency_ms"].gt(0).all()  # timed in workers
    assert latency[latency["system"] == "mine"]["latency_ms"].isna().all()


class _Fixed:
    """A user's system instance: the first chunk for every query."""

    name = "fixed"

    def definition(self) -> dict[str, Any]:
        return {"kind": "fixed"}

    def index(self, chunks: Any) -> None:
        self.chunks = [c.id for c in chunks]

    def search(self, query: Any, k: int) -> list[tuple[str, float]]:
        return [(self.chunks[0], 1.0)]


class _Random(_Fixed):
    """Ranks at random: two runs disagree (all but surely, over 12 queries of 14 chunks)."""

    name = "random"

    def search(self, query: Any, k: int) -> list[tuple[str, float]]:
        import random

        return [(random.SystemRandom().choice(self.chunks), 1.0)]


def test_instances_run_in_workers_and_repeats_are_compared() -> None:
    here = evaluate(FIXTURE, [_Fixed(), "lexical"], repeats=2)
    apart = evaluate(FIXTURE, [_Fixed(), "lexical"], repeats=2, workers=2)
    assert apart.systems == ("fixed", "lexical")
    pd.testing.assert_frame_equal(apart.rankings, here.rankings, check_exact=True)
    with pytest.raises(DeterminismError):
        evaluate(FIXTURE, [_Random()], repeats=2, workers=2)


def test_errors_come_back_as_the_serial_loop_raises_them(tmp_path: Path) -> None:
    missing = tmp_path / "absent.trec"
    with pytest.raises(InputError) as serial:
        evaluate(FIXTURE, ["lexical", "token-hash", f"run:{missing}"], repeats=2)
    with pytest.raises(InputError) as apart:
        evaluate(FIXTURE, ["lexical", "token-hash", f"run:{missing}"], repeats=2, workers=2)
    assert str(apart.value) == str(serial.value)
    with pytest.raises(InputError, match="both named"):
        evaluate(FIXTURE, ["lexical", "lexical"], repeats=1, workers=2)
    with pytest.raises(InputError, match="workers must be a positive integer"):
        evaluate(FIXTURE, ["lexical"], workers=0)


def test_cli_run_with_workers(tmp_path: Path) -> None:
    import json

    from evalkit.fixtures import dump_fixture
    from evalkit.results import deterministic_projection
    from tests.cli_runner import run_cli

    dump_fixture(FIXTURE, tmp_path / "fixture")
    reports = []
    for workers in ("1", "2"):
        argv = ["run", "fixture", "--systems", "lexical,token-hash", "--workers", workers]
        code, _out, err = run_cli([*argv, "--output", f"r{workers}.json"], tmp_path)
        assert code == 0, err
        reports.append(json.loads((tmp_path / f"r{workers}.json").read_text(encoding="utf-8")))
    assert deterministic_projection(reports[1]) == deterministic_projection(reports[0])
    code, _out, err = run_cli(["run", "fixture", "--workers", "0"], tmp_path)
    assert code == 2
    assert "workers must be a positive integer" in err
