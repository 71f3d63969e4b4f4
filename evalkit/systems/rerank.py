"""``hybrid-rerank``: a local, transparent reranker of a hybrid's candidates, and its abstention.

``HeuristicReranker`` rescores the first stage's top ``depth`` candidates (default 30) with the
features of the private :mod:`evalkit.systems._rerank_features` (``score = sum(weights[name] *
feature)``, rounded to 12 decimals; ties go to the chunk ID ascending; ``RerankFeatures``,
``FEATURE_NAMES``, ``NEAR_DUPLICATE_JACCARD``, ``QUERY_STOPWORDS``, ``answer_shapes`` and
``evidence_shapes`` are re-exported here) and returns nothing when a rule of
:mod:`evalkit.systems.abstention` fires; the private :mod:`evalkit.systems._rerank_index` keeps
its index compact. This module holds the system and its fitted settings (rules numbered as in
:mod:`evalkit.systems.abstention`).

Settings and how they were chosen
---------------------------------
Nothing was chosen on ``fixtures/synthetic-bilingual-v1``; it is held out. ``benchmarks/
fit_rerank.py`` fits on five sets: the development fixture ``fixtures/synthetic-bilingual-dev-v1``
with its ``aliases.yaml``, with every other concept of it (a weaker table) and without it, and
fixtures from ``evalkit.fixtures.generate_fixture`` with their planted no-answer queries (seeds
1-3 at 240 chunks, seeds 4-5 at 1,200 chunks; no table). ``benchmarks/heldout_rerank.py``
checks the issue's rules on fresh seeds and on the committed fixtures without fitting anything.

- ``DEFAULT_RERANK_WEIGHTS``: the grid over the simplex in steps of 0.1 (19,448 points); among
  the points whose nDCG(dcg='exp-log2')@10 is at least ``max(lexical, hybrid - 0.05)`` on every
  set, the one with the best mean nDCG@10. It is ``0.2 lexical + 0.8 cosine``: a score-level
  fusion of max-normalized BM25 and the concept cosine. The other features did not improve any
  set and weigh 0; without a table the cosine is 0 and the order is BM25's.
- Abstention (``min_support``, calibrated): rule 2 off, or on with a threshold of the grid
  0.00-0.40; a setting is feasible when on every fitting set at most 10 % of the answerable
  queries get no results and nDCG@10 with abstention stays at or above ``max(lexical, hybrid -
  0.05)``; among feasible settings the lowest worst-set NoAnswerFP wins, ties to fewer rules,
  then to the smaller value. The fitting sets add larger generated corpora (seeds 4-5, 1,200
  chunks) to the small ones, because a threshold that helps on 240 chunks (NoAnswerFP 0.500 ->
  0.411 at 0.14) helps nothing on 1,200 (random words find more partial matches there), and the
  development fixture's in-domain no-answer queries share content words and concepts with the
  corpus as answerable ones do (NoAnswerFP 1.0 at every feasible value; single features such as
  the top score, score gap, coverage or lexical/vector agreement separate them with AUC
  0.5-0.68). Until this round the grid had no "off" and the result was ``min_support`` 0
  (abstain when no candidate shares a single content word or concept with the query). At 0 the
  rule abstains on no no-answer query of any fitting set and on answerable ones (NoResult 0.014
  -> 0.027 with half the table, 0.054 -> 0.081 without it: cross-language questions whose only
  words shared with same-language chunks are question words), so with "off" in the grid the tie
  on NoAnswerFP goes to fewer rules: rule 2 is off by default (``min_support=None``), and a user
  who wants it sets ``min_support``.
- Rules 3 and 4 (on/off) are chosen by the same criterion, jointly with ``min_support``: a
  setting must lower the worst set's NoAnswerFP, ties going to fewer rules and the smaller
  threshold. Both need a table, so the set without one (``dev-noalias``, NoAnswerFP 1.0) is
  never improved and both stay off. Their in-sample effect on the development fixture with its
  table (``fit_rerank.py``'s table): NoAnswerFP 1.000 -> 0.545 with rule 3 (NoResult 0.000 ->
  0.027), -> 0.364 with rules 3 and 4 (NoResult 0.081, nDCG@10 0.914 -> 0.849); with half its
  table 0.364 (NoResult 0.081). Signals tried before them on that fixture, each too weak: the
  share of the query's units (IDF-weighted, unseen units included, CJK as characters) in the
  best candidate (AUC 0.58), the share of unknown words (AUC 0.62), "the top 2 or 3 units by IDF
  in one candidate" (NoResult 0.51-0.62), any unknown word without the yes/no condition
  (NoResult 0.23 at NoAnswerFP 0.55). Measured once on the held-out ``synthetic-bilingual-v1``
  with its table (``benchmarks/heldout_rerank.py --opt-in``; nothing changed after): rules 3
  and 4 do not generalize. They catch 2 of its 14 no-answer queries and cost 8 of its 82
  answerable ones (NoAnswerFP 0.857, NoResult 0.098, nDCG@10 0.821 -> 0.728): its authors
  paraphrase answerable yes/no questions with words the corpus does not use, which a lexical
  test cannot tell from an absent item.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence
from typing import Any, Final, NamedTuple

import numpy as np
from scipy import sparse

from evalkit.errors import InputError
from evalkit.systems._rerank_features import (
    CJK_RE,
    FEATURE_NAMES,
    NEAR_DUPLICATE_JACCARD,
    QUERY_STOPWORDS,
    RerankFeatures,
    answer_shapes,
    evidence_shapes,
    idf,
    share,
)
from evalkit.systems._rerank_index import (
    UNKNOWN_SHAPES,
    ChunkConcepts,
    ChunkLanguages,
    ChunkShapes,
    ChunkTerms,
    ChunkUnits,
    DenseRows,
    IntRows,
    TermIdf,
    chunk_fields,
)
from evalkit.systems.abstention import (
    EMPTY_SIGNALS,
    FUNCTION_CHARS,
    ITEM_PREFIX,
    SIGNAL_ANSWER_TOP,
    SIGNAL_DISPERSION_TOP,
    SIGNAL_RARE,
    SIGNAL_TOP,
    AbstentionSignals,
    asks_yes_no,
)
from evalkit.systems.fusion import HybridRetriever
from evalkit.systems.progress import chunk_bar
from evalkit.systems.protocol import ChunkLike, Hit, QueryLike, TextRetriever, provide_aliases
from evalkit.systems.store import chunk_texts
from evalkit.systems.termsets import DocumentFrequencies, TermCoder, TermRows
from evalkit.systems.text import index_terms, normalize, tokenize
from evalkit.systems.vectors import AliasEmbedder

__all__ = [
    "DEFAULT_RERANK_WEIGHTS",
    "FEATURE_NAMES",
    "NEAR_DUPLICATE_JACCARD",
    "QUERY_STOPWORDS",
    "HeuristicReranker",
    "RerankFeatures",
    "answer_shapes",
    "evidence_shapes",
]

DEFAULT_RERANK_WEIGHTS: Mapping[str, float] = {
    "prior": 0.0,
    "lexical": 0.2,
    "cosine": 0.8,
    "coverage": 0.0,
    "title": 0.0,
    "answer": 0.0,
    "language": 0.0,
    "distinct": 0.0,
}
DEFAULT_MIN_SUPPORT: Final[float | None] = None  # rule 2 off (fitted; module docstring)
DEFAULT_UNSEEN_CJK_WEIGHT: Final = 0.0

_INDEX_BATCH = 16_384  # chunks tokenized and numbered at once while indexing
_TITLE_CACHE: Final = 200_000  # distinct titles whose terms and concepts index() remembers


class _Query(NamedTuple):
    """What the reranker derives from a query once."""

    terms: list[str]  # distinct index terms that some chunk contains
    concepts: list[int]  # distinct concepts that some chunk mentions
    units: dict[tuple[str, Any], float]  # ("t", term) / ("c", concept) -> IDF
    all_terms: dict[str, float]  # every distinct term -> weight for support (unseen included)
    mentioned: list[int]  # every distinct concept the query mentions
    shapes: frozenset[str]
    unknown: bool  # a yes/no question whose asked item no chunk contains (rule 3)


class HeuristicReranker(TextRetriever):
    """Rescores a hybrid's candidates with transparent features and abstains (module docstring)."""

    def __init__(
        self,
        first_stage: HybridRetriever,
        embedder: AliasEmbedder,
        *,
        name: str = "hybrid-rerank",
        depth: int = 30,
        weights: Mapping[str, float] | None = None,
        min_support: float | None = DEFAULT_MIN_SUPPORT,
        unseen_cjk_weight: float = DEFAULT_UNSEEN_CJK_WEIGHT,
        abstain_on_unseen: bool = True,
        abstain_on_unknown_item: bool = False,
        abstain_on_apart: bool = False,
        lexical_component: int = 0,
    ) -> None:
        chosen = dict(DEFAULT_RERANK_WEIGHTS if weights is None else weights)
        unknown = sorted(set(chosen) - set(FEATURE_NAMES))
        if unknown:
            raise InputError(
                f"HeuristicReranker {name!r}: unknown feature weight(s) {unknown}; "
                f"expected names from {list(FEATURE_NAMES)}"
            )
        if any(not math.isfinite(w) or w < 0 for w in chosen.values()):
            raise InputError(
                f"HeuristicReranker {name!r}: feature weights must be finite and non-negative"
            )
        if depth < 1:
            raise InputError(f"HeuristicReranker {name!r}: depth must be at least 1, got {depth}")
        for label, value in (
            ("min_support", 0.0 if min_support is None else min_support),
            ("unseen_cjk_weight", unseen_cjk_weight),
        ):
            if not 0.0 <= value <= 1.0:
                raise InputError(
                    f"HeuristicReranker {name!r}: {label} must be in [0, 1], got {value}"
                )
        self.name = name
        self.first_stage = first_stage
        self.embedder = embedder
        self.depth = depth
        self.weights = {f: float(chosen.get(f, 0.0)) for f in FEATURE_NAMES}
        self.min_support = min_support
        self.unseen_cjk_weight = unseen_cjk_weight
        self.abstain_on_unseen = abstain_on_unseen
        self.abstain_on_unknown_item = abstain_on_unknown_item
        self.abstain_on_apart = abstain_on_apart
        self.lexical_component = lexical_component
        # The index (see ``index``): read-only mappings from chunk ID (``_term_idf``: from term).
        self._cjk_chars: frozenset[str] = frozenset()
        self._prefixes: frozenset[str] = frozenset()
        self._alias_words: dict[int, frozenset[str]] = {}
        self._chunks: Sequence[ChunkLike] = ()
        self._chunk_terms: Mapping[str, frozenset[str]] = {}
        self._title_units: Mapping[str, Container[tuple[str, Any]]] = {}
        self._chunk_units: Mapping[str, Container[tuple[str, Any]]] = {}
        self._chunk_concepts: Mapping[str, frozenset[int]] = {}
        self._shapes: Mapping[str, frozenset[str]] = {}
        self._language: Mapping[str, str] = {}
        self._term_idf: Mapping[str, float] = {}
        self._concept_idf: dict[int, float] = {}
        self._max_idf = 0.0
        self._row: dict[str, int] = {}
        self._vectors: DenseRows = DenseRows(sparse.csr_matrix((0, 1)))

    def definition(self) -> dict[str, Any]:
        return {
            "class": "HeuristicReranker",
            "version": 4,
            "first_stage": self.first_stage.definition(),
            "embedder": self.embedder.definition(),
            "depth": self.depth,
            "weights": self.weights,
            "min_support": self.min_support,
            "unseen_cjk_weight": self.unseen_cjk_weight,
            "abstain_on_unseen": self.abstain_on_unseen,
            "abstain_on_unknown_item": self.abstain_on_unknown_item,
            "abstain_on_apart": self.abstain_on_apart,
            "item_prefix": ITEM_PREFIX,
            "lexical_component": self.lexical_component,
            "near_duplicate_jaccard": NEAR_DUPLICATE_JACCARD,
        }

    def use_aliases(self, table: Any) -> None:
        """Hand the fixture's concept table to the first stage and the embedder."""
        provide_aliases(self.first_stage, table)
        self.embedder.use_aliases(table)

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """Index ``chunks`` (they must not change while indexed: candidate texts are read from
        them). Per chunk, the sorted integer keys of its distinct terms (``evalkit.systems.
        termsets``) and of its title's, its concepts, its language as a small code, its concept
        vector as a sparse row; document frequencies as counts per key; its answer shapes are
        found when first needed. ``_INDEX_BATCH`` chunks are tokenized at once."""
        self.first_stage.index(chunks)
        n = len(chunks)
        coder = TermCoder()
        text_rows, title_rows = TermRows(coder), TermRows(coder)
        concepts, title_concepts = IntRows(), IntRows()
        row_of: dict[str, int] = {}
        languages: dict[str, int] = {}
        language_codes = np.zeros(n, dtype=np.int32)
        shape_codes = np.full(n, UNKNOWN_SHAPES, dtype=np.uint8)  # found on first use
        titles_seen: dict[str, tuple[str, list[int]]] = {}
        vectors = []
        with chunk_bar(n) as bar:
            for start in range(0, n, _INDEX_BATCH):
                batch = chunks[start : start + _INDEX_BATCH]
                texts = chunk_texts(batch)
                ids, titles, langs = chunk_fields(batch, ("id", "title", "language"))
                row_of.update(zip(ids, range(start, start + len(ids)), strict=True))
                language_codes[start : start + len(ids)] = [
                    languages.setdefault(lang, len(languages)) for lang in langs
                ]
                counts = [self.embedder.concepts(text) for text in texts]
                concepts.extend(counts)
                vectors.append(sparse.csr_matrix(self.embedder.embed_counts(counts)))
                text_rows.extend(texts)
                if len(titles_seen) > _TITLE_CACHE:
                    titles_seen.clear()
                for title in titles:
                    if title not in titles_seen:
                        titles_seen[title] = (
                            index_terms(title),
                            sorted(self.embedder.concepts(title)),
                        )
                title_rows.extend_terms([titles_seen[t][0] for t in titles])
                title_concepts.extend([titles_seen[t][1] for t in titles])
                bar.update(len(ids))
        del titles_seen
        concepts.freeze()
        title_concepts.freeze()
        frequencies = DocumentFrequencies(text_rows)
        self._chunks = chunks
        self._row = row_of
        self._term_idf = TermIdf(frequencies, n)
        concept_df = np.bincount(concepts.values, minlength=len(self.embedder.concept_ids))
        self._concept_idf = {
            c: idf(int(df), n) for c, df in enumerate(concept_df.tolist()) if df > 0
        }
        self._max_idf = idf(0, n)
        # Every CJK character of the corpus is in one of its bigram or unigram terms.
        self._cjk_chars = frequencies.cjk_characters()
        self._prefixes = frozenset(
            t[:ITEM_PREFIX]
            for t in frequencies.latin_terms()
            if len(t) >= ITEM_PREFIX and not CJK_RE.match(t)
        )
        self._alias_words = self._words_of_aliases()
        self._chunk_terms = ChunkTerms(chunks, row_of)
        self._chunk_units = ChunkUnits(text_rows, concepts, row_of)
        self._title_units = ChunkUnits(title_rows, title_concepts, row_of)
        self._chunk_concepts = ChunkConcepts(concepts, row_of)
        self._shapes = ChunkShapes(chunks, shape_codes, row_of)
        self._language = ChunkLanguages(language_codes, list(languages), row_of)
        width = max(1, len(self.embedder.concept_ids))
        self._vectors = DenseRows(
            sparse.vstack(vectors, format="csr") if vectors else sparse.csr_matrix((0, width))
        )

    def _words_of_aliases(self) -> dict[int, frozenset[str]]:
        """Concept index -> the index terms and CJK characters of its aliases."""
        words: dict[int, set[str]] = {}
        for alias, concept in self.embedder.alias_to_concept.items():
            bag = words.setdefault(concept, set())
            bag.update(tokenize(alias))
            bag.update(ch for ch in alias if CJK_RE.match(ch))
        return {c: frozenset(w) for c, w in words.items()}

    def unknown_items(self, text: str) -> list[str]:
        """The parts of ``text`` no indexed chunk contains (rule 3's "asked item"), in order.

        Latin content terms (``QUERY_STOPWORDS`` left out) that no chunk contains and no chunk
        term shares the first ``ITEM_PREFIX`` letters with, and runs of two or more CJK
        characters that no chunk contains (function characters left out); a word of an alias of
        a concept the query mentions is never unknown (the table names it in the corpus).
        """
        explained: set[str] = set()
        for concept in self.embedder.concepts(text):
            explained |= self._alias_words.get(concept, frozenset())
        out = [
            t
            for t in dict.fromkeys(tokenize(text))
            if not CJK_RE.match(t)
            and t not in QUERY_STOPWORDS
            and t not in self._term_idf
            and t not in explained
            and not (len(t) >= ITEM_PREFIX and t[:ITEM_PREFIX] in self._prefixes)
        ]
        run = ""
        for ch in normalize(text) + " ":
            if (
                CJK_RE.match(ch)
                and ch not in self._cjk_chars
                and ch not in FUNCTION_CHARS
                and ch not in explained
            ):
                run += ch
                continue
            if len(run) >= 2:
                out.append(run)
            run = ""
        return out

    def unseen_concepts(self, text: str) -> list[str]:
        """IDs of the table's concepts ``text`` mentions that no indexed chunk mentions, sorted."""
        return sorted(
            self.embedder.concept_ids[c]
            for c in self.embedder.concepts(text)
            if c not in self._concept_idf
        )

    def _query(self, text: str) -> _Query:
        distinct_terms = [t for t in dict.fromkeys(tokenize(text)) if t not in QUERY_STOPWORDS]
        terms = [t for t in distinct_terms if t in self._term_idf]
        mentioned = list(self.embedder.concepts(text))
        concepts = [c for c in mentioned if c in self._concept_idf]
        units: dict[tuple[str, Any], float] = {("t", t): self._term_idf[t] for t in terms}
        units.update({("c", c): self._concept_idf[c] for c in concepts})
        all_terms = {
            t: self._term_idf.get(
                t, self._max_idf * (self.unseen_cjk_weight if CJK_RE.match(t) else 1.0)
            )
            for t in distinct_terms
        }
        unknown = (
            self.abstain_on_unknown_item
            and not self.embedder.empty
            and asks_yes_no(text)
            and bool(self.unknown_items(text))
        )
        return _Query(terms, concepts, units, all_terms, mentioned, answer_shapes(text), unknown)

    def features(self, text: str, language: str | None = None) -> list[tuple[Hit, RerankFeatures]]:
        """The first stage's top ``depth`` hits for ``text`` with their features, in its order."""
        return self._features(self._query(text), text, language, every_feature=True)

    def _features(
        self,
        query: _Query,
        text: str,
        language: str | None,
        *,
        every_feature: bool = False,
        searched: tuple[list[Hit], list[list[Hit]]] | None = None,
    ) -> list[tuple[Hit, RerankFeatures]]:
        """The first stage's top ``depth`` hits with their features; ``searched`` is the
        first stage's ``search_components(text, depth)`` when the caller has it already."""
        if searched is None:
            searched = self.first_stage.search_components(text, self.depth)
        candidates, lists = searched
        if not candidates:
            return []
        lexical_hits = lists[self.lexical_component] if lists else []
        best_lexical = max((h.score for h in lexical_hits), default=0.0)
        lexical = {h.chunk_id: h.score / best_lexical for h in lexical_hits if best_lexical > 0}
        query_vector = self.embedder.embed([text])[0]
        max_prior = self.first_stage.max_score
        units = query.units
        query_terms = frozenset(units)
        shapes = query.shapes
        ids = [hit.chunk_id for hit in candidates]
        # Searching skips the pairwise near-duplicate contrast when it weighs nothing (speed).
        wanted = every_feature or self.weights["distinct"] > 0
        distinct = self._distinct(ids, units) if wanted else {}
        cosines = self._vectors[[self._row[c] for c in ids]] @ query_vector
        out = []
        for hit, cosine in zip(candidates, cosines.tolist(), strict=True):
            chunk_id = hit.chunk_id
            chunk_units = self._chunk_units[chunk_id]
            features = RerankFeatures(
                prior=min(hit.score / max_prior, 1.0) if max_prior > 0 else 0.0,
                lexical=min(lexical.get(chunk_id, 0.0), 1.0),
                cosine=min(max(cosine, 0.0), 1.0),
                coverage=share(query_terms, chunk_units, units),
                title=share(query_terms, self._title_units[chunk_id], units),
                answer=len(shapes & self._shapes[chunk_id]) / len(shapes) if shapes else 0.0,
                language=(0.5 if language is None else float(self._language[chunk_id] == language)),
                distinct=distinct.get(chunk_id, 0.5),
            )
            out.append((hit, features))
        return out

    def _distinct(
        self, ids: Sequence[str], units: Mapping[tuple[str, Any], float]
    ) -> dict[str, float]:
        """Near-duplicate contrast per candidate that has near duplicates
        (:mod:`evalkit.systems._rerank_features`)."""
        terms = [frozenset(("t", t) for t in self._chunk_terms[c]) for c in ids]
        sums: dict[str, list[float]] = {}
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                union = len(terms[i] | terms[j])
                if not union or len(terms[i] & terms[j]) / union < NEAR_DUPLICATE_JACCARD:
                    continue
                a = sum(units.get(u, 0.0) for u in terms[i] - terms[j])
                b = sum(units.get(u, 0.0) for u in terms[j] - terms[i])
                contrast = 0.5 + 0.5 * (a - b) / (a + b) if a + b > 0 else 0.5
                sums.setdefault(ids[i], []).append(contrast)
                sums.setdefault(ids[j], []).append(1.0 - contrast)
        return {c: sum(v) / len(v) for c, v in sums.items()}

    def support(self, text: str, chunk_id: str) -> float:
        """The support of one indexed chunk for the query ``text`` (abstention rule 2)."""
        return self._support(self._query(text), chunk_id)

    def _support(self, query: _Query, chunk_id: str) -> float:
        """The larger of the term and concept support of one chunk (rule 2 in
        :mod:`evalkit.systems.abstention`)."""
        terms = self._chunk_terms[chunk_id]
        total = sum(query.all_terms.values())
        term_support = (
            sum(w for t, w in query.all_terms.items() if t in terms) / total if total > 0 else 0.0
        )
        concept_support = 0.0
        if query.mentioned:
            weights = {c: self._concept_idf.get(c, self._max_idf) for c in query.mentioned}
            concept_support = share(weights, self._chunk_concepts[chunk_id], weights)
        return max(term_support, concept_support)

    def abstention_signals(self, text: str, language: str | None = None) -> AbstentionSignals:
        """The measured-but-unused abstention signals of one query (``AbstentionSignals``).

        Computed from the same candidates ``search`` ranks (before any abstention rule); a
        query without candidates gets ``EMPTY_SIGNALS`` (all 0). Not used by ``search``:
        ``benchmarks/abstention_signals.py`` reports how well each separates no-answer queries.
        """
        query = self._query(text)
        # Each component's list is its own top depth whatever the fused k, so the candidates'
        # search also gives the components' top SIGNAL_TOP.
        searched = self.first_stage.search_components(text, self.depth)
        candidates = self._features(query, text, language, searched=searched)
        if not candidates:
            return EMPTY_SIGNALS
        ranked = sorted(
            ((self.score(f), hit.chunk_id) for hit, f in candidates), key=lambda x: (-x[0], x[1])
        )
        ids = [chunk_id for _, chunk_id in ranked]
        top = ranked[0][0]
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        lists = searched[1]
        firsts = [hits[0].chunk_id if hits else None for hits in lists]
        # 0.5 is "undefined": a component returned nothing (no table, or no match).
        agreement = 0.5 if len(firsts) < 2 or None in firsts else float(len(set(firsts)) == 1)
        lexical_hits = lists[self.lexical_component] if lists else []
        others = [hits for n, hits in enumerate(lists) if n != self.lexical_component]
        vector_hits = others[0] if others else []
        if lexical_hits and vector_hits:
            in_vector = {h.chunk_id for h in vector_hits[:SIGNAL_TOP]}
            top_lexical = lexical_hits[:SIGNAL_TOP]
            overlap = sum(h.chunk_id in in_vector for h in top_lexical) / len(top_lexical)
        else:
            overlap = 0.5
        seen = {t: query.all_terms[t] for t in query.terms}  # the indexed ones, in order
        self_score = sum(seen.values())
        best_lexical = max((h.score for h in lexical_hits), default=0.0)
        total = sum(query.all_terms.values())
        scores = np.array([score for score, _ in ranked[:SIGNAL_DISPERSION_TOP]])
        mean = float(scores.mean())
        same_language = next(f.language for hit, f in candidates if hit.chunk_id == ids[0])
        return AbstentionSignals(
            top_score=top,
            margin=top - second,
            relative_margin=(top - second) / top if top > 0 else 0.0,
            agreement=agreement,
            support=max(self._support(query, c) for c in ids),
            attribute_coverage=self._attribute_coverage(query, ids),
            answer_evidence=self._answer_evidence(query, ids),
            yes_no=float(asks_yes_no(text)),
            unknown_items=float(len(self.unknown_items(text))),
            unseen_share=(
                sum(w for t, w in query.all_terms.items() if t not in seen) / total
                if total > 0
                else 0.0
            ),
            rare_coverage=self._rare_coverage(seen, ids[0]),
            top_overlap=overlap,
            self_score_ratio=best_lexical / self_score if self_score > 0 else 0.0,
            score_dispersion=float(scores.std()) / mean if mean > 0 else 0.0,
            same_language=same_language,
        )

    def _rare_coverage(self, seen: Mapping[str, float], chunk_id: str) -> float:
        """Share of the ``SIGNAL_RARE`` highest-IDF terms of ``seen`` that the chunk holds."""
        rare = sorted(seen, key=lambda t: (-seen[t], t))[:SIGNAL_RARE]
        if not rare:
            return 1.0
        terms = self._chunk_terms[chunk_id]
        return sum(t in terms for t in rare) / len(rare)

    def _attribute_coverage(self, query: _Query, ids: Sequence[str]) -> float:
        """Share of the asked attribute that some top candidate holds (``AbstentionSignals``)."""
        units: dict[tuple[str, Any], float] = {("t", t): w for t, w in query.all_terms.items()}
        units.update({("c", c): self._concept_idf.get(c, self._max_idf) for c in query.mentioned})
        shown = [self._chunk_units[c] for c in ids[:SIGNAL_TOP]]
        entity = {u for u in units if sum(u in s for s in shown) >= 2}
        attribute = {u: w for u, w in units.items() if u not in entity and w > 0}
        total = sum(attribute.values())
        if total == 0:
            return 1.0
        best = shown[:SIGNAL_ANSWER_TOP]
        return max(sum(w for u, w in attribute.items() if u in s) / total for s in best)

    def _answer_evidence(self, query: _Query, ids: Sequence[str]) -> float:
        """1.0 when the query asks no answer shape or a top candidate shows one it asks."""
        if not query.shapes:
            return 1.0
        return float(any(query.shapes & self._shapes[c] for c in ids[:SIGNAL_ANSWER_TOP]))

    def abstention_rule(
        self, query: _Query, text: str, language: str | None, ids: Sequence[str]
    ) -> int:
        """The first of rules 2-4 (:mod:`evalkit.systems.abstention`) that fires for the
        candidates ``ids``, or 0.

        Rule 1 is checked before candidates exist (``_search``).
        """
        # Rules 2 and 3 judge shared words: they never fire when no candidate is in the query's
        # language (a cross-language match shares no words by nature).
        same_language = language is None or any(self._language[c] == language for c in ids)
        floor = self.min_support  # None: rule 2 is off
        if (
            floor is not None
            and same_language
            and all(self._support(query, c) <= floor for c in ids)
        ):
            return 2  # no candidate covers enough of the query
        if self.abstain_on_unknown_item and same_language and query.unknown:
            return 3  # a yes/no question about an item no chunk contains
        if self.abstain_on_apart and self.apart(query, text, ids):
            return 4  # a yes/no question whose concepts no single candidate joins
        return 0

    def apart(self, query: _Query, text: str, ids: Sequence[str]) -> bool:
        """Rule 4's test: a yes/no question mentions two or more concepts of the table and no
        candidate mentions all of them."""
        return (
            len(query.mentioned) > 1
            and asks_yes_no(text)
            and not any(self._chunk_concepts[c].issuperset(query.mentioned) for c in ids)
        )

    def score(self, features: RerankFeatures) -> float:
        """The weighted feature sum, rounded to 12 decimals."""
        return round(
            sum(self.weights[f] * v for f, v in zip(FEATURE_NAMES, features, strict=True)), 12
        )

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self._search(query.text, k, getattr(query, "language", None))

    def search_text(self, text: str, k: int) -> list[Hit]:
        """Reranked hits (score descending, chunk ID ascending), or ``[]`` to abstain."""
        return self._search(text, k, None)

    def _search(self, text: str, k: int, language: str | None) -> list[Hit]:
        query = self._query(text)
        if self.abstain_on_unseen and len(query.concepts) < len(query.mentioned):
            return []  # rule 1: a concept no indexed chunk mentions
        candidates = self._features(query, text, language)
        if not candidates:
            return []
        ids = [hit.chunk_id for hit, _ in candidates]
        if self.abstention_rule(query, text, language, ids):
            return []
        scored = sorted(
            ((self.score(f), hit.chunk_id) for hit, f in candidates),
            key=lambda x: (-x[0], x[1]),
        )
        return [Hit(c, s) for s, c in scored[:k]]

    def close(self) -> None:
        self.first_stage.close()
