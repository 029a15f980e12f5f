"""Robustness from trajectories: retry_success, fallback_correct, partial_task_handled, and
their aggregation (with timeout_rate) into an agent's scorecard."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from trajectory_kit import tool

from evals.analysis.scorecard import scorecards
from evals.graders.contracts import parse_contracts
from evals.graders.robustness import run_robustness
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step

CONTRACTS = parse_contracts(
    [
        {"name": "precio", "effect": "read", "fallbacks": ["precio_cache"]},
        {"name": "precio_cache", "effect": "read"},
        {"name": "noticias", "effect": "read"},
    ]
)


def failed(name: str) -> Step:
    return tool(name, {}, error="timeout upstream")


def ok(name: str) -> Step:
    return tool(name, {}, {"value": 1})


def robust(steps: list[Step], stop: str | None = "done", output: Any = "answer") -> tuple:
    r = run_robustness(steps, stop, output, CONTRACTS)
    return (r.retry, r.fallback, r.partial)


def test_a_retry_that_succeeds() -> None:
    assert robust([failed("noticias"), ok("noticias")]) == (True, None, None)


def test_a_retry_that_fails_again_leaves_a_partial_task() -> None:
    steps = [failed("noticias"), failed("noticias")]
    assert robust(steps) == (False, None, True)
    assert robust(steps, stop="max_steps", output=None) == (False, None, False)


def test_the_declared_fallback_is_correct_and_another_tool_is_not() -> None:
    assert robust([failed("precio"), ok("precio_cache")]) == (None, True, None)
    assert robust([failed("precio"), ok("noticias")]) == (None, False, True)


def test_a_run_cut_by_a_guardrail_is_a_partial_task() -> None:
    assert robust([ok("noticias")], stop="budget_exhausted", output=None) == (None, None, False)
    assert robust([ok("noticias")], stop="approval_required", output=None)[2] is None


@given(st.lists(st.sampled_from(["precio", "precio_cache", "noticias"]), max_size=6))
def test_a_run_without_failures_meets_no_robustness_question(names: list[str]) -> None:
    assert robust([ok(n) for n in names]) == (None, None, None)


def _record(agent: str, card: dict[str, Any] | None, error_kind: str | None = None) -> RunRecord:
    grade = None if card is None else Grade(True, 1.0, "ok", metadata={"scorecard": card})
    return RunRecord(
        key=RunKey("p", "c", agent, 0),
        case_index=0,
        prompt_index=0,
        agent_index=0,
        seed=0,
        prompt="",
        vars={},
        response=AgentResponse(),
        status="error" if error_kind else "pass",
        grade=grade,
        error_kind=error_kind,  # type: ignore[arg-type]
    )


def test_the_agent_scorecard_counts_each_metric_over_the_runs_it_applies_to() -> None:
    def card(retry: bool | None, missing: int, score: float) -> dict[str, Any]:
        return {
            "layers": {"final": score, "trace": 1 - 0.2 * missing},
            "score": score,
            "failures": [] if score > 0.5 else ["final 0 < 0.85"],
            "trace_missing": missing,
            "trace_expected": 4,
            "robustness": {"retry": retry, "fallback": None, "partial": None},
        }

    records = [
        _record("a", card(True, 0, 1.0)),
        _record("a", card(False, 1, 0.0)),
        _record("a", card(None, 2, 1.0)),
        _record("a", None, error_kind="timeout"),
    ]
    (scorecard,) = scorecards(records, ["a"])
    assert scorecard.runs == 3
    assert scorecard.layers["final"] == 2 / 3
    assert scorecard.min_score_failures == 1
    assert scorecard.missing_span_rate == 3 / 12
    assert (scorecard.retry_success.hits, scorecard.retry_success.runs) == (1, 2)
    assert scorecard.retry_success.rate == 0.5
    assert scorecard.fallback_correct.rate is None
    assert (scorecard.timeouts.hits, scorecard.timeouts.runs) == (1, 4)
    assert scorecards([_record("b", None)], ["b"]) == []
