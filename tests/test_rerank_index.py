"""hybrid-rerank's compact index (issue 21) gives exactly the results of the per-chunk sets it
replaced.

The reference is ``_SetIndexReranker``: ``HeuristicReranker`` with the ``index`` of commit
a0f2651 (per-chunk frozensets of terms, units and concepts, a ``Counter`` of document
frequencies, a dense concept-vector matrix), copied here unchanged. Both index the same chunks
and every public answer is compared with ``==`` (floats bit for bit): ``search``, ``features``
(all eight features, the near-duplicate contrast included), ``support``, ``unknown_items``,
``unseen_concepts`` and the IDF of every query term, on generated fixtures (with and without
the development fixture's concept table) and on the committed development fixture
``fixtures/synthetic-bilingual-dev-v1``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit.fixtures import Fixture, generate_fixture, load_fixture
from evalkit.systems import rerank
from evalkit.systems._rerank_features import CJK_RE, idf
from evalkit.systems.abstention import ITEM_PREFIX
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, provide_aliases
from evalkit.systems.reference import SYSTEMS
from evalkit.systems.rerank import FEATURE_NAMES, HeuristicReranker, evidence_shapes
from evalkit.systems.text import tokenize

DEV = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"


class _SetIndexReranker(HeuristicReranker):
    """``HeuristicReranker`` indexing as at commit a0f2651 (the reference)."""

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        self._chunk_terms: Any = {}
        self._title_units: Any = {}
        self._chunk_units: Any = {}
        self._chunk_concepts: Any = {}
        self._shapes: Any = {}
        self._language: Any = {}
        self.first_stage.index(chunks)
        self._row = {}
        texts = [f"{chunk.title}\n{chunk.text}" for chunk in chunks]
        term_df: Counter[str] = Counter()
        concept_df: Counter[int] = Counter()
        title_terms: dict[str, frozenset[str]] = {}
        title_concepts: dict[str, frozenset[int]] = {}
        counts = [self.embedder.concepts(text) for text in texts]
        bar = chunk_bar(len(chunks))
        for row, (chunk, text) in enumerate(zip(chunks, texts, strict=True)):
            if row % 1000 == 0:
                bar.update(min(1000, len(chunks) - row))
            self._row[chunk.id] = row
            self._chunk_terms[chunk.id] = frozenset(tokenize(text))
            title_terms[chunk.id] = frozenset(tokenize(chunk.title))
            self._chunk_concepts[chunk.id] = frozenset(counts[row])
            title_concepts[chunk.id] = frozenset(self.embedder.concepts(chunk.title))
            self._shapes[chunk.id] = evidence_shapes(text)
            self._language[chunk.id] = chunk.language
            term_df.update(self._chunk_terms[chunk.id])
            concept_df.update(self._chunk_concepts[chunk.id])
        bar.close()
        n = len(chunks)
        self._term_idf: Any = {t: idf(df, n) for t, df in term_df.items()}
        self._concept_idf = {c: idf(df, n) for c, df in concept_df.items()}
        self._max_idf = idf(0, n)
        # Every CJK character of the corpus is in one of its bigram or unigram terms.
        self._cjk_chars = frozenset(ch for t in self._term_idf if CJK_RE.match(t) for ch in t)
        self._prefixes = frozenset(
            t[:ITEM_PREFIX] for t in self._term_idf if len(t) >= ITEM_PREFIX and not CJK_RE.match(t)
        )
        self._alias_words = self._words_of_aliases()
        for chunk in chunks:
            self._chunk_units[chunk.id] = frozenset(
                [("t", t) for t in self._chunk_terms[chunk.id]]
                + [("c", c) for c in self._chunk_concepts[chunk.id]]
            )
            self._title_units[chunk.id] = frozenset(
                [("t", t) for t in title_terms[chunk.id]]
                + [("c", c) for c in title_concepts[chunk.id]]
            )
        self._vectors: Any = self.embedder.embed_counts(counts)


def _pair(fixture: Fixture, **settings: Any) -> tuple[HeuristicReranker, HeuristicReranker]:
    """The reference and the compact reranker, both indexed on ``fixture`` (reference settings,
    with ``settings`` overriding)."""
    built = []
    for cls in (_SetIndexReranker, HeuristicReranker):
        system = SYSTEMS.get("hybrid-rerank")()
        assert isinstance(system, HeuristicReranker)
        options = {
            "depth": system.depth,
            "weights": system.weights,
            "name": system.name,
            **settings,
        }
        reranker = cls(system.first_stage, system.embedder, **options)
        provide_aliases(reranker, fixture.aliases)
        reranker.index(fixture.chunks)
        built.append(reranker)
    return built[0], built[1]


def _texts(fixture: Fixture) -> list[tuple[str, str]]:
    """Each query's text and language, and each chunk title as a query (titles reach chunks)."""
    queries = [(q.text, q.language) for q in fixture.queries]
    titles = [
        (c.title, c.language) for c in list(fixture.chunks)[:: max(1, len(fixture.chunks) // 40)]
    ]
    return queries + titles


def _assert_same(reference: HeuristicReranker, compact: HeuristicReranker, fixture: Fixture) -> int:
    compared = 0
    for text, language in _texts(fixture):
        assert compact.search_text(text, 10) == reference.search_text(text, 10), text
        assert compact._search(text, 10, language) == reference._search(text, 10, language)
        features = compact.features(text, language)
        assert features == reference.features(text, language)
        for hit, _ in features[:5]:
            assert compact.support(text, hit.chunk_id) == reference.support(text, hit.chunk_id)
        assert compact.unknown_items(text) == reference.unknown_items(text)
        assert compact.unseen_concepts(text) == reference.unseen_concepts(text)
        for term in tokenize(text):
            assert (term in compact._term_idf) is (term in reference._term_idf)
            assert compact._term_idf.get(term) == reference._term_idf.get(term)
        compared += len(features)
    return compared


def _with_dev_table(fixture: Fixture) -> Fixture:
    return fixture.model_copy(update={"aliases": load_fixture(DEV).aliases})


@pytest.mark.parametrize(
    ("seed", "documents", "table"),
    [(1, 60, False), (2, 60, True), (3, 150, True)],
)
def test_compact_index_ranks_as_the_set_index_on_generated_fixtures(
    seed: int, documents: int, table: bool
) -> None:
    fixture = generate_fixture(seed, documents=documents, queries=60)
    if table:
        fixture = _with_dev_table(fixture)
    reference, compact = _pair(fixture)
    assert _assert_same(reference, compact, fixture) > 0


def test_compact_index_ranks_as_the_set_index_on_the_dev_fixture() -> None:
    fixture = load_fixture(DEV)
    reference, compact = _pair(fixture)
    assert sum(len(compact._chunk_concepts[c.id]) for c in fixture.chunks) > len(fixture.chunks)
    assert _assert_same(reference, compact, fixture) > 0
    # The opt-in rules and a weight on every feature (the near-duplicate contrast included).
    weights = dict.fromkeys(FEATURE_NAMES, 1.0)
    reference, compact = _pair(
        fixture, weights=weights, abstain_on_unknown_item=True, abstain_on_apart=True
    )
    assert _assert_same(reference, compact, fixture) > 0


def test_compact_index_keeps_the_corpus_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """Document frequencies, CJK characters, prefixes and vectors, over several batches."""
    monkeypatch.setattr(rerank, "_INDEX_BATCH", 37)
    fixture = _with_dev_table(generate_fixture(4, documents=40, queries=10))
    reference, compact = _pair(fixture)
    assert compact._cjk_chars == reference._cjk_chars
    assert compact._prefixes == reference._prefixes
    assert compact._concept_idf == reference._concept_idf
    assert compact._max_idf == reference._max_idf
    assert dict(compact._term_idf.items()) == reference._term_idf
    assert len(compact._term_idf) == len(reference._term_idf)
    rows = list(range(len(fixture.chunks)))
    assert np.array_equal(compact._vectors[rows], reference._vectors[rows])
    for chunk in fixture.chunks:
        assert compact._chunk_terms[chunk.id] == reference._chunk_terms[chunk.id]
        assert compact._chunk_concepts[chunk.id] == reference._chunk_concepts[chunk.id]
        assert compact._shapes[chunk.id] == reference._shapes[chunk.id]
        assert compact._language[chunk.id] == reference._language[chunk.id]
        for unit in reference._chunk_units[chunk.id]:
            assert unit in compact._chunk_units[chunk.id]
        for unit in reference._title_units[chunk.id]:
            assert unit in compact._title_units[chunk.id]
    # A unit of another chunk that this one lacks is not "in" it.
    first, second = fixture.chunks[0].id, fixture.chunks[1].id
    for unit in reference._chunk_units[second] - reference._chunk_units[first]:
        assert unit not in compact._chunk_units[first]
    assert math.isfinite(compact._max_idf)


def test_compact_index_of_no_chunks() -> None:
    for cls in (_SetIndexReranker, HeuristicReranker):
        system = SYSTEMS.get("hybrid-rerank")()
        assert isinstance(system, HeuristicReranker)
        reranker = cls(system.first_stage, system.embedder)
        reranker.index([])
        assert reranker.search_text("ferry 渡轮", 10) == []
        assert reranker.unknown_items("kayak") == ["kayak"]
