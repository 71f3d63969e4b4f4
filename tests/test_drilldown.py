"""``Evaluation.explain`` and ``evalkit.explain``: one query side by side (evalkit.run.drilldown),
and how an evaluation and a fixture display themselves in JupyterLab.

The tiny fixture (tests/conftest.py) and the user system of tests/test_evaluate.py make every
rank, grade and span hand-checkable.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest
from test_evaluate import make_user_system

import evalkit as ek
from evalkit.errors import InputError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.run import Evaluation, evaluate
from evalkit.run.drilldown import PRIVATE_TEXT_LABEL
from evalkit.safety.privacy import find_leaks, private_texts


@pytest.fixture
def tiny(tiny_dir: Path) -> Fixture:
    return load_fixture(tiny_dir)


@pytest.fixture
def result(tiny: Fixture) -> Evaluation:
    return evaluate(tiny, [make_user_system()], k=10, repeats=1)


def test_explain_gives_the_ranking_with_grades_and_unjudged(result: Evaluation) -> None:
    view = result.explain("q-en-1")
    rankings = view.rankings
    assert list(rankings.columns) == [
        "system",
        "rank",
        "chunk_id",
        "score",
        "grade",
        "relevant",
        "near_duplicate_of",
        "text",
    ]
    # the user system returns c-en-2 (not judged for q-en-1), then c-en-1 (grade 3)
    assert rankings["chunk_id"].tolist() == ["c-en-2", "c-en-1"]
    assert rankings["rank"].tolist() == [1, 2]
    assert rankings["grade"].isna().tolist() == [True, False]
    assert rankings["grade"].iloc[1] == 3
    assert rankings["relevant"].tolist() == [False, True]
    assert str(rankings["grade"].dtype) == "Int64"
    assert isinstance(rankings["system"].dtype, pd.CategoricalDtype)
    assert rankings["text"].iloc[1] == "The ferry leaves at 06:40 and then every ninety minutes."
    judgments = view.judgments
    assert judgments[["chunk_id", "grade", "spans", "found_by"]].values.tolist() == [
        ["c-en-1", 3, 2, 1]
    ]
    assert judgments["user"].tolist() == [2]  # the rank the user system gave it
    assert view.missed == []


def test_explain_html_highlights_spans_and_labels_private_text(result: Evaluation) -> None:
    page = result.explain("q-en-1")._repr_html_()
    assert html.escape(PRIVATE_TEXT_LABEL) in page
    assert "When does the first ferry leave?" in page
    assert "<mark>leaves at 06:40</mark>" in page
    assert "<mark>every ninety minutes</mark>" in page
    assert "unjudged" in page


def test_explain_lists_relevant_chunks_no_system_found(result: Evaluation) -> None:
    view = result.explain("q-zh-1")  # the user system returns nothing for it
    assert view.rankings.empty
    assert view.missed == ["c-zh-1"]
    assert view.judgments["user"].isna().tolist() == [True]
    failures = view.failures
    assert failures["kind"].astype(str).tolist() == ["missed-relevant"]
    assert failures["chunk_ids"].tolist() == [["c-zh-1"]]
    page = view._repr_html_()
    assert "no results (abstained)" in page
    assert "Relevant chunks no system found: c-zh-1" in page


def test_explain_measures_are_the_evaluation_values(result: Evaluation) -> None:
    view = result.explain("q-en-1")
    mine = result.per_query[result.per_query["query_id"] == "q-en-1"]
    assert view.measures["measure"].astype(str).tolist() == mine["measure"].tolist()
    assert view.measures["value"].tolist() == mine["value"].tolist()
    rr = view.measures.set_index("measure").loc["RR@10", "value"]
    assert rr == 0.5  # the relevant chunk at rank 2


def test_redacted_explain_holds_no_fixture_text(result: Evaluation, tiny: Fixture) -> None:
    view = result.explain("q-en-1", redact=True)
    shown = "\n".join(
        [
            view._repr_html_(),
            repr(view),
            view.rankings.to_string(),
            view.judgments.to_string(),
            view.measures.to_string(),
            view.failures.to_string(),
        ]
    )
    assert find_leaks(shown, private_texts(tiny)) == []
    assert "sha256:" in shown
    assert "<mark>" not in shown
    assert html.escape(PRIVATE_TEXT_LABEL) not in shown
    # and the unredacted one is found by the same scan
    assert find_leaks(result.explain("q-en-1")._repr_html_(), private_texts(tiny))


def test_fixture_text_is_escaped(make_fixture, tiny_data: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    def mutate(data: dict) -> None:  # type: ignore[type-arg]
        data["chunks.yaml"][1]["text"] = "Fares <b>rise</b> & fall; <i>single</i> tickets."
        data["queries.yaml"][0]["text"] = "When does the <em>first</em> ferry leave?"

    fixture = load_fixture(make_fixture(mutate))
    rankings = pd.DataFrame(
        {"query_id": ["q-en-1", "q-en-1"], "chunk_id": ["c-en-2", "c-en-1"], "score": [2.0, 1.0]}
    )
    page = ek.explain(fixture, rankings, "q-en-1")._repr_html_()
    assert "<b>rise</b>" not in page
    assert "&lt;b&gt;rise&lt;/b&gt; &amp; fall" in page
    assert "<em>first</em>" not in page
    assert "&lt;em&gt;first&lt;/em&gt;" in page


def test_explain_on_a_fixture_and_rankings_scores_as_evaluate(
    result: Evaluation, tiny: Fixture
) -> None:
    run = result.rankings.rename(columns={"chunk_id": "doc_id"})[["query_id", "doc_id", "score"]]
    view = ek.explain(tiny, run, "q-en-1", k=10)
    assert view.systems == ("run",)
    expected = result.per_query[result.per_query["query_id"] == "q-en-1"]["value"].tolist()
    assert view.measures["value"].tolist() == expected
    assert view.rankings["chunk_id"].tolist() == ["c-en-2", "c-en-1"]


def test_explain_rejects_unknown_queries_and_systems(result: Evaluation) -> None:
    with pytest.raises(InputError, match="not in fixture"):
        result.explain("q-nope")
    with pytest.raises(InputError, match="not in this evaluation"):
        result.explain("q-en-1", systems=["lexical"])


def test_evaluation_and_fixture_display_themselves(result: Evaluation, tiny: Fixture) -> None:
    text = repr(result)
    assert text.startswith("<Evaluation of fixture 'tiny-v1'")
    assert "k=10" in text
    page = result._repr_html_()
    for part in ("user", "k = 10", "RR@10", "NoAnswerFP", "determinism not checked"):
        assert part in page
    assert find_leaks(page + text, private_texts(tiny)) == []
    assert repr(tiny) == "<Fixture tiny-v1 v1.0.0: 2 documents, 3 chunks, 4 queries (en, zh)>"
    fixture_page = tiny._repr_html_()
    assert "sha256:" in fixture_page  # the content hash
    assert find_leaks(fixture_page, private_texts(tiny)) == []
    from evalkit.fixtures.display import grade_counts, language_counts

    counts = language_counts(tiny).set_index("language")
    assert counts.loc["all"].tolist() == [4, 2, 2]  # q-en-1, q-zh-1 answerable
    assert counts.loc["zh"].tolist() == [2, 1, 1]
    assert grade_counts(tiny)["judgments"].tolist() == [2, 0, 0, 0]


def test_redacted_explain_on_the_committed_fixture_passes_the_leak_scan() -> None:
    fixture = load_fixture(Path(__file__).resolve().parents[1] / "fixtures/synthetic-bilingual-v1")
    evaluation = evaluate(fixture, ["lexical"], repeats=1)
    private = private_texts(fixture)
    for query_id in ("q-en-005", "q-zh-017"):
        redacted = evaluation.explain(query_id, redact=True)
        shown = redacted._repr_html_() + redacted.rankings.to_string()
        assert find_leaks(shown, private) == [], query_id
        unredacted = evaluation.explain(query_id)._repr_html_()
        assert f"query:{query_id}" in find_leaks(unredacted, private)  # the scan would see it


def test_from_rankings_orders_by_the_given_rank_and_renumbers(tiny: Fixture) -> None:
    rankings = pd.DataFrame(
        {
            "system": "mine",
            "query_id": ["q-en-1", "q-en-1"],
            "doc_id": ["c-en-2", "c-en-1"],
            "score": [0.5, 0.9],
            "rank": [7, 0],  # a run file's rank column as written
        }
    )
    evaluation = Evaluation.from_rankings(tiny, rankings, k=10)
    assert evaluation.rankings["chunk_id"].tolist() == ["c-en-1", "c-en-2"]
    assert evaluation.rankings["rank"].tolist() == [1, 2]
    assert evaluation.rankings["grade"].tolist() == [3, 0]
    rr = evaluation.per_query.set_index(["query_id", "measure"]).loc[("q-en-1", "RR@10"), "value"]
    assert rr == 1.0
    assert evaluation.deterministic is None  # one run: nothing was repeated
