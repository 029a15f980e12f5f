"""Deterministic checks of the final output: promptfoo's string and response assertions.

Each grader reproduces the promptfoo 0.121 handler of the same name: the verdict, the
score, the failure reason wording and how `not-` changes both.
"""

from __future__ import annotations

import re
from collections.abc import Coroutine
from typing import Any

from evals.common import jsregex
from evals.common.jsengine import JavaScriptError, JavaScriptLimitError, regex_test
from evals.common.jsvalues import (
    JS_WHITESPACE,
    coerce_string,
    js_string,
    js_stringify,
    js_trim,
    json_parse,
    to_precision,
)
from evals.common.offload import off_loop
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import at_most, invariant, negation, outcome
from evals.graders.refusal import is_basic_refusal
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade, pick_latency


def output_string(ctx: GradeContext) -> str:
    """The output as promptfoo's string assertions see it (`JSON.stringify` for objects)."""
    return "" if ctx.output is None else coerce_string(ctx.output)


def _skip_separators(value: str, i: int) -> int:
    while i < len(value):
        while i < len(value) and value[i] in JS_WHITESPACE:
            i += 1
        if i >= len(value) or value[i] != ",":
            break
        i += 1
    return i


def _quoted_field(value: str, start: int) -> tuple[str, int]:
    i = start + 1
    field: list[str] = []
    while i < len(value):
        char = value[i]
        nxt = value[i + 1] if i + 1 < len(value) else ""
        if char == "\\" and nxt in ('"', "\\"):
            field.append(nxt)
            i += 2
        elif char == '"' and nxt == '"':
            field.append('"')
            i += 2
        elif char == '"':
            return "".join(field), i + 1
        else:
            field.append(char)
            i += 1
    raise GraderError("Invariant failed: Unterminated quoted field in contains assertion value")


def parse_comma_separated(value: str) -> list[str]:
    """promptfoo's parseCommaSeparatedValues: fields split on commas, `"..."` keeps commas.

    The contains-any family reads its string values with it, and so do `__expected` cells
    of CSV tests (promptfoo's parseCommaSeparatedAssertionValues is the same parser). A
    quote left open, or text after a closing quote, raises a GraderError.
    """
    fields: list[str] = []
    i = 0
    while i < len(value):
        i = _skip_separators(value, i)
        if i >= len(value):
            break
        if value[i] == '"':
            field, i = _quoted_field(value, i)
            while i < len(value) and value[i] in JS_WHITESPACE:
                i += 1
            invariant(
                i >= len(value) or value[i] == ",",
                "Expected comma after quoted field in contains assertion value",
            )
        else:
            end = value.find(",", i)
            end = len(value) if end < 0 else end
            field, i = js_trim(value[i:end]), end
        fields.append(field)
    return fields


def _contains_value(ctx: GradeContext) -> Any:
    value = assertion_value(ctx)
    ok = (isinstance(value, str) and value != "") or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    )
    invariant(ok, f'"{ctx.assertion.base_type}" assertion type must have a string or number value')
    return value


@register("contains", "icontains", layer="final", promptfoo=True)
def contains(ctx: GradeContext) -> Grade:
    """Output contains the value; `icontains` ignores case."""
    value = _contains_value(ctx)
    needle, text = js_string(value), output_string(ctx)
    if ctx.assertion.base_type == "icontains":
        needle, text = needle.lower(), text.lower()
    passed = (needle in text) != ctx.inverse
    return outcome(ctx, passed, f'Expected output to {negation(ctx)}contain "{js_string(value)}"')


def _list_value(ctx: GradeContext) -> list[Any]:
    kind = ctx.assertion.base_type
    value = assertion_value(ctx)
    invariant(value not in (None, "", 0, False), f'"{kind}" assertion type must have a value')
    if isinstance(value, str):
        value = parse_comma_separated(value)
    invariant(isinstance(value, list), f'"{kind}" assertion type must have an array value')
    return value


def _matcher(ctx: GradeContext) -> tuple[str, Any]:
    fold = ctx.assertion.base_type.startswith("i")
    text = output_string(ctx)
    text = text.lower() if fold else text

    def found(item: Any) -> bool:
        needle = js_string(item)
        return (needle.lower() if fold else needle) in text

    return text, found


@register("contains-any", "icontains-any", layer="final", promptfoo=True)
def contains_any(ctx: GradeContext) -> Grade:
    """Output contains at least one of the values (a list or a comma-separated string)."""
    values = _list_value(ctx)
    _, found = _matcher(ctx)
    passed = any(found(v) for v in values) != ctx.inverse
    joined = ", ".join(js_string(v) for v in values)
    return outcome(ctx, passed, f'Expected output to {negation(ctx)}contain one of "{joined}"')


@register("contains-all", "icontains-all", layer="final", promptfoo=True)
def contains_all(ctx: GradeContext) -> Grade:
    """Output contains every one of the values."""
    values = _list_value(ctx)
    _, found = _matcher(ctx)
    missing = [js_string(v) for v in values if not found(v)]
    passed = (not missing) != ctx.inverse
    joined = ", ".join(js_string(v) for v in values)
    return outcome(
        ctx,
        passed,
        f"Expected output to {negation(ctx)}contain all of [{joined}]. "
        f"Missing: [{', '.join(missing)}]",
    )


def _json_equal(expected: Any, actual: Any) -> bool:
    """`util.isDeepStrictEqual` over JSON values: 1 equals 1.0, True never equals 1."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            _json_equal(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _json_equal(a, b) for a, b in zip(expected, actual, strict=True)
        )
    if _is_number(expected) and _is_number(actual):
        return expected == actual
    return type(expected) is type(actual) and expected == actual


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@register("equals", layer="final", promptfoo=True)
def equals(ctx: GradeContext) -> Grade:
    """Output equals the value as a string; a mapping or list value compares as parsed JSON."""
    value = assertion_value(ctx)
    text = output_string(ctx)
    if isinstance(value, (dict, list)) or value is None:
        try:
            passed = _json_equal(value, json_parse(text)) != ctx.inverse
        except ValueError:
            passed = ctx.inverse
        shown = js_stringify(value)
    else:
        passed = (js_string(value) == text) != ctx.inverse
        shown = js_string(value)
    return outcome(ctx, passed, f'Expected output "{text}" to {negation(ctx)}equal "{shown}"')


@register("starts-with", layer="final", promptfoo=True)
def starts_with(ctx: GradeContext) -> Grade:
    """Output starts with the value."""
    value = assertion_value(ctx)
    invariant(value, '"starts-with" assertion type must have a string value')
    invariant(isinstance(value, str), '"starts-with" assertion type must have a string value')
    passed = output_string(ctx).startswith(value) != ctx.inverse
    return outcome(ctx, passed, f'Expected output to {negation(ctx)}start with "{value}"')


@register("regex", layer="final", promptfoo=True)
def regex(ctx: GradeContext) -> Grade | Coroutine[Any, Any, Grade]:
    """Output matches the regular expression anywhere, as JavaScript's `RegExp` matches.

    The pattern compiles as `new RegExp(value)` in the JavaScript sandbox, so its syntax
    and meaning are JavaScript's; one that does not compile fails this check only. A
    pattern Python matches the same way within a bounded number of steps (`jsregex`) is
    answered at once; any other runs off the event loop, within the sandbox's time and
    memory limits (a match that exceeds one raises, making the run an error row).
    """
    value = assertion_value(ctx)
    invariant(value, '"regex" assertion type must have a string value')
    invariant(isinstance(value, str), '"regex" assertion type must have a string value')
    text = output_string(ctx)
    answer = jsregex.search(value, text)
    if answer is None:
        return _regex_in_sandbox(ctx, value, text)
    return _regex_grade(ctx, value, answer)


async def _regex_in_sandbox(ctx: GradeContext, pattern: str, text: str) -> Grade:
    try:
        matched = await off_loop(regex_test, pattern, text)
    except JavaScriptLimitError:
        raise  # the run becomes an error row
    except JavaScriptError as exc:
        detail = f"Invalid regular expression: /{pattern}/: {exc.message}"
        return outcome(ctx, False, f"Invalid regex pattern: {detail}")
    return _regex_grade(ctx, pattern, matched)


def _regex_grade(ctx: GradeContext, pattern: str, matched: bool) -> Grade:
    passed = matched != ctx.inverse
    return outcome(ctx, passed, f'Expected output to {negation(ctx)}match regex "{pattern}"')


@register("is-refusal", layer="final", promptfoo=True)
def is_refusal(ctx: GradeContext) -> Grade:
    """Output is a refusal; a missing or empty output counts as one (score 0)."""
    passed = not ctx.inverse
    if not isinstance(ctx.output, str):
        reason = "No value provided, assumed to be a refusal"
        fail = "Expected output to not be a refusal"
        return Grade(passed, 0.0, reason if passed else fail, ctx.assertion.raw)
    if ctx.output.strip() == "":
        reason = "Empty response treated as refusal"
        fail = "Expected output to not be a refusal"
        return Grade(passed, 0.0, reason if passed else fail, ctx.assertion.raw)
    passed = is_basic_refusal(ctx.output) != ctx.inverse
    return outcome(ctx, passed, f"Expected output to {negation(ctx)}be a refusal")


_JS_SPACES = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")


def _count_words(text: str) -> int:
    """promptfoo's countWords: the output split on JavaScript's whitespace (`\\s`, which
    takes U+FEFF and not U+0085), empty pieces left out."""
    return len([w for w in _JS_SPACES.split(js_trim(text)) if w])


@register("word-count", layer="final", promptfoo=True)
def word_count(ctx: GradeContext) -> Grade:
    """Word count equals a number, or lies within `{min, max}`."""
    value = assertion_value(ctx)
    invariant(value is not None, '"word-count" assertion must have a value')
    count = _count_words(output_string(ctx))
    if isinstance(value, dict):
        low, high = value.get("min"), value.get("max")
        invariant(
            low is not None or high is not None,
            '"word-count" assertion object must have "min" and/or "max" properties',
        )
        if low is not None and high is not None:
            invariant(
                low <= high,
                f'"word-count" assertion: min ({js_string(low)}) must be less than or equal '
                f"to max ({js_string(high)})",
            )
            ok = low <= count <= high
            lo_s, hi_s = js_string(low), js_string(high)
            fail = (
                f"Expected word count to not be between {lo_s} and {hi_s}, but got {count}"
                if ctx.inverse
                else f"Word count {count} is not between {lo_s} and {hi_s}"
            )
        elif high is not None:
            ok = count <= high
            fail = (
                f"Expected word count to be greater than {js_string(high)}, but got {count}"
                if ctx.inverse
                else f"Word count {count} is greater than maximum {js_string(high)}"
            )
        elif low is not None:
            ok = count >= low
            fail = (
                f"Expected word count to be less than {js_string(low)}, but got {count}"
                if ctx.inverse
                else f"Word count {count} is less than minimum {js_string(low)}"
            )
    else:
        expected = _number(value)
        invariant(
            expected is not None,
            '"word-count" assertion value must be a number or an object with min/max properties',
        )
        ok = count == expected
        shown = js_string(expected)
        fail = (
            f"Expected word count to not equal {shown}, but got {count}"
            if ctx.inverse
            else f"Word count {count} does not equal expected {shown}"
        )
    return outcome(ctx, ok != ctx.inverse, fail)


def _number(value: Any) -> float | int | None:
    """`Number(value)` for numbers and numeric strings; None when not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    return None


@register("cost", layer="operational", promptfoo=True)
def cost(ctx: GradeContext) -> Grade:
    """The run's reported cost is at most `threshold`."""
    threshold = ctx.assertion.threshold
    if threshold is None:
        raise GraderError("Cost assertion must have a threshold")
    spent = ctx.response.cost
    if spent is None:
        raise GraderError("Cost assertion does not support providers that do not return cost")
    return at_most(ctx, spent, threshold, f"Cost {to_precision(spent, 2)}")


@register("latency", layer="operational", promptfoo=True)
def latency(ctx: GradeContext) -> Grade:
    """The run took at most `threshold` milliseconds.

    As promptfoo's evaluator, it reads the `latencyMs` the provider returned, and the
    harness's wall time only when the provider returned none, whatever latency the suite's
    `gates.latency` names for its budgets, statistics and gates: `ctx.latency_ms` is the
    wall time whenever no latency was reported. A response from a cache is graded the same
    way (promptfoo refuses only a latency it was never given).
    """
    threshold = ctx.assertion.threshold
    if threshold is None:
        raise GraderError("Latency assertion must have a threshold in milliseconds")
    took = pick_latency(ctx.latency_ms, ctx.response.latency_ms, "agent")
    return at_most(ctx, took, threshold, f"Latency {js_string(took)}ms", "ms")


@register("finish-reason", layer="final", promptfoo=True)
def finish_reason(ctx: GradeContext) -> Grade:
    """The provider's finish (stop) reason equals the value, ignoring case."""
    value = assertion_value(ctx)
    invariant(isinstance(value, str), '"finish-reason" assertion type must have a string value')
    actual = ctx.response.finish_reason
    if not actual:
        return outcome(ctx, ctx.inverse, "Provider did not supply stop/finish reason")
    passed = (value.lower() == actual.lower()) != ctx.inverse
    return outcome(
        ctx,
        passed,
        f'Expected finish reason {negation(ctx)}"{value}" but got "{actual}"',
    )
