"""The one artifact writer (issue 16, items 1 and 3): every command's output is path-checked
before any work, leak- and shape-scanned before it is written, and a refused or failed command
leaves nothing behind (no file, no folder)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.errors import LeakError, UnsafePathError
from evalkit.fixtures import load_fixture
from evalkit.safety.artifacts import Artifact, scan_artifact, write_artifact, write_artifacts
from evalkit.safety.canonical import canonical_json
from evalkit.safety.privacy import PrivateText, private_texts

REPO = Path(__file__).resolve().parent.parent
PROBES = REPO / "fixtures" / "probes"
TOKEN = "sk-proj-" + "Q7w9E2r4T6y8U1i3" * 2  # an OpenAI-style key shape, made up


def tree(root: Path) -> list[str]:
    """Every path under ``root`` (files and folders), relative and sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    (root / "reports").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("EVALKIT_OUTPUT", raising=False)
    return root


@pytest.fixture
def leaky_fixture(make_fixture: Callable[..., Path]) -> Path:
    """The tiny fixture with a document titled like the fixture's ID, which every report
    carries: any report of it holds that title, so a scanned writer must refuse it."""

    def mutate(data: dict[str, Any]) -> None:
        data["fixture.yaml"]["id"] = "ferry-guide-v1"
        data["documents.yaml"][0]["title"] = "ferry-guide-v1"

    return make_fixture(mutate)


# --- the writer itself -------------------------------------------------------------------------


def test_a_leaking_json_artifact_is_refused(tiny_dir: Path, workspace: Path) -> None:
    fixture = load_fixture(tiny_dir)
    text = canonical_json({"note": "The ferry leaves at 06:40 and then every ninety minutes."})
    with pytest.raises(LeakError, match="chunk:c-en-1") as info:
        write_artifact("reports/x.json", text, kind="json", private=private_texts(fixture))
    assert "ferry" not in str(info.value)
    assert tree(workspace) == ["reports"]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (TOKEN, "API key"),
        ("/home/alice/corpus/secret.txt", "POSIX path"),
        ("https://embed.internal.example:8443/v1", "URL"),
    ],
)
def test_json_shape_scan_names_the_place_not_the_value(
    workspace: Path, value: str, kind: str
) -> None:
    text = canonical_json({"systems": ["lexical", value]})
    with pytest.raises(LeakError, match=rf"{kind}.*\$\.systems\[1\]") as info:
        write_artifact("reports/new/x.json", text, kind="json", private=[])
    assert value not in str(info.value)
    assert tree(workspace) == ["reports"]


def test_a_secret_in_a_json_key_is_found(workspace: Path) -> None:
    text = canonical_json({"perQuery": {TOKEN: {"R@5": 1.0}}})
    with pytest.raises(LeakError, match=r"\$\.perQuery\.<key 1> \(key\)") as info:
        write_artifact("reports/x.json", text, kind="json", private=[])
    assert TOKEN not in str(info.value)


def test_artifacts_written_together_are_all_scanned_first(workspace: Path) -> None:
    private = [PrivateText("query:q1", "a private query about refunds")]
    artifacts = [
        Artifact("reports/r.html", "<p>fine</p>", "html"),
        Artifact("reports/r.ipynb", '{"cells": ["A private query about refunds"]}', "notebook"),
    ]
    with pytest.raises(LeakError, match=r"executed notebook 'reports/r\.ipynb': query:q1"):
        write_artifacts(artifacts, private=private)
    assert tree(workspace) == ["reports"]
    written = write_artifacts(artifacts, private=private, allow_private_text=True)
    assert [p.name for p in written] == ["r.html", "r.ipynb"]


def test_html_is_leak_scanned_but_not_shape_scanned(workspace: Path) -> None:
    # An embedded image's base64 is full of '/': a shape scan would refuse every report.
    html = '<img src="data:image/png;base64,iVBORw0KGgo/AAAA/home/BBBB+/abc/def">'
    scan_artifact(Artifact("r.html", html, "html"), [])


def test_text_artifacts_are_shape_scanned(workspace: Path) -> None:
    with pytest.raises(LeakError, match="API key"):
        scan_artifact(Artifact("summary.md", f"system {TOKEN} passed", "text"), [])


# --- every command goes through it -------------------------------------------------------------


def test_run_output_is_scanned(leaky_fixture: Path, workspace: Path) -> None:
    argv = ["run", str(leaky_fixture), "--systems", "lexical", "--repeats", "1"]
    assert main([*argv, "--output", "reports/new/run.json"]) == 1
    assert tree(workspace) == ["reports"]


def test_baseline_is_scanned(leaky_fixture: Path, workspace: Path) -> None:
    argv = ["baseline", str(leaky_fixture), "--systems", "lexical", "--repeats", "1"]
    assert main([*argv, "--output", "reports/baseline.json"]) == 1
    assert tree(workspace) == ["reports"]


def test_gate_output_is_scanned(leaky_fixture: Path, workspace: Path) -> None:
    gates = workspace / "gates.yaml"
    gates.write_text(
        "schema: evalkit.gates/1\nabsolute:\n  - {system: lexical, measure: R@5, min: 0.001}\n",
        encoding="utf-8",
    )
    argv = ["gate", str(leaky_fixture), "--systems", "lexical", "--repeats", "1"]
    assert main([*argv, "--gates", str(gates), "--output", "reports/gate.json"]) == 1
    assert tree(workspace) == ["gates.yaml", "reports"]


def test_probes_output_is_shape_scanned(tmp_path: Path, workspace: Path) -> None:
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "p.yaml").write_text(
        "- id: path-symbol\n"
        "  description: an expected symbol shaped like an absolute path\n"
        "  probe: {tool: find_symbol, args: {name: decode}}\n"
        "  expected: {symbols: [/etc/passwd]}\n",
        encoding="utf-8",
    )
    argv = ["probes", str(probes), "--target", "stdlib", "--output", "reports/p.json"]
    assert main(argv) == 1
    assert tree(workspace) == ["reports"]


def test_clean_run_output_is_written(tiny_dir: Path, workspace: Path) -> None:
    argv = ["run", str(tiny_dir), "--systems", "lexical", "--repeats", "1"]
    assert main([*argv, "--output", "reports/new/run.json"]) == 0
    report = json.loads((workspace / "reports" / "new" / "run.json").read_text("utf-8"))
    assert report["systems"] == ["lexical"]


# --- the early path check ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["reports/a\nb.json", "reports/a\rb.json", "reports/\x1b[2Jx.json"])
@pytest.mark.parametrize("command", ["run", "baseline", "gate"])
def test_control_characters_refused_before_any_work(
    tiny_dir: Path, workspace: Path, capsys: pytest.CaptureFixture[str], command: str, bad: str
) -> None:
    assert main([command, str(tiny_dir), "--output", bad]) == 2
    err = capsys.readouterr().err
    assert "control character" in err
    assert "Traceback" not in err
    assert bad not in err
    assert tree(workspace) == ["reports"]


def test_probes_refuse_control_characters(workspace: Path) -> None:
    argv = ["probes", str(PROBES), "--target", "stdlib", "--output", "p\n.json"]
    assert main(argv) == 2
    assert tree(workspace) == ["reports"]


def test_failed_run_leaves_no_folder_behind(
    make_fixture: Callable[..., Path], workspace: Path
) -> None:
    def break_it(data: dict[str, Any]) -> None:
        data["chunks.yaml"][0]["document_id"] = "no-such-document"

    invalid = make_fixture(break_it)
    assert main(["run", str(invalid), "--output", "reports/new/deeper/x.json"]) == 2
    assert tree(workspace) == ["reports"]


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux sysfs")
def test_unwritable_folder_is_exit_2_before_evaluating(
    tiny_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir("/sys/kernel")  # refuses new files to every user, root included
    started = time.perf_counter()
    assert main(["run", str(tiny_dir), "--output", "x.json"]) == 2
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert "does not accept new files" in err
    assert "Traceback" not in err
    assert elapsed < 5.0  # refused before the evaluation (which builds five systems)


def test_overlong_output_name_is_exit_2(
    tiny_dir: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tiny_dir), "--output", "x" * 300 + ".json"]) == 2
    assert "bytes long" in capsys.readouterr().err
    assert tree(workspace) == ["reports"]


def test_token_like_output_name_is_not_echoed(
    tiny_dir: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / TOKEN).mkdir()
    assert main(["run", str(tiny_dir), "--output", TOKEN]) == 2  # a directory: refused
    err = capsys.readouterr().err
    assert "existing directory" in err
    assert TOKEN not in err


def test_output_path_check_refuses_without_creating(workspace: Path) -> None:
    from evalkit.safety.artifacts import check_output

    with pytest.raises(UnsafePathError, match=r"should end in \.html"):
        check_output("reports/r.json", suffixes=(".html",))
    assert check_output("reports/a/b/c.json") == workspace / "reports" / "a" / "b" / "c.json"
    assert tree(workspace) == ["reports"]


# --- evalkit report: the output is checked before the notebook runs ----------------------------


def test_report_checks_the_suffix_before_executing(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The notebook does not exist: had it been read or executed first, that would be the error.
    argv = ["report", "--notebook", "missing.ipynb", "--output", "reports/r.json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "should end in .html" in err
    assert "missing.ipynb" not in err


def test_report_checks_the_sibling_notebook_before_executing(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "elsewhere.ipynb").write_text("{}", encoding="utf-8")
    (workspace / "reports" / "r.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    argv = ["report", "--notebook", "missing.ipynb", "--output", "reports/r.html"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err
    assert "missing.ipynb" not in err
    assert tree(workspace) == ["reports", "reports/r.ipynb"]


def test_report_refuses_control_characters_before_executing(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "--notebook", "missing.ipynb", "--output", "reports/r\x1b.html"]
    assert main(argv) == 2
    assert "control character" in capsys.readouterr().err
    assert tree(workspace) == ["reports"]


def test_an_artifact_never_goes_inside_a_fixture_folder_but_its_baseline(
    tiny_data: dict[str, Any], workspace: Path
) -> None:
    from conftest import write_fixture

    fixture = write_fixture(workspace / "fx", tiny_data)
    before = tree(fixture)
    for inside in ("fx/report.json", "fx/gates.yaml", "fx/queries/extra.json"):
        with pytest.raises(UnsafePathError, match="inside a fixture folder"):
            write_artifact(inside, "{}", kind="json", private=())
    assert tree(fixture) == before
    with pytest.raises(UnsafePathError, match="inside a fixture folder"):  # a report
        write_artifact("fx/baseline.json", "{}", kind="json", private=())
    write_artifact("fx/baseline.json", "{}", kind="json", private=(), baseline=True)
    assert (fixture / "baseline.json").read_text(encoding="utf-8") == "{}"
    code = main(["run", "fx", "--systems", "lexical", "--output", "fx/run.json"])
    assert code == 2
    assert not (fixture / "run.json").exists()
    code = main(["fixture", "convert", "fx", "--to", "jsonl", "--output", "fx/sub"])
    assert code == 2
    assert not (fixture / "sub").exists()


def test_two_outputs_of_one_command_never_share_a_file(
    tiny_dir: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(UnsafePathError, match="name the same file"):
        write_artifacts(
            [Artifact("reports/a.json", "{}", "json"), Artifact("reports/a.json", "{}", "json")],
            private=(),
        )
    code = main(["gate", str(tiny_dir), "--junit", "reports/x", "--markdown", "reports/x"])
    assert code == 2
    assert "--junit and --markdown name the same file" in capsys.readouterr().err
    monkeypatch.setenv("EVALKIT_OUTPUT", "reports/y")  # the JSON report's path, from the env
    assert main(["gate", str(tiny_dir), "--junit", "reports/y"]) == 2
    assert "--output and --junit name the same file" in capsys.readouterr().err
    assert not (workspace / "reports" / "x").exists()
    assert not (workspace / "reports" / "y").exists()
