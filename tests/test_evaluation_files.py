"""A saved evaluation reads back exactly, and the report made from one (``evalkit report``
evaluates while the kernel starts) equals the report the notebook makes by evaluating itself
(as in JupyterLab)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from evalkit.errors import InputError
from evalkit.fixtures import Fixture, dump_fixture, generate_fixture, load_fixture
from evalkit.gates import ChangeSettings
from evalkit.report import (
    DEFAULT_REPORT_NOTEBOOK,
    EVALUATION_DIR_PARAMETER,
    execute_notebook,
    render_report,
)
from evalkit.report.evaluation_files import (
    load_evaluation,
    load_saved_report,
    load_verdict,
    preload_fixture,
    save_evaluation,
    save_verdict,
)
from evalkit.report.verdict import GatedVerdict, Verdict, fixture_gate_verdict, gate_and_judge
from evalkit.run import Evaluation, evaluate
from evalkit.safety.canonical import canonical_json


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("saved") / "fixture"
    dump_fixture(generate_fixture(5, documents=10, queries=8), directory)
    return directory


@pytest.fixture(scope="module")
def evaluated(fixture_dir: Path) -> tuple[Fixture, Evaluation]:
    fixture = load_fixture(fixture_dir)
    return fixture, evaluate(fixture, ["lexical", "token-hash"], k=5)


def test_a_saved_evaluation_reads_back_exactly(
    tmp_path: Path, evaluated: tuple[Fixture, Evaluation]
) -> None:
    fixture, evaluation = evaluated
    back = load_evaluation(save_evaluation(evaluation, tmp_path / "saved"), fixture)
    for name in ("per_query", "rankings", "latency"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(evaluation, name))
    assert (back.systems, back.k, back.measures, back.repeats) == (
        evaluation.systems,
        evaluation.k,
        evaluation.measures,
        evaluation.repeats,
    )
    assert (back.definitions, back.notes) == (evaluation.definitions, evaluation.notes)
    assert back.to_report() == evaluation.to_report()


def test_another_fixtures_evaluation_is_refused(
    tmp_path: Path, evaluated: tuple[Fixture, Evaluation]
) -> None:
    _, evaluation = evaluated
    saved = save_evaluation(evaluation, tmp_path / "saved")
    other = generate_fixture(6, documents=10, queries=8)
    with pytest.raises(InputError, match="another fixture"):
        load_evaluation(saved, other)


def test_a_preloaded_fixture_is_taken_only_while_its_files_are_unchanged(
    tmp_path: Path,
    fixture_dir: Path,
    evaluated: tuple[Fixture, Evaluation],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import evalkit.fixtures

    fixture, evaluation = evaluated
    saved = save_evaluation(evaluation, tmp_path / "saved")
    real_load = evalkit.fixtures.load_fixture
    loads: list[str] = []

    def counted_load(path: str) -> Fixture:
        loads.append(path)
        return real_load(path)

    preload_fixture(str(fixture_dir))
    monkeypatch.setattr(evalkit.fixtures, "load_fixture", counted_load)
    taken = load_evaluation(saved, str(fixture_dir))
    assert taken.fixture == fixture
    assert loads == []  # the preloaded fixture, not a load
    again = load_evaluation(saved, str(fixture_dir))  # taken once: this one is loaded anew
    assert again.fixture == fixture
    assert again.fixture is not taken.fixture
    assert len(loads) == 1
    monkeypatch.undo()

    copy = tmp_path / "copy"
    shutil.copytree(fixture_dir, copy)
    preload_fixture(str(copy))
    preloaded = load_evaluation(saved, str(copy)).fixture
    preload_fixture(str(copy))
    queries = next(copy.rglob("queries*.yaml"))
    queries.write_text(queries.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    loads.clear()
    monkeypatch.setattr(evalkit.fixtures, "load_fixture", counted_load)
    reloaded = load_evaluation(saved, str(copy)).fixture  # a file changed: loaded again
    assert loads == [str(copy)]
    monkeypatch.undo()
    assert reloaded == preloaded
    assert reloaded is not preloaded
    first = next(q for q in fixture.queries if q.judgments)  # a change of content is refused
    text = queries.read_text(encoding="utf-8")
    queries.write_text(
        text.replace(f"id: {first.id}\n", f"id: {first.id}-changed\n", 1), encoding="utf-8"
    )
    preload_fixture(str(copy))
    with pytest.raises(InputError, match="another fixture"):
        load_evaluation(saved, str(copy))


def test_preloading_a_broken_fixture_raises_nothing(tmp_path: Path) -> None:
    preload_fixture(str(tmp_path / "nowhere"))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "fixture.yaml").write_text("id: [", encoding="utf-8")
    preload_fixture(str(tmp_path / "broken"))


@pytest.mark.parametrize("damage", ["missing", "format", "frame"])
def test_a_damaged_folder_is_refused_clearly(
    tmp_path: Path, evaluated: tuple[Fixture, Evaluation], damage: str
) -> None:
    fixture, evaluation = evaluated
    saved = save_evaluation(evaluation, tmp_path / "saved")
    if damage == "missing":
        (saved / "evaluation.json").unlink()
    elif damage == "format":
        meta = json.loads((saved / "evaluation.json").read_text(encoding="utf-8"))
        (saved / "evaluation.json").write_text(json.dumps({**meta, "format": "x/9"}))
    else:
        (saved / "rankings.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="evaluation_dir") as caught:
        load_evaluation(saved, fixture)
    assert str(saved) not in str(caught.value)  # no path in the message


def test_evaluation_dir_is_not_a_users_parameter(fixture_dir: Path) -> None:
    with pytest.raises(InputError, match="set by evalkit report"):
        render_report({"fixture": str(fixture_dir), EVALUATION_DIR_PARAMETER: "elsewhere"})


def _outputs(notebook: nbformat.NotebookNode, cell_ids: set[str]) -> dict[str, list[str]]:
    """The HTML, Markdown and stream outputs of the cells named ``cell_ids``, without what
    differs from one run to the next in any case (pandas' random table IDs, object addresses
    in the plain-text stand-ins of rich outputs)."""
    found: dict[str, list[str]] = {}
    for cell in notebook.cells:
        if cell.get("id") in cell_ids:
            texts = []
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                text = data.get("text/html", data.get("text/markdown", output.get("text", "")))
                texts.append(re.sub(r"T_[0-9a-f]{5}", "T_", str(text)))
            found[cell.id] = texts
    return found


@pytest.mark.slow
def test_the_cli_path_and_the_jupyterlab_path_give_the_same_report(fixture_dir: Path) -> None:
    parameters = {
        "fixture": str(fixture_dir),
        "systems": "lexical,token-hash",
        "base_system": "lexical",
        "n_resamples": 200,
        "worst": 2,
        "probes": "",
    }
    # the deterministic sections (latency, which is measured anew, is left out)
    sections = {"verdict", "ablation", "language", "comparisons", "all-pairs", "failures"}
    rendered = render_report(parameters)
    from_saved = nbformat.reads(rendered.notebook, as_version=4)
    injected = next(
        c for c in from_saved.cells if "injected-parameters" in c.metadata.get("tags", [])
    )
    assert EVALUATION_DIR_PARAMETER in injected.source  # the notebook read the saved evaluation
    by_itself = execute_notebook(DEFAULT_REPORT_NOTEBOOK, parameters)
    expected = _outputs(by_itself, sections)
    assert set(expected) == sections
    assert _outputs(from_saved, sections) == expected


def _assert_same_verdict(loaded: GatedVerdict, expected: GatedVerdict) -> None:
    assert loaded.stale_baseline == expected.stale_baseline
    if expected.gate_results is None:
        assert loaded.gate_results is None
    else:
        assert loaded.gate_results is not None
        pd.testing.assert_frame_equal(loaded.gate_results, expected.gate_results)
    for item in dataclasses.fields(Verdict):
        value, wanted = getattr(loaded.verdict, item.name), getattr(expected.verdict, item.name)
        if isinstance(wanted, pd.DataFrame):
            pd.testing.assert_frame_equal(value, wanted, obj=item.name)
        else:
            assert value == wanted, item.name
            assert type(value) is type(wanted), item.name


def test_a_saved_verdict_reads_back_exactly_for_its_settings_only(tmp_path: Path) -> None:
    committed = Path(__file__).resolve().parent.parent / "fixtures" / "synthetic-bilingual-v1"
    fixture = load_fixture(committed)
    # repeats=2 as the committed baseline: a stale baseline is an ERROR verdict, not checked
    evaluation = evaluate(fixture, ["lexical", "token-hash"], k=10, repeats=2)
    gated = gate_and_judge(
        evaluation, evaluation.to_report(), committed, base="lexical", n_resamples=50, seed=3
    )
    assert gated.gate_results is not None  # the committed fixture has gates
    assert gated.verdict.gates_failed + gated.verdict.gates_not_evaluated > 0
    settings = {"base": "lexical", "n_resamples": 50, "seed": 3, "baseline": ""}
    save_verdict(gated, tmp_path, settings)
    loaded = load_verdict(tmp_path, settings)
    assert loaded is not None
    _assert_same_verdict(loaded, gated)
    # other settings, or no saved verdict at all: the caller computes it
    assert load_verdict(tmp_path, {**settings, "seed": 4}) is None
    assert load_verdict(tmp_path / "nothing", settings) is None


def test_the_verdict_without_the_baseline_change_is_the_verdict_with_it() -> None:
    # evalkit report's helper computes the section without the comparison with the baseline
    # (the notebook's first screen computes that); the checks and the section are the same
    committed = Path(__file__).resolve().parent.parent / "fixtures" / "synthetic-bilingual-v1"
    evaluation = evaluate(load_fixture(committed), ["lexical", "token-hash"], k=10, repeats=2)
    report = evaluation.to_report()
    gate = fixture_gate_verdict(
        report,
        committed,
        per_query=evaluation.per_query,
        settings=ChangeSettings(n_resamples=50, seed=3),
    )
    assert gate.change is not None
    assert gate.results is not None
    without = fixture_gate_verdict(report, committed, with_change=False)
    assert without.change is None
    assert without.outcome == gate.outcome
    assert without.results is not None
    pd.testing.assert_frame_equal(without.results, gate.results)
    helper = gate_and_judge(evaluation, report, committed, base="lexical", n_resamples=50, seed=3)
    kernel = gate_and_judge(
        evaluation, report, committed, base="lexical", n_resamples=50, seed=3, gate=gate
    )
    _assert_same_verdict(helper, kernel)


def test_an_ungated_verdict_reads_back_exactly(
    evaluated: tuple[Fixture, Evaluation], fixture_dir: Path, tmp_path: Path
) -> None:
    _, evaluation = evaluated
    gated = gate_and_judge(evaluation, evaluation.to_report(), fixture_dir, base="token-hash")
    assert gated.gate_results is None
    save_verdict(gated, tmp_path, {"base": "token-hash"})
    loaded = load_verdict(tmp_path, {"base": "token-hash"})
    assert loaded is not None
    _assert_same_verdict(loaded, gated)
    (tmp_path / "verdict.json").write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(InputError, match="verdict format"):
        load_verdict(tmp_path, {"base": "token-hash"})


def test_a_kept_report_reads_back_as_the_evaluations_report(
    evaluated: tuple[Fixture, Evaluation], tmp_path: Path
) -> None:
    fixture, evaluation = evaluated
    report = evaluation.to_report()
    saved = save_evaluation(evaluation, tmp_path / "with", report=report)
    assert canonical_json(load_saved_report(saved)) == canonical_json(report)
    # the report of the evaluation read back is that report too
    assert canonical_json(load_evaluation(saved, fixture).to_report()) == canonical_json(report)
    assert load_saved_report(save_evaluation(evaluation, tmp_path / "without")) is None


@pytest.mark.parametrize("name", ["report.json", "verdict.json"])
def test_a_damaged_report_or_verdict_is_refused_clearly(
    evaluated: tuple[Fixture, Evaluation], tmp_path: Path, name: str
) -> None:
    _, evaluation = evaluated
    saved = save_evaluation(evaluation, tmp_path, report=evaluation.to_report())
    (saved / name).write_text('{"cut off', encoding="utf-8")

    def read() -> object:
        return load_saved_report(saved) if name == "report.json" else load_verdict(saved, {})

    with pytest.raises(InputError, match="is damaged") as caught:
        read()
    assert str(tmp_path) not in str(caught.value)
