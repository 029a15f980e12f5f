"""Graders of the path the agent took: which tools, in what order, with which arguments.

``trajectory:tool-used``, ``trajectory:tool-sequence``, ``trajectory:step-count`` and
``trajectory:tool-args-match`` follow promptfoo 0.121 (glob tool matchers, min/max counts,
``in_order``/``exact`` sequences, ``partial``/``exact`` arguments with ``ignore`` and
``defaults``); ``tool-call-f1`` is promptfoo's set F1 of tool names. ``trajectory:match``
compares the tool calls with a reference trajectory (see evals.graders.trajectory_match).
"""

from __future__ import annotations

import json
from typing import Any

from evals.graders.base import GradeContext, GraderError, scored, verdict
from evals.graders.contracts import suite_contracts
from evals.graders.registry import register
from evals.graders.trajectory_match import (
    ARGS_MODES,
    Call,
    ExpectedCall,
    align,
    name_matches,
    value_matches,
)
from evals.model.results import Grade
from evals.model.trajectory import Step, tool_calls


def _label(step: Step) -> str:
    return f"{step.kind}:{step.name}"


def _labels(steps: list[Step]) -> str:
    return ", ".join(_label(s) for s in steps) or "(none)"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _pattern(matcher: Any, kind: str) -> str:
    """The name pattern of a promptfoo trajectory matcher (a string or {name|pattern})."""
    if isinstance(matcher, str):
        return matcher
    if isinstance(matcher, dict) and (matcher.get("pattern") or matcher.get("name")):
        return str(matcher.get("pattern") or matcher.get("name"))
    raise GraderError(f"{kind}: each tool matcher must be a name or have a name or pattern")


def _count_bounds(value: dict[str, Any], kind: str) -> tuple[int | None, int | None]:
    bounds = []
    for key in ("min", "max"):
        bound = value.get(key)
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
            raise GraderError(f"{kind}: {key} must be an integer")
        bounds.append(bound)
    return bounds[0], bounds[1]


def _range_text(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"expected {low}-{high}"
    if low is not None:
        return f"expected at least {low}"
    return f"expected at most {high}"


@register("trajectory:tool-used", layer="trajectory", promptfoo=True)
def tool_used(ctx: GradeContext) -> Grade:
    """The agent called each named tool (list form), or one tool between min and max times."""
    kind = "trajectory:tool-used"
    calls = tool_calls(ctx.trajectory)
    value = ctx.value
    if isinstance(value, dict):
        pattern = _pattern(value, kind)
        low, high = _count_bounds(value, kind)
        low = 1 if low is None else low
        matching = [s for s in calls if name_matches(s.name, pattern)]
        count = len(matching)
        ok = count >= low and (high is None or count <= high)
        message = f"Matched tool {pattern!r} {count} time(s) ({_range_text(low, high)})"
        return verdict(ctx, ok, message, f"{message}. Actual tools: {_labels(calls)}")
    if isinstance(value, str):
        patterns = [value]
    elif isinstance(value, list) and value:
        patterns = [_pattern(v, kind) for v in value]
    else:
        raise GraderError(f"{kind}: value must be a tool name, a list of names or a mapping")
    missing = [p for p in patterns if not any(name_matches(s.name, p) for s in calls)]
    used = [p for p in patterns if p not in missing]
    if ctx.inverse:
        passed = not used
        reason = (
            f"Forbidden tool(s) were not used: {', '.join(patterns)}"
            if passed
            else f"Forbidden tool(s) were used: {', '.join(used)}. Actual tools: {_labels(calls)}"
        )
        return Grade(passed, float(passed), reason, ctx.assertion.raw)
    return verdict(
        ctx,
        not missing,
        f"observed tool(s) {', '.join(patterns)}",
        f"Missing required tool(s): {', '.join(missing)}. Actual tools: {_labels(calls)}",
    )


@register("trajectory:tool-sequence", layer="trajectory", promptfoo=True)
def tool_sequence(ctx: GradeContext) -> Grade:
    """The tools were called in this order (``in_order``: a subsequence; ``exact``: only them)."""
    kind = "trajectory:tool-sequence"
    value = ctx.value
    if isinstance(value, list):
        mode, steps = "in_order", value
    elif isinstance(value, dict):
        mode, steps = value.get("mode", "in_order"), value.get("steps") or []
    else:
        raise GraderError(f"{kind}: value must be a list of tools or a mapping with steps")
    if mode not in ("in_order", "exact"):
        raise GraderError(f"{kind}: mode must be in_order or exact, got {mode!r}")
    patterns = [_pattern(s, kind) for s in steps]
    if not patterns:
        raise GraderError(f"{kind}: at least one expected step is required")
    calls = tool_calls(ctx.trajectory)
    if mode == "exact":
        ok = len(calls) == len(patterns) and all(
            name_matches(s.name, p) for s, p in zip(calls, patterns, strict=True)
        )
        failure = (
            f"Expected exact tool sequence of {', '.join(patterns)}, "
            f"but actual tools were {_labels(calls)}"
        )
    else:
        position = 0
        for step in calls:
            if position < len(patterns) and name_matches(step.name, patterns[position]):
                position += 1
        ok = position == len(patterns)
        missing = patterns[position] if position < len(patterns) else ""
        failure = (
            f"Expected tool {missing!r} was not observed in order. Actual tools: {_labels(calls)}"
        )
    return verdict(ctx, ok, f"tool sequence {', '.join(patterns)} observed ({mode})", failure)


@register("trajectory:step-count", layer="trajectory", promptfoo=True)
def step_count(ctx: GradeContext) -> Grade:
    """The number of steps, optionally filtered by kind (``type``) and name, is within min/max."""
    kind = "trajectory:step-count"
    value = ctx.value
    if not isinstance(value, dict):
        raise GraderError(f"{kind}: value must be a mapping with min and/or max")
    low, high = _count_bounds(value, kind)
    if low is None and high is None:
        raise GraderError(f"{kind}: value must include min or max")
    kinds = value.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    pattern = value.get("pattern") or value.get("name")
    matching = [
        s
        for s in ctx.trajectory
        if (not kinds or s.kind in kinds) and (not pattern or name_matches(s.name, str(pattern)))
    ]
    count = len(matching)
    ok = (low is None or count >= low) and (high is None or count <= high)
    filters = [f"type={'|'.join(kinds)}"] if kinds else []
    filters += [f"pattern={pattern}"] if pattern else []
    where = f" for {', '.join(filters)}" if filters else ""
    message = f"Matched {count} trajectory step(s){where} ({_range_text(low, high)})"
    return verdict(ctx, ok, message, message)


def _ignored(key: str, entry: str) -> bool:
    """promptfoo's matchesIgnoreKey: the exact name, or a glob (case-insensitive) with * or ?."""
    return entry == key or (("*" in entry or "?" in entry) and name_matches(key, entry))


def _without(args: Any, ignore: list[str], defaults: dict[str, Any] | None) -> Any:
    """Arguments without the ignored names and those equal to their defaults (strictly, as
    JavaScript's isDeepStrictEqual: `true` is not `1`)."""
    if not isinstance(args, dict):
        return args
    return {
        key: value
        for key, value in args.items()
        if not any(_ignored(key, entry) for entry in ignore)
        and not (defaults is not None and key in defaults and value_matches(value, defaults[key]))
    }


def _partial(actual: Any, expected: Any) -> bool:
    """promptfoo's partial match: expected keys present and equal, lists element-wise."""
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_partial(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _partial(actual[key], item) for key, item in expected.items()
        )
    return value_matches(actual, expected)


@register("trajectory:tool-args-match", layer="trajectory", promptfoo=True)
def tool_args_match(ctx: GradeContext) -> Grade:
    """Some call of the tool had these arguments (``partial`` or ``exact``; ignore, defaults)."""
    kind = "trajectory:tool-args-match"
    value = ctx.value
    if not isinstance(value, dict):
        raise GraderError(f"{kind}: value must be a mapping")
    pattern = _pattern(value, kind)
    expected = value["args"] if "args" in value else value.get("arguments")
    if expected is None:
        raise GraderError(f"{kind}: value must include args or arguments")
    mode = value.get("mode", "partial")
    if mode not in ("partial", "exact"):
        raise GraderError(f"{kind}: mode must be partial or exact, got {mode!r}")
    defaults = value.get("defaults")
    if defaults is not None and not isinstance(defaults, dict):
        raise GraderError(f"{kind}: defaults must map argument names to default values")
    ignore = value.get("ignore") or []
    ignore = [ignore] if isinstance(ignore, str) else [str(entry) for entry in ignore]
    calls = [s for s in tool_calls(ctx.trajectory) if name_matches(s.name, pattern)]
    wanted = _without(expected, ignore, None)

    def matches(step: Step) -> bool:
        actual = _without(step.arguments, ignore, defaults)
        return value_matches(actual, wanted) if mode == "exact" else _partial(actual, wanted)

    hit = next((s for s in calls if s.arguments is not None and matches(s)), None)
    observed = ", ".join(_json(s.arguments) for s in calls if s.arguments is not None)
    if not calls:
        failure = (
            f"No tool call matched {pattern!r}. Actual tools: {_labels(tool_calls(ctx.trajectory))}"
        )
    else:
        failure = (
            f"No call to tool {pattern!r} matched expected arguments ({mode}): "
            f"{_json(expected)}. Observed args: {observed or '(none)'}"
        )
    success = f"tool {pattern!r} called with arguments matching {_json(expected)} ({mode})"
    return verdict(ctx, hit is not None, success, failure)


def _check_args_mode(mode: Any) -> Any:
    if mode not in ARGS_MODES:
        raise GraderError(
            f"trajectory:match: argument mode {mode!r} is not one of {', '.join(ARGS_MODES)}"
        )
    return mode


def _expected_calls(value: dict[str, Any]) -> list[ExpectedCall]:
    kind = "trajectory:match"
    default_mode = value.get("args", "exact")
    per_tool = value.get("tool_args") or {}
    for mode in [default_mode, *per_tool.values()]:
        _check_args_mode(mode)
    entries = value.get("calls", value.get("steps"))
    if not isinstance(entries, list):
        raise GraderError(f"{kind}: value must list the reference calls under calls")
    expected = []
    for entry in entries:
        name = _pattern(entry, kind)
        args = entry.get("args", entry.get("arguments")) if isinstance(entry, dict) else None
        if args is not None and not isinstance(args, dict):
            raise GraderError(f"{kind}: arguments of {name!r} must be a mapping")
        mode = entry.get("args_mode") if isinstance(entry, dict) else None
        mode = _check_args_mode(mode or per_tool.get(name, default_mode))
        expected.append(ExpectedCall(name, args, mode))
    return expected


@register("trajectory:match", layer="trajectory")
def trajectory_match(ctx: GradeContext) -> Grade:
    """The tool calls match a reference trajectory (strict, unordered, subset or superset)."""
    value = ctx.value
    if isinstance(value, list):
        value = {"calls": value}
    if not isinstance(value, dict):
        raise GraderError("trajectory:match: value must be a list of calls or a mapping")
    options = {**(ctx.assertion.config or {}), **value}
    expected = _expected_calls(options)
    steps = tool_calls(ctx.trajectory)
    actual = [Call(s.name, s.arguments or {}) for s in steps]
    contracts = suite_contracts(ctx.suite_config, options.get("tools"))
    result = align(actual, expected, options.get("mode", "strict"), contracts)
    threshold = ctx.assertion.threshold
    passed = result.passed if threshold is None else result.score >= threshold
    details = [f"{result.mode} match {len(result.pairs)}/{len(expected)} reference call(s)"]
    if result.unmatched_expected:
        details.append(
            "reference calls not made: "
            + ", ".join(
                f"{expected[j].name}{_json(expected[j].args) if expected[j].args else ''}"
                for j in result.unmatched_expected
            )
        )
    if result.unmatched_actual:
        details.append(
            "calls outside the reference: "
            + ", ".join(
                f"{steps[i].name}{_json(steps[i].arguments)}" for i in result.unmatched_actual
            )
        )
    if result.mode == "strict" and len(actual) != len(expected):
        details.append(f"{len(actual)} call(s) made, {len(expected)} expected")
    grade = scored(ctx, result.score, passed, "; ".join(details))
    grade.metadata["pairs"] = result.pairs
    return grade


def _names_in_output(output: Any) -> set[str]:
    """Tool names in a provider output (OpenAI tool_calls, Anthropic tool_use, Gemini calls)."""
    if isinstance(output, str):
        try:
            return _names_in_output(json.loads(output))
        except json.JSONDecodeError:
            names: set[str] = set()
            for line in output.splitlines():
                if line.strip().startswith(("{", "[")):
                    names |= _names_in_output(line.strip())
            return names
    if isinstance(output, list):
        return set().union(*(_names_in_output(item) for item in output)) if output else set()
    if not isinstance(output, dict):
        return set()
    if isinstance(output.get("tool_calls"), list):
        return _names_in_output(output["tool_calls"])
    for key in ("function", "functionCall"):
        if isinstance(output.get(key), dict) and isinstance(output[key].get("name"), str):
            return {output[key]["name"]}
    calls = (output.get("toolCall") or {}).get("functionCalls")
    if isinstance(calls, list):
        return _names_in_output(calls)
    return {output["name"]} if isinstance(output.get("name"), str) else set()


@register("tool-call-f1", layer="trajectory", promptfoo=True)
def tool_call_f1(ctx: GradeContext) -> Grade:
    """F1 between the set of expected tool names and the set of tools called (threshold 1)."""
    value = ctx.value
    if isinstance(value, str):
        expected = {part.strip() for part in value.split(",") if part.strip()}
    elif isinstance(value, list):
        expected = {str(v) for v in value}
    else:
        raise GraderError("tool-call-f1: value must be a list of tool names or a comma list")
    if not expected:
        raise GraderError("tool-call-f1: at least one expected tool name is required")
    steps = tool_calls(ctx.trajectory)
    actual = {s.name for s in steps} if steps else _names_in_output(ctx.output)
    hits = len(expected & actual)
    precision = hits / len(actual) if actual else 0.0
    recall = hits / len(expected)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    threshold = 1.0 if ctx.assertion.threshold is None else ctx.assertion.threshold
    passed = (f1 >= threshold) != ctx.inverse
    summary = (
        f"Expected: [{', '.join(sorted(expected))}], "
        f"Called: [{', '.join(sorted(actual)) or '(none)'}]"
    )
    if passed:
        reason = (
            f"Tool Call F1: {f1:.3f} (precision={precision:.3f}, recall={recall:.3f}). {summary}"
        )
    else:
        reason = (
            f"Tool Call F1 score {f1:.3f} is {'above' if ctx.inverse else 'below'} threshold "
            f"{threshold:g}. {summary}. Precision={precision:.3f}, Recall={recall:.3f}"
        )
    return Grade(passed, f1, reason, ctx.assertion.raw)
