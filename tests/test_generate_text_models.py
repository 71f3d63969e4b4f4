"""``generate_fixture``'s text models (issue 21): ``zipf`` has the term statistics of real text,
``uniform`` is the generator before issue 21, unchanged.

Oracles: content hashes of the old generator's output (recorded below with the code of commit
a0f2651, before the text models existed), and rank/frequency statistics counted here from the
generated text with ``collections.Counter`` and ``numpy.polyfit``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.fixtures import generate_fixture, validate_fixture
from evalkit.fixtures.diff import fixture_content_hash
from evalkit.fixtures.generate import EN_VOCABULARY, ZH_INVENTORY, TextModel
from evalkit.systems.text import STOPWORDS, tokenize

# fixture_content_hash of generate_fixture(...) at commit a0f2651 (the generator before the
# text models), computed from a `git archive a0f2651` tree.
OLD_HASHES: dict[str, tuple[dict[str, Any], str]] = {
    "seed 7, defaults": (
        {"seed": 7},
        "sha256:3c380211dc938fb4d54d7f7cb93ae55da1e73e27fba93c99e75af4054f8c83fb",
    ),
    "seed 3, 30 documents": (
        {
            "seed": 3,
            "documents": 30,
            "chunks_per_document": 3,
            "queries": 40,
            "near_duplicate_fraction": 0.3,
        },
        "sha256:b847eaf217a33e5eb54096088f3453c3081f463ba7b31aaebe2f2e1f629e1ce6",
    ),
}


@pytest.mark.parametrize("case", sorted(OLD_HASHES))
def test_uniform_model_is_the_old_generator(case: str) -> None:
    kwargs, expected = OLD_HASHES[case]
    assert fixture_content_hash(generate_fixture(**kwargs, text_model="uniform")) == expected
    assert fixture_content_hash(generate_fixture(**kwargs)) != expected  # zipf is the default


@pytest.mark.parametrize("model", ["zipf", "uniform"])
def test_both_models_keep_the_generator_guarantees(model: TextModel) -> None:
    fixture = generate_fixture(3, documents=40, queries=60, near_duplicate_fraction=0.3,
                               text_model=model)  # fmt: skip
    assert fixture == generate_fixture(3, documents=40, queries=60, near_duplicate_fraction=0.3,
                                       text_model=model)  # fmt: skip
    assert validate_fixture(fixture) == []
    assert any(chunk.near_duplicate_of for chunk in fixture.chunks)
    texts = {chunk.id: chunk.text for chunk in fixture.chunks}
    for query in fixture.queries:
        assert ("no-answer" in query.tags) == (not query.answerable)
        for judgment in query.judgments:
            for span in judgment.spans:
                assert span.text in texts[judgment.chunk_id]  # verbatim
    for lang in ("zh", "en"):
        queries = fixture.queries_by_language[lang]
        assert 0 < sum(not q.answerable for q in queries) < len(queries)


def test_text_model_is_checked() -> None:
    with pytest.raises(InputError, match="text_model"):
        generate_fixture(1, text_model="markov")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def large() -> dict[str, list[str]]:
    """Chinese characters and English words of 2,000 chunks' text in each model."""
    out: dict[str, list[str]] = {}
    models: tuple[TextModel, ...] = ("zipf", "uniform")
    for model in models:
        fixture = generate_fixture(9, documents=500, queries=8, text_model=model)
        zh = "".join(c.text for c in fixture.chunks if c.language == "zh")
        out[f"{model}-zh"] = [ch for ch in zh if "\u4e00" <= ch <= "\u9fff"]
        en = " ".join(c.text for c in fixture.chunks if c.language == "en")
        out[f"{model}-en"] = en.lower().replace(".", "").split()
    return out


def _zipf_slope(tokens: list[str], first: int, last: int) -> float:
    """Slope of log frequency against log rank over ranks ``first``..``last``."""
    counts = np.array(sorted(Counter(tokens).values(), reverse=True)[first - 1 : last], float)
    ranks = np.arange(first, first + len(counts), dtype=float)
    return float(np.polyfit(np.log(ranks), np.log(counts), 1)[0])


def test_zipf_chinese_characters_follow_a_zipf_law_over_3500(large: dict[str, list[str]]) -> None:
    chars = large["zipf-zh"]
    counts = Counter(chars)
    assert len(counts) <= ZH_INVENTORY == 3_500
    top_share = counts.most_common(1)[0][1] / len(chars)
    assert 0.03 < top_share < 0.05  # about 的's share (module docstring)
    assert -1.15 < _zipf_slope(chars, 20, 1000) < -0.85
    # uniform over 20,992 characters: no character above 0.1%
    uniform = Counter(large["uniform-zh"])
    assert uniform.most_common(1)[0][1] / len(large["uniform-zh"]) < 0.001


def test_zipf_english_words_follow_a_zipf_law_headed_by_function_words(
    large: dict[str, list[str]],
) -> None:
    words = large["zipf-en"]
    counts = Counter(words)
    assert counts.most_common(1)[0][0] == "the"
    assert 0.06 < counts["the"] / len(words) < 0.10  # 1 / H(200,000) = 7.8%
    stop_share = sum(n for w, n in counts.items() if w in STOPWORDS) / len(words)
    assert 0.2 < stop_share < 0.45  # the stop list removes about a third of running English
    assert -1.15 < _zipf_slope(words, 20, 2000) < -0.85
    # a large vocabulary: most of 2,000 chunks' words are types seen once or twice
    assert len(counts) > 0.2 * len(words)
    assert EN_VOCABULARY == 200_000


def test_zipf_repeats_bigrams_where_uniform_hardly_does() -> None:
    def repeated_share(model: TextModel) -> float:
        """The share of the Chinese chunks' bigram occurrences whose bigram occurs again."""
        fixture = generate_fixture(9, documents=500, queries=8, text_model=model)
        counts = Counter(t for c in fixture.chunks if c.language == "zh" for t in tokenize(c.text))
        return sum(n for n in counts.values() if n > 1) / sum(counts.values())

    # 21,000 ** 2 possible uniform bigrams against about 85,000 drawn: almost only the 5%
    # near-duplicate chunks repeat theirs.
    assert repeated_share("uniform") < 0.15
    assert repeated_share("zipf") > 0.3  # 0.39 measured; it grows with the corpus
