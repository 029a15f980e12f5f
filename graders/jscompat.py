"""JavaScript value semantics the promptfoo assertions rely on, reproduced in Python.

promptfoo stringifies outputs with `JSON.stringify`, interpolates numbers with `String()`,
formats scores with `toFixed`/`toPrecision` and measures strings in UTF-16 code units.
Matching those exactly keeps pass/fail, scores and reasons identical to promptfoo's.
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from evals.graders.base import GradeContext, GraderError
from evals.model.results import Grade


def _jsonable(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)`: compact separators, integral floats without `.0`."""
    return json.dumps(_jsonable(value), ensure_ascii=False, separators=(",", ":"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name} in JSON")


def json_parse(text: str) -> Any:
    """`JSON.parse`: strict JSON (no NaN or Infinity); raises ValueError when invalid."""
    return json.loads(text, parse_constant=_reject_constant)


def coerce_string(value: Any) -> str:
    """promptfoo's coerceString: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else js_stringify(value)


def js_string(value: Any) -> str:
    """`String(value)` for the values YAML can hold."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _number_string(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def to_fixed(value: float, digits: int) -> str:
    """`Number.prototype.toFixed`: exact binary value, ties away from zero."""
    if not math.isfinite(value):
        return _number_string(value)
    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def to_precision(value: float, digits: int) -> str:
    """`Number.prototype.toPrecision`: significant digits, exponent form when large/small."""
    if not math.isfinite(value):
        return _number_string(value)
    if value == 0:
        return "0" if digits == 1 else "0." + "0" * (digits - 1)
    exact = Decimal(value)
    exponent = exact.adjusted()
    rounded = exact.quantize(Decimal(1).scaleb(exponent - digits + 1), rounding=ROUND_HALF_UP)
    if rounded.adjusted() != exponent:
        exponent = rounded.adjusted()
        rounded = exact.quantize(Decimal(1).scaleb(exponent - digits + 1), rounding=ROUND_HALF_UP)
    if exponent < -6 or exponent >= digits:
        mantissa = rounded.scaleb(-exponent).quantize(Decimal(1).scaleb(1 - digits))
        return f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return f"{rounded:f}"


def utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of a string, as JavaScript indexes and measures it."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def invariant(condition: Any, message: str) -> None:
    """promptfoo's `invariant`: a malformed assertion value stops the grader."""
    if not condition:
        raise GraderError(f"Invariant failed: {message}")


def outcome(ctx: GradeContext, passed: bool, reason: str, score: float | None = None) -> Grade:
    """A promptfoo GradingResult: score 1/0 by verdict unless given, "Assertion passed" on pass."""
    return Grade(
        passed=passed,
        score=(1.0 if passed else 0.0) if score is None else float(score),
        reason="Assertion passed" if passed else reason,
        assertion=ctx.assertion.raw,
    )


def negation(ctx: GradeContext) -> str:
    """The "not " promptfoo inserts into failure reasons of inverted assertions."""
    return "not " if ctx.inverse else ""


def at_most(
    ctx: GradeContext, measured: float, threshold: float, subject: str, unit: str = ""
) -> Grade:
    """Pass when `measured` is at most `threshold` (above it, inverted), with promptfoo's
    failure reason "<subject> is greater than threshold <threshold><unit>" (the relation
    follows the assertion's inversion, not the measurement)."""
    passed = (measured <= threshold) != ctx.inverse
    relation = "less than or equal to" if ctx.inverse else "greater than"
    return outcome(ctx, passed, f"{subject} is {relation} threshold {js_string(threshold)}{unit}")
