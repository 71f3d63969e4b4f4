"""``load_strict`` on a large top-level list (issue 21): the second half is parsed by a forked
process, and any text where that could differ from the whole parse is parsed whole.

Oracle: ``yaml.load`` with the located strict loader (``events=False``), as in
``tests/test_yamlio_strict.py``: the same data with the same types, or the same error with the
same message, line and column. ``SPLIT_FROM`` is 0 here, so every text is a candidate.
"""

from __future__ import annotations

import multiprocessing
import string
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st
from test_yamlio_strict import EDGE_CASES, _outcome

from evalkit import forking
from evalkit.safety import yamlio

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the second half is forked"
)


@pytest.fixture(autouse=True)
def _split_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "SPLIT_FROM", 0)
    monkeypatch.setattr(forking, "usable_cores", lambda: 2)


def _assert_same(text: str) -> None:
    assert _outcome(text) == _outcome(text, events=False), text


ITEMS = "".join(f"- id: c{i}\n  text: plain {i}\n" for i in range(6))

# Texts whose first line starting with "- " past the middle is not where a top-level item starts,
# or whose second half holds what only the whole parse reports.
TRICKY = [
    ITEMS,
    ITEMS + '- id: q\n  text: "a quoted scalar\n- that spans lines"\n' + ITEMS,
    "- id: q\n  text: 'single\n" + "- quoted\n" * 12 + "  end'\n",
    '- id: q\n  text: "double\n' + "- quoted\n" * 12 + '  end"\n',
    "- id: f\n  tags: [a,\n" + "- b,\n" * 12 + "  c]\n",
    "- {id: f, tags: [a,\n" + "- b,\n" * 12 + "  c]}\n",
    "chunks:\n" + ITEMS * 2,  # a top-level mapping whose value is a list at column 0
    ITEMS + "- id: x\n  id: y\n",  # a repeated key in the second half: its line is kept
    ITEMS + "- &a {id: x}\n- *a\n",  # an alias in the second half
    ITEMS + "- !!str x\n",  # an explicit tag in the second half
    ITEMS + "---\n- id: second document\n",
    ITEMS + "- id: bad\n\ttext: a tab\n",  # a syntax error in the second half
    ITEMS + "- text: |\n    a literal block\n    - with a dash\n" + ITEMS,
    ITEMS + "- [nested, list]\n- - compact\n  - seq\n" + ITEMS,
    ITEMS.replace("\n", "\r\n"),
    "\ufeff%YAML 1.1\n---\n" + ITEMS * 2,
    "# a comment\n" + ITEMS + "# another\n- id: last\n",
    ITEMS + "- yes\n- 1:30\n- 2024-01-01\n- 0x1F\n",
]


@pytest.mark.parametrize("text", TRICKY + EDGE_CASES)
def test_a_split_parse_gives_what_the_whole_parse_gives(text: str) -> None:
    _assert_same(text)


def test_a_list_is_split_and_the_halves_joined() -> None:
    text = ITEMS * 50
    split = yamlio.split_items(text, len)  # the forked process's work: count its items
    assert split is not None
    rest = split.rest()
    assert rest is not None
    assert split.first == yaml.load(text, Loader=yamlio.StrictLoader)[: len(split.first)]
    assert len(split.first) + rest == 300
    assert 100 < rest < 200  # cut near the middle
    # A cut inside a quoted scalar leaves the first part unterminated: no split, whole parse.
    quoted = '- id: q\n  text: "double\n' + "- quoted\n" * 12 + '  end"\n'
    assert yamlio.split_items(quoted, len) is None
    # A second part that fails to parse, or work that fails, is told by rest() as None.
    broken = yamlio.split_items(text + "- id: x\n  id: y\n", len)
    assert broken is not None
    assert broken.rest() is None
    failing = yamlio.split_items(text, lambda items: 1 / 0)
    assert failing is not None
    assert failing.rest() is None


items = st.lists(
    st.dictionaries(
        st.sampled_from(["id", "text", "tags", "- x", "n"]),
        st.one_of(
            st.text(alphabet=string.printable + "é渡\u2028", max_size=30),
            st.lists(st.text(alphabet="-ab \n'\"", max_size=6), max_size=3),
            st.integers(),
            st.none(),
        ),
        max_size=4,
    ),
    min_size=2,
    max_size=12,
)


@settings(deadline=None, max_examples=150)  # one fork per example
@given(
    items,
    st.sampled_from([None, True, False]),
    st.sampled_from([None, "'", '"', "|"]),
    st.sampled_from([8, 30, 80]),
)
def test_dumped_lists_load_the_same_split_or_whole(
    value: list[dict[str, Any]], flow: bool | None, style: str | None, width: int
) -> None:
    # Narrow widths fold long quoted scalars over several lines, some beginning with "- ".
    text = yaml.safe_dump(value, default_flow_style=flow, default_style=style, width=width)
    _assert_same(text)
