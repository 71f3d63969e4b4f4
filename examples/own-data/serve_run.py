"""A stand-in retrieval service for the README: serves a run file over HTTP on 127.0.0.1.

It speaks evalkit's default ``http:`` protocol: ``POST`` of ``{"query", "k", "language",
"query_id"}`` answered with ``{"hits": [{"chunk_id", "score"}, ...]}``. Your own service
replaces it; only the URL in ``EVALKIT_HTTP_<NAME>_URL`` changes.

    python examples/own-data/serve_run.py examples/own-data/my-system.trec --port 8765
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from evalkit.systems.external import read_run_hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="TREC or JSONL run file to serve")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    rankings = read_run_hits(args.run)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            hits = rankings.get(str(body["query_id"]), [])[: int(body["k"])]
            data = json.dumps({"hits": [{"chunk_id": c, "score": s} for c, s in hits]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    with ThreadingHTTPServer(("127.0.0.1", args.port), Handler) as server:
        print(f"serving {len(rankings)} queries on port {server.server_address[1]}", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
