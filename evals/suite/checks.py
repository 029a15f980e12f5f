"""Type, range and shape checks of suite values: each failure a SuiteError at the value's line.

Every numeric setting of a suite (repeats, concurrency, timeouts, thresholds, weights, gate
numbers, budgets, prices) goes through `number` with the `Bounds` it accepts (declared in
`evals.model.bounds`); every section goes through `mapping`, `sequence`, `text` or `flag`
for its shape; `known_keys` refuses a misspelt key with a did-you-mean. A message names the
dotted key, what it must be and what it is (`evaluateOptions.repeat must be a whole number
>= 1, not 0`), as pydantic reports a field; the fix shows a valid value. Booleans are not
numbers, NaN and infinities are refused, and a whole-number setting refuses fractions (3.0
counts as 3).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any

from evals.model.bounds import Bounds
from evals.model.errors import SuiteError
from evals.suite.yaml_lines import kind_name


def describe(value: Any) -> str:
    """The value as a message shows it: the value itself when short, else its kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN (not a number)" if math.isnan(value) else "an infinite number"
    if isinstance(value, (int, float)):
        shown = repr(value)
        return shown if len(shown) <= 40 else f"a number of {len(shown)} digits"
    if isinstance(value, str):
        return f"the text {value!r}" if len(value) <= 40 else "a long text"
    return kind_name(value)


def number(
    value: Any,
    name: str,
    bounds: Bounds,
    *,
    file: str | None,
    line: int | None,
    example: str | None = None,
    key: str | None = None,
) -> float:
    """`value` as a finite number within `bounds`, else a SuiteError at `line`.

    `name` is the dotted key (`evaluateOptions.repeat`) or a phrase naming the setting;
    `key` the YAML key the fix writes (by default the last part of `name`); `example` a
    valid value shown in the fix. Whole-number bounds return an int-valued float the
    caller may `int()`.
    """
    accepted = bounds.describe
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problem = f"{name} must be {accepted()}, not {describe(value)}"
        raise SuiteError(problem, file, line, _number_fix(name, accepted(), example, key))
    try:
        converted = float(value)
    except OverflowError:
        converted = math.inf
    if not math.isfinite(converted):
        problem = f"{name} must be a finite number ({accepted()}), not {describe(value)}"
        raise SuiteError(problem, file, line, _number_fix(name, accepted(), example, key))
    if bounds.integer and not converted.is_integer():
        problem = f"{name} must be a whole number, not {describe(value)}"
        raise SuiteError(problem, file, line, _number_fix(name, accepted(), example, key))
    if not bounds.holds(converted):
        problem = f"{name} must be {accepted()}, not {describe(value)}"
        raise SuiteError(problem, file, line, _number_fix(name, accepted(), example, key))
    return converted


def _number_fix(name: str, accepted: str, example: str | None, key: str | None) -> str:
    """The fix of a refused number (worked out only when a number is refused)."""
    key = key or name.rsplit(".", 1)[-1]
    if example is None:
        return f"set {key} to {accepted}"
    return f"write {key}: {example} ({accepted})"


def optional_number(
    value: Any,
    name: str,
    bounds: Bounds,
    *,
    file: str | None,
    line: int | None,
    example: str | None = None,
    key: str | None = None,
) -> float | None:
    """`number`, with null (an absent setting) kept as None."""
    if value is None:
        return None
    return number(value, name, bounds, file=file, line=line, example=example, key=key)


def _refuse_shape(
    value: Any, what: str, name: str, file: str | None, line: int | None, example: str
) -> SuiteError:
    return SuiteError(
        f"{name} must be {what}, not {describe(value)}", file, line, f"write {example}"
    )


def mapping(
    value: Any, name: str, *, file: str | None, line: int | None, example: str
) -> dict[Any, Any]:
    """`value` when it is a mapping, else a SuiteError showing `example` (the right form)."""
    if not isinstance(value, dict):
        raise _refuse_shape(value, "a mapping", name, file, line, example)
    return value


def sequence(
    value: Any, name: str, *, file: str | None, line: int | None, example: str
) -> list[Any]:
    """`value` when it is a list, else a SuiteError showing `example`."""
    if not isinstance(value, list):
        raise _refuse_shape(value, "a list", name, file, line, example)
    return value


def text(value: Any, name: str, *, file: str | None, line: int | None, example: str) -> str:
    """`value` when it is a string, else a SuiteError showing `example`."""
    if not isinstance(value, str):
        raise _refuse_shape(value, "a string", name, file, line, example)
    return value


def names(
    value: Any, name: str, *, file: str | None, line: int | None, numbers: bool = False
) -> list[str]:
    """A name or a list of names (tools, tags, error kinds) as a list of strings; with
    `numbers`, numbers count as names too (a tag `2024`)."""
    kinds: tuple[type, ...] = (str, int, float) if numbers else (str,)
    items = value if isinstance(value, list) else [value]
    if all(isinstance(v, kinds) and not isinstance(v, bool) for v in items):
        return [str(v) for v in items]
    key = name.rsplit(".", 1)[-1]
    raise _refuse_shape(value, "a name or a list of names", name, file, line, f"{key}: [a, b]")


def flag(value: Any, name: str, *, file: str | None, line: int | None) -> bool:
    """`value` when it is true or false (not the text 'yes'), else a SuiteError."""
    if not isinstance(value, bool):
        key = name.rsplit(".", 1)[-1]
        raise SuiteError(
            f"{name} must be true or false, not {describe(value)}",
            file,
            line,
            f"write {key}: true or {key}: false, unquoted",
        )
    return value


def known_keys(
    block: dict[Any, Any],
    known: Iterable[str],
    name: str,
    *,
    file: str | None,
    lines: dict[str, int] | None,
    line: int | None,
) -> None:
    """Refuse a key of `block` not in `known`, at its line, suggesting the closest known key.

    `lines` maps keys to their lines (a YAML mapping's `key_lines`); `line` is the block's.
    """
    allowed = sorted(known)
    for key in block:
        if key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SuiteError(
            f"unknown key {key!r} in {name}",
            file,
            (lines or {}).get(str(key), line),
            f"{hint}known keys: {', '.join(allowed)}",
        )
