"""The numbers a setting accepts (`Bounds`) and the bounds settings share.

Declared here, below every reader: `evals.suite.checks.number` checks a value against them,
and the fields of `evals.model.gates.GateConfig` name theirs in their rules.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Bounds:
    """The numbers a setting accepts: an optional low and high end, each included unless
    `open_low`/`open_high`, and whether only whole numbers are meant."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    integer: bool = False

    def holds(self, value: float) -> bool:
        """True when `value` (already a finite number) lies within the bounds."""
        if self.low is not None and (value <= self.low if self.open_low else value < self.low):
            return False
        return self.high is None or (value < self.high if self.open_high else value <= self.high)

    def describe(self) -> str:
        """What the bounds accept, in words: "a whole number >= 1", "a number between 0
        and 1", "a positive number", "a number > 0 and < 1"."""
        kind = "a whole number" if self.integer else "a number"
        closed = not (self.open_low or self.open_high)
        if self.low is not None and self.high is not None and closed:
            return f"{kind} between {_show(self.low)} and {_show(self.high)}"
        if self.low == 0 and self.open_low and self.high is None:
            return kind.replace("a ", "a positive ", 1)
        ends = []
        if self.low is not None:
            ends.append(f"{'>' if self.open_low else '>='} {_show(self.low)}")
        if self.high is not None:
            ends.append(f"{'<' if self.open_high else '<='} {_show(self.high)}")
        return f"{kind} {' and '.join(ends)}".rstrip()


COUNT = Bounds(low=1, integer=True)
"""Repeats, concurrency, minimum repeats: a whole number, at least 1."""
WHOLE = Bounds(low=0, integer=True)
"""Counts that may be zero (steps, tool calls, tokens)."""
NON_NEGATIVE = Bounds(low=0)
"""Ratios, delays, costs, prices, weights: finite and not below 0."""
POSITIVE = Bounds(low=0, open_low=True)
"""Amounts that must be above 0 (a budget cap)."""
FRACTION = Bounds(low=0, high=1)
"""Rates and margins: a fraction between 0 and 1."""
CONFIDENCE = Bounds(low=0, high=1, open_low=True, open_high=True)
"""A confidence level: strictly between 0 and 1."""
FINITE = Bounds()
"""Any finite number (assertion thresholds, whose unit depends on the assertion)."""


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)
