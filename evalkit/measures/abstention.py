"""The abstention summary measures: one value per system (and language) over its queries.

Not per-query measures: each summarizes how well a system's confidence separates answerable
from no-answer queries over every threshold, and is computed by
:func:`evalkit.stats.abstention` on an evaluation (its ``summary`` frame names each row's
measure in the ``measure`` column), with a bootstrap interval; definitions, tie rules and a
worked example in ``docs/measures.md``. :func:`evalkit.measures.score` and
:func:`evalkit.run.evaluate` refuse them (``needs="summary"``); ``gates.yaml`` bounds them with
``abstention:`` gates. ``max_fp`` is the operating point's target: the largest ``NoAnswerFP``
allowed.
"""

from __future__ import annotations

from typing import Final

from evalkit.measures._catalog import UNBOUNDED, declare

__all__ = ["ABSTENTION_MEASURES", "MAX_FP", "abstention_measure"]

#: The operating point's parameter: ``(name, default target)``.
MAX_FP: Final = ("max_fp", 0.1)

declare(
    "AbstentionAUC",
    "ROC AUC of confidence: answerable vs no-answer (ties half)",
    __name__,
    needs="summary",
)
declare(
    "AURC",
    "area under the risk-coverage curve of confidence",
    __name__,
    higher_is_better=False,
    needs="summary",
)
declare(
    "OpNoResult",
    "lowest NoResult with NoAnswerFP <= max_fp (operating point)",
    __name__,
    params=(MAX_FP,),
    higher_is_better=False,
    needs="summary",
)
declare(
    "OpNoAnswerFP",
    "NoAnswerFP at the operating point (<= max_fp)",
    __name__,
    params=(MAX_FP,),
    higher_is_better=False,
    needs="summary",
)
declare(
    "OpThreshold",
    "confidence threshold of the operating point (inf: none answered)",
    __name__,
    params=(MAX_FP,),
    bounds=UNBOUNDED,
    needs="summary",
)
declare(
    "OpCoverage",
    "share of queries answered at the operating point",
    __name__,
    params=(MAX_FP,),
    needs="summary",
)

#: Each statistic of :func:`evalkit.stats.abstention`'s summary -> its measure's name.
ABSTENTION_MEASURES: Final = {
    "auc": "AbstentionAUC",
    "aurc": "AURC",
    "op_no_result": "OpNoResult",
    "op_no_answer_fp": "OpNoAnswerFP",
    "op_threshold": "OpThreshold",
    "op_coverage": "OpCoverage",
}


def abstention_measure(statistic: str, max_no_answer_fp: float) -> str:
    """The canonical measure name of an abstention ``statistic`` (a key of
    :data:`ABSTENTION_MEASURES`) at the operating point's target ``max_no_answer_fp``:
    ``AbstentionAUC``, ``OpNoResult`` (target 0.1, the default) or
    ``OpNoResult(max_fp=0.34)``."""
    name = ABSTENTION_MEASURES[statistic]
    target = float(max_no_answer_fp)
    if not name.startswith("Op") or target == MAX_FP[1]:
        return name
    return f"{name}(max_fp={target!r})"  # as str(parse_measure(...)) writes it
