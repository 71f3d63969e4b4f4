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

Combinations (``LOGISTIC``): L2-regularized logistic regressions of "answerable" on several
signals at once (each signal standardized over the fitting rows, penalty ``PENALTY`` = 1 on the
standardized coefficients, fixed beforehand, not tuned; every fitting set weighs the same in
the loss; scipy's L-BFGS). The fitted log-odds is one more signal, low for no-answer queries,
with its operating point chosen as above on the sets the model was fitted on:

- ``logistic: all``: every signal, fitted on all three sets;
- ``logistic: no question form``: every signal but ``yes_no`` (the question form of a fixture's
  authors is a property of that fixture, not of the corpus), fitted on all three sets;
- ``logistic: generated only`` and ``logistic: dev only``: the second model fitted on one side
  only, its threshold too, and measured on the other: how far a fit carries over to data
  written another way (the held-out question);
- ``logistic: per language``: the second model fitted separately for each query language (a
  per-language calibration: own weights and intercept); a language the fitting sets lack gets
  log-odds 0.

The three combinations of ``CROSS_VALIDATED`` are also measured out of fold (rows ``(5-fold)``):
each fitting set's queries are split into ``FOLDS`` = 5 folds (seed ``FOLD_SEED`` = 0; ``dev``
and ``dev-noalias`` share their folds, being the same queries), and each query gets the log-odds
of the model fitted on the other folds of every fitting set; the threshold is then chosen on
these out-of-fold values. The in-sample rows flatter a model of 14 signals fitted on 11 no-answer
queries of the development fixture; the out-of-fold rows are the honest estimate.

``--by-language`` adds AUC columns per query language of each set.

Nothing is chosen on a ``--fixture`` given: it is only measured at the thresholds (and with the
models) chosen on the sets above (for the one measurement of the held-out fixture at the end of
a change).

    .venv/bin/python benchmarks/abstention_signals.py [--fixture DIR] [--by-language]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.stats import rankdata

from evalkit.fixtures import Fixture, generate_fixture, load_fixture
from evalkit.fixtures.in_domain import add_in_domain_no_answer
from evalkit.systems.abstention import AbstentionSignals
from evalkit.systems.reference import SYSTEMS
from evalkit.systems.rerank import HeuristicReranker

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
        "rare_coverage",
        "top_overlap",
        "self_score_ratio",
        "score_dispersion",
    }
)
PENALTY: Final = 1.0
FOLDS: Final = 5
FOLD_SEED: Final = 0
#: Combinations also measured out of fold (module docstring).
CROSS_VALIDATED: Final = ("logistic: all", "logistic: no question form", "logistic: per language")
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
    languages: np.ndarray

    def subset(self, mask: np.ndarray) -> _Set:
        return _Set(
            self.answerable[mask], self.no_result[mask], self.signals[mask], self.languages[mask]
        )

    def with_column(self, column: np.ndarray) -> _Set:
        return _Set(
            self.answerable,
            self.no_result,
            np.hstack([self.signals, column[:, None]]),
            self.languages,
        )


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
    answerable, no_result, rows, languages = [], [], [], []
    for fixture in fixtures:
        reranker = SYSTEMS.get("hybrid-rerank")()
        assert isinstance(reranker, HeuristicReranker)
        reranker.use_aliases(fixture.aliases)
        reranker.index(fixture.chunks)
        try:
            for query in fixture.queries:
                answerable.append(query.answerable)
                languages.append(query.language)
                no_result.append(not reranker.search(query, 10))
                rows.append(list(reranker.abstention_signals(query.text, query.language)))
        finally:
            reranker.close()
    matrix = np.array(rows, dtype=float).reshape(len(rows), len(FIELDS))
    columns = [matrix] + [combine(matrix)[:, None] for combine in COMBINED.values()]
    return _Set(np.array(answerable), np.array(no_result), np.hstack(columns), np.array(languages))


def _loss(
    z: np.ndarray, y: np.ndarray, w: np.ndarray
) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """The weighted logistic loss with ``PENALTY`` times the squared coefficients (not the
    intercept ``b[0]``), and its gradient, of the coefficients ``b``."""

    def loss(b: np.ndarray) -> tuple[float, np.ndarray]:
        margin = z @ b[1:] + b[0]
        p = 1.0 / (1.0 + np.exp(-margin))
        value = float(
            (w * (np.logaddexp(0, -margin) * y + np.logaddexp(0, margin) * (1 - y))).sum()
        )
        residual = w * (p - y)
        grad = np.concatenate([[residual.sum()], z.T @ residual + 2 * PENALTY * b[1:]])
        return value + PENALTY * float(b[1:] @ b[1:]), grad

    return loss


def _fit_logistic(sets: list[_Set], columns: list[int]) -> Callable[[_Set], np.ndarray]:
    """A logistic regression of "answerable" on ``columns`` (module docstring); returns the
    function that gives a set's fitted log-odds per query."""
    kept = [~s.no_result for s in sets]
    x = np.vstack([s.signals[k][:, columns] for s, k in zip(sets, kept, strict=True)])
    y = np.concatenate([s.answerable[k] for s, k in zip(sets, kept, strict=True)]).astype(float)
    # Every set weighs the same; the weights sum to the number of rows.
    w = np.concatenate([np.full(int(k.sum()), 1.0 / int(k.sum())) for k in kept])
    w *= len(w) / w.sum()
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale

    loss = _loss(z, y, w)
    b = minimize(loss, np.zeros(len(columns) + 1), jac=True, method="L-BFGS-B").x
    return lambda s: ((s.signals[:, columns] - mean) / scale) @ b[1:] + b[0]


def _auc(values: np.ndarray, answerable: np.ndarray) -> float:
    """P(answerable value > no-answer value), ties half (Mann-Whitney U / (n1 n0))."""
    n1, n0 = int(answerable.sum()), int((~answerable).sum())
    if not n1 or not n0:
        return float("nan")
    ranks = rankdata(values)
    return float((ranks[answerable].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


#: The sets each ``LOGISTIC`` model (and its threshold) is fitted on.
LOGISTIC: Final[dict[str, tuple[str, ...]]] = {
    "logistic: all": ("dev", "dev-noalias", "generated"),
    "logistic: no question form": ("dev", "dev-noalias", "generated"),
    "logistic: generated only": ("generated",),
    "logistic: dev only": ("dev", "dev-noalias"),
    "logistic: per language": ("dev", "dev-noalias", "generated"),
}


def _fit_model(name: str, fitting: list[_Set]) -> Callable[[_Set], np.ndarray]:
    """The ``LOGISTIC`` combination ``name`` fitted on ``fitting`` (module docstring)."""
    every = list(range(len(FIELDS)))
    formless = [n for n in every if FIELDS[n] != "yes_no"]
    if name != "logistic: per language":
        return _fit_logistic(fitting, every if name == "logistic: all" else formless)
    languages = sorted({str(lang) for s in fitting for lang in s.languages.tolist()})
    by_language = {
        lang: _fit_logistic([s.subset(s.languages == lang) for s in fitting], formless)
        for lang in languages
    }

    def per_language(s: _Set) -> np.ndarray:
        out = np.zeros(len(s.answerable))
        for lang, model in by_language.items():
            mask = s.languages == lang
            if mask.any():
                out[mask] = model(s.subset(mask))
        return out

    return per_language


def _folds(length: int) -> np.ndarray:
    """The fold of each of ``length`` queries (``FOLDS`` folds, seed ``FOLD_SEED``); sets of the
    same length (``dev`` and ``dev-noalias``, the same queries in the same order) get the same
    folds."""
    return np.random.default_rng(FOLD_SEED).permutation(length) % FOLDS


def _out_of_fold(name: str, sets: dict[str, _Set]) -> dict[str, np.ndarray]:
    """The log-odds of ``name`` for every query of its fitting sets from the model fitted on
    the other folds (``CROSS_VALIDATED``)."""
    fitting = LOGISTIC[name]
    out = {n: np.zeros(len(sets[n].answerable)) for n in fitting}
    folds = {n: _folds(len(sets[n].answerable)) for n in fitting}
    for fold in range(FOLDS):
        model = _fit_model(name, [sets[n].subset(folds[n] != fold) for n in fitting])
        for n in fitting:
            held = folds[n] == fold
            out[n][held] = model(sets[n].subset(held))
    return out


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
    parser.add_argument(
        "--by-language", action="store_true", help="also give each set's AUC per query language"
    )
    args = parser.parse_args()
    sets = {name: _measure(fixtures) for name, fixtures in _fixtures().items()}
    extra = {Path(p).name: _measure([load_fixture(p)]) for p in args.fixture}
    models = {
        name: _fit_model(name, [sets[n] for n in fitted]) for name, fitted in LOGISTIC.items()
    }
    # Each model's log-odds of the --fixture sets, computed once: they are also what those
    # sets get for the cross-validated columns below.
    extra_odds = {n: {name: model(s) for name, model in models.items()} for n, s in extra.items()}
    for name, model in models.items():
        sets = {n: s.with_column(model(s)) for n, s in sets.items()}
        extra = {n: s.with_column(extra_odds[n][name]) for n, s in extra.items()}
    # Out of fold on the fitting sets; a --fixture gets the model fitted on all of them.
    for name in CROSS_VALIDATED:
        oof = _out_of_fold(name, sets)
        sets = {n: s.with_column(oof[n]) for n, s in sets.items()}
        extra = {n: s.with_column(extra_odds[n][name]) for n, s in extra.items()}
    crossed = {f"{name} ({FOLDS}-fold)": LOGISTIC[name] for name in CROSS_VALIDATED}
    every = sets | extra
    for name, s in every.items():
        fp = float((~s.no_result[~s.answerable]).mean())
        no_result = float(s.no_result[s.answerable].mean())
        counts = f"{int(s.answerable.sum())} answerable, {int((~s.answerable).sum())} no-answer"
        print(f"{name}: {counts}; default rules: NoResult {no_result:.3f}, NoAnswerFP {fp:.3f}")
    # (set, language or None for all of its queries) -> the set's queries in the group
    groups: dict[tuple[str, str | None], np.ndarray] = {
        (name, None): np.ones(len(s.answerable), dtype=bool) for name, s in every.items()
    }
    if args.by_language:
        for name, s in every.items():
            for language in sorted(set(s.languages.tolist())):
                groups[name, language] = s.languages == language
    rows = {}
    for column, signal in enumerate([*FIELDS, *COMBINED, *models, *crossed]):
        low = signal in LOW or signal in models or signal in crossed
        row: dict[str, object] = {}
        for (name, language), mask in groups.items():
            s = every[name]
            kept = mask & ~s.no_result
            values = s.signals[kept, column] if low else -s.signals[kept, column]
            label = name if language is None else f"{name}/{language}"
            row[f"AUC {label}"] = round(_auc(values, s.answerable[kept]), 3)
        fitted = {n: sets[n] for n in (LOGISTIC | crossed).get(signal, tuple(sets))}
        tau = _operating_point(fitted, column, low)
        row["abstain when"] = f"{'<' if low else '>'} {tau:.4g}"
        for name, s in every.items():
            row[f"{name} NoResult / NoAnswerFP"] = _at(s, column, low, tau)
        rows[signal] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table.iloc[:, : len(groups)].to_string())
        print(table.iloc[:, len(groups) :].to_string())


if __name__ == "__main__":
    main()
