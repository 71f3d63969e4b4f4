"""evalkit on a real Dask cluster (a LocalCluster of 2 worker processes, one for the module):
scoring Dask frames and run sources partition by partition, and systems run on the workers,
give exactly the local results."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

from oracles import quiet_score, write_parquet_run, write_trec_run  # noqa: E402

from evalkit.errors import InputError  # noqa: E402
from evalkit.fixtures import load_fixture  # noqa: E402
from evalkit.run import evaluate  # noqa: E402
from tests.nasty_runs import every_measure, nasty  # noqa: E402

MEASURES = every_measure()
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: other clusters may hold 8787
            scheduler_port=0,
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "shuffled"])
def test_dask_frame_equals_in_memory(client: Any, grouped: bool) -> None:
    # 5 partitions of consecutive rows: queries straddle partitions (shuffled: almost all)
    qrels, run = nasty(20, grouped=grouped)
    expected = quiet_score(qrels, run, MEASURES)
    frame = dd.from_pandas(run, npartitions=5, sort=False)
    got = quiet_score(qrels, frame, MEASURES)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_options_and_given_order_on_the_cluster(client: Any) -> None:
    qrels, run = nasty(21, grouped=False)
    run = run.drop(columns="rank")  # ties="given": row order, kept across the shuffle
    frame = dd.from_pandas(run, npartitions=4, sort=False)
    for options in (
        {"ties": "given"},
        {"judged_only": True, "max_docs": 5, "complete": False, "trec_version": "9"},
    ):
        expected = quiet_score(qrels, run, MEASURES, **options)
        pd.testing.assert_frame_equal(
            quiet_score(qrels, frame, MEASURES, **options), expected, check_exact=True
        )


def test_run_sources_with_a_client(client: Any, tmp_path: Path) -> None:
    qrels, run = nasty(22)
    cuts = [0, 150, 151, 400, len(run)]
    folder = tmp_path / "dataset"
    folder.mkdir()
    texts = []
    for i, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        write_parquet_run(run.iloc[lo:hi], folder / f"part-{i}.parquet")
        texts.append(write_trec_run(run.iloc[lo:hi], tmp_path / f"part-{i}.txt"))
    expected = quiet_score(qrels, run, MEASURES)
    for source in (folder, texts):
        pd.testing.assert_frame_equal(
            quiet_score(qrels, source, MEASURES, client=client), expected, check_exact=True
        )


def test_errors_come_back_as_evalkit_errors(client: Any, tmp_path: Path) -> None:
    qrels, run = nasty(23)
    twice = pd.concat([run, run.iloc[:1]], ignore_index=True)
    with pytest.raises(InputError, match="more than once"):
        quiet_score(qrels, dd.from_pandas(twice, npartitions=3, sort=False), MEASURES)
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 1.0 tag\nq1 Q0 d2 x 1.0 tag\n")
    with pytest.raises(InputError, match=":2: field rank"):
        quiet_score(qrels, [bad], MEASURES, client=client, ties="given")


def test_evaluate_on_the_cluster_equals_local(client: Any, tmp_path: Path) -> None:
    fixture = load_fixture(FIXTURE)
    local = evaluate(fixture, ["lexical", "token-hash"], repeats=1)
    run_file = tmp_path / "mine.trec"
    rankings = local.rankings[local.rankings["system"] == "lexical"]
    write_trec_run(
        rankings.rename(columns={"chunk_id": "doc_id"}).iloc[: len(rankings) * 2 // 3],
        run_file,
    )
    systems = ["lexical", f"run:{run_file}", "token-hash"]
    here = evaluate(fixture, systems, repeats=2)
    there = evaluate(fixture, systems, repeats=2, client=client)
    pd.testing.assert_frame_equal(there.per_query, here.per_query, check_exact=True)
    pd.testing.assert_frame_equal(there.rankings, here.rankings, check_exact=True)
    assert there.definitions == here.definitions
    assert there.notes == here.notes  # the run: file's missing queries, counted over all
    assert (
        there.to_report()["evaluationDefinitionHash"]
        == here.to_report()["evaluationDefinitionHash"]
    )
    latency = there.latency
    assert list(latency.columns) == list(here.latency.columns)
    assert len(latency) == len(here.latency)
    measured = latency[latency["system"] == "lexical"]["latency_ms"]
    assert measured.notna().all()
    assert (measured > 0).all()  # timed on the workers
    assert latency[latency["system"] == "mine"]["latency_ms"].isna().all()


def test_cli_run_with_scheduler(client: Any) -> None:
    import contextlib
    import io

    from evalkit.cli import main

    outputs = []
    for extra in ([], ["--scheduler", client.scheduler.address]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["run", str(FIXTURE), "--systems", "lexical", "--repeats", "1", *extra])
        assert code == 0
        # the latency table differs from run to run; everything else must not
        outputs.append(
            [line for line in out.getvalue().splitlines() if not line.startswith("lexical ")]
        )
    assert outputs[0] == outputs[1]
    assert any(line.startswith("evaluationDefinitionHash") for line in outputs[0])


def test_unreachable_scheduler_is_a_usage_error() -> None:
    from evalkit.measures.cluster import connect

    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        connect("tcp://127.0.0.1:" + str(_free_port()), timeout=1.0)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


if os.environ.get("EVALKIT_NO_DASK_TESTS"):  # pragma: no cover - an escape hatch for slow CI
    pytestmark = pytest.mark.skip(reason="EVALKIT_NO_DASK_TESTS is set")
