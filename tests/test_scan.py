"""The column scan (``scan_sensitive``, ``find_control``) against the per-string scan it replaced.

The oracle is the old per-string loop (``tests/sensitive_oracle.py``) and, for control
characters, ``schema.TEXT_PATTERN`` itself. Strings are built from pieces that start, end or
complete a path, URL, token, key block or e-mail address, so matches sit at string boundaries,
where joining strings could create a false match or hide a real one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st
from sensitive_oracle import find_sensitive_per_string

from evalkit.fixtures import Chunk, Document, FixtureMeta, Judgment, Query, Span
from evalkit.fixtures.rules import string_problems
from evalkit.fixtures.schema import TEXT_PATTERN
from evalkit.safety import sensitive as scan
from evalkit.safety.sensitive import find_control, find_sensitive, scan_sensitive

# Fragments of every detector's shapes (and of near misses), plus the separator, line breaks,
# U+0130 (whose lower case is two characters) and the Kelvin sign (whose lower case is "k").
PIECES = [
    "/", "~/", "etc", "/etc/", "home/", "a/b", "C:", "\\", "\\\\srv\\", ":", "://", "https:",
    "file:", "mailto:", "x", "www.", "example.com", "localhost", "192.168.", "0.1", "10.0.0.1",
    "-----BEGIN", " RSA PRIVATE KEY-----", "PuTTY-User-Key-File-2", "AKIA", "ASIA",
    "ABCDEFGHIJKLMNOP", "ghp_", "github_pat_", "sk_live_", "hf_", "npm_", "a" * 20,
    "Z9" * 18, "glpat-", "xoxb-", "sk-", "sk-ant-", "pypi-AgE", "AIza", "ya29.", "SG.",
    "SK", "0123456789abcdef" * 2, "eyJ", "eyJabcdefgh.", "12345678:AA", "Bearer ", "basic ",
    "token", "AccountKey=", "password", "passwd", "pwd", "api_key", "secret", " = ", "=", ": ",
    "hunter2", "s3cret99", "@", "user@", "mail.example.org", ".", ",", ";", " ", "\t", "\n",
    "\r", "\x00", "\x01", "\x1b", "\x7f", "\x85", "\u0130", "\u212a", "\u212aey", "。", "渡轮",
    "'", '"', "(", ")", "-", "_", "1", "9", "06:40",
]  # fmt: skip

texts = st.lists(
    st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=8).map("".join),
    max_size=30,
)


def _expected(strings: list[str]) -> dict[int, tuple[str, ...]]:
    return {
        i: kinds for i, text in enumerate(strings) if (kinds := find_sensitive_per_string(text))
    }


@given(texts)
def test_the_column_scan_finds_what_the_per_string_scan_finds(strings: list[str]) -> None:
    assert scan_sensitive(strings) == _expected(strings)
    assert [find_sensitive(text) for text in strings] == [
        find_sensitive_per_string(text) for text in strings
    ]


@given(texts, st.integers(min_value=1, max_value=64))
def test_small_blocks_give_the_same_kinds(strings: list[str], block: int) -> None:
    # Many blocks: strings at a block's first and last position, blocks of one string.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan, "SCAN_BLOCK", block)
        assert scan_sensitive(strings) == _expected(strings)


@pytest.mark.parametrize(
    "strings",
    [
        ["password:", "x"],  # a value only after the separator: no credential
        ["password", "=x"],
        ["https:", "//example"],
        ["/et", "c/passwd"],
        ["user", "@example.com"],
        ["AKIA", "ABCDEFGHIJKLMNOP"],
        ["-----BEGIN RSA", " PRIVATE KEY-----"],
        ["10.0.0", ".1"],
        ["www", ".example.com"],
    ],
)
def test_a_shape_split_across_two_strings_is_not_found(strings: list[str]) -> None:
    assert find_sensitive("".join(strings))  # the joined shape is found...
    assert scan_sensitive(strings) == {}  # ...but neither half, nor the pair, is


def test_strings_holding_the_separator_are_scanned_alone() -> None:
    # NUL is a value character for the credential pattern: "password:" + NUL is a credential
    # when it is one string, and joining must not make "password:" alone one.
    strings = ["password:\x00", "x", "ok\x00https://h", "clean", "password:"]
    assert scan_sensitive(strings) == _expected(strings) == {0: ("token",), 2: ("url",)}


def test_a_key_character_many_strings_hold_takes_a_full_pass() -> None:
    # ':' in every string (more than one in 16): the ':AA' and ':/' guards are then looked for
    # with their own pass; the findings are the same either way.
    strings = [f"note {i}: fine" for i in range(40)] + ["C:/x", "12345678:AA" + "b" * 33]
    assert scan_sensitive(strings) == _expected(strings)
    assert set(scan_sensitive(strings)) == {40, 41}


@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join))
def test_guards_behind_a_key_character_few_strings_hold(planted: str) -> None:
    # 1 string in 200 holds the planted text: guards with a key character (':', '.', '-', ...)
    # are then looked for only in the strings holding that character.
    strings = ["plain words only"] * 199 + [planted]
    assert scan_sensitive(strings) == _expected(strings)


def test_an_empty_column_and_empty_strings() -> None:
    assert scan_sensitive([]) == {}
    assert scan_sensitive(["", "", ""]) == {}
    assert find_control([]) == []


_ALLOWED = re.compile(TEXT_PATTERN.removeprefix("^").removesuffix("$"))


def test_control_characters_are_exactly_those_the_text_pattern_refuses() -> None:
    code_points = [*range(0x300), 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0x10FFFF]
    singles = [chr(c) for c in code_points]
    assert find_control(singles) == [
        i for i, text in enumerate(singles) if not _ALLOWED.fullmatch(text)
    ]


@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x200), max_size=6), max_size=30))
def test_find_control_matches_the_text_pattern(strings: list[str]) -> None:
    expected = [i for i, text in enumerate(strings) if not _ALLOWED.fullmatch(text)]
    assert find_control(strings) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan, "SCAN_BLOCK", 5)
        assert find_control(strings) == expected


def test_string_problems_name_the_fields_the_per_string_scan_flags() -> None:
    meta = FixtureMeta(
        id="f", version="1.0.0", license="CC0-1.0", description="see /etc/hosts", languages=("en",)
    )
    documents = [Document(id=f"d{i}", language="en", title="Plain") for i in range(3)]
    chunks = [
        Chunk(id="c0", document_id="d0", language="en", title="T", text="mail a@example.com"),
        Chunk(id="c1", document_id="d1", language="en", title="https://x", text="clean text"),
        Chunk(id="c2", document_id="d2", language="en", title="T", text="clean too"),
    ]
    spans = (Span(text="clean"), Span(text="AKIAABCDEFGHIJKLMNOP"))
    queries = [
        Query(id="q0", language="en", text="q", judgments=(Judgment(chunk_id="c2", grade=2),)),
        Query(
            id="q1",
            language="en",
            text="token: abc",
            judgments=(Judgment(chunk_id="c2", grade=3, spans=spans),),
        ),
    ]
    found = {
        (p.file, p.object_id, p.field) for p in string_problems(meta, documents, chunks, queries)
    }
    assert found == {
        ("fixture.yaml", "f", "description"),
        ("chunks.yaml", "c0", "text"),
        ("chunks.yaml", "c1", "title"),
        ("queries.yaml", "q1", "text"),
        ("queries.yaml", "q1", "judgments[0].spans[1].text"),
    }
