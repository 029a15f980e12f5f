"""`javascript` assertions, run as promptfoo's handleJavascript runs them.

An inline value becomes the body of `new Function('output', 'context', 'process', ...)`
(one line is returned, with promptfoo's handling of leading declarations; several lines
are the body) and runs in the JavaScript sandbox of `evals.common.jsengine`;
`file://check.js[:fn]` calls a CommonJS module's exported function there. Both get
promptfoo's `context` (`scripts.javascript_context`: the whole test, the provider with an
id() method, written once per run). The result, a
boolean, a number (compared with the threshold, or > 0) or a GradingResult, is
normalized as promptfoo's normalizeJavascriptAssertionResult does; inline code that
throws fails the check with promptfoo's "Custom function threw error" reason, while a file
that cannot be loaded, exports no function or whose function throws makes the run an
error row, as promptfoo's runAssertion lets that error through.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from evals.common import jsengine, jsfiles
from evals.common.files import split_ref
from evals.common.jsvalues import js_string, js_stringify
from evals.common.offload import off_loop
from evals.graders.base import GradeContext, GraderError, ScriptRaised
from evals.graders.python_assert import grade_from_result, is_grading_result
from evals.graders.registry import register
from evals.graders.scripts import javascript_context
from evals.model.results import Grade


def _with_value(reason: str, rendered: Any) -> str:
    """promptfoo's appendRenderedValueToReason."""
    return f"{reason}\n{rendered}" if isinstance(rendered, str) and rendered else reason


def _returned(raw: bool, rendered: Any) -> str:
    return _with_value(f"Custom function returned {js_string(raw)}", rendered)


def normalize_result(ctx: GradeContext, result: Any, rendered: Any) -> Grade:
    """promptfoo's normalizeJavascriptAssertionResult for a validated result."""
    inverse = ctx.inverse
    raw_assertion = ctx.assertion.raw
    if isinstance(result, bool):
        passed = result != inverse
        reason = "Assertion passed" if passed else _returned(result, rendered)
        return Grade(passed, 1.0 if passed else 0.0, reason, raw_assertion)
    if isinstance(result, (int, float)):
        threshold = ctx.assertion.threshold
        raw = result > 0 if threshold is None else result >= threshold
        passed = raw != inverse
        reason = "Assertion passed" if passed else _returned(raw, rendered)
        return Grade(passed, float(result), reason, raw_assertion)
    mapped = dict(result)
    raw = mapped["pass"]
    passed = raw != inverse
    if passed != raw:
        mapped["reason"] = (
            "Assertion passed" if passed else f"Custom function returned {js_string(raw)}"
        )
    mapped["pass"] = passed
    return grade_from_result(mapped, mapped.get("assertion") or raw_assertion)


def _threw(ctx: GradeContext, exc: jsengine.JavaScriptError, rendered: Any) -> Grade:
    stack = f"{exc.name}: {exc.message}\n{exc.stack}".rstrip()
    reason = f"Custom function threw error: {exc.message}\nStack Trace: {stack}"
    return Grade(False, 0.0, _with_value(reason, rendered), ctx.assertion.raw)


def _invalid(ctx: GradeContext, result: Any, rendered: str) -> Grade:
    kind = "object" if result is None or isinstance(result, (dict, list)) else "string"
    reason = (
        "Custom function threw error: Custom function must return a boolean, number, or "
        f"GradingResult object. Got type {kind}: {js_stringify(result)}"
    )
    return Grade(False, 0.0, _with_value(reason, rendered), ctx.assertion.raw)


@register("javascript", layer="final", promptfoo=True)
def javascript(ctx: GradeContext) -> Coroutine[Any, Any, Grade]:
    """JavaScript code over `output` and `context` decides (boolean, score or GradingResult).

    The code runs off the event loop (it may take up to the sandbox's time limit), so
    the grade is awaited; the context's JSON is written here, once per run.
    """
    value = ctx.value
    context = javascript_context(ctx)
    if (
        isinstance(value, str)
        and split_ref(value)[0].endswith(jsfiles.JS_FILES)
        and (value.startswith("file://"))
    ):
        path, function = split_ref(value)
        return _file_checked(ctx, (ctx.suite_root / path).resolve(), function, context, value)
    if not isinstance(value, str):
        raise GraderError("Invariant failed: javascript assertion must have a string value")
    rendered = value.rstrip()
    return _checked(ctx, rendered, context)


async def _checked(ctx: GradeContext, code: str, context: str) -> Grade:
    """The grade of inline code, run in the sandbox off the loop; code that throws fails
    the check."""
    try:
        result = await off_loop(jsengine.call, "assertion", code, ctx.output, context)
    except jsengine.JavaScriptLimitError:
        raise
    except jsengine.JavaScriptError as exc:
        return _threw(ctx, exc, code)
    return normalize_result(ctx, result, code)


async def _file_checked(
    ctx: GradeContext, path: Path, function: str | None, context: str, shown: str
) -> Grade:
    """The grade of a JavaScript file's check, run in the sandbox off the loop; a file that
    cannot be loaded or a check that throws raises ScriptRaised (an error row)."""
    try:
        result = await off_loop(jsfiles.call_check, path, function, ctx.output, context)
    except jsengine.JavaScriptLimitError:
        raise
    except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
        raise ScriptRaised(jsfiles.error_text(exc)) from None
    if not (isinstance(result, (bool, int, float)) or is_grading_result(result)):
        return _invalid(ctx, result, shown)
    return normalize_result(ctx, result, shown)
