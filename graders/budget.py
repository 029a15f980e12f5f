"""The budget grader: steps, tool calls, tokens, cost, latency and the reason the agent stopped.

One assertion holds every limit of a case, e.g.
``{max_steps: 6, max_tool_calls: 4, max_cost: 0.08, max_latency_ms: 6000, stop_reason: done}``;
the suite's top-level ``budget:`` block gives defaults that config and value override.

- steps are the agent loop's iterations, i.e. model calls (every step counts when the
  trajectory records no model call);
- tokens come from the agent's reported usage, else from the sum over steps, else they are
  counted from the prompt and the output with o200k_base (tiktoken's encoding);
- cost is the agent's reported cost, else the sum of step costs, else tokens priced with the
  suite's ``prices:`` table (per model, per million input and output tokens) over the list
  prices of `evals.vendors.prices`;
- latency is the run's one latency (`ctx.latency_ms`, from the source the suite's
  `gates.latency` names: the harness's wall time by default, or the agent's report), and
  the reason says which;
- ``stop_reason`` is one reason or a list (done, approval_required, budget_exhausted,
  max_steps, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from evals.graders.base import GradeContext, GraderError, scored
from evals.graders.registry import register
from evals.model.results import AgentResponse, Grade
from evals.model.trajectory import Step, model_calls, tool_calls
from evals.vendors.prices import Price, PriceError, call_cost, find_price, price_table


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


def _step_sum(steps: list[Step], read: Callable[[Step], float | None]) -> float | None:
    values = [read(s) for s in steps]
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def input_tokens(response: AgentResponse) -> float | None:
    """Input (prompt) tokens of the run, reported or summed over steps; None when unknown."""
    if "prompt" in response.token_usage:
        return float(response.token_usage["prompt"])
    return _step_sum(response.trajectory, lambda s: s.input_tokens)


def output_tokens(response: AgentResponse) -> float | None:
    """Output (completion) tokens of the run, reported or summed over steps; None when unknown."""
    if "completion" in response.token_usage:
        return float(response.token_usage["completion"])
    return _step_sum(response.trajectory, lambda s: s.output_tokens)


def total_tokens(response: AgentResponse) -> float | None:
    """All tokens of the run; None when neither the total nor both parts are known."""
    if "total" in response.token_usage:
        return float(response.token_usage["total"])
    parts = [input_tokens(response), output_tokens(response)]
    return None if None in parts else float(sum(p for p in parts if p is not None))


def _price(prices: Mapping[str, Price], model: str) -> Price:
    price = find_price(model, prices)
    if price is None:
        known = ", ".join(sorted(prices)) or "none"
        raise GraderError(
            f"budget: no price for model {model!r} (the suite's prices: {known}; "
            "no list price either)"
        )
    return price


def priced_cost(
    response: AgentResponse, prices: Mapping[str, Price], model: str | None = None
) -> float | None:
    """Cost from the suite's price table over the list prices: per model step when steps
    carry tokens, else for the run."""
    priced_steps = [
        s
        for s in model_calls(response.trajectory)
        if s.input_tokens is not None or s.output_tokens is not None
    ]
    if priced_steps:
        return sum(
            _price(prices, str(step.metadata.get("model") or step.name)).cost(
                step.input_tokens, step.output_tokens
            )
            for step in priced_steps
        )
    tokens_in, tokens_out = input_tokens(response), output_tokens(response)
    if tokens_in is None and tokens_out is None:
        return None
    model = model or response.metadata.get("model")
    if model is None:
        if not prices:
            return None
        if len(prices) != 1:
            raise GraderError("budget: several prices and no model; set model in the assertion")
        model = next(iter(prices))
    return call_cost(_price(prices, str(model)), tokens_in, tokens_out)


def run_cost(
    response: AgentResponse, prices: Mapping[str, Price], model: str | None = None
) -> float | None:
    """The run's cost: reported, else summed over steps, else priced; None when unknown."""
    if response.cost is not None:
        return response.cost
    summed = _step_sum(response.trajectory, lambda s: s.cost)
    return summed if summed is not None else priced_cost(response, prices, model)


def with_counted_usage(ctx: GradeContext) -> AgentResponse:
    """The run's response, with tokens counted from its prompt and output when neither the
    agent nor its steps reported any (o200k_base, tiktoken's encoding, as seed 000 counts)."""
    response = ctx.response
    if input_tokens(response) is not None or output_tokens(response) is not None:
        return response
    from evals.common.tokens import count_tokens

    prompt = count_tokens(ctx.prompt)
    completion = count_tokens(ctx.text) if response.output is not None else 0
    usage = {"prompt": prompt, "completion": completion, "total": prompt + completion}
    return replace(response, token_usage=usage)


def measure(
    key: str, ctx: GradeContext, prices: Mapping[str, Price], model: str | None
) -> float | None:
    """The run's amount for one budget key."""
    response = with_counted_usage(ctx) if "tokens" in key or key == "max_cost" else ctx.response
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
    if key == "max_cost":
        return run_cost(response, prices, model)
    return ctx.latency_ms


@register("budget")
def budget(ctx: GradeContext) -> Grade:
    """Pass when the run stays within every limit and stopped for an expected reason."""
    value = {} if ctx.value is None else ctx.value
    defaults = ctx.suite_config.get("budget") or {}
    if not isinstance(value, dict) or not isinstance(defaults, dict):
        raise GraderError("budget: value must be a mapping such as {max_steps: 6, max_cost: 0.08}")
    options = {**defaults, **(ctx.assertion.config or {}), **value}
    unknown = sorted(set(options) - set(LIMITS) - {"stop_reason", "model"})
    if unknown:
        raise GraderError(f"budget: unknown key(s) {unknown}; known: {sorted(LIMITS)}, stop_reason")
    table = ctx.suite_config.get("prices") or {}
    if not isinstance(table, dict):
        raise GraderError("budget: the suite's prices must map model names to rates")
    try:
        prices = price_table(table)
    except PriceError as exc:
        raise GraderError(f"budget: {exc}") from None
    checks, failures = 0, []
    for key, limit in LIMITS.items():
        if options.get(key) is None:
            continue
        ceiling = options[key]
        if isinstance(ceiling, bool) or not isinstance(ceiling, (int, float)):
            raise GraderError(f"budget: {key} must be a number")
        amount = measure(key, ctx, prices, options.get("model"))
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
    if not checks:
        raise GraderError("budget: value sets no limit")
    reason = "; ".join(failures) if failures else f"within budget ({checks} check(s))"
    return scored(ctx, (checks - len(failures)) / checks, not failures, reason)
