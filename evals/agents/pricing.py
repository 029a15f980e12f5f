"""List prices of common models, per token, for the cost of SDK-provider calls.

The figures are the vendors' public per-million-token list prices (as promptfoo 0.121
ships them). Unknown models cost None unless the provider config sets `cost` (both
directions), `inputCost` or `outputCost` per token, exactly like promptfoo.
"""

from __future__ import annotations

from typing import Any

_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5": (1.25, 10.0),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "o4-mini": (1.1, 4.4),
    "o3-mini": (1.1, 4.4),
    "o3": (2.0, 8.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4-20250514": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}


def list_price(model: str) -> tuple[float, float] | None:
    """(input, output) price per token of the longest known prefix of `model`."""
    name = model.rsplit("/", 1)[-1]
    matches = [prefix for prefix in _PER_MILLION if name.startswith(prefix)]
    if not matches:
        return None
    per_million = _PER_MILLION[max(matches, key=len)]
    return per_million[0] / 1e6, per_million[1] / 1e6


def call_cost(
    model: str, config: dict[str, Any], prompt_tokens: int | None, completion_tokens: int | None
) -> float | None:
    """Cost of one call: config overrides first, then the list price; None when unknown."""
    if prompt_tokens is None or completion_tokens is None:
        return None
    price = list_price(model)
    flat = config.get("cost")
    input_cost = config.get("inputCost", flat if flat is not None else price and price[0])
    output_cost = config.get("outputCost", flat if flat is not None else price and price[1])
    if input_cost is None or output_cost is None:
        return None
    return float(input_cost) * prompt_tokens + float(output_cost) * completion_tokens
