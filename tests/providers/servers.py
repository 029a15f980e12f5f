"""A tiny HTTP server on 127.0.0.1 for provider tests: routes are plain functions."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class Reply:
    """What a route answers: a status, a body (JSON when not bytes/str) and headers."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[Request], Reply]


@dataclass
class Server:
    """A running server: its base URL and the requests it received."""

    url: str
    requests: list[Request]


@contextmanager
def serve(routes: dict[str, Route]) -> Iterator[Server]:
    """Serve `routes` (keyed by path) on an ephemeral 127.0.0.1 port for the block."""
    received: list[Request] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            parts = urlsplit(self.path)
            request = Request(
                method=self.command,
                path=parts.path,
                query=parse_qs(parts.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            route = routes.get(parts.path)
            if route is None:
                reply = Reply({"error": "no route"}, status=404)
            else:
                received.append(request)
                reply = route(request)
            if isinstance(reply.body, bytes):
                payload, kind = reply.body, "application/octet-stream"
            elif isinstance(reply.body, str):
                payload, kind = reply.body.encode(), "text/plain"
            else:
                payload, kind = json.dumps(reply.body).encode(), "application/json"
            self.send_response(reply.status)
            self.send_header("content-type", reply.headers.get("content-type", kind))
            self.send_header("content-length", str(len(payload)))
            for key, value in reply.headers.items():
                if key != "content-type":
                    self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = _handle

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(url=f"http://127.0.0.1:{httpd.server_port}", requests=received)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
