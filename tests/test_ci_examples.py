"""The CI recipe in ``examples/ci/`` (issue 34): both files are YAML, and every ``evalkit``
command they run is one the CLI accepts, options included (argparse parses it as written).
"""

from __future__ import annotations

import argparse
import pathlib
import shlex
from collections.abc import Iterator

import pytest
import yaml

from evalkit.cli import build_parser

SEPARATORS = ("&&", "||", ";", "|")
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples" / "ci"


def _github_commands(workflow: dict[object, object]) -> Iterator[str]:
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    for job in jobs.values():
        for step in job["steps"]:
            if "run" in step:
                yield str(step["run"])


def _gitlab_commands(pipeline: dict[object, object]) -> Iterator[str]:
    for job in pipeline.values():
        if isinstance(job, dict):
            for key in ("before_script", "script", "after_script"):
                yield from (str(line) for line in job.get(key, []))


def _evalkit_argvs(script: str) -> list[list[str]]:
    """Each ``evalkit ...`` command of a shell script (``evalkit`` as the command word, not an
    argument such as ``pip install evalkit``): its arguments after ``evalkit``."""
    argvs = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for start, word in enumerate(words):
            if word == "evalkit" and (start == 0 or words[start - 1] in SEPARATORS):
                rest = words[start + 1 :]
                end = next((i for i, w in enumerate(rest) if w in SEPARATORS), None)
                argvs.append(rest[:end])
    return argvs


def _parse(argv: list[str]) -> argparse.Namespace:
    parser, _ = build_parser()
    try:
        return parser.parse_args(argv)
    except SystemExit as exit_:
        raise AssertionError(f"evalkit refuses {shlex.join(argv)!r} (exit {exit_.code})") from None


@pytest.mark.parametrize(
    ("name", "commands"),
    [("github-actions.yml", _github_commands), ("gitlab-ci.yml", _gitlab_commands)],
)
def test_every_evalkit_command_of_the_ci_examples_exists(name: str, commands: object) -> None:
    data = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    assert callable(commands)
    argvs = [argv for script in commands(data) for argv in _evalkit_argvs(script)]
    parsed = [_parse(argv) for argv in argvs]
    # the recipe: gate against the baseline from main, with both CI files; the HTML report
    gates = [p for p in parsed if p.command == "gate"]
    assert len(gates) == 1
    # the baseline file the user commits (main's version over the working copy): the
    # refresh advice names it (issue 42)
    assert gates[0].baseline == "$BASELINE"
    assert gates[0].junit == "ci/gates.xml"
    assert gates[0].markdown == "ci/gates.md"
    assert gates[0].systems.startswith("run:")
    assert [p.command for p in parsed].count("report") == 1
    # the report renders the same verdict: the same gates and baseline as the gate
    (report,) = [p for p in parsed if p.command == "report"]
    assert (report.gates, report.baseline) == (gates[0].gates, gates[0].baseline)


def test_the_extractor_sees_an_unknown_option() -> None:
    # the check above can fail: a misspelt option is refused
    (argv,) = _evalkit_argvs('evalkit gate "$FIXTURE" --junit-xml ci/gates.xml')
    with pytest.raises(AssertionError, match="evalkit refuses"):
        _parse(argv)
