"""``assert_no_leaks`` with a large artifact beside others (issue 48): the largest is searched
in a forked process, with the same findings as in this one, and a clean one is remembered here
so that the write-time scan does not search it again. Oracle: ``find_leaks`` on each artifact,
in this process."""

from __future__ import annotations

import pytest

from evalkit.errors import LeakError
from evalkit.safety import privacy
from evalkit.safety.privacy import PrivateText, assert_no_leaks, find_leaks

_PRIVATE = [
    PrivateText("chunk:c1", "The ferries leave the northern pier every hour on the hour"),
    PrivateText("query:q1", "我们在这里讨论了很多关于渡轮时刻表和票价的问题"),
    PrivateText("chunk:c2", "tickets office"),
]


def _page(body: str) -> str:
    return "<p>" + "plain words of the report page " * 200 + body + "</p>"


def test_the_forked_scan_finds_what_this_process_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(privacy, "FORK_SCAN_FROM", 1000)
    artifacts = {
        "the page": _page("no copy here"),
        "the notebook": _page("as written: " + _PRIVATE[1].text[2:16] + " and " + _PRIVATE[0].text),
    }
    expected = {name: find_leaks(text, _PRIVATE) for name, text in artifacts.items()}
    assert expected["the notebook"] == ["chunk:c1", "query:q1"]
    forked: list[str] = []
    from evalkit import forking

    original = forking.ForkedCall

    class Counted(original):  # type: ignore[misc,valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            forked.append(str(kwargs.get("what")))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(forking, "ForkedCall", Counted)
    privacy._index.cache_clear()
    with pytest.raises(LeakError) as caught:
        assert_no_leaks(artifacts, _PRIVATE)
    assert forked == ["the leak scan of an artifact"]
    assert list(caught.value.object_ids) == expected["the notebook"]
    assert "the notebook" in str(caught.value)
    assert "the page" not in str(caught.value)


def test_a_clean_forked_artifact_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(privacy, "FORK_SCAN_FROM", 1000)
    artifacts = {"the page": _page("short"), "the notebook": _page("no copy " * 50)}
    privacy._index.cache_clear()
    assert_no_leaks(artifacts, _PRIVATE)
    index = privacy._index(tuple(_PRIVATE))
    for text in artifacts.values():
        assert index.is_clean(privacy._clean_key(text, privacy.NO_OWN_TEXT))
