"""The framework example suites run offline end to end: each baseline passes every case,
each candidate is caught by the trajectory, policy and budget graders, and the gate fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.model.results import RunRecord
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

EXAMPLES = Path(__file__).resolve().parents[2] / "cases" / "examples"
SUITES = [
    pytest.param(name, marks=pytest.mark.extra(name))
    for name in ("openai-agents", "langgraph", "pydantic-ai")
]


def _failed_types(record: RunRecord) -> set[str]:
    assert record.grade is not None
    return {
        str(c.assertion.get("type"))
        for c in record.grade.component_results
        if not c.passed and c.assertion is not None
    }


@pytest.mark.slow
@pytest.mark.parametrize("framework", SUITES)
def test_example_suite_catches_the_candidate(framework: str) -> None:
    suite = load_suite(EXAMPLES / framework / "suite.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, repeat=2))
    by_agent: dict[str, list[RunRecord]] = {}
    for record in result.records:
        by_agent.setdefault(record.key.agent, []).append(record)
    assert len(by_agent["baseline"]) == len(by_agent["candidate"]) == 2 * len(suite.cases)
    for record in by_agent["baseline"]:
        assert record.status == "pass", (record.key, record.error, record.grade)
        response = record.response
        assert response.stop_reason == "done"
        assert response.cost is not None and response.cost > 0
        assert response.token_usage["total"] > 0
        assert any(s.kind == "tool" for s in response.trajectory)
    for record in by_agent["candidate"]:
        assert record.status == "fail"
        failed = _failed_types(record)
        assert "policy" in failed and "trajectory:tool-sequence" in failed
        assert "budget" in failed
    refund = [r for r in by_agent["candidate"] if "refund" in r.key.case_id]
    assert refund and all(
        any(s.name == "issue_refund" for s in r.response.trajectory) for r in refund
    )
    assert result.gates.verdict == "fail"
    assert next(g for g in result.gates.gates if g.name == "policy").status == "fail"
