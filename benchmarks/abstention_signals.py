"""How well each abstention signal separates no-answer queries (issue 14), not on the test fixture.

Fitting sets (the committed ``synthetic-bilingual-v1`` is held out: nothing is chosen on it):

- ``dev``: ``fixtures/synthetic-bilingual-dev-v1`` with its ``aliases.yaml``;
- ``dev-noalias``: the same fixture without its table;
- ``generated``: ``generate_fixture`` seeds 1-3 (60 documents x 4 chunks, 120 queries, a quarter
  of them random-word no-answer queries) with 30 in-domain no-answer queries each added by
  ``evalkit.fixtures.in_domain.add_in_domain_no_answer`` (seeds 11-13): one set.

For every query the reference ``hybrid-rerank`` returns results for (its default rules), the
signals of ``HeuristicReranker.abstention_signals`` are computed (``AbstentionSignals`` says what
each one is), and three combinations for yes/no questions (``COMBINED``). Per signal and set:

- ``AUC``: the probability that an answerable query looks more answerable than a no-answer one
  (ties count half), each signal read in its direction (``LOW`` signals are low for no-answer
  queries, the others high); 0.5 is chance;
- the *operating point*: one threshold per signal for all sets, abstaining (on top of the
  default rules) when the signal is on the no-answer side of it. Candidate thresholds are the
  midpoints of the values seen; feasible ones keep at most ``MAX_NO_RESULT`` (10 %) of the
  answerable queries without results on every set (those the default rules leave without
  results included); among them the lowest worst-set NoAnswerFP wins, ties going to the one
  that abstains on fewer queries. The table shows each set's NoResult and NoAnswerFP there.

Nothing is chosen on a ``--fixture`` given: it is only measured at the thresholds chosen on
the sets above (for the one measurement of the held-out fixture at the end of a change).

    .venv/bin/python benchmarks/abstention_signals.py [--fixture DIR]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from evalkit.fixtures import Fixture, generate_fixture, load_fixture
from evalkit.fixtures.in_domain import add_in_domain_no_answer
from evalkit.systems.reference import SYSTEMS
from evalkit.systems.rerank import AbstentionSignals, HeuristicReranker

#: The generated fixtures the reranker settings were fitted on (see evalkit.systems.rerank) use
#: the generator's original text model; the default changed to "zipf" afterwards.
FIT_TEXT_MODEL: Final = "uniform"

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "fixtures" / "synthetic-bilingual-dev-v1"
MAX_NO_RESULT = 0.10
FIELDS: tuple[str, ...] = AbstentionSignals._fields
# Signals whose low values point to "no answer"; for the others (yes/no, unknown items and the
# combinations) high ones.
LOW = frozenset(
    {
        "top_score",
        "margin",
        "relative_margin",
        "agreement",
        "support",
        "attribute_coverage",
        "answer_evidence",
    }
)
# Combinations for yes/no questions (the form of most no-answer queries of the development
# fixture): the question form joined with a sign of a missing answer.
COMBINED: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "yes_no & unknown_items": lambda m: (
        m[:, FIELDS.index("yes_no")] * m[:, FIELDS.index("unknown_items")]
    ),
    "yes_no & disagreement": lambda m: (
        m[:, FIELDS.index("yes_no")] * (1 - m[:, FIELDS.index("agreement")])
    ),
    "yes_no & 1 - relative_margin": lambda m: (
        m[:, FIELDS.index("yes_no")] * (1 - m[:, FIELDS.index("relative_margin")])
    ),
}


@dataclass(frozen=True)
class _Set:
    """One set's queries: answerable flags, no-result flags (default rules), signals (queries x
    signals)."""

    answerable: np.ndarray
    no_result: np.ndarray
    signals: np.ndarray


def _fixtures() -> dict[str, list[Fixture]]:
    dev = load_fixture(DEV)
    generated = [
        add_in_domain_no_answer(
            generate_fixture(
                seed, text_model=FIT_TEXT_MODEL, documents=60, chunks_per_document=4, queries=120
            ),
            10 + seed,
            count=30,
        )
        for seed in (1, 2, 3)
    ]
    return {
        "dev": [dev],
        "dev-noalias": [dev.model_copy(update={"aliases": None})],
        "generated": generated,
    }


def _measure(fixtures: list[Fixture]) -> _Set:
    answerable, no_result, rows = [], [], []
    for fixture in fixtures:
        reranker = SYSTEMS.get("hybrid-rerank")()
        assert isinstance(reranker, HeuristicReranker)
        reranker.use_aliases(fixture.aliases)
        reranker.index(fixture.chunks)
        try:
            for query in fixture.queries:
                answerable.append(query.answerable)
                no_result.append(not reranker.search(query, 10))
                rows.append(list(reranker.abstention_signals(query.text, query.language)))
        finally:
            reranker.close()
    matrix = np.array(rows, dtype=float).reshape(len(rows), len(FIELDS))
    columns = [matrix] + [combine(matrix)[:, None] for combine in COMBINED.values()]
    return _Set(np.array(answerable), np.array(no_result), np.hstack(columns))


def _auc(values: np.ndarray, answerable: np.ndarray) -> float:
    """P(answerable value > no-answer value), ties half (Mann-Whitney U / (n1 n0))."""
    n1, n0 = int(answerable.sum()), int((~answerable).sum())
    if not n1 or not n0:
        return float("nan")
    ranks = rankdata(values)
    return float((ranks[answerable].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _operating_point(sets: dict[str, _Set], column: int, low: bool) -> float:
    """The threshold of one signal chosen on ``sets`` (module docstring)."""
    values = np.unique(np.concatenate([s.signals[:, column] for s in sets.values()]))
    edges = [values[0] - 1, *((values[1:] + values[:-1]) / 2), values[-1] + 1]
    best: tuple[float, int, float] | None = None
    for tau in edges:
        fps, abstained, ok = [], 0, True
        for s in sets.values():
            fired = s.signals[:, column] < tau if low else s.signals[:, column] > tau
            empty = s.no_result | fired
            ok = ok and float(empty[s.answerable].mean()) <= MAX_NO_RESULT
            fps.append(float((~empty[~s.answerable]).mean()))
            abstained += int(fired.sum())
        if ok and (best is None or (max(fps), abstained) < best[:2]):
            best = (max(fps), abstained, float(tau))
    return best[2] if best else float(edges[0] if low else edges[-1])


def _at(s: _Set, column: int, low: bool, tau: float) -> str:
    """NoResult / NoAnswerFP of one set when the signal's rule at ``tau`` is added."""
    fired = s.signals[:, column] < tau if low else s.signals[:, column] > tau
    empty = s.no_result | fired
    return f"{float(empty[s.answerable].mean()):.3f} / {float((~empty[~s.answerable]).mean()):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fixture",
        action="append",
        default=[],
        help="also measure this fixture (with its table) at the thresholds chosen without it",
    )
    args = parser.parse_args()
    sets = {name: _measure(fixtures) for name, fixtures in _fixtures().items()}
    extra = {Path(p).name: _measure([load_fixture(p)]) for p in args.fixture}
    for name, s in (sets | extra).items():
        fp = float((~s.no_result[~s.answerable]).mean())
        no_result = float(s.no_result[s.answerable].mean())
        counts = f"{int(s.answerable.sum())} answerable, {int((~s.answerable).sum())} no-answer"
        print(f"{name}: {counts}; default rules: NoResult {no_result:.3f}, NoAnswerFP {fp:.3f}")
    rows = {}
    for column, signal in enumerate([*FIELDS, *COMBINED]):
        low = signal in LOW
        row: dict[str, object] = {}
        for name, s in (sets | extra).items():
            kept = ~s.no_result
            values = s.signals[kept, column] if low else -s.signals[kept, column]
            row[f"AUC {name}"] = round(_auc(values, s.answerable[kept]), 3)
        tau = _operating_point(sets, column, low)
        row["abstain when"] = f"{'<' if low else '>'} {tau:.4g}"
        for name, s in (sets | extra).items():
            row[f"{name} NoResult / NoAnswerFP"] = _at(s, column, low, tau)
        rows[signal] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table.iloc[:, : len(sets | extra)].to_string())
        print(table.iloc[:, len(sets | extra) :].to_string())


if __name__ == "__main__":
    main()
