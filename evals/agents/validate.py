"""What an agent may return: checked once, where the response enters the harness.

A response that passes is safe for everything downstream: graders, budgets, the store's
JSON columns, the pipe to the store process, every report. Anything else raises
`MalformedResponse`, which the runner records as a `malformed` error row:

- cost and latency: finite, non-negative numbers (not booleans);
- token counts: whole, non-negative, below 2**63;
- the output: JSON values only (None, booleans, numbers, strings, lists, tuples, dicts),
  finite floats, integers of at most 4,000 digits, valid Unicode text (no lone
  surrogates), at most 32 MiB of text and 256 levels of nesting (a value that contains
  itself is nested without end);
- metadata, trajectory arguments and results: the same size, depth, integer and text
  limits; other objects there are kept as their string, as the store keeps them.

A plain string output is the common case and costs a length check and an ASCII test.
"""

from __future__ import annotations

import json
import math
from typing import Any

from evals.model.results import AgentResponse

MAX_TEXT = 32 << 20
MAX_DEPTH = 256
MAX_TOKENS = (1 << 63) - 1
MAX_INT_DIGITS = 4000
_INT_BITS = 13_280  # below this many bits an integer has fewer than 4,000 digits
_INT_LIMIT = 10**MAX_INT_DIGITS
# What a scalar or a container's item counts towards the size limit, besides its text.
_ITEM = 8
_SCALARS = (bool, float, type(None))
_NUMBERS = (int, float)
_INF = math.inf


class MalformedResponse(Exception):
    """The agent returned something that is not a provider response."""


def check_cost(value: Any, where: str = "cost") -> float | None:
    """`value` as a cost in dollars: None, or a finite non-negative number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, _NUMBERS):
        raise MalformedResponse(f"{where} must be a number, got {value!r:.40}")
    number = float(value) if isinstance(value, float) else _finite_int(value, where)
    if not math.isfinite(number) or number < 0:
        raise MalformedResponse(f"{where} must be a finite number of at least 0, got {value!r}")
    return number


def check_log_probs(value: Any) -> list[float] | None:
    """`value` as the token log-probabilities a provider reported (`logProbs`): None, or a
    list of finite numbers."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, _NUMBERS) and not isinstance(v, bool) and math.isfinite(v) for v in value
    ):
        raise MalformedResponse(f"logProbs must be a list of finite numbers, got {value!r:.40}")
    return [float(v) for v in value]


def check_latency(value: Any) -> float | None:
    """`value` as a reported latency in milliseconds: None, or finite and non-negative."""
    return check_cost(value, "latencyMs")


def check_tokens(value: Any, where: str) -> int:
    """`value` as a token count: a whole number from 0 to 2**63 - 1."""
    if isinstance(value, bool) or not isinstance(value, _NUMBERS):
        raise MalformedResponse(f"{where} must be a whole number, got {value!r:.40}")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise MalformedResponse(f"{where} must be a whole number, got {value!r}")
        value = int(value)
    if not 0 <= value <= MAX_TOKENS:
        raise MalformedResponse(f"{where} must be from 0 to 2**63 - 1, got {_short_int(value)}")
    return value


def load_json(text: str | bytes, where: str) -> Any:
    """`json.loads(text)`, with nesting past what the parser can follow (Python's recursion
    limit, far beyond the 256 levels a response may hold) a MalformedResponse; text that is
    not JSON raises json.JSONDecodeError as usual."""
    try:
        return json.loads(text)
    except RecursionError:
        raise MalformedResponse(f"{where} is JSON nested too deeply to read") from None


def check_response(response: AgentResponse) -> None:
    """Raise MalformedResponse unless every field of `response` is within the limits above."""
    output = response.output
    if type(output) is str:
        if len(output) > MAX_TEXT:
            raise MalformedResponse(_too_big("output"))
        if not output.isascii():
            _check_text(output, "output")
    elif output is not None:
        _Walk("output", strict=True).value(output, 0)
    # each number is looked at closely only when it is not a plain value in range
    cost = response.cost
    if cost is not None and not (type(cost) is float and 0.0 <= cost < _INF):
        check_cost(cost)
    latency = response.latency_ms
    if latency is not None and not (type(latency) is float and 0.0 <= latency < _INF):
        check_latency(latency)
    for key, count in response.token_usage.items():
        if not (type(count) is int and 0 <= count <= MAX_TOKENS):
            check_tokens(count, f"tokenUsage.{key}")
    if response.metadata:
        _Walk("metadata", strict=False).value(response.metadata, 0)
    error = response.error
    if error is not None and not error.isascii():
        _check_text(error, "error")
    for index, step in enumerate(response.trajectory):
        _check_step(step, index)


def _check_step(step: Any, index: int) -> None:
    where = f"trajectory[{index}]"
    walk = _Walk(where, strict=False)
    for field in (step.arguments, step.result, step.metadata or None):
        if field is not None:
            walk.value(field, 0)
    check_cost(step.cost, f"{where}.cost")
    for name in ("input_tokens", "output_tokens"):
        count = getattr(step, name)
        if count is not None:
            check_tokens(count, f"{where}.{name}")


class _Walk:
    """One pass over a value: its depth, its size so far, what it may hold."""

    def __init__(self, where: str, *, strict: bool) -> None:
        self.where = where
        self.strict = strict
        self.size = 0

    def value(self, value: Any, depth: int) -> None:
        if isinstance(value, str):
            self.size += len(value)
            if not value.isascii():
                _check_text(value, self.where)
        elif isinstance(value, dict):
            self._nest(depth)
            for key, item in value.items():
                self._key(key)
                self.value(item, depth + 1)
        elif isinstance(value, list | tuple):
            self._nest(depth)
            for item in value:
                self.value(item, depth + 1)
        elif isinstance(value, int) and not isinstance(value, bool):
            self.size += _ITEM
            _finite_int(value, self.where)
        elif isinstance(value, _SCALARS):
            self.size += _ITEM
            if self.strict and isinstance(value, float) and not math.isfinite(value):
                raise MalformedResponse(f"{self.where} holds {value!r}, which JSON cannot hold")
        elif self.strict:
            raise MalformedResponse(
                f"{self.where} holds a {type(value).__name__}, which is not a JSON value "
                "(use strings, numbers, booleans, null, lists and objects)"
            )
        else:
            self.size += _ITEM
        if self.size > MAX_TEXT:
            raise MalformedResponse(_too_big(self.where))

    def _nest(self, depth: int) -> None:
        if depth >= MAX_DEPTH:
            raise MalformedResponse(
                f"{self.where} is nested deeper than {MAX_DEPTH} levels (or contains itself)"
            )
        self.size += _ITEM

    def _key(self, key: Any) -> None:
        if isinstance(key, str):
            self.size += len(key)
            if not key.isascii():
                _check_text(key, self.where)
        elif isinstance(key, int) and not isinstance(key, bool):
            _finite_int(key, self.where)
        elif not isinstance(key, _SCALARS):
            raise MalformedResponse(
                f"{self.where} has a key of type {type(key).__name__}; keys must be strings"
            )


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MalformedResponse(
            f"{where} holds a lone surrogate ({text[exc.start]!r} at {exc.start}), "
            "which is not valid Unicode text"
        ) from None


def _finite_int(value: int, where: str) -> int:
    if value.bit_length() > _INT_BITS and abs(value) >= _INT_LIMIT:
        raise MalformedResponse(
            f"{where} holds an integer of more than {MAX_INT_DIGITS} digits ({_short_int(value)})"
        )
    return value


def _short_int(value: int) -> str:
    if value.bit_length() <= 64:
        return str(value)
    return f"about 2**{value.bit_length() - 1}"


def _too_big(where: str) -> str:
    return f"{where} is larger than {MAX_TEXT >> 20} MiB"
