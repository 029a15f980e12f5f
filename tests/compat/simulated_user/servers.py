"""Local stand-ins for the services the simulated-user configs call, for goldens and tests.

One HTTP server answers both:

- `/v1/chat/completions` (OpenAI-compatible): a grading prompt gets the local judge's answer
  (tests/graders/judge_server.py); anything else is the agent under test, which answers
  "Agent heard: <the last user message>";
- `/task` (promptfoo's remote generation): the simulated user, answered by
  `_shared/user.py` from the instructions and the transcript promptfoo sends.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.graders.judge_server import judge_answer

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("compat_user", HERE / "_shared" / "user.py")
assert _spec is not None and _spec.loader is not None
USER = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(USER)
UNRECOGNIZED = "I do not recognize this prompt."


def agent_reply(messages: list[dict[str, Any]]) -> str:
    """The agent under test: it repeats the last user message."""
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    return f"Agent heard: {users[-1] if users else ''}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return

    def _send(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.endswith("/task"):
            text = USER.reply(body.get("instructions"), body.get("history") or [])
            self._send({"result": text, "tokenUsage": {"total": 1}})
            return
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content")) for m in messages)
        answer = judge_answer(prompt)
        if answer == UNRECOGNIZED:
            answer = agent_reply(messages)
        elif not isinstance(answer, str):
            answer = json.dumps(answer)
        self._send(
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )


@contextmanager
def services() -> Iterator[str]:
    """Serve both on 127.0.0.1; yields the base URL (`.../v1` for OpenAI, `.../task`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def environment(base: str) -> dict[str, str]:
    """What both tools run with: the agent and judge at `base`, promptfoo's user there too."""
    return {
        "OPENAI_BASE_URL": f"{base}/v1",
        "OPENAI_API_KEY": "local",
        "PROMPTFOO_REMOTE_GENERATION_URL": f"{base}/task",
    }
