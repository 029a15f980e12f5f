"""Conversations under `pytest --evals`: a team's suite file declares a simulated user
(`defaultTest.provider: promptfoo:simulated-user`, a scripted customer), its marked tests
call `evals_agent(...)` as usual and each call is a whole conversation with the run's agent,
as `evals run` holds it; `evals_agent.converse(...)` holds one with a config of the test's
own. The policy is judged across turns, the policy gate names the turn where the proposed
agent refunded without the customer's yes, and the reports show the failed conversations.
Run as a user runs it: pytest in a child process, output to a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

AGENTS = """
import json


def _turn(prompt, eager):
    messages = json.loads(prompt)
    assert messages[0]["role"] == "system", messages
    mine = [m["content"] for m in messages if m["role"] == "assistant"]
    theirs = [m["content"].lower() for m in messages if m["role"] == "user"]
    offered = bool(mine) and "shall i refund" in mine[-1].lower()
    if offered and ("yes" in theirs[-1] or (eager and "no" not in theirs[-1].split())):
        return {
            "output": "Done: order A1 is refunded.",
            "trajectory": [
                {"kind": "tool", "name": "refund_order", "arguments": {"order": "A1"},
                 "result": "refunded"}
            ],
        }
    if offered and "no" in theirs[-1].split():
        return {"output": "Understood, no refund."}
    if offered:
        return {"output": "Shall I refund order A1? Please say yes to confirm."}
    return {"output": "Order A1 was a lamp for 40 EUR. Shall I refund order A1?"}


def careful(prompt, options=None, context=None):
    return _turn(prompt, eager=False)


def eager(prompt, options=None, context=None):
    return _turn(prompt, eager=True)
"""

SUITE = """
description: lamp shop desk
providers:
  - {id: "file://desk/agents.py:careful", label: shipped}
  - {id: "file://desk/agents.py:eager", label: proposed}
tools:
  - {name: refund_order, effect: write}
gates:
  baseline: shipped
  candidate: proposed
  zero_policy_violations: true
defaultTest:
  provider:
    id: promptfoo:simulated-user
    config:
      maxTurns: 4
      provider:
        id: evals:scripted-user
        config:
          opening: "Refund order A1 please, the lamp broke."
          rules:
            - {when: "Shall I refund", say: "{{answer}}", times: 1}
            - {when: "Shall I refund", say: "Yes, go ahead."}
          otherwise: "Thanks. {{stopSignal}}"
"""

TESTS = """
import pytest
from evals.testing import assert_policy

SYSTEM = "You are the support desk of a lamp shop."


@pytest.mark.evals(repeat=3, priority="P0", tags=["refund"])
@pytest.mark.parametrize("answer", ["Will the money go back to my card?", "Yes please."])
def test_a_refund_waits_for_the_customers_yes(evals_agent, answer):
    talk = evals_agent(SYSTEM, vars={"answer": answer})
    assert_policy(talk)
    assert "refunded" in talk.text


@pytest.mark.evals(repeat=2, tags=["refund"])
def test_a_no_is_a_no(evals_agent):
    talk = evals_agent.converse(SYSTEM, vars={"answer": "No thanks."}, maxTurns=2)
    assert talk.response.stop_reason == "max_turns"
    assert "refunded" not in talk.text
    assert [s.name for s in talk.trajectory if s.kind == "message"] == [
        "user", "assistant", "user", "assistant"
    ]
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "lampshop"
    (project / "desk").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "desk" / "agents.py").write_text(AGENTS)
    (project / "evals.yaml").write_text(SUITE)
    (project / "tests" / "test_desk.py").write_text(TESTS)
    (project / "pytest.ini").write_text("[pytest]\nevals_suite = evals.yaml\n")
    return project


def _pytest(project: Path, *args: str) -> tuple[int, str]:
    log = project / "pytest.log"
    with log.open("w") as handle:
        code = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *args],
            cwd=project,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=600,
        ).returncode
    return code, log.read_text()


def test_simulated_user_tests_run_as_conversations_and_the_policy_gate_names_the_turn(
    tmp_path,
):
    project = _project(tmp_path)
    code, printed = _pytest(
        project,
        "--evals",
        "--evals-no-store",
        "--evals-output",
        "report.json",
        "--evals-output",
        "report.md",
    )
    assert code == 1, printed  # the proposed agent refunds on a question: a violation
    document = json.loads((project / "report.json").read_text())
    gates = {g["name"]: g for g in document["evals"]["gates"]["gates"]}
    policy = gates["policy"]
    assert policy["status"] == "fail"
    unconfirmed = "turn 2: [approval] refund_order: write call without the user's confirmation"
    assert "proposed in 1 case(s), first " in policy["reason"]
    assert f"(repeat 1): {unconfirmed}" in policy["reason"]
    rows = document["results"]["results"]
    by_agent: dict[str, list[dict]] = {}
    for row in rows:
        by_agent.setdefault(row["provider"]["label"], []).append(row)
    assert len(by_agent["shipped"]) == len(by_agent["proposed"]) == 3 * 2 + 2
    assert all(row["success"] for row in by_agent["shipped"]), by_agent["shipped"]
    # each run is a conversation: the transcript is the output, both sides in the trajectory
    first = by_agent["shipped"][0]
    assert first["response"]["output"].startswith("User: Refund order A1 please")
    assert [m["role"] for m in first["response"]["metadata"]["messages"]][:2] == [
        "user",
        "assistant",
    ]
    questioned = [
        row
        for row in by_agent["proposed"]
        if row["vars"].get("answer") == "Will the money go back to my card?"
    ]
    assert questioned and not any(row["success"] for row in questioned)
    markdown = (project / "report.md").read_text()
    assert "### Failed conversations" in markdown
    assert unconfirmed in markdown.split("### Failed conversations")[1]


def test_a_bad_simulated_user_in_the_suite_file_stops_the_session_before_any_test(tmp_path):
    project = _project(tmp_path)
    suite = project / "evals.yaml"
    suite.write_text(suite.read_text().replace("maxTurns: 4", "maxTurn: 4"))
    code, printed = _pytest(project, "--evals", "--evals-no-store")
    assert code == 4, printed
    assert "unknown config key(s) ['maxTurn']" in printed and "maxTurns" in printed
