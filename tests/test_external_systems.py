"""Systems from outside the process: ``run:PATH`` files and ``http:NAME`` services.

The reference for both is an in-process ``Retriever`` returning fixed rankings (the rankings
``lexical`` produced on the same fixture, so they are realistic): a run file holding those
rankings, or a real HTTP server on 127.0.0.1 serving them, must give the same per-query frame.
The HTTP failure tests start the same kind of server with a failure mode.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import pathlib
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pandas as pd
import pytest
from cli_runner import run_cli

from evalkit.errors import ExternalSystemError, InputError
from evalkit.fixtures import Fixture, generate_fixture, load_fixture
from evalkit.run import Evaluation, evaluate
from evalkit.systems import FunctionRetriever
from evalkit.systems.external import (
    HttpConfig,
    HttpRetriever,
    RunFileRetriever,
    http_env_name,
)
from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike

REPO = pathlib.Path(__file__).resolve().parent.parent
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"
K = 10


class FixedRankings(BaseRetriever):
    """The in-process reference: returns ``rankings[query_id]`` (best first)."""

    def __init__(self, rankings: dict[str, list[Hit]], name: str) -> None:
        self.rankings = rankings
        self.name = name

    def definition(self) -> dict[str, Any]:
        return {"class": "FixedRankings"}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        return

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        return self.rankings.get(query.id, [])[:k]


def rankings_of(evaluation: Evaluation, system: str) -> dict[str, list[Hit]]:
    frame = evaluation.rankings[evaluation.rankings["system"] == system]
    return {
        str(query_id): [
            Hit(str(c), float(s)) for c, s in zip(g["chunk_id"], g["score"], strict=True)
        ]
        for query_id, g in frame.groupby("query_id", sort=False)
    }


@pytest.fixture(scope="module")
def fixture() -> Fixture:
    return generate_fixture(11, documents=10, chunks_per_document=3, queries=16)


@pytest.fixture(scope="module")
def rankings(fixture: Fixture) -> dict[str, list[Hit]]:
    """lexical's rankings, with two answerable queries left out (they return nothing)."""
    lexical = rankings_of(evaluate(fixture, ["lexical"], k=K, repeats=1), "lexical")
    answerable = sorted(q.id for q in fixture.queries if q.answerable and q.id in lexical)
    return {q: hits for q, hits in lexical.items() if q not in answerable[:2]}


@pytest.fixture(scope="module")
def reference(fixture: Fixture, rankings: dict[str, list[Hit]]) -> Evaluation:
    return evaluate(fixture, [FixedRankings(rankings, "mine")], k=K, repeats=1)


def write_trec(path: pathlib.Path, rankings: dict[str, list[Hit]]) -> pathlib.Path:
    lines = [
        f"{query_id} Q0 {hit.chunk_id} {rank} {hit.score!r} mine"
        for query_id, hits in sorted(rankings.items(), reverse=True)  # file order does not matter
        for rank, hit in enumerate(hits, start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_jsonl(path: pathlib.Path, rankings: dict[str, list[Hit]]) -> pathlib.Path:
    rows = [
        json.dumps({"query_id": q, "chunk_id": h.chunk_id, "score": h.score})
        for q, hits in rankings.items()
        for h in hits
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def same_frames(left: Evaluation, right: Evaluation) -> None:
    pd.testing.assert_frame_equal(left.per_query, right.per_query)
    pd.testing.assert_frame_equal(left.rankings, right.rankings)
    pd.testing.assert_frame_equal(left.failures(), right.failures())


# --- run files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["trec", "jsonl"])
def test_run_file_gives_the_same_frames_as_an_in_process_retriever(
    kind: str,
    fixture: Fixture,
    rankings: dict[str, list[Hit]],
    reference: Evaluation,
    tmp_path: pathlib.Path,
) -> None:
    writer = write_trec if kind == "trec" else write_jsonl
    path = writer(tmp_path / f"mine.{kind}", rankings)
    got = evaluate(fixture, [f"run:{path}"], k=K, repeats=2)
    assert got.systems == ("mine",)
    same_frames(reference, got)
    # latency is not measured, never invented
    assert got.latency["latency_ms"].isna().all()
    summary = got.latency_summary().iloc[0]
    assert not summary["measured"]
    assert pd.isna(summary["mean_ms"])
    report = got.to_report()
    assert report["latency"]["mine"] == {"count": 2 * len(fixture.queries), "measured": False}
    # two answerable queries and the no-answer queries lexical left empty are missing
    missing = sorted(q.id for q in fixture.queries if q.id not in rankings)
    assert report["systemNotes"]["mine"] == {
        "latency": "not measured",
        "queries": len(fixture.queries),
        "queriesMissing": len(missing),
        "missingQueryIds": missing,
    }
    assert str(tmp_path) not in json.dumps(report)
    assert str(path) not in json.dumps(got.definitions)


def test_run_file_with_unknown_chunks_or_queries_names_the_ids(
    fixture: Fixture, rankings: dict[str, list[Hit]], tmp_path: pathlib.Path
) -> None:
    some_query = next(iter(rankings))
    bad_chunk = {**rankings, some_query: [Hit("no-such-chunk", 1.0)]}
    with pytest.raises(InputError, match=r"names 1 chunk ID\(s\) .*: no-such-chunk;"):
        evaluate(fixture, [f"run:{write_trec(tmp_path / 'a.trec', bad_chunk)}"], repeats=1)
    bad_query = {**rankings, "q-nope": rankings[some_query]}
    with pytest.raises(InputError, match=r"names 1 query ID\(s\) .*: q-nope;") as caught:
        evaluate(fixture, [f"run:{write_jsonl(tmp_path / 'b.jsonl', bad_query)}"], repeats=1)
    assert str(tmp_path) not in str(caught.value)


def test_an_unknown_id_that_is_text_is_shown_as_a_hash(
    fixture: Fixture, rankings: dict[str, list[Hit]], tmp_path: pathlib.Path
) -> None:
    # A run written with the text column where the chunk ID belongs: the error names a hash.
    some_query = next(iter(rankings))
    text = fixture.chunks[0].text
    with_text = {**rankings, some_query: [Hit(text, 1.0)]}
    with pytest.raises(InputError, match=r"names 1 chunk ID\(s\) .*: \(not shown: sha256:"):
        evaluate(fixture, [f"run:{write_jsonl(tmp_path / 'text.jsonl', with_text)}"], repeats=1)
    query_text = fixture.queries[0].text
    with_query = {**rankings, query_text: rankings[some_query]}
    with pytest.raises(InputError, match=r"names 1 query ID\(s\)") as caught:
        evaluate(fixture, [f"run:{write_jsonl(tmp_path / 'q.jsonl', with_query)}"], repeats=1)
    assert query_text not in str(caught.value)


def test_source_ids_that_import_mapped_get_a_hint(tmp_path: pathlib.Path) -> None:
    from types import SimpleNamespace

    from evalkit.importers import fixture_id

    mapped = fixture_id("doc/1")
    assert mapped is not None
    assert mapped != "doc/1"
    path = write_jsonl(tmp_path / "source-ids.jsonl", {"q1": [Hit("doc/1", 1.0)]})
    run = RunFileRetriever(path)
    with pytest.raises(InputError, match="1 of them are source IDs that 'evalkit import' mapped"):
        run.index([SimpleNamespace(id=mapped)])
    with pytest.raises(InputError) as caught:
        run.index([SimpleNamespace(id="other")])
    assert "mapped" not in str(caught.value)


def test_malformed_run_files_are_input_errors_without_the_path(tmp_path: pathlib.Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query_id": "q", "chunk_id": "c", "score": 1}\nnot json\n', "utf-8")
    with pytest.raises(InputError, match=r"run system 'broken': JSONL line 2 is not valid JSON"):
        RunFileRetriever(broken)
    short = tmp_path / "short.trec"
    short.write_text("q Q0 c 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"run system 'short': the TREC run file is malformed"):
        RunFileRetriever(short)
    with pytest.raises(InputError, match="the run file does not exist") as caught:
        RunFileRetriever(tmp_path / "absent.trec")
    assert str(tmp_path) not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.trec", b""),
        ("comments.trec", b"# written by a job that died\n\n"),
        ("blank.jsonl", b"\n  \n"),
        ("empty.trec.gz", gzip.compress(b"", mtime=0)),
        ("bom.trec", b"\xef\xbb\xbf"),
        ("bom.jsonl", b"\xef\xbb\xbf\n"),
    ],
    ids=["empty", "comments", "blank-jsonl", "empty-gzip", "bom", "bom-jsonl"],
)
def test_a_run_file_without_results_is_refused(
    tmp_path: pathlib.Path, name: str, content: bytes
) -> None:
    # scoring it would give every query 0.0, a real-looking regression with nothing behind it
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"the run file holds no results") as caught:
        RunFileRetriever(path)
    assert str(tmp_path) not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("dup.trec", "\ufeffq-1 Q0 c-1 1 2.0 r\nq-1 Q0 c-2 2 1.0 r\nq-1 Q0 c-1 3 0.5 r\n"),
        ("dup.jsonl", '{"query_id": "q-1", "chunk_id": "c-1", "score": 2}\n' * 2),
    ],
    ids=["trec-with-bom", "jsonl"],
)
def test_a_run_listing_a_chunk_twice_is_refused_as_trec_eval_refuses_it(
    tmp_path: pathlib.Path, name: str, content: str
) -> None:
    # issue 34: run: accepted what 'evalkit trec-eval' refuses; one rule for both readers
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=r"lists chunk c-1 more than once for query q-1") as caught:
        RunFileRetriever(path)
    assert "1 duplicated (query, chunk) pair(s)" in str(caught.value)
    assert str(tmp_path) not in str(caught.value)
    if name.endswith(".trec"):
        (tmp_path / "qrels").write_text("q-1 0 c-1 1\n", encoding="utf-8")
        argv = ["trec-eval", "qrels", name, "-m", "P@5"]
        code, _, err = run_cli(argv, tmp_path)
        assert code == 2
        assert "more than once for query 'q-1'" in err


def test_run_ties_keep_the_rank_order_and_names_come_from_the_file_name(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "My Run.v2.trec.gz"
    import gzip

    path.write_bytes(gzip.compress(b"q1 Q0 b 2 1.0 x\nq1 Q0 a 1 1.0 x\nq1 Q0 c 3 3.0 x\n"))
    run = RunFileRetriever(path)
    assert run.name == "My-Run.v2"
    assert [h.chunk_id for h in run._hits["q1"]] == ["c", "a", "b"]  # score, then rank


# --- a real HTTP server -------------------------------------------------------------------------


class Service(BaseHTTPRequestHandler):
    """Serves ``rankings`` as ``{"hits": [...]}``; ``mode`` injects failures."""

    rankings: ClassVar[dict[str, list[Hit]]] = {}
    mode: ClassVar[str] = "ok"
    delay_s: ClassVar[float] = 0.0
    calls: ClassVar[dict[str, int]] = {}
    lock = threading.Lock()
    shape: ClassVar[str] = "default"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        query_id = body["query_id"] if self.shape == "default" else body["meta"]["qid"]
        with self.lock:
            calls = self.calls[query_id] = self.calls.get(query_id, 0) + 1
        if self.delay_s:
            # a different delay per query, so calls complete out of order under concurrency
            time.sleep(self.delay_s * (1 + sum(map(ord, query_id)) % 5))
        if self.mode == "500" or (self.mode == "flaky" and calls == 1):
            self._send(500, b"internal error")
            return
        if self.mode == "badjson":
            self._send(200, b'{"hits": [')
            return
        if self.mode == "truncated":  # promises 100 bytes, sends 10, closes the connection
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b'{"hits": [')
            self.close_connection = True
            return
        k = body["k"] if self.shape == "default" else body["size"]
        hits = self.rankings.get(query_id, [])[:k]
        if self.shape == "default":
            payload: Any = {"hits": [{"chunk_id": h.chunk_id, "score": h.score} for h in hits]}
        else:
            payload = {"data": {"results": [{"id": h.chunk_id, "rel": h.score} for h in hits]}}
        self._send(200, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client timed out
            self.wfile.write(data)


@pytest.fixture
def service(
    rankings: dict[str, list[Hit]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[type[Service]]:
    """A real HTTP server on 127.0.0.1 (a free port) at ``$EVALKIT_HTTP_MY_SVC_URL``."""
    handler = type("Handler", (Service,), {"rankings": rankings, "calls": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/search"
    monkeypatch.setenv("EVALKIT_HTTP_MY_SVC_URL", url)
    handler.url = url  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def test_env_name_rule() -> None:
    assert http_env_name("my-svc") == "EVALKIT_HTTP_MY_SVC_URL"
    assert http_env_name("Search.v2", "CONFIG") == "EVALKIT_HTTP_SEARCH_V2_CONFIG"


def test_http_system_gives_the_same_frames_as_an_in_process_retriever(
    fixture: Fixture, reference: Evaluation, service: type[Service]
) -> None:
    got = evaluate(fixture, ["http:my-svc"], k=K, repeats=2)
    assert got.systems == ("my-svc",)
    renamed = got.per_query.assign(system="mine")
    pd.testing.assert_frame_equal(reference.per_query, renamed)
    assert got.latency["latency_ms"].notna().all()
    assert service.url not in json.dumps(got.to_report())  # type: ignore[attr-defined]


def test_concurrent_calls_give_the_same_output_as_sequential_ones(
    fixture: Fixture, reference: Evaluation, service: type[Service]
) -> None:
    service.delay_s = 0.01
    started = time.perf_counter()
    got = evaluate(fixture, ["http:my-svc"], k=K, repeats=1, concurrency=8)
    concurrent_s = time.perf_counter() - started
    pd.testing.assert_frame_equal(reference.per_query, got.per_query.assign(system="mine"))
    pd.testing.assert_frame_equal(
        reference.rankings.drop(columns="system"), got.rankings.drop(columns="system")
    )
    # each call's own latency includes its server delay (at least 10 ms)
    assert (got.latency["latency_ms"] >= 10).all()
    # 16 queries, 10-50 ms each: sequentially at least the sum of the delays
    assert concurrent_s < got.latency["latency_ms"].sum() / 1000


def test_config_pointers_shape_request_and_response(
    fixture: Fixture, reference: Evaluation, service: type[Service], tmp_path: pathlib.Path
) -> None:
    service.shape = "nested"
    config = tmp_path / "svc.yaml"
    config.write_text(
        "request: {/q/text: query, /size: k, /meta/qid: query_id}\n"
        "hits: /data/results\nchunk_id: /id\nscore: /rel\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_HTTP_MY_SVC_CONFIG", str(config))
        got = evaluate(fixture, ["http:my-svc"], k=K, repeats=1)
    pd.testing.assert_frame_equal(reference.per_query, got.per_query.assign(system="mine"))


def test_a_retry_succeeds(fixture: Fixture, service: type[Service]) -> None:
    service.mode = "flaky"  # the first call of each query gets a 500
    system = HttpRetriever("my-svc", config=HttpConfig(retries=1, backoff_s=0.0))
    query = next(q for q in fixture.queries if q.id in service.rankings)
    assert system.search(query, K) == service.rankings[query.id][:K]
    assert service.calls[query.id] == 2


def failure(system: HttpRetriever, fixture: Fixture, service: type[Service]) -> str:
    query = fixture.queries[0]
    with pytest.raises(ExternalSystemError) as caught:
        system.search(query, K)
    message = str(caught.value)
    assert f"http system 'my-svc', query {query.id!r}" in message
    url: str = service.url  # type: ignore[attr-defined]
    assert url not in message
    assert "127.0.0.1" not in message
    assert url.rsplit(":", 1)[1].split("/", maxsplit=1)[0] not in message  # not even the port
    return message


def test_a_500_is_retried_then_reported(fixture: Fixture, service: type[Service]) -> None:
    service.mode = "500"
    system = HttpRetriever("my-svc", config=HttpConfig(retries=2, backoff_s=0.01))
    message = failure(system, fixture, service)
    assert "HTTP status 500 after 3 attempt(s)" in message
    assert service.calls[fixture.queries[0].id] == 3


def test_malformed_json_is_reported(fixture: Fixture, service: type[Service]) -> None:
    service.mode = "badjson"
    message = failure(HttpRetriever("my-svc"), fixture, service)
    assert message.endswith("the response is not valid JSON")


def test_a_truncated_response_is_a_network_error(fixture: Fixture, service: type[Service]) -> None:
    service.mode = "truncated"
    system = HttpRetriever("my-svc", config=HttpConfig(retries=1, backoff_s=0.0))
    message = failure(system, fixture, service)
    # httpx names a body cut short RemoteProtocolError (urllib: IncompleteRead)
    assert "network error (RemoteProtocolError) after 2 attempt(s)" in message


def test_a_timeout_is_reported(fixture: Fixture, service: type[Service]) -> None:
    service.delay_s = 0.4
    system = HttpRetriever("my-svc", config=HttpConfig(timeout_s=0.1, retries=1, backoff_s=0.0))
    message = failure(system, fixture, service)
    assert "no response within 0.1 s (timeout) after 2 attempt(s)" in message


def test_a_slow_endpoint_within_the_timeout_is_measured(
    fixture: Fixture, service: type[Service]
) -> None:
    service.delay_s = 0.05  # 50-250 ms per call, below the default 30 s timeout
    got = evaluate(fixture, ["http:my-svc"], k=K, repeats=1, concurrency=len(fixture.queries))
    assert (got.latency["latency_ms"] >= 50).all()
    assert got.rankings["query_id"].nunique() == len(service.rankings)


def test_missing_url_and_unreachable_service(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_HTTP_NOWHERE_URL", raising=False)
    with pytest.raises(InputError, match="set the environment variable EVALKIT_HTTP_NOWHERE_URL"):
        HttpRetriever("nowhere")
    with ThreadingHTTPServer(("127.0.0.1", 0), Service) as server:
        port = server.server_address[1]  # closed again: nothing listens there
    monkeypatch.setenv("EVALKIT_HTTP_NOWHERE_URL", f"http://127.0.0.1:{port}/")
    system = HttpRetriever("nowhere", config=HttpConfig(retries=0))
    with pytest.raises(ExternalSystemError, match=r"'nowhere', query .*network error") as caught:
        system.search(fixture.queries[0], K)
    assert str(port) not in str(caught.value)


# --- FunctionRetriever sees the chunks ----------------------------------------------------------


def test_function_retriever_receives_the_chunks(fixture: Fixture) -> None:
    seen: list[int] = []

    def search(text: str, k: int) -> list[tuple[str, float]]:
        return [(c.id, 1.0) for c in system.chunks[:k]]

    system = FunctionRetriever(search, name="first-k", on_index=lambda c: seen.append(len(c)))
    got = evaluate(fixture, [system], k=3, repeats=1)
    assert seen == [len(fixture.chunks)]
    first = list(got.rankings["chunk_id"][:3])
    assert first == [c.id for c in fixture.chunks[:3]]


# --- the report with run: and http: systems -----------------------------------------------------


@pytest.mark.slow
def test_report_with_a_run_and_an_http_system(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = load_fixture(COMMITTED)
    lexical = rankings_of(evaluate(committed, ["lexical"], k=K, repeats=1), "lexical")
    write_trec(tmp_path / "my-run.trec", lexical)
    handler = type("Handler", (Service,), {"rankings": lexical, "calls": {}})
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/private-endpoint"
        monkeypatch.setenv("EVALKIT_HTTP_TEAM_SEARCH_URL", url)
        systems = "lexical,run:my-run.trec,http:team-search"
        argv = ["report", str(COMMITTED), "-p", "systems", systems, "-p", "base_system"]
        argv += ["run:my-run.trec", "-p", "n_resamples", "200"]
        argv += ["-p", "probes", "", "--output", "reports/r.html"]
        code, out, err = run_cli(argv, tmp_path)
        server.shutdown()
    assert code == 0, out + err
    html = (tmp_path / "reports" / "r.html").read_text(encoding="utf-8")
    ipynb = (tmp_path / "reports" / "r.ipynb").read_text(encoding="utf-8")
    for text in (html, ipynb):
        assert "private-endpoint" not in text
        assert url not in text
        assert str(tmp_path) not in text
    assert "my-run" in html
    assert "team-search" in html
    assert "not measured" in html
    from evalkit.safety.privacy import find_leaks, private_texts

    assert find_leaks(html, private_texts(committed)) == []
