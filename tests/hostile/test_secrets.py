"""Planted keys never leave the process: store, every report format, traces, terminal.

One evaluation plants secrets in every place a key lives: the environment (read by the
suite through `{{ env.X }}` in a prompt, a URL query, headers), literal keys in provider
configs, SDK keys from the environment, servers that echo the key back in their error
bodies, an agent whose error message and output quote its keys, and a command whose
stderr does. The test first checks that the secrets really reached their destinations
(otherwise a clean grep would prove nothing), then greps each artifact.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hostile.harness import (
    ALL_SECRETS,
    LITERAL_SECRETS,
    SECRETS,
    Case,
    Correct,
    Workspace,
    make_workspace,
    run_evals,
    workspace_at,
)
from tests.hostile.server import RECEIVED

# A short secret (under the 8 characters from which unreferenced known values are masked)
# that the suite reads through `{{ env.X }}`: masked all the same. Planted here only, not
# in every case's environment.
SHORT_SECRETS = {"HOSTILE_PASSWD": "Zq9k#w"}

SUITE = """\
description: secrets everywhere
prompts: ['Answer {{q}} for account {{ env.HOSTILE_PLAIN_SECRET }} pin {{ env.HOSTILE_PASSWD }}']
providers:
  - id: https
    label: http-agent
    config:
      url: '@HTTP@/echo-error?api_key={{ env.HOSTILE_PLAIN_SECRET }}&user=alice'
      method: POST
      headers:
        Authorization: 'Bearer {{ env.HOSTILE_TOKEN }}'
        X-Api-Key: '{{ env.HOSTILE_API_KEY }}'
      body: {input: '{{prompt}}'}
  - id: openai:chat:gpt-4o-mini
    label: openai-agent
    config: {apiBaseUrl: '@HTTP@/v1', apiKey: sk-hostile-literal-6e5d4c3b2a19087f, maxRetries: 0}
  - id: anthropic:messages:claude-3-5-haiku-latest
    label: anthropic-agent
    config: {apiBaseUrl: '@HTTP@', maxRetries: 0}
  - id: file://leaky.py:fails
    label: leaky-error
    config: {password: literal-hostile-password-4b3a2918}
  - id: file://leaky.py:answers
    label: leaky-output
  - id: 'exec: python3 leaky_command.py'
    label: leaky-command
tests:
  - vars: {q: hello}
gates: {}
"""

LEAKY = """\
import os


def fails(prompt, options, context):
    key = os.environ["HOSTILE_API_KEY"]
    password = options["config"]["password"]
    return {"error": f"upstream refused key {key} (password {password}) for {prompt}"}


def answers(prompt, options, context):
    short = os.environ["HOSTILE_PASSWD"]
    return {"output": f"my key is {os.environ['HOSTILE_API_KEY']}, pin {short}; {prompt}"}
"""

LEAKY_COMMAND = """\
import os, sys
sys.stderr.write(f"auth failed for token {os.environ['HOSTILE_TOKEN']}\\n")
sys.exit(1)
"""

CACHE = "responses.db"
REPORTS = (
    "report.json",
    "report.jsonl",
    "report.csv",
    "report.yaml",
    "report.md",
    "report.xml",
    "report.html",
)


@dataclass
class Scenario:
    """The evaluation's workspace, exit code, streams, and what the endpoint received."""

    ws: Workspace
    code: int
    stdout: str
    stderr: str
    received: list[dict]


def _run_scenario(root: Path, hostile_url: str) -> dict:
    case = Case(
        "secrets",
        "secrets",
        {"suite.yaml": SUITE, "leaky.py": LEAKY, "leaky_command.py": LEAKY_COMMAND},
        Correct("secrets stay home"),
    )
    ws = make_workspace(root, case, hostile_url)
    argv = ["run", "suite.yaml", "--store", str(ws.store), "--trace", "--no-progress"]
    argv += ["--cache", str(ws.case / CACHE)]
    for name in REPORTS:
        argv += ["-o", name]
    already = len(RECEIVED)
    done = run_evals(ws, *argv, env=SHORT_SECRETS)
    return {
        "root": str(root),
        "inputs": sorted(str(p) for p in ws.inputs),
        "code": done.returncode,
        "stdout": done.stdout.decode(),
        "stderr": done.stderr.decode(),
        "received": RECEIVED[already:],
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, hostile_url: str) -> Scenario:
    """Run the secrets suite once per test session, as the `evals` command, with traces.

    Under pytest-xdist every worker would run it again; the first worker runs it under a
    file lock in the session's shared temporary directory and the others read its result.
    """
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent / f"secrets-{run_id}" if run_id else base / "secrets"
    shared.mkdir(parents=True, exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result_file = shared / "result.json"
        if not result_file.exists():
            result = _run_scenario(shared / "run", hostile_url)
            result_file.write_text(json.dumps(result), encoding="utf-8")
        result = json.loads(result_file.read_text(encoding="utf-8"))
    inputs = {Path(p) for p in result["inputs"]}
    ws = workspace_at(Path(result["root"]), hostile_url, inputs)
    return Scenario(ws, result["code"], result["stdout"], result["stderr"], result["received"])


def _stored(scenario: Scenario, sql: str) -> list:
    import sqlite3

    connection = sqlite3.connect(scenario.ws.store)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def _found(text: str) -> list[str]:
    return [s for s in (*ALL_SECRETS, *SHORT_SECRETS.values()) if s in text]


def test_the_secrets_reached_their_destinations(scenario: Scenario) -> None:
    """Not vacuous: the keys were sent, echoed back, and the runs are error rows."""
    assert scenario.code in (0, 1), scenario.stderr[-2000:]
    sent = json.dumps(scenario.received)
    for secret in (
        SECRETS["HOSTILE_PLAIN_SECRET"],
        SECRETS["HOSTILE_TOKEN"],
        SECRETS["HOSTILE_API_KEY"],
        SECRETS["ANTHROPIC_API_KEY"],
        LITERAL_SECRETS[0],
    ):
        assert secret in sent, f"{secret} never reached the server"
    rows = dict(_stored(scenario, "SELECT agent, status FROM runs"))
    assert rows == {
        "http-agent": "error",
        "openai-agent": "error",
        "anthropic-agent": "error",
        "leaky-error": "error",
        "leaky-output": "pass",
        "leaky-command": "error",
    }


def test_error_messages_keep_their_meaning(scenario: Scenario) -> None:
    """Masking removes the key, not the message around it."""
    errors = dict(_stored(scenario, "SELECT agent, error FROM runs WHERE status = 'error'"))
    assert "401" in errors["http-agent"] and "invalid credentials" in errors["http-agent"]
    assert "Incorrect API key provided" in errors["openai-agent"]
    assert "upstream refused key" in errors["leaky-error"]
    assert "auth failed for token" in errors["leaky-command"]


def test_store_is_clean(scenario: Scenario) -> None:
    store = b"".join(p.read_bytes() for p in scenario.ws.case.glob("store.db*"))
    leaks = [s for s in (*ALL_SECRETS, *SHORT_SECRETS.values()) if s.encode() in store]
    assert not leaks, f"secrets in the store: {leaks}"


def test_short_referenced_secret_reached_the_agent_and_is_masked(scenario: Scenario) -> None:
    """Not vacuous: the short value was in the prompt the echo server received."""
    assert SHORT_SECRETS["HOSTILE_PASSWD"] in json.dumps(scenario.received)
    prompts = " ".join(str(p) for (p,) in _stored(scenario, "SELECT prompt FROM runs"))
    assert "pin [REDACTED]" in prompts


def test_response_cache_is_clean(scenario: Scenario) -> None:
    """The opt-in cache holds the leaky agent's answer, with its keys masked."""
    import sqlite3

    files = sorted(scenario.ws.case.glob(CACHE + "*"))
    connection = sqlite3.connect(scenario.ws.case / CACHE)
    try:
        (rows,) = connection.execute("SELECT count(*) FROM responses").fetchone()
    finally:
        connection.close()
    assert rows >= 1, "nothing was cached: the check below would prove nothing"
    data = b"".join(p.read_bytes() for p in files).decode("utf-8", "replace")
    assert "my key is" in data, "the leaky answer is not in the cache"
    assert not _found(data), _found(data)


def test_trace_spans_are_clean(scenario: Scenario) -> None:
    traces = "\n".join(str(t) for (t,) in _stored(scenario, "SELECT trace FROM runs"))
    assert "traceId" in traces or "trace_id" in traces or "spans" in traces, "no trace stored"
    assert not _found(traces), _found(traces)


@pytest.mark.parametrize("name", REPORTS)
def test_report_is_clean(scenario: Scenario, name: str) -> None:
    report = (scenario.ws.case / name).read_text(encoding="utf-8")
    assert report.strip(), f"{name} is empty"
    assert not _found(report), f"secrets in {name}: {_found(report)}"


def test_terminal_is_clean(scenario: Scenario) -> None:
    assert not _found(scenario.stdout + scenario.stderr), _found(scenario.stdout + scenario.stderr)


def test_no_other_file_holds_a_secret(scenario: Scenario) -> None:
    """Caches, logs or temporary files the harness may have left."""
    known = {scenario.ws.case / n for n in REPORTS} | set(scenario.ws.case.glob("store.db*"))
    others = [
        p
        for p in Path(scenario.ws.root).rglob("*")
        if p.is_file() and p not in known and p.resolve() not in scenario.ws.inputs
    ]
    leaks = {str(p): _found(p.read_bytes().decode("utf-8", "replace")) for p in others}
    assert not {p: s for p, s in leaks.items() if s}, leaks
