"""The public functions take what people pass: a path as ``str`` or ``PathLike`` wherever a
fixture or qrels is read, and a ``TypeError`` naming the parameter for anything else."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalkit as ek

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "synthetic-bilingual-dev-v1"
TREC_EVAL = REPO.parent / "shared" / "data" / "trec_eval"


@pytest.mark.parametrize("given", [str(FIXTURE), FIXTURE], ids=["str", "Path"])
def test_evaluate_takes_a_fixture_directory(given: str | Path) -> None:
    by_path = ek.evaluate(given, ["lexical"], repeats=1)
    loaded = ek.evaluate(ek.load_fixture(FIXTURE), ["lexical"], repeats=1)
    pd.testing.assert_frame_equal(by_path.per_query, loaded.per_query)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ek.evaluate(42), r"evaluate\(\): fixture must be a Fixture or a path .* got int"),
        (lambda: ek.load_fixture(None), r"load_fixture\(\): path must be .* got NoneType"),
        (
            lambda: ek.score(3.5, pd.DataFrame(), ["AP"]),
            r"score\(\): qrels must be a DataFrame or a path .* got float",
        ),
    ],
    ids=["evaluate", "load_fixture", "score"],
)
def test_anything_else_is_a_type_error_naming_the_parameter(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=message):
        call()


def test_score_takes_a_qrels_path() -> None:
    qrels_file = TREC_EVAL / "qrels.test"
    if not qrels_file.is_file():
        pytest.skip(f"trec_eval's test files are not at {TREC_EVAL} (../shared/data/trec_eval)")
    run = ek.read_run(TREC_EVAL / "results.test")
    by_path = ek.score(str(qrels_file), run, ["AP", "P@10"])
    read = ek.score(ek.read_qrels(qrels_file), run, ["AP", "P@10"])
    pd.testing.assert_frame_equal(by_path, read)
