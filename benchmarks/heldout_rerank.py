"""Held-out check of issue 14's acceptance rules on fixtures no setting was fitted on.

The rules, per fixture (nDCG(dcg='exp-log2')@10 over answerable queries):

- reranker: hybrid-rerank >= hybrid - 0.05 and >= lexical;
- fusion: hybrid >= max(lexical, token-hash);
- abstention: hybrid-rerank's NoAnswerFP <= 0.5 and NoResult <= 0.10.

Fixtures: fresh ``generate_fixture`` seeds (default 101-105; never the fitting seeds 1-5 of
``benchmarks/fit_rerank.py``) with corpus sizes and no-answer shares varying by seed, no table;
and any ``--fixture DIR`` given, with its ``aliases.yaml`` and without it. Nothing is fitted
here: the script only measures. ``--opt-in`` also measures ``hybrid-rerank`` with its opt-in
abstention rules 3 and 4 switched on (``evalkit.systems.abstention``), as ``rules`` columns.

    .venv/bin/python benchmarks/heldout_rerank.py [--seeds 101 102] \\
        [--fixture fixtures/synthetic-bilingual-v1] [--opt-in]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Final

import pandas as pd

from evalkit.fixtures import Fixture, generate_fixture, load_fixture
from evalkit.run import evaluate
from evalkit.systems.protocol import Retriever
from evalkit.systems.reference import REFERENCE_SYSTEMS, SYSTEMS
from evalkit.systems.rerank import HeuristicReranker

#: The generated fixtures the reranker settings were fitted on (see evalkit.systems.rerank) use
#: the generator's original text model; the default changed to "zipf" afterwards.
FIT_TEXT_MODEL: Final = "uniform"

RULES = "hybrid-rerank-rules"

NDCG = "nDCG(dcg='exp-log2')@10"
SHORT = {"lexical": "lex", "token-hash": "hash", "alias-vector": "alias", "hybrid": "hyb"}


def _fixtures(seeds: list[int], paths: list[str]) -> Iterator[tuple[str, Fixture]]:
    for seed in seeds:
        documents = 150 + 50 * (seed % 5)
        share = 0.2 + 0.05 * (seed % 3)
        label = f"generated s{seed} ({documents * 4} chunks, {share:.0%} no-answer)"
        yield (
            label,
            generate_fixture(
                seed,
                text_model=FIT_TEXT_MODEL,
                documents=documents,
                queries=160,
                no_answer_fraction=share,
            ),
        )
    for path in paths:
        fixture = load_fixture(path)
        yield f"{fixture.meta.id} with its table", fixture
        yield f"{fixture.meta.id} without table", fixture.model_copy(update={"aliases": None})


def _with_rules() -> Retriever:
    """``hybrid-rerank`` with the opt-in abstention rules 3 and 4 on, under its own name."""
    system = SYSTEMS.get("hybrid-rerank")()
    assert isinstance(system, HeuristicReranker)
    system.name = RULES
    system.abstain_on_unknown_item = system.abstain_on_apart = True
    return system


def check(fixture: Fixture, *, opt_in: bool = False) -> dict[str, float | bool]:
    """The five systems' nDCG@10 and hybrid-rerank's abstention, with each rule's verdict."""
    systems: list[str | Retriever] = [*REFERENCE_SYSTEMS, *([_with_rules()] if opt_in else [])]
    summary = evaluate(fixture, systems, repeats=1).summary()
    table = summary.pivot_table(index="system", columns="measure", values="value")
    ndcg = table[NDCG]
    rules: dict[str, float | bool] = {}
    if opt_in:
        rules = {
            "rules": float(table.loc[RULES, NDCG]),
            "rules FP": float(table.loc[RULES, "NoAnswerFP"]),
            "rules NoResult": float(table.loc[RULES, "NoResult"]),
        }
        ndcg = ndcg.drop(RULES)
    rerank, hybrid = float(ndcg["hybrid-rerank"]), float(ndcg["hybrid"])
    lexical, token_hash = float(ndcg["lexical"]), float(ndcg["token-hash"])
    fp = float(table.loc["hybrid-rerank", "NoAnswerFP"])
    no_result = float(table.loc["hybrid-rerank", "NoResult"])
    row: dict[str, float | bool] = {SHORT.get(s, "rerank"): float(v) for s, v in ndcg.items()}
    row |= {
        "rerank FP": fp,
        "rerank NoResult": no_result,
        "reranker ok": rerank >= max(hybrid - 0.05, lexical),
        "fusion ok": hybrid >= max(lexical, token_hash),
        "abstention ok": fp <= 0.5 and no_result <= 0.10,
    }
    return row | rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[101, 102, 103, 104, 105])
    parser.add_argument("--fixture", action="append", default=[])
    parser.add_argument("--opt-in", action="store_true", help="also measure rules 3 and 4")
    args = parser.parse_args()
    rows = {
        label: check(fixture, opt_in=args.opt_in)
        for label, fixture in _fixtures(args.seeds, args.fixture)
    }
    table = pd.DataFrame.from_dict(rows, orient="index")
    columns = ["lex", "hash", "alias", "hyb", "rerank", "rerank FP", "rerank NoResult"]
    if args.opt_in:
        columns += ["rules", "rules FP", "rules NoResult"]
    table[columns] = table[columns].astype(float).round(3)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table[[*columns, "reranker ok", "fusion ok", "abstention ok"]].to_string())


if __name__ == "__main__":
    main()
