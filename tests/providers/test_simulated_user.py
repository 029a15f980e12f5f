"""promptfoo's simulated user: conversations held with the agent under test, as one run each.

Each test writes a project the way a user would (their agent file, a user provider of
their own or the scripted user, a suite) and runs it through the library or the command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import ClassVar

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

# An agent of the user's own: it echoes what it was told, calls a tool when asked to,
# hands over when asked for a person, and reports a session id when `session` is in vars.
AGENT = """\
import json

def call_api(prompt, options, context):
    messages = json.loads(prompt)
    last = messages[-1]["content"]
    steps = []
    if "person" in last:
        steps.append({"kind": "tool", "name": "transfer_to_human", "arguments": {}})
    if "lookup" in last:
        steps.append({"kind": "tool", "name": "lookup", "arguments": {"q": last}})
    if "explode" in last:
        return {"error": "the agent broke down"}
    reply = {
        "output": f"seen {len(messages)}: {last}",
        "trajectory": steps,
        "tokenUsage": {"prompt": 10, "completion": 2},
        "cost": 0.001,
    }
    if context["vars"].get("session"):
        reply["sessionId"] = "s-1"
    return reply
"""


def _suite(user: str, tests: str, extra: str = "") -> str:
    return f"""\
prompts: ["You are a helpful agent for {{{{topic}}}}."]
providers: [file://agent.py]
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
{extra}      provider:
{user}
tests:
{tests}"""


SCRIPTED = """\
        id: evals:scripted-user
        config:
          opening: "{{opening}}"
          responses: ["second message", "third message"]
          otherwise: "bye ###STOP###"
"""


def _run(path: Path, **options):
    result = run_evaluation(
        load_suite(path), RunOptions(use_store=False, progress=False, **options)
    )
    return sorted(result.records, key=lambda r: (r.case_index, r.key.repeat))


def _user_messages(record) -> list[str]:
    return [m["content"] for m in record.response.metadata["messages"] if m["role"] == "user"]


def test_the_user_ends_the_conversation_with_the_stop_signal(write_suite):
    path = write_suite(
        _suite(SCRIPTED, "  - vars: {topic: shoes, opening: hello}\n", "      maxTurns: 10\n"),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    assert record.status == "pass"
    assert record.response.stop_reason == "user_ended"
    assert _user_messages(record) == ["hello", "second message", "third message"]
    # promptfoo's transcript: User/Assistant lines separated by ---, the stop message left out
    assert record.response.output == (
        "User: hello\n---\nAssistant: seen 2: hello\n---\n"
        "User: second message\n---\nAssistant: seen 4: second message\n---\n"
        "User: third message\n---\nAssistant: seen 6: third message"
    )
    kinds = [(s.kind, s.name, s.metadata.get("turn")) for s in record.response.trajectory]
    assert kinds == [
        ("message", "user", 1),
        ("message", "assistant", 1),
        ("message", "user", 2),
        ("message", "assistant", 2),
        ("message", "user", 3),
        ("message", "assistant", 3),
        ("message", "user", 4),
    ]
    assert record.response.trajectory[-1].metadata["ends"] is True
    # the agent's usage and cost over its three turns; the conversation's summary
    assert record.response.token_usage == {"prompt": 30, "completion": 6, "total": 36}
    assert record.response.cost == pytest.approx(0.003)
    assert record.response.metadata["conversation"]["turns"] == 3


def test_max_turns_ends_a_conversation_the_user_never_ends(write_suite):
    user = """\
        id: evals:scripted-user
        config: {otherwise: "and more"}
"""
    path = write_suite(
        _suite(user, "  - vars: {topic: shoes}\n", "      maxTurns: 3\n"), {"agent.py": AGENT}
    )
    (record,) = _run(path)
    assert record.response.stop_reason == "max_turns"
    assert _user_messages(record) == ["and more"] * 3
    assert record.response.metadata["conversation"]["turns"] == 3


def test_zero_turns_holds_no_conversation(write_suite):
    path = write_suite(
        _suite(SCRIPTED, "  - vars: {topic: shoes, opening: hi}\n", "      maxTurns: 0\n"),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    assert record.response.output == ""
    assert record.response.stop_reason == "max_turns"


def test_the_agent_hands_over_with_a_handoff_tool(write_suite):
    path = write_suite(
        _suite(
            SCRIPTED,
            "  - vars: {topic: shoes, opening: I want a person}\n",
            "      maxTurns: 5\n      handoffTools: [transfer_to_*]\n",
        ),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    assert record.response.stop_reason == "handoff"
    assert _user_messages(record) == ["I want a person"]
    tool = next(s for s in record.response.trajectory if s.kind == "tool")
    assert (tool.name, tool.metadata["turn"]) == ("transfer_to_human", 1)


def test_a_custom_stop_signal_and_the_scripted_users_rules(write_suite):
    user = """\
        id: evals:scripted-user
        config:
          opening: "lookup my order"
          rules:
            - {when: "lookup", say: "thanks, DONE", times: 1}
          otherwise: "still here"
"""
    path = write_suite(
        _suite(user, "  - vars: {topic: shoes}\n", "      stopSignal: DONE\n"),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    assert record.response.stop_reason == "user_ended"
    assert _user_messages(record) == ["lookup my order"]


def test_initial_messages_from_a_var_file_start_the_conversation(write_suite):
    history = json.dumps(
        [
            {"role": "user", "content": "I picked {{item}}"},
            {"role": "assistant", "content": "How would you like to pay?"},
            {"role": "user", "content": "By card"},
            {"role": "bogus", "content": "left out"},
        ]
    )
    path = write_suite(
        _suite(
            SCRIPTED,
            "  - vars: {topic: shoes, opening: unused, item: boots, "
            "initialMessages: 'file://history.json'}\n",
            "      maxTurns: 1\n",
        ),
        {"agent.py": AGENT, "history.json": history},
    )
    (record,) = _run(path)
    messages = record.response.metadata["messages"]
    # the history ends with the user: the agent answers it before the simulated user talks
    assert [m["content"] for m in messages[:4]] == [
        "I picked boots",
        "How would you like to pay?",
        "By card",
        "seen 4: By card",
    ]
    # one new turn after the given ones, as promptfoo counts maxTurns
    assert _user_messages(record)[-1] == "second message"
    given = [s for s in record.response.trajectory if s.metadata.get("initial")]
    assert len(given) == 3


def test_stateful_conversations_send_the_latest_message_once_a_session_exists(write_suite):
    path = write_suite(
        _suite(
            SCRIPTED,
            "  - vars: {topic: shoes, opening: hi, session: true}\n",
            "      maxTurns: 3\n      stateful: true\n",
        ),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    answers = [m["content"] for m in record.response.metadata["messages"] if m["role"] != "user"]
    # the first turn carries the system prompt and the message; later ones the message alone
    assert answers == ["seen 2: hi", "seen 1: second message", "seen 1: third message"]
    assert record.response.metadata["sessionId"] == "s-1"


def test_a_python_user_sees_its_instructions_and_the_flipped_transcript(write_suite):
    user_py = """\
import json

def call_api(prompt, options, context):
    messages = json.loads(prompt)
    seen = [m["role"] for m in messages]
    if len(messages) > 3:
        return {"output": "###STOP###"}
    return {"output": f"{context['vars']['instructions']}|{context['seed']}|{seen}"}
"""
    user = "        id: file://user.py\n"
    path = write_suite(
        _suite(user, "  - vars: {topic: shoes}\n", "      instructions: 'buy {{topic}}'\n"),
        {"agent.py": AGENT, "user.py": user_py},
    )
    (record,) = _run(path)
    first, second = _user_messages(record)
    instructions, seed, roles = first.split("|")
    assert instructions == "buy shoes"
    assert int(seed) == record.seed  # the user gets the run's seed
    assert roles == "['system']"
    # the agent's answers reach the user as the user's input, and the user's as its own
    assert second.split("|")[2] == "['system', 'assistant', 'user']"
    assert "buy shoes" in record.response.metadata["conversation"]["userPrompt"]


def test_a_failed_turn_is_an_error_row_that_keeps_the_conversation(write_suite):
    user = """\
        id: evals:scripted-user
        config:
          opening: "hello"
          responses: ["explode"]
"""
    path = write_suite(_suite(user, "  - vars: {topic: shoes}\n"), {"agent.py": AGENT})
    (record,) = _run(path)
    assert record.status == "error"
    assert "the agent broke down" in record.error
    assert [s.kind for s in record.response.trajectory] == ["message", "message", "message"]


def test_the_users_alternatives_follow_the_runs_seed(write_suite):
    user = """\
        id: evals:scripted-user
        config:
          opening: ["a", "b", "c", "d", "e", "f"]
          otherwise: "###STOP###"
"""
    path = write_suite(
        _suite(user, "  - vars: {topic: shoes}\n") + "evaluateOptions: {repeat: 12}\n",
        {"agent.py": AGENT},
    )
    first = [_user_messages(r) for r in _run(path)]
    again = [_user_messages(r) for r in _run(path)]
    assert first == again  # a repeat replays exactly
    assert len({tuple(m) for m in first}) > 1  # the repeats differ
    other = [_user_messages(r) for r in _run(path, seed=7)]
    assert other != first  # another --seed draws other conversations


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("      maxTurn: 3\n", "did you mean 'maxTurns'"),
        ("      maxTurns: -1\n", "maxTurns must be a whole number >= 0"),
        ("      stateful: yes please\n", "stateful must be true or false"),
        ("      handoffTools: [1]\n", "handoffTools must be a tool name"),
    ],
)
def test_a_bad_configuration_stops_the_suite_before_any_run(
    write_suite, suite_error, config, message
):
    path = write_suite(
        _suite(SCRIPTED, "  - vars: {topic: shoes, opening: hi}\n", config), {"agent.py": AGENT}
    )
    error = suite_error(path)
    assert message in str(error)


def test_the_scripted_users_own_mistakes_are_refused(write_suite, suite_error):
    user = """\
        id: evals:scripted-user
        config:
          rules: [{when: "(unclosed", say: hi}]
"""
    path = write_suite(_suite(user, "  - vars: {topic: shoes}\n"), {"agent.py": AGENT})
    assert "invalid regular expression" in str(suite_error(path))


def test_a_simulated_user_is_not_an_agent_under_test(write_suite, suite_error):
    path = write_suite(
        """\
        prompts: [hi]
        providers: [promptfoo:simulated-user]
        tests: [{vars: {}}]
        """
    )
    error = suite_error(path)
    assert "not an agent under test" in str(error)
    assert error.line == 2
    assert "defaultTest.provider" in (error.fix or "")


def test_a_missing_user_file_is_an_error_row_naming_the_file(write_suite):
    # promptfoo loads a provider file when it is called: the row errors, the config still runs
    path = write_suite(
        _suite("        id: file://nowhere.py\n", "  - vars: {topic: shoes}\n"),
        {"agent.py": AGENT},
    )
    (record,) = _run(path)
    assert record.status == "error"
    assert "nowhere.py" in (record.error or "")


class _TaskServer(BaseHTTPRequestHandler):
    """promptfoo's remote generation task endpoint, answered locally."""

    bodies: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        said = [m for m in body["history"] if m["role"] == "assistant"]
        result = "###STOP###" if said else f"remote: {body['instructions']}"
        reply = json.dumps({"result": result, "tokenUsage": {"total": 5}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        return


@pytest.mark.slow
def test_without_a_user_provider_the_user_is_promptfoos_hosted_model(write_suite, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TaskServer)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(
            "PROMPTFOO_REMOTE_GENERATION_URL", f"http://127.0.0.1:{server.server_port}/task"
        )
        path = write_suite(
            """\
            prompts: ["You sell {{topic}}."]
            providers: [file://agent.py]
            defaultTest:
              provider: {id: promptfoo:simulated-user, config: {maxTurns: 4}}
            tests:
              - vars: {topic: shoes, instructions: "You want boots"}
            """,
            {"agent.py": AGENT},
        )
        (record,) = _run(path)
    finally:
        server.shutdown()
        server.server_close()
    assert _user_messages(record) == ["remote: You want boots"]
    first, second = _TaskServer.bodies[-2:]
    assert first["task"] == "tau" and first["history"] == []
    assert second["history"] == [
        {"role": "assistant", "content": "remote: You want boots"},
        {"role": "user", "content": "seen 2: remote: You want boots"},
    ]
    monkeypatch.setenv("PROMPTFOO_DISABLE_REMOTE_GENERATION", "true")
    (record,) = _run(path)
    assert record.status == "error"
    assert "Remote generation is disabled" in record.error


@pytest.mark.slow
def test_the_command_runs_a_conversation_suite_piped_to_a_file(write_suite, tmp_path):
    path = write_suite(
        _suite(SCRIPTED, "  - vars: {topic: shoes, opening: hello}\n"), {"agent.py": AGENT}
    )
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "evals", "run", str(path), "--no-store", "-o", "r.json"],
            cwd=tmp_path,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
    assert done.returncode == 0, out.read_text()
    report = json.loads((tmp_path / "r.json").read_text())
    (row,) = report["results"]["results"]
    assert row["response"]["output"].startswith("User: hello\n---\nAssistant: seen 2: hello")
    assert row["response"]["metadata"]["messages"][0] == {"role": "user", "content": "hello"}


class _ChatServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible model playing the user: it keeps each request's messages."""

    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        spoken = sum(m["role"] == "assistant" for m in body["messages"])
        text = "I want boots" if spoken == 0 else "###STOP###"
        reply = {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@pytest.mark.slow
def test_a_model_plays_the_user_from_its_instructions(write_suite):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    Thread(target=server.serve_forever, daemon=True).start()
    user = f"""\
        id: openai:chat:gpt-4o-mini
        config: {{apiBaseUrl: "http://127.0.0.1:{server.server_port}/v1", apiKey: local}}
"""
    try:
        path = write_suite(
            _suite(user, "  - vars: {topic: shoes, instructions: 'You want boots, size 42'}\n"),
            {"agent.py": AGENT},
        )
        (record,) = _run(path)
    finally:
        server.shutdown()
        server.server_close()
    assert record.status == "pass", record.error
    assert _user_messages(record) == ["I want boots"]
    first, second = _ChatServer.requests[-2:]
    assert first["messages"][0]["role"] == "system"
    assert "You want boots, size 42" in first["messages"][0]["content"]
    assert "###STOP###" in first["messages"][0]["content"]
    # the user's own message comes back as the assistant's, the agent's as the user's
    assert [m["role"] for m in second["messages"]] == ["system", "assistant", "user"]
    # the user's tokens are the user's, not the agent's
    assert record.response.metadata["conversation"]["user"]["tokenUsage"]["total"] == 20
    assert record.response.token_usage["total"] == 12


def test_an_agent_that_raises_mid_conversation_keeps_what_it_did(write_suite):
    agent = AGENT.replace(
        '    if "explode" in last:',
        '    if "crash" in last:\n        raise RuntimeError("the agent crashed")\n'
        '    if "explode" in last:',
    )
    user = """\
        id: evals:scripted-user
        config:
          opening: "lookup my order"
          responses: ["crash now"]
"""
    path = write_suite(_suite(user, "  - vars: {topic: shoes}\n"), {"agent.py": agent})
    (record,) = _run(path)
    assert record.status == "error"
    assert record.error == "turn 2: agent raised RuntimeError: the agent crashed"
    # the first turn's tool call is still there, for the policy and the reports
    assert [s.name for s in record.response.trajectory if s.kind == "tool"] == ["lookup"]
