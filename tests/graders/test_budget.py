"""The budget grader: each limit, cost from prices, and the stop reason."""

from __future__ import annotations

import pytest
from trajectory_kit import grade_run, tool

from evals.graders.cost import resolve_cost
from evals.model.results import NO_MODEL, AgentResponse
from evals.model.trajectory import Step
from evals.vendors.prices import price_table


def model(tokens_in: int, tokens_out: int, name: str = "small", **extra: object) -> Step:
    return Step("model", name, input_tokens=tokens_in, output_tokens=tokens_out, **extra)


RUN = [
    model(567, 40),
    tool("precio", {"ticker": "BUSI", "fecha": "2024-03-15"}),
    tool("precio", {"ticker": "BUSI", "fecha": "2024-03-22"}),
    model(734, 30),
    tool("calculadora", {"expresion": "(27.88/26.19 - 1)*100"}),
    model(820, 25),
]
PRICES = {"prices": {"small": {"input": 1.0, "output": 4.0}, "big": {"input": 10, "output": 40}}}


def check(value: dict, trajectory: list[Step] = RUN, **kwargs: object):
    return grade_run("budget", value, trajectory, suite_config=PRICES, **kwargs)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"max_steps": 2}, "steps 3 over 2"),
        ({"max_tool_calls": 2}, "tool calls 3 over 2"),
        ({"max_input_tokens": 2000}, "input tokens 2121 over 2000"),
        ({"max_output_tokens": 90}, "output tokens 95 over 90"),
        ({"max_tokens": 2200}, "tokens 2216 over 2200"),
    ],
)
def test_each_count_limit(value: dict, reason: str) -> None:
    grade = check(value)
    assert not grade.passed and grade.reason == reason
    relaxed = {key: limit + 1000 for key, limit in value.items()}
    assert check(relaxed).passed


def test_reported_usage_wins_over_step_sums() -> None:
    response = {"token_usage": {"prompt": 100, "completion": 10, "total": 110}}
    assert check({"max_input_tokens": 150, "max_tokens": 120}, response=response).passed


def test_steps_without_model_calls_count_every_step() -> None:
    assert check({"max_steps": 2}, [tool("a"), tool("b"), tool("c")]).reason == "steps 3 over 2"


def test_cost_reported_by_the_agent() -> None:
    grade = check({"max_cost": 0.08}, response={"cost": 0.132})
    assert grade.reason == "cost 0.132 over 0.08"
    assert check({"max_cost": 0.2}, response={"cost": 0.132}).passed


def test_cost_summed_over_steps() -> None:
    steps = [model(10, 1, cost=0.05), tool("a"), model(10, 1, cost=0.04)]
    assert resolve_cost(AgentResponse(trajectory=steps), {}).amount == pytest.approx(0.09)
    assert check({"max_cost": 0.08}, steps).reason == "cost 0.09 over 0.08"


def test_cost_priced_per_model_step() -> None:
    steps = [model(1_000, 100, "small"), model(2_000, 50, name="x", metadata={"model": "big"})]
    expected = (1_000 * 1.0 + 100 * 4.0 + 2_000 * 10 + 50 * 40) / 1_000_000
    table = price_table(PRICES["prices"])
    assert resolve_cost(AgentResponse(trajectory=steps), table).amount == pytest.approx(expected)
    grade = check({"max_cost": 0.02}, steps)
    assert grade.reason == f"cost {expected:.6g} over 0.02"


def test_cost_priced_from_reported_usage_needs_a_model_when_several_prices() -> None:
    usage = {"token_usage": {"prompt": 10_000, "completion": 1_000}}
    grade = check({"max_cost": 0.001, "model": "big"}, [], response=usage)
    assert grade.reason == "cost 0.14 over 0.001"
    several = check({"max_cost": 1}, [], response=usage)
    assert several.passed and not several.errored and NO_MODEL in several.reason
    single = grade_run(
        "budget",
        {"max_cost": 0.01},
        [],
        suite_config={"prices": {"small": {"input": 1, "output": 4}}},
        response=usage,
    )
    assert single.reason == "cost 0.014 over 0.01"


def test_an_unknown_cost_is_not_checked_and_says_so_with_the_fix() -> None:
    """Before: a model without a price made the budget raise, so the run became an error
    row (and, then, its other checks, policy included, were dropped)."""
    grade = check({"max_cost": 1, "max_steps": 2}, [model(10, 1, "unpriced")])
    assert grade.passed and not grade.errored and grade.score == 1.0
    assert grade.reason == (
        "within budget (1 check(s)); cost unknown, max_cost not checked: no price for model "
        "'unpriced': add it to the suite's prices: ({unpriced: {input: 0.15, output: 0.6}}, "
        "per million tokens)"
    )
    assert grade.metadata == {"unknown": ["max_cost"]}
    over = check({"max_cost": 1, "max_steps": 0}, [model(10, 1, "unpriced")])
    assert not over.passed and over.reason.startswith("steps 1 over 0; cost unknown")
    alone = grade_run("budget", {"max_cost": 1}, [tool("a")])
    assert alone.passed and alone.metadata == {"unknown": ["max_cost"]}
    assert NO_MODEL in alone.reason


def test_a_prices_entry_makes_an_unknown_cost_known() -> None:
    """The fix the reason names: a prices: entry for the model, its tokens counted when the
    run reported none."""
    steps = [Step("model", "GenericFakeChatModel"), tool("a")]
    unknown = grade_run("budget", {"max_cost": 0.01}, steps, prompt="hi", output="hello")
    assert "no price for model 'GenericFakeChatModel'" in unknown.reason
    priced = grade_run(
        "budget",
        {"max_cost": 0.01},
        steps,
        prompt="hi",
        output="hello",
        suite_config={"prices": {"GenericFakeChatModel": {"input": 0, "output": 0}}},
    )
    assert priced.passed and priced.reason == "within budget (1 check(s))"
    assert "unknown" not in priced.metadata


def test_latency_reads_the_suites_one_source() -> None:
    """The harness's wall time by default, the agent's report with `latency: agent`; the
    reason names the source. An agent that reported nothing is measured by the wall."""
    reported = {"latency_ms": 9100.0}
    assert check({"max_latency_ms": 6000}, response=reported, latency_ms=461.0).passed
    grade = check({"max_latency_ms": 6000}, response=reported, latency_source="agent")
    assert grade.reason == "latency (agent) 9100 ms over 6000 ms"
    grade = check({"max_latency_ms": 6000}, latency_ms=6500.0, latency_source="agent")
    assert grade.reason == "latency (agent) 6500 ms over 6000 ms"
    assert check({"max_latency_ms": 6000}, latency_ms=5000.0).passed
    assert check({"max_latency_ms": 6000}, latency_ms=6500.0).reason == (
        "latency (wall) 6500 ms over 6000 ms"
    )


@pytest.mark.parametrize("source", ["wall", "agent"])
def test_latency_assertion_reads_the_reported_latency_whatever_the_source(source: str) -> None:
    """promptfoo's `latency` assertion reads the provider's latencyMs, so it does not follow
    the suite's `gates.latency` as the budget grader does."""
    reported = {"latency_ms": 9100.0}
    budget = check({"max_latency_ms": 6000}, response=reported, latency_source=source)
    latency = grade_run(
        "latency",
        None,
        [],
        response=reported,
        latency_ms=461.0,
        threshold=6000,
        latency_source=source,
    )
    assert budget.passed == (source == "wall")
    assert not latency.passed
    assert latency.reason == "Latency 9100ms is greater than threshold 6000ms"
    unreported = grade_run(
        "latency", None, [], latency_ms=6500.0, threshold=6000, latency_source=source
    )
    assert unreported.reason == "Latency 6500ms is greater than threshold 6000ms"


def test_stop_reason() -> None:
    grade = check({"stop_reason": "done"}, response={"stop_reason": "budget_exhausted"})
    assert grade.reason == "stop reason budget_exhausted, expected done"
    either = {"stop_reason": ["done", "approval_required"]}
    assert check(either, response={"stop_reason": "approval_required"}).passed
    assert check({"stop_reason": "done"}).reason == "stop reason unknown, expected done"


def test_every_exceeded_budget_is_listed_and_scored() -> None:
    value = {
        "max_steps": 6,
        "max_tool_calls": 2,
        "max_cost": 0.08,
        "max_latency_ms": 6000,
        "stop_reason": "done",
    }
    response = {"cost": 0.132, "latency_ms": 9100.0, "stop_reason": "done"}
    grade = check(value, response=response, latency_source="agent")
    assert grade.reason == (
        "tool calls 3 over 2; cost 0.132 over 0.08; latency (agent) 9100 ms over 6000 ms"
    )
    assert grade.score == pytest.approx(2 / 5)
    assert not grade.policy_violation


def test_invalid_values_are_errors() -> None:
    assert check({"max_stpes": 3}).errored
    assert check({}).errored
    assert check({"max_cost": "cheap"}).errored
    assert grade_run("budget", 6, RUN).errored


def test_tokens_are_counted_when_nobody_reports_them() -> None:
    from evals.common.tokens import count_tokens

    prompt, output = "¿Cuál fue el cierre de BUSI el 2024-03-15?", "El cierre fue 26,19."
    counted_in, counted_out = count_tokens(prompt), count_tokens(output)
    assert counted_in > 5 and counted_out > 5
    within = grade_run(
        "budget",
        {"max_input_tokens": counted_in, "max_output_tokens": counted_out},
        [tool("precio")],
        prompt=prompt,
        output=output,
    )
    assert within.passed, within.reason
    over = grade_run(
        "budget", {"max_tokens": counted_in + counted_out - 1}, prompt=prompt, output=output
    )
    assert not over.passed
    assert over.reason == f"tokens {counted_in + counted_out} over {counted_in + counted_out - 1}"
    reported = grade_run(
        "budget",
        {"max_tokens": 3},
        prompt=prompt,
        output=output,
        response={"token_usage": {"prompt": 1, "completion": 1, "total": 2}},
    )
    assert reported.passed
