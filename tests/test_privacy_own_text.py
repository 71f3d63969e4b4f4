"""The leak scan does not take evalkit's own words for fixture text, and still catches every
copy of 31+ Latin / 11+ Chinese characters of fixture text that evalkit did not write itself,
in every kind of artifact, also where the copy shares words with evalkit's prose.

The private texts are built around phrases of evalkit's own report prose: "of the primary
measures with a percentile" (the verdict's headline, evalkit/report/verdict.py and the gate
Markdown of evalkit/report/ci.py) and 现代汉语常用字表 (evalkit/fixtures/generate.py). The
preconditions check that their aligned windows are shared with evalkit's text, so the tests
exercise the verification of shared windows, not the plain window rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import LeakError
from evalkit.report.render import markdown_text, xml_text
from evalkit.safety.artifacts import Artifact, scan_artifact, write_artifacts
from evalkit.safety.privacy import (
    PrivateText,
    _needles,
    _normalize,
    find_leaks,
    own_text,
)

LATIN = PrivateText(
    "chunk:c1",
    "results of the primary measures with a percentile sweep were used for the swept wing "
    "in a slipstream at high incidence",
)
CHINESE = PrivateText("chunk:c2", "现代汉语常用字表有三千五百个字，渡轮每天早上七点出发")
PRIVATE = [LATIN, CHINESE]
PROSE = "Headline: each system's mean of the primary measures with a percentile bootstrap. "


def _as(kind: str, planted: str) -> Artifact:
    """An artifact of ``kind`` holding evalkit-like prose and ``planted``, escaped as that kind
    of file escapes text."""
    text = PROSE + planted + " (q-1)"  # a copy ending in a space keeps it: text follows
    if kind == "json":
        return Artifact("reports/r.json", json.dumps({"note": text}), "json")
    if kind == "markdown":
        return Artifact("reports/gate.md", f"## evalkit gate\n\n- {markdown_text(text)}\n", "text")
    if kind == "junit":
        xml = f'<testsuites><testcase name="{xml_text(text)}" /></testsuites>'
        return Artifact("reports/junit.xml", xml, "text")
    if kind == "html":
        return Artifact("reports/r.html", f"<p><b>{text[:20]}</b>{text[20:]}</p>", "html")
    cell = {"cell_type": "markdown", "source": [text]}
    return Artifact("reports/r.ipynb", json.dumps({"cells": [cell]}), "notebook")


KINDS = ("json", "markdown", "junit", "html", "notebook")


def _copies(private: PrivateText, length: int) -> list[str]:
    """Every substring of ``length`` characters of the private text that evalkit's own text
    does not hold whole (those are evalkit's words, which the rule does not report)."""
    text = _normalize(private.text)
    own = own_text()
    return [
        text[start : start + length]
        for start in range(len(text) - length + 1)
        if text[start : start + length] not in own
    ]


def test_the_private_texts_share_windows_with_evalkit_prose() -> None:
    # precondition: the verification path is what these tests exercise
    own = own_text()
    for private in PRIVATE:
        assert any(needle in own for needle in _needles(private.text))
    # a copy made only of shared windows and fewer than 16 characters more exists
    assert "rimary measures with a percentile sweep" in _copies(LATIN, 39)


def _assert_each_caught(kind: str, copies: list[str], object_id: str) -> None:
    """Each copy planted in an artifact of ``kind`` is a leak of ``object_id`` alone."""
    for planted in copies:
        with pytest.raises(LeakError) as caught:
            scan_artifact(_as(kind, planted), PRIVATE)
        assert caught.value.object_ids == (object_id,), planted


@pytest.mark.parametrize("kind", KINDS)
def test_every_31_character_copy_is_caught_in_every_artifact(kind: str) -> None:
    copies = _copies(LATIN, 31)
    assert len(copies) > 60
    _assert_each_caught(kind, copies, "chunk:c1")


@pytest.mark.parametrize("kind", KINDS)
def test_every_11_character_chinese_copy_is_caught_in_every_artifact(kind: str) -> None:
    copies = _copies(CHINESE, 11)
    assert copies[0].startswith("现代汉语常用")  # the first one's only window is shared
    _assert_each_caught(kind, copies, "chunk:c2")


@pytest.mark.parametrize("kind", KINDS)
def test_evalkit_prose_shared_with_fixture_text_is_not_a_leak(kind: str) -> None:
    # the artifact holds "of the primary measures with a percentile bootstrap" (evalkit's own
    # words), which shares two aligned 16-character windows with the private text; the old
    # rule reported it
    artifact = _as(kind, "R@10 0.389 [0.35, 0.43]; 现代汉语常用字表")
    scan_artifact(artifact, PRIVATE)
    assert find_leaks(artifact.text, PRIVATE) == []


def test_a_copy_that_runs_past_evalkit_prose_is_caught() -> None:
    # evalkit's prose followed by the private text's continuation: the common stretch with the
    # private string ("of the primary measures with a percentile s") is 31+ characters and
    # is not evalkit's text
    artifact = "the mean of the primary measures with a percentile sweep, as measured"
    assert find_leaks(artifact, PRIVATE) == ["chunk:c1"]
    assert find_leaks(artifact.replace(" sweep", " bootstrap"), PRIVATE) == []


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_leak_names_the_artifact_by_kind_and_path(workspace: Path) -> None:
    artifacts = [
        Artifact("reports/junit.xml", "<testsuites/>", "text"),
        _as("markdown", "现代汉语常用字表有三千五百个字"),
    ]
    with pytest.raises(LeakError) as caught:
        write_artifacts(artifacts, private=PRIVATE)
    message = str(caught.value)
    assert "the Markdown file 'reports/gate.md': chunk:c2" in message
    assert "#2" not in message
    assert "redaction" not in message
    assert "evalkit scan" in message
    assert "三千" not in message
    assert not (workspace / "reports").exists()
