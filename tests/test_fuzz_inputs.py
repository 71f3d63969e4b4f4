"""Fuzz targets, one per input format: fixture YAML, TREC qrels and run, gates YAML, probe YAML,
report JSON. Each mutates a valid file (:func:`badinput.mutated`) and runs the real command line
on it: the command may succeed (a mutation can leave the file valid) or fail with exit 1 or 2
and a one-paragraph message naming the file, never a traceback (any exception other than an
evalkit error fails the example), never writing a file, never echoing ``SENTINEL``.

``make test`` runs a fixed slice of 12 examples per target; ``make fuzz`` runs the fuzz
profile's count on new random examples.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from badinput import FUZZ, SENTINEL, check_failure, mutated, run_cli, snapshot
from conftest import TINY_FIXTURE, write_fixture
from hypothesis import given, strategies as st

import evalkit.probes
from evalkit.probes import Target, get_target


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_OUTPUT", raising=False)


def _workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as directory:
        yield Path(directory)


def _run_in(
    work: Path, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """Run ``evalkit argv`` in ``work``; asserts nothing under ``work`` changed."""
    with monkeypatch.context() as patch:
        patch.chdir(work)
        before = snapshot(work)
        code, output = run_cli(argv, capsys)
        assert snapshot(work) == before, f"the command wrote or changed files:\n{output}"
    assert "Traceback" not in output
    assert SENTINEL not in output
    return code, output


# --- fixture YAML -------------------------------------------------------------------------

_FIXTURE = copy.deepcopy(TINY_FIXTURE)
_FIXTURE["chunks.yaml"][1]["text"] = f"A single ticket costs four crowns, {SENTINEL}."
_FIXTURE_TEXT = {
    name: yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    for name, data in _FIXTURE.items()
}
_FIXTURE_FILES = sorted(_FIXTURE_TEXT)


@FUZZ
@given(
    case=st.sampled_from(_FIXTURE_FILES).flatmap(
        lambda name: st.tuples(st.just(name), mutated(_FIXTURE_TEXT[name]))
    )
)
def test_fuzz_fixture_yaml(
    case: tuple[str, bytes], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, data = case
    for work in _workspace():
        write_fixture(work / "fixture", _FIXTURE_TEXT)
        (work / "fixture" / name).write_bytes(data)
        code, output = _run_in(work, ["validate", "fixture"], capsys, monkeypatch)
        if code:
            check_failure(code, output, names=[*_FIXTURE_FILES, "fixture"], never=[SENTINEL])


# --- TREC qrels and run -------------------------------------------------------------------

_QRELS = f"# {SENTINEL}\nq1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
_RUN = f"# {SENTINEL}\nq1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d9 1 0.5 sys\n"


@FUZZ
@given(name=st.sampled_from(["qrels.txt", "run.txt"]), data=st.data())
def test_fuzz_trec_qrels_and_run(
    name: str,
    data: st.DataObject,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seeds = {"qrels.txt": _QRELS, "run.txt": _RUN}
    for work in _workspace():
        for file, text in seeds.items():
            (work / file).write_text(text, encoding="utf-8")
        (work / name).write_bytes(data.draw(mutated(seeds[name]), label=name))
        argv = ["trec-eval", "qrels.txt", "run.txt", "-m", "nDCG@10", "-m", "P@5"]
        code, output = _run_in(work, argv, capsys, monkeypatch)
        if code:
            check_failure(code, output, names=[name], never=[SENTINEL])


# --- gates YAML ---------------------------------------------------------------------------

_GATES = f"""\
# {SENTINEL}
schema: evalkit.gates/1
absolute:
  - id: rr-floor
    system: lexical
    measure: RR@10
    language: en
    min: 0.5
relative:
  - system: hybrid
    reference: lexical
    measure: nDCG@10
    max_drop: 0.05
"""


@FUZZ
@given(data=mutated(_GATES))
def test_fuzz_gates_yaml(
    data: bytes, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for work in _workspace():
        (work / "gates.yaml").write_bytes(data)
        # the fixture does not exist: a gates file that reads cleanly ends at the fixture (exit
        # 2 naming it) before any evaluation, so every example stays fast
        argv = ["gate", "no-fixture", "--gates", "gates.yaml"]
        code, output = _run_in(work, argv, capsys, monkeypatch)
        names = ["gates.yaml", "no-fixture", "baseline"]
        check_failure(code, output, names=names, never=[SENTINEL])


# --- probe YAML ---------------------------------------------------------------------------

_PROBES = f"""\
- id: find-decode
  description: {SENTINEL}
  probe: {{tool: find_symbol, args: {{name: decode}}}}
  scoring: {{recall_min: 0.5}}
  expected:
    symbols: [json.decoder.JSONDecoder.decode, email.base64mime.decode]
- id: search
  probe:
    tool: search_symbols
    args: {{query: decode header, limit: 3}}
  expected: {{symbols: [email.header.decode_header]}}
"""


@pytest.fixture(scope="module")
def stdlib_target() -> Target:
    """The real stdlib target, built once for the module (building it takes about a second)."""
    return get_target("stdlib")


@FUZZ
@given(data=mutated(_PROBES))
def test_fuzz_probe_yaml(
    data: bytes,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdlib_target: Target,
) -> None:
    monkeypatch.setattr(evalkit.probes, "get_target", lambda name: stdlib_target)
    for work in _workspace():
        (work / "probes").mkdir()
        (work / "probes" / "p.yaml").write_bytes(data)
        code, output = _run_in(
            work, ["probes", "probes", "--target", "stdlib"], capsys, monkeypatch
        )
        if code and " probes, " not in output:  # refused before running (else probes ran)
            check_failure(code, output, names=["p.yaml", "probes"], never=[SENTINEL])


# --- report JSON --------------------------------------------------------------------------

_REPORT = json.dumps(
    {
        "schema": "evalkit.report/1",
        "note": SENTINEL,
        "settings": {"measures": ["AP", "RR@10"]},
        "summary": {"lexical": {"AP": {"mean": 0.5, "n": 2}, "RR@10": {"mean": 1.0, "n": 2}}},
        "summaryByLanguage": {"lexical": {"en": {"AP": {"mean": 0.5, "n": 2}}}},
        "perQuery": {"lexical": {"q1": {"AP": 0.25, "RR@10": 1.0}, "q2": {"AP": 0.75}}},
        "failures": [],
    },
    indent=1,
)


@FUZZ
@given(data=mutated(_REPORT), as_new=st.booleans())
def test_fuzz_report_json(
    data: bytes, as_new: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for work in _workspace():
        (work / "old.json").write_text(_REPORT, encoding="utf-8")
        (work / "new.json").write_bytes(data)
        argv = ["diff", "old.json", "new.json"] if as_new else ["diff", "new.json", "old.json"]
        code, output = _run_in(work, argv, capsys, monkeypatch)
        if code:
            names = ["new.json", "new report" if as_new else "old report"]
            check_failure(code, output, names=names, never=[SENTINEL])
