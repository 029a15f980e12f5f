"""User Python called by graders: loading a `file://x.py[:fn]` function and calling it.

Arguments and results cross a JSON boundary as in promptfoo's Python wrapper (the function
gets JSON copies and must return JSON data); a function that raises, cannot be loaded or
returns something else is a ScriptError. Python checks (`type: python`), Python files as
assertion values and Python tool lists all call user code through here.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.common.blocking import run_to_completion
from evals.common.files import load_function, split_ref
from evals.common.jsvalues import js_stringify
from evals.graders.base import GradeContext
from evals.model.errors import SuiteError


class ScriptError(Exception):
    """A user script raised, could not be loaded or returned something unusable."""


def user_function(ref: str, suite_root: Path, default: str) -> Callable[..., Any]:
    """The function a `file://x.py[:fn]` reference names (`default` without `:fn`)."""
    rel, name = split_ref(ref)
    try:
        return load_function(suite_root / rel, name or default, "Python check")
    except SuiteError as exc:
        raise ScriptError(str(exc)) from None


def call_json(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a user function with JSON-copied arguments and return its JSON-copied result."""
    copied = json.loads(js_stringify(list(args)))
    try:
        result = fn(*copied)
        if inspect.isawaitable(result):
            result = run_to_completion(result)
    except Exception as exc:
        raise ScriptError(f"{type(exc).__name__}: {exc}") from exc
    try:
        return json.loads(json.dumps(result, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"Invalid JSON returned by Python script: {exc}") from exc


def assertion_context(ctx: GradeContext) -> dict[str, Any]:
    """promptfoo's assertionValueContext as the dict a Python check receives."""
    response = ctx.response
    provider_response: dict[str, Any] = {"output": ctx.output}
    if response.error is not None:
        provider_response["error"] = response.error
    if response.token_usage:
        provider_response["tokenUsage"] = dict(response.token_usage)
    if response.cost is not None:
        provider_response["cost"] = response.cost
    if response.finish_reason:
        provider_response["finishReason"] = response.finish_reason
    if response.cached:
        provider_response["cached"] = True
    if response.metadata:
        provider_response["metadata"] = response.metadata
    test: dict[str, Any] = {"vars": ctx.vars, "assert": [ctx.assertion.raw]}
    if ctx.case_metadata:
        test["metadata"] = ctx.case_metadata
    context: dict[str, Any] = {
        "prompt": ctx.prompt,
        "vars": ctx.vars,
        "test": test,
        "provider": {"id": ctx.agent, "label": ctx.agent},
        "providerResponse": provider_response,
    }
    if ctx.assertion.config:
        context["config"] = ctx.assertion.config
    if response.metadata:
        context["metadata"] = response.metadata
    return context


def run_file(ref: str, ctx: GradeContext) -> Any:
    """Call `file://x.py[:fn]` (default `get_assert`) with (output, context)."""
    try:
        fn = user_function(ref, ctx.suite_root, "get_assert")
    except Exception as exc:
        raise ScriptError(f"{type(exc).__name__}: {exc}") from exc
    return call_json(fn, ctx.output, assertion_context(ctx))
