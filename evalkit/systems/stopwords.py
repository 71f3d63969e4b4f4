"""English stop-word lists, shipped as data files in the package (``evalkit/systems/data``).

- ``"lucene"``: Apache Lucene's English stop set (``EnglishAnalyzer``), 33 words, Apache-2.0.
  The lexical systems drop these before stemming (:mod:`evalkit.systems.text`).
- ``"nltk"``: the English list of NLTK's stopwords corpus, 179 words, Apache-2.0. The reranker's
  query-term weighting uses it (:mod:`evalkit.systems.rerank`).

Each file names its origin and licence in its header. Both lists are the ones evalkit read from
bm25s before 0.3 (``STOPWORDS_EN`` and ``STOPWORDS_EN_PLUS``), so rankings did not change when
bm25s left the core dependencies; ``tests/test_stopwords.py`` checks them against bm25s.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final, Literal

__all__ = ["STOPWORD_LISTS", "stopwords"]

StopwordList = Literal["lucene", "nltk"]

STOPWORD_LISTS: Final[dict[str, str]] = {
    "lucene": "stopwords-en-lucene.txt",
    "nltk": "stopwords-en-nltk.txt",
}
"""List name -> its file in ``evalkit/systems/data``."""


@functools.cache
def stopwords(name: StopwordList) -> frozenset[str]:
    """The stop words of list ``name`` (module docs)."""
    text = (
        resources.files("evalkit.systems")
        .joinpath("data", STOPWORD_LISTS[name])
        .read_text(encoding="utf-8")
    )
    words = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return frozenset(word for word in words if word)
