"""Tokenization shared by the reference systems, for English and Chinese alike.

Choices, and why:

- Text is NFKC-normalized and lower-cased, so full-width forms and case never split a term.
- Runs of Latin letters and digits are words. English words drop the Lucene English stop set
  (``bm25s.stopwords.STOPWORDS_EN``) and are stemmed with the Snowball English stemmer
  (``PyStemmer``): the combination most BM25 baselines (Lucene, Pyserini, bm25s) use, so our
  BM25 is comparable with theirs.
- Runs of CJK ideographs become overlapping character bigrams (a lone ideograph stays a
  unigram), as Lucene's CJK analyzer does. Bigrams need no dictionary, cannot mis-segment the
  invented names of a synthetic corpus, and match any two-character word; a segmenter such as
  jieba would add a large dictionary and segmentation errors on out-of-vocabulary names.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from functools import lru_cache

import Stemmer

from evalkit.systems.stopwords import bm25s_stopwords

__all__ = ["STOPWORDS", "index_terms", "normalize", "tokenize"]

STOPWORDS = bm25s_stopwords("STOPWORDS_EN")

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")
_STEMMER = Stemmer.Stemmer("english")
# For index_terms: Latin runs alone (a CJK character ends a run, as in _TOKEN_RE) and CJK runs.
_LATIN_RUN_RE = re.compile(rf"[^\W_{_CJK}]+")
_CJK_RUN_RE = re.compile(rf"[{_CJK}]+")
# Latin run -> index term ("" for a stop word); bounded so a huge vocabulary cannot grow it
# without limit.
_FORMS: dict[str, str] = {}
_FORMS_LIMIT = 1_000_000


def normalize(text: str) -> str:
    """NFKC-normalized, lower-cased text."""
    return unicodedata.normalize("NFKC", text).lower()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def tokenize(text: str) -> list[str]:
    """Index terms of ``text``: stemmed non-stop English words and CJK character bigrams.

    >>> tokenize("The ferries leave 渡轮码头")
    ['ferri', 'leav', '渡轮', '轮码', '码头']
    """
    terms: list[str] = []
    for run in _TOKEN_RE.findall(normalize(text)):
        if _CJK_RE.match(run):
            if len(run) == 1:
                terms.append(run)
            else:
                terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in STOPWORDS:
            terms.append(_stem(run))
    return terms


def index_terms(text: str) -> str:
    """The terms of :func:`tokenize` joined by single spaces, grouped rather than in text order.

    The same multiset of terms (English terms first, then the CJK terms in text order), so
    a bag-of-words index such as BM25 gets the same statistics, computed with a few C-level
    passes over the text instead of a Python loop over its runs: for indexing large corpora.

    >>> index_terms("The ferries leave 渡轮码头 船")
    'ferri leav 渡轮 轮码 码头 船'
    """
    # NFKC only when the text is not already in that form (the check is a fast C scan; the
    # result is the same): most chunks are.
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    normalized = text.lower()
    words = _LATIN_RUN_RE.findall(normalized)
    forms = _FORMS
    try:  # the common case at scale: every word seen before, so no set of words is built
        parts = list(filter(None, map(forms.__getitem__, words)))
    except KeyError:
        missing = [w for w in set(words) if w not in forms]
        if len(forms) + len(missing) > _FORMS_LIMIT:
            forms.clear()  # then every word of this text is missing, not only the new ones
            missing = list(set(words))
        for word in missing:
            forms[word] = "" if word in STOPWORDS else _stem(word)
        parts = list(filter(None, map(forms.__getitem__, words)))
    if _CJK_RE.search(normalized):
        for run in _CJK_RUN_RE.findall(normalized):
            if len(run) == 1:
                parts.append(run)
            else:
                parts += map(operator.add, run, run[1:])  # overlapping bigrams
    return " ".join(parts)
