"""The streamed reader of ``http:`` responses (``evalkit.systems._http_body.HitStream``) against
the whole-document reader it replaced (``json.loads``, then ``resolve_pointer`` per hit): the
same first k distinct hits, or an error for the same responses, on random documents whose
pointers hold ``~0``/``~1`` escapes, keys with ``.``, numeric keys and array indexes. The body
is fed in random pieces, so every event may straddle a cut."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings, strategies as st

from evalkit.errors import HttpResponseError
from evalkit.systems import _http_body
from evalkit.systems.http import resolve_pointer

KEYS = ["hits", "a.b", "x~y", "p/q", "0", "1", "item", "chunk_id", "score"]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def whole_document_reader(
    document: Any, hits: str, *, chunk: str, score: str, k: int, keep_first: bool
) -> list[tuple[str, float]] | None:
    """The hits as the old reader and ``deduplicated`` gave them, or None for an error."""
    try:
        found = resolve_pointer(document, hits)
    except KeyError:
        return None
    if not isinstance(found, list):
        return None
    kept: dict[str, float] = {}
    for hit in found:
        try:
            chunk_id, value = resolve_pointer(hit, chunk), resolve_pointer(hit, score)
        except KeyError:
            return None
        if not isinstance(chunk_id, str | int) or isinstance(chunk_id, bool):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not math.isfinite(float(value)):
            return None
        if str(chunk_id) in kept:
            if keep_first:
                continue
            return None
        if len(kept) < k:
            kept[str(chunk_id)] = float(value)
    return list(kept.items())


scalars = st.one_of(
    st.sampled_from(["c1", "c2", "c3", "", "c.1"]),
    st.integers(-5, 5),
    st.floats(-10, 10, allow_nan=False),
    st.booleans(),
    st.none(),
)
hit_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=8,
)
good_hits = st.fixed_dictionaries(
    {
        "chunk_id": st.sampled_from(["c1", "c2", "c3", "c4", 7]),
        "score": st.floats(-10, 10, allow_nan=False),
    }
)
pointers = st.lists(st.sampled_from(KEYS), min_size=1, max_size=2).map(
    lambda tokens: "".join("/" + _escape(t) for t in tokens)
)


@settings(max_examples=150, deadline=None)
@given(
    hits=st.lists(st.one_of(good_hits, hit_values), max_size=6),
    hits_pointer=pointers,
    wrapper=st.sampled_from(["object", "extra", "list"]),
    k=st.integers(1, 4),
    keep_first=st.booleans(),
    cuts=st.lists(st.integers(1, 40), max_size=10),
)
def test_the_streamed_reader_agrees_with_the_whole_document_reader(
    *,
    hits: list[Any],
    hits_pointer: str,
    wrapper: str,
    k: int,
    keep_first: bool,
    cuts: list[int],
) -> None:
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in hits_pointer.split("/")[1:]]
    document: Any = hits
    for token in reversed(tokens):
        document = (
            {token: document, "other": [1, {"hits": "no"}]}
            if wrapper == "extra"
            else {token: document}
        )
    if wrapper == "list":
        document = [document]
        hits_pointer = "/0" + hits_pointer
    body = json.dumps(document).encode()
    expected = whole_document_reader(
        document, hits_pointer, chunk="/chunk_id", score="/score", k=k, keep_first=keep_first
    )
    stream = _http_body.HitStream(
        hits=hits_pointer, chunk_id="/chunk_id", score="/score", k=k, keep_first=keep_first
    )
    try:
        position = 0
        for size in [*cuts, len(body)]:
            stream.feed(body[position : position + size])
            position += size
        got: list[tuple[str, float]] | None = stream.close()
    except HttpResponseError:
        got = None
    assert got == expected
