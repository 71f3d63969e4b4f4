"""A service on 127.0.0.1 that answers every POST with fixed bytes and headers, as they are
(tests/test_http_faults.py and benchmarks/bench_http_body.py: compression bombs, large and deep
bodies). Benchmarks import it with ``tests/`` put on ``sys.path``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

__all__ = ["RawService", "raw_serving"]


class RawService(BaseHTTPRequestHandler):
    """Answers every request with ``body`` and ``headers_out`` as they are."""

    body: ClassVar[bytes] = b""
    headers_out: ClassVar[list[tuple[str, str]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        for name, value in self.headers_out:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(self.body)


@contextlib.contextmanager
def raw_serving(
    body: bytes, headers: list[tuple[str, str]], path: str = "/search"
) -> Iterator[str]:
    """A threaded :class:`RawService` answering ``body`` with ``headers``; yields its URL
    (``http://127.0.0.1:<port>`` + ``path``) and stops it on exit."""
    handler = type("Raw", (RawService,), {"body": body, "headers_out": headers})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()
