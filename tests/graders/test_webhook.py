"""The webhook assertion against a local HTTP endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from assertion_kit import run

from evals.graders import webhook

ANSWERS: dict[str, tuple[int, str]] = {
    "/pass": (200, json.dumps({"pass": True})),
    "/fail": (200, json.dumps({"pass": False})),
    "/scored": (200, json.dumps({"pass": True, "score": 0.25, "reason": "a quarter"})),
    "/down": (503, "{}"),
    "/prose": (200, "not json"),
}


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(json.loads(body))
        status, text = ANSWERS[self.path]
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server: Any, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_posts_output_prompt_and_vars(endpoint: Any) -> None:
    grade = run("webhook", {"answer": 42}, _url(endpoint, "/pass"), variables={"city": "Oslo"})
    assert (grade.passed, grade.score, grade.reason) == (True, 1.0, "Assertion passed")
    assert endpoint.bodies[-1] == {
        "output": {"answer": 42},
        "context": {"prompt": "the prompt", "vars": {"city": "Oslo"}},
    }


@pytest.mark.parametrize(
    ("kind", "path", "expected"),
    [
        ("webhook", "/fail", (False, 0.0, "Webhook returned false")),
        ("not-webhook", "/fail", (True, 1.0, "Assertion passed")),
        ("not-webhook", "/pass", (False, 0.0, "Webhook returned true")),
        ("webhook", "/scored", (True, 0.25, "a quarter")),
        ("not-webhook", "/scored", (False, 0.75, "a quarter")),
        ("webhook", "/down", (False, 0.0, "Webhook error: Webhook response status: 503")),
    ],
)
def test_verdicts_as_promptfoo(endpoint: Any, kind: str, path: str, expected: tuple) -> None:
    grade = run(kind, "out", _url(endpoint, path))
    assert (grade.passed, grade.score, grade.reason) == expected


def test_a_body_that_is_not_json_fails(endpoint: Any) -> None:
    grade = run("webhook", "out", _url(endpoint, "/prose"))
    assert not grade.passed and grade.reason.startswith("Webhook error: ")


def test_unreachable_endpoint_fails_after_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(webhook.asyncio, "sleep", no_wait)
    monkeypatch.setenv("PROMPTFOO_REQUEST_BACKOFF_MS", "100")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    grade = run("webhook", "out", f"http://127.0.0.1:{port}/gone")
    assert not grade.passed
    assert grade.reason.startswith("Webhook error: Request failed after 4 retries: ConnectError")
    assert len(waits) == 4
    for attempt, wait in enumerate(waits):
        assert 0.1 * 2**attempt <= wait <= 1.1 * 2**attempt


def test_a_missing_url_is_a_grader_error() -> None:
    grade = run("webhook", "out")
    assert grade.errored and "must have a URL value" in grade.reason
