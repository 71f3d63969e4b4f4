"""Any subset of systems, any base system, any k: gates that cannot be evaluated, staleness of
only what changed, measures that follow k, and ``evalkit report`` parameter checks.

Unit tests use hand-written report dicts (means written out by hand); the CLI tests evaluate
the committed fixture with two reference systems.
"""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pandas as pd
import pytest
from cli_runner import run_cli

from evalkit.errors import InputError, StaleBaselineError
from evalkit.fixtures import load_fixture
from evalkit.gates import (
    NOT_EVALUATED,
    Gates,
    changed_definitions,
    check_baseline_fresh,
    check_gates,
    format_gate_table,
    gate_counts,
    gate_headline,
    gate_outcome,
    gates_failed,
    gates_to_report,
)
from evalkit.report import check_report_parameters
from evalkit.run import DEFAULT_RANKING_MEASURES, default_measures, evaluate

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURE_DIR = REPO / "fixtures" / "synthetic-bilingual-v1"
HASH = {c: "sha256:" + c * 64 for c in "abcdef"}


def report(
    means: dict[str, dict[str, float]],
    *,
    k: int = 10,
    shared: str = HASH["a"],
    system_hashes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A minimal evalkit.report/1 dict with per-part definition hashes."""
    measures = sorted({m for values in means.values() for m in values})
    return {
        "schema": "evalkit.report/1",
        "fixture": {"id": "tiny", "version": "1.0.0"},
        "corpusHash": HASH["a"],
        "evaluationDefinitionHash": HASH["f"],
        "providerDefinitionsHash": HASH["a"],
        "definitionHashes": {
            "shared": shared,
            "systems": system_hashes or dict.fromkeys(means, HASH["b"]),
        },
        "settings": {"k": k, "repeats": 2, "measures": measures},
        "systems": list(means),
        "summary": {s: {m: {"mean": v, "n": 1} for m, v in ms.items()} for s, ms in means.items()},
        "summaryByLanguage": {s: {} for s in means},
        "perQuery": {s: {} for s in means},
        "failures": [],
    }


def gates(data: dict[str, Any]) -> Gates:
    return Gates.model_validate({"schema": "evalkit.gates/1", **data})


# --- gates on systems and cutoffs the evaluation does not have ----------------------------------


def test_gates_on_missing_systems_are_not_evaluated_and_never_fail() -> None:
    current = report({"lexical": {"RR@10": 0.5}, "hybrid": {"RR@10": 0.7}})
    spec = gates(
        {
            "absolute": [
                {"id": "rerank-floor", "system": "hybrid-rerank", "measure": "RR@10", "min": 0.9},
                {"id": "lexical-floor", "system": "lexical", "measure": "RR@10", "min": 0.4},
            ],
            "relative": [
                {
                    "id": "rerank-vs-hybrid",
                    "system": "hybrid-rerank",
                    "reference": "hybrid",
                    "measure": "RR@10",
                    "max_drop": 0.0,
                },
                {
                    "id": "hybrid-vs-dense",
                    "system": "hybrid",
                    "reference": "alias-vector",
                    "measure": "RR@10",
                    "max_drop": 0.0,
                },
            ],
        }
    )
    results = check_gates(current, spec)  # the systems left out are known (registered)
    status = dict(zip(results["gate"], results["status"], strict=True))
    assert status == {
        "rerank-floor": NOT_EVALUATED,
        "lexical-floor": "pass",  # 0.5 >= 0.4
        "rerank-vs-hybrid": NOT_EVALUATED,
        "hybrid-vs-dense": NOT_EVALUATED,  # the reference is missing
    }
    skipped = results[results["status"] == NOT_EVALUATED]
    assert skipped["passed"].isna().all()
    assert skipped["actual"].isna().all()
    assert "hybrid-rerank" in skipped["note"].iloc[0]
    assert not gates_failed(results)
    assert gate_counts(results) == {"pass": 1, "fail": 0, "not evaluated": 3}
    table = format_gate_table(results)
    assert table.splitlines()[-1] == (
        "PASS: all 1 evaluated check(s) passed; 1 of 4 checks evaluated, 3 not evaluated"
    )
    assert "not evaluated: rerank-floor: system hybrid-rerank not in the evaluation" in table
    section = gates_to_report(results)
    assert section[0]["passed"] is None
    assert section[0]["status"] == NOT_EVALUATED
    assert section[1]["passed"] is True


def test_a_failed_gate_still_fails_beside_not_evaluated_ones() -> None:
    current = report({"lexical": {"RR@10": 0.3}})
    spec = gates(
        {
            "absolute": [
                {"id": "gone", "system": "hybrid", "measure": "RR@10", "min": 0.1},
                {"id": "low", "system": "lexical", "measure": "RR@10", "min": 0.4},
            ]
        }
    )
    results = check_gates(current, spec)
    assert gates_failed(results)
    assert format_gate_table(results).splitlines()[-1] == (
        "FAIL: 1 of 1 evaluated check(s) failed; 1 of 2 checks evaluated, 1 not evaluated"
    )


def test_a_gate_on_an_unknown_system_is_an_error_with_a_did_you_mean() -> None:
    # issue 34: a typo left every check "not evaluated" and the gate passed
    current = report({"my-system": {"RR@10": 0.5}})
    typo = gates({"absolute": [{"system": "my-sytem", "measure": "RR@10", "min": 0.1}]})
    with pytest.raises(InputError, match=r"'my-sytem' \(did you mean 'my-system'\?\)"):
        check_gates(current, typo)
    # a system the caller knows (or the baseline has) is only left out: not evaluated
    known = check_gates(current, typo, known_systems=["my-sytem"])
    assert list(known["status"]) == [NOT_EVALUATED]
    in_baseline = report({"my-sytem": {"RR@10": 0.5}})
    spec = gates({"baseline": {"systems": ["my-sytem"]}, **typo.model_dump(exclude={"schema_"})})
    assert set(check_gates(current, spec, in_baseline)["status"]) == {NOT_EVALUATED}


def test_a_run_that_evaluated_no_check_fails_unless_allowed() -> None:
    current = report({"lexical": {"RR@10": 0.5}})
    spec = gates({"absolute": [{"system": "hybrid", "measure": "RR@10", "min": 0.1}]})
    counts = gate_counts(check_gates(current, spec))
    assert counts == {"pass": 0, "fail": 0, "not evaluated": 1}
    assert not gate_outcome(counts)
    assert gate_outcome(counts, allow_none_evaluated=True)
    assert gate_headline(counts) == (
        "FAIL: no check was evaluated, so nothing was checked; 0 of 1 checks evaluated, "
        "1 not evaluated"
    )


def test_a_cutoff_above_k_is_not_evaluated_but_a_missing_measure_within_k_is_an_error() -> None:
    current = report({"lexical": {"RR@5": 0.5}}, k=5)
    above = gates({"absolute": [{"id": "rr10", "system": "lexical", "measure": "RR@10", "min": 0}]})
    row = check_gates(current, above).iloc[0]
    assert row["status"] == NOT_EVALUATED
    assert row["note"] == "cutoff 10 of RR@10 is above the evaluation's k=5"
    within = gates({"absolute": [{"id": "r3", "system": "lexical", "measure": "R@3", "min": 0}]})
    with pytest.raises(InputError, match="measure 'R@3' was not computed"):
        check_gates(current, within)


def test_baseline_gates_compare_only_the_evaluated_systems() -> None:
    baseline = report({"lexical": {"RR@10": 0.5}, "hybrid-rerank": {"RR@10": 0.8}})
    current = report({"lexical": {"RR@10": 0.49}})
    spec = gates({"baseline": {"tolerance": 0.02, "per_language": False}})
    results = check_gates(current, spec, baseline)
    rows = list(zip(results["gate"], results["measure"], results["status"], strict=True))
    assert rows == [
        ("baseline:lexical", "RR@10", "pass"),  # 0.49 >= 0.5 - 0.02
        ("baseline:hybrid-rerank", "all", NOT_EVALUATED),
    ]


# --- staleness: only what changed ---------------------------------------------------------------


def test_a_changed_system_is_compared_and_named_never_refused() -> None:
    # issue 34: a changed definition (a new run file, model, tokenizer) is what a pull request
    # is about; refusing it made the baseline unable to catch the system's own regression
    baseline = report({"lexical": {"RR@10": 0.5}, "hybrid": {"RR@10": 0.7}})
    changed = report(
        {"lexical": {"RR@10": 0.5}, "hybrid": {"RR@10": 0.4}},
        system_hashes={"lexical": HASH["b"], "hybrid": HASH["c"]},
    )
    check_baseline_fresh(changed, baseline)  # no error
    assert changed_definitions(changed, baseline, ["lexical", "hybrid"]) == {
        "hybrid": (baseline["definitionHashes"]["systems"]["hybrid"], HASH["c"])
    }
    spec = gates({"baseline": {"per_language": False}})
    results = check_gates(changed, spec, baseline)
    assert list(zip(results["system"], results["status"], strict=True)) == [
        ("lexical", "pass"),
        ("hybrid", "fail"),  # 0.4 < 0.7 - 0.02: the regression is caught
    ]


def test_a_changed_shared_definition_makes_the_whole_baseline_stale() -> None:
    baseline = report({"lexical": {"RR@10": 0.5}})
    other_k = copy.deepcopy(baseline)
    other_k["definitionHashes"]["shared"] = HASH["d"]
    other_k["settings"]["k"] = 5
    with pytest.raises(StaleBaselineError, match="changed since the baseline: settings"):
        check_baseline_fresh(other_k, baseline)


def test_a_subset_of_systems_is_fresh_against_a_full_baseline() -> None:
    full = report({"lexical": {"RR@10": 0.5}, "hybrid": {"RR@10": 0.7}, "x": {"RR@10": 0.1}})
    subset = report({"lexical": {"RR@10": 0.5}, "hybrid": {"RR@10": 0.7}})
    check_baseline_fresh(subset, full)


# --- measures follow k --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (3, ("R@3", "RR@3", "nDCG(dcg='exp-log2')@3")),
        (5, ("R@5", "RR@5", "nDCG(dcg='exp-log2')@5")),
        (20, ("R@5", "R@20", "RR@20", "nDCG(dcg='exp-log2')@20")),
        (10, DEFAULT_RANKING_MEASURES),
    ],
)
def test_default_measures_follow_k(k: int, expected: tuple[str, ...]) -> None:
    assert default_measures(k) == expected


@pytest.fixture(scope="module")
def committed() -> Any:
    return load_fixture(FIXTURE_DIR)


def test_evaluate_at_k5_names_measures_at_5(committed: Any) -> None:
    at5 = evaluate(committed, ["lexical"], k=5, repeats=1)
    at10 = evaluate(committed, ["lexical"], k=10, repeats=1)
    assert at5.measures == (
        "R@5",
        "RR@5",
        "nDCG(dcg='exp-log2')@5",
        "ContextPrecision@5",
        "ContextRecall@5",
        "NoResult",
        "NoAnswerFP",
    )
    # R@5 of the top 5 is R@5 of the top 10: BM25's first five do not depend on k.
    r5 = [e.per_query[e.per_query["measure"] == "R@5"].reset_index(drop=True) for e in (at5, at10)]
    pd.testing.assert_frame_equal(r5[0], r5[1])


def test_a_cutoff_above_k_is_an_error_saying_why(committed: Any) -> None:
    with pytest.raises(InputError, match=r"nDCG@10 have a cutoff above k=5.*at most k=5 results"):
        evaluate(committed, ["lexical"], k=5, measures=["nDCG@10"], repeats=1)


# --- report parameters --------------------------------------------------------------------------

DEFAULTS = {"systems": "", "k": 10, "base_system": "hybrid", "n_resamples": 10, "worst": 5}


def test_report_parameters_base_system_rules() -> None:
    names = ["lexical", "hybrid"]
    merged = {**DEFAULTS, "systems": "lexical,hybrid", "base_system": "lexical"}
    assert check_report_parameters(merged, {"base_system": "lexical"}, names) == {
        "base_system": "lexical"
    }
    # not given, default not among the systems: the first system is the base
    only = {**DEFAULTS, "systems": "lexical,token-hash"}
    given = {"systems": "lexical,token-hash"}
    settled = check_report_parameters(only, given, ["lexical", "token-hash"])
    assert settled["base_system"] == "lexical"
    # a spec names its system: run:runs/mine.trec -> mine
    run = "run:runs/mine.trec"
    spec = {**DEFAULTS, "systems": f"lexical,{run}", "base_system": run}
    settled = check_report_parameters(spec, {"base_system": run}, ["lexical", "mine"])
    assert settled["base_system"] == "mine"
    with pytest.raises(InputError, match=r"base_system 'hybrid-rerank' is not among the systems"):
        check_report_parameters(
            {**merged, "base_system": "hybrid-rerank"}, {"base_system": "hybrid-rerank"}, names
        )


def test_report_parameters_that_name_things_are_checked(tmp_path: pathlib.Path) -> None:
    (tmp_path / "baseline.json").write_text("{}", encoding="utf-8")
    (tmp_path / "probes").mkdir()
    ids = {"q-1", "q-2"}

    def check(**given: object) -> dict[str, object]:
        merged = {**DEFAULTS, "seed": 0, "query_id": "", "baseline": "", **given}
        return check_report_parameters(merged, given, ["hybrid"], query_ids=ids, workdir=tmp_path)

    check(query_id="q-1", baseline="baseline.json", probes="probes")  # all there: fine
    with pytest.raises(InputError, match="query_id 'q-9' is not a query of the fixture"):
        check(query_id="q-9")
    with pytest.raises(InputError, match=r"query_id \(not shown: no fixture ID\)"):
        check(query_id="Where does the ferry leave from?")  # text is never echoed
    with pytest.raises(InputError, match=r"parameter baseline: 'absent\.json' does not exist"):
        check(baseline="absent.json")
    with pytest.raises(InputError, match=r"parameter probes 'baseline\.json' is not a folder"):
        check(probes="baseline.json")
    with pytest.raises(InputError, match="'seed' must be an integer >= 0"):
        check(seed=-1)
    # a default that is absent (no probes folder in a user's own project) is the notebook's
    merged = {**DEFAULTS, "probes": "fixtures/probes"}
    check_report_parameters(merged, {}, ["hybrid"], query_ids=ids, workdir=tmp_path)


@pytest.mark.parametrize(("name", "value"), [("k", 0), ("k", -3), ("n_resamples", 0)])
def test_report_parameters_bounds(name: str, value: int) -> None:
    with pytest.raises(InputError, match=rf"parameter '{name}' must be an integer >="):
        check_report_parameters({**DEFAULTS, name: value}, {name: value}, ["hybrid"])


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["-p", "systems", "lexical", "-p", "base_system", "hybrid"], "is not among the systems"),
        (["-p", "k", "0"], "'k' must be an integer >= 1"),
        (["-p", "systems", "lexcal,hybrid"], "unknown system 'lexcal'"),
    ],
)
def test_cli_report_checks_parameters_before_running(
    argv: list[str], reason: str, tmp_path: pathlib.Path
) -> None:
    code, out, err = run_cli(["report", str(FIXTURE_DIR), *argv], tmp_path)
    assert code == 2, out + err
    assert reason in err
    assert not (tmp_path / "reports" / "retrieval-report.html").exists()


def test_cli_gate_checks_a_subset_against_the_baseline(tmp_path: pathlib.Path) -> None:
    code, out, err = run_cli(["gate", str(FIXTURE_DIR), "--systems", "lexical,hybrid"], tmp_path)
    assert code == 0, out + err
    lines = out.splitlines()
    checked = {line.split()[0] for line in lines if line.endswith(" pass")}
    assert {"baseline:lexical", "baseline:hybrid"} <= checked
    skipped = {line.split()[0] for line in lines if line.endswith("not evaluated")}
    assert {"rerank-rr10", "rerank-vs-hybrid-ndcg10", "baseline:hybrid-rerank"} <= skipped
    assert "FAIL" not in out
    assert lines[-1].endswith("not evaluated")


@pytest.mark.slow
def test_cli_report_on_two_systems_at_k5(tmp_path: pathlib.Path) -> None:
    argv = ["report", str(FIXTURE_DIR), "-p", "systems", "lexical,hybrid", "-p", "k", "5"]
    argv += ["-p", "base_system", "lexical", "-p", "n_resamples", "200", "-p", "probes", ""]
    code, out, err = run_cli([*argv, "--output", "reports/r.html"], tmp_path)
    assert code == 0, out + err  # render_report refuses to write a leaking report
    html = (tmp_path / "reports" / "r.html").read_text(encoding="utf-8")
    assert "RR@5" in html
    # k=5 is another evaluation than the gates' baseline (k=10): the verdict is the same ERROR
    # as `evalkit gate` gives, naming why, not gates silently checked without the baseline
    assert "The baseline was not compared" in html
    assert "Traceback" not in html
    from evalkit.safety.privacy import find_leaks, private_texts

    assert find_leaks(html, private_texts(load_fixture(FIXTURE_DIR))) == []
