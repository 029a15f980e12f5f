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


def _is_index(key: str) -> bool:
    """An array-index key, which JavaScript objects list first, in ascending order."""
    if not (key.isascii() and key.isdigit()) or (key[0] == "0" and key != "0"):
        return False
    return int(key) < 2**32 - 1


def _number(value: float | int) -> str:
    """A number as JSON.stringify writes it (non-finite ones are null)."""
    if isinstance(value, int) and abs(value) <= 2**53:
        return str(value)
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the largest double is Infinity in JavaScript
        return "null"
    return _number_string(number) if math.isfinite(number) else "null"


def _encode(value: Any, indent: int | None, depth: int) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        order = sorted((k for k in keys if _is_index(k)), key=int)
        order += [k for k in keys if not _is_index(k)]
        items = dict(zip(keys, value.values(), strict=True))
        colon = ": " if indent is not None else ":"
        parts = [
            f"{_encode(k, None, 0)}{colon}{_encode(items[k], indent, depth + 1)}" for k in order
        ]
        return _join(parts, "{", "}", indent, depth)
    if isinstance(value, (list, tuple)):
        return _join([_encode(v, indent, depth + 1) for v in value], "[", "]", indent, depth)
    return json.dumps(str(value), ensure_ascii=False)


def _join(parts: list[str], opening: str, closing: str, indent: int | None, depth: int) -> str:
    if not parts:
        return opening + closing
    if indent is None:
        return opening + ",".join(parts) + closing
    inner = "\n" + " " * (indent * (depth + 1))
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * (indent * depth) + closing


def js_stringify(value: Any, indent: int | None = None) -> str:
    """`JSON.stringify(value, null, indent)`: numbers as JavaScript writes them (integral
    floats without `.0`, `0.00001` not `1e-05`, integers beyond 2^53 as doubles), array-index
    keys first, compact separators (or `indent` spaces per level)."""
    return _encode(value, indent if indent else None, 0)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name} in JSON")


def json_parse(text: str) -> Any:
    """`JSON.parse`: strict JSON (no NaN or Infinity); raises ValueError when invalid."""
    return json.loads(text, parse_constant=_reject_constant)


def js_truthy(value: Any) -> bool:
    """JavaScript's truthiness for the values a config or a provider gives: false only for
    null, false, 0, NaN and the empty string (empty lists and objects are true)."""
    if isinstance(value, float):
        return not (value == 0 or value != value)
    if value is None or value is False or value == "":
        return False
    return not (type(value) is int and value == 0)


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


JS_WHITESPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    map(chr, range(0x2000, 0x200B))
)
"""The characters of JavaScript's `\\s` and `String.prototype.trim` (Python's `str.isspace`
also takes U+001C..U+001F and U+0085, and leaves U+FEFF)."""


def js_trim(text: str) -> str:
    """`String.prototype.trim`: what promptfoo strips from CSV cells and assertion values."""
    return text.strip(JS_WHITESPACE)
