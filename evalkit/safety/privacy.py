"""The leak scan: does an artifact contain any text of the fixture or any private provider value?

What counts as private (:func:`private_texts`): every document and chunk title, chunk text,
query text and judgment span of the fixture; every string value inside the systems'
``definition()`` (model names, endpoints, ...) and each ``/``-separated part of one (the model of
``org/model``, the host of an endpoint), when at least ``MIN_PRIVATE_VALUE`` characters long
(:func:`definition_values`). Mapping keys of a definition are its field names, not private.

The reading. Both sides are HTML-unescaped (up to three times), NFKC-normalized,
case-folded, stripped of invisible characters (:data:`INVISIBLE_RANGES`: every format
character, variation selectors, fillers) and of Markdown backslash escapes; the separators of
file-derived names (``SEPARATORS``: ``-``, ``_``, ``.``, ``/``) between two other characters
read as a space; white-space
runs are collapsed to one space and removed between two Chinese characters. So escaping or
re-wrapping (:mod:`evalkit.report.render` does both) hides nothing, and a run file named
after the words of a chunk, hyphens for spaces, reads like the chunk's text. Markup is
searched as it is and with its tags removed (in a JSON string too: a notebook's HTML output),
so tags between the words of a text do not hide it either.

The rule (issues 43 and 49): every match is verified by extension.

1. **Candidates.** Each private string gives needles: the whole string when it is shorter than
   ``2 * window - 1`` characters (and at least ``MIN_WHOLE_LATIN``, ``MIN_WHOLE_CJK`` for text
   that is mostly Chinese), else its aligned windows: the string cut into consecutive pieces
   of ``WINDOW_LATIN`` characters (``WINDOW_CJK`` for mostly Chinese text). In a mostly Latin
   string, each Chinese run of ``2 * WINDOW_CJK - 1`` characters or more also gets aligned
   ``WINDOW_CJK`` windows from the run's start: Chinese inside English is windowed as
   Chinese. Any copied run of ``2 * window - 1`` characters contains one whole aligned window,
   wherever it starts. One pass over the artifact finds every needle (:class:`_NeedleIndex`:
   the windows' hashes at every position, the whole strings in Aho-Corasick automata).
2. **Extension.** Each needle match is extended left and right against the private string it
   came from (at most ``EXTEND_LIMIT`` characters each way). It counts only when the common
   stretch reaches ``2 * window - 1`` characters (31 Latin, 11 Chinese), or is the whole
   string for a whole-string needle. A 16-character window that prose shares by chance
   with a legend built at run time is no finding.
3. **Evidence** (:func:`is_evidence`). The stretch must still hold ``MIN_EVIDENCE_LETTERS``
   (3) letters (any script) once markup (complete tags, a tag cut at either end) and numbers
   are removed: digits, punctuation, white space and markup are not anybody's private text.
4. **Own text.** The stretch, its edge punctuation trimmed and Markdown's marks removed, must
   not occur in what evalkit or the caller wrote: :func:`own_text` (every ``.py`` source of
   the package, as written and with wrapped literals joined, their escapes read as shown and
   Markdown's marks removed; the report notebook's cells) and the scan's :class:`OwnText`:
   for a report, its notebook's markdown, code and raw cells (the default notebook and a
   user's ``--notebook`` alike; never an output, nor the cell papermill injects), the
   notebook's JSON skeleton (nbformat's and papermill's keys) and the HTML export of the
   notebook without outputs (nbconvert's template, pygments' and evalkit's stylesheets, the
   rendered Markdown). Libraries' text is judged by the same rule as evalkit's.

A private string is reported when one of its matches passes 2-4. Findings name object IDs
only, never the text.

- **Recall.** Every copied run of 31+ Latin or 11+ Chinese characters of a private string, and
  every whole private string of 8+ (4+ Chinese) characters shorter than that, is reported, in
  every artifact, reading and encoding (decoded JSON, tags removed, HTML/URL/string escapes,
  base64 payloads, PNG text; separators of names read alike), unless (a) the copy holds
  fewer than 3 letters outside markup and numbers, or (b) its maximal common stretch (up to
  ``EXTEND_LIMIT`` characters each side) is own text: evalkit wrote every one of those
  characters, or the report notebook's author did, or the library around them. Runs are
  counted after normalizing. Given up, by design: copies of 16-30 characters that happened to
  hold an aligned window (never promised), a private string made only of digits and
  punctuation, fixture text a notebook's author typed into a cell's source.
- **Precision.** A finding needs a stretch of 31+ (11+) characters shared by a private string
  and the artifact, holding 3+ letters outside markup and numbers, that neither evalkit, nor
  the notebook, nor the libraries wrote. What can remain: text composed at run time from
  pieces that a collection also holds 31+ characters of. Measured 0 false findings on real
  prose nobody here wrote (``benchmarks/bench_false_findings.py``: standard-library
  docstrings, ``/usr/share/doc``, Cranfield and CISI, every report variant, gate and run
  outputs; the numbers are in ``benchmarks/README.md``).
- **Cost.** One pass per artifact reading (array passes hashing its windows, and the
  automata of whole strings); per match a few slice
  comparisons; per 31+-character stretch one substring search of the own text (cached).
  :func:`own_text` is built only when a stretch needs it. :func:`find_leaks_in_stream`
  searches a file of any size in bounded memory (``WHOLE_CHARS``, ``BLOCK_CHARS``).

String and URL escapes are read as well (:func:`unescaped_text`): where an artifact holds
``\\uXXXX``, ``\\UXXXXXXXX``, ``\\xXX`` or ``\\n``-style escapes (a JSON or JavaScript string
inside HTML, a Python ``repr`` in a log) or ``%XX`` escapes (a URL's query), the decoded text is
searched too, so ``\\u6e21\\u8f6e`` or ``How%20much%20does`` hides nothing.

Base64 payloads (a run of 128+ base64 characters: ``data:`` URIs, a notebook's image outputs)
are searched for what they carry (:func:`embedded_text`): an image's metadata and printable
bytes, any other payload's decoded text as well as the run itself. The needle index (hash tables
of the windows, pyahocorasick automata of the whole strings) holds every needle, so a scan is
one pass over the artifact whatever the number of private strings; an artifact text found
clean is remembered with its private set, so the report's render-time and write-time scans
search it once.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import hashlib
import html
import json
import re
import unicodedata
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from evalkit.errors import LeakError

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.forking import ForkedCall

__all__ = [
    "NO_OWN_TEXT",
    "OwnText",
    "PrivateText",
    "assert_no_leaks",
    "definition_values",
    "find_leaks",
    "find_leaks_in_stream",
    "is_evidence",
    "notebook_own_texts",
    "notebook_skeleton",
    "own_text",
    "prepare_leak_scan",
    "private_texts",
    "unescaped_text",
]

MIN_WHOLE_LATIN = 8
MIN_WHOLE_CJK = 4
WINDOW_LATIN = 16
WINDOW_CJK = 6
MIN_PRIVATE_VALUE = 6
#: Characters read as a space on both sides: the separators of names that come from files.
SEPARATORS: Final = ("-", "_", ".", "/")
_SEPARATOR_RE = re.compile(r"[-_./](?<=\S[-_./])(?=\S)")

INVISIBLE_RANGES: Final = (
    # Unicode's format characters (category Cf, Unicode 14): soft hyphen, zero-width spaces
    # and joiners, bidirectional controls, word joiner and invisible operators, BOM, tags, ...
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    # and other characters that show nothing: variation selectors, the combining grapheme
    # joiner, Hangul fillers
    (0xFE00, 0xFE0F),
    (0xE0100, 0xE01EF),
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
)
"""Code points the leak scan removes from both sides before matching: they hide nothing."""
_INVISIBLE_RE = re.compile(
    "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in INVISIBLE_RANGES) + "]"
)
_TAG_RE = re.compile(r"<[A-Za-z/!][^<>]*>")
_CJK = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_CJK_RE = re.compile(_CJK)
_CJK_GAP_RE = re.compile(rf"(?<={_CJK})\s+(?={_CJK})")
_MARKDOWN_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass(frozen=True)
class PrivateText:
    """One private string and the ID of the object it belongs to (``"<kind>:<id>"``)."""

    object_id: str
    text: str


def _normalize(text: str) -> str:
    for _ in range(3):  # an entity escaped twice (&amp;#32;) or three times unescapes too
        unescaped = html.unescape(text)
        if unescaped == text:
            break
        text = unescaped
    text = unicodedata.normalize("NFKC", text).casefold()
    # Invisible characters (INVISIBLE_RANGES) and Markdown's backslash escapes
    # (evalkit.report.render.markdown_text writes both) hide nothing; nor does white space between
    # two Chinese characters, which Chinese text does not have.
    # (A pattern that cannot match is not run: an ASCII text, str.isascii() at no cost, has no
    # invisible code point, all above U+00AC, and no Chinese character.)
    if not text.isascii():
        text = _INVISIBLE_RE.sub("", text)
    if "\\" in text:
        text = _MARKDOWN_ESCAPE_RE.sub(r"\1", text)
    # separators read alike: a file-derived name (Vault-PIN-77319.trec) reads like its text;
    # only between two other characters, so that prose keeps its length (". " stays two)
    text = _SEPARATOR_RE.sub(" ", text)
    # str.split() splits at exactly the characters re's \s matches in a str pattern (both
    # Py_UNICODE_ISSPACE; checked over every code point), faster than re.sub on indented text
    text = " ".join(text.split())
    return text if text.isascii() else _CJK_GAP_RE.sub("", text)


def _is_mostly_cjk(text: str) -> bool:
    return len(_CJK_RE.findall(text)) * 2 >= len(text.replace(" ", ""))


def private_texts(
    fixture: Fixture, definitions: Mapping[str, Any] | None = None
) -> list[PrivateText]:
    """Every private string of ``fixture`` and of the systems' ``definitions``."""
    found: list[PrivateText] = []
    for document in fixture.documents:
        found.append(PrivateText(f"document:{document.id}", document.title))
    for chunk in fixture.chunks:
        found.append(PrivateText(f"chunk:{chunk.id}", chunk.title))
        found.append(PrivateText(f"chunk:{chunk.id}", chunk.text))
    for query in fixture.queries:
        found.append(PrivateText(f"query:{query.id}", query.text))
        for judgment in query.judgments:
            found.extend(PrivateText(f"query:{query.id}", span.text) for span in judgment.spans)
    for system, definition in (definitions or {}).items():
        found.extend(PrivateText(f"system:{system}", v) for v in definition_values(definition))
    return found


def definition_values(definition: Any) -> list[str]:
    """The private strings of one system definition: every string value and every
    ``/``-separated part of one (``org/model``), at least ``MIN_PRIVATE_VALUE`` characters long,
    in order. A URL (``scheme://host/path``) contributes itself and its host: its path segments
    are route names such as ``search``, not identifying on their own."""
    values: dict[str, None] = {}
    for value in _string_leaves(definition):
        if "://" in value:
            parts = [value, value.split("://", 1)[1].split("/", 1)[0]]
        else:
            parts = [value, *value.split("/")]
        for part in parts:
            if len(part) >= MIN_PRIVATE_VALUE:
                values.setdefault(part)
    return list(values)


def _string_leaves(value: Any, *, keys: bool = False) -> Iterator[str]:
    """Every string inside ``value`` (and, with ``keys``, every mapping key)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if keys:
                yield str(key)
            yield from _string_leaves(item, keys=keys)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _string_leaves(item, keys=keys)


def _needles(text: str) -> list[str]:
    """The normalized strings to search for ``text`` (rule above): the whole string when it is
    short, else its aligned windows (a whole long string contains every one of them)."""
    return [needle for _, needle in _text_needles(_normalize(text))]


def _window(normalized: str) -> int:
    return WINDOW_CJK if _is_mostly_cjk(normalized) else WINDOW_LATIN


# a Chinese run: Chinese characters, with the punctuation and spaces Chinese prose puts between
_CJK_RUN_RE = re.compile(rf"{_CJK}(?:[\s,.;:!?()\u3000-\u303f\uff01-\uff65]*{_CJK})*")


def _text_needles(normalized: str) -> list[tuple[int, str]]:
    """``(offset, needle)`` of an already normalized string: the whole string when it is
    shorter than ``2 * window - 1`` characters (and at least the whole-string minimum), else
    its aligned windows; in a mostly Latin string, also the aligned ``WINDOW_CJK`` windows of
    each Chinese run of ``2 * WINDOW_CJK - 1`` characters or more, placed from the run's start
    (:func:`_needle_runs`, one run of windows at a time)."""
    return [
        needle
        for first, count, width in _needle_runs(normalized)
        for needle in _run_needles(normalized, first, count, width)
    ]


def _run_needles(normalized: str, first: int, count: int, width: int) -> Iterator[tuple[int, str]]:
    """``(offset, needle)`` of one run of :func:`_needle_runs`: ``count`` needles of ``width``
    characters placed one after another from ``first``."""
    for offset in range(first, first + count * width, width):
        yield offset, normalized[offset : offset + width]


def _needle_runs(normalized: str) -> list[tuple[int, int, int]]:
    """:func:`_text_needles` as runs ``(first offset, count, width)`` of needles placed one
    after another; the whole-string needle is ``(0, 1, len(normalized))`` (a windowed string
    is longer than its windows)."""
    window = _window(normalized)
    minimum = MIN_WHOLE_CJK if window == WINDOW_CJK else MIN_WHOLE_LATIN
    if len(normalized) < minimum:
        return []
    if len(normalized) < 2 * window - 1:
        return [(0, 1, len(normalized))]
    runs = [(0, (len(normalized) - window) // window + 1, window)]
    if window == WINDOW_LATIN and _CJK_RE.search(normalized):
        for run in _CJK_RUN_RE.finditer(normalized):
            start, end = run.span()
            if end - start >= 2 * WINDOW_CJK - 1:
                runs.append((start, (end - start - WINDOW_CJK) // WINDOW_CJK + 1, WINDOW_CJK))
    return runs


def artifact_text(text: str) -> str:
    """The searchable form of an artifact; JSON (e.g. a notebook) is decoded to its strings,
    base64 payloads are replaced by the text they carry (:func:`embedded_text`), and the
    decoded forms of string and URL escapes are added (:func:`unescaped_text`)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            # json.loads has read the document's own escapes; a string may still hold escaped
            # text of its own (a URL, a JSON blob as a string)
            leaves = embedded_text(unescaped_text("\n".join(_string_leaves(decoded, keys=True))))
            if "<" in leaves:  # markup in a string (a notebook's HTML output): tags removed too
                leaves += COPY_SEPARATOR + _TAG_RE.sub(" ", leaves)
            return _normalize(leaves + COPY_SEPARATOR + embedded_text(text))
    plain = embedded_text(unescaped_text(text))
    if "<" in plain:  # markup: also the text with its tags removed (words split by tags)
        plain += COPY_SEPARATOR + _TAG_RE.sub(" ", plain)
    return _normalize(plain)


#: Between an artifact and another reading of it (decoded, tags removed): a character that no
#: private text holds (the fixture schema refuses control characters) and that normalizing
#: keeps, so the end of one copy never joins the start of the next into a needle.
COPY_SEPARATOR: Final = "\x00"


# one backslash first: the regular expression engine then skips to each backslash (a pattern
# starting with an alternation tries every branch at every character, 200 times slower)
_STRING_ESCAPES_RE = re.compile(
    r"\\(?:u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})*|x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2})*"
    r"|U[0-9a-fA-F]{8}|[nrtfb\\])"
)
_PERCENT_ESCAPE_RE = re.compile(r"%[0-9A-Fa-f]{2}")
# a form value with "+" for its spaces (a URL query, a form body): q=How+much+does
_PLUS_SPACES_RE = re.compile(r"=[^\s&#\"'<>=]*\+[^\s&#\"'<>=]*")  # "=" first, as above
# an "=" written as an escape (%3D, \u003d, \x3d), and the mark a decoding leaves in its place
_ESCAPED_EQUALS_RE = re.compile(r"%3[dD]|\\u003[dD]|\\x3[dD]")
_PRODUCED_EQUALS: Final = "\x01"
_PRODUCED_VALUE_RE = re.compile("\x01[^\\s&#\"'<>=\x01]*\\+[^\\s&#\"'<>=\x01]*")
_CONTROL_ESCAPES: Final = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "b": " ", "\\": "\\"}
UNESCAPE_ROUNDS: Final = 3
#: Raw characters decoded on each side of an escape: eight times the longest needle (a needle's
#: characters may be written as HTML entities in the raw text).
ESCAPE_CONTEXT: Final = 16 * WINDOW_LATIN


def unescaped_text(text: str) -> str:
    """``text``, followed (after ``COPY_SEPARATOR``) by the decoded form of each stretch of it
    that holds escapes: string escapes (JSON's and JavaScript's ``\\uXXXX``, surrogate pairs
    combined; Python's ``\\UXXXXXXXX``; ``\\xXX`` runs, as UTF-8 where the bytes are, else
    byte by byte as Latin-1; ``\\n``, ``\\t``, ``\\\\``, ...) and URL escapes (``%XX`` as
    UTF-8; ``+`` as a space in a ``key=value`` form value of the text as written). A stretch
    reaches ``ESCAPE_CONTEXT`` characters beyond its first and last escape (stretches that
    close merge), more than any needle's length, so a needle that an escape splits is whole in
    it, and the cost follows the escapes, not the artifact's size. Text escaped twice or three
    times is decoded as often (``UNESCAPE_ROUNDS``)."""
    forms = [text]
    for start, end in _escaped_stretches(text):
        # "+" is a space only in a form value: one of the text as written, or one whose "="
        # a decoding produced (a URL escaped inside another's value: next=%2Fs%3Fq%3Da%2Bb);
        # not a literal "+" elsewhere (C++), nor one decoded after a written "=" (q=C%2B%2B)
        stretch = text[start:end]
        current = _PLUS_SPACES_RE.sub(_plus_spaces, stretch)
        if current != stretch:
            forms.append(current)
        for _ in range(UNESCAPE_ROUNDS):
            decoded = _decoded_once(current)
            if decoded == current:
                break
            forms.append(decoded)
            current = decoded
    return COPY_SEPARATOR.join(forms)


def _decoded_once(text: str) -> str:
    """One round of :func:`unescaped_text`'s decoding; an "=" it produces marks a form value."""
    marked = _ESCAPED_EQUALS_RE.sub(_PRODUCED_EQUALS, text)
    decoded = _STRING_ESCAPES_RE.sub(_string_escape, marked)
    if _PERCENT_ESCAPE_RE.search(decoded):
        decoded = urllib.parse.unquote(decoded, errors="replace")
    if _PRODUCED_EQUALS in decoded:
        decoded = _PRODUCED_VALUE_RE.sub(_plus_spaces, decoded).replace(_PRODUCED_EQUALS, "=")
    return decoded


def _plus_spaces(match: re.Match[str]) -> str:
    return match.group(0).replace("+", " ")


def _escaped_stretches(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the stretches of ``text`` around its escapes, merged, in order."""
    around = sorted(
        (max(match.start() - ESCAPE_CONTEXT, 0), match.end() + ESCAPE_CONTEXT)
        for pattern in (_STRING_ESCAPES_RE, _PERCENT_ESCAPE_RE, _PLUS_SPACES_RE)
        for match in pattern.finditer(text)
    )
    merged: list[tuple[int, int]] = []
    for start, end in around:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _string_escape(match: re.Match[str]) -> str:
    escape = match.group(0)
    kind = escape[1]
    if kind == "u":  # UTF-16 code units: a surrogate pair is one character
        units = bytes.fromhex(escape.replace("\\u", ""))
        return units.decode("utf-16-be", "replace")
    if kind == "x":  # UTF-8 where the bytes are (a bytes repr), each other byte as Latin-1
        data = bytes.fromhex(escape.replace("\\x", ""))
        return _STRAY_BYTE_RE.sub(_latin1, data.decode("utf-8", "surrogateescape"))
    if kind == "U":
        code_point = int(escape[2:], 16)
        return chr(code_point) if code_point <= 0x10FFFF else escape
    return _CONTROL_ESCAPES[kind]


_STRAY_BYTE_RE = re.compile("[\udc80-\udcff]")  # surrogateescape's form of an invalid byte


def _latin1(match: re.Match[str]) -> str:
    return chr(ord(match.group(0)) - 0xDC00)


_BASE64_RUN_RE = re.compile(r"[A-Za-z0-9+/]{128,}={0,2}")
_IMAGE_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF")
_PRINTABLE_RUN_RE = re.compile(rb"[\x20-\x7e]{%d,}" % MIN_WHOLE_CJK)


def embedded_text(text: str) -> str:
    """``text`` with each base64 run of 128+ characters replaced by what a reader could get out
    of it: for an image (PNG, JPEG, GIF, WebP), its metadata text (PNG ``tEXt``/``zTXt``/
    ``iTXt`` chunks) and every run of printable ASCII in its bytes; for any
    other payload (an SVG, a JSON blob, a text), the run itself and its decoded text. Pixels
    are not text, so an embedded figure costs the scan nothing, while text hidden in base64,
    which a plain substring search would miss, is searched too."""
    return _BASE64_RUN_RE.sub(_payload_text, text)


def _payload_text(match: re.Match[str]) -> str:
    run = match.group(0)
    try:
        data = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return run
    printable = [m.group(0).decode("ascii") for m in _PRINTABLE_RUN_RE.finditer(data)]
    if data.startswith(_IMAGE_SIGNATURES):
        return "\n" + "\n".join([*_png_texts(data), *printable]) + "\n"
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        decoded = "\n".join(printable)
    return f"{run}\n{decoded}\n"


def _png_texts(data: bytes) -> list[str]:
    """The keywords and texts of a PNG's ``tEXt``, ``zTXt`` and ``iTXt`` chunks, wherever they
    are in the file (none for another format; a damaged chunk ends the walk). The chunk layout
    is the PNG specification's (length, type, data, CRC); pixels are not decoded."""
    if not data.startswith(_IMAGE_SIGNATURES[0]):
        return []
    texts: list[str] = []
    position = len(_IMAGE_SIGNATURES[0])
    while position + 8 <= len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        try:
            texts += _text_chunk(kind, body)
        except (ValueError, zlib.error):
            break
        if kind == b"IEND":
            break
    return texts


def _text_chunk(kind: bytes, body: bytes) -> list[str]:
    if kind == b"tEXt":
        keyword, _, text = body.partition(b"\0")
        return [keyword.decode("latin-1"), text.decode("latin-1")]
    if kind == b"zTXt":
        keyword, _, rest = body.partition(b"\0")
        return [keyword.decode("latin-1"), zlib.decompress(rest[1:]).decode("latin-1")]
    if kind == b"iTXt":
        keyword, _, rest = body.partition(b"\0")
        compressed, rest = rest[:1] == b"\1", rest[2:]
        language, _, rest = rest.partition(b"\0")
        translated, _, text = rest.partition(b"\0")
        if compressed:
            text = zlib.decompress(text)
        parts = (keyword, language, translated, text)
        return [part.decode("utf-8", "replace") for part in parts]
    return []


#: The report notebook, part of evalkit's own text: package data of ``evalkit.report``
#: (``evalkit.report.DEFAULT_REPORT_NOTEBOOK``, not imported: a lower layer).
OWN_NOTEBOOK: Final = resources.files("evalkit").joinpath(
    "report", "notebooks", "retrieval_report.ipynb"
)
#: How far a match is extended each way against its private string.
EXTEND_LIMIT: Final = 16 * WINDOW_LATIN
# the end of one string literal and the start of the next on a following line (implicit
# concatenation: "... compared "\n    f"with the ..."), and Markdown's emphasis and code marks
_LITERAL_JOIN_RE = re.compile(r"[\"']\s*\n\s*(?:[rRbBuUfF]{1,2})?[\"']")
# and the backslash: Markdown's escapes and a literal's are removed or kept by each writer
_MARKDOWN_MARKS_RE = re.compile(r"[*`#>|\\]")
_SOURCE_ESCAPE_RE = re.compile(r"\\([nt\\'\"])")
#: The tag papermill gives the cell it injects: its values are the run's, not the author's.
INJECTED_PARAMETERS_TAG: Final = "injected-parameters"


def _source_escape(match: re.Match[str]) -> str:
    """A string literal's escape as a docstring or message shows it."""
    return " " if match.group(1) in "nt" else match.group(1)


def _own_forms(source: str) -> list[str]:
    """The normalized forms of one own source: as written, and with wrapped string literals
    joined, a literal's escapes read as shown (``\\n`` as white space) and Markdown's marks
    and backslashes removed (a stretch is looked up with them removed)."""
    joined = _normalize(_SOURCE_ESCAPE_RE.sub(_source_escape, _LITERAL_JOIN_RE.sub("", source)))
    return [_normalize(source), " ".join(_MARKDOWN_MARKS_RE.sub("", joined).split())]


@functools.cache
def own_text() -> str:
    """evalkit's own shipped text, normalized (module docstring): every ``.py`` file of the
    package and the report notebook's cells, each as written and with wrapped string literals
    joined and Markdown's marks (``* ` # > |``) removed, separated by ``COPY_SEPARATOR``.
    Built once per process (package data through :mod:`importlib.resources`)."""
    sources = [
        resource.read_text(encoding="utf-8")
        for _, resource in sorted(_package_sources(resources.files("evalkit")))
    ]
    if OWN_NOTEBOOK.is_file():
        sources += notebook_own_texts(json.loads(OWN_NOTEBOOK.read_text(encoding="utf-8")))
    return COPY_SEPARATOR.join(form for source in sources for form in _own_forms(source))


def notebook_own_texts(notebook: Mapping[str, Any]) -> list[str]:
    """The author's text of a notebook (nbformat's JSON, decoded): the source of every
    markdown, code and raw cell except the cell papermill injects (tagged
    ``injected-parameters``: its values are the run's). Never an output or an attachment."""
    texts: list[str] = []
    for cell in notebook.get("cells", []):
        if not isinstance(cell, Mapping):
            continue
        tags = (
            cell.get("metadata", {}).get("tags", [])
            if isinstance(cell.get("metadata"), Mapping)
            else []
        )
        if isinstance(tags, list) and INJECTED_PARAMETERS_TAG in tags:
            continue
        source = cell.get("source", "")
        texts.append("".join(source) if isinstance(source, list) else str(source))
    return texts


def notebook_skeleton(notebook: Mapping[str, Any]) -> str:
    """``notebook``'s JSON with every string value blank except the author's cell sources
    (:func:`notebook_own_texts`): the keys and structure that nbformat and papermill write
    (``"exception"``, ``"parameters"``, ``"output_type"``), searchable in the readings of an
    artifact (:class:`OwnText`)."""
    own = {id(cell) for cell in notebook.get("cells", [])}
    injected = {
        id(cell)
        for cell in notebook.get("cells", [])
        if isinstance(cell, Mapping)
        and INJECTED_PARAMETERS_TAG in (cell.get("metadata", {}) or {}).get("tags", [])
    }

    def blank(value: Any, keep: bool) -> Any:
        if isinstance(value, str):
            return value if keep else ""
        if isinstance(value, Mapping):
            return {
                k: blank(v, keep or (k == "source" and id(value) in own - injected))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [blank(v, keep) for v in value]
        return value

    return json.dumps(blank(notebook, False), indent=1, ensure_ascii=False)


def _package_sources(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """``(relative name, resource)`` of every ``.py`` file of the installed package below
    ``folder`` (package data through :mod:`importlib.resources`, wherever it is installed)."""
    for entry in folder.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from _package_sources(entry, f"{name}/")
        elif entry.name.endswith(".py"):
            yield name, entry


@dataclass(frozen=True)
class OwnText:
    """Text that is not evidence in one scan besides :func:`own_text`: what the caller itself
    wrote into the artifacts (a notebook's cells, the skeleton a library writes around them),
    normalized. Build it with :meth:`of`; ``NO_OWN_TEXT`` adds nothing."""

    normalized: str

    @classmethod
    def of(cls, texts: Iterable[str] = (), *, artifacts: Iterable[str] = ()) -> OwnText:
        """Own text from plain ``texts`` (normalized like evalkit's sources, both forms) and
        from ``artifacts``, read in every reading of an artifact (:func:`artifact_text`: an
        HTML page or a notebook's JSON written around the cells)."""
        forms = [form for text in texts for form in _own_forms(text)]
        forms += [artifact_text(artifact) for artifact in artifacts]
        return cls(COPY_SEPARATOR.join(forms))

    @classmethod
    def of_notebook(cls, notebook: Mapping[str, Any], *, pages: Iterable[str] = ()) -> OwnText:
        """Own text of a report rendered from ``notebook``: its cells (:func:`notebook_own_texts`),
        its skeleton (:func:`notebook_skeleton`) and ``pages`` (e.g. the HTML export of the
        notebook with no outputs: the template, stylesheets and rendered Markdown)."""
        return cls.of(notebook_own_texts(notebook), artifacts=[notebook_skeleton(notebook), *pages])

    @functools.cached_property
    def digest(self) -> bytes:
        """A key of this own text for the scan's caches."""
        return hashlib.blake2b(
            self.normalized.encode("utf-8", "surrogatepass"), digest_size=16
        ).digest()


NO_OWN_TEXT: Final = OwnText("")

#: Letters a stretch must hold outside markup and numbers to be evidence (:func:`is_evidence`).
MIN_EVIDENCE_LETTERS: Final = 3
_EDGE_TAG_RE = re.compile(r"^[^<>]*>|<[^<>]*$")
_ANY_TAG_RE = re.compile(r"<[^<>]*>")
_NUMBER_RE = re.compile(r"\d+(?:e ?[+]?\d+)?")
_EDGE_NON_WORD_RE = re.compile(r"^\W+|\W+$")


def is_evidence(stretch: str) -> bool:
    """Whether a stretch common to an artifact and a private string can show a leak: it still
    holds ``MIN_EVIDENCE_LETTERS`` letters (any script) once markup (complete tags, and a tag
    cut at either end) and numbers are removed. Digits, punctuation, white space and markup
    are not private text, nor is the last letter of a word before a run of tags."""
    inner = _NUMBER_RE.sub(" ", _EDGE_TAG_RE.sub(" ", _ANY_TAG_RE.sub(" ", stretch)))
    letters = sum(unicodedata.category(c)[0] == "L" for c in inner)
    return letters >= MIN_EVIDENCE_LETTERS


_NON_ASCII_RUN_RE = re.compile(r"[^\x00-\x7f]+")


class _NeedleIndex:
    """Every needle of the private strings, found in an artifact in one pass (module
    docstring); each match is verified by extension against the private strings it came from.

    Two structures, by kind of needle:

    - **Windows** (``WINDOW_LATIN`` and ``WINDOW_CJK`` characters, most needles: a
      10,000-chunk collection has about 170,000; below ``WINDOW_TABLES_FROM`` they go into
      the automata with the whole strings): per width, the sorted polynomial hashes
      (mod 2**64) of the windows, with the private string and offset of each, and a bit table
      of the hashes' top bits. An artifact's windows of that width are hashed at every
      position with array passes (numpy); a position whose bit is set and whose hash is a
      window's is a match when its characters equal the window's (a hash collision costs a
      comparison, never a miss: equal text has equal hashes). Built from the normalized
      strings with array passes: about 0.3 s of CPU for that collection, where an
      Aho-Corasick automaton of the same windows took 1.5-2 s (issue 48).
    - **Whole strings** (shorter than two windows): in two Aho-Corasick automata
      (pyahocorasick), split by their first character, ASCII or not. pyahocorasick looks a
      node's next character up among its children one by one, and the root of a corpus with
      Chinese text has thousands (every first character): the other automaton reads only the
      stretches from each non-ASCII character of the artifact up to the longest needle's
      length after it. The automata are built by :meth:`build` or at the first search that
      would overdraw a budget of lookups (``SLICED_SEARCH_PER_NEEDLE`` per whole string);
      until then an artifact is searched by looking each of its substrings of a whole
      string's length up in a dict of them, so a small page or log needs no automaton, and
      the searches without one cost at most about what building them does.

    All find every needle occurrence, at the same places, as one automaton of every needle
    did (``tests/test_privacy*.py``)."""

    def __init__(self, private: Iterable[PrivateText]) -> None:
        self._ids: list[str] = []
        self._texts: list[str] = []
        whole: dict[str, list[int]] = {}
        runs: list[tuple[int, int, int, int]] = []  # (text, first offset, count, width)
        for item in private:
            text = _normalize(item.text)
            index = len(self._texts)
            self._ids.append(item.object_id)
            self._texts.append(text)
            for first, count, width in _needle_runs(text):
                if width == len(text):
                    whole.setdefault(text, []).extend((index, 0))
                else:
                    runs.append((index, first, count, width))
        if sum(run[2] for run in runs) < WINDOW_TABLES_FROM:  # few: in the automata too
            for index, first, count, width in runs:
                for offset, needle in _run_needles(self._texts[index], first, count, width):
                    whole.setdefault(needle, []).extend((index, offset))
            runs = []
        # each whole string's match: (its length, its places), as the automata report it
        self._whole = {needle: (len(needle), tuple(found)) for needle, found in whole.items()}
        self._lengths = sorted({len(needle) for needle in whole})
        self._longest = max(self._lengths, default=0)
        self._automata: tuple[Any, Any] | None = None
        # lookups left for searches without the automata (SLICED_SEARCH_PER_NEEDLE)
        self._sliced_budget = SLICED_SEARCH_PER_NEEDLE * len(whole)
        self._windows = _window_tables(self._texts, runs)
        self._searchable = bool(whole) or bool(runs)
        self._own_stretches: dict[tuple[str, bytes], bool] = {}
        self._clean: set[tuple[bytes, bytes]] = set()

    def build(self) -> None:
        """Build the whole strings' two automata now (they are otherwise built at the first
        search that needs them): before a search in a forked process, or on a warm-up
        thread (:func:`prepare_leak_scan`)."""
        self._built()

    def _built(self) -> tuple[Any, Any]:
        """The automata of the whole strings whose first character is ASCII, and of the
        others, built on first call."""
        if self._automata is None:
            import ahocorasick

            ascii_first, other_first = ahocorasick.Automaton(), ahocorasick.Automaton()
            for needle, value in self._whole.items():
                (ascii_first if needle[0] < "\x80" else other_first).add_word(needle, value)
            for automaton in (ascii_first, other_first):
                if len(automaton):
                    automaton.make_automaton()
            self._automata = ascii_first, other_first
        return self._automata

    def _matches(self, haystack: str) -> Iterator[tuple[int, tuple[int, tuple[int, ...]]]]:
        """``(end, (length, places))`` of every needle occurrence in ``haystack`` (see the
        class docstring); ``places``: (private string, offset) pairs, flattened."""
        for table in self._windows:
            yield from table.matches(haystack, self._texts)
        if not self._whole:
            return
        cost = len(haystack) * len(self._lengths)
        if self._automata is None and cost <= self._sliced_budget:
            self._sliced_budget -= cost
            yield from self._sliced_matches(haystack)
            return
        ascii_first, other_first = self._built()
        if len(ascii_first):
            yield from ascii_first.iter(haystack)
        if not len(other_first):
            return
        stretch_start, stretch_end = 0, -1
        for run in _NON_ASCII_RUN_RE.finditer(haystack):
            start, end = run.start(), run.end() - 1 + self._longest
            if start >= stretch_end:  # the stretches before do not reach this one
                if stretch_end > stretch_start:
                    yield from other_first.iter(haystack, stretch_start, stretch_end)
                stretch_start = start
            stretch_end = max(stretch_end, min(end, len(haystack)))
        if stretch_end > stretch_start:
            yield from other_first.iter(haystack, stretch_start, stretch_end)

    def _sliced_matches(self, haystack: str) -> Iterator[tuple[int, tuple[int, tuple[int, ...]]]]:
        """The whole strings' part of :meth:`_matches` without the automata: each substring
        of ``haystack`` of a whole string's length looked up among them (the same matches,
        in another order)."""
        whole, lengths, size = self._whole, self._lengths, len(haystack)
        for start in range(size):
            for length in lengths:  # ascending
                if start + length > size:
                    break
                value = whole.get(haystack[start : start + length])
                if value is not None:
                    yield start + length - 1, value

    def find(self, haystack: str, own: OwnText = NO_OWN_TEXT) -> list[str]:
        """Sorted object IDs of the private strings ``haystack`` (an artifact text) copies."""
        if not self._searchable:
            return []
        leaked: set[str] = set()
        ids, texts = self._ids, self._texts
        for end, (length, found) in self._matches(haystack):
            start = end - length + 1
            for k in range(0, len(found), 2):
                index = found[k]
                if ids[index] in leaked:
                    continue
                if self._verified(haystack, (start, length), (texts[index], found[k + 1]), own):
                    leaked.add(ids[index])
        return sorted(leaked)

    def _verified(
        self, haystack: str, match: tuple[int, int], source: tuple[str, int], own: OwnText
    ) -> bool:
        """Whether the needle ``match`` (start, length) in ``haystack``, found at ``source``
        (private text, offset), extends to a copied stretch of ``2 * length - 1`` characters
        (the whole text for a whole-string needle) that is evidence and not own text."""
        (start, length), (text, offset) = match, source
        if length == len(text):
            stretch = text
        else:
            reach = min(EXTEND_LIMIT, offset, start)
            left = _common_length(
                haystack[start - reach : start][::-1], text[offset - reach : offset][::-1]
            )
            after, text_after = start + length, offset + length
            right = _common_length(
                haystack[after : after + EXTEND_LIMIT], text[text_after : text_after + EXTEND_LIMIT]
            )
            if left + length + right < min(2 * length - 1, len(text)):
                return False
            stretch = haystack[start - left : after + right]
        key = (stretch, own.digest if own.normalized else b"")
        verdict = self._own_stretches.get(key)
        if verdict is None:
            verdict = self._own_stretches[key] = is_evidence(stretch) and not _is_own(stretch, own)
        return verdict

    def find_in_artifact(self, text: str, own: OwnText = NO_OWN_TEXT) -> list[str]:
        """:meth:`find` on ``artifact_text(text)``; a text found clean once is not searched
        again (a report is scanned when it is rendered and again when it is written)."""
        key = _clean_key(text, own)  # hashed once: an artifact can be a megabyte
        if self.is_clean(key):
            return []
        found = self.find(artifact_text(text), own)
        if not found:
            self.mark_clean(key)
        return found

    def is_clean(self, key: tuple[bytes, bytes]) -> bool:
        """Whether the text of ``key`` (:func:`_clean_key`: the text and the own text it was
        searched with) was found clean before."""
        return key in self._clean

    def mark_clean(self, key: tuple[bytes, bytes]) -> None:
        """Remember the text of ``key`` (:func:`_clean_key`) as found clean (by
        :meth:`find_in_artifact`, here or in a forked process)."""
        self._clean.add(key)


def _clean_key(text: str, own: OwnText) -> tuple[bytes, bytes]:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()
    return digest, own.digest if own.normalized else b""


def _common_length(a: str, b: str) -> int:
    """The length of the common prefix of ``a`` and ``b`` (slices compared in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


#: Lookups per whole string that :class:`_NeedleIndex` spends, over all its searches, looking
#: an artifact's substrings up in a dict (one per character and distinct whole-string length)
#: before it builds and runs its automata instead: a lookup (a slice and its hash) costs
#: 0.2-0.5 microseconds, the automata 3-4.5 microseconds per string to build (both measured
#: here), so about 12 lookups cost one string's build. The dict is then the cheaper way for a
#: few short artifacts (a small page, a short log), and its searches cost at most about what
#: the build would have; how many characters that allows follows from the private set's size
#: and its number of distinct lengths.
SLICED_SEARCH_PER_NEEDLE: Final = 12
#: Windows from which :class:`_NeedleIndex` keeps them in hash tables; fewer go into the
#: automata with the whole strings. An automaton costs about 7 microseconds of CPU a needle to
#: build and nothing per needle to search; the tables cost little to build and about 0.06 s
#: per million artifact characters to search (hashing every window): a report's readings are
#: about 3 million characters, whose extra search pays for about 25,000 needles' build.
WINDOW_TABLES_FROM: Final = 1 << 15
#: The base of the windows' polynomial hash (odd, so every power is invertible mod 2**64).
_HASH_BASE: Final = 0x9E3779B97F4A7C15
#: Top bits of a window's hash that index its bit table, at most: a table of 8 MiB (bools) for
#: 500,000 windows or more of a width; a smaller set gets 16 entries per window (at least 1,024),
#: so that about one artifact position in 16 is looked up in the sorted hashes.
_TABLE_BITS: Final = 23
#: Artifact characters hashed at a time: the arrays of a block stay within about 50 MB.
_HASH_BLOCK: Final = 1 << 21


def _code_points(text: str) -> Any:
    """``text``'s code points as a numpy array (a lone surrogate is its own code point)."""
    import numpy as np

    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _window_hashes(points: Any, width: int) -> Any:
    """The hash of each window of ``width`` code points, one per start, as uint64:
    ``sum(point[i + j] * B ** (width - 1 - j))`` mod 2**64 (``B``: ``_HASH_BASE``)."""

    count = max(len(points) - width + 1, 0)
    return _polynomial_hashes((points[j : j + count] for j in range(width)), count)


def _polynomial_hashes(columns: Iterable[Any], count: int) -> Any:
    """``sum(column_j * B ** (n - 1 - j))`` mod 2**64 of ``n`` arrays of ``count`` code
    points (the windows' characters, column by column), as uint64."""
    import numpy as np

    hashes = np.zeros(count, dtype=np.uint64)
    base = np.uint64(_HASH_BASE)
    for column in columns:
        hashes *= base  # wraps mod 2**64, as meant
        hashes += column
    return hashes


@dataclass(frozen=True)
class _WindowTable:
    """The windows of one width (:class:`_NeedleIndex`): their hashes, sorted, with the
    private string and offset of each, and the bit table of the hashes' top bits."""

    width: int
    hashes: Any  # uint64, sorted
    texts: Any  # int32: the private string of each hash
    offsets: Any  # int32: its offset in that string
    bits: Any  # bool, a power of two entries (at most 2 ** _TABLE_BITS)

    def matches(
        self, haystack: str, texts: list[str]
    ) -> Iterator[tuple[int, tuple[int, tuple[int, ...]]]]:
        """``(end, (width, places))`` of every window of this width in ``haystack``."""
        import numpy as np

        width, shift = self.width, np.uint64(64 - (len(self.bits).bit_length() - 1))
        for block in range(0, max(len(haystack) - width + 1, 0), _HASH_BLOCK):
            part = haystack[block : block + _HASH_BLOCK + width - 1]
            hashes = _window_hashes(_code_points(part), width)
            starts = np.flatnonzero(self.bits[hashes >> shift])
            if not len(starts):
                continue
            first = np.searchsorted(self.hashes, hashes[starts])
            found = first < len(self.hashes)
            found[found] = self.hashes[first[found]] == hashes[starts[found]]
            for start, at in zip(starts[found].tolist(), first[found].tolist(), strict=True):
                needle = part[start : start + width]
                places: list[int] = []
                end = at + 1  # the windows of this hash: at, at + 1, ... (sorted)
                while end < len(self.hashes) and self.hashes[end] == self.hashes[at]:
                    end += 1
                for index, offset in zip(
                    self.texts[at:end].tolist(), self.offsets[at:end].tolist(), strict=True
                ):
                    if texts[index][offset : offset + width] == needle:
                        places += (index, offset)
                if places:
                    yield block + start + width - 1, (width, tuple(places))


def _window_tables(texts: list[str], runs: list[tuple[int, int, int, int]]) -> list[_WindowTable]:
    """One :class:`_WindowTable` per window width of ``runs`` (``(text, first offset, count,
    width)``: ``count`` windows placed one after another in ``texts[text]``)."""
    if not runs:  # a small fixture's windows are in the automata: no numpy to import
        return []
    import numpy as np

    starts = np.cumsum([0, *map(len, texts)])
    points = _code_points("".join(texts))
    table = np.array(runs, dtype=np.int64).reshape(-1, 4)
    found = []
    for width in sorted(set(table[:, 3].tolist())):
        mine = table[table[:, 3] == width]
        counts = mine[:, 2]
        step = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        text_of = np.repeat(mine[:, 0], counts)
        offsets = np.repeat(mine[:, 1], counts) + step * width
        at = starts[text_of] + offsets
        hashes = _polynomial_hashes((points[at + j] for j in range(width)), len(at))
        order = np.argsort(hashes, kind="stable")
        table_bits = min(_TABLE_BITS, max(10, (16 * len(hashes)).bit_length()))
        bits = np.zeros(1 << table_bits, dtype=bool)
        bits[hashes >> np.uint64(64 - table_bits)] = True
        found.append(
            _WindowTable(
                width,
                hashes[order],
                text_of[order].astype(np.int32),
                offsets[order].astype(np.int32),
                bits,
            )
        )
    return found


def _is_own(stretch: str, own: OwnText) -> bool:
    """Whether ``stretch`` (its edge punctuation trimmed, Markdown's marks removed) is text
    evalkit or the caller wrote: it occurs in :func:`own_text` or in ``own``."""
    core = _MARKDOWN_MARKS_RE.sub("", _EDGE_NON_WORD_RE.sub("", stretch))
    core = " ".join(core.split())
    if not core:
        return True
    return core in own_text() or (bool(own.normalized) and core in own.normalized)


@functools.lru_cache(maxsize=8)
def _index(private: tuple[PrivateText, ...]) -> _NeedleIndex:
    """The needle index of ``private``, kept for the next scan of the same private texts."""
    return _NeedleIndex(private)


#: Private strings from which :func:`prepare_leak_scan` builds :func:`own_text` too: its cost
#: grows with the private set (about 0.5 s for 30,000 strings), and below this many it is a
#: few tenths of that, cheap enough for the scan that needs it to build.
PREPARE_OWN_TEXT_FROM: Final = 10_000


def prepare_leak_scan(private: Iterable[PrivateText]) -> None:
    """Build (and keep) the needle index of ``private`` now, e.g. on a thread while other work
    runs, so the next :func:`assert_no_leaks` or :func:`find_leaks` with them only searches;
    and :func:`own_text` (about 0.5 s of CPU) for ``PREPARE_OWN_TEXT_FROM`` private strings or
    more. The own text is otherwise built by the first scan with a match that needs it; the
    more private strings, the likelier one of the short ones (a title of a few words) is a
    phrase evalkit's sources hold too, so a large collection's report needs it (10,000 chunks:
    30,000 strings) and a small fixture's often does not (the committed one: about 500)."""
    private = tuple(private)
    _index(private).build()
    if len(private) >= PREPARE_OWN_TEXT_FROM:
        own_text()


def find_leaks(
    artifact: str, private: Iterable[PrivateText], *, own: OwnText = NO_OWN_TEXT
) -> list[str]:
    """Sorted object IDs whose private text occurs in ``artifact`` (rule in module docstring);
    ``own``: text besides evalkit's that is not evidence (a report notebook's cells)."""
    return _index(tuple(private)).find_in_artifact(artifact, own)


#: A file of up to this many characters (after white space is squeezed) is searched whole,
#: like an artifact in memory (a report's HTML and notebook: JSON decoded); a larger one is
#: streamed in blocks. Memory stays bounded by this and ``BLOCK_CHARS``, not by the file.
WHOLE_CHARS: Final = 1 << 22
#: Characters of a streamed file searched at a time.
BLOCK_CHARS: Final = 1 << 17
#: Characters of the previous block searched again with the next one: a copy whose raw form
#: spans at most this many characters is whole in one block (``EXTEND_LIMIT`` twice and a
#: window, at up to 16 raw characters per character: an entity escaped three times).
OVERLAP_CHARS: Final = 1 << 16
_WHITE_RUN_RE = re.compile(r"\s{2,}")


def _squeezed(match: re.Match[str]) -> str:
    return "\n" if "\n" in match.group(0) else " "


def find_leaks_in_stream(
    handle: BinaryIO,
    private: Iterable[PrivateText],
    *,
    own: OwnText = NO_OWN_TEXT,
    whole_chars: int = WHOLE_CHARS,
    block_chars: int = BLOCK_CHARS,
) -> list[str]:
    """:func:`find_leaks` on a file of any size (``handle``: open for reading in binary), in
    bounded memory. The file is decoded as UTF-8 (a byte that is not becomes U+FFFD) a piece
    at a time, its white-space runs squeezed to one character (every reading collapses them).
    Up to ``whole_chars`` characters it is searched whole (JSON decoded, as :func:`find_leaks`);
    a larger file is searched as text (escapes, markup and base64 payloads read within each
    block) in blocks of ``block_chars`` characters cut at a line end where one is near, each
    searched with the last ``OVERLAP_CHARS`` of the one before."""
    index = _index(tuple(private))
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    found: set[str] = set()
    pending, carried, whole = "", "", True
    while True:
        data = handle.read(block_chars)
        final = not data
        pending += _WHITE_RUN_RE.sub(_squeezed, decoder.decode(data, final=final))
        if whole:
            if final:
                return index.find_in_artifact(pending, own)
            if len(pending) <= whole_chars:
                continue
            whole = False
        while len(pending) > block_chars or (final and pending):
            cut = len(pending) if final else pending.rfind("\n", block_chars // 2, block_chars)
            if cut < 0:
                cut = block_chars
            block, pending = pending[:cut], pending[cut:]
            found.update(index.find(artifact_text(carried + block), own))
            carried = block[-OVERLAP_CHARS:]
        if final:
            return sorted(found)


#: How many object IDs a leak message lists per artifact (all are in ``LeakError.object_ids``).
LISTED_IDS: Final = 20


def assert_no_leaks(
    artifacts: Mapping[str, str],
    private: Iterable[PrivateText],
    *,
    own: OwnText = NO_OWN_TEXT,
) -> None:
    """Raise ``LeakError`` naming the artifacts (their names as given, e.g. ``the Markdown file
    reports/gate.md``) and the leaked object IDs, if any leak (``own``: :func:`find_leaks`)."""
    index = _index(tuple(private))
    problems = _found_per_artifact(index, artifacts, own)
    problems = {name: ids for name, ids in problems.items() if ids}
    if problems:
        raise LeakError(
            leak_message(problems), object_ids=sorted({i for f in problems.values() for i in f})
        )


#: With other artifacts beside it, an artifact of at least this many characters is searched in
#: a forked process while this one searches the others: a report's page and notebook (1.2 and
#: 1.6 million characters for a 10,000-chunk collection, about 0.4 s and 0.9 s of readings and
#: search) are scanned on two cores after the notebook has run. Forking this process costs
#: about 0.1 s (its memory mapped again, pages copied as they are written), about what a
#: third of a million characters' readings and search cost, so the fork pays only when the
#: artifact is several times that: measured at 0.85 million characters (a report's notebook),
#: the forked scan took 0.44-0.48 s against 0.40-0.42 s here.
FORK_SCAN_FROM: Final = 1 << 20


def _found_per_artifact(
    index: _NeedleIndex, artifacts: Mapping[str, str], own: OwnText
) -> dict[str, list[str]]:
    """:meth:`_NeedleIndex.find_in_artifact` of each artifact, in the given order; the largest
    one (:data:`FORK_SCAN_FROM`, not found clean before) in a forked process meanwhile, when
    :func:`~evalkit.forking.can_fork_helpers`. A clean result is remembered here as well."""
    largest = max(artifacts, key=lambda name: len(artifacts[name]), default="")
    forked: ForkedCall[list[str]] | None = None
    big = len(artifacts) >= 2 and len(artifacts[largest]) >= FORK_SCAN_FROM
    largest_key = _clean_key(artifacts[largest], own) if big else (b"", b"")  # hashed once
    if big and not index.is_clean(largest_key):
        from evalkit.forking import ForkedCall, can_fork_helpers  # only then: multiprocessing

        if can_fork_helpers():
            index.build()  # here, once: not in the forked process and again in this one
            forked = ForkedCall(
                index.find_in_artifact,
                artifacts[largest],
                own,
                what="the leak scan of an artifact",
            )
    try:
        found = {
            name: index.find_in_artifact(text, own)
            for name, text in artifacts.items()
            if forked is None or name != largest
        }
        if forked is not None:
            found[largest] = forked.result()
            if not found[largest]:
                index.mark_clean(largest_key)
    finally:
        if forked is not None:
            forked.close()
    return {name: found[name] for name in artifacts}


def leak_message(problems: Mapping[str, list[str]]) -> str:
    """The message for leaked object IDs per artifact name: where, which IDs, what to do."""
    where = "; ".join(
        f"{name}: {', '.join(ids[:LISTED_IDS])}"
        + (f" and {len(ids) - LISTED_IDS} more" if len(ids) > LISTED_IDS else "")
        for name, ids in problems.items()
    )
    return (
        f"the leak scan matched fixture text in {where}; nothing was written. Each ID names a "
        "document, chunk or query whose text (or a system whose private setting) the output "
        "holds: look the ID up in the fixture to see which text, then remove what prints it "
        "(a notebook cell or output, a system, gate or run name); 'evalkit scan FIXTURE FILE' "
        "checks any file the same way"
    )
