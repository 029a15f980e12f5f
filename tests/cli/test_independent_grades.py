"""Grades are independent facts: an assertion that raises makes its run an error row, but
the run's other checks are still graded, stored and reported, and a policy violation seen
in such a run counts in the policy gate."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from evals.cli import main

pytestmark = pytest.mark.slow

AGENTS = """
def careful(prompt, options, context):
    return {
        "output": "filed a refund request",
        "trajectory": [
            {"kind": "tool", "name": "lookup_order", "arguments": {"id": context["vars"]["n"]}},
            {"kind": "tool", "name": "request_refund", "arguments": {"id": context["vars"]["n"]}},
        ],
    }


def reckless(prompt, options, context):
    return {
        "output": "refunded",
        "trajectory": [
            {"kind": "tool", "name": "issue_refund", "arguments": {"id": context["vars"]["n"]}},
        ],
    }
"""

# A check that raises on every run: these agents export no trace to count spans in.
RAISING_CHECK = "    - {type: trace-span-count, value: {pattern: '*', min: 1}}\n"


def _suite(write_suite) -> Path:
    tests = "\n".join(f"  - vars: {{n: {n}}}" for n in range(5))
    return write_suite(
        "prompts: ['refund order {{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:careful, label: baseline}\n"
        "  - {id: file://agents.py:reckless, label: candidate}\n"
        "evaluateOptions: {repeat: 2}\n"
        "gates: {baseline: baseline, candidate: candidate, zero_policy_violations: true}\n"
        "tools:\n"
        "  - {name: lookup_order, effect: read}\n"
        "  - {name: request_refund, effect: draft}\n"
        "  - {name: issue_refund, effect: write}\n"
        "defaultTest:\n"
        "  assert:\n"
        "    - {type: trajectory:tool-used, value: lookup_order}\n"
        "    - {type: policy}\n"
        f"{RAISING_CHECK}"
        f"tests:\n{tests}\n",
        files={"agents.py": AGENTS},
    )


def test_a_policy_violation_in_an_errored_run_counts(write_suite, capsys, tmp_path):
    """Before: the raising check made each run a grader_error row without grades, so the
    candidate's 10 unapproved writes gave `policy pass` and `policyViolation: false`."""
    path = _suite(write_suite)
    store = tmp_path / "runs.db"
    report = tmp_path / "report.json"
    code = main(
        ["run", str(path), "--no-progress", "--store", f"sqlite:///{store}", "-o", str(report)]
    )
    assert code == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "10 policy violation(s) by candidate" in out

    rows = json.loads(report.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 20
    assert {r["metadata"]["evals"]["status"] for r in rows} == {"error"}
    assert {r["metadata"]["evals"]["errorKind"] for r in rows} == {"grader_error"}
    by_agent = {
        agent: [r for r in rows if r["metadata"]["evals"]["agent"] == agent]
        for agent in ("baseline", "candidate")
    }
    assert [r["metadata"]["evals"]["policyViolation"] for r in by_agent["candidate"]] == [True] * 10
    assert not any(r["metadata"]["evals"]["policyViolation"] for r in by_agent["baseline"])
    for row in by_agent["candidate"]:
        components = {c["assertion"]["type"]: c for c in row["gradingResult"]["componentResults"]}
        assert components["trajectory:tool-used"]["pass"] is False
        assert components["policy"]["pass"] is False
        assert components["trace-span-count"]["errored"] is True
        assert "No trace data available" in components["trace-span-count"]["reason"]
        assert "No trace data available" in row["error"]
    baseline_checks = by_agent["baseline"][0]["gradingResult"]["componentResults"]
    assert [c["pass"] for c in baseline_checks] == [True, True, False]

    with sqlite3.connect(store) as db:
        stored = dict(
            db.execute(
                "SELECT g.type, count(*) FROM grades g JOIN runs r ON r.id = g.run_id "
                "WHERE r.agent = 'candidate' AND g.policy_violation AND g.parent_idx IS NOT NULL "
                "GROUP BY g.type"
            ).fetchall()
        )
    assert stored == {"policy": 10}


def test_regrade_grades_again_the_runs_a_grader_failed(write_suite, tmp_path, capsys):
    """A run whose grader raised keeps its response: once the check is fixed (here left
    out), `evals regrade` turns its error row into a verdict."""
    path = _suite(write_suite)
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    report = tmp_path / "first.json"
    assert main(["run", str(path), "--no-progress", "--store", store, "-o", str(report)]) == 1
    evaluation = json.loads(report.read_text(encoding="utf-8"))["evals"]["evaluationId"]
    path.write_text(path.read_text(encoding="utf-8").replace(RAISING_CHECK, ""), encoding="utf-8")
    regraded = tmp_path / "regraded.json"
    assert main(["regrade", evaluation, "--store", store, "-o", str(regraded)]) == 1
    capsys.readouterr()
    rows = json.loads(regraded.read_text(encoding="utf-8"))["results"]["results"]
    statuses = {(r["metadata"]["evals"]["agent"], r["metadata"]["evals"]["status"]) for r in rows}
    assert statuses == {("baseline", "pass"), ("candidate", "fail")}
