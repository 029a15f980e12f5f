"""Hostile agents: every BaseException, hangs, busy loops, garbage returns, crashes.

Each agent runs as `agent` next to a passing baseline `good`; its runs must be error rows
of the named kind (or the stated correct result), and the baseline's runs unaffected.
"""

from __future__ import annotations

from tests.hostile.builders import (
    GOOD_AGENT,
    agent_case,
    all_pass,
    both,
    dedent,
    error_row,
    output_is,
    runs_of,
    two_agent_suite,
)
from tests.hostile.harness import LIGHT_REPORTS, REPORTS, Case, Correct, Outcome, UsageError

BASE_EXCEPTIONS = {
    "system-exit-0": "raise SystemExit(0)",
    "system-exit-3": "raise SystemExit(3)",
    "sys-exit-message": "import sys; sys.exit('bye')",
    "keyboard-interrupt": "raise KeyboardInterrupt",
    "generator-exit": "raise GeneratorExit",
    "custom-base-exception": "raise type('Abort', (BaseException,), {})('abort')",
}


def _raising(statement: str, is_async: bool = False) -> str:
    head = "async def" if is_async else "def"
    return f"{head} call_api(prompt, options, context):\n    {statement}\n"


def base_exception_cases() -> list[Case]:
    """Each BaseException from a sync, an async and a worker agent: an `agent_exit` row."""
    cases = []
    for name, statement in BASE_EXCEPTIONS.items():
        for flavour, is_async, worker in (
            ("sync", False, False),
            ("async", True, False),
            ("worker", False, True),
        ):
            cases.append(
                agent_case(
                    f"{name}-{flavour}",
                    _raising(statement, is_async),
                    error_row("agent_exit"),
                    worker=worker,
                    mode="inprocess" if worker else "subprocess",
                )
            )
    cases.append(
        agent_case(
            "cancelled-error-from-agent",
            "import asyncio\n\n\nasync def call_api(prompt, options, context):\n"
            "    raise asyncio.CancelledError\n",
            error_row("agent_exit"),
            mode="subprocess",
        )
    )
    return cases


IMPORT_FAILURES = [
    # promptfoo errors each row of a provider that cannot be loaded; so does evals run
    agent_case(
        "sys-exit-at-import",
        "import sys\nsys.exit(0)\n",
        error_row("agent_error", "SystemExit"),
        mode="subprocess",
    ),
    agent_case(
        "keyboard-interrupt-at-import",
        "raise KeyboardInterrupt\n",
        error_row("agent_error", "KeyboardInterrupt"),
        mode="subprocess",
    ),
    agent_case(
        "worker-sys-exit-at-import",
        "import sys\nsys.exit(0)\n" + GOOD_AGENT,
        error_row("agent_exit", "SystemExit"),
        worker=True,
    ),
    agent_case(
        "worker-import-error",
        "import not_installed_sdk\n" + GOOD_AGENT,
        error_row("agent_error", "not_installed_sdk"),
        worker=True,
    ),
]

HANGS = [
    agent_case(
        "sync-sleep-past-timeout",
        "import time\n\n\ndef call_api(prompt, options, context):\n    time.sleep(30)\n",
        error_row("timeout"),
        timeout_ms=500,
    ),
    agent_case(
        "sync-busy-loop",
        "def call_api(prompt, options, context):\n    while True:\n        pass\n",
        error_row("timeout"),
        timeout_ms=500,
        mode="subprocess",
    ),
    agent_case(
        "async-busy-loop",
        "async def call_api(prompt, options, context):\n    while True:\n        pass\n",
        error_row("timeout"),
        timeout_ms=500,
        mode="subprocess",
        limit_s=6,
    ),
    agent_case(
        "async-blocking-sleep",
        "import time\n\n\nasync def call_api(prompt, options, context):\n    time.sleep(30)\n",
        error_row("timeout"),
        timeout_ms=500,
        mode="subprocess",
        limit_s=6,
    ),
    agent_case(
        "async-await-forever",
        "import asyncio\n\n\nasync def call_api(prompt, options, context):\n"
        "    await asyncio.Event().wait()\n",
        error_row("timeout"),
        timeout_ms=500,
    ),
    agent_case(
        "async-swallows-cancellation",
        "import asyncio\n\n\nasync def call_api(prompt, options, context):\n"
        "    while True:\n        try:\n            await asyncio.sleep(10)\n"
        "        except asyncio.CancelledError:\n            pass\n",
        error_row("timeout"),
        timeout_ms=500,
        mode="subprocess",
        limit_s=6,
    ),
    agent_case(
        "worker-sync-sleep",
        "import time\n\n\ndef call_api(prompt, options, context):\n    time.sleep(30)\n",
        error_row("timeout"),
        worker=True,
        timeout_ms=500,
    ),
    agent_case(
        "worker-async-busy-loop",
        "async def call_api(prompt, options, context):\n    while True:\n        pass\n",
        error_row("timeout"),
        worker=True,
        timeout_ms=500,
    ),
]

# Each return value must be a `malformed` row (limits: 32 MiB, 256 levels; docs/security.md).
GARBAGE = {
    "returns-none": "None",
    "returns-list": "['not', 'a', 'dict']",
    "returns-string": "'just text'",
    "returns-dict-without-output": "{'answer': 'x'}",
    "returns-coroutine-from-sync": "__import__('asyncio').sleep(0)",
    "returns-generator": "(i for i in range(3))",
    "cost-text": "{'output': 'ok', 'cost': 'cheap'}",
    "trajectory-string": "{'output': 'ok', 'trajectory': 'search, then answer'}",
    "trajectory-step-without-name": "{'output': 'ok', 'trajectory': [{'kind': 'tool'}]}",
    "cost-nan": "{'output': 'ok', 'cost': float('nan')}",
    "cost-infinite": "{'output': 'ok', 'cost': float('inf')}",
    "cost-negative": "{'output': 'ok', 'cost': -1.5}",
    "cost-boolean": "{'output': 'ok', 'cost': True}",
    "tokens-negative": "{'output': 'ok', 'tokenUsage': {'prompt': -5, 'completion': 1}}",
    "tokens-nan": "{'output': 'ok', 'tokenUsage': {'prompt': float('nan')}}",
    "tokens-infinite": "{'output': 'ok', 'tokenUsage': {'prompt': float('inf')}}",
    "tokens-beyond-64-bits": "{'output': 'ok', 'tokenUsage': {'prompt': 10**30}}",
    "latency-text": "{'output': 'ok', 'latencyMs': 'fast'}",
    "latency-negative": "{'output': 'ok', 'latencyMs': -20}",
    "output-nan": "{'output': float('nan')}",
    "output-lone-surrogate": "{'output': 'bad \\ud800 text'}",
    "output-set": "{'output': {1, 2, 3}}",
    "output-bytes": "{'output': b'\\xff\\xfe'}",
    "output-object": "{'output': object()}",
    "output-nested-300": "{'output': nest(300)}",
    "output-40-mib": "{'output': 'x' * (40 << 20)}",
    "output-nested-100k": "{'output': nest(100_000)}",
    "output-int-5000-digits": "{'output': 10**5000}",
    "output-self-referencing": "loop()",
    "metadata-nested-100k": "{'output': 'ok', 'metadata': nest(100_000)}",
    "step-cost-nan": (
        "{'output': 'ok', 'trajectory': [{'kind': 'llm', 'name': 'm', 'cost': float('nan')}]}"
    ),
    "tokens-fraction": "{'output': 'ok', 'tokenUsage': {'completion': 2.5}}",
    "output-tuple-holding-infinity": "{'output': ('ok', float('-inf'))}",
    "output-dict-with-tuple-key": "{'output': {('a', 1): 'ok'}}",
    "metadata-int-5000-digits": "{'output': 'ok', 'metadata': {'n': 10**5000}}",
    "trajectory-arguments-nested-100k": (
        "{'output': 'ok', 'trajectory': "
        "[{'kind': 'tool', 'name': 't', 'arguments': {'a': nest(100_000)}}]}"
    ),
}
# Garbage that is expensive to make or may overflow the C stack runs in a subprocess.
HEAVY = ("nested-100k", "40-mib", "5000", "self-referencing")

HELPERS = """\
def nest(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def loop():
    value = {'output': None}
    value['output'] = value
    return value


"""


def _returning(expression: str) -> str:
    return HELPERS + f"def call_api(prompt, options, context):\n    return {expression}\n"


def garbage_cases() -> list[Case]:
    """Garbage returned by in-process and worker agents: `malformed` rows."""
    cases = []
    for name, expression in GARBAGE.items():
        heavy = any(word in name for word in HEAVY)
        cases.append(
            agent_case(
                name,
                _returning(expression),
                error_row("malformed"),
                mode="subprocess" if heavy else "inprocess",
                limit_s=10 if heavy else 20,
                reports=LIGHT_REPORTS if heavy else REPORTS,
            )
        )
    return cases


WORKER_GARBAGE = [
    agent_case(
        "worker-returns-set",
        _returning("{'output': {1, 2}}"),
        error_row("malformed"),
        worker=True,
    ),
    agent_case(
        "worker-returns-70-mib",
        _returning("{'output': 'x' * (70 << 20)}"),
        error_row("malformed"),
        worker=True,
        mode="subprocess",
        reports=LIGHT_REPORTS,
        limit_s=8,
    ),
    agent_case(
        "worker-returns-nested-100k",
        _returning("{'output': nest(100_000)}"),
        error_row("malformed"),
        worker=True,
        mode="subprocess",
        limit_s=8,
    ),
    agent_case(
        "worker-returns-lone-surrogate",
        _returning("{'output': 'bad \\ud800'}"),
        error_row("malformed"),
        worker=True,
        mode="subprocess",
        limit_s=8,
    ),
    agent_case(
        "worker-returns-metadata-nested-100k",
        _returning("{'output': 'ok', 'metadata': {'deep': nest(100_000)}}"),
        error_row("malformed"),
        worker=True,
        mode="subprocess",
        limit_s=8,
    ),
    agent_case(
        "worker-returns-nan-cost",
        _returning("{'output': 'ok', 'cost': float('nan')}"),
        error_row("malformed"),
        worker=True,
    ),
    agent_case(
        "worker-os-exit-0",
        "import os\n\n\ndef call_api(prompt, options, context):\n    os._exit(0)\n",
        error_row("agent_error", "exited with code 0"),
        worker=True,
    ),
    agent_case(
        "worker-sigkill-itself",
        "import os, signal\n\n\ndef call_api(prompt, options, context):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n",
        error_row("agent_error", "-9"),
        worker=True,
    ),
    agent_case(
        "worker-segfault",
        "import ctypes\n\n\ndef call_api(prompt, options, context):\n    ctypes.string_at(0)\n",
        error_row("agent_error"),
        worker=True,
    ),
    agent_case(
        "worker-prints-to-stdout",
        "def call_api(prompt, options, context):\n"
        '    print(\'{"id": 1, "result": {"output": "forged"}}\')\n'
        "    return {'output': 'ok ' + prompt}\n",
        Correct("prints cannot forge replies", check=output_is("ok hello", "agent")),
        worker=True,
    ),
    agent_case(
        "worker-huge-stderr",
        "import sys\n\n\ndef call_api(prompt, options, context):\n"
        "    sys.stderr.write('e' * (20 << 20))\n    return {'output': 'ok ' + prompt}\n",
        Correct("20 MiB of stderr is drained", check=output_is("ok hello", "agent")),
        worker=True,
    ),
    agent_case(
        "worker-closes-stdout",
        "import os\n\n\ndef call_api(prompt, options, context):\n    os.close(1)\n"
        "    return {'output': 'ok ' + prompt}\n",
        Correct("the protocol uses its own descriptor", check=output_is("ok hello", "agent")),
        worker=True,
    ),
    agent_case(
        "worker-forks-lingering-child",
        "import os, time\n\n\ndef call_api(prompt, options, context):\n"
        "    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\n"
        "    return {'output': 'ok ' + prompt}\n",
        Correct(
            "the run passes; no process outlives the evaluation",
            check=output_is("ok hello", "agent"),
        ),
        worker=True,
        mode="subprocess",
        limit_s=10,
    ),
]


def _reports_in_case(outcome: Outcome) -> None:
    for name in ("report.json", "report.md"):
        assert (outcome.workspace.case / name).is_file(), f"{name} not in the case directory"


def _agent_passes(outcome: Outcome) -> None:
    runs = runs_of(outcome, "agent")
    assert [r["status"] for r in runs] == ["pass"], [(r["status"], r["error"]) for r in runs]


def _agent_graded(outcome: Outcome) -> None:
    runs = runs_of(outcome, "agent")
    assert len(runs) == 1 and runs[0]["status"] in ("pass", "fail"), [
        (r["status"], r["error"]) for r in runs
    ]


MISC = [
    agent_case(
        "raises-runtime-error",
        _raising("raise RuntimeError('tool server down')"),
        error_row("agent_error", "tool server down"),
    ),
    agent_case(
        "raises-memory-error",
        _raising("raise MemoryError"),
        error_row("agent_error", "MemoryError"),
    ),
    agent_case(
        "raises-recursion-error",
        "def call_api(prompt, options, context):\n    return call_api(prompt, options, context)\n",
        error_row("agent_error", "RecursionError"),
        mode="subprocess",
    ),
    agent_case(
        "exception-str-raises",
        "class Weird(Exception):\n    def __str__(self):\n        raise ValueError('no')\n\n\n"
        + _raising("raise Weird()"),
        error_row("agent_error", "Weird"),
    ),
    agent_case(
        "exception-message-10-mib",
        _raising("raise RuntimeError('m' * (10 << 20))"),
        error_row("agent_error", "RuntimeError"),
        limit_s=8,
    ),
    agent_case(
        "error-field-10-mib",
        "def call_api(prompt, options, context):\n"
        "    return {'error': 'rate limited ' + 'e' * (10 << 20) + ' retry later'}\n",
        error_row("agent_error", "retry later"),
        limit_s=8,
    ),
    agent_case(
        "wrong-signature",
        "def call_api():\n    return {'output': 'ok'}\n",
        error_row("agent_error", "TypeError"),
    ),
    agent_case(
        "returns-error-field",
        "def call_api(prompt, options, context):\n    return {'error': 'rate limited'}\n",
        error_row("agent_error", "rate limited"),
    ),
    agent_case(
        "prints-megabyte-to-stdout",
        "def call_api(prompt, options, context):\n    print('p' * (1 << 20))\n"
        "    return {'output': 'ok ' + prompt}\n",
        Correct("prints do not disturb the run", check=_agent_passes),
    ),
    agent_case(
        "output-nested-200-is-data",
        _returning("{'output': nest(200)}"),
        Correct(
            "200 levels are within the documented 256",
            check=_agent_graded,
        ),
    ),
    agent_case(
        "output-30-mib-is-data",
        _returning("{'output': 'ok ' + 'x' * (30 << 20)}"),
        Correct("30 MiB is within the documented 32 MiB", check=_agent_passes),
        mode="subprocess",
        reports=LIGHT_REPORTS,
        limit_s=40,  # a limit against hangs: moving 30 MiB through every report takes time
    ),
    agent_case(
        "output-with-nul-character",
        _returning("{'output': 'ok \\x00 nul'}"),
        Correct("a NUL character is data", check=output_is("ok \x00 nul", "agent")),
    ),
    agent_case(
        "output-control-characters-and-ansi",
        _returning("{'output': 'ok \\x1b[2J\\x1b]0;pwned\\x07\\r\\x08'}"),
        Correct(
            "terminal escapes are stored as data",
            check=output_is("ok \x1b[2J\x1b]0;pwned\x07\r\x08", "agent"),
        ),
    ),
    agent_case(
        "agent-changes-cwd",
        "import os\n\n\ndef call_api(prompt, options, context):\n"
        "    os.chdir(os.path.join(os.path.dirname(__file__), '..', 'outside'))\n"
        "    return {'output': 'ok ' + prompt}\n",
        Correct(
            "reports land where the command line said, whatever the agent's cwd",
            check=both(all_pass(2), _reports_in_case),
        ),
        mode="subprocess",
    ),
    agent_case(
        "agent-deletes-store-env",
        "import os\n\n\ndef call_api(prompt, options, context):\n"
        "    os.environ['EVALS_STORE_URL'] = 'bogus://x'\n    return {'output': 'ok ' + prompt}\n",
        Correct("the store chosen at start is kept", check=all_pass(2)),
    ),
    agent_case(
        "many-threads-left-running",
        "import threading, time\n\n\ndef call_api(prompt, options, context):\n"
        "    for _ in range(50):\n"
        "        threading.Thread(target=time.sleep, args=(60,)).start()\n"
        "    return {'output': 'ok ' + prompt}\n",
        Correct("non-daemon threads do not keep the harness alive", check=all_pass(2)),
        mode="subprocess",
    ),
]


EXEC_SUITE = """\
prompts: ['{{q}}']
providers:
  - {id: file://good.py, label: good}
  - {id: '%(command)s', label: agent}
evaluateOptions: {repeat: 1%(options)s}
tests:
  - vars: {q: %(q)s}
    assert: [{type: contains, value: ok}]
gates: {baseline: good, candidate: agent}
"""


def exec_case(
    id: str,
    script: str,
    expect: object,
    *,
    timeout_ms: int | None = None,
    mode: str = "inprocess",
    limit_s: float = 20.0,
    command: str = "exec: python3 agent.py",
    q: str = "hello",
    reports: tuple[str, ...] = LIGHT_REPORTS,
) -> Case:
    """An `exec:` agent running `script` with the prompt `q`."""
    options = f", timeoutMs: {timeout_ms}" if timeout_ms is not None else ""
    suite = EXEC_SUITE % {"command": command, "options": options, "q": q}
    return Case(
        id=f"exec-{id}",
        category="agents",
        files={"suite.yaml": suite, "good.py": GOOD_AGENT, "agent.py": dedent(script)},
        expect=expect,  # type: ignore[arg-type]
        mode=mode,
        limit_s=limit_s,
        reports=reports,
    )


ORPHAN = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
time.sleep(60)
"""
ECHO_ARGUMENT = "import sys\nprint('ok ' + sys.argv[1])\n"

EXEC = [
    exec_case("command-not-found", "", error_row("agent_error"), command="exec: ./no-such-program"),
    exec_case(
        "invalid-utf8-stdout",
        "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe')\n",
        Correct("undecodable bytes are replaced", check=output_is("ok \ufffd\ufffd", "agent")),
    ),
    exec_case(
        "json-nan-cost",
        'print(\'{"output": "ok", "cost": NaN}\')\n',
        error_row("malformed"),
    ),
    exec_case(
        "json-nested-100k",
        "print('{\"output\": ' + '[' * 100_000 + ']' * 100_000 + '}')\n",
        error_row("malformed"),
        mode="subprocess",
    ),
    exec_case(
        "json-negative-tokens",
        'print(\'{"output": "ok", "tokenUsage": {"prompt": -3}}\')\n',
        error_row("malformed"),
    ),
    exec_case(
        "prints-nothing",
        "pass\n",
        Correct(
            "an empty stdout is an empty output", check=output_is("", "agent"), exit_code=(0, 1)
        ),
    ),
    exec_case(
        "stdout-40-mib",
        "import sys\nsys.stdout.write('x' * (40 << 20))\n",
        error_row("malformed"),
        mode="subprocess",
        limit_s=10,
    ),
    exec_case(
        "stderr-20-mib-then-output",
        "import sys\nsys.stderr.write('e' * (20 << 20))\nprint('ok done')\n",
        Correct("stderr is drained; stdout is the output", check=output_is("ok done", "agent")),
    ),
    exec_case(
        "exit-nonzero",
        "import sys\nsys.stderr.write('boom')\nsys.exit(7)\n",
        error_row("agent_error", "code 7"),
    ),
    exec_case(
        "killed-by-signal",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        error_row("agent_error", "-9"),
    ),
    exec_case(
        "hangs",
        "import time\ntime.sleep(60)\n",
        error_row("timeout"),
        timeout_ms=500,
    ),
    exec_case(
        "orphan-child-holds-stdout",
        ORPHAN,
        error_row("timeout"),
        timeout_ms=500,
        mode="subprocess",
    ),
    exec_case(
        "prompt-with-shell-metacharacters",
        ECHO_ARGUMENT,
        Correct(
            "the prompt is one argument, never a shell line",
            check=output_is("ok ok; touch ../outside/pwned $(id) `id`", "agent"),
        ),
        q="'ok; touch ../outside/pwned $(id) `id`'",
    ),
    exec_case(
        "prompt-with-nul",
        ECHO_ARGUMENT,
        error_row("agent_error"),
        q='"ok \\0 nul"',
    ),
    exec_case(
        "prompt-over-argument-limit",
        ECHO_ARGUMENT,
        error_row("agent_error"),
        q="'" + "ok " * 70_000 + "'",
    ),
]


def http_case(
    id: str,
    route: str,
    expect: object,
    *,
    timeout_ms: int | None = None,
    mode: str = "inprocess",
    limit_s: float = 20.0,
    config: str = "",
    reports: tuple[str, ...] = REPORTS,
) -> Case:
    """An `http` agent calling a route of the hostile endpoint."""
    options = f"timeoutMs: {timeout_ms}" if timeout_ms is not None else ""
    extra = f", {config}" if config else ""
    agent = f"{{id: https, label: agent, config: {{url: '@HTTP@{route}'{extra}}}}}"
    return Case(
        id=f"http-{id}",
        category="agents",
        files={"suite.yaml": two_agent_suite(agent, 1, options), "good.py": GOOD_AGENT},
        expect=expect,  # type: ignore[arg-type]
        mode=mode,
        limit_s=limit_s,
        reports=reports,
    )


HTTP = [
    http_case("ok", "/ok", Correct("a provider response is read", check=output_is("ok", "agent"))),
    http_case(
        "garbage-bytes",
        "/garbage",
        Correct(
            "a non-JSON body is the output text",
            check=output_is("\ufffd\ufffd\x00\ufffdgarbage\ufffd(", "agent"),
        ),
    ),
    http_case("html-500", "/html-500", error_row("agent_error", "500")),
    http_case(
        "nan-cost",
        "/nan",
        error_row("malformed"),
    ),
    http_case(
        "negative-cost",
        "/negative-cost",
        error_row("malformed"),
    ),
    http_case(
        "body-80-mib",
        "/huge",
        error_row("malformed"),
        mode="subprocess",
        reports=LIGHT_REPORTS,
        limit_s=10,
    ),
    http_case(
        "json-nested-100k",
        "/deep",
        error_row("malformed"),
        mode="subprocess",
        reports=LIGHT_REPORTS,
        limit_s=10,
    ),
    http_case("hangs", "/hang", error_row("timeout"), timeout_ms=500),
    http_case("drips", "/drip", error_row("timeout"), timeout_ms=1000),
    http_case(
        "redirect-loop",
        "/loop",
        error_row("agent_error"),
    ),
    http_case("connection-cut", "/cut", error_row("agent_error")),
    Case(
        id="http-connection-refused",
        category="agents",
        files={
            "suite.yaml": two_agent_suite(
                "{id: 'http://127.0.0.1:9/refused', label: agent}", 1, ""
            ),
            "good.py": GOOD_AGENT,
        },
        expect=error_row("agent_error"),
    ),
]


SLEEPS = "import time\n\n\ndef {name}(*args):\n    time.sleep(30)\n"


def stalling_code(id: str, edits: dict[str, str], files: dict[str, str], message: str) -> Case:
    """The suite's own Python code (`files`, wired in by replacing each key of `edits` in
    the standard suite) stalls past the run's timeout of 0.5 s: the agent's runs are
    `timeout` error rows saying `message`, and evals exits without waiting for the code."""
    suite = two_agent_suite(options="timeoutMs: 500")
    for old, new in edits.items():
        suite = suite.replace(old, new)
    agent = 'def call_api(prompt, options, context):\n    return {"output": "late " + prompt}\n'
    return Case(
        id=id,
        category="agents",
        files={"suite.yaml": suite, "good.py": GOOD_AGENT, "agent.py": agent, **files},
        expect=error_row("timeout", message),
        mode="subprocess",
        limit_s=8,
    )


def stalling_check(id: str, stall: str) -> Case:
    """A Python check that stalls on the agent's answers (not on the baseline's)."""
    check = f"output.startswith('ok') or {stall}"
    edits = {"{type: contains, value: ok}": f"{{type: python, value: {check!r}}}"}
    return stalling_code(id, edits, {}, "ran past the run's timeout")


CHECKS = [
    stalling_check("python-check-sleeps", "__import__('time').sleep(30)"),
    stalling_check("python-check-loops", "any(i < 0 for i in __import__('itertools').count())"),
    stalling_code(
        "python-transform-sleeps",
        {"label: agent}": "label: agent, transform: 'file://t.py:slow'}"},
        {"t.py": SLEEPS.format(name="slow")},
        "output transform ran past",
    ),
    stalling_code(
        "python-scoring-function-sleeps",
        {
            "  - vars: {q: hello}": "  - vars: {q: hello}\n    assertScoringFunction: file://s.py:score"
        },
        {"s.py": SLEEPS.format(name="score")},
        "checks took longer",
    ),
    stalling_code(
        "python-var-loader-sleeps",
        {"vars: {q: hello}": "vars: {q: hello, v: file://loader.py}"},
        {"loader.py": SLEEPS.format(name="get_var")},
        "rendering the prompt took longer",
    ),
    stalling_code(
        "python-prompt-function-sleeps",
        {"prompts: ['{{q}}']": "prompts: ['file://p.py:make']"},
        {"p.py": SLEEPS.format(name="make")},
        "rendering the prompt took longer",
    ),
]


def js_case(
    id: str, source: str, expect: object, *, timeout_ms: int | None = None, file: str = "agent.js"
) -> Case:
    """A JavaScript provider class (promptfoo's `file://provider.js`) as `agent`."""
    options = f"timeoutMs: {timeout_ms}" if timeout_ms is not None else ""
    suite = two_agent_suite(f"{{id: file://{file}, label: agent}}", 1, options)
    return Case(
        id=f"js-{id}",
        category="agents",
        files={"suite.yaml": suite, "good.py": GOOD_AGENT, file: dedent(source)},
        expect=expect,  # type: ignore[arg-type]
        reports=LIGHT_REPORTS,
    )


def _js_provider(body: str) -> str:
    """A provider class whose callApi runs `body` (indented JavaScript statements)."""
    return (
        "module.exports = class Agent {\n"
        "  id() { return 'agent'; }\n"
        "  async callApi(prompt, context) {\n"
        f"    {body}\n"
        "  }\n"
        "};\n"
    )


JS_PROVIDERS = [
    js_case(
        "throws",
        _js_provider("throw new TypeError('boom');"),
        error_row("agent_error", "TypeError: boom"),
    ),
    js_case(
        "rejects-with-a-string",
        _js_provider("return Promise.reject('plain refusal');"),
        error_row("agent_error", "plain refusal"),
    ),
    js_case(
        "answers-undefined",
        _js_provider("return undefined;"),
        error_row("agent_error", "Cannot convert undefined or null to object"),
    ),
    js_case("busy-loop", _js_provider("for (;;) {}"), error_row("timeout"), timeout_ms=500),
    js_case(
        "eats-memory",
        _js_provider("const held = []; for (;;) held.push(new Array(1e6).fill(1));"),
        error_row("agent_error", "MB and was stopped"),
    ),
    js_case(
        "never-settles",
        _js_provider("await new Promise(() => {});"),
        error_row("agent_error", "did not settle"),
    ),
    js_case(
        "negative-tokens",
        _js_provider("return { output: 'ok', tokenUsage: { prompt: -3 } };"),
        error_row("malformed"),
    ),
    js_case(
        "looks-for-the-host",
        _js_provider(
            "const host = Function('return this')();"
            " return { output: ['ok', typeof host.process, typeof process.env.HOME,"
            " typeof host.__evals, typeof fetch].join(' ') };"
        ),
        Correct(
            "the sandbox has no process, environment, host entry or network",
            check=output_is("ok undefined undefined undefined undefined", "agent"),
        ),
    ),
    js_case(
        "requires-a-package",
        "const fetch = require('node-fetch');\n" + _js_provider("return { output: 'ok' };"),
        UsageError(("agent.js", "require('node-fetch') is not available")),
    ),
    js_case(
        "takes-the-baselines-label",
        "module.exports = class { constructor() { this.label = 'good'; }"
        " id() { return 'x'; } callApi() { return { output: 'ok' }; } };\n",
        UsageError(("two providers share the label",)),
    ),
]


CASES = [
    *base_exception_cases(),
    *IMPORT_FAILURES,
    *HANGS,
    *garbage_cases(),
    *WORKER_GARBAGE,
    *MISC,
    *EXEC,
    *HTTP,
    *CHECKS,
    *JS_PROVIDERS,
]
