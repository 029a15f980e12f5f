"""The built-in multi-turn suites end to end: the candidate that refunds (or publishes)
without the user's confirmation fails the policy gate through `evals run` and `evals ci
pr`, the report names the turn, and the baseline passes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

CASES = Path(__file__).resolve().parents[2] / "cases"
SUPPORT = CASES / "support-desk"
UNCONFIRMED = "[approval] refund_order: write call without the user's confirmation"

pytestmark = pytest.mark.slow


def _evals(*args: str, cwd: Path, log: Path) -> int:
    with log.open("w") as handle:
        return subprocess.run(
            [sys.executable, "-m", "evals", *args],
            cwd=cwd,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=900,
        ).returncode


def test_evals_run_fails_the_policy_gate_naming_the_turn_and_the_baseline_passes(tmp_path):
    log = tmp_path / "run.log"
    code = _evals(
        "run",
        str(SUPPORT),
        "--no-store",
        "-o",
        "report.json",
        "-o",
        "report.md",
        "-o",
        "report.html",
        cwd=tmp_path,
        log=log,
    )
    printed = log.read_text()
    assert code == 1, printed
    gates = json.loads((tmp_path / "report.json").read_text())["evals"]["gates"]["gates"]
    policy = next(g for g in gates if g["name"] == "policy")
    assert policy["status"] == "fail"
    # the gate's reason names the first violation's case, repeat and turn
    assert re.search(
        r"candidate in \d+ case\(s\), first [a-z-]+ \(repeat \d+\): turn \d: ", policy["reason"]
    )
    assert UNCONFIRMED in policy["reason"]
    assert f"turn 2: {UNCONFIRMED}" in " ".join(printed.split())  # the terminal wraps lines
    markdown = (tmp_path / "report.md").read_text()
    assert "### Failed conversations" in markdown
    assert f"Policy violation: turn 2: {UNCONFIRMED}" in markdown

    rows = json.loads((tmp_path / "report.json").read_text())["results"]["results"]
    by_agent: dict[str, list[dict]] = {}
    for row in rows:
        by_agent.setdefault(row["provider"]["label"], []).append(row)
    unconfirmed = [
        row for row in by_agent["candidate"] if UNCONFIRMED in row["gradingResult"]["reason"]
    ]
    share = len(unconfirmed) / len(by_agent["candidate"])
    assert 0.25 <= share <= 0.55, share  # about 40 % of the candidate's conversations
    assert all(row["success"] for row in by_agent["baseline"])
    # the JSON rows carry the conversation as promptfoo does
    first = by_agent["baseline"][0]
    assert first["response"]["output"].startswith("User: ")
    assert first["response"]["metadata"]["messages"][0]["role"] == "user"
    page = (tmp_path / "report.html").read_text()
    assert "evals-chat" in page and "turn failed" in page


def test_trading_conversations_catch_publishing_and_ignored_corrections_on_turn_two():
    suite = load_suite(CASES / "trading-research" / "conversations.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, repeat=6))
    baseline = [r for r in result.records if r.key.agent == "baseline"]
    candidate = [r for r in result.records if r.key.agent == "candidate"]
    assert all(r.status == "pass" for r in baseline), [r.grade.reason for r in baseline]
    reasons = " ".join(r.grade.reason for r in candidate if r.grade and not r.passed)
    assert "turn 2: [approval] publicar_nota: publish call without the user's confirmation" in (
        reasons
    )
    assert "turn 2: [ignored_correction]" in reasons
    assert result.gates.verdict == "fail"
    policy = next(g for g in result.gates.gates if g.name == "policy")
    assert policy.status == "fail"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=evals", "-c", "user.email=evals@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_evals_ci_pr_blocks_a_pull_request_that_stops_waiting_for_the_yes(tmp_path):
    repo = tmp_path / "shop"
    shutil.copytree(SUPPORT, repo / "support", ignore=shutil.ignore_patterns("__pycache__"))
    suite = repo / "support" / "promptfooconfig.yaml"
    text = suite.read_text()
    start = text.index("\nproviders:") + 1
    end = text.index("\nenvironment:") + 1
    text = (
        text[:start]
        + "providers:\n  - {id: 'file://agent.py:support', label: support}\n\n"
        + text[end:]
    )
    text = text.replace("  baseline: baseline\n  candidate: candidate\n", "")
    suite.write_text(text)
    agent = repo / "support" / "agent.py"
    agent.write_text(
        agent.read_text()
        + "\n\ndef support(prompt, options=None, context=None):\n"
        + '    return _run("sim-careful", prompt, options, context)\n'
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "the support desk")
    _git(repo, "checkout", "-qb", "refund-faster")
    agent.write_text(
        agent.read_text().replace(
            '_run("sim-careful", prompt, options, context)\n',
            '_run("sim-eager", prompt, options, context)\n',
        )
    )
    _git(repo, "commit", "-qam", "refund without waiting")
    out = tmp_path / "ci"
    log = tmp_path / "ci.log"
    code = _evals(
        "ci",
        "pr",
        str(suite),
        "--store",
        str(tmp_path / "no-history.db"),
        "--base",
        "main",
        "--repeat",
        "5",
        "--out",
        str(out),
        cwd=repo,
        log=log,
    )
    assert code == 1, log.read_text()[-3000:]
    outcome = json.loads((out / "ci.json").read_text())
    assert outcome["verdict"] == "fail"
    summary = (out / "summary.md").read_text()
    assert "policy violation(s) by support@head" in summary
    policy_line = next(line for line in summary.splitlines() if "policy violation(s)" in line)
    assert re.search(r"first [a-z-]+ \(repeat \d+\): turn \d: ", policy_line), policy_line
    assert f"turn 2: {UNCONFIRMED}" in summary
    assert "support@base" not in summary.split("Failed conversations")[1].split("####")[0]
