"""A local OpenAI-compatible judge for tests: deterministic answers that depend on the request.

`/v1/chat/completions` recognizes each default grading prompt and answers from its inputs
(a rubric passes when the output contains the rubric's last word, factuality compares the
answers as word sets, select-best names the first text holding the criteria's last word with
the same case, and so on); `/v1/embeddings` returns bag-of-words vectors, so texts
sharing words are similar. The model `broken` answers prose without JSON; `down` fails
with HTTP 500. Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 64


def words(text: str) -> list[str]:
    """Lower-case words of a text."""
    return re.findall(r"[a-z0-9]+", text.lower())


def bag_of_words(text: str) -> list[float]:
    """A deterministic embedding: word counts hashed into a fixed number of dimensions."""
    vector = [0.0] * DIMENSIONS
    for word in words(text):
        vector[zlib.crc32(word.encode()) % DIMENSIONS] += 1.0
    return vector


def _between(text: str, start: str, end: str) -> str:
    """The text between the last `start` and the `end` after it (examples come first)."""
    begin = text.rfind(start)
    if begin < 0:
        return ""
    rest = text[begin + len(start) :]
    return rest.split(end, 1)[0].strip()


def _last_word(text: str) -> str:
    found = words(text)
    return found[-1] if found else ""


def _rubric(prompt: str) -> dict[str, Any]:
    output, rubric = (
        _between(prompt, "<Output>", "</Output>"),
        _between(prompt, "<Rubric>", "</Rubric>"),
    )
    passed = _last_word(rubric) in words(output)
    return {"reason": f"looked for {_last_word(rubric)!r}", "pass": passed, "score": float(passed)}


def _factuality(prompt: str) -> dict[str, Any]:
    expert = set(words(_between(prompt, "<expert_answer>", "</expert_answer>")))
    submitted = set(words(_between(prompt, "<submitted_answer>", "</submitted_answer>")))
    if expert == submitted:
        category = "C"
    elif expert < submitted:
        category = "B"
    elif submitted < expert:
        category = "A"
    else:
        category = "D"
    return {"category": category, "reason": f"word sets compared: {category}"}


def _closed_qa(prompt: str) -> str:
    submission = _between(prompt, "[Submission]:", "***")
    criterion = _between(prompt, "[Criterion]:", "***")
    verdict = "Y" if _last_word(criterion) in words(submission) else "N"
    return f"The criterion asks for {_last_word(criterion)}.\n{verdict}\n{verdict}"


def _g_eval(prompt: str) -> dict[str, Any]:
    criteria = _between(prompt, "**Evaluation Criteria**", "**Evaluation Steps**")
    reply = _between(prompt, "**Reply**", "**OUTPUT FORMAT**")
    score = 9 if _last_word(criteria) in words(reply) else 2
    return {"score": score, "reason": f"reply checked for {_last_word(criteria)}"}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", text) if s.strip()]


def _context_recall(prompt: str) -> str:
    tail = prompt.rsplit("context:", 1)[1]
    context, answer = tail.split("\nanswer:", 1)
    answer = answer.split("\nclassification:", 1)[0]
    known = set(words(context))
    lines = []
    for index, sentence in enumerate(_sentences(answer), start=1):
        tag = "[Attributed]" if set(words(sentence)) <= known else "[Not Attributed]"
        lines.append(f"{index}. {sentence} So {tag}")
    return "\n".join(lines)


def _context_relevance(prompt: str) -> str:
    query = set(words(_between(prompt, "query:", "\ncontext:")))
    context = prompt.split("\ncontext:", 1)[1].split("\ncandidate sentences:", 1)[0]
    picked = [s for s in _sentences(context) if len(query & set(words(s))) >= 2]
    return "\n".join(picked) if picked else "Insufficient Information"


def _statements(prompt: str) -> str:
    answer = prompt.rsplit("answer:", 1)[1].split("statements:", 1)[0]
    return "\n".join(_sentences(answer))


def _verdicts(prompt: str) -> str:
    tail = prompt.rsplit("context:\n", 1)[1]
    context, statements = tail.split("\nstatements:\n", 1)
    statements = statements.rsplit("\nAnswer:", 1)[0]
    known = set(words(context))
    verdicts = [
        "Yes" if set(words(s)) <= known else "No" for s in statements.split("\n") if s.strip()
    ]
    return "Final verdict for each statement in order: " + ". ".join(verdicts) + "."


def _goal(prompt: str) -> dict[str, Any]:
    trajectory = _between(prompt, "<Trajectory>", "</Trajectory>")
    passed = '"type": "tool"' in trajectory
    return {"reason": "used a tool" if passed else "no tool used", "pass": passed, "score": 0.8}


def _select_best(prompt: str) -> str:
    """The index of the first text holding the criteria's last word, case-sensitively."""
    criteria = _between(prompt, "best fits the following criteria:", "\n")
    wanted = re.findall(r"\w+", criteria)[-1:]
    for index, text in re.findall(r'<Text index="(\d+)">\n(.*?)\n</Text>', prompt, re.S):
        if wanted and wanted[0] in re.findall(r"\w+", text):
            return f"Text {index} fits best.\n{index}"
    return "None of the texts fits."


def judge_answer(prompt: str) -> Any:
    """The deterministic answer to one grading prompt (text, or an object to send as JSON)."""
    if "pieces of text to see which best fits" in prompt:
        return _select_best(prompt)
    if "<Goal>" in prompt:
        return _goal(prompt)
    if "<Rubric>" in prompt:
        return _rubric(prompt)
    if "<expert_answer>" in prompt:
        return _factuality(prompt)
    if "[Criterion]:" in prompt:
        return _closed_qa(prompt)
    if "generate 3-4 concise evaluation steps" in prompt:
        return {"steps": ["Read the reply", "Check the criteria"]}
    if "**Reply**" in prompt:
        return _g_eval(prompt)
    if prompt.startswith("Generate question for the given answer."):
        return prompt.rsplit("Answer:", 1)[1].rsplit("Question:", 1)[0].strip()
    if "classification:" in prompt:
        return _context_recall(prompt)
    if "candidate sentences:" in prompt:
        return _context_relevance(prompt)
    if "Final verdict for each statement in order" in prompt:
        return _verdicts(prompt)
    if prompt.rstrip().endswith("statements:"):
        return _statements(prompt)
    return "I do not recognize this prompt."


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, **body})
        if body.get("model") == "down":
            self._send(500, {"error": {"message": "judge is down", "type": "server_error"}})
        elif self.path.endswith("/embeddings"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                for i, t in enumerate(texts)
            ]
            usage = {"prompt_tokens": 3, "total_tokens": 3}
            self._send(
                200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
            )
        else:
            self._send(200, self._completion(body))

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = "\n".join(str(m.get("content")) for m in body["messages"])
        answer = judge_answer(prompt)
        if body.get("model") == "broken":
            answer = "I think it is fine."
        elif not isinstance(answer, str):
            text = json.dumps(answer)
            answer = text if body.get("response_format") else f"Verdict:\n```json\n{text}\n```"
        return {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": answer},
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


class JudgeServer(ThreadingHTTPServer):
    """The HTTP server with the request log."""

    requests: list[dict[str, Any]]


@contextmanager
def judge_server() -> Iterator[JudgeServer]:
    """Start the judge on 127.0.0.1 (a free port) for the duration of the block."""
    server = JudgeServer(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def base_url(server: JudgeServer) -> str:
    """The OpenAI base URL of a running judge server."""
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
