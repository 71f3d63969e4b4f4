"""``http:`` systems against misbehaving services on 127.0.0.1: redirects (the credential stays
home), a trickling service (the attempt's deadline), ``Retry-After``, SIGINT during slow calls,
a response too large, duplicate chunk IDs.

Every service binds 127.0.0.1 on a free port, runs in a daemon thread and is shut down by its
fixture; the slow ones sleep in slices and stop when the test ends (``Service.stop``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import pathlib
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from cli_runner import run_cli
from raw_http import RawService, raw_serving

from evalkit.errors import ExternalSystemError, InputError
from evalkit.fixtures import Fixture, load_fixture
from evalkit.run import evaluate
from evalkit.safety.canonical import text_hash
from evalkit.systems.http import HttpConfig, HttpRetriever

REPO = pathlib.Path(__file__).resolve().parent.parent
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"
EVALKIT = pathlib.Path(sys.executable).with_name("evalkit")
TOKEN = "Bearer s3cret-token-for-the-test"


@pytest.fixture(scope="module")
def fixture() -> Fixture:
    return load_fixture(COMMITTED)


class Service(BaseHTTPRequestHandler):
    """Answers each query with the fixture's first chunk; ``mode`` picks a misbehaviour."""

    mode: ClassVar[str] = "ok"
    chunk: ClassVar[str] = ""
    target: ClassVar[str] = ""  # the other service's URL, for the redirects
    seen: ClassVar[list[dict[str, Any]]]  # method, path, headers, body of every request
    last_refusal: ClassVar[dict[str, float]]
    stop: ClassVar[threading.Event]
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _sleep(self, seconds: float) -> None:
        self.stop.wait(seconds)

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.lock:
            self.seen.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body,
                }
            )
        query_id = json.loads(body)["query_id"] if body else ""
        mode = self.mode
        if mode in {"redirect", "same-origin"} and self.path == "/search":
            target = self.target if mode == "redirect" else "/moved?x=1"
            self.send_response(307)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(600):  # one byte every 0.5 s, for up to five minutes
                    if self.stop.is_set():
                        return
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    self._sleep(0.5)
            return
        if mode == "slow":
            self._sleep(20)
        if mode == "retry-after":
            now = time.monotonic()
            with self.lock:
                last = self.last_refusal.get(query_id)
                if last is None or now - last < 2.0:
                    self.last_refusal[query_id] = now
                    refuse = True
                else:
                    refuse = False
            if refuse:
                self.send_response(429)
                self.send_header("Retry-After", "2")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        hits = [{"chunk_id": self.chunk, "score": 1.0}]
        if mode == "duplicates":
            hits = hits * 2
        payload = json.dumps({"hits": hits}).encode()
        if mode == "large":
            payload = b'{"hits": [], "pad": "' + b"x" * 2_000_000 + b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(payload)


@contextlib.contextmanager
def serving(mode: str, chunk: str, target: str = "") -> Iterator[tuple[type[Service], str]]:
    handler = type(
        "Handler",
        (Service,),
        {
            "mode": mode,
            "chunk": chunk,
            "target": target,
            "seen": [],
            "last_refusal": {},
            "stop": threading.Event(),
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        handler.stop.set()
        server.shutdown()
        server.server_close()


def config(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "svc.yaml"
    path.write_text("headers_from_env: {Authorization: SVC_TOKEN}\n" + text, encoding="utf-8")
    return str(path)


def env(url: str, config_path: str) -> dict[str, str]:
    return {
        "EVALKIT_HTTP_SVC_URL": url + "/search",
        "EVALKIT_HTTP_SVC_CONFIG": config_path,
        "SVC_TOKEN": TOKEN,
    }


def test_a_redirect_to_another_port_fails_and_the_other_port_never_sees_the_credential(
    fixture: Fixture, tmp_path: pathlib.Path
) -> None:
    chunk = fixture.chunks[0].id
    with (
        serving("ok", chunk) as (elsewhere, other_url),
        serving("redirect", chunk, target=other_url + "/steal?q=1") as (home, url),
    ):
        code, out, err = run_cli(
            ["run", str(COMMITTED), "--systems", "http:svc", "--repeats", "1"],
            tmp_path,
            env=env(url, config(tmp_path, "")),
        )
    assert code != 0
    assert elsewhere.seen == []  # not one request reached the other origin
    assert home.seen
    assert home.seen[0]["headers"]["Authorization"] == TOKEN
    assert "HTTP status 307 redirects to another origin (another port; origin sha256:" in err
    assert text_hash(other_url.split("/", 3)[0] + "//" + other_url.split("/", 3)[2]) in err
    assert "127.0.0.1" not in err  # the endpoint itself is never shown
    assert "/steal" not in err
    assert "q=1" not in err
    assert TOKEN not in out + err


def test_a_same_origin_redirect_is_followed_only_when_asked_keeping_method_and_body(
    fixture: Fixture, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = fixture.queries[0]
    with serving("same-origin", fixture.chunks[0].id) as (home, url):
        for name, value in env(url, config(tmp_path, "")).items():
            monkeypatch.setenv(name, value)
        with pytest.raises(ExternalSystemError, match="307 redirects within the same origin"):
            HttpRetriever("svc").search(query, 5)
        monkeypatch.setenv("EVALKIT_HTTP_SVC_CONFIG", config(tmp_path, "redirects: same-origin\n"))
        hits = HttpRetriever("svc").search(query, 5)
    assert [h.chunk_id for h in hits] == [fixture.chunks[0].id]
    first, moved = home.seen[-2:]
    assert moved["path"] == "/moved?x=1"
    assert moved["method"] == first["method"] == "POST"
    assert moved["body"] == first["body"]
    assert moved["headers"]["Authorization"] == TOKEN  # same origin: the credential may go


def test_a_trickling_service_ends_the_run_within_its_timeout(
    fixture: Fixture, tmp_path: pathlib.Path
) -> None:
    with serving("trickle", fixture.chunks[0].id) as (_, url):
        started = time.monotonic()
        code, _, err = run_cli(
            ["run", str(COMMITTED), "--systems", "http:svc", "--repeats", "1"],
            tmp_path,
            env=env(url, config(tmp_path, "timeout_s: 2\nretries: 1\nbackoff_s: 0.1\n")),
        )
        elapsed = time.monotonic() - started
    assert code != 0
    assert "no response within 2 s (timeout) after 2 attempt(s)" in err
    assert elapsed < 30  # two attempts of 2 s; it ran forever before


def test_retry_after_is_honoured(fixture: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service refuses any retry sooner than its ``Retry-After: 2``: the old fixed backoff
    (0.5 s, then 1 s) failed every query."""
    queries = fixture.queries[:4]
    small = fixture.model_copy(update={"queries": tuple(queries)})
    with serving("retry-after", fixture.chunks[0].id) as (home, url):
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url + "/search")
        got = evaluate(small, ["http:svc"], k=5, repeats=1, concurrency=4)
    assert sorted(got.rankings["query_id"].unique()) == sorted(q.id for q in queries)
    assert len(home.seen) == 2 * len(queries)  # one refusal and one success per query


def test_sigint_during_slow_calls_exits_within_seconds_without_a_traceback(
    fixture: Fixture, tmp_path: pathlib.Path
) -> None:
    with serving("slow", fixture.chunks[0].id) as (home, url):
        process = subprocess.Popen(
            [
                str(EVALKIT),
                "run",
                str(COMMITTED),
                "--systems",
                "http:svc",
                "--repeats",
                "1",
                "--concurrency",
                "4",
            ],
            cwd=tmp_path,
            env={**os.environ, **env(url, config(tmp_path, "")), "TMPDIR": str(tmp_path)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while len(home.seen) < 4 and time.monotonic() < deadline:  # four calls in flight
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = process.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    assert process.returncode == 130
    assert elapsed < 5  # it waited for every call in flight (20 s) before
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "evalkit: interrupted (SIGINT); nothing was written"


def test_duplicates_are_refused_unless_kept_first(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = fixture.queries[0]
    chunk = fixture.chunks[0].id
    with serving("duplicates", chunk) as (_, url):
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url + "/search")
        with pytest.raises(ExternalSystemError, match=f"hit 1 repeats chunk '{chunk}'"):
            HttpRetriever("svc").search(query, 5)
        kept = HttpRetriever("svc", config=HttpConfig(duplicates="keep-first")).search(query, 5)
    assert [h.chunk_id for h in kept] == [chunk]


def test_a_response_over_the_size_limit_is_refused(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving("large", fixture.chunks[0].id) as (_, url):
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url + "/search")
        system = HttpRetriever("svc", config=HttpConfig(max_response_bytes=1_000_000))
        with pytest.raises(ExternalSystemError, match="larger than 1000000 bytes"):
            system.search(fixture.queries[0], 5)
        assert HttpRetriever("svc").search(fixture.queries[0], 5) == []  # 2 MB < 64 MiB


# --- hostile bodies (issue #49): compression bombs, large and deep responses ---------------------


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def peak_of_search(system: HttpRetriever, query: Any, k: int) -> tuple[Any, int]:
    """(the hits or the ExternalSystemError, tracemalloc's peak in bytes during the search)."""
    tracemalloc.start()
    try:
        try:
            outcome: Any = system.search(query, k)
        except ExternalSystemError as error:
            outcome = error
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, peak


EXPANDED = 64 * 2**20  # a body that expands to 64 MiB


@pytest.fixture(scope="module")
def spaces_json_gz() -> bytes:
    """One gzip layer around valid JSON holding 64 MiB of spaces (about 64 KB on the wire)."""
    return gzipped(b'{"hits": []' + b" " * EXPANDED + b"}")


def test_two_content_encodings_are_refused_without_decompressing(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch, spaces_json_gz: bytes
) -> None:
    bomb = gzipped(spaces_json_gz)  # gzip, gzip: a few hundred bytes hold 64 MiB
    assert len(bomb) < 100_000
    query = fixture.queries[0]
    for encoding in ("gzip, gzip", "gzip, identity, deflate"):
        with raw_serving(bomb, [("Content-Encoding", encoding)]) as url:
            monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
            outcome, peak = peak_of_search(HttpRetriever("svc"), query, 5)
        assert isinstance(outcome, ExternalSystemError)
        assert "encoded 2 times" in str(outcome)
        assert "(not retried)" in str(outcome)
        assert peak < 4 * 2**20, peak  # httpx decoded both layers whole first: 64 MiB and more
    with raw_serving(bomb, [("Content-Encoding", "x-unknown")]) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        with pytest.raises(ExternalSystemError, match="unsupported Content-Encoding"):
            HttpRetriever("svc").search(query, 5)


def test_a_single_gzip_layer_is_decompressed_in_bounded_pieces(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch, spaces_json_gz: bytes
) -> None:
    query = fixture.queries[0]
    limit = HttpConfig(max_response_bytes=2**20)
    with raw_serving(spaces_json_gz, [("Content-Encoding", "gzip")]) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        outcome, peak = peak_of_search(HttpRetriever("svc", config=limit), query, 5)
    assert isinstance(outcome, ExternalSystemError)
    assert "larger than 1048576 bytes" in str(outcome)
    assert peak < 4 * 2**20, peak
    # under the limit, every coding gives the hits of the plain body
    chunk = fixture.chunks[0].id
    plain = json.dumps({"hits": [{"chunk_id": chunk, "score": 2.5}], "pad": " " * 2**20}).encode()
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    codings = {
        "gzip": gzipped(plain),
        "deflate": zlib.compress(plain),
        "identity": plain,
    }
    codings["x-gzip"] = codings["gzip"]
    for name, body in codings.items():
        with raw_serving(body, [("Content-Encoding", name)]) as url:
            monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
            hits = HttpRetriever("svc").search(query, 5)
        assert [(h.chunk_id, h.score) for h in hits] == [(chunk, 2.5)], name
    raw = raw_deflate.compress(plain) + raw_deflate.flush()
    with raw_serving(raw, [("Content-Encoding", "deflate")]) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        assert [h.chunk_id for h in HttpRetriever("svc").search(query, 5)] == [chunk]
    with raw_serving(codings["gzip"][:-20], [("Content-Encoding", "gzip")]) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        with pytest.raises(ExternalSystemError, match="gzip data is cut short"):
            HttpRetriever("svc").search(query, 5)


@pytest.mark.slow
def test_a_large_response_costs_memory_near_k_not_its_size(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50k hits (about 2.8 MB): the body, its parsed tree and 50k Hits took about 60 MB."""
    chunks = [c.id for c in fixture.chunks]
    hits = [{"chunk_id": f"{chunks[0]}-{i}", "score": 1.0 / (i + 1)} for i in range(50_000)]
    hits[:3] = [{"chunk_id": c, "score": 9.0 - i} for i, c in enumerate(chunks[:3])]
    body = json.dumps({"hits": hits}).encode()
    del hits
    with raw_serving(body, []) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        outcome, peak = peak_of_search(HttpRetriever("svc"), fixture.queries[0], 10)
    assert not isinstance(outcome, Exception), outcome
    assert [h.chunk_id for h in outcome][:3] == chunks[:3]
    assert len(outcome) == 10
    assert peak < 2**20, peak  # well below the body (2.8 MB), let alone its parsed tree


def test_deep_nesting_and_bad_numbers_in_a_response(
    fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = fixture.chunks[0].id
    cases = {
        b'{"hits": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}": "nested more than 64 levels",
        b'{"hits": [{"chunk_id": "%s", "score": 1%s}]}'
        % (chunk.encode(), b"0" * 400): "integer outside the 64-bit range (hit 0)",
        b'{"hits": [{"chunk_id": "%s", "score": 1e400}]}'
        % chunk.encode(): "a number outside the range of a double (hit 0)",
    }
    for body, problem in cases.items():
        with raw_serving(body, []) as url:
            monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
            with pytest.raises(ExternalSystemError) as caught:
                HttpRetriever("svc").search(fixture.queries[0], 5)
        assert problem in str(caught.value)
        assert "OverflowError" not in str(caught.value)


# --- TLS (issue #49): verification failures say so and are not retried; ca_bundle, SSL_CERT_FILE -


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A folder with cert.pem and key.pem: a self-signed certificate for IP 127.0.0.1, made
    now by the openssl command line."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command line is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
            "-subj", "/CN=evalkit-test", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return folder


@contextlib.contextmanager
def tls_serving(folder: pathlib.Path, chunk: str) -> Iterator[tuple[str, list[int]]]:
    """An https service on 127.0.0.1 answering one hit; yields its URL and a list counting the
    connections it accepted."""
    accepted: list[int] = []
    body = json.dumps({"hits": [{"chunk_id": chunk, "score": 1.0}]}).encode()
    handler = type("Tls", (RawService,), {"body": body, "headers_out": []})

    class Server(ThreadingHTTPServer):
        def get_request(self) -> Any:
            accepted.append(1)
            return super().get_request()

    server = Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/search", accepted
    finally:
        server.shutdown()
        server.server_close()


def test_tls_verification(
    fixture: Fixture,
    self_signed: pathlib.Path,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    query, chunk = fixture.queries[0], fixture.chunks[0].id
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with tls_serving(self_signed, chunk) as (url, accepted):
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        with pytest.raises(ExternalSystemError) as caught:
            HttpRetriever("svc", config=HttpConfig(retries=2, backoff_s=0.0)).search(query, 5)
        message = str(caught.value)
        assert "certificate verification failed (self-signed)" in message
        assert "(not retried)" in message
        assert "127.0.0.1" not in message
        assert len(accepted) == 1  # one attempt: it was retried 3 times, as a network error
        # the environment's CA file is honoured
        monkeypatch.setenv("SSL_CERT_FILE", str(self_signed / "cert.pem"))
        assert [h.chunk_id for h in HttpRetriever("svc").search(query, 5)] == [chunk]
        monkeypatch.delenv("SSL_CERT_FILE")
        # ca_bundle, relative to the config's folder
        shutil.copy(self_signed / "cert.pem", tmp_path / "service-ca.pem")
        (tmp_path / "svc.yaml").write_text("ca_bundle: service-ca.pem\n", encoding="utf-8")
        monkeypatch.setenv("EVALKIT_HTTP_SVC_CONFIG", str(tmp_path / "svc.yaml"))
        system = HttpRetriever("svc")
        assert [h.chunk_id for h in system.search(query, 5)] == [chunk]
        without = HttpRetriever("svc", config=HttpConfig())
        assert system.definition() == without.definition()  # trust is not part of the hash
    (tmp_path / "svc.yaml").write_text("ca_bundle: not-a-cert.pem\n", encoding="utf-8")
    (tmp_path / "not-a-cert.pem").write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match="ca_bundle holds no usable PEM certificate") as bad:
        HttpRetriever("svc")
    assert "not-a-cert" not in str(bad.value)
    assert str(tmp_path) not in str(bad.value)


# --- Ctrl-C while a connect or a TLS handshake stalls (issue #49) -------------------------------


@contextlib.contextmanager
def stalled_listener(kind: str) -> Iterator[str]:
    """``blackhole``: a listener whose accept queue is full, so a connect waits for an answer
    that never comes; ``handshake``: a listener that accepts and then says nothing (a TLS
    handshake waits). Both on 127.0.0.1, closed at the end."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()
    if kind == "blackhole":
        for _ in range(8):  # fill the accept queue: later SYNs are dropped
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            held.append(filler)
        time.sleep(0.2)
    else:
        listener.settimeout(0.1)

        def accept() -> None:
            while not stop.is_set():
                with contextlib.suppress(OSError):
                    held.append(listener.accept()[0])

        threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"{'https' if kind == 'handshake' else 'http'}://127.0.0.1:{port}/search"
    finally:
        stop.set()
        for sock in held:
            sock.close()
        listener.close()


@pytest.mark.parametrize("kind", ["blackhole", "handshake"])
def test_a_signal_stops_a_stalled_connect_and_handshake_within_1_s(
    kind: str, fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four calls stall in connect (or in the TLS handshake); SIGINT's flag ends all four
    within 1 s (the connect budget, 10 s, bounded them before: 6-8 s)."""
    import evalkit.systems.http as http_module

    flag = threading.Event()
    monkeypatch.setattr(http_module, "cancelled", flag.is_set)
    ended: list[float] = []
    errors: list[str] = []
    with stalled_listener(kind) as url:
        monkeypatch.setenv("EVALKIT_HTTP_SVC_URL", url)
        system = HttpRetriever("svc", config=HttpConfig(connect_timeout_s=10, timeout_s=30))

        def call(query: Any) -> None:
            try:
                system.search(query, 5)
            except ExternalSystemError as error:
                errors.append(str(error))
            ended.append(time.monotonic())

        threads = [threading.Thread(target=call, args=(q,)) for q in fixture.queries[:4]]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        flag.set()
        set_at = time.monotonic()
        for thread in threads:
            thread.join(timeout=15)
        system.close()
    assert len(ended) == 4
    assert max(ended) - set_at < 1.0, max(ended) - set_at
    assert all(message.endswith("stopped by a signal") for message in errors), errors
