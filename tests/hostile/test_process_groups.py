"""Agents' processes are owned and reaped: nothing an agent starts outlives its run.

`exec:` commands and Python workers start children that fork, daemonize (a double fork
with `setsid`), or start a session of their own, then exit, hang past the run's timeout, or
hold the command's output open. After `evals run` returns, none of them may be alive, and
a command that answered and exited is not held up by a child that kept its stdout.
Each spawned process carries a marker unique to the test in its command line, which the
test looks for among every process of the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# Starts `how` children that sleep with the marker in their command line, prints its
# answer, then exits or sleeps (`then`).
SPAWNER = """\
import os, subprocess, sys, time

marker, how, then = sys.argv[1], sys.argv[2], sys.argv[3]
sleeper = [sys.executable, "-c", "import time; time.sleep(600)", marker]


def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, sleeper)
        os._exit(0)
    os.wait()


if how == "fork":
    subprocess.Popen(sleeper)
elif how == "setsid":
    subprocess.Popen(sleeper, start_new_session=True)
elif how == "daemon":
    daemon()
elif how == "holds-stdout":
    subprocess.Popen(sleeper, start_new_session=True, stdout=sys.stdout)
elif how == "pgroup":
    subprocess.Popen(sleeper, process_group=0)
print("answer " + how, flush=True)
if then == "hang":
    time.sleep(600)
"""

WORKER = """\
import subprocess, sys

def call_api(prompt, options, context):
    marker = options["config"]["marker"]
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)", marker]
    subprocess.Popen(sleeper, start_new_session=True)
    subprocess.Popen(sleeper)
    return {"output": "worker " + prompt}
"""


def _alive_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    token = f"evals-leftover-{uuid.uuid4().hex}"
    yield token
    for pid in _alive_with(token):  # never leave them, even when the test failed
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process reaping reads /proc (Linux)"
)


def _run(tmp_path: Path, suite: str, *argv: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "suite.yaml").write_text(suite, encoding="utf-8")
    (tmp_path / "spawner.py").write_text(SPAWNER, encoding="utf-8")
    (tmp_path / "worker_agent.py").write_text(WORKER, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "evals", "run", "suite.yaml", "--no-store", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _gone(marker: str) -> list[int]:
    """What is still alive a moment after evals returned (a kill is not instant)."""
    deadline = time.monotonic() + 3
    while (alive := _alive_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.mark.parametrize("how", ["fork", "setsid", "daemon", "pgroup"])
def test_children_of_a_command_that_exits_are_reaped(tmp_path: Path, marker: str, how: str) -> None:
    suite = (
        "prompts: ['{{ q }}']\n"
        f"providers: ['exec: {sys.executable} spawner.py {marker} {how} exit']\n"
        "tests:\n  - vars: {q: a}\n  - vars: {q: b}\n"
    )
    done = _run(tmp_path, suite, "-o", "out.json")
    assert done.returncode in (0, 100), done.stderr
    assert f"answer {how}" in (tmp_path / "out.json").read_text()
    assert _gone(marker) == []


@pytest.mark.parametrize("how", ["fork", "setsid", "daemon"])
def test_children_of_a_command_that_times_out_are_reaped(
    tmp_path: Path, marker: str, how: str
) -> None:
    suite = (
        "prompts: ['{{ q }}']\n"
        f"providers: ['exec: {sys.executable} spawner.py {marker} {how} hang']\n"
        "evaluateOptions: {timeoutMs: 1500}\n"
        "tests:\n  - vars: {q: a}\n  - vars: {q: b}\n"
    )
    done = _run(tmp_path, suite, "-o", "out.json")
    assert done.returncode in (0, 1, 100), done.stderr
    assert (
        '"timeout"' in (tmp_path / "out.json").read_text()
        or "timed out" in (tmp_path / "out.json").read_text()
    )
    assert _gone(marker) == []


def test_a_child_holding_the_output_does_not_hold_the_answer(tmp_path: Path, marker: str) -> None:
    suite = (
        "prompts: ['{{ q }}']\n"
        f"providers: ['exec: {sys.executable} spawner.py {marker} holds-stdout exit']\n"
        "evaluateOptions: {timeoutMs: 30000}\n"
        "tests:\n  - vars: {q: a}\n    assert: [{type: contains, value: answer}]\n"
    )
    started = time.monotonic()
    done = _run(tmp_path, suite)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started < 25
    assert _gone(marker) == []


def test_a_workers_children_are_reaped_when_evals_exits(tmp_path: Path, marker: str) -> None:
    suite = (
        "prompts: ['{{ q }}']\n"
        "providers:\n  - id: file://worker_agent.py\n"
        f"    config: {{worker: true, marker: {marker}}}\n"
        "tests:\n  - vars: {q: a}\n  - vars: {q: b}\n"
    )
    done = _run(tmp_path, suite)
    assert done.returncode in (0, 100), done.stderr
    assert _gone(marker) == []


# `evals run` with the runner's grace for a cancelled call cut to nothing: what a loaded
# machine does when cleaning up a timed-out command takes longer than the grace, and the
# runner closes the call's coroutine in the middle of it.
NO_GRACE = """\
import sys
import evals.run.runner
evals.run.runner.CANCEL_GRACE_S = 0.0
from evals.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("how", ["holds-stdout", "setsid", "daemon"])
def test_a_command_abandoned_in_its_cleanup_leaves_no_process_and_no_traceback(
    tmp_path: Path, marker: str, how: str
) -> None:
    """Before: each abandoned command's subprocess transport was closed by the garbage
    collector after the event loop had closed, printing `Exception ignored in:
    BaseSubprocessTransport.__del__ ... RuntimeError: Event loop is closed`."""
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['{{ q }}']\n"
        f"providers: ['exec: {sys.executable} spawner.py {marker} {how} hang']\n"
        "evaluateOptions: {timeoutMs: 300}\n"
        "tests:\n  - vars: {q: a}\n  - vars: {q: b}\n  - vars: {q: c}\n",
        encoding="utf-8",
    )
    (tmp_path / "spawner.py").write_text(SPAWNER, encoding="utf-8")
    (tmp_path / "no_grace.py").write_text(NO_GRACE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "no_grace.py", "run", "suite.yaml", "--no-store", "-q", "-o", "out.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert done.returncode in (1, 100), done.stderr
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    errors = [row["error"] for row in report["results"]["results"]]
    assert errors == ["agent timed out after 0.3 s"] * 3
    for noise in ("Traceback", "Exception ignored", "is closed", "Unknown child process"):
        assert noise not in done.stderr, done.stderr
    assert _gone(marker) == []


@pytest.mark.skipif(shutil.which("ruby") is None, reason="needs ruby")
def test_a_ruby_check_stopped_at_the_runs_timeout_leaves_no_interpreter(
    tmp_path: Path, marker: str
) -> None:
    """Before: the interpreter of a Ruby check that outlived its run's timeout kept running
    after evals had exited."""
    check = f"{marker}.rb"
    (tmp_path / check).write_text(
        "def get_assert(output, context)\n  sleep 60\n  true\nend\n", encoding="utf-8"
    )
    suite = (
        "prompts: ['{{ q }}']\nproviders: [echo]\n"
        f"defaultTest:\n  assert: [{{type: ruby, value: 'file://{check}'}}]\n"
        "tests:\n  - vars: {q: a}\n  - vars: {q: b}\n"
    )
    done = _run(tmp_path, suite, "--timeout", "1", "-o", "out.json")
    assert done.returncode == 100, done.stderr
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    errors = [row["error"] for row in report["results"]["results"]]
    assert errors == ["the checks took longer than the timeout of 1 s"] * 2
    assert "Traceback" not in done.stderr
    assert _gone(marker) == []
