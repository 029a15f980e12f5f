"""Where a suite checks cost, and the agents whose cost it can tell, before any run, it
cannot know.

A cost the harness cannot work out is unknown, never zero (`evals.graders.cost`). When
the suite checks cost (a `budget` with `max_cost`, a `cost` assertion, a cost gate, a
scorecard's cost penalty) and an agent's model has no price, the suite says so once: at
load for the agents that name their model (`openai:...`, `anthropic:...`), and in the
run's warnings for the others, once their runs showed it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evals.graders.cost import suite_prices
from evals.model.results import no_price
from evals.model.suite import Assertion, Suite
from evals.vendors.prices import PriceError, find_price, provider_price

_COST_GATES = ("max_cost_ratio", "max_cost_per_accepted", "budget_cost")
# Provider kinds whose id names the model they call: `openai:chat:gpt-4o`, `anthropic:x`.
_NAMED_MODEL_KINDS = ("openai:", "anthropic:")


def _budget_checks_cost(value: Any, config: dict[str, Any], defaults: Any) -> bool:
    layers = [defaults, config, value]
    return any(isinstance(layer, dict) and layer.get("max_cost") is not None for layer in layers)


def _assertions_check_cost(assertions: Iterable[Assertion | dict[str, Any]], suite: Suite) -> bool:
    defaults = suite.raw.get("budget")
    for assertion in assertions:
        if isinstance(assertion, Assertion):
            kind, value, config = assertion.base_type, assertion.value, assertion.config
            raw = assertion.raw
        elif isinstance(assertion, dict):
            kind = str(assertion.get("type") or "").removeprefix("not-")
            value, config, raw = assertion.get("value"), assertion.get("config") or {}, assertion
        else:
            continue
        if kind == "cost":
            return True
        if kind == "budget" and _budget_checks_cost(value, config, defaults):
            return True
        nested = raw.get("assert") if kind == "assert-set" else None
        if isinstance(nested, list) and _assertions_check_cost(nested, suite):
            return True
    return False


def checks_cost(suite: Suite) -> bool:
    """True when the suite checks what runs cost: a `budget` with `max_cost` (its own or
    the suite's `budget:` default), a `cost` assertion, a cost gate (`max_cost_ratio`,
    `max_cost_per_accepted`, `budget_cost`, in any environment) or a scorecard's cost."""
    gates = suite.gates
    configs = [gates.to_dict(), *gates.environments.values()]
    if any(config.get(key) is not None for config in configs for key in _COST_GATES):
        return True
    if isinstance(suite.raw.get("scorecard"), dict):
        return True
    return any(_assertions_check_cost(case.asserts, suite) for case in suite.cases)


def _named_model(provider_id: str) -> str | None:
    """The model an `openai:`/`anthropic:` id names (its last part), None for other kinds."""
    if not provider_id.startswith(_NAMED_MODEL_KINDS):
        return None
    return provider_id.rsplit(":", 1)[-1] or None


def unpriced_agents(suite: Suite) -> list[str]:
    """One warning per agent that names a model without a price (no list price, no price in
    its config, no entry in the suite's `prices:`) in a suite that checks cost: its cost
    will be unknown, its `max_cost` unchecked and its cost gates undetermined."""
    if not checks_cost(suite):
        return []
    try:
        table = suite_prices(suite.raw)
        warnings = []
        for provider in suite.providers:
            model = _named_model(provider.id)
            if model is None or provider_price(model, provider.config) is not None:
                continue
            if find_price(model, table) is None:
                warnings.append(
                    f"agent {provider.label!r}: its cost will be unknown, {no_price(model)}"
                )
    except PriceError:
        return []  # refused at load with its own message
    return warnings
