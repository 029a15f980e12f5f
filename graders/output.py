"""Deterministic checks of the final output: promptfoo's string assertions."""

from __future__ import annotations

import json
import re
from typing import Any

from evals.results import Grade
from graders.base import GradeContext, GraderError, verdict
from graders.registry import register


def _as_list(value: Any) -> list[str]:
    """promptfoo's list values: a YAML list, or a comma-separated string."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    raise GraderError(f"expected a list of strings, got {type(value).__name__}")


@register("equals")
def equals(ctx: GradeContext) -> Grade:
    """Output equals the value; objects compare as parsed JSON."""
    expected = ctx.value
    if isinstance(expected, (dict, list)):
        try:
            actual = json.loads(ctx.text) if isinstance(ctx.output, str) else ctx.output
        except json.JSONDecodeError:
            actual = ctx.text
        ok = actual == expected
    else:
        ok = ctx.text == str(expected)
    return verdict(
        ctx,
        ok,
        f"output equals {expected!r}",
        f"Expected output {expected!r} to equal {ctx.text!r}",
    )


@register("contains")
def contains(ctx: GradeContext) -> Grade:
    """Output contains the value (case-sensitive)."""
    needle = str(ctx.value)
    return verdict(
        ctx,
        needle in ctx.text,
        f"output contains {needle!r}",
        f"Expected output to contain {needle!r}",
    )


@register("icontains")
def icontains(ctx: GradeContext) -> Grade:
    """Output contains the value, ignoring case."""
    needle = str(ctx.value)
    ok = needle.lower() in ctx.text.lower()
    return verdict(ctx, ok, f"output contains {needle!r}", f"Expected output to contain {needle!r}")


@register("contains-any", "icontains-any")
def contains_any(ctx: GradeContext) -> Grade:
    """Output contains at least one of the values."""
    fold = ctx.assertion.base_type.startswith("i")
    text = ctx.text.lower() if fold else ctx.text
    needles = _as_list(ctx.value)
    ok = any((n.lower() if fold else n) in text for n in needles)
    return verdict(
        ctx, ok, f"output contains one of {needles}", f"Expected output to contain one of {needles}"
    )


@register("contains-all", "icontains-all")
def contains_all(ctx: GradeContext) -> Grade:
    """Output contains every one of the values."""
    fold = ctx.assertion.base_type.startswith("i")
    text = ctx.text.lower() if fold else ctx.text
    missing = [n for n in _as_list(ctx.value) if (n.lower() if fold else n) not in text]
    return verdict(
        ctx,
        not missing,
        "output contains all values",
        f"Expected output to contain all of {missing}",
    )


@register("starts-with")
def starts_with(ctx: GradeContext) -> Grade:
    """Output starts with the value."""
    prefix = str(ctx.value)
    return verdict(
        ctx,
        ctx.text.startswith(prefix),
        f"output starts with {prefix!r}",
        f"Expected output to start with {prefix!r}",
    )


@register("regex")
def regex(ctx: GradeContext) -> Grade:
    """Output matches the regular expression anywhere."""
    try:
        pattern = re.compile(str(ctx.value))
    except re.error as exc:
        raise GraderError(f"invalid regular expression {ctx.value!r}: {exc}") from None
    ok = pattern.search(ctx.text) is not None
    return verdict(
        ctx, ok, f"output matches {ctx.value!r}", f"Expected output to match regex {ctx.value!r}"
    )
