"""The one price table and the one function that prices a model call.

`LIST_PRICES` holds the vendors' public list prices per million tokens (as promptfoo 0.121
ships them); a model is found by its longest known prefix (`gpt-4o-2024-08-06` costs what
`gpt-4o` costs). Suites and providers override it:

- a provider's config: `price: {input_per_mtok, output_per_mtok}`, or promptfoo's `cost`
  (per token, both directions), `inputCost` and `outputCost` (per token);
- a suite's `prices:` table: `{model: {input: 2.5, output: 10}}` per million tokens
  (`prompt`/`completion` are accepted for `input`/`output`).

`Price.cost` (through `call_cost`) is the one computation of a cost from token usage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

PER_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """Price of a model in currency units per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: float | None, output_tokens: float | None) -> float:
        """Cost of a call or a run with these token counts (an unknown count costs nothing)."""
        spent = (input_tokens or 0) * self.input_per_mtok + (
            output_tokens or 0
        ) * self.output_per_mtok
        return spent / PER_MILLION


LIST_PRICES: Mapping[str, Price] = {
    model: Price(*per_million)
    for model, per_million in {
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
    }.items()
}


class PriceError(ValueError):
    """A price given in a suite or a provider config that is not a pair of numbers."""


def _number(value: object) -> TypeGuard[int | float]:
    """A price: a finite number, not negative (booleans are not numbers)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and value >= 0
    except OverflowError:  # an int beyond a float
        return False


def find_price(model: str, table: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model` in the list prices overridden by `table`; None when unknown.

    An exact name wins, then the longest name the model starts with; a vendor prefix
    (`openai/gpt-4o`) is ignored.
    """
    prices = {**LIST_PRICES, **(table or {})}
    name = model.rsplit("/", 1)[-1]
    for candidate in (model, name):
        if candidate in prices:
            return prices[candidate]
    matches = [prefix for prefix in prices if name.startswith(prefix)]
    return prices[max(matches, key=len)] if matches else None


def _per_token(value: object, key: str) -> float | None:
    """A promptfoo per-token rate as a rate per million tokens."""
    if value is None:
        return None
    if not _number(value):
        raise PriceError(f"{key} must be a finite number >= 0 (per token), got {value!r:.40}")
    return float(value) * PER_MILLION


def _first(*rates: float | None) -> float | None:
    return next((rate for rate in rates if rate is not None), None)


def provider_price(model: str, config: Mapping[str, Any]) -> Price | None:
    """The price of a provider's calls: its config's `price`, else promptfoo's `inputCost`,
    `outputCost` and `cost` (per token) over the list price of `model`; None when unknown.

    Raises PriceError for a config price that is not numeric.
    """
    if config.get("price") is not None:
        return _per_million(config["price"], "input_per_mtok", "output_per_mtok", "price")
    listed = find_price(model)
    flat = _per_token(config.get("cost"), "cost")
    input_rate = _first(
        _per_token(config.get("inputCost"), "inputCost"),
        flat,
        None if listed is None else listed.input_per_mtok,
    )
    output_rate = _first(
        _per_token(config.get("outputCost"), "outputCost"),
        flat,
        None if listed is None else listed.output_per_mtok,
    )
    if input_rate is None or output_rate is None:
        return None
    return Price(input_rate, output_rate)


def _per_million(entry: object, input_key: str, output_key: str, what: str) -> Price:
    if not isinstance(entry, Mapping):
        raise PriceError(f"{what} must map {input_key} and {output_key} to numbers")
    rate_in = entry.get(input_key, entry.get("prompt"))
    rate_out = entry.get(output_key, entry.get("completion"))
    if not _number(rate_in) or not _number(rate_out):
        raise PriceError(f"{what} needs {input_key} and {output_key} rates, finite numbers >= 0")
    return Price(float(rate_in), float(rate_out))


def price_table(prices: Mapping[str, Any]) -> dict[str, Price]:
    """A suite's `prices:` table ({model: {input, output}} per million tokens) as Prices.

    Raises PriceError naming the model whose entry is not a pair of numbers.
    """
    return {
        str(model): _per_million(entry, "input", "output", f"the price of {model!r}")
        for model, entry in prices.items()
    }


def call_cost(
    price: Price | None, input_tokens: float | None, output_tokens: float | None
) -> float | None:
    """Cost of one call: None when the price or both token counts are unknown."""
    if price is None or (input_tokens is None and output_tokens is None):
        return None
    return price.cost(input_tokens, output_tokens)
