"""``lexical`` (BM25 over SQLite FTS5) against bm25s with a Snowball stemmer on the same data.

Issue 9 asks for MAP within 0.02 of an established BM25 implementation on an English
collection read through the BEIR reader. The collection is the simulated known-item collection
of ``known_item.py`` (real English text shipped with CPython); both systems use the Lucene
English stop set and the Snowball English stemmer. FTS5's BM25 is k1=1.2, b=0.75 with
Robertson's IDF; bm25s runs both with those parameters and with its own defaults (k1=1.5,
b=0.75, Lucene IDF). Both runs are scored by ``evalkit.score`` (AP over the top 100).
Measured here: evalkit 0.8232; bm25s 0.8153 (matched), 0.8122 (defaults).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bm25s
import pandas as pd
import pytest
import Stemmer
from known_item import write_known_item_beir

from evalkit.fixtures.beir import fixture_from_beir
from evalkit.formats import read_beir
from evalkit.measures import score
from evalkit.run import evaluate
from evalkit.systems.text import STOPWORDS

DEPTH = 100


def bm25s_run(folder: Path, parameters: dict[str, Any]) -> pd.DataFrame:
    corpus, queries, _ = read_beir(folder)
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(**parameters)
    retriever.index(
        bm25s.tokenize(
            list(corpus["text"]),
            stopwords=sorted(STOPWORDS),
            stemmer=stemmer.stemWords,
            show_progress=False,
        ),
        show_progress=False,
    )
    tokens = bm25s.tokenize(
        list(queries["text"]),
        stopwords=sorted(STOPWORDS),
        stemmer=stemmer.stemWords,
        show_progress=False,
    )
    docs, scores = retriever.retrieve(tokens, k=DEPTH, show_progress=False, n_threads=1)
    doc_ids = list(corpus["doc_id"])
    rows = [
        (query_id, doc_ids[int(doc)], float(value))
        for query_id, ranked, values in zip(queries["query_id"], docs, scores, strict=True)
        for doc, value in zip(ranked, values, strict=True)
        if value > 0
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def mean_ap(qrels: pd.DataFrame, run: pd.DataFrame, ties: str) -> float:
    return float(score(qrels, run, ["AP"], ties=ties)["value"].mean())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "parameters",
    [{"k1": 1.2, "b": 0.75, "method": "robertson"}, {}],
    ids=["fts5-parameters", "bm25s-defaults"],
)
def test_lexical_map_within_002_of_bm25s(tmp_path: Path, parameters: dict[str, Any]) -> None:
    folder = write_known_item_beir(tmp_path / "known-item", queries=200)
    qrels = read_beir(folder).qrels
    fixture = fixture_from_beir(folder)
    lexical = evaluate(fixture, ["lexical"], k=DEPTH, repeats=1).rankings
    ours = mean_ap(qrels, lexical.rename(columns={"chunk_id": "doc_id"}), ties="given")
    theirs = mean_ap(qrels, bm25s_run(folder, parameters), ties="trec")
    print(f"MAP@{DEPTH}: evalkit lexical {ours:.4f}, bm25s {theirs:.4f}, diff {ours - theirs:+.4f}")
    assert 0.3 < theirs < 1.0  # the collection is neither trivial nor broken
    assert ours == pytest.approx(theirs, abs=0.02)
