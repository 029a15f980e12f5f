"""YAML as promptfoo reads it: the YAML 1.2 core schema, on PyYAML's C parser.

PyYAML resolves plain scalars with YAML 1.1 rules (`yes`/`no`/`on` booleans, `12:30`
sexagesimal, `017` octal, `1_000` integers, `1e3` a string). promptfoo loads configs with
js-yaml's core schema plus timestamps and `<<` merge keys, so the same file means the
same values here: only `true`/`false` (three spellings) are booleans, `0o17` and `0x1F`
the only octal and hexadecimal forms, `1e3` a number, and integers beyond 2**53 become
floats, as every JavaScript number is one.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

# The largest integer a JavaScript number holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1

_RESOLVERS = (
    (_NULL, r"^(?:~|null|Null|NULL|)$", [*"~nN", ""]),
    (_BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    (_INT, r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        _FLOAT,
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
    (
        _TIMESTAMP,
        r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)"
        r"[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$",
        list("0123456789"),
    ),
    (_MERGE, r"^<<$", ["<"]),
)


class CoreLoader(_Base):  # type: ignore[misc, valid-type]
    """A safe loader that resolves plain scalars with the YAML 1.2 core schema."""

    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {}


for _tag, _pattern, _first in _RESOLVERS:
    CoreLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


_INT_DIGITS = 4000
"""Decimal integers longer than this read as floats (so far beyond 2**53 they are
infinite, as in JavaScript) without Python's int() digit limit."""


def js_integer(value: int) -> int | float:
    """An integer as a JavaScript number holds it: beyond 2**53 it is a float, beyond the
    largest float an infinity."""
    if abs(value) <= MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return js_integer(int(text[2:], 8))
    if text.startswith("0x"):
        return js_integer(int(text[2:], 16))
    if len(text) > _INT_DIGITS:  # beyond what int() reads: JavaScript's number is infinite
        return float(text)
    return js_integer(int(text))


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | str:
    text = str(loader.construct_scalar(node))
    lowered = text.lower()
    if lowered.endswith("inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered.endswith("nan"):
        return math.nan
    value = float(text)
    return text if math.isinf(value) else value  # js-yaml keeps an overflowing literal as text


CoreLoader.add_constructor(_INT, _construct_int)
CoreLoader.add_constructor(_FLOAT, _construct_float)


def load_yaml_text(text: str) -> Any:
    """Parse one YAML document with promptfoo's (js-yaml's) core schema."""
    return yaml.load(text, Loader=CoreLoader)
