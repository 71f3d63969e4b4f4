"""The leak scan sees through the escaping evalkit.report.render applies to Markdown output, and
through string and URL escapes."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable

import pytest

from evalkit.report.render import markdown_text
from evalkit.safety.privacy import PrivateText, find_leaks, unescaped_text

SECRET_TEXT = "The harbour ferry @noon leaves from pier #4 (see https://example.invalid/x)."


def test_markdown_escaped_text_is_still_a_leak() -> None:
    escaped = markdown_text(SECRET_TEXT)
    assert escaped != SECRET_TEXT  # backslashes and word joiners were inserted
    findings = find_leaks(f"| q-1 | {escaped} |", [PrivateText("chunk:c-1", SECRET_TEXT)])
    assert findings == ["chunk:c-1"]


def test_invisible_characters_do_not_hide_a_leak() -> None:
    hidden = "\u200b".join(SECRET_TEXT[:40]) + "\u2060\u00ad"
    findings = find_leaks(hidden, [PrivateText("chunk:c-1", SECRET_TEXT)])
    assert findings == ["chunk:c-1"]


CHINESE = "渡轮每天早上七点从北码头出发，周末加开一班。"


@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param("\u2062".join, id="invisible times"),
        pytest.param("\ufe0f".join, id="variation selector"),
        pytest.param("\u202e".join, id="bidi override"),
        pytest.param("\U000e0041".join, id="tag character"),
        pytest.param(lambda t: t.replace(" ", "&amp;#32;"), id="entity escaped twice"),
        pytest.param(lambda t: t.replace(" ", "</span> <span>"), id="words split by tags"),
        pytest.param(lambda t: t.replace(" ", "<br> "), id="line breaks"),
    ],
)
def test_disguised_text_is_still_a_leak(disguise: Callable[[str], str]) -> None:
    findings = find_leaks(f"<p>{disguise(SECRET_TEXT)}</p>", [PrivateText("c:1", SECRET_TEXT)])
    assert findings == ["c:1"]


def test_spaces_between_chinese_characters_do_not_hide_a_leak() -> None:
    spaced = " ".join(CHINESE[:12])
    assert find_leaks(f"<td>{spaced}</td>", [PrivateText("c:2", CHINESE)]) == ["c:2"]
    broken = "<br>".join(CHINESE[:12])
    assert find_leaks(f"<td>{broken}</td>", [PrivateText("c:2", CHINESE)]) == ["c:2"]


def test_every_format_character_is_removed() -> None:
    import unicodedata

    from evalkit.safety.privacy import INVISIBLE_RANGES

    covered = {c for a, b in INVISIBLE_RANGES for c in range(a, b + 1)}
    missing = [
        f"U+{c:04X}"
        for c in range(0x110000)
        if unicodedata.category(chr(c)) == "Cf" and c not in covered
    ]
    assert missing == []  # a newer Unicode's format characters belong in INVISIBLE_RANGES
    # the scan skips the removal for an ASCII text (str.isascii): none of them is ASCII
    assert min(covered) > 0x7F


def test_markup_itself_is_no_leak() -> None:
    # the tag-stripped view adds no false finding for text that only shares tag names
    html = "<table><tr><td>q-1</td><td>0.5</td></tr></table>"
    assert find_leaks(html, [PrivateText("c:1", SECRET_TEXT)]) == []


# accented letters at most 20 characters apart: no long unescaped run for the plain scan to catch
ACCENTED = "Crème brûlée à la carte, café au lait ou thé vert, pâté en croûte et crêpes flambées."


@pytest.mark.parametrize(
    ("private", "disguise"),
    [
        pytest.param(CHINESE, json.dumps, id="JSON string (\\u escapes)"),
        pytest.param(CHINESE, ascii, id="Python ascii() (\\u escapes)"),
        pytest.param(CHINESE, lambda t: repr(t.encode()), id="Python bytes repr (\\x UTF-8)"),
        pytest.param(
            SECRET_TEXT, lambda t: json.dumps(t.replace(" ", "\n")), id="\\n between words"
        ),
        pytest.param(ACCENTED, json.dumps, id="escaped letters among plain ones"),
        pytest.param(SECRET_TEXT, urllib.parse.quote, id="URL path escapes"),
        pytest.param(CHINESE, urllib.parse.quote_plus, id="URL query escapes (UTF-8)"),
        pytest.param(
            SECRET_TEXT, lambda t: urllib.parse.quote(urllib.parse.quote(t)), id="URL-escaped twice"
        ),
        pytest.param(
            CHINESE, lambda t: urllib.parse.quote(json.dumps(t)), id="JSON escapes, URL-escaped"
        ),
        pytest.param(
            SECRET_TEXT.rstrip(".").replace("@", "at").replace("#", "no").replace("(", "")[:40],
            lambda t: urllib.parse.urlencode({"q": t}),
            id="URL query with + for spaces only",
        ),
        pytest.param(
            CHINESE,
            lambda t: repr(b"\xff" + t.encode() + b"\x80"),
            id="bytes repr with stray bytes around",
        ),
        pytest.param(
            CHINESE, lambda t: repr(t.encode()[:-2]), id="bytes repr cut inside a character"
        ),
        pytest.param(
            CHINESE, lambda t: json.dumps({"blob": json.dumps({"q": t})}), id="JSON in JSON"
        ),
        pytest.param(
            "渡轮🚢每天早上🚢七点出发🚢北码头",
            json.dumps,
            id="surrogate pair",
        ),
    ],
)
def test_escaped_text_is_still_a_leak(private: str, disguise: Callable[[str], str]) -> None:
    escaped = disguise(private)
    assert escaped != private
    html = f'<p>ok</p><script>var rows = {{"hover": {escaped}}};</script><a href="/s?q={escaped}">'
    assert find_leaks(html, [PrivateText("c:1", private)]) == ["c:1"]
    log = f"INFO result={escaped} done\n" * 3
    assert find_leaks(log, [PrivateText("c:1", private)]) == ["c:1"]


def test_escaped_text_inside_a_json_document_is_still_a_leak() -> None:
    # json.loads reads the document's own escapes; the string's own URL escapes are read too
    document = json.dumps({"link": "https://example.invalid/?q=" + urllib.parse.quote(CHINESE)})
    assert find_leaks(document, [PrivateText("c:2", CHINESE)]) == ["c:2"]


def test_text_without_escapes_is_searched_as_it_is() -> None:
    assert unescaped_text(SECRET_TEXT) == SECRET_TEXT
    assert unescaped_text("") == ""


def test_escapes_of_other_text_are_no_leak() -> None:
    other = json.dumps("一二三四五六七八九十百千万") + urllib.parse.quote(
        "nothing private at all here"
    )
    bad = "\\u12 \\x4 %zz %E6 \\U00110000 \\ud800"  # malformed or lone: decoded, never raised
    findings = find_leaks(
        other + bad, [PrivateText("c:1", SECRET_TEXT), PrivateText("c:2", CHINESE)]
    )
    assert findings == []


def test_latin1_escapes_of_a_javascript_string_are_read() -> None:
    escaped = ACCENTED.encode("latin-1").decode("ascii", "backslashreplace")  # caf\\xe9 ...
    assert "\\xe9" in escaped
    assert find_leaks(f"<script>s='{escaped}'</script>", [PrivateText("c:3", ACCENTED)]) == ["c:3"]


def test_a_decoded_copy_never_joins_the_text_before_it() -> None:
    # the end of the artifact and the start of a decoded stretch hold half a needle each
    # (the copy starts where the artifact does; the first windows are "渡轮每天早上" and
    # "The harbour ferr")
    chinese_seam = CHINESE[3:6] + "x" * 10 + "\\n" + "y" * 10 + CHINESE[:3]
    english_seam = SECRET_TEXT[12:16] + "\\n" + "ok" + SECRET_TEXT[:11]
    private = [PrivateText("c:1", SECRET_TEXT), PrivateText("c:2", CHINESE)]
    assert find_leaks(chinese_seam, private) == []
    assert find_leaks(english_seam, private) == []


@pytest.mark.parametrize(
    ("artifact", "private", "leaked"),
    [
        # a literal "+" is no space, even near a form value or a URL escape
        (
            "Which C++ tutorial covers pointers? Formula: x=a+b",
            "Which C tutorial covers pointers",
            False,
        ),
        ("y=1+2+3 and a total cost 1+2+3 dollars", "a total cost 1 2 3 dollars", False),
        (
            "lang=C%2B%2B and Which C++ tutorial covers pointers",
            "Which C tutorial covers pointers",
            False,
        ),
        # nor one a URL decoding produced (%2B), which is a real "+"
        ("/search?q=C%2B%2B+tutorial+covers+pointers", "C tutorial covers pointers", False),
        ("/search?q=C%2B%2B+tutorial+covers+pointers", "C++ tutorial covers pointers", True),
    ],
)
def test_plus_is_a_space_only_in_a_form_value(artifact: str, private: str, leaked: bool) -> None:
    assert find_leaks(artifact, [PrivateText("q:1", private)]) == (["q:1"] if leaked else [])


NESTED = "Words joined by plus signs make this private sentence long"


@pytest.mark.parametrize(
    "artifact",
    [
        "/login?next=" + urllib.parse.quote("/s?q=" + NESTED.replace(" ", "+"), safe=""),
        "/login?" + urllib.parse.urlencode({"next": "/s?" + urllib.parse.urlencode({"q": NESTED})}),
        '{"u": "/s?next=%2Fs%3Fq%3D' + NESTED.replace(" ", "%2B") + '"}',
        '<script>u = "/s?q\\u003d' + NESTED.replace(" ", "+") + '"</script>',
        "/s?q%3D" + NESTED.replace(" ", "+"),
    ],
    ids=["quoted", "urlencoded", "JSON", "JSON-escaped =", "URL-escaped ="],
)
def test_a_query_url_inside_another_urls_value_is_read(artifact: str) -> None:
    # a redirect link (next=, return_to=): the inner query's "+" became %2B, its "=" %3D
    assert find_leaks(artifact, [PrivateText("q:1", NESTED)]) == ["q:1"]
