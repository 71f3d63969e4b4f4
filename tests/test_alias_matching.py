"""AliasEmbedder.concepts against the matching rules written out as the plain loop.

The oracle below is the rule of ``AliasEmbedder``'s docstring done the slow way: scan every
word (English phrases, longest first, whole words, a word touching a Chinese character never
matches) and every character (Chinese aliases as substrings, longest first), left to right,
non-overlapping. The embedder only tries positions where a match can start; both must count
the same concepts on any text.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from evalkit.fixtures import load_fixture
from evalkit.systems.text import normalize
from evalkit.systems.vectors import AliasEmbedder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD_RUN = re.compile(r"[^\W_]+")
_LATIN_WORD = re.compile(rf"[^\W_{_CJK}]+")


def _is_cjk(text: str) -> bool:
    return re.search(f"[{_CJK}]", text) is not None


def oracle_concepts(table: dict[str, list[str]], text: str) -> Counter[int]:
    ids = sorted(table)
    alias_to_concept: dict[str, int] = {}
    for index, concept_id in enumerate(ids):
        for alias in table[concept_id]:
            key = normalize(alias).strip()
            if key:
                alias_to_concept.setdefault(key, index)
    phrases: dict[tuple[str, ...], int] = {}
    for alias, index in sorted(alias_to_concept.items()):
        words = tuple(_LATIN_WORD.findall(alias))
        if words and not _is_cjk(alias):
            phrases.setdefault(words, index)
    longest = max((len(p) for p in phrases), default=0)
    cjk = sorted(
        ((a, i) for a, i in alias_to_concept.items() if _is_cjk(a)),
        key=lambda a: (-len(a[0]), a[0]),
    )
    found: Counter[int] = Counter()
    normalized = normalize(text)
    words = [w if not _is_cjk(w) else "" for w in _WORD_RUN.findall(normalized)]
    i = 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            span = words[i : i + n]
            if "" not in span and tuple(span) in phrases:
                found[phrases[tuple(span)]] += 1
                i += n
                break
        else:
            i += 1
    j = 0
    while j < len(normalized):
        for alias, concept in cjk:
            if normalized.startswith(alias, j):
                found[concept] += 1
                j += len(alias)
                break
        else:
            j += 1
    return found


def _texts(table: dict[str, list[str]], seed: int, count: int) -> list[str]:
    """Random texts made of the table's aliases (whole, cut, glued), filler words and
    Chinese characters, punctuation and digits."""
    rng = np.random.default_rng(seed)
    aliases = sorted({a for values in table.values() for a in values})
    filler = ["the", "of", "Data", "65", "x1", "年满", "的", "，", "。", "-", " ", "é"]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(int(rng.integers(1, 40))):
            roll = rng.random()
            if roll < 0.5:
                alias = aliases[int(rng.integers(len(aliases)))]
                if rng.random() < 0.2:
                    alias = alias[: int(rng.integers(1, len(alias) + 1))]
                parts.append(alias.upper() if rng.random() < 0.1 else alias)
            elif roll < 0.8:
                parts.append(filler[int(rng.integers(len(filler)))])
            else:
                parts.append(chr(int(rng.integers(0x4E00, 0x4E00 + 200))))
            parts.append(["", " ", " ", "，"][int(rng.integers(4))])
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("fixture", ["synthetic-bilingual-v1", "synthetic-bilingual-dev-v1"])
def test_concepts_match_the_plain_scan(fixture: str) -> None:
    aliases = load_fixture(FIXTURES / fixture).aliases
    assert aliases is not None
    table = {k: list(v) for k, v in aliases.mapping().items()}
    embedder = AliasEmbedder(table)
    texts = _texts(table, seed=7, count=400)
    mismatches = [t for t in texts if embedder.concepts(t) != oracle_concepts(table, t)]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} texts differ"
    # the texts do exercise the matching: most of them contain concepts
    assert sum(bool(oracle_concepts(table, t)) for t in texts) > 300


def test_overlapping_and_nested_aliases() -> None:
    table = {
        "a": ["new york", "york"],
        "b": ["new york city"],
        "c": ["年满65岁", "65岁"],
        "d": ["岁"],
    }
    embedder = AliasEmbedder(table)
    for text in ["New York City and york", "new new york", "年满65岁，65岁 岁", "new york岁city"]:
        assert embedder.concepts(text) == oracle_concepts(table, text), text
