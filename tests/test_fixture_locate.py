"""``locate_span`` and ``evalkit fixture locate``: verbatim spans, offsets, tolerant matching."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_edits import COMMITTED
from hypothesis import given, settings, strategies as st

from evalkit.cli import main
from evalkit.fixtures import load_fixture
from evalkit.fixtures.locate import Candidate, locate_span, read_span_context

FERRY = "The ferry leaves at 06:40 and then every ninety minutes. The ferry leaves on time."


def _slices(text: str, candidates: list[Candidate]) -> None:
    for c in candidates:
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start : c.end] == c.text


def test_exact_finds_every_occurrence() -> None:
    found = locate_span(FERRY, "The ferry leaves")
    # "The ferry leaves" starts the text and the second sentence (57 = len of the first + 1)
    assert [(c.start, c.end, c.match, c.score) for c in found] == [
        (0, 16, "exact", 1.0),
        (57, 73, "exact", 1.0),
    ]
    _slices(FERRY, found)


@pytest.mark.parametrize(
    ("text", "answer", "expected"),
    [
        # white space runs and line breaks, and case
        (FERRY, "EVERY   ninety\nminutes", "every ninety minutes"),
        ("Opening hours:\n  09:00 to\t17:00 daily.", "09:00 to 17:00", "09:00 to\t17:00"),
        # full-width Latin letters and digits (NFKC) in the answer
        (FERRY, "ｌｅａｖｅｓ ａｔ ０６:４０", "leaves at 06:40"),
        # full-width comma in the Chinese text, ASCII comma typed in the answer
        ("单程票价为四克朗，儿童半价。", "四克朗,儿童半价", "四克朗，儿童半价"),
        # a ligature in the text; composed vs decomposed accents
        ("Find the oﬃce on the ﬁrst ﬂoor.", "office on the first floor", "oﬃce on the ﬁrst ﬂoor"),
        ("Un café au lait.", "cafe\u0301 au lait", "café au lait"),
    ],
)
def test_normalized_match_maps_back_to_the_verbatim_text(
    text: str, answer: str, expected: str
) -> None:
    found = locate_span(text, answer)
    assert [(c.text, c.match) for c in found] == [(expected, "normalized")]
    _slices(text, found)


def test_fuzzy_candidates_when_nothing_matches() -> None:
    text = (
        "Ferry services are suspended as soon as an orange storm warning is issued, and resume "
        "one hour after it is lifted. Trams keep running unless the red warning is issued."
    )
    found = locate_span(text, "servises are suspendid as soon as an orange storm warning is isued")
    assert found
    assert found[0].match == "fuzzy"
    assert 0.8 < found[0].score < 1.0
    # the best candidate covers the misspelt clause and not the tram sentence
    assert found[0].text.startswith("services are suspended")
    assert found[0].text.endswith("issued")
    _slices(text, found)
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert all(a.end <= b.start or b.end <= a.start for a in found for b in found if a is not b)


def test_nothing_resembling_and_blank_answers() -> None:
    assert locate_span(FERRY, "zq xj wk") == []
    assert locate_span(FERRY, "   ") == []
    assert locate_span("short", "a much longer answer than the text itself") == []
    _slices("short", locate_span("short", "shorty", min_score=0.1))


@settings(deadline=None)  # wall-clock time is not what these check
@given(
    text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60),
    data=st.data(),
)
def test_any_slice_is_found_verbatim(text: str, data: Any) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    answer = text[start:end]
    found = locate_span(text, answer)
    _slices(text, found)
    if answer.strip():
        assert (start, end) in {(c.start, c.end) for c in found}


@settings(deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["Ferry", "leaves", "AT", "06:40", "Quay", "码头", "渡轮"]),
        min_size=2,
        max_size=8,
    ),
    spaces=st.lists(st.sampled_from([" ", "  ", "\n", "\t "]), min_size=8, max_size=8),
)
def test_respaced_and_recased_answers_are_found(words: list[str], spaces: list[str]) -> None:
    text = "Before. " + " ".join(words) + " After."
    answer = "".join(w.swapcase() + s for w, s in zip(words, spaces, strict=False)).strip()
    found = locate_span(text, answer)
    assert found
    assert found[0].match in ("exact", "normalized")
    _slices(text, found)
    assert " ".join(words) in {c.text for c in found}


# --- the command ------------------------------------------------------------------------------


def _locate_in_ferry_01(answer: str) -> int:
    """``evalkit fixture locate`` of ``answer`` in chunk-ferry-01-01 for q-en-001 of the
    committed fixture: its exit code."""
    return main(["fixture", "locate", str(COMMITTED), "q-en-001", "chunk-ferry-01-01", answer])


def test_cli_prints_the_span_and_offsets(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    chunk = load_fixture(COMMITTED).chunk("chunk-ferry-01-01")
    start = chunk.text.find("first boat leaves Lantern Quay")
    assert start >= 0
    code = _locate_in_ferry_01("FIRST boat  leaves lantern quay")
    out = capsys.readouterr().out
    assert code == 0
    assert f"start {start}, end {start + 30}" in out
    assert '- text: "first boat leaves Lantern Quay"' in out
    assert "current judgment of chunk-ferry-01-01: grade 3" in out
    assert caplog.records == []  # nothing is logged


def test_cli_candidates_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = _locate_in_ferry_01("the first boat leaves Lantern Quai at 6:10")
    out = capsys.readouterr().out
    assert code == 1
    assert "no exact match; closest candidates" in out
    assert "(already a span)" in out  # the committed span is the best candidate


def test_cli_unknown_chunk_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fixture", "locate", str(COMMITTED), "q-en-001", "chunk-nope", "words"]) == 2
    err = capsys.readouterr().err
    assert "chunk 'chunk-nope' is not in fixture" in err


def _with_english_queries_added(tmp_path: Path, text: str) -> Path:
    """A copy of the committed fixture with ``text`` appended to its English queries file."""
    copy = tmp_path / "copy"
    shutil.copytree(COMMITTED, copy)
    en = copy / "queries" / "en.yaml"
    en.write_text(en.read_text(encoding="utf-8") + text, encoding="utf-8")
    return copy


def test_works_on_a_fixture_being_edited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new judgment without spans makes the fixture invalid; locate still reads the chunk."""
    copy = _with_english_queries_added(
        tmp_path,
        '\n- id: q-en-900\n  language: en\n  text: "When is the civic hall open late?"\n'
        "  judgments:\n    - chunk_id: chunk-civic-01-01\n      grade: 3\n",
    )
    assert main(["validate", str(copy)]) == 1
    capsys.readouterr()
    context = read_span_context(str(copy), "q-en-900", "chunk-civic-01-01")
    assert context.query_found
    assert context.grade == 3
    assert context.spans == ()
    assert (
        main(
            [
                "fixture",
                "locate",
                str(copy),
                "q-en-900",
                "chunk-civic-01-01",
                "late opening on thursdays",
            ]
        )
        == 0
    )
    assert '"late opening on Thursdays"' in capsys.readouterr().out


def test_cli_missing_fixture_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing")
    assert main(["fixture", "locate", missing, "q-en-001", "chunk-ferry-01-01", "words"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err
    assert "Traceback" not in err


def test_cli_empty_answer_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fixture", "locate", str(COMMITTED), "q-en-001", "chunk-civic-01-01", "  "]
    assert main(argv) == 2
    assert "the answer to locate is empty" in capsys.readouterr().err


def test_a_query_whose_file_has_a_problem_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _with_english_queries_added(tmp_path, "\n- {broken\n")
    argv = ["fixture", "locate", str(copy), "q-en-001", "chunk-civic-01-01", "open"]
    assert main(argv) == 2  # not "q-en-001 is not in the fixture yet": its file is unreadable
    err = capsys.readouterr().err
    assert "en.yaml" in err
    assert "not in the fixture yet" not in err
