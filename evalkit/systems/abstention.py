"""When ``hybrid-rerank`` returns nothing: its abstention rules, and signals measured for them.

``HeuristicReranker`` (:mod:`evalkit.systems.rerank`) applies the rules in ``search`` and
computes the signals in ``abstention_signals``; this module defines them and the question-form
test (``asks_yes_no``) that rules 3 and 4 need.

Abstention
----------
``search`` returns nothing ("no answer") when the first stage finds no candidate, or when

1. ``abstain_on_unseen`` is true and the query mentions a concept of the table that no indexed
   chunk mentions (an out-of-corpus entity check; it never fires without a table); or
2. ``min_support`` is set (``None``, the default, switches the rule off; see
   :mod:`evalkit.systems.rerank`), some candidate is in the query's language and no candidate
   has ``support > min_support``.
   A candidate's support is the larger of its term support and its concept support: the
   IDF-weighted share of *all* the query's terms (its concepts) that it contains, where a
   Latin-script term no chunk contains weighs the largest IDF of the corpus (an unknown word is
   the most specific part of a question) and such a CJK bigram ``unseen_cjk_weight`` times that
   (default 0: a bigram across a word boundary is often unseen and says nothing). With
   ``min_support`` 0 the rule fires when no candidate shares a single content word or concept
   with the query. When every candidate is in another language (a cross-language match
   through the table, or BM25 on a shared question word), sharing no words is expected and the
   rule does not fire.

Two more rules are opt-in (off in the reference system; :mod:`evalkit.systems.rerank` says
why). Both need the table and a yes/no question (``asks_yes_no``: an English auxiliary or modal
verb first, a Chinese 吗 at the end or an A-not-A form such as 有没有; grammar, not vocabulary),
the kind of question whose "no answer" is "the corpus does not have that":

3. ``abstain_on_unknown_item``: some candidate is in the query's language and the question
   names an item no chunk contains (``unknown_items``): a Latin content term no chunk has (nor a
   term sharing its first ``ITEM_PREFIX`` = 4 letters, a cheap guard against stemming misses
   such as child/children), or a run of two or more CJK characters no chunk has (function
   characters left out; a single character is often part of a known word); a word of an alias
   of a concept the query mentions is never unknown (the table names it in the corpus);
4. ``abstain_on_apart``: the question mentions two or more concepts and no candidate mentions
   all of them (the asked item and the entity never meet in one chunk).

Signals measured, not used
--------------------------
``HeuristicReranker.abstention_signals`` computes further candidate signals of "no answer"
(``AbstentionSignals``: score gap and normalized gap, lexical/vector top-1 agreement, the asked
attribute's coverage, answer-shape evidence, question form, unknown items, and combinations with
the yes/no form). ``benchmarks/abstention_signals.py`` measures each one's AUC and fits one
threshold per signal on the development fixture (with and without its table) and on generated
fixtures with in-domain no-answer queries (``evalkit.fixtures.in_domain``), under the issue's
limit of 10 % answerable queries without results on every set. AUCs on the development fixture
with its table (1 = perfect): score gap 0.67, normalized gap 0.66, agreement 0.66, support 0.53,
attribute coverage 0.54, answer evidence 0.50 (its no-answer queries ask for no shape that the
candidates lack), yes/no form 0.79, unknown items 0.70, yes/no with disagreement 0.81, yes/no
with a small normalized gap 0.83. At the fitted thresholds no signal reaches NoAnswerFP <= 0.5
on the development fixture with its table: the best are "a yes/no question naming an unknown
item" (0.545 at NoResult 0.027; without the table 0.455 at 0.095) and the normalized gap
(0.727 at 0.081). The first is rule 3's test without its table condition, which the previous
round measured on the held-out fixture as not generalizing (:mod:`evalkit.systems.rerank`); the
yes/no signals are at chance there (AUC 0.50-0.55, ``abstention_signals.py --fixture``, measured
once). ``search`` therefore uses none of them; they stay available for measurement.

A further round added query-performance signals (``unseen_share``, ``rare_coverage``,
``top_overlap``, ``self_score_ratio``, ``score_dispersion``, ``same_language``; AUC 0.48-0.55 on
the development fixture with its table, 0.33-0.65 per query language) and L2-regularized
logistic combinations of all the signals in ``abstention_signals.py``, fitted on the same three
sets (development fixture with and without its table, generated seeds 1-3 with in-domain
no-answer queries of seeds 11-13), every set weighing the same, penalty 1 on standardized
coefficients, threshold chosen as above. In sample the combinations look strong on the
development fixture (AUC 0.842 with every signal, 0.934 with one model per language and without
the question form), but out of fold (5 folds, seed 0, the development fixture's two copies
sharing folds) they fall to 0.657 and 0.517, and at the out-of-fold thresholds NoAnswerFP is
0.909-1.000 there. A model fitted on the generated sets alone reaches NoAnswerFP 0.144 on them
and is near chance on the development fixture (AUC 0.660); measured once on the held-out fixture
the combinations reach AUC 0.52-0.63 and NoAnswerFP 0.857-1.000 at NoResult at most 0.085. No
rule built on these signals meets the issue's abstention target honestly, so none is wired into
``search``; reproduce with
``.venv/bin/python benchmarks/abstention_signals.py --by-language [--fixture DIR]``.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from evalkit.systems.text import normalize

__all__ = [
    "EMPTY_SIGNALS",
    "FUNCTION_CHARS",
    "ITEM_PREFIX",
    "SIGNAL_ANSWER_TOP",
    "SIGNAL_DISPERSION_TOP",
    "SIGNAL_RARE",
    "SIGNAL_TOP",
    "AbstentionSignals",
    "asks_yes_no",
]


class AbstentionSignals(NamedTuple):
    """Per-query signals of "the corpus has no answer", measured but not used by ``search``.

    Over the reranked candidates (``HeuristicReranker.abstention_signals``):

    - ``top_score``, ``margin``, ``relative_margin``: the best score, its gap to the second,
      the gap divided by the best;
    - ``agreement``: 1 when the lexical and the vector component rank the same chunk first, 0
      when they rank different chunks first, 0.5 when one of them returns nothing (no table);
    - ``support``: the best candidate's support (abstention rule 2);
    - ``attribute_coverage``: the query's units (terms, unseen Latin terms at the largest IDF,
      and concepts) that at least two of the top ``SIGNAL_TOP`` (5) candidates hold are its
      *entity*; the rest is the *asked attribute*; the largest IDF-weighted share of the
      attribute that one of the top ``SIGNAL_ANSWER_TOP`` (3) candidates holds (1 without an
      attribute);
    - ``answer_evidence``: 1 when the query asks for no answer shape (``answer_shapes``) or one
      of the top 3 candidates shows one it asks for (``evidence_shapes``), else 0;
    - ``yes_no``: 1 for a yes/no question (``asks_yes_no``);
    - ``unknown_items``: how many parts of the query no chunk contains (rule 3's items);
    - ``unseen_share``: IDF-weighted share of the query's content terms (``QUERY_STOPWORDS``
      left out) that no chunk contains, weighted as rule 2 weighs them (an unseen Latin term
      the largest IDF of the corpus, an unseen CJK bigram ``unseen_cjk_weight`` times that);
    - ``rare_coverage``: share of the query's ``SIGNAL_RARE`` (2) rarest content terms by
      corpus IDF, among those some chunk contains, that the best candidate holds (1 without
      any);
    - ``top_overlap``: share of the lexical component's top ``SIGNAL_TOP`` (5) that are also in
      the vector component's top 5 (0.5 when one of them returns nothing);
    - ``self_score_ratio``: the best BM25 score of the query divided by its *self-score*, the
      sum of the IDFs of its distinct content terms that some chunk contains (BM25 of a term
      seen once in a chunk of average length is about its IDF); 0 without such terms;
    - ``score_dispersion``: the standard deviation of the top 10 reranked scores divided by
      their mean (a query-performance predictor in the manner of NQC: a query the corpus
      answers tends to single out a few chunks); 0 when the mean is 0;
    - ``same_language``: 1 when the best candidate is in the query's language, else 0 (0.5
      when the query's language is unknown).
    """

    top_score: float
    margin: float
    relative_margin: float
    agreement: float
    support: float
    attribute_coverage: float
    answer_evidence: float
    yes_no: float
    unknown_items: float
    unseen_share: float
    rare_coverage: float
    top_overlap: float
    self_score_ratio: float
    score_dispersion: float
    same_language: float


SIGNAL_TOP: Final = 5
SIGNAL_ANSWER_TOP: Final = 3
SIGNAL_RARE: Final = 2
SIGNAL_DISPERSION_TOP: Final = 10
EMPTY_SIGNALS: Final = AbstentionSignals(*([0.0] * len(AbstentionSignals._fields)))
ITEM_PREFIX: Final = 4

# English yes/no questions open with an auxiliary or modal verb; Chinese ones end in the
# particle 吗 or use an A-not-A form (有没有, 能不能, ...). Grammar, not any fixture's vocabulary.
_YES_NO_EN: Final = re.compile(
    r"^\W*(?:is|are|am|was|were|can|could|do|does|did|will|would|may|might|must|shall|should|"
    r"has|have|had)\b"
)
_YES_NO_ZH: Final = re.compile(
    r"吗\W*$|有没有|能不能|可不可以|是不是|会不会|要不要|行不行|准不准|让不让|允不允许"
)
# Chinese function characters (particles, pronouns, question words): never the asked item.
FUNCTION_CHARS: Final = frozenset(
    "吗呢吧么啊呀嘛的了着过是在有没不要能会可以和与或及我你他她它们这那哪几多少怎什谁为请问"
)


def asks_yes_no(text: str) -> bool:
    """True when ``text`` is a yes/no question (English auxiliary first, Chinese 吗 or A-not-A).

    >>> asks_yes_no("Can I park here?"), asks_yes_no("Where can I park?")
    (True, False)
    """
    normalized = normalize(text)
    return bool(_YES_NO_EN.match(normalized) or _YES_NO_ZH.search(normalized))
