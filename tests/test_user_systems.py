"""A user's own system that fails (``package.module:factory`` specs, ``FunctionRetriever``,
``Retriever`` objects): a clear error naming the system, the step and the query ID, exit 1
(2 for a result of the wrong shape), never a traceback and never the exception's message,
which may quote fixture text."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import InputError, SystemFailedError
from evalkit.fixtures import load_fixture
from evalkit.run import evaluate
from evalkit.systems import load_factory

SECRET = "the query text the exception quotes"

_MODULE = f"""
import evalkit as ek

def boom():
    raise RuntimeError({SECRET!r})

def needs_argument(x):
    return None

def raising():
    def search(text, k):
        raise ValueError("search failed on: " + text + " " + {SECRET!r})
    return ek.FunctionRetriever(search, name="raising")

def indexing_fails():
    def fail(chunks):
        raise KeyError({SECRET!r})
    return ek.FunctionRetriever(lambda text, k: [], name="indexer", on_index=fail)

def bad_name():
    return ek.FunctionRetriever(lambda text, k: [], name="<b>bad</b>")

def plain_ids():
    return ek.FunctionRetriever(lambda text, k: ["c1"], name="plain-ids")

def returns_none():
    return ek.FunctionRetriever(lambda text, k: None, name="returns-none")

class _System:  # a Retriever object (not a FunctionRetriever) whose search gives ``result``
    def __init__(self, name, result):
        self.name, self._result = name, result
    def definition(self):
        return {{}}
    def index(self, chunks):
        self.first = chunks[0].id
    def search(self, query, k):
        return self._result(self, query)

def text_scores():
    return _System("text-scores", lambda self, query: [(self.first, "high")])

def returns_text():
    return _System("returns-text", lambda self, query: query.text)
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of failing systems on ``sys.path``; its name."""
    name = f"evalkit_user_systems_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(_MODULE), encoding="utf-8")
    (tmp_path / f"{name}_broken.py").write_text("def f(:\n", encoding="utf-8")
    (tmp_path / f"{name}_needs.py").write_text(
        "import evalkit_not_installed_anywhere\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize(
    ("factory", "error", "message"),
    [
        ("boom", SystemFailedError, r"raised RuntimeError in its factory"),
        ("needs_argument", SystemFailedError, r"raised TypeError in its factory"),
        ("raising", SystemFailedError, r"system 'raising' raised ValueError in search\(query"),
        ("indexing_fails", SystemFailedError, r"system 'indexer' raised KeyError in index"),
        ("bad_name", InputError, r"FunctionRetriever\(name=\.\.\.\)"),
        (
            "plain_ids",
            InputError,
            r"search function of system 'plain-ids' returned a hit of type str",
        ),
        ("returns_none", InputError, r"search function of system 'returns-none' returned None"),
        ("text_scores", InputError, r"'text-scores' returned a hit of type tuple"),
        ("returns_text", InputError, r"'returns-text' returned str for query"),
    ],
)
def test_a_failing_system_is_named_without_its_message(
    user_module: str, tiny_dir: Path, factory: str, error: type[Exception], message: str
) -> None:
    fixture = load_fixture(tiny_dir)
    with pytest.raises(error, match=message) as raised:
        evaluate(fixture, [f"{user_module}:{factory}"], repeats=1)
    text = str(raised.value)
    assert SECRET not in text
    assert not any(q.text in text for q in fixture.queries)
    if error is SystemFailedError:  # the user's own exception, for debugging, not shown
        assert raised.value.__suppress_context__
        assert isinstance(raised.value.__context__, Exception)


def test_the_command_line_exits_1_with_one_line(
    user_module: str, tiny_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a failed evaluation exits 1 (DESIGN: usage errors 2, failed gates and evaluations 1)
    assert main(["run", str(tiny_dir), "--systems", f"{user_module}:raising"]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert SECRET not in captured.out + captured.err
    assert "raised ValueError in search(query" in captured.err


def test_a_module_that_fails_to_import_is_told_apart_from_a_missing_one(
    user_module: str,
) -> None:
    with pytest.raises(SystemFailedError, match="raised SyntaxError"):
        load_factory(f"{user_module}_broken:f")
    with pytest.raises(InputError, match="imports 'evalkit_not_installed_anywhere'"):
        load_factory(f"{user_module}_needs:f")
    with pytest.raises(InputError, match="cannot import module"):
        load_factory("evalkit_no_such_module:factory")
