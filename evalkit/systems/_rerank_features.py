"""The features ``hybrid-rerank`` scores a candidate with, and the query cues they read.

A private half of :mod:`evalkit.systems.rerank`, which re-exports its public names.

Features
--------
``HeuristicReranker`` rescores the first stage's top ``depth`` candidates (default 30) with
features that do not depend on any fixture's vocabulary, each in [0, 1] (``RerankFeatures``):

- ``prior``: the first-stage fusion score divided by its maximum possible value;
- ``lexical``: the candidate's BM25 score divided by the best BM25 score of the query (0 when
  the lexical component did not return it);
- ``cosine``: cosine of the query's and the chunk's concept vectors (``AliasEmbedder`` over the
  fixture's ``aliases.yaml``; 0 for every candidate when the fixture has no table);
- ``coverage``: IDF-weighted share of the query's evidence units that the chunk (title + text)
  contains. Units are the query's index terms (``evalkit.systems.text``) except the function
  words of questions (``QUERY_STOPWORDS``: what, how, can, 什么, 可以, ...) and its concepts; an
  IDF is BM25's ``log(1 + (N - df + 0.5) / (df + 0.5))`` over the indexed chunks; units no
  indexed chunk contains are left out (no candidate has them);
- ``title``: the same share for the chunk's title alone (a section title names what it answers);
- ``answer``: share of the answer shapes the query asks for (a time, a date, a price, a number;
  detected from question words of English and Chinese, ``answer_shapes``) that the chunk shows
  (``evidence_shapes``: clock times, dates, amounts of money, numerals); 0 when it asks for none;
- ``language``: 1 when the chunk's language is the query's, else 0 (0.5 when unknown);
- ``distinct``: near-duplicate contrast (``search`` computes it only when it has a weight).
  For each other candidate whose term set overlaps the chunk's with Jaccard >=
  ``NEAR_DUPLICATE_JACCARD`` (0.6), let ``a`` (``b``) be the IDF-weighted query units that
  only the chunk (only the other one) contains; the contrast is ``0.5 + 0.5 (a - b) / (a + b)``
  (0.5 when both are 0), averaged over such candidates; a chunk without a near duplicate gets
  0.5. It prefers the one of two look-alike chunks whose differing words are the query's.

``score = sum(weights[name] * feature)``, rounded to 12 decimals; ties go to the chunk ID
ascending.

The cues are grammar, not any fixture's vocabulary: ``QUERY_STOPWORDS`` (the function words of
questions), ``answer_shapes`` and ``evidence_shapes`` (question words of English and Chinese,
and what an answer looks like), and BM25's IDF (``idf``). The system that computes the features
is ``HeuristicReranker`` (:mod:`evalkit.systems.rerank`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Mapping
from typing import Any, Final, NamedTuple

from evalkit.systems.stopwords import stopwords
from evalkit.systems.text import normalize, tokenize

__all__ = [
    "CJK_RE",
    "FEATURE_NAMES",
    "NEAR_DUPLICATE_JACCARD",
    "QUERY_STOPWORDS",
    "SHAPES",
    "RerankFeatures",
    "answer_shapes",
    "evidence_shapes",
    "idf",
    "share",
]


class RerankFeatures(NamedTuple):
    """The reranker's features of one candidate chunk, each in [0, 1] (module docstring)."""

    prior: float
    lexical: float
    cosine: float
    coverage: float
    title: float
    answer: float
    language: float
    distinct: float


FEATURE_NAMES: tuple[str, ...] = RerankFeatures._fields
NEAR_DUPLICATE_JACCARD: Final = 0.6

# --- answer shapes: question words of English and Chinese, and what an answer looks like -------

SHAPES: Final = ("time", "date", "price", "number")
_CUES: Final[dict[str, re.Pattern[str]]] = {
    "time": re.compile(
        r"\b(?:when|what time|how late|how early|until|opening hours|hours|open|opens|close|"
        r"closes|start|starts|begin|begins|leave|leaves|depart|departs|first|last)\b"
        r"|几点|什么时候|何时|时间|几时|开门|关门|首班|末班|营业|出发"
    ),
    "date": re.compile(
        r"\b(?:when|what day|which day|what date|which date|date|dates|which month|what month|"
        r"season|weekday|weekend|year)\b|哪天|哪一天|几号|几月|日期|星期几|周几|什么时候|月份|季节"
    ),
    "price": re.compile(
        r"\b(?:how much|cost|costs|price|prices|fee|fees|fare|fares|pay|charge|charged|"
        r"expensive|cheap|free)\b|多少钱|费用|价格|收费|票价|付|免费|花多少|贵"
    ),
    "number": re.compile(
        r"\b(?:how many|how long|how old|how far|how heavy|how big|how high|how deep|minimum|"
        r"maximum|limit|age|number|weight)\b|多少|几|多长|多久|多大|多重|多远|多高|年龄|限"
    ),
}
_NUMERAL: Final = r"(?:[0-9]+(?:[.,][0-9]+)?|[一二两三四五六七八九十百千万零]+)"
_EVIDENCE: Final[dict[str, re.Pattern[str]]] = {
    "time": re.compile(
        r"\b[0-2]?[0-9][:.][0-5][0-9]\b|\b[0-9]{1,2} ?(?:am|pm|a\.m\.|p\.m\.)|"
        rf"{_NUMERAL}(?:点|时)|上午|下午|中午|晚上|早上|凌晨|noon|midnight|dawn|dusk"
    ),
    "date": re.compile(
        r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
        r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|"
        r"wednesdays|thursdays|fridays|saturdays|sundays|spring|summer|autumn|winter|daily|"
        r"weekly)\b|\b(?:1[0-9]|20)[0-9]{2}\b|"
        rf"{_NUMERAL}(?:月|日|号)|(?:星期|周|礼拜)[一二三四五六日天]|每年|每天|每周|[春夏秋冬][季天]"
    ),
    "price": re.compile(
        r"[$€£¥₩₹]|\b(?:free|dollars?|euros?|pounds?|pence|cents?|yen|yuan|rmb|francs?|"
        r"crowns?|kron(?:a|or|er|ur)|koruna|zloty|rupees?|pesos?|reais|rand)\b|"
        r"元|块钱|欧元|美元|英镑|日元|克朗|法郎|卢比|免费|收费"
    ),
    "number": re.compile(rf"{_NUMERAL}"),
}


def answer_shapes(text: str) -> frozenset[str]:
    """The answer shapes (``time``, ``date``, ``price``, ``number``) a question asks for.

    >>> sorted(answer_shapes("How much is a day ticket?"))
    ['price']
    """
    normalized = normalize(text)
    return frozenset(shape for shape in SHAPES if _CUES[shape].search(normalized))


def evidence_shapes(text: str) -> frozenset[str]:
    """The answer shapes ``text`` shows (clock times, dates, amounts of money, numerals).

    >>> sorted(evidence_shapes("Doors open at 09:30; entry is 5 euros."))
    ['number', 'price', 'time']
    """
    normalized = normalize(text)
    return frozenset(shape for shape in SHAPES if _EVIDENCE[shape].search(normalized))


# Function words of questions, left out of a query's evidence units: NLTK's English stop list as
# bm25s ships it, a few question words it lacks, and Chinese question and pronoun bigrams.
_QUESTION_WORDS: Final = (
    "much many long often far please tell know want would could may might must shall get"
)
_QUESTION_BIGRAMS: Final = (
    "什么 怎么 怎样 哪里 哪儿 哪些 哪个 多少 是否 是不 不是 可以 能不 不能 有没 没有 请问 "
    "我们 我的 你们 需要 要不 还是 想知 知道"
)
QUERY_STOPWORDS: Final = frozenset(
    tokenize(" ".join(sorted(stopwords("nltk"))) + " " + _QUESTION_WORDS)
) | frozenset(_QUESTION_BIGRAMS.split())

CJK_RE: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def idf(document_frequency: int, n_documents: int) -> float:
    """BM25's non-negative IDF: ``log(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))


def share(items: Iterable[Any], present: Container[Any], weight: Mapping[Any, float]) -> float:
    """The ``weight``-weighted share of ``items`` that are ``present`` (0 without weight)."""
    total = matched = 0.0
    for item in items:
        total += weight[item]
        if item in present:
            matched += weight[item]
    return matched / total if total > 0 else 0.0
