"""An ``http:`` response body in bounded memory (:mod:`evalkit.systems.http`).

- :class:`Decoder`: at most one content coding (``gzip``/``x-gzip`` or ``deflate``, as zlib or
  raw deflate), decompressed in pieces of at most :data:`PIECE` bytes, so the caller counts
  every piece against its limit before the next one is made. Two codings or more, or an
  unknown one, are refused before a byte is decoded (as curl and urllib3 >= 2.6 limit them).
- :class:`HitStream`: the hits parsed as the body streams in (ijson's events, never a whole
  document): the RFC 6901 path of every value is tracked exactly (keys and array indexes), as
  is the nesting depth (at most ``MAX_DEPTH``, without recursion). Every hit is checked (its
  chunk ID and score pointers, their types, a finite score); the first ``k`` distinct ones are
  kept, and a later hit repeating a kept chunk ID is an error (or skipped, ``keep_first``).
  With a ``confidence`` pointer (from the top of the document, outside the hits list), the
  number there is the query's declared confidence (:meth:`HitStream.confidence`).
  Repeats between two hits both past the first ``k`` distinct ones are not looked for: memory
  is O(k), whatever the response's length.

Errors are :class:`~evalkit.errors.HttpResponseError` (``problem`` holds neither the body
nor a payload excerpt: ijson's own messages quote the payload and are never shown).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, Final

import ijson

from evalkit.errors import HttpResponseError
from evalkit.safety.inputs import MAX_DEPTH
from evalkit.safety.names import safe_id

__all__ = ["PIECE", "Decoder", "HitStream", "coding_of", "pointer_tokens"]

#: Largest piece of decoded bytes made at once (decompression's max_length).
PIECE: Final = 1 << 16

_CODINGS: Final = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}


def coding_of(values: Sequence[str]) -> str:
    """The one content coding of ``Content-Encoding`` header ``values`` (comma-split, as httpx
    splits them): ``"identity"``, ``"gzip"`` or ``"deflate"``; HttpResponseError otherwise."""
    layers = [v.strip().lower() for v in values if v.strip() and v.strip().lower() != "identity"]
    if len(layers) > 1:
        raise HttpResponseError(
            f"the response is encoded {len(layers)} times (Content-Encoding: {len(layers)} "
            "layers); evalkit accepts one (gzip or deflate)"
        )
    if not layers:
        return "identity"
    coding = _CODINGS.get(layers[0])
    if coding is None:
        raise HttpResponseError(
            "the response has an unsupported Content-Encoding; send gzip or deflate"
        )
    return coding


class Decoder:
    """Decodes one content coding in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._started = False
        wbits = 16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits) if coding != "identity" else None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (the next raw bytes of the body)."""
        if self._zlib is None:
            for start in range(0, len(data), PIECE):
                yield data[start : start + PIECE]
            return
        try:
            piece = self._zlib.decompress(data, PIECE)
        except zlib.error:
            if self._coding != "deflate" or self._started:
                raise HttpResponseError(f"the response's {self._coding} data is corrupt") from None
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as httpx allows
            try:
                piece = self._zlib.decompress(data, PIECE)
            except zlib.error:
                raise HttpResponseError("the response's deflate data is corrupt") from None
        self._started = True
        yield piece
        while self._zlib.unconsumed_tail:
            try:
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, PIECE)
            except zlib.error:
                raise HttpResponseError(f"the response's {self._coding} data is corrupt") from None
            yield piece

    def finish(self) -> bytes:
        """The last decoded bytes (at most one window); HttpResponseError when the compressed
        data ends early."""
        if self._zlib is None:
            return b""
        if not self._zlib.eof:
            raise HttpResponseError(f"the response's {self._coding} data is cut short")
        return self._zlib.flush()


_SCALARS: Final = frozenset({"string", "number", "boolean", "null"})
_TYPE_NAMES: Final = {
    "start_map": "dict",
    "start_array": "list",
    "string": "str",
    "boolean": "bool",
    "null": "NoneType",
}


def pointer_tokens(pointer: str) -> list[str]:
    """The reference tokens of JSON pointer ``pointer`` (RFC 6901), ``~1`` and ``~0`` decoded."""
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _parts(pointer: str) -> list[tuple[str, int | None]]:
    """Each reference token of ``pointer`` and the array index it names (``resolve_pointer``'s
    rule: digits), or None."""
    return [(t, int(t) if t.isdigit() else None) for t in pointer_tokens(pointer)]


def _matches(keys: Sequence[str | int], parts: Sequence[tuple[str, int | None]]) -> bool:
    """Whether the path ``keys`` (map keys and array indexes) is the pointer of ``parts``."""
    if len(parts) == 1:  # the common case: one token
        key, (token, index) = keys[0], parts[0]
        return key == (index if isinstance(key, int) else token)
    for key, (token, index) in zip(keys, parts, strict=True):
        if key != (index if isinstance(key, int) else token):
            return False
    return True


def _one_key(parts: Sequence[tuple[str, int | None]]) -> str | None:
    """The token of a one-token pointer that cannot name an array index (no digits only): a
    path ends in it exactly when its last key equals it. None otherwise."""
    if len(parts) == 1 and parts[0][1] is None:
        return parts[0][0]
    return None


class HitStream:
    """The first ``k`` distinct hits of a streamed JSON response (rules: module docstring).

    ``feed`` takes decoded bytes; ``close`` returns ``[(chunk_id, score), ...]`` (at most ``k``).
    """

    def __init__(
        self,
        *,
        hits: str,
        chunk_id: str,
        score: str,
        k: int,
        keep_first: bool,
        confidence: str | None = None,
    ) -> None:
        self._hits, self._chunk, self._score = _parts(hits), _parts(chunk_id), _parts(score)
        # the query's declared confidence: a pointer from the top, outside the hits list
        self._confidence_pointer = confidence
        self._confidence = _parts(confidence) if confidence else None
        self._confidence_value: tuple[str, Any] | None = None
        self._pointers = {"chunk": chunk_id, "score": score}
        self._k, self._keep_first = k, keep_first
        self._events = ijson.sendable_list()
        self._parser = ijson.basic_parse_coro(self._events, use_float=True)
        self._keys: list[str | int] = []  # the key or index of each open container's child
        self._arrays: list[bool] = []
        self._hits_depth = len(self._hits)  # the hits list's own path length
        self._found: str | None = None  # the hits value's type, once seen
        self._in_hits = False
        self._position = -1
        self._fields: dict[str, tuple[str, Any]] = {}
        start = len(self._hits) + 1
        # (field, its path length, its tokens, its one non-index token for a quick compare)
        self._fields_at = [
            (field, start + len(parts), parts, _one_key(parts))
            for field, parts in (("chunk", self._chunk), ("score", self._score))
        ]
        self._kept: dict[str, float] = {}

    def feed(self, data: bytes) -> None:
        """Parse ``data``, the next decoded bytes of the body."""
        if not data:
            return  # ijson reads empty bytes as the end of the document
        try:
            self._parser.send(data)
        except ijson.JSONError as error:
            self._take()  # the events before the error place it
            raise HttpResponseError(self._parse_problem(str(error))) from None
        self._take()

    def close(self) -> list[tuple[str, float]]:
        """The kept hits, once the whole body was fed; HttpResponseError for malformed JSON or
        a response without a hits list."""
        try:
            self._parser.close()
        except ijson.JSONError as error:
            self._take()
            raise HttpResponseError(self._parse_problem(str(error))) from None
        self._take()
        if self._found is None:
            pointer = "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t, _ in self._hits)
            raise HttpResponseError(
                f"the response has no hits list at JSON pointer {pointer if self._hits else ''!r}"
            )
        if self._found != "list":
            raise HttpResponseError(
                f"the value at the hits pointer should be a list, found {self._found}"
            )
        return list(self._kept.items())

    def confidence(self) -> float | None:
        """The response's declared confidence (the ``confidence`` pointer), once ``close``
        returned; None when no pointer was given, or the response has no hit (a query without
        a result is never answered). HttpResponseError when a response with hits has no
        finite number there."""
        if self._confidence is None or not self._kept:
            return None
        pointer = self._confidence_pointer
        if self._confidence_value is None:
            raise HttpResponseError(f"the response has no confidence at JSON pointer {pointer!r}")
        event, value = self._confidence_value
        number = float(value) if event == "number" else math.nan
        if not math.isfinite(number):
            found = _type_name(event, value)
            raise HttpResponseError(
                f"the confidence at JSON pointer {pointer!r} should be a finite number, found "
                f"{found}"
            )
        return number

    def _parse_problem(self, message: str) -> str:
        where = f" (hit {self._position})" if self._in_hits else ""
        if "integer overflow" in message:
            return f"the response holds an integer outside the 64-bit range{where}"
        if "overflow" in message:
            return f"the response holds a number outside the range of a double{where}"
        return "the response is not valid JSON"

    def _take(self) -> None:
        """Handle the parsed events (one loop: 6 events a hit, so kept tight)."""
        events = self._events
        keys, arrays = self._keys, self._arrays
        hits_depth = self._hits_depth
        start = hits_depth + 1
        fields_at = self._fields_at
        for event, value in events:
            if event == "map_key":
                keys[-1] = value
                continue
            if event in {"end_map", "end_array"}:
                keys.pop()
                arrays.pop()
                if self._in_hits:
                    depth = len(keys)
                    if depth == start:
                        self._end_hit()
                    elif depth == hits_depth:
                        self._in_hits = False
                continue
            if arrays and arrays[-1]:
                keys[-1] += 1  # type: ignore[operator]  # an array's child index
            depth = len(keys)
            if self._in_hits:
                if depth == start:
                    self._position += 1
                    self._fields = {}
                for field, length, parts, key in fields_at:
                    if depth == length and (
                        keys[-1] == key if key is not None else _matches(keys[start:], parts)
                    ):
                        self._fields[field] = (event, value)
                if depth == start and event in _SCALARS:
                    self._end_hit()
            elif (
                self._confidence is not None
                and depth == len(self._confidence)
                and _matches(keys, self._confidence)
            ):
                self._confidence_value = (event, value)  # a repeated key: the last one counts
            elif depth == hits_depth and _matches(keys, self._hits):
                self._found = "list" if event == "start_array" else _type_name(event, value)
                self._kept.clear()  # a repeated key: the last one counts, as in json.loads
                self._in_hits = event == "start_array"
                self._position = -1
            if event in {"start_map", "start_array"}:
                if depth >= MAX_DEPTH:
                    raise HttpResponseError(
                        f"the response is nested more than {MAX_DEPTH} levels deep"
                    )
                keys.append(-1 if event == "start_array" else "")
                arrays.append(event == "start_array")
        del events[:]

    def _end_hit(self) -> None:
        position, fields = self._position, self._fields
        for field in ("chunk", "score"):
            if field not in fields:
                raise HttpResponseError(
                    f"hit {position} has no value at JSON pointer {self._pointers[field]!r}"
                )
        (id_event, chunk_id), (score_event, score) = fields["chunk"], fields["score"]
        if not (id_event == "string" or (id_event == "number" and isinstance(chunk_id, int))):
            raise HttpResponseError(f"hit {position}: the chunk ID should be a string")
        if score_event != "number":
            raise HttpResponseError(f"hit {position}: the score should be a number")
        number = float(score)
        if not math.isfinite(number):  # pragma: no cover - the parser refuses these first
            raise HttpResponseError(f"hit {position}: the score should be a finite number")
        chunk = str(chunk_id)
        if chunk in self._kept:
            if self._keep_first:
                return
            shown = safe_id(chunk) or "(not shown: not a well-formed, safe ID)"
            raise HttpResponseError(
                f"hit {position} repeats chunk {shown!r}; a ranking names each chunk once "
                "(set 'duplicates: keep-first' in the system's config to keep its first copy)"
            )
        if len(self._kept) < self._k:
            self._kept[chunk] = number


def _type_name(event: str, value: Any) -> str:
    if event == "number":
        return type(value).__name__
    return _TYPE_NAMES[event]
