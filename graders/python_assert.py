"""User Python checks: `type: python` assertions and `file://` assertion values.

An inline value is wrapped like promptfoo's buildPythonScript (`return <expr>` for one
line, the body of `main(output, context)` for several); `file://check.py[:fn]` calls
`get_assert(output, context)` or `fn`. Arguments and results cross a JSON boundary as in
promptfoo's Python wrapper, and results are normalized like its normalizeScriptResult.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from evals.common.jsvalues import js_string
from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.graders.scripts import ScriptError, assertion_context, call_json, run_file
from evals.model.results import Grade

_LANGUAGE = "Python"


def wrap_script(value: str, head: str, tail: str, indent: str) -> str:
    """promptfoo's script wrapping: one line is returned, several lines form the body of
    `head` (indented as the code's own first indented line, else `indent`), then `tail`."""
    if "\n" not in value:
        return f"{head}\n{indent}return {value}\n{tail}"
    match = re.search(r"^(?!\s*$)\s+", value, re.MULTILINE)
    if match:
        indent = match.group(0)
    body = "\n".join(f"{indent}{line}" for line in value.split("\n"))
    return f"{head}\n{body}\n{tail}"


def build_python_script(value: str) -> str:
    """promptfoo's buildPythonScript: `main(output, context)` around the code."""
    return wrap_script(value, "import json\n\ndef main(output, context):", "", "    ")


@lru_cache(maxsize=512)
def _inline_main(script: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"__name__": "evals_inline_assertion"}
    exec(compile(script, "<python assertion>", "exec"), namespace)
    return namespace["main"]


def run_inline(value: str, output: Any, context: dict[str, Any]) -> Any:
    """Evaluate an inline Python assertion value and return its JSON result."""
    try:
        main = _inline_main(build_python_script(value))
    except SyntaxError as exc:
        raise ScriptError(f"SyntaxError: {exc}") from exc
    return call_json(main, output, context)


_SNAKE_KEYS = {
    "pass_": "pass",
    "named_scores": "namedScores",
    "component_results": "componentResults",
    "tokens_used": "tokensUsed",
}


def _camel_case(result: dict[str, Any]) -> dict[str, Any]:
    mapped = dict(result)
    for snake, camel in _SNAKE_KEYS.items():
        if snake in mapped and camel not in mapped:
            mapped[camel] = mapped[snake]
    if isinstance(mapped.get("componentResults"), list):
        mapped["componentResults"] = [
            _camel_case(c) if isinstance(c, dict) else c for c in mapped["componentResults"]
        ]
    return mapped


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_grading_result(value: Any) -> bool:
    """promptfoo's isGradingResult over a JSON value."""
    if not isinstance(value, dict):
        return False

    def optional(key: str, kinds: tuple[type, ...]) -> bool:
        return key not in value or value[key] is None or isinstance(value[key], kinds)

    return (
        isinstance(value.get("pass"), bool)
        and _is_number(value.get("score"))
        and isinstance(value.get("reason"), str)
        and optional("namedScores", (dict,))
        and optional("tokensUsed", (dict,))
        and ("componentResults" not in value or isinstance(value["componentResults"], list))
        and optional("assertion", (dict,))
        and ("comment" not in value or isinstance(value["comment"], str))
    )


def grade_from_result(result: dict[str, Any], assertion: dict[str, Any] | None) -> Grade:
    """A Grade from a GradingResult-shaped dict (nested component results included)."""
    return Grade(
        passed=bool(result["pass"]),
        score=float(result["score"]),
        reason=str(result["reason"]),
        assertion=assertion,
        named_scores={k: float(v) for k, v in (result.get("namedScores") or {}).items()},
        component_results=[
            grade_from_result(c, c.get("assertion"))
            for c in result.get("componentResults") or []
            if is_grading_result(c)
        ],
        tokens_used={k: v for k, v in (result.get("tokensUsed") or {}).items() if _is_number(v)},
        metadata=dict(result.get("metadata") or {}),
    )


def _append(reason: str, suffix: Any) -> str:
    return f"{reason}\n{suffix}" if isinstance(suffix, str) and suffix else reason


_JS_FLOAT = re.compile(r"^\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")


def _parse_float(text: str) -> float | None:
    """`Number.parseFloat`: the longest numeric prefix, None for NaN."""
    match = _JS_FLOAT.match(text)
    return float(match.group(1).replace("Infinity", "inf")) if match else None


def normalize_script_result(ctx: GradeContext, result: Any, language: str = _LANGUAGE) -> Grade:
    """promptfoo's normalizeScriptResult for a script's result: bool, number, text or dict
    (`language` names the script in reasons: Python, Ruby)."""
    assertion, inverse = ctx.assertion, ctx.inverse
    suffix = assertion.raw.get("value", assertion.value)
    threshold = assertion.threshold
    lowered = result.lower() if isinstance(result, str) else None
    if result is True or lowered == "true" or result is False or lowered == "false":
        raw = result is True or lowered == "true"
        passed = raw != inverse
        reason = _append(f"{language} code returned {js_string(raw)}", suffix)
        return Grade(
            passed, 1.0 if passed else 0.0, "Assertion passed" if passed else reason, assertion.raw
        )
    if isinstance(result, str) and result.startswith("{"):
        try:
            result = json.loads(result)
        except ValueError as exc:
            raise ScriptError(f"Invalid JSON: {exc} when parsing result: {result}") from exc
        if not isinstance(result, dict):
            raise ScriptError(
                f"{language} assertion must return a boolean, number, or {{pass, score, reason}} "
                f"object. Got instead: {result}"
            )
    if isinstance(result, (dict, list)):
        return _normalize_object(ctx, result, suffix, language)
    score = _parse_float(js_string(result))
    if score is None:
        raise ScriptError(
            f"{language} assertion must return a boolean, number, or {{pass, score, reason}} "
            f"object. Instead got:\n{js_string(result)}"
        )
    raw = score > 0 if threshold is None else score >= threshold
    passed = raw != inverse
    reason = _append(f"{language} code returned {js_string(raw)}", suffix)
    return Grade(passed, score, "Assertion passed" if passed else reason, assertion.raw)


def _normalize_object(
    ctx: GradeContext, result: dict[str, Any] | list[Any], suffix: Any, language: str
) -> Grade:
    as_dict = result if isinstance(result, dict) else {str(i): v for i, v in enumerate(result)}
    mapped = _camel_case(as_dict)
    if not is_grading_result(mapped):
        raise ScriptError(
            f"{language} assertion must return a boolean, number, or {{pass, score, reason}} "
            f"object. Got instead:\n{json.dumps(mapped, indent=2, ensure_ascii=False)}"
        )
    threshold = ctx.assertion.threshold
    if threshold is not None and mapped["score"] < threshold:
        mapped["pass"] = False
        message = (
            f"{language} score {js_string(mapped['score'])} is less than threshold "
            f"{js_string(threshold)}"
        )
        mapped["reason"] = f"{message}: {mapped['reason']}" if mapped["reason"] else message
    raw = mapped["pass"]
    passed = raw != ctx.inverse
    if passed != raw:
        mapped["reason"] = (
            "Assertion passed" if passed else f"{language} code returned {js_string(raw)}"
        )
    mapped["pass"] = passed
    return grade_from_result(mapped, ctx.assertion.raw)


@register("python", layer="final", promptfoo=True)
def python(ctx: GradeContext) -> Grade:
    """A Python expression, function body or `file://` function decides (bool, score or dict)."""
    value = ctx.value
    if not isinstance(value, str):
        raise GraderError("Invariant failed: python assertion must have a string value")
    if value.startswith("file://"):
        try:
            result = run_file(value, ctx)
        except ScriptError as exc:
            return _failed(ctx, f"Error running Python script: {exc}")
    else:
        try:
            result = run_inline(value, ctx.output, assertion_context(ctx))
        except ScriptError as exc:
            return _failed(ctx, f"Python code execution failed: Error running Python script: {exc}")
    try:
        return normalize_script_result(ctx, result)
    except ScriptError as exc:
        return _failed(ctx, f"Python code execution failed: {exc}")


def _failed(ctx: GradeContext, reason: str) -> Grade:
    """A check that broke fails the assertion, flagged as a grader error."""
    return Grade(False, 0.0, reason, ctx.assertion.raw, errored=True)
