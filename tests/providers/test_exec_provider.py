"""exec: providers: argv contract, JSON provider responses, failures, and killed hangs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from evals.agents.exec_provider import ExecAgent, parse_command, read_script_output
from evals.model.options import RunOptions
from evals.model.suite import ProviderSpec
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

from .helpers import TRACEPARENT, make_context, run

PY = sys.executable

ECHO_JSON = """
import json, os, sys
prompt, options, context = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(json.dumps({
    "output": "echo: " + prompt,
    "tokenUsage": {"prompt": 4, "completion": 2},
    "cost": 0.5,
    "trajectory": [{"kind": "tool", "name": "lookup", "arguments": {"q": prompt}}],
    "metadata": {
        "cwd": os.getcwd(),
        "argc": len(sys.argv),
        "label": options["label"],
        "case": context["evals"]["case"],
        "vars": context["vars"],
        "traceparent": os.environ.get("TRACEPARENT"),
        "otel": os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"),
    },
}))
"""

FAILS = """
import sys
print("partial output")
print("Traceback: database unreachable", file=sys.stderr)
sys.exit(3)
"""

GARBAGE = """
import sys
sys.stdout.buffer.write(b"\\x1b[31mnot json \\xff at all\\x1b[0m\\n")
"""

BAD_PROVIDER_JSON = """
print('{"output": "x", "cost": "lots"}')
"""

HANGS = """
import os, sys, time
with open(sys.argv[0] + ".pid", "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(60)
print("too late")
"""


def _agent(tmp_path: Path, script: str, body: str, **config) -> ExecAgent:
    (tmp_path / script).write_text(body, encoding="utf-8")
    spec = ProviderSpec(id=f"exec: {PY} {script}", label="x", config=config)
    return ExecAgent(spec, tmp_path)


def test_parse_command_honours_quotes():
    assert parse_command("exec: python 'my agent.py' --flag \"a b\"") == [
        "python",
        "my agent.py",
        "--flag",
        "a b",
    ]
    assert parse_command("exec:./run.sh") == ["./run.sh"]


def test_json_stdout_is_a_provider_response(tmp_path):
    agent = _agent(tmp_path, "echo.py", ECHO_JSON)
    context = make_context("hello", city="Lima")
    context.extra["env"] = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    response = run(agent.call("hello", context))
    assert response.error is None
    assert response.output == "echo: hello"
    assert response.token_usage == {"prompt": 4, "completion": 2, "total": 6}
    assert response.cost == 0.5
    assert [(s.kind, s.name, s.arguments) for s in response.trajectory] == [
        ("tool", "lookup", {"q": "hello"})
    ]
    meta = response.metadata
    assert Path(meta["cwd"]).resolve() == tmp_path.resolve()
    assert meta["argc"] == 4
    assert meta["label"] == "x"
    assert meta["case"] == "c1"
    assert meta["vars"] == {"city": "Lima"}
    assert meta["traceparent"] == TRACEPARENT
    assert meta["otel"] == "http://127.0.0.1:4318"


def test_non_zero_exit_is_an_error_with_stderr_tail(tmp_path):
    agent = _agent(tmp_path, "fails.py", FAILS)
    response = run(agent.call("q", make_context()))
    assert response.error is not None
    assert "exited with code 3" in response.error
    assert "database unreachable" in response.error


def test_plain_text_stdout_is_the_output_without_colour_codes(tmp_path):
    agent = _agent(tmp_path, "garbage.py", GARBAGE)
    response = run(agent.call("q", make_context()))
    assert response.error is None
    assert response.output == "not json \ufffd at all"


def test_read_script_output_keeps_non_provider_json_as_text():
    assert read_script_output('{"answer": 42}').output == '{"answer": 42}'
    assert read_script_output("[1, 2]").output == "[1, 2]"
    assert read_script_output('{"error": "boom"}').error == "boom"


@pytest.mark.slow
def test_malformed_provider_json_and_hangs_become_error_rows(write_suite, tmp_path):
    suite_path = write_suite(
        f"""\
        prompts: ['{{{{q}}}}']
        providers:
          - {{id: "exec: {PY} echo.py", label: echo}}
          - {{id: "exec: {PY} bad.py", label: bad}}
          - {{id: "exec: {PY} fails.py", label: fails}}
          - {{id: "exec: {PY} hangs.py", label: hangs}}
        evaluateOptions: {{maxConcurrency: 4, timeoutMs: 1500}}
        tests:
          - vars: {{q: one}}
            assert: [{{type: contains, value: "echo: one"}}]
        """,
        files={
            "echo.py": ECHO_JSON,
            "bad.py": BAD_PROVIDER_JSON,
            "fails.py": FAILS,
            "hangs.py": HANGS,
        },
    )
    result = run_evaluation(load_suite(suite_path), RunOptions(use_store=False, progress=False))
    rows = {r.key.agent: r for r in result.records}
    assert rows["echo"].status == "pass"
    assert (rows["bad"].status, rows["bad"].error_kind) == ("error", "malformed")
    assert "cost must be a number" in rows["bad"].error
    assert (rows["fails"].status, rows["fails"].error_kind) == ("error", "agent_error")
    assert (rows["hangs"].status, rows["hangs"].error_kind) == ("error", "timeout")
    pid = int((tmp_path / "hangs.py.pid").read_text())
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_options_json_carries_the_config(tmp_path):
    script = "import json, sys; print(json.dumps({'output': json.loads(sys.argv[2])['config']}))"
    agent = _agent(tmp_path, "opts.py", script, temperature=0.2)
    response = run(agent.call("q", make_context()))
    assert response.output == {"temperature": 0.2, "basePath": str(tmp_path)}
    assert json.dumps(response.output)
