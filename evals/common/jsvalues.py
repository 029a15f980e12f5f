"""JavaScript value semantics promptfoo relies on, reproduced in Python.

promptfoo stringifies outputs with `JSON.stringify`, interpolates values with `String()`
(Nunjucks prints them the same way), formats scores with `toFixed`/`toPrecision` and
measures strings in UTF-16 code units. Matching those keeps pass/fail, scores, reasons
and rendered prompts identical to promptfoo's.
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


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


def js_stringify(value: Any, indent: int | None = None) -> str:
    """`JSON.stringify(value, null, indent)`: integral floats without `.0`, compact
    separators (or `indent` spaces per level)."""
    if indent is not None:
        return json.dumps(_jsonable(value), ensure_ascii=False, indent=indent)
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
        return str(value) if abs(value) <= 2**53 else _number_string(float(value))
    if isinstance(value, float):
        return _number_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _number_string(value: float) -> str:
    """`Number.prototype.toString()`: the shortest round-trip digits, placed as
    ECMAScript's Number::toString places them (plain up to 21 digits, else exponent)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = k + int(exponent)  # the decimal point sits after n digits
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


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
