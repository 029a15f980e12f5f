"""A hostile HTTP endpoint on 127.0.0.1: garbage, huge and endless replies, echoed keys.

Routes (by path, query ignored):

- `/ok`: a provider response `{"output": "ok"}`.
- `/echo-error`: 401 whose body quotes every request header and the query string, as
  servers that report "invalid key sk-..." do.
- `/v1/chat/completions`, `/v1/messages`: OpenAI / Anthropic style 401 quoting the key.
- `/garbage`: 200 with bytes that are neither UTF-8 nor JSON.
- `/huge`: 200 with an 80 MiB body, streamed.
- `/deep`: 200 with JSON nested 100,000 deep.
- `/nan`: 200 with `{"output": "x", "cost": NaN}`.
- `/negative-cost`: 200 with `{"output": "x", "cost": -5}`.
- `/hang`: never answers (for 30 s).
- `/drip`: sends one byte every half second, for 30 s.
- `/loop`: redirects to itself.
- `/cut`: announces 1000 bytes and closes after 10.
- `/html-500`: 500 with an HTML page.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HUGE_BYTES = 80 << 20
_STALL_S = 30.0

RECEIVED: list[dict[str, Any]] = []
"""Every request the endpoint received (path, query, headers, body), in order."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, document: Any) -> None:
        self._send(status, json.dumps(document).encode())

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        body = self._body()
        parts = urlsplit(self.path)
        path = parts.path
        headers = dict(self.headers.items())
        RECEIVED.append(
            {
                "path": path,
                "query": parts.query,
                "headers": headers,
                "body": body.decode("utf-8", "replace"),
            }
        )
        if path == "/ok":
            self._json(200, {"output": "ok"})
        elif path == "/echo-error":
            quoted = {"received_headers": headers, "query": parts.query, "body": body.decode()}
            self._json(401, {"error": f"invalid credentials: {json.dumps(quoted)}"})
        elif path.startswith("/garbage"):
            self._send(200, b"\xff\xfe\x00\x81garbage\xc3(", "application/octet-stream")
        elif path.endswith("/chat/completions") or path.endswith("/responses"):
            key = headers.get("Authorization", "").removeprefix("Bearer ")
            message = f"Incorrect API key provided: {key}."
            self._json(401, {"error": {"message": message, "type": "invalid_request_error"}})
        elif path.endswith("/messages"):
            key = headers.get("X-Api-Key") or headers.get("x-api-key", "")
            error = {"type": "authentication_error", "message": f"invalid x-api-key {key}"}
            self._json(401, {"type": "error", "error": error})
        elif path == "/huge":
            self._stream_huge()
        elif path == "/deep":
            self._send(200, b"[" * 100_000 + b"]" * 100_000)
        elif path == "/nan":
            self._send(200, b'{"output": "x", "cost": NaN}')
        elif path == "/negative-cost":
            self._json(200, {"output": "x", "cost": -5})
        elif path == "/hang":
            time.sleep(_STALL_S)
            self._json(200, {"output": "too late"})
        elif path == "/drip":
            self._drip()
        elif path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/cut":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"output": ')
            self.close_connection = True
        elif path == "/html-500":
            self._send(
                500, b"<html><body><h1>Internal Server Error</h1></body></html>", "text/html"
            )
        else:
            self._json(404, {"error": f"no route {path}"})

    def _stream_huge(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(_HUGE_BYTES + 14))
        self.end_headers()
        chunk = b"x" * (1 << 20)
        try:
            self.wfile.write(b'{"output": "')
            for _ in range(_HUGE_BYTES >> 20):
                self.wfile.write(chunk)
            self.wfile.write(b'"}')
        except (BrokenPipeError, ConnectionResetError):
            return

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        deadline = time.monotonic() + _STALL_S
        try:
            while time.monotonic() < deadline:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            return


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up mid-reply are expected; nothing is printed about them."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


@contextmanager
def hostile_server() -> Iterator[str]:
    """Serve the hostile routes on an ephemeral port; yields the base URL."""
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
