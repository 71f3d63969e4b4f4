"""A confidence the system declares (issue 46): the Retriever protocol's optional
``confidence(query, hits)``, a JSONL run's ``confidence`` field and an ``http:`` response's,
carried to ``Evaluation.confidences``, ``ek.abstention`` and the report's ``confidence``.

Every system here returns the same top score for every query (no threshold on it separates
anything: AUC 0.5) and declares a confidence that separates answerable from no-answer
queries, so AUC 1.0 shows the declared value is the one compared.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

import evalkit as ek
from evalkit.errors import ExternalSystemError, FormatError, InputError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.formats import read_run_file
from evalkit.run import Evaluation, evaluate
from evalkit.systems.protocol import BaseRetriever, Hit, QueryLike

DEV = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-dev-v1"


@pytest.fixture(scope="module")
def dev() -> Fixture:
    return load_fixture(DEV)


def _declared(fixture: Fixture, query_id: str) -> float:
    return 0.9 if fixture.queries_by_id[query_id].answerable else 0.1


class Declaring(BaseRetriever):
    """One chunk at score 0.5 for every query; ``confidence`` from ``value(query_id)``."""

    def __init__(self, fixture: Fixture, value: Any, name: str = "declaring") -> None:
        self.name, self._chunk, self._value = name, fixture.chunks[0].id, value

    def definition(self) -> dict[str, Any]:
        return {"kind": "fixed"}

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return [Hit(self._chunk, 0.5)]

    def confidence(self, query: QueryLike, hits: Sequence[Hit]) -> Any:
        return self._value(query.id)


def _overall(evaluation: Evaluation) -> Any:
    result = ek.abstention(evaluation, max_no_answer_fp=0.0, n_resamples=50)
    return result.summary[result.summary["language"] == "all"].set_index(["system", "statistic"])


def _separated(evaluation: Evaluation, system: str) -> None:
    """AUC 1.0, operating point NoAnswerFP 0 / NoResult 0, declared everywhere."""
    overall = _overall(evaluation)
    assert overall.loc[(system, "auc"), "value"] == 1.0
    assert overall.loc[(system, "op_no_result"), "value"] == 0.0
    assert overall.loc[(system, "op_no_answer_fp"), "value"] == 0.0
    assert (overall.loc[system, "source"] == "declared").all()
    assert evaluation.confidence_sources() == {system: "declared"}
    report = evaluation.to_report()
    assert report["confidenceSource"] == {system: "declared"}
    assert set(report["confidence"][system].values()) == {0.9, 0.1}


# --- the Retriever protocol ----------------------------------------------------------------------


def test_a_retriever_declares_its_confidence(dev: Fixture) -> None:
    declaring = Declaring(dev, lambda q: _declared(dev, q))
    plain = Declaring(dev, lambda q: None, name="plain")  # declares nothing: the top score
    evaluation = evaluate(dev, [declaring, plain], repeats=2)
    confidences = evaluation.confidences().set_index(["system", "query_id"])
    query = dev.queries[0].id
    assert confidences.loc[("declaring", query), "confidence"] == _declared(dev, query)
    assert confidences.loc[("plain", query), "confidence"] == 0.5
    assert evaluation.confidence_sources() == {"declaring": "declared", "plain": "top score"}
    overall = _overall(evaluation)
    assert overall.loc[("declaring", "auc"), "value"] == 1.0
    assert overall.loc[("plain", "auc"), "value"] == 0.5
    assert (overall.loc["plain", "source"] == "top score").all()
    report = evaluation.to_report()
    assert report["confidenceSource"] == {"declaring": "declared"}  # "plain" is not listed
    assert set(report["confidence"]["plain"].values()) == {0.5}


def test_a_report_without_declared_confidence_has_no_source_section(dev: Fixture) -> None:
    report = evaluate(dev, [Declaring(dev, lambda q: None)], repeats=1).to_report()
    assert "confidenceSource" not in report
    assert report["queryLanguages"] == {q.id: q.language for q in dev.queries}


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, "0.5", 10**400])
def test_a_declared_confidence_must_be_a_finite_number(dev: Fixture, bad: Any) -> None:
    with pytest.raises(InputError, match="must return a finite number"):
        evaluate(dev, [Declaring(dev, lambda q: bad)], repeats=1)


def test_a_system_declares_for_every_query_it_answers_or_for_none(dev: Fixture) -> None:
    first = dev.queries[0].id
    some = Declaring(dev, lambda q: 0.3 if q == first else None)
    with pytest.raises(InputError, match="declared a confidence for 1 of the 85 queries"):
        evaluate(dev, [some], repeats=1)


def test_a_declared_confidence_that_changes_between_repeats_is_not_deterministic(
    dev: Fixture,
) -> None:
    calls = iter(range(10**6))
    drifting = Declaring(dev, lambda q: float(next(calls)))
    with pytest.raises(ek.errors.DeterminismError, match="repeated runs differ"):
        evaluate(dev, [drifting], repeats=2)


# --- JSON Lines runs -----------------------------------------------------------------------------


def _jsonl(path: pathlib.Path, fixture: Fixture, extra: Any) -> pathlib.Path:
    """Two hits per query at score 0.5, each line with ``extra(query_id, line)``'s keys."""
    rows = [
        json.dumps({"query_id": q.id, "chunk_id": chunk.id, "score": 0.5, **extra(q.id, i)})
        for q in fixture.queries
        for i, chunk in enumerate(fixture.chunks[:2])
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_jsonl_run_declares_a_confidence_per_query(dev: Fixture, tmp_path: pathlib.Path) -> None:
    # given on the first line of each query only: lines may leave it out
    path = _jsonl(
        tmp_path / "mine.jsonl",
        dev,
        lambda q, i: {"confidence": _declared(dev, q)} if i == 0 else {},
    )
    frame = read_run_file(path, with_confidence=True)
    assert frame.groupby("query_id")["confidence"].nunique().eq(1).all()  # on every row
    assert list(read_run_file(path).columns) == ["query_id", "doc_id", "score", "order"]
    evaluation = evaluate(dev, [f"run:{path}"], repeats=2)
    _separated(evaluation, "mine")
    plain = _jsonl(tmp_path / "plain.jsonl", dev, lambda q, i: {})
    without = evaluate(dev, [f"run:{plain}"], repeats=1)
    # the confidences are part of the run's definition: its hash differs from the plain run's
    assert evaluation.definitions["mine"] != without.definitions["plain"]
    assert without.confidence_sources() == {"plain": "top score"}


@pytest.mark.parametrize(
    ("extra", "line", "message"),
    [
        (lambda q, i: {"confidence": "high"}, 1, "'confidence' should be a finite number"),
        (lambda q, i: {"confidence": True}, 1, "'confidence' should be a finite number"),
        (lambda q, i: {"confidence": 0.1 * (i + 1)}, 2, "'confidence' 0.2 differs from 0.1 given"),
        (
            lambda q, i: {"confidence": 0.5} if q != "dq-en-02" else {},
            3,
            "query 'dq-en-02' has no 'confidence'",
        ),
    ],
)
def test_a_malformed_confidence_names_file_line_and_field(
    dev: Fixture, tmp_path: pathlib.Path, extra: Any, line: int, message: str
) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", dev, extra)
    with pytest.raises(FormatError, match=f"bad.jsonl:{line}: {message}") as caught:
        read_run_file(path)
    assert caught.value.line == line
    with pytest.raises(InputError, match=f"JSONL line {line}: {message}") as as_system:
        evaluate(dev, [f"run:{path}"], repeats=1)
    assert str(tmp_path) not in str(as_system.value)  # the run: system never shows its path


# --- http: services ------------------------------------------------------------------------------


class ConfidentService(BaseHTTPRequestHandler):
    """One hit at score 0.5 for every query; the confidence at ``/meta/confidence``."""

    confidence: ClassVar[dict[str, Any]] = {}
    chunk: ClassVar[str] = ""

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        meta = {"confidence": self.confidence[body["query_id"]]}
        payload = {"meta": meta, "hits": [{"chunk_id": self.chunk, "score": 0.5}]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)


@pytest.fixture
def confident(
    dev: Fixture, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> Iterator[type[ConfidentService]]:
    """A real HTTP server on 127.0.0.1 at ``http:confident``, its config naming the pointer."""
    values = {q.id: _declared(dev, q.id) for q in dev.queries}
    handler = type(
        "Handler", (ConfidentService,), {"confidence": values, "chunk": dev.chunks[0].id}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = tmp_path / "confident.yaml"
    config.write_text("confidence: /meta/confidence\n", encoding="utf-8")
    monkeypatch.setenv(
        "EVALKIT_HTTP_CONFIDENT_URL", f"http://127.0.0.1:{server.server_address[1]}/"
    )
    monkeypatch.setenv("EVALKIT_HTTP_CONFIDENT_CONFIG", str(config))
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def test_an_http_response_declares_the_confidence(
    dev: Fixture, confident: type[ConfidentService]
) -> None:
    evaluation = evaluate(dev, ["http:confident"], repeats=2, concurrency=4)
    _separated(evaluation, "confident")


def test_an_http_response_without_a_number_at_the_pointer_fails(
    dev: Fixture, confident: type[ConfidentService]
) -> None:
    confident.confidence = {**confident.confidence, dev.queries[3].id: "high"}
    with pytest.raises(ExternalSystemError, match=r"confidence at JSON pointer '/meta/confidence'"):
        evaluate(dev, ["http:confident"], repeats=1)


def test_without_the_pointer_an_http_system_keeps_the_top_score(
    dev: Fixture, confident: type[ConfidentService], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_HTTP_CONFIDENT_CONFIG")
    evaluation = evaluate(dev, ["http:confident"], repeats=1)
    assert evaluation.confidence_sources() == {"confident": "top score"}
    assert _overall(evaluation).loc[("confident", "auc"), "value"] == 0.5


def test_rankings_made_elsewhere_carry_their_declared_confidence(
    dev: Fixture, tmp_path: pathlib.Path
) -> None:
    path = _jsonl(tmp_path / "mine.jsonl", dev, lambda q, i: {"confidence": _declared(dev, q)})
    rankings = read_run_file(path, with_confidence=True).assign(system="mine")
    evaluation = Evaluation.from_rankings(dev, rankings)
    assert list(evaluation.rankings.columns) == [
        "system",
        "query_id",
        "rank",
        "chunk_id",
        "score",
        "grade",
    ]
    _separated(evaluation, "mine")
    plain = Evaluation.from_rankings(dev, rankings.drop(columns="confidence"))
    assert plain.confidence_sources() == {"mine": "top score"}


def test_an_unset_confidence_pointer_keeps_the_http_definition_hash(
    confident: type[ConfidentService],
) -> None:
    from evalkit.safety.canonical import canonical_hash
    from evalkit.systems.external import HttpConfig, HttpRetriever

    plain = HttpRetriever("confident", config=HttpConfig())
    fields = HttpConfig().model_dump(mode="json", exclude={"ca_bundle"})
    del fields["confidence"]  # the config as it was before the pointer existed
    assert plain.definition()["config"] == canonical_hash(fields)
    pointed = HttpRetriever("confident", config=HttpConfig(confidence="/meta/confidence"))
    assert pointed.definition()["config"] != plain.definition()["config"]


def test_a_function_retriever_declares_with_a_confidence_function(dev: Fixture) -> None:
    chunk = dev.chunks[0].id
    answerable = {q.text: q.answerable for q in dev.queries}

    def fixed(text: str, k: int) -> list[tuple[str, float]]:
        return [(chunk, 0.5)]

    def sure(text: str, hits: Sequence[Hit]) -> float:
        return 0.9 if answerable[text] else 0.1

    declaring = ek.FunctionRetriever(fixed, name="declaring", confidence=sure)
    plain = ek.FunctionRetriever(fixed, name="plain")
    assert "confidence" not in plain.definition()  # unchanged for functions without one
    assert declaring.definition()["confidence"].endswith("sure")
    evaluation = evaluate(dev, [declaring, plain], repeats=1)
    assert evaluation.confidence_sources() == {"declaring": "declared", "plain": "top score"}
    assert _overall(evaluation).loc[("declaring", "auc"), "value"] == 1.0
