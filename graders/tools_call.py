"""Checks of the calls an agent made: promptfoo's is-valid-openai-tools-call,
is-valid-function-call and skill-used.

is-valid-openai-tools-call validates OpenAI-format tool calls in the output against the
tools configured on the agent's provider (`config.tools`), with Ajv's error report;
is-valid-function-call (and its alias is-valid-openai-function-call) validates a legacy
OpenAI function call against `config.functions`, for the providers promptfoo can check
calls for; skill-used looks for skills in the response's `metadata.skillCalls`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.common.files import is_file_ref, split_ref
from evals.common.jsvalues import js_stringify, json_parse
from evals.common.templating import render_value
from evals.common.yaml12 import load_yaml_text
from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.graders.scripts import ScriptError, call_json, user_function
from evals.graders.structured import _ajv_message, compile_schema
from evals.graders.trace import matches_pattern
from evals.model.results import Grade

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_MCP_ERROR = re.compile(r"MCP Tool Error \(([^)]+)\): (.+)")
_MCP_RESULT = re.compile(r"MCP Tool Result \(([^)]+)\):")

# Ajv checks `type` first, then keywords for any type, then the keywords of the data's type,
# each group in the order its vocabulary defines them: the first failure is the one reported.
_AJV_ORDER = [
    "type",
    "$ref",
    "const",
    "enum",
    "not",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "additionalItems",
    "items",
    "contains",
    "maxProperties",
    "minProperties",
    "required",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
]
_NAMED_CHILDREN = {"properties", "patternProperties", "dependencies", "definitions", "$defs"}
_COMPARISONS = {"maximum": "<=", "minimum": ">=", "exclusiveMaximum": "<", "exclusiveMinimum": ">"}
_LIMITS = {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"}


def _schema_order(schema: Any, path: list[Any]) -> tuple[int, ...]:
    """Where a failing keyword sits in Ajv's evaluation order (lower is checked first)."""
    key: list[int] = []
    node = schema
    segments = iter(path)
    for segment in segments:
        key.append(_AJV_ORDER.index(segment) if segment in _AJV_ORDER else len(_AJV_ORDER))
        node = node.get(segment) if isinstance(node, dict) else None
        if segment in _NAMED_CHILDREN and isinstance(node, dict):
            child = next(segments, None)
            key.append(list(node).index(child) if child in node else 0)
            node = node.get(child)
    return tuple(key)


def _quoted_name(message: str) -> str:
    match = re.search(r"'([^']*)'", message)
    return match.group(1) if match else message


def _ajv_params(error: ValidationError) -> dict[str, Any]:
    keyword, expected = str(error.validator), error.validator_value
    if keyword == "type":
        return {"type": ",".join(expected) if isinstance(expected, list) else expected}
    if keyword == "required":
        return {"missingProperty": _quoted_name(error.message)}
    if keyword == "additionalProperties":
        return {"additionalProperty": _quoted_name(error.message)}
    if keyword == "enum":
        return {"allowedValues": expected}
    if keyword == "const":
        return {"allowedValue": expected}
    if keyword in _COMPARISONS:
        return {"comparison": _COMPARISONS[keyword], "limit": expected}
    if keyword in _LIMITS:
        return {"limit": expected}
    if keyword in {"pattern", "format", "multipleOf"}:
        return {keyword: expected}
    if keyword == "oneOf":
        return {"passingSchemas": None}
    return {}


def ajv_errors(schema: Any, instance: Any) -> list[dict[str, Any]]:
    """Ajv's `validate.errors` (first failure only, as Ajv reports without allErrors)."""
    errors = list(compile_schema(schema).iter_errors(instance))
    if not errors:
        return []
    error = min(errors, key=lambda e: _schema_order(schema, list(e.relative_schema_path)))
    path = "".join(f"/{p}" for p in error.absolute_path)
    return [
        {
            "instancePath": path,
            "schemaPath": "#/" + "/".join(str(p) for p in error.relative_schema_path),
            "keyword": str(error.validator),
            "params": _ajv_params(error),
            "message": _ajv_message(error).removeprefix(f"data{path} "),
        }
    ]


def _load_tools_file(ref: str, suite_root: Path) -> Any:
    path, function = split_ref(ref)
    if path.endswith(".py"):
        if not function:
            raise GraderError(
                f"Cannot load tools from {ref}\nPython files require a function name. "
                f"Use this format:\n  tools: file://{path}:get_tools"
            )
        try:
            loaded = call_json(user_function(ref, suite_root, function))
        except ScriptError as exc:
            raise GraderError(f"Failed to load tools from {ref}:\n{exc}") from None
        if not isinstance(loaded, (list, dict)):
            raise GraderError(
                f'Function "{function}" must return an array or object of tool definitions'
            )
        return loaded
    file = (suite_root / path).resolve()
    if not file.is_file():
        raise GraderError(f"Failed to load tools from {ref}\nEnsure the file exists.")
    return load_yaml_text(file.read_text(encoding="utf-8"))


def load_tools(tools: Any, variables: dict[str, Any], suite_root: Path) -> Any:
    """promptfoo's maybeLoadToolsFromExternalFile: vars rendered, `file://` refs loaded."""
    rendered = render_value(tools, variables)
    if is_file_ref(rendered):
        return _load_tools_file(rendered, suite_root)
    if isinstance(rendered, list):
        loaded = [load_tools(item, {}, suite_root) for item in rendered]
        if all(isinstance(item, list) for item in loaded):
            return [tool for item in loaded for tool in item]
        return loaded
    return rendered


def _calls(output: Any) -> Any:
    if isinstance(output, dict) and "tool_calls" in output:
        return output["tool_calls"]
    return output


def _looks_like_calls(calls: Any) -> bool:
    def valid(call: Any) -> bool:
        function = call.get("function") if isinstance(call, dict) else None
        return (
            isinstance(function, dict)
            and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments"), str)
        )

    return isinstance(calls, list) and bool(calls) and all(valid(c) for c in calls)


def _call_problem(function: dict[str, Any], declared: list[Any]) -> str | None:
    """promptfoo's validateFunctionCall: the failure message, or None for a valid call."""
    name = function["name"]
    try:
        arguments = json_parse(function["arguments"])
    except ValueError as exc:
        return f"Invalid JSON in arguments of {name}: {exc}"
    return _arguments_problem(declared, name, arguments)


def _arguments_problem(declared: Any, name: str, arguments: Any) -> str | None:
    """promptfoo's check of a call's arguments against the `parameters` of the declared
    function of that name: the failure message, or None when they match."""
    schema = next(
        (
            d.get("parameters")
            for d in (declared if isinstance(declared, list) else [])
            if isinstance(d, dict) and d.get("name") == name
        ),
        None,
    )
    if not schema:
        return f'Called "{name}", but there is no function with that name'
    errors = ajv_errors(schema, arguments)
    if errors:
        return f'Call to "{name}" does not match schema: {js_stringify(errors)}'
    return None


def _mcp_grade(ctx: GradeContext, text: str) -> Grade:
    if "MCP Tool Error" in text:
        match = _MCP_ERROR.search(text)
        tool, detail = (match.group(1), match.group(2)) if match else ("unknown", "unknown error")
        return Grade(False, 0.0, f"MCP tool call failed for {tool}: {detail}", ctx.assertion.raw)
    match = _MCP_RESULT.search(text)
    tool = match.group(1) if match else "unknown"
    return Grade(True, 1.0, f"MCP tool call succeeded for {tool}", ctx.assertion.raw)


@register("is-valid-openai-tools-call", layer="trajectory", promptfoo=True)
def is_valid_openai_tools_call(ctx: GradeContext) -> Grade:
    """Each OpenAI tool call names a configured function and its arguments match its schema.

    As in promptfoo 0.121, `not-` does not invert this check.
    """
    text = ctx.output if isinstance(ctx.output, str) else js_stringify(ctx.output)
    if "MCP Tool Result" in text or "MCP Tool Error" in text:
        return _mcp_grade(ctx, text)
    calls = _calls(ctx.output)
    if not _looks_like_calls(calls):
        reason = f"OpenAI did not return a valid-looking tools response: {js_stringify(calls)}"
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    tools = ctx.provider_config.get("tools")
    if tools:
        tools = load_tools(tools, ctx.vars, ctx.suite_root)
    if not tools:
        reason = "No tools configured in provider, but output contains tool calls"
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    declared = [
        t["function"]
        for t in tools
        if isinstance(t, dict) and t.get("type") == "function" and "function" in t
    ]
    for call in calls:
        problem = _call_problem(call["function"], declared)
        if problem is not None:
            return Grade(False, 0.0, problem, ctx.assertion.raw)
    return Grade(True, 1.0, "Assertion passed", ctx.assertion.raw)


NO_VALIDATOR = "Provider does not have functionality for checking function call."


def validates_function_calls(provider_id: str) -> bool:
    """Whether promptfoo's provider for this id can check function calls: its OpenAI chat
    provider (`openai:chat:MODEL`, and a bare `openai:MODEL`, which evals runs as chat),
    which checks them against `functions`."""
    vendor, _, rest = provider_id.partition(":")
    api, sep, _ = rest.partition(":")
    return vendor == "openai" and (api == "chat" or not sep)


def function_call_problem(output: Any, functions: Any, ctx: GradeContext) -> str | None:
    """promptfoo's OpenAI validateFunctionCall: the failure message, or None when the output
    (or its `function_call`) names a declared function with arguments matching its schema."""
    if output is None:
        return "Cannot use 'in' operator to search for 'function_call' in null"
    if isinstance(output, dict) and "function_call" in output:
        output = output["function_call"]
    if not (
        isinstance(output, dict)
        and isinstance(output.get("name"), str)
        and isinstance(output.get("arguments"), str)
    ):
        return f"OpenAI did not return a valid-looking function call: {js_stringify(output)}"
    declared = load_tools(functions, ctx.vars, ctx.suite_root) if functions else functions
    try:
        arguments = json_parse(output["arguments"])
    except ValueError as exc:
        return str(exc)
    return _arguments_problem(declared, output["name"], arguments)


@register("is-valid-function-call", "is-valid-openai-function-call", layer="final", promptfoo=True)
def is_valid_function_call(ctx: GradeContext) -> Grade:
    """The output is a call of one of the provider's `functions`, with valid arguments.

    As in promptfoo 0.121, only providers that can check function calls (its OpenAI chat
    provider) pass it; every other provider fails it with promptfoo's reason, and `not-`
    does not invert it.
    """
    if not validates_function_calls(ctx.provider_id):
        return Grade(False, 0.0, NO_VALIDATOR, ctx.assertion.raw)
    problem = function_call_problem(ctx.output, ctx.provider_config.get("functions"), ctx)
    if problem is not None:
        return Grade(False, 0.0, problem, ctx.assertion.raw)
    return Grade(True, 1.0, "Assertion passed", ctx.assertion.raw)


def skill_calls(ctx: GradeContext) -> list[dict[str, Any]]:
    """The skills the agent used: `metadata.skillCalls` entries with a name and no error."""
    raw = ctx.response.metadata.get("skillCalls")
    if not isinstance(raw, list):
        return []
    return [
        c
        for c in raw
        if isinstance(c, dict) and isinstance(c.get("name"), str) and c.get("is_error") is not True
    ]


def _skill_label(call: dict[str, Any]) -> str:
    details = ", ".join(str(call[k]) for k in ("source", "path") if call.get(k))
    return f"{call['name']} ({details})" if details else call["name"]


def _matches(call: dict[str, Any], name: str | None, pattern: str | None) -> bool:
    if name and call["name"] != name:
        return False
    return not (pattern and not matches_pattern(call["name"], pattern))


def _count_bound(field: str, value: Any) -> int:
    whole = isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value)
    if not whole or value < 0:
        raise GraderError(
            f"skill-used assertion object {field} must be a finite non-negative integer"
        )
    return int(value)


def _names(value: Any) -> list[str] | None:
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return [v.strip() for v in value]
    return None


def _summary(calls: list[dict[str, Any]]) -> str:
    return ", ".join(_skill_label(c) for c in calls) or "(none)"


def _skill_list(ctx: GradeContext, calls: list[dict[str, Any]], names: list[str]) -> Grade:
    used = {n for n in names if any(c["name"] == n for c in calls)}
    missing = [n for n in names if n not in used]
    matched = [n for n in names if n in used]
    actual = _summary(calls)
    if ctx.inverse:
        passed = not matched
        reason = (
            f"Forbidden skill(s) were not used: {', '.join(names)}"
            if passed
            else f"Forbidden skill(s) were used: {', '.join(matched)}. Actual skills: {actual}"
        )
    else:
        passed = not missing
        reason = (
            f"Observed required skill(s): {', '.join(names)}. Actual skills: {actual}"
            if passed
            else f"Missing required skill(s): {', '.join(missing)}. Actual skills: {actual}"
        )
    return Grade(passed, 1.0 if passed else 0.0, reason, ctx.assertion.raw)


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _skill_count(ctx: GradeContext, calls: list[dict[str, Any]], spec: dict[str, Any]) -> Grade:
    name, pattern = _text(spec.get("name")), _text(spec.get("pattern"))
    if not name and not pattern:
        raise GraderError("skill-used assertion object must include a name or pattern property")
    low = _count_bound("min", spec["min"]) if "min" in spec else None
    high = _count_bound("max", spec["max"]) if "max" in spec else None
    if low is not None and high is not None and high < low:
        raise GraderError("skill-used assertion object max must be greater than or equal to min")
    matching = [c for c in calls if _matches(c, name, pattern)]
    count, label = len(matching), pattern or name
    matches = ", ".join(_skill_label(c) for c in matching)
    if ctx.inverse:
        if low is not None or (high is not None and high != 0):
            raise GraderError(
                "not-skill-used object assertions only support name/pattern with no count "
                "bounds, or max: 0"
            )
        passed = count == 0
        reason = (
            f'Forbidden skill "{label}" was not used. Actual skills: {_summary(calls)}'
            if passed
            else f'Forbidden skill "{label}" was used {count} time(s). Matches: {matches}'
        )
        return Grade(passed, 1.0 if passed else 0.0, reason, ctx.assertion.raw)
    minimum = low if low is not None else (0 if high is not None else 1)
    passed = count >= minimum and (high is None or count <= high)
    expected = f"at least {minimum}" if high is None else f"{minimum}-{high}"
    reason = f'Matched skill "{label}" {count} time(s) (expected {expected})'
    if matching:
        reason += f". Matches: {matches}"
    return Grade(passed, 1.0 if passed else 0.0, reason, ctx.assertion.raw)


@register("skill-used", layer="trajectory", promptfoo=True)
def skill_used(ctx: GradeContext) -> Grade:
    """The named skills were used (a name or list), or a name/pattern within min/max times."""
    calls = skill_calls(ctx)
    value = ctx.value
    names = _names(value)
    if names is not None:
        return _skill_list(ctx, calls, names)
    if isinstance(value, dict):
        return _skill_count(ctx, calls, value)
    raise GraderError("skill-used assertion must have a string, string array, or object value")
