"""A run's cost and tokens: what the agent reported, else what its steps add up to, else
its tokens priced with the suite's `prices:` table over the list prices.

One rule for every reader: the runner works out each answered run's cost with it once
(what the store, the statistics, the gates and the reports read), and the `budget`
grader checks `max_cost` with it. A cost that cannot be worked out is unknown, never
zero: `RunCost.unknown` says why, naming the model without a price and the fix.

Tokens come from the agent's reported usage, else from the sum over steps; a run that
reported none is priced on its prompt and output counted with o200k_base (tiktoken's
encoding, as seed 000 counts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evals.model.results import AgentResponse, unknown_cost_reason
from evals.model.trajectory import Step, model_calls
from evals.vendors.prices import Price, PriceError, find_price, price_table


@dataclass(frozen=True, slots=True)
class RunCost:
    """A run's cost in currency units, or None and the model no price was found for (""
    when the run named none): `unknown` says why, with the fix."""

    amount: float | None
    unpriced: str | None = None

    @property
    def unknown(self) -> str | None:
        """Why the cost is unknown and what fixes it; None when it is known."""
        return None if self.unpriced is None else unknown_cost_reason(self.unpriced)


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


def counted_tokens(response: AgentResponse, prompt: str, output_text: str) -> tuple[float, float]:
    """(input, output) tokens of the run: reported or summed over steps, else counted from
    its prompt and output text."""
    tokens_in, tokens_out = input_tokens(response), output_tokens(response)
    if tokens_in is not None or tokens_out is not None:
        return tokens_in or 0.0, tokens_out or 0.0
    from evals.common.tokens import count_tokens

    counted_out = count_tokens(output_text) if response.output is not None else 0
    return float(count_tokens(prompt)), float(counted_out)


def suite_prices(suite_config: Mapping[str, Any]) -> dict[str, Price]:
    """The suite's `prices:` table as Prices (empty without one); PriceError when an entry
    is not a pair of rates."""
    table = suite_config.get("prices") or {}
    if not isinstance(table, Mapping):
        raise PriceError("the suite's prices must map model names to rates")
    return price_table(table)


def step_model(step: Step) -> str:
    """The model a model step called: its `metadata.model`, else its name."""
    return str(step.metadata.get("model") or step.name)


def _steps_cost(models: list[Step], others: list[float], prices: Mapping[str, Price]) -> RunCost:
    """The cost of a run whose every model step has a cost or tokens, priced per step."""
    total = sum(others)
    for step in models:
        if step.cost is not None:
            total += step.cost
            continue
        price = find_price(step_model(step), prices)
        if price is None:
            return RunCost(None, step_model(step))
        total += price.cost(step.input_tokens, step.output_tokens)
    return RunCost(total)


def _run_model(
    response: AgentResponse, models: list[Step], prices: Mapping[str, Price]
) -> str | None:
    """The one model a run's tokens are priced with: the response's `metadata.model`,
    else the one model its model steps called, else the only entry of `prices`."""
    named = response.metadata.get("model")
    if named:
        return str(named)
    called = {step_model(step) for step in models}
    if len(called) == 1:
        return called.pop()
    return next(iter(prices)) if len(prices) == 1 else None


def resolve_cost(
    response: AgentResponse,
    prices: Mapping[str, Price],
    *,
    prompt: str = "",
    output_text: str = "",
    model: str | None = None,
) -> RunCost:
    """The run's cost: reported; else its steps' costs, each model step without one priced
    from its tokens; else the run's tokens priced with `model` (or the one model the run
    names, see `_run_model`). `prices` is the suite's table; list prices fill the rest.
    `prompt` and `output_text` are counted when the run reported no tokens."""
    if response.cost is not None:
        return RunCost(response.cost)
    models = model_calls(response.trajectory)
    others = [s.cost for s in response.trajectory if s.kind != "model" and s.cost is not None]
    priced_steps = all(
        s.cost is not None or s.input_tokens is not None or s.output_tokens is not None
        for s in models
    )
    if models and priced_steps:
        return _steps_cost(models, others, prices)
    if not models and others:
        return RunCost(sum(others))
    name = model or _run_model(response, models, prices)
    if name is None:
        return RunCost(None, "")
    price = find_price(name, prices)
    if price is None:
        return RunCost(None, name)
    return RunCost(price.cost(*counted_tokens(response, prompt, output_text)))
