"""evaluate(): per-query measures, rankings, failures and the determinism check.

The tiny fixture (tests/conftest.py) and a user-defined system make every value hand-computable.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.errors import DeterminismError, InputError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.run import Evaluation, evaluate
from evalkit.systems import FunctionRetriever

RANKINGS = {
    # q-en-1: an irrelevant chunk first, the relevant one second, then a duplicate (dropped).
    "When does the first ferry leave?": [("c-en-2", 2.0), ("c-en-1", 1.5), ("c-en-2", 1.0)],
    # q-en-2 (no-answer): returns something -> a false positive.
    "Is there a night bus?": [("c-en-1", 0.3)],
    # q-zh-1 and q-zh-2: nothing.
}


def user_search(query: str, k: int) -> list[tuple[str, float]]:
    return RANKINGS.get(query, [])[:k]


def make_user_system() -> FunctionRetriever:
    """Factory named on the command line as ``test_evaluate:make_user_system``."""
    return FunctionRetriever(user_search, name="user")


@pytest.fixture
def tiny(tiny_dir: Path) -> Fixture:
    return load_fixture(tiny_dir)


@pytest.fixture
def result(tiny: Fixture) -> Evaluation:
    return evaluate(tiny, [make_user_system()], k=10)


def value(evaluation: Evaluation, query_id: str, measure: str) -> float:
    frame = evaluation.per_query
    row = frame[(frame["query_id"] == query_id) & (frame["measure"] == measure)]
    assert len(row) == 1, (query_id, measure)
    return float(row["value"].iloc[0])


def test_per_query_values_are_hand_computed(result: Evaluation) -> None:
    # q-en-1 ranking after dedup: c-en-2 (grade 0), c-en-1 (grade 3).
    assert value(result, "q-en-1", "R@5") == 1.0
    assert value(result, "q-en-1", "RR@10") == 0.5
    # exp-log2 nDCG: DCG = (2^3 - 1) / log2(1 + 2) = 7 / 1.58496...; IDCG = 7 / log2(2) = 7.
    assert value(result, "q-en-1", "nDCG(dcg='exp-log2')@10") == pytest.approx(1 / math.log2(3))
    # Spans on c-en-1: "leaves at 06:40" at 10..25 and "every ninety minutes" at 35..55 -> 35
    # characters; returned context = c-en-2 (34 chars) + c-en-1 (56 chars) = 90.
    assert value(result, "q-en-1", "ContextPrecision@10") == pytest.approx(35 / 90)
    assert value(result, "q-en-1", "ContextRecall@10") == 1.0
    # q-zh-1 returned nothing: a 0.0 row for every ranking measure, never a missing row.
    for measure in ("R@5", "R@10", "RR@10", "nDCG(dcg='exp-log2')@10", "ContextPrecision@10"):
        assert value(result, "q-zh-1", measure) == 0.0
    assert value(result, "q-en-2", "NoAnswerFP") == 1.0
    assert value(result, "q-zh-2", "NoAnswerFP") == 0.0


def test_frames_are_tidy_and_complete(result: Evaluation) -> None:
    frame = result.per_query
    assert list(frame.columns) == [
        "system",
        "query_id",
        "language",
        "answerable",
        "measure",
        "value",
    ]
    answerable_measures = [m for m in result.measures if m != "NoAnswerFP"]
    # 2 answerable queries x 6 measures + 2 no-answer queries x NoAnswerFP.
    assert len(frame) == 2 * len(answerable_measures) + 2
    assert not frame["value"].isna().any()
    assert set(frame.loc[frame["measure"] == "NoAnswerFP", "answerable"]) == {False}
    assert list(result.rankings.columns) == [
        "system",
        "query_id",
        "rank",
        "chunk_id",
        "score",
        "grade",
    ]
    ranking = result.rankings[result.rankings["query_id"] == "q-en-1"]
    assert list(ranking["chunk_id"]) == ["c-en-2", "c-en-1"]  # duplicate dropped
    assert list(ranking["rank"]) == [1, 2]
    assert list(ranking["grade"]) == [0, 3]
    assert len(result.latency) == 4 * 2  # 4 queries x 2 repeats
    assert (result.latency["latency_ms"] >= 0).all()


def test_summary_averages_each_measure_over_its_queries(result: Evaluation) -> None:
    overall = result.summary().set_index("measure")
    assert overall.loc["RR@10", "value"] == pytest.approx((0.5 + 0.0) / 2)
    assert overall.loc["RR@10", "n"] == 2
    assert overall.loc["NoAnswerFP", "value"] == pytest.approx(0.5)
    by_language = result.summary(by=["language"]).set_index(["language", "measure"])
    assert by_language.loc[("en", "RR@10"), "value"] == 0.5
    assert by_language.loc[("zh", "NoAnswerFP"), "value"] == 0.0


def test_failures_are_id_only_and_actionable(result: Evaluation) -> None:
    failures = result.failures()
    assert list(failures.columns) == ["system", "query_id", "language", "kind", "chunk_ids"]
    rows = {
        (q, kind, tuple(ids))
        for q, kind, ids in failures[["query_id", "kind", "chunk_ids"]].itertuples(
            index=False, name=None
        )
    }
    assert rows == {
        ("q-zh-1", "missed-relevant", ("c-zh-1",)),
        ("q-en-2", "answered-no-answer", ("c-en-1",)),
    }
    assert all(isinstance(ids, list) for ids in failures["chunk_ids"])  # lists, not one string
    assert sorted(failures.explode("chunk_ids")["chunk_ids"]) == ["c-en-1", "c-zh-1"]


def test_near_duplicate_above_relevant_is_a_failure(tiny_data: dict, make_fixture) -> None:  # type: ignore[no-untyped-def,type-arg]
    def mutate(data: dict) -> None:  # type: ignore[type-arg]
        data["chunks.yaml"][1]["near_duplicate_of"] = "c-en-1"

    fixture = load_fixture(make_fixture(mutate))
    failures = evaluate(fixture, [make_user_system()], repeats=1).failures()
    assert ("q-en-1", "near-duplicate-above", ("c-en-2", "c-en-1")) in {
        (q, kind, tuple(ids))
        for q, kind, ids in failures[["query_id", "kind", "chunk_ids"]].itertuples(
            index=False, name=None
        )
    }


def test_latency_summary_columns(result: Evaluation) -> None:
    summary = result.latency_summary()
    assert list(summary.columns) == [
        "system",
        "count",
        "min_ms",
        "median_ms",
        "p95_ms",
        "max_ms",
        "mean_ms",
        "measured",
    ]
    row = summary.iloc[0]
    assert row["count"] == 8
    assert row["min_ms"] <= row["median_ms"] <= row["p95_ms"] <= row["max_ms"]


def test_nondeterministic_system_is_caught(tiny: Fixture) -> None:
    calls: Iterator[int] = iter(range(1_000))

    def flaky(query: str, k: int) -> list[tuple[str, float]]:
        # Alternates between two orders on successive calls: repeat 2 differs from repeat 1.
        n = next(calls)
        pair = [("c-en-1", 1.0), ("c-en-2", 1.0)]
        return pair if (n // 4) % 2 == 0 else pair[::-1]

    with pytest.raises(DeterminismError) as caught:
        evaluate(tiny, [FunctionRetriever(flaky, name="flaky")], repeats=2)
    assert ("flaky", "q-en-1") in caught.value.differences
    assert "flaky/q-en-1" in str(caught.value)


def test_bad_system_output_is_a_clear_error(tiny: Fixture) -> None:
    def unknown(query: str, k: int) -> list[tuple[str, float]]:
        return [("no-such-chunk", 1.0)]

    with pytest.raises(InputError, match="not in fixture"):
        evaluate(tiny, [FunctionRetriever(unknown, name="bad")], repeats=1)
    with pytest.raises(InputError, match="k must be"):
        evaluate(tiny, [make_user_system()], k=0)


def test_hits_checked_up_to_k_distinct(tiny: Fixture) -> None:
    """A non-finite score among the first k distinct hits is an error; an unknown ID or a
    non-finite score after them is never read (the list's fast path and the loop agree)."""
    known = [chunk.id for chunk in tiny.chunks]

    def infinite(query: str, k: int) -> list[tuple[str, float]]:
        return [(known[0], 1.0), (known[1], float("inf"))]

    with pytest.raises(InputError, match="non-finite score"):
        evaluate(tiny, [FunctionRetriever(infinite, name="bad")], k=2, repeats=1)

    def past_k(query: str, k: int) -> list[tuple[str, float]]:
        return [(known[0], 2.0), (known[0], 1.5), (known[1], 1.0), ("no-such-chunk", math.nan)]

    ranked = evaluate(tiny, [FunctionRetriever(past_k, name="ok")], k=2, repeats=1).rankings
    first = ranked[ranked["query_id"] == ranked["query_id"].iloc[0]]
    assert list(first["chunk_id"]) == known[:2]
    assert list(first["score"]) == [2.0, 1.0]


def test_reference_systems_run_on_tiny_fixture(tiny: Fixture) -> None:
    result = evaluate(tiny, repeats=2)
    assert result.systems == ("lexical", "token-hash", "alias-vector", "hybrid", "hybrid-rerank")
    assert result.deterministic is True
    assert set(result.per_query["system"]) == set(result.systems)


def test_cli_run_with_user_system(tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(tiny_dir), "--systems", "test_evaluate:make_user_system,lexical"])
    out = capsys.readouterr().out
    assert code == 0
    assert "user" in out
    assert "lexical" in out
    assert "evaluationDefinitionHash: sha256:" in out


def test_inputs_are_not_modified(result: Evaluation) -> None:
    before = result.per_query.copy()
    result.summary(by=["language"])
    result.failures()
    result.wide()
    pd.testing.assert_frame_equal(result.per_query, before)


class _DriftingDefinition(FunctionRetriever):
    """Same rankings on every run, but definition() counts its calls (a drifting definition)."""

    def __init__(self) -> None:
        super().__init__(user_search, name="drifting")
        self.calls = 0

    def definition(self) -> dict[str, object]:
        self.calls += 1
        return {**super().definition(), "built": self.calls}


def test_a_drifting_definition_is_a_determinism_error(tiny: Fixture) -> None:
    # Issue 16 item 2: the rankings agree, so only the definition hash can catch this system,
    # whose baseline would otherwise go stale on every run without pointing at the cause.
    system = _DriftingDefinition()
    with pytest.raises(DeterminismError, match=r"definition of system\(s\) 'drifting' changed"):
        evaluate(tiny, [make_user_system(), system], repeats=2)
    assert system.calls == 2


def test_a_stable_definition_passes_the_determinism_check(tiny: Fixture) -> None:
    assert evaluate(tiny, [make_user_system()], repeats=3).deterministic is True


def test_arguments_of_the_wrong_kind_are_named(tiny_dir: Path) -> None:
    fixture = load_fixture(tiny_dir)
    for bad in ({"k": True}, {"repeats": True}):
        with pytest.raises(InputError, match="must be a positive integer, got True"):
            evaluate(fixture, ["lexical"], **bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"systems must be a list of names.*systems=\['lexical'\]"):
        evaluate(fixture, "lexical")
    with pytest.raises(InputError, match=r"measures must be a list of names"):
        evaluate(fixture, ["lexical"], measures="R@5")
    with pytest.raises(InputError, match="measures is empty"):
        evaluate(fixture, ["lexical"], measures=[])
    evaluation = evaluate(fixture, ["lexical"], repeats=1)
    pd.testing.assert_frame_equal(
        evaluation.summary(by="language"), evaluation.summary(by=["language"])
    )
    with pytest.raises(InputError, match="names a column twice"):
        evaluation.summary(by=["language", "language"])
