"""`evalkit probes`: the committed probes, exit codes, baseline comparison, privacy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main

REPO = Path(__file__).parents[1]
PROBES = REPO / "fixtures" / "probes"
PRIVATE = "okapi-lantern-private-description"


def _write_probe(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(body, encoding="utf-8")
    return directory


def _probe(probe_id: str, tool: str, args: str, symbols: str, scoring: str = "") -> str:
    text = (
        f"- id: {probe_id}\n  description: {PRIVATE}\n"
        f"  probe: {{tool: {tool}, args: {args}}}\n  expected: {{symbols: {symbols}}}\n"
    )
    return text + (f"  scoring: {scoring}\n" if scoring else "")


def test_committed_probes_pass_and_reproduce_the_committed_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALKIT_OUTPUT", raising=False)
    argv = ["probes", str(PROBES), "--target", "stdlib", "--output", "out/probes.json"]
    code = main([*argv, "--baseline", str(PROBES / "baseline.json")])
    out = capsys.readouterr().out
    assert code == 0
    assert "0 failed, 0 could not run" in out
    assert "baseline: no recall/precision drop" in out
    # the committed baseline is exactly what the command writes (regenerate it if this fails:
    # evalkit probes fixtures/probes --target stdlib --output fixtures/probes/baseline.json)
    written = (tmp_path / "out" / "probes.json").read_bytes()
    assert written == (PROBES / "baseline.json").read_bytes()
    report = json.loads(written)
    tools = {row["tool"] for row in report["probes"]}
    assert tools == {"find_symbol", "search_symbols", "members_of", "subclasses_of", "callers_of"}
    assert report["summary"]["probes"] >= 25


def test_a_probe_the_tool_cannot_answer_exits_2_and_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    probes = _write_probe(
        tmp_path / "p",
        "p.yaml",
        _probe("ok", "find_symbol", "{name: raw_decode}", "[json.decoder.JSONDecoder.raw_decode]")
        + _probe("no-such-symbol", "members_of", "{qualified_name: json.nothing}", "[json.x]")
        + _probe("bad-limit", "search_symbols", "{query: decode, limit: '5'}", "[json.x]"),
    )
    code = main(["probes", str(probes), "--target", "stdlib", "--output", "r.json"])
    captured = capsys.readouterr()
    assert code == 2
    assert "probe 'no-such-symbol': tool 'members_of' raised LookupError" in captured.err
    assert "probe 'bad-limit': tool 'search_symbols': argument 'limit' must be int" in captured.err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    statuses = {row["id"]: row["status"] for row in report["probes"]}
    assert statuses == {"bad-limit": "error", "no-such-symbol": "error", "ok": "pass"}
    assert report["summary"]["errors"] == 2
    for text in (captured.out, captured.err, (tmp_path / "r.json").read_text(encoding="utf-8")):
        assert PRIVATE not in text
        assert "json.nothing" not in text  # argument values are fixture text too


def test_an_unknown_tool_exits_2_naming_file_and_probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probes = _write_probe(tmp_path, "p.yaml", _probe("x", "find_symbl", "{name: a}", "[a]"))
    assert main(["probes", str(probes), "--target", "stdlib"]) == 2
    err = capsys.readouterr().err
    assert "p.yaml:1 [x] probe.tool: unknown tool 'find_symbl'" in err
    assert "Did you mean 'find_symbol'?" in err


def test_a_missed_threshold_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # members_of json.decoder.JSONDecoder is {__init__, decode, raw_decode} (json/decoder.py);
    # expecting a fourth member gives recall 3/4 < 1.0
    symbols = (
        "[json.decoder.JSONDecoder.__init__, json.decoder.JSONDecoder.decode, "
        "json.decoder.JSONDecoder.raw_decode, json.decoder.JSONDecoder.encode]"
    )
    probes = _write_probe(
        tmp_path,
        "p.yaml",
        _probe(
            "members",
            "members_of",
            "{qualified_name: json.decoder.JSONDecoder}",
            symbols,
            "{recall_min: 1.0}",
        ),
    )
    assert main(["probes", str(probes), "--target", "stdlib"]) == 1
    out = capsys.readouterr().out
    assert "0.750" in out
    assert "1 failed" in out


def test_a_drop_from_the_baseline_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    probes = tmp_path / "probes"
    shutil.copytree(PROBES, probes)
    baseline = json.loads((PROBES / "baseline.json").read_text(encoding="utf-8"))
    row = next(r for r in baseline["probes"] if r["id"] == "callers-jsondecoder-partial")
    row["recall"] = 1.0  # as if the probe used to find both callers
    (tmp_path / "better.json").write_text(json.dumps(baseline), encoding="utf-8")
    code = main(["probes", str(probes), "--target", "stdlib", "--baseline", "better.json"])
    out = capsys.readouterr().out
    assert code == 1
    assert "dropped below the baseline" in out
    assert "callers-jsondecoder-partial" in out.split("dropped below the baseline")[1]


def test_an_unreadable_baseline_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.json").write_text("{not json", encoding="utf-8")
    code = main(
        ["probes", str(PROBES), "--target", "stdlib", "--baseline", str(tmp_path / "b.json")]
    )
    assert code == 2
    assert "b.json' line 1: not valid JSON" in capsys.readouterr().err


def test_an_unknown_target_exits_2_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probes", str(PROBES), "--target", "stdlb"]) == 2
    assert "unknown target 'stdlb'; known targets: stdlib. Did you mean 'stdlib'?" in (
        capsys.readouterr().err
    )


def test_an_unsafe_output_path_exits_2_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["probes", str(PROBES), "--target", "stdlib", "--output", "../escape.json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any probe ran
    assert not (tmp_path.parent / "escape.json").exists()
