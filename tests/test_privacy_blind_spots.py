"""The leak scan's rule of issues 43 and 49: no blind spot (Chinese inside English, 31 of a
32-character string, file-name separators, paths with spaces) and no false finding on what
evalkit, a report notebook or a library wrote (legends built from pieces, numbers, markup,
evalkit's docstrings, a user's ``--notebook`` cells). Each case failed before the rule."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path

import pytest

from evalkit.report import report_own_text
from evalkit.report.render import markdown_text
from evalkit.safety.privacy import (
    OwnText,
    PrivateText,
    find_leaks,
    is_evidence,
    notebook_own_texts,
    notebook_skeleton,
)

ENGLISH = (
    "The annual maintenance report of the northern pumping station notes that the valves "
    "were replaced in spring, "
)
CHINESE = "我们在这里讨论了很多关于渡轮时刻表和票价的问题"  # 24 Chinese characters


@pytest.mark.parametrize(("copied", "found"), [(8, False), (11, True), (12, True), (15, True)])
def test_chinese_inside_english_is_windowed_as_chinese(copied: int, found: bool) -> None:
    private = [PrivateText("chunk:mix", ENGLISH + CHINESE + " and the rest is English again.")]
    for start in range(len(CHINESE) - copied + 1):  # wherever the copy starts
        artifact = f"<td>note {CHINESE[start : start + copied]} end</td>"
        assert find_leaks(artifact, private) == (["chunk:mix"] if found else []), start


def test_every_31_character_run_of_a_32_character_string_is_found() -> None:
    latin = "Vault PIN 77319 for Mr Hollis Or"  # 32 characters
    assert len(latin) == 32
    for start in (0, 1):
        assert find_leaks(f"<p>{latin[start : start + 31]}</p>", [PrivateText("c:1", latin)])
    chinese = CHINESE[:12]
    for start in (0, 1):
        copy = chinese[start : start + 11]
        assert find_leaks(f"<p>{copy}</p>", [PrivateText("c:2", chinese)]) == ["c:2"]


@pytest.mark.parametrize("separator", ["-", "_", ".", "/", " "])
def test_a_file_derived_name_is_read_like_text(separator: str) -> None:
    private = [PrivateText("chunk:pin", "Vault PIN 77319 for Mr Hollis Orr")]
    name = separator.join(["Vault", "PIN", "77319", "for", "Mr", "Hollis", "Orr"]) + ".trec"
    html = f"<tr><td>run:{name}</td><td>0.412</td></tr>"
    assert find_leaks(html, private) == ["chunk:pin"]
    notebook = json.dumps({"cells": [{"source": f"systems = 'lexical,run:{name}'"}]})
    assert find_leaks(notebook, private) == ["chunk:pin"]


def _evalkit_docstring_sentences(count: int) -> list[str]:
    package = Path(__file__).resolve().parents[1] / "evalkit"
    sentences: list[str] = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = " ".join((ast.get_docstring(node) or "").split())
                sentences += [s for s in re.split(r"(?<=\.) ", doc) if 40 <= len(s) <= 200]
    return random.Random(49).sample(sentences, count)


def test_evalkit_docstring_sentences_are_not_findings() -> None:
    for number, sentence in enumerate(_evalkit_docstring_sentences(200)):
        private = [PrivateText(f"chunk:{number}", f"Intro words here. {sentence} Closing words.")]
        assert find_leaks(sentence, private) == [], sentence
        assert find_leaks(f"<p>{markdown_text(sentence)}</p>", private) == [], sentence
    leak = "Closing words of a private chunk that nobody else wrote"
    private = [PrivateText("chunk:x", f"Intro. {sentence} {leak}")]
    assert find_leaks(f"<p>{sentence} {leak}</p>", private) == ["chunk:x"]


def test_a_legend_built_from_pieces_is_not_a_finding() -> None:
    # the collision: the window " the system comp" of a chunk, in a legend row that
    # evalkit assembles at run time from "system | " and "the system compared with ..."
    private = [PrivateText("chunk:10630", "In our new plant the system comprises three pumps.")]
    legend = "<tr><td>system</td><td>the system compared with the base system, lexical</td></tr>"
    assert find_leaks(legend, private) == []
    assert find_leaks(legend + "<p>our new plant the system comprises three</p>", private) == [
        "chunk:10630"
    ]


def test_numbers_and_markup_are_not_evidence() -> None:
    private = [PrivateText("chunk:d4", "Old repr output 0.33333333333333331 shows the rounding.")]
    run_json = json.dumps(
        {"perQuery": {"q1": {"AP": 0.3333333333333333, "P@3": 0.3333333333333333}}}
    )
    assert find_leaks(run_json, private) == []
    assert not is_evidence("0 333333333333333 0 333333333333333 1e 07 2 5")
    assert not is_evidence("h> </tr> <tr> <td>0 5</td> <td>0 25</td> <t")
    assert is_evidence("</td> the rounding of numbers <td>")


def _team_notebook() -> dict[str, object]:
    return {
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": ["## Notes\n", "The valves open at dawn and close at dusk each day."],
            },
            {
                "cell_type": "code",
                "metadata": {"tags": ["injected-parameters"]},
                "source": "systems = 'run:The-harbour-master-keeps-the-spare-key.trec'",
                "outputs": [],
            },
            {
                "cell_type": "code",
                "metadata": {},
                "source": "print(1)",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "PRINTED"}],
            },
        ],
        "metadata": {"papermill": {"exception": None, "parameters": {"systems": "lexical"}}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_a_notebooks_cells_are_its_own_text_and_its_outputs_never() -> None:
    notebook = _team_notebook()
    chunk = "Every morning the valves open at dawn and close at dusk each day, by hand."
    private = [PrivateText("chunk:d2", chunk)]
    artifact = "<p>The valves open at dawn and close at dusk each day.</p>"
    assert find_leaks(artifact, private) == ["chunk:d2"]
    assert find_leaks(artifact, private, own=OwnText.of_notebook(notebook)) == []
    # the same text as an output of that notebook is evidence: outputs are never own text
    assert "PRINTED" not in "".join(notebook_own_texts(notebook))
    assert "PRINTED" not in notebook_skeleton(notebook)
    # nor the injected parameters (a run file's name is the run's, not the author's)
    secret = [PrivateText("chunk:key", "The harbour master keeps the spare key under the mat.")]
    cell = "systems = 'run:The-harbour-master-keeps-the-spare-key.trec'"
    own = OwnText.of_notebook(notebook)
    assert find_leaks(f"<pre>{cell}</pre>", secret, own=own) == ["chunk:key"]


def test_library_structure_of_a_notebook_is_own_text() -> None:
    # papermill's metadata keys, juxtaposed in the notebook's JSON, are not a user's text
    notebook = _team_notebook()
    private = [PrivateText("chunk:2674", "see the metadata papermill exception parameters here")]
    text = json.dumps(notebook)
    assert find_leaks(text, private) == ["chunk:2674"]
    assert find_leaks(text, private, own=report_own_text(notebook, pages=False)) == []


@pytest.mark.parametrize(
    "path",
    [
        "/home/alice/Client Reports/Vault PIN 77319.trec",
        "/tmp/my runs/run one.trec",
        r"C:\Users\bob\My Files\secret run.trec",
    ],
)
@pytest.mark.parametrize("quote", ["", "'", '"', "("])
def test_paths_with_spaces_are_scrubbed_whole(path: str, quote: str) -> None:
    import nbformat

    from evalkit.report import scrub_notebook

    closing = ")" if quote == "(" else quote
    line = f"wrote {quote}{path}{closing} at last\n"
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(f"print({line!r})")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line)]
    nb.cells = [cell]
    scrubbed = scrub_notebook(nb, paths={})
    text = scrubbed.cells[0].outputs[0].text
    assert text == f"wrote {quote}<path>{closing} at last\n"
    for word in ("Reports", "Vault", "PIN", "77319", "runs", "one", "Files", "secret"):
        assert word not in nbformat.writes(scrubbed)
