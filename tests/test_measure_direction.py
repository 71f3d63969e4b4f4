"""Each measure's direction comes from the measures registry, and compare's wins follow it."""

from __future__ import annotations

import pandas as pd

from evalkit import compare
from evalkit.gates import _check as gates_check
from evalkit.measures import LOWER_IS_BETTER, describe_measure, higher_is_better


def test_the_registry_declares_direction_and_description() -> None:
    # the abstention summaries (issue 46): lower risk, NoResult and NoAnswerFP are better
    abstention = {"AURC", "OpNoResult", "OpNoAnswerFP"}
    assert {"NoAnswerFP", "NoResult", "rbp_resid", *abstention} == LOWER_IS_BETTER
    assert gates_check.higher_is_better is higher_is_better  # gates read the registry
    assert not higher_is_better("NoAnswerFP")
    assert higher_is_better("nDCG(dcg='exp-log2')@10")
    assert higher_is_better("R@5")
    assert describe_measure("NoAnswerFP").startswith("1 if a no-answer query returned")
    assert describe_measure("not-a-measure") == ""


def test_wins_on_no_answer_fp_are_decreases() -> None:
    # Hand-made: on 4 no-answer queries the base answers all (FP 1), the system abstains on 3.
    rows = [("base", f"q{i}", "NoAnswerFP", 1.0) for i in range(4)]
    rows += [("system", f"q{i}", "NoAnswerFP", 0.0 if i < 3 else 1.0) for i in range(4)]
    rows += [("base", f"q{i}", "R@10", 0.5) for i in range(4)]
    rows += [("system", f"q{i}", "R@10", 0.0 if i < 3 else 0.5) for i in range(4)]
    per_query = pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])
    result = compare(per_query, base="base", n_resamples=200, seed=1).set_index("measure")
    assert result.loc["NoAnswerFP", ["wins", "ties", "losses"]].tolist() == [3, 1, 0]
    assert result.loc["R@10", ["wins", "ties", "losses"]].tolist() == [0, 1, 3]
