"""Tokenization shared by the reference systems, for English and Chinese alike.

Choices, and why:

- Text is NFKC-normalized and lower-cased, so full-width forms and case never split a term.
- Runs of Latin letters and digits are words. English words drop the Lucene English stop set
  (:func:`evalkit.systems.stopwords.stopwords`, ``"lucene"``) and are stemmed with the
  Snowball English stemmer (``PyStemmer``): the combination most BM25 baselines (Lucene,
  Pyserini, bm25s) use, so our BM25 is comparable with theirs.
- Runs of CJK ideographs become overlapping character bigrams (a lone ideograph stays a
  unigram), as Lucene's CJK analyzer does. Bigrams need no dictionary, cannot mis-segment the
  invented names of a synthetic corpus, and match any two-character word; a segmenter such as
  jieba would add a large dictionary and segmentation errors on out-of-vocabulary names.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import re
import unicodedata
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import Stemmer

from evalkit.systems.stopwords import stopwords

__all__ = [
    "STOPWORDS",
    "TOKEN_LISTS_VECTORIZED_FROM",
    "VECTORIZED_FROM",
    "index_term_lists",
    "index_terms",
    "index_terms_batch",
    "normalize",
    "shared_term_lists",
    "token_lists",
    "token_term_lists",
    "tokenize",
]

STOPWORDS = stopwords("lucene")

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")
_CJK_CLASS = f"[{_CJK.encode('ascii').decode('unicode_escape')}]"  # for Arrow's RE2: characters
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
    try:  # the common case at scale: every word seen before
        parts = list(filter(None, map(_FORMS.__getitem__, words)))
    except KeyError:
        parts = list(filter(None, map(_form, words)))
    if _CJK_RE.search(normalized):
        for run in _CJK_RUN_RE.findall(normalized):
            if len(run) == 1:
                parts.append(run)
            else:
                parts += map(operator.add, run, run[1:])  # overlapping bigrams
    return " ".join(parts)


def index_terms_batch(texts: Sequence[str]) -> list[str]:
    """``[index_terms(text) for text in texts]``, computed over the whole batch at once.

    For indexing large corpora (issue 21). The texts are joined by NUL characters into one array
    of code points, and each step of :func:`index_terms` is done for the whole array:

    - NFKC: every code point whose NFKC form is one code point is replaced by it (a table); the
      result is compatibility-equivalent to the input, so when it is in NFKC (checked) it *is*
      the input's NFKC form. Otherwise the texts are normalized one by one.
    - lower-casing: one ``str.lower`` of the joined text (NUL is neither cased nor
      case-ignorable, so no case rule reaches across texts).
    - runs: every code point is classed by a table built once from the very expressions
      :func:`index_terms` uses (Latin word character, CJK ideograph, neither); both are single
      character classes, so the runs are exactly the runs they match.
    - Latin words: every other character becomes a space and Arrow splits the text; each
      distinct word's form (stem, or nothing for a stop word) is looked up once.
    - CJK: a bigram at each ideograph followed by another, a unigram for a lone one, written as
      UTF-8 by NumPy.

    Each text's terms are then its Latin forms and its CJK terms, in text order, joined by
    Arrow. Texts holding NUL or a lone surrogate take :func:`index_terms` itself, and so does a
    batch of fewer than ``VECTORIZED_FROM`` texts (the tables cost more than they save there).
    The result is the same strings, character for character (``tests/test_systems_scale.py``).
    About twice as fast as :func:`index_terms` on the generated corpora (3.5 s instead of 6.8 s
    of CPU for 100,000 chunks).
    """
    if len(texts) < VECTORIZED_FROM:
        return [index_terms(text) for text in texts]
    return _index_terms_vectorized(texts)


def index_term_lists(texts: Sequence[str]) -> Any:
    """:func:`index_terms_batch`'s terms, before they are joined: an Arrow ``large_list`` of
    ``large_string``, one list of terms per text (the same terms, in order; a text without
    terms may hold one empty string). For the bulk FTS5 segment
    (``evalkit.systems.fts5_segment``), which would otherwise split the joined strings again.
    """
    import pyarrow as pa  # imported on use: only bulk indexing needs it
    import pyarrow.compute as pc

    terms = _term_lists_vectorized(texts) if len(texts) >= VECTORIZED_FROM else None
    if terms is None or isinstance(terms, list):
        strings = terms if terms is not None else [index_terms(text) for text in texts]
        return pc.split_pattern(pa.array(strings, pa.large_string()), " ")
    return terms


def token_lists(texts: Sequence[str]) -> list[list[str]]:
    """``[tokenize(text) for text in texts]``, computed over the batch at once from
    ``TOKEN_LISTS_VECTORIZED_FROM`` texts on: for embedding large corpora.

    :func:`index_term_lists` gives each text's Latin terms, then its CJK terms, each in text
    order: exactly :func:`tokenize`'s list when a text has terms of one kind only (nearly every
    text of a corpus in one language and script). A text with both is tokenized by
    :func:`tokenize` itself (a CJK term holds only CJK ideographs, a Latin term none), and so
    is every text of a batch the tables do not take. The same lists, term for term
    (``tests/test_systems_scale.py``); about four times as fast as :func:`tokenize` on 10,000
    generated chunks (0.35 s against 1.0 s, tables' first use included).
    """
    if len(texts) < TOKEN_LISTS_VECTORIZED_FROM:
        return [tokenize(text) for text in texts]
    terms = _term_lists_vectorized(texts)
    if isinstance(terms, list):
        return [tokenize(text) for text in texts]
    lists: list[list[str]] = terms.to_pylist()
    for row in _mixed_rows(terms).tolist():
        lists[row] = tokenize(texts[row])
    return lists


def token_term_lists(texts: Sequence[str]) -> Any:
    """:func:`token_lists`' lists as an Arrow ``large_list`` of ``large_string``, or ``None``
    where that needs :func:`tokenize` itself (fewer than ``TOKEN_LISTS_VECTORIZED_FROM``
    texts, a batch the tables do not take, a text mixing Latin and CJK terms): for callers
    that work on the terms as arrays."""
    if len(texts) < TOKEN_LISTS_VECTORIZED_FROM:
        return None
    terms = _term_lists_vectorized(texts)
    if isinstance(terms, list) or len(_mixed_rows(terms)):
        return None
    return terms


def _mixed_rows(terms: Any) -> np.ndarray:
    """The rows of an Arrow list array of terms that hold both CJK and other terms."""
    import pyarrow.compute as pc  # imported on use: only bulk indexing needs it

    offsets = terms.offsets.to_numpy()
    offsets = offsets - offsets[0]  # a slice's offsets point into its parent's values
    is_cjk = pc.match_substring_regex(terms.flatten(), _CJK_CLASS).to_numpy(zero_copy_only=False)
    cjk_before = np.concatenate(([0], np.cumsum(is_cjk, dtype=np.int64)))
    cjk_count = cjk_before[offsets[1:]] - cjk_before[offsets[:-1]]
    mixed: np.ndarray = np.flatnonzero((cjk_count > 0) & (cjk_count < np.diff(offsets)))
    return mixed


#: Texts from which :func:`token_lists` uses the tables of :func:`index_terms_batch` (their
#: entries are looked up once per process; :func:`tokenize` costs about 0.1 ms a chunk).
TOKEN_LISTS_VECTORIZED_FROM = 1_000


#: Texts from which :func:`index_terms_batch` uses its tables (each code point's entries
#: are looked up once per process, on first use: about 0.1 s for a first batch of Latin text).
VECTORIZED_FROM = 10_000


def _index_terms_vectorized(texts: Sequence[str]) -> list[str]:
    terms = _term_lists_vectorized(texts)
    if isinstance(terms, list):
        return terms
    import pyarrow as pa  # imported on use: only bulk indexing needs it
    import pyarrow.compute as pc

    joined: list[str] = pc.binary_join(terms, pa.scalar(" ", pa.large_string())).to_pylist()
    return joined


#: Characters of text whose term lists :func:`shared_term_lists` keeps at most, in all: about
#: 80,000 chunks of 200 characters, whose lists and texts (some 90 MB; 10 MB for 10,000 such
#: chunks) are kept until the block (a repeat) ends.
SHARED_TERM_CHARS = 1 << 24
_SHARED: ContextVar[dict[tuple[str, ...], Any] | None] = ContextVar("shared_terms", default=None)


@contextlib.contextmanager
def shared_term_lists() -> Iterator[None]:
    """Within the block, the term lists of a batch of texts (:func:`index_term_lists`,
    :func:`token_term_lists`) are computed once and handed out again for the same texts, or
    for a batch that a kept one holds one after another: tokenizing is a pure function of each
    text, and the systems of one repeat of an evaluation (lexical, token-hash) tokenize the
    same chunk texts, one all at once, the other in batches. An Arrow array is immutable, so
    every caller gets the same lists as if it had tokenized them itself. Batches up to
    ``SHARED_TERM_CHARS`` characters in all are kept, for the block only. (Each repeat of
    :func:`evalkit.run.evaluate` runs its systems inside one block, so the next repeat
    tokenizes again; issue 48.)"""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _term_lists_vectorized(texts: Sequence[str]) -> Any:
    """The terms of ``texts``: an Arrow list array of terms per text, or (for the texts the
    tables do not take) the strings of :func:`index_terms`; inside :func:`shared_term_lists`,
    an array already computed for the same texts."""
    if not texts:
        return []
    shared = _SHARED.get()
    if shared is None:
        return _term_lists_computed(texts)
    key = tuple(texts)
    terms = shared.get(key)
    if terms is None:
        terms = _shared_slice(shared, key)
    if terms is None:
        terms = _term_lists_computed(texts)
        kept = sum(sum(map(len, batch)) for batch in shared)
        if not isinstance(terms, list) and kept + sum(map(len, key)) <= SHARED_TERM_CHARS:
            shared[key] = terms
    return terms


#: Places :func:`_shared_slice` tries in each kept batch (texts repeated in a corpus give a
#: batch's first text several places; past this many, the batch is tokenized).
_SLICE_TRIES = 16


def _shared_slice(shared: dict[tuple[str, ...], Any], texts: tuple[str, ...]) -> Any:
    """The term lists of ``texts`` cut from a kept batch that holds them one after another
    (a system tokenizing its chunks in batches after another tokenized them all at once; each
    text's terms depend on that text alone), or None."""
    for batch, terms in shared.items():
        start = -1
        for _ in range(_SLICE_TRIES):
            try:
                start = batch.index(texts[0], start + 1, len(batch) - len(texts) + 1)
            except ValueError:
                break
            if all(map(operator.eq, itertools.islice(batch, start, None), texts)):
                return terms.slice(start, len(texts))
    return None


def _term_lists_computed(texts: Sequence[str]) -> Any:
    """:func:`_term_lists_vectorized` of ``texts`` (not empty), computed."""
    joined = "\0".join(texts)
    if joined.count("\0") != len(texts) - 1:
        return [index_terms(text) for text in texts]
    try:
        points = np.frombuffer(joined.encode("utf-32-le"), dtype="<u4")
    except UnicodeEncodeError:  # a lone surrogate
        return [index_terms(text) for text in texts]
    import pyarrow as pa  # imported on use: only bulk indexing needs it
    import pyarrow.compute as pc

    tables = _char_tables(points)
    points = tables.nfkc[points]
    tables = _char_tables(points)  # the NFKC forms' entries too
    if not tables.stable[points].all():  # then check the mapped text, or normalize text by text
        normalized = points.tobytes().decode("utf-32-le")
        if not unicodedata.is_normalized("NFKC", normalized):
            normalized = "\0".join(unicodedata.normalize("NFKC", text) for text in texts)
        points = np.frombuffer(normalized.encode("utf-32-le"), dtype="<u4")
        tables = _char_tables(points)
    if tables.special_case[points].any():
        points = np.frombuffer(
            points.tobytes().decode("utf-32-le").lower().encode("utf-32-le"), dtype="<u4"
        )
    else:
        points = tables.lower[points]
    tables = _char_tables(points)  # the lower-case forms' entries too
    starts = np.concatenate(([0], np.flatnonzero(points == 0) + 1))
    kind = tables.kind[points]
    latin, cjk = kind == _LATIN, kind == _CJK_KIND

    # Latin runs: every other character becomes a space, so a whitespace split yields the runs.
    word_starts = np.flatnonzero(latin & ~np.concatenate(([False], latin[:-1])))
    blanked = np.where(latin, points, np.uint32(32)).astype("<u4").tobytes().decode("utf-32-le")
    words = pc.ascii_split_whitespace(pa.array([blanked], pa.large_string())).values
    words = words.filter(pc.not_equal(words, ""))  # the split's ends
    encoded = pc.dictionary_encode(words)
    distinct = encoded.dictionary.to_pylist()
    cached = list(map(_FORMS.get, distinct))  # at scale nearly every word was seen before
    forms = _forms(distinct, cached) if None in cached else cached
    stems = pa.array(forms, pa.large_string()).take(encoded.indices)
    kept = pc.not_equal(stems, "")
    word_rows = np.searchsorted(starts, word_starts, side="right")[kept.to_numpy(False)] - 1

    # CJK runs: a bigram at each ideograph followed by one, a unigram at a lone ideograph. All
    # of _CJK lies in U+3400..U+FAFF, three bytes each in UTF-8.
    after = np.concatenate((cjk[1:], [False]))
    at = np.flatnonzero(cjk & (after | ~np.concatenate(([False], cjk[:-1]))))
    bigram = after[at]
    pairs = np.stack((points[at], points[np.minimum(at + 1, len(points) - 1)]), axis=1)
    utf8 = np.empty((len(at), 2, 3), dtype=np.uint8)
    utf8[:, :, 0] = 0xE0 | (pairs >> 12)
    utf8[:, :, 1] = 0x80 | ((pairs >> 6) & 0x3F)
    utf8[:, :, 2] = 0x80 | (pairs & 0x3F)
    used = np.ones((len(at), 2, 3), dtype=bool)
    used[~bigram, 1] = False  # a unigram's second character is not part of it
    cjk_offsets = np.concatenate(([0], np.cumsum(np.where(bigram, 6, 3))))
    cjk_terms = pa.LargeStringArray.from_buffers(
        len(at), pa.py_buffer(cjk_offsets.astype(np.int64)), pa.py_buffer(utf8[used])
    )
    cjk_rows = np.searchsorted(starts, at, side="right") - 1

    # Each text's terms: its Latin forms, then its CJK terms, both in text order.
    n = len(texts)
    latin_count = np.bincount(word_rows, minlength=n)
    cjk_count = np.bincount(cjk_rows, minlength=n)
    offsets = np.concatenate(([0], np.cumsum(latin_count + cjk_count)))
    latin_first = np.cumsum(latin_count) - latin_count
    cjk_first = np.cumsum(cjk_count) - cjk_count
    destination = np.concatenate(
        (
            offsets[word_rows] + np.arange(len(word_rows)) - latin_first[word_rows],
            offsets[cjk_rows]
            + latin_count[cjk_rows]
            + np.arange(len(cjk_rows))
            - cjk_first[cjk_rows],
        )
    )
    order = np.empty_like(destination)
    order[destination] = np.arange(len(destination))
    terms = pa.concat_arrays([stems.filter(kept), cjk_terms]).take(pa.array(order))
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), terms)


def _form(word: str) -> str:
    """A Latin run's index term ("" for a stop word), through the cache of forms (cleared when
    it holds ``_FORMS_LIMIT`` of them)."""
    form = _FORMS.get(word)
    if form is None:
        if len(_FORMS) >= _FORMS_LIMIT:
            _FORMS.clear()
        form = _FORMS[word] = "" if word in STOPWORDS else _stem(word)
    return form


def _forms(words: Sequence[str], known: Sequence[str | None]) -> list[str]:
    """The index terms of ``words`` (``known``: each one's form from ``_FORMS``, or None), the
    new ones stemmed in one call (the forms :func:`_form` gives) and cached while the cache
    stays within ``_FORMS_LIMIT`` (cleared first when they would not fit)."""
    new = [word for word, form in zip(words, known, strict=True) if form is None]
    stems = iter(_STEMMER.stemWords([word for word in new if word not in STOPWORDS]))
    made = {word: "" if word in STOPWORDS else str(next(stems)) for word in new}
    if len(_FORMS) + len(made) > _FORMS_LIMIT:
        _FORMS.clear()
    if len(made) <= _FORMS_LIMIT:
        _FORMS.update(made)
    return [made[word] if form is None else form for word, form in zip(words, known, strict=True)]


_LATIN, _CJK_KIND = 1, 2


class _CharTables(NamedTuple):
    kind: np.ndarray  # _LATIN, _CJK_KIND or 0
    nfkc: np.ndarray  # the NFKC form where that is one code point, else the code point itself
    stable: np.ndarray  # in NFKC, combining class 0, and never the second of a composition
    lower: np.ndarray  # str.lower() where that is one code point, else the code point itself
    special_case: np.ndarray  # str.lower() is not that (longer, or the context-dependent sigma)
    known: np.ndarray  # the code points whose entries are filled in


_CODE_POINTS = 0x110000
# the code points whose properties are looked up; the rest (U+D800..U+DFFF surrogates,
# U+40000..U+DFFFF and U+E1000 on: unassigned or private use) are their own NFKC and
# lower-case forms, and stable
_LOOKED_UP = (range(0xD800), range(0xE000, 0x40000), range(0xE0000, 0xE1000))


def _char_tables(points: np.ndarray | None = None) -> _CharTables:
    """The per-code-point tables of :func:`index_terms_batch`, with the entries of ``points``
    (uint32 code points; ``None``: every code point, about 1 s) filled in. Entries are filled
    on first use and kept: an index of 10,000 texts looks up a few thousand code points, not
    1.1 million.

    ``kind`` comes from the expressions of :func:`index_terms` themselves (each one character
    class repeated, so a character's class does not depend on its neighbours). A text whose
    code points are all ``stable`` passes Unicode's quick check for NFKC, so it is in NFKC.
    """
    tables = _empty_tables()
    if points is None:
        wanted = np.flatnonzero(~tables.known)
    else:  # one gather: after a first batch, usually no code point is missing
        missing = points[~tables.known[points]]
        wanted = (
            np.flatnonzero(np.bincount(missing, minlength=_CODE_POINTS))
            if missing.size
            else missing
        )
    if wanted.size:
        _fill(tables, wanted)
    return tables


@lru_cache(maxsize=1)
def _empty_tables() -> _CharTables:
    stable = np.ones(_CODE_POINTS, dtype=bool)
    stable[0xD800:0xE000] = False  # surrogates (never reach the tables: see the encode)
    return _CharTables(
        kind=np.zeros(_CODE_POINTS, dtype=np.uint8),
        nfkc=np.arange(_CODE_POINTS, dtype="<u4"),
        stable=stable,
        lower=np.arange(_CODE_POINTS, dtype="<u4"),
        special_case=np.zeros(_CODE_POINTS, dtype=bool),
        known=np.zeros(_CODE_POINTS, dtype=bool),
    )


@lru_cache(maxsize=1)
def _composition_seconds() -> frozenset[int]:
    """The code points that are the second of a two-code-point canonical decomposition (they
    compose with what precedes them), and Hangul's vowels and trailing jamo."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for point in itertools.chain(*_LOOKED_UP):
        decomposition = unicodedata.decomposition(chr(point))
        if decomposition and not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    return frozenset(seconds)


def _fill(tables: _CharTables, wanted: np.ndarray) -> None:
    """Fill in the entries of the code points ``wanted`` (none of them surrogates' entries
    change: a surrogate never reaches the tables)."""
    seconds = _composition_seconds()
    points = [int(p) for p in wanted if not 0xD800 <= p < 0xE000]
    chars = "".join(map(chr, points))  # a class does not depend on the neighbours
    for pattern, value in ((_LATIN_RUN_RE, _LATIN), (_CJK_RUN_RE, _CJK_KIND)):
        for match in pattern.finditer(chars):
            tables.kind[points[match.start() : match.end()]] = value
    for point in points:
        if not (point < 0xD800 or 0xE000 <= point < 0x40000 or 0xE0000 <= point < 0xE1000):
            tables.stable[point] = point not in seconds
            continue
        char = chr(point)
        form = unicodedata.normalize("NFKC", char)
        if len(form) == 1:
            tables.nfkc[point] = ord(form)
        tables.stable[point] = not (form != char or unicodedata.combining(char) or point in seconds)
        small = char.lower()
        if len(small) == 1 and point != 0x3A3:  # Σ lower-cases by its context
            tables.lower[point] = ord(small)
        else:
            tables.special_case[point] = True
    tables.known[wanted] = True
