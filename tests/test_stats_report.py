"""Tests of the all-pairs view of the report: report_tables.all_pairs_table, compact_letters."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from evalkit.errors import InputError
from evalkit.report import DEFAULT_REPORT_NOTEBOOK
from evalkit.report.tables import all_pairs_table, paired_comparisons
from evalkit.stats import compact_letters, compare, randomized_tukey_hsd

NOTEBOOK = DEFAULT_REPORT_NOTEBOOK


def frame_of(columns: dict[str, np.ndarray], measure: str) -> pd.DataFrame:
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "system": system,
                    "query_id": [f"q{i:03d}" for i in range(values.size)],
                    "measure": measure,
                    "value": values,
                }
            )
            for system, values in columns.items()
        ],
        ignore_index=True,
    )


def test_compact_letters_hand_worked() -> None:
    # a > b > c > d; significant: a-c, a-d, b-d. Groups {a, b}, {b, c}, {c, d}.
    letters = compact_letters(["a", "b", "c", "d"], [("a", "c"), ("d", "a"), ("b", "d")])
    assert letters == {"a": "a", "b": "ab", "c": "bc", "d": "c"}
    assert compact_letters(["x", "y"], []) == {"x": "a", "y": "a"}
    assert compact_letters(["x", "y"], [("y", "x")]) == {"x": "a", "y": "b"}


@settings(max_examples=80, deadline=None)
@given(
    st.integers(2, 7).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(st.booleans(), min_size=k * (k - 1) // 2, max_size=k * (k - 1) // 2),
        )
    )
)
def test_compact_letters_share_a_letter_exactly_when_not_different(
    case: tuple[int, list[bool]],
) -> None:
    k, flags = case
    items = [f"s{i}" for i in range(k)]
    pairs = list(itertools.combinations(items, 2))
    different = [pair for pair, flag in zip(pairs, flags, strict=True) if flag]
    letters = compact_letters(items, different)
    for (a, b), flag in zip(pairs, flags, strict=True):
        shares = bool(set(letters[a]) & set(letters[b]))
        assert shares is not flag, (a, b, letters)
    assert "a" in letters[items[0]]


def test_all_pairs_table_letters_follow_the_test() -> None:
    rng = np.random.default_rng(1)
    topic = rng.uniform(0.2, 0.8, 60)
    columns = {
        "alpha": np.clip(topic + 0.15 + rng.normal(0, 0.05, 60), 0, 1),
        "beta": np.clip(topic + 0.14 + rng.normal(0, 0.05, 60), 0, 1),
        "gamma": np.clip(topic + rng.normal(0, 0.05, 60), 0, 1),
    }
    frame = pd.concat(
        [frame_of(columns, "nDCG@10"), frame_of(columns, "NoAnswerFP")], ignore_index=True
    )
    systems = ["gamma", "alpha", "beta"]
    table, note = all_pairs_table(
        frame, systems=systems, measures=["nDCG@10", "NoAnswerFP"], n_resamples=2_000, seed=3
    )
    assert list(table.index) == systems
    assert list(table.columns) == ["nDCG@10", "NoAnswerFP"]
    # alpha and beta are 0.01 apart (same group), both far above gamma (its own group).
    letters = {s: table.loc[s, "nDCG@10"].split()[1] for s in systems}
    assert letters == {"alpha": "a", "beta": "a", "gamma": "b"}
    assert table.loc["alpha", "nDCG@10"].startswith(f"{columns['alpha'].mean():.3f} ")
    # NoAnswerFP is lower-is-better: the lowest mean (gamma) gets "a".
    assert table.loc["gamma", "NoAnswerFP"].endswith(" a")
    pairs = randomized_tukey_hsd(frame, "nDCG@10", n_resamples=2_000, seed=3)
    assert pairs["significant"].tolist() == [False, True, True]  # alpha-beta, -gamma, beta-gamma
    assert "randomized Tukey HSD (2000 within-topic permutations, seed 3)" in note
    assert "all 3 pairs of 3 systems within each measure" in note
    assert "alpha = 0.05" in note


def test_all_pairs_table_tukey_method_empty_and_bad_method() -> None:
    columns = {"a": np.linspace(0, 1, 10), "b": np.linspace(0, 1, 10)[::-1]}
    frame = frame_of(columns, "R@5")
    table, note = all_pairs_table(frame, systems=["a", "b"], measures=["R@5"], method="tukey")
    assert set(table["R@5"].str.split().str[1]) == {"a"}
    assert "Tukey's HSD for paired data" in note
    alone, _ = all_pairs_table(frame, systems=["a"], measures=["R@5"])  # one system: no pairs
    assert list(alone.index) == ["a"]
    assert list(alone.columns) == ["R@5"]
    assert alone["R@5"].isna().all()
    with pytest.raises(InputError, match="unknown method"):
        all_pairs_table(frame, systems=["a", "b"], measures=["R@5"], method="hsd")


def test_report_notebook_has_one_all_pairs_cell_for_more_than_two_systems() -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    cells = ["".join(cell["source"]) for cell in notebook["cells"]]
    calling = [source for source in cells if "report_tables.all_pairs_table" in source]
    assert len(calling) == 1
    assert calling[0].startswith("if len(SYSTEMS) > 2:")
    assert "display(Markdown(" in calling[0]  # the method and family, next to the table


def test_paired_comparisons_empty_table_has_the_dtypes_of_compare() -> None:
    # One system: report_tables builds the empty table itself; it must match compare's.
    frame = frame_of({"a": np.linspace(0, 1, 5), "b": np.linspace(1, 0, 5)}, "R@5")
    expected = compare(frame, "a", n_resamples=50).iloc[0:0]
    empty = paired_comparisons(frame, "a", systems=["a"], measures=["R@5"])
    assert list(empty.columns) == list(expected.columns)
    for column in expected.columns:
        assert str(empty[column].dtype) == str(expected[column].dtype), column
