"""The leak scan: does an artifact contain any text of the fixture or any private provider value?

What counts as private (:func:`private_texts`): every document and chunk title, chunk text,
query text and judgment span of the fixture; every string value inside the systems'
``definition()`` (model names, endpoints, ...) and each ``/``-separated part of one (the model of
``org/model``, the host of an endpoint), when at least ``MIN_PRIVATE_VALUE`` characters long
(:func:`definition_values`). Mapping keys of a definition are its field names, not private.

The matching rule. Both sides are HTML-unescaped (up to three times), NFKC-normalized,
case-folded, stripped of invisible characters (:data:`INVISIBLE_RANGES`: every format
character, variation selectors, fillers) and of Markdown backslash escapes, and have white-space
runs collapsed to one space and removed between two Chinese characters, so escaping or
re-wrapping (:mod:`evalkit.report.render` does both) does not hide a leak. Markup is searched as it
is and with its tags removed, so tags between the words of a text do not hide it either.
A private string is reported when the artifact contains

- the whole string, if it has at least ``MIN_WHOLE_LATIN`` characters (``MIN_WHOLE_CJK`` for
  text that is mostly Chinese), or
- any of its aligned windows: the string cut into consecutive pieces of ``WINDOW_LATIN``
  characters (``WINDOW_CJK`` for Chinese). Any copied run of ``2 * window - 1`` or more
  characters necessarily contains one whole aligned window, so every leaked substring of 31+
  Latin or 11+ Chinese characters is caught, wherever it starts.

Shorter fragments (a number, a single word) are not identifying and are not reported.
Findings name object IDs only, never the text.

What evalkit writes itself is not evidence (:func:`own_text`). Real prose shares 16-character
windows with the report's own prose ("compared with the", " degrees of freedom"), so a window
alone would refuse every report of an English collection. evalkit's own text is every ``.py``
source of the package (messages, legends, column and measure names, the Markdown and JUnit
templates; string literals also with their implicit concatenations joined) and the cells of
the report notebook, normalized like the rest (once per process, about 1.5 MB). A needle that
occurs in that text is *shared*; a match of a shared needle is verified: it is extended left
and right against each private string it came from (at most ``EXTEND_LIMIT`` characters each
way), and reported only when the common stretch is at least ``2 * window - 1`` characters
(31 Latin, 11 Chinese) *and* that stretch itself does not occur in evalkit's own text. Needles
that are not shared behave as before.

- **Recall.** Every copied run of 31+ Latin or 11+ Chinese characters of a private string is
  caught, in every artifact and reading above, unless the whole run is text evalkit itself
  ships (its maximal common stretch with the private string, up to ``EXTEND_LIMIT`` characters
  each side of the matched window, occurs verbatim in :func:`own_text`), i.e. unless evalkit
  wrote every one of those characters itself. A private string that evalkit's own text
  contains whole and that is shorter than 31 (11) characters is never reported: the artifact
  cannot tell its copy from evalkit's own words. Shorter copies of unshared text are still
  caught by the window rule (16+ characters at an aligned position, 8+ for a whole string).
- **Precision.** A coincidence of fixture text with evalkit's own prose is no longer reported
  unless it runs past the evalkit text on one side by matching the same private string, or
  is 31+ characters long and not evalkit's text. What remains reported without a copy: a
  31+-character stretch common to a private string and text evalkit did not ship (a library's
  HTML template, a number table) — as before the change.
- **Cost.** The shared needles are found by running the needle automaton once over the own
  text when the index is built (:class:`_NeedleIndex`); a scan pays the verification only for
  matches of shared needles, a few character comparisons each.

String and URL escapes are read as well (:func:`unescaped_text`): where an artifact holds
``\\uXXXX``, ``\\UXXXXXXXX``, ``\\xXX`` or ``\\n``-style escapes (a JSON or JavaScript string
inside HTML, a Python ``repr`` in a log) or ``%XX`` escapes (a URL's query), the decoded text is
searched too, so ``\\u6e21\\u8f6e`` or ``How%20much%20does`` hides nothing.

Base64 payloads (a run of 128+ base64 characters: ``data:`` URIs, a notebook's image outputs)
are searched for what they carry (:func:`embedded_text`): an image's metadata and printable
bytes, any other payload's decoded text as well as the run itself. One Aho-Corasick automaton
(pyahocorasick) holds every needle, so a scan is one pass over the artifact whatever the number
of private strings; an artifact text found clean is remembered with its private set, so the
report's render-time and write-time scans search it once.
"""

from __future__ import annotations

import base64
import binascii
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
from typing import TYPE_CHECKING, Any, Final

from evalkit.errors import LeakError

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture

__all__ = [
    "PrivateText",
    "assert_no_leaks",
    "definition_values",
    "find_leaks",
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
    text = _MARKDOWN_ESCAPE_RE.sub(r"\1", _INVISIBLE_RE.sub("", text))
    # str.split() splits at exactly the characters re's \s matches in a str pattern (both
    # Py_UNICODE_ISSPACE; checked over every code point), faster than re.sub on indented text
    return _CJK_GAP_RE.sub("", " ".join(text.split()))


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
    return _text_needles(_normalize(text))


def _window(normalized: str) -> int:
    return WINDOW_CJK if _is_mostly_cjk(normalized) else WINDOW_LATIN


def _text_needles(normalized: str) -> list[str]:
    """:func:`_needles` of an already normalized string."""
    window = _window(normalized)
    minimum = MIN_WHOLE_CJK if window == WINDOW_CJK else MIN_WHOLE_LATIN
    if len(normalized) < minimum:
        return []
    if len(normalized) <= 2 * window:
        return [normalized]
    return [normalized[i : i + window] for i in range(0, len(normalized) - window + 1, window)]


def _occurrences(
    normalized: Iterable[tuple[str, str]], shared: set[str]
) -> dict[str, list[_Occurrence]]:
    """For each ``shared`` needle, every private string (``(object_id, normalized text)``)
    and aligned offset it is a needle of."""
    found: dict[str, list[_Occurrence]] = {}
    for object_id, text in normalized:
        window = _window(text)
        for index, needle in enumerate(_text_needles(text)):  # a whole string: index 0
            if needle in shared:
                occurrence = _Occurrence(object_id, text, index * window, 2 * window - 1)
                found.setdefault(needle, []).append(occurrence)
    return found


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
            leaves = unescaped_text("\n".join(_string_leaves(decoded, keys=True)))
            return _normalize(embedded_text(leaves) + COPY_SEPARATOR + embedded_text(text))
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
#: How far a shared needle's match is extended each way against its private string.
EXTEND_LIMIT: Final = 16 * WINDOW_LATIN
# the end of one string literal and the start of the next on a following line (implicit
# concatenation: "... compared "\n    f"with the ..."), and Markdown's emphasis and code marks
_LITERAL_JOIN_RE = re.compile(r"[\"']\s*\n\s*(?:[rRbBuUfF]{1,2})?[\"']")
_MARKDOWN_MARKS_RE = re.compile(r"[*`#>|]")


@functools.cache
def own_text() -> str:
    """evalkit's own shipped text, normalized (module docstring): every ``.py`` file of the
    package and the report notebook's cells, with wrapped string literals joined and Markdown's
    marks (``* ` # > |``) removed, separated by ``COPY_SEPARATOR``. Built once per process."""
    sources = [
        resource.read_text(encoding="utf-8")
        for _, resource in sorted(_package_sources(resources.files("evalkit")))
    ]
    if OWN_NOTEBOOK.is_file():
        cells = json.loads(OWN_NOTEBOOK.read_text(encoding="utf-8")).get("cells", [])
        for cell in cells:
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else str(source))
    # One form per source: marks removed can only make a needle look unshared (reported as
    # before), never hide a leak; a form with the quotes of wrapped literals left in would add
    # only windows holding a quote character.
    forms = [_MARKDOWN_MARKS_RE.sub("", _LITERAL_JOIN_RE.sub("", source)) for source in sources]
    return COPY_SEPARATOR.join(_normalize(form) for form in forms)


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
class _Occurrence:
    """Where a shared needle sits in one private string (normalized), for verification."""

    object_id: str
    text: str
    offset: int
    required: int  # the common stretch a match must reach: 2 * window - 1


class _NeedleIndex:
    """Every needle in one Aho-Corasick automaton (pyahocorasick): one pass over an artifact
    finds every needle in it, overlapping ones included, whatever their number. Needles shared
    with :func:`own_text` are verified by extension (module docstring)."""

    def __init__(self, private: Iterable[PrivateText]) -> None:
        import ahocorasick

        owners: dict[str, set[str]] = {}
        normalized: list[tuple[str, str]] = []
        for item in private:
            text = _normalize(item.text)
            normalized.append((item.object_id, text))
            for needle in _text_needles(text):
                owners.setdefault(needle, set()).add(item.object_id)
        self._automaton: Any = ahocorasick.Automaton()
        for needle, object_ids in owners.items():
            self._automaton.add_word(needle, (needle, tuple(sorted(object_ids))))
        self._searchable = bool(owners)
        self._shared: dict[str, list[_Occurrence]] = {}
        self._own_stretches: dict[str, bool] = {}
        if self._searchable:
            self._automaton.make_automaton()
            shared = {needle for _, (needle, _) in self._automaton.iter(own_text())}
            if shared:
                self._shared = _occurrences(normalized, shared)
        self._clean: set[bytes] = set()

    def find(self, haystack: str) -> list[str]:
        """Sorted object IDs with a needle in ``haystack`` (a shared needle's only where the
        match verifies)."""
        if not self._searchable:
            return []
        leaked: set[str] = set()
        for end, (needle, object_ids) in self._automaton.iter(haystack):
            occurrences = self._shared.get(needle)
            if occurrences is None:
                leaked.update(object_ids)
                continue
            start = end - len(needle) + 1
            for occurrence in occurrences:
                if occurrence.object_id not in leaked and self._verified(
                    haystack, start, len(needle), occurrence
                ):
                    leaked.add(occurrence.object_id)
        return sorted(leaked)

    def _verified(self, haystack: str, start: int, length: int, occurrence: _Occurrence) -> bool:
        """Whether the match of a shared needle at ``haystack[start:start+length]`` copies
        ``occurrence``'s private string over ``occurrence.required`` characters or more, in a
        stretch that is not evalkit's own text."""
        text, offset = occurrence.text, occurrence.offset
        left = 0
        while (
            left < EXTEND_LIMIT
            and left < offset
            and left < start
            and haystack[start - left - 1] == text[offset - left - 1]
        ):
            left += 1
        right = 0
        after, text_after = start + length, offset + length
        while (
            right < EXTEND_LIMIT
            and text_after + right < len(text)
            and after + right < len(haystack)
            and haystack[after + right] == text[text_after + right]
        ):
            right += 1
        if left + length + right < occurrence.required:
            return False
        stretch = haystack[start - left : after + right]
        own = self._own_stretches.get(stretch)
        if own is None:
            own = self._own_stretches[stretch] = stretch in own_text()
        return not own

    def find_in_artifact(self, text: str) -> list[str]:
        """:meth:`find` on ``artifact_text(text)``; a text found clean once is not searched
        again (a report is scanned when it is rendered and again when it is written)."""
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()
        if digest in self._clean:
            return []
        found = self.find(artifact_text(text))
        if not found:
            self._clean.add(digest)
        return found


@functools.lru_cache(maxsize=8)
def _index(private: tuple[PrivateText, ...]) -> _NeedleIndex:
    """The needle index of ``private``, kept for the next scan of the same private texts."""
    return _NeedleIndex(private)


def prepare_leak_scan(private: Iterable[PrivateText]) -> None:
    """Build (and keep) the needle index of ``private`` now, e.g. on a thread while other work
    runs, so the next :func:`assert_no_leaks` or :func:`find_leaks` with them only searches."""
    _index(tuple(private))


def find_leaks(artifact: str, private: Iterable[PrivateText]) -> list[str]:
    """Sorted object IDs whose private text occurs in ``artifact`` (rule in module docstring)."""
    return _index(tuple(private)).find_in_artifact(artifact)


#: How many object IDs a leak message lists per artifact (all are in ``LeakError.object_ids``).
LISTED_IDS: Final = 20


def assert_no_leaks(artifacts: Mapping[str, str], private: Iterable[PrivateText]) -> None:
    """Raise ``LeakError`` naming the artifacts (their names as given, e.g. ``the Markdown file
    reports/gate.md``) and the leaked object IDs, if any leak."""
    index = _index(tuple(private))
    problems = {name: index.find_in_artifact(text) for name, text in artifacts.items()}
    problems = {name: ids for name, ids in problems.items() if ids}
    if problems:
        raise LeakError(
            leak_message(problems), object_ids=sorted({i for f in problems.values() for i in f})
        )


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
