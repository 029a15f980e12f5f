"""The budget grader: steps, tool calls, tokens, cost, latency and the reason the agent stopped.

One assertion holds every limit of a case, e.g.
``{max_steps: 6, max_tool_calls: 4, max_cost: 0.08, max_latency_ms: 6000, stop_reason: done}``;
the suite's top-level ``budget:`` block gives defaults that config and value override.

- steps are the agent loop's iterations, i.e. model calls (every step counts when the
  trajectory records no model call);
- tokens come from the agent's reported usage, else from the sum over steps, else they are
  counted from the prompt and the output with o200k_base (tiktoken's encoding);
- cost is the run's cost as `evals.graders.cost` works it out: the agent's reported cost,
  else the sum of step costs, else tokens priced with the suite's ``prices:`` table (per
  model, per million input and output tokens) over the list prices of
  `evals.vendors.prices`. A cost that cannot be worked out (a model without a price) is
  unknown: ``max_cost`` is then not checked, the reason says so with the fix, the grade's
  ``metadata.unknown`` lists it, and the verdict rests on the other limits;
- latency is the run's one latency (`ctx.latency_ms`, from the source the suite's
  `gates.latency` names: the harness's wall time by default, or the agent's report), and
  the reason says which;
- ``stop_reason`` is one reason or a list (done, approval_required, budget_exhausted,
  max_steps, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from evals.graders.base import GradeContext, GraderError, scored
from evals.graders.cost import (
    RunCost,
    counted_tokens,
    input_tokens,
    output_tokens,
    resolve_cost,
    suite_prices,
    total_tokens,
)
from evals.graders.registry import register
from evals.model.results import AgentResponse, Grade
from evals.model.trajectory import model_calls, tool_calls
from evals.vendors.prices import Price, PriceError


@dataclass(frozen=True, slots=True)
class Limit:
    """One budget key: what it measures and how its value is printed."""

    label: str
    unit: str = ""
    money: bool = False

    def show(self, amount: float) -> str:
        """The amount as a reason prints it ("0.132", "9100 ms", "7")."""
        text = f"{amount:.6g}" if self.money else f"{round(amount)}"
        return f"{text} {self.unit}".rstrip()


LIMITS: dict[str, Limit] = {
    "max_steps": Limit("steps"),
    "max_tool_calls": Limit("tool calls"),
    "max_input_tokens": Limit("input tokens"),
    "max_output_tokens": Limit("output tokens"),
    "max_tokens": Limit("tokens"),
    "max_cost": Limit("cost", money=True),
    "max_latency_ms": Limit("latency", "ms"),
}


def with_counted_usage(ctx: GradeContext) -> AgentResponse:
    """The run's response, with tokens counted from its prompt and output when neither the
    agent nor its steps reported any (o200k_base, tiktoken's encoding, as seed 000 counts)."""
    response = ctx.response
    if input_tokens(response) is not None or output_tokens(response) is not None:
        return response
    prompt, completion = counted_tokens(response, ctx.prompt, ctx.text)
    usage = {"prompt": int(prompt), "completion": int(completion)}
    return replace(response, token_usage={**usage, "total": usage["prompt"] + usage["completion"]})


def measure(key: str, ctx: GradeContext) -> float | None:
    """The run's amount for one count or latency key (cost: `resolve_cost`)."""
    response = with_counted_usage(ctx) if "tokens" in key else ctx.response
    if key == "max_steps":
        models = model_calls(ctx.trajectory)
        return float(len(models) if models else len(ctx.trajectory))
    if key == "max_tool_calls":
        return float(len(tool_calls(ctx.trajectory)))
    if key == "max_input_tokens":
        return input_tokens(response)
    if key == "max_output_tokens":
        return output_tokens(response)
    if key == "max_tokens":
        return total_tokens(response)
    return ctx.latency_ms


def _cost(ctx: GradeContext, prices: Mapping[str, Price], model: Any) -> RunCost:
    return resolve_cost(
        ctx.response,
        prices,
        prompt=ctx.prompt,
        output_text=ctx.text,
        model=None if model is None else str(model),
    )


@register("budget", layer="operational")
def budget(ctx: GradeContext) -> Grade:
    """Pass when the run stays within every limit and stopped for an expected reason."""
    value = {} if ctx.value is None else ctx.value
    defaults = ctx.suite_config.get("budget") or {}
    if not isinstance(value, dict) or not isinstance(defaults, dict):
        raise GraderError("budget: value must be a mapping such as {max_steps: 6, max_cost: 0.08}")
    options = {**defaults, **(ctx.assertion.config or {}), **value}
    strange = sorted(set(options) - set(LIMITS) - {"stop_reason", "model"})
    if strange:
        raise GraderError(f"budget: unknown key(s) {strange}; known: {sorted(LIMITS)}, stop_reason")
    try:
        prices = suite_prices(ctx.suite_config)
    except PriceError as exc:
        raise GraderError(f"budget: {exc}") from None
    checks, failures = 0, []
    unknown: dict[str, str] = {}
    for key, limit in LIMITS.items():
        if options.get(key) is None:
            continue
        ceiling = options[key]
        if isinstance(ceiling, bool) or not isinstance(ceiling, (int, float)):
            raise GraderError(f"budget: {key} must be a number")
        if key == "max_cost":
            cost = _cost(ctx, prices, options.get("model"))
            if cost.amount is None:
                unknown[key] = f"cost unknown, max_cost not checked: {cost.unknown}"
                continue
            amount: float | None = cost.amount
        else:
            amount = measure(key, ctx)
        if amount is None:
            raise GraderError(f"budget: {limit.label} of the run is unknown, cannot check {key}")
        checks += 1
        if amount > ceiling:
            label = (
                f"{limit.label} ({ctx.latency_source})" if key == "max_latency_ms" else limit.label
            )
            failures.append(f"{label} {limit.show(amount)} over {limit.show(ceiling)}")
    expected = options.get("stop_reason")
    if expected is not None:
        allowed = [expected] if isinstance(expected, str) else [str(e) for e in expected]
        checks += 1
        if ctx.response.stop_reason not in allowed:
            failures.append(
                f"stop reason {ctx.response.stop_reason or 'unknown'}, "
                f"expected {' or '.join(allowed)}"
            )
    if not checks and not unknown:
        raise GraderError("budget: value sets no limit")
    reason = "; ".join(failures) if failures else f"within budget ({checks} check(s))"
    grade = scored(ctx, (checks - len(failures)) / checks if checks else 1.0, not failures, reason)
    if unknown:
        grade.reason = "; ".join([grade.reason, *unknown.values()])
        grade.metadata["unknown"] = sorted(unknown)
    return grade
