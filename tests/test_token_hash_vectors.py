"""token-hash's vectorized embedding (issue 21) is bit for bit the element-wise one it replaced.

The reference, ``_elementwise``, is ``TokenHashEmbedder.embed`` of commit a0f2651 copied
unchanged: a Python loop adding each distinct term's signed ``1 + log(tf)`` to its bucket, in
order of first appearance. Small ``dim`` values put many terms in one bucket, where the order of
the additions decides the last bits.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from evalkit.fixtures import generate_fixture, load_fixture
from evalkit.systems import vectors
from evalkit.systems.text import TOKEN_LISTS_VECTORIZED_FROM, token_term_lists, tokenize
from evalkit.systems.vectors import TokenHashEmbedder, _normalize_rows

DEV = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"


def _elementwise(texts: Sequence[str], dim: int) -> np.ndarray:
    matrix = np.zeros((len(texts), dim))
    for row, text in enumerate(texts):
        for term, count in Counter(tokenize(text)).items():
            digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            bucket, sign = value % dim, 1.0 if value >> 63 else -1.0
            matrix[row, bucket] += sign * (1.0 + math.log(count))
    return _normalize_rows(matrix)


def _corpus() -> list[str]:
    texts = [f"{c.title}\n{c.text}" for c in generate_fixture(3, documents=80).chunks]
    dev = load_fixture(DEV)
    texts += [f"{c.title}\n{c.text}" for c in dev.chunks] + [q.text for q in dev.queries]
    # Repeated terms (tf up to 40), no terms at all, and one term many times.
    return [*texts, "ferry " * 40 + "渡轮" * 7, "", "?!", "the of and", "码头"]


@pytest.mark.parametrize("dim", [2, 3, 16, 1024])
def test_vectors_are_bit_identical_to_the_elementwise_sums(dim: int) -> None:
    texts = _corpus()
    got = TokenHashEmbedder(dim).embed(texts)
    expected = _elementwise(texts, dim)
    assert got.dtype == np.float64
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_vectors_do_not_depend_on_batches_or_the_bucket_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _corpus()
    expected = _elementwise(texts, 3)
    monkeypatch.setattr(vectors, "_BUCKET_CACHE", 5)  # cleared many times within one call
    embedder = TokenHashEmbedder(3)
    parts = [embedder.embed(texts[i : i + 7]) for i in range(0, len(texts), 7)]
    assert np.vstack(parts).tobytes() == expected.tobytes()
    assert embedder.embed(texts).tobytes() == expected.tobytes()
    assert len(embedder._buckets) <= 5
    assert embedder.embed([]).shape == (0, 3)


@pytest.mark.parametrize("dim", [3, 1024])
def test_large_batches_summed_from_term_arrays_are_bit_identical(dim: int) -> None:
    # from TOKEN_LISTS_VECTORIZED_FROM texts on, a batch without mixed texts is embedded
    # from its Arrow term lists (TokenHashEmbedder._embed_lists): the oracle's sums exactly
    texts = [f"{c.title}\n{c.text}" for c in generate_fixture(9, documents=700).chunks]
    texts += ["ferry " * 40 + "ferries leave", "", "?!", "the of and", "码头码头码头"]
    assert len(texts) >= TOKEN_LISTS_VECTORIZED_FROM
    assert token_term_lists(texts) is not None  # the array path is the one taken
    got = TokenHashEmbedder(dim).embed(texts)
    assert got.tobytes() == _elementwise(texts, dim).tobytes()
    mixed = [*texts, "ferry 渡轮 pier"]  # a text mixing Latin and CJK: the list path
    assert token_term_lists(mixed) is None
    assert TokenHashEmbedder(dim).embed(mixed).tobytes() == _elementwise(mixed, dim).tobytes()
