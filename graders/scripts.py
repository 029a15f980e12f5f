"""User Python called by graders: loading a `file://x.py[:fn]` function and calling it.

Arguments and results cross a JSON boundary as in promptfoo's Python wrapper (the function
gets JSON copies and must return JSON data); a function that raises, cannot be loaded or
returns something else is a ScriptError. Python checks (`type: python`), Python files as
assertion values and Python tool lists all call user code through here.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.common import jsengine
from evals.common.blocking import run_to_completion
from evals.common.files import default_label, load_function, split_ref
from evals.common.jsvalues import js_stringify
from evals.graders.base import GradeContext
from evals.model.errors import SuiteError


class ScriptError(Exception):
    """A user script raised, could not be loaded or returned something unusable."""


def user_function(ref: str, suite_root: Path, default: str) -> Callable[..., Any]:
    """The function a `file://x.py[:fn]` reference names (`default` without `:fn`)."""
    rel, name = split_ref(ref)
    path = (suite_root / rel).resolve()
    if not path.is_file():  # promptfoo's Python runner's words for it
        raise ScriptError(f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'")
    try:
        return load_function(path, name or default, "Python check")
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


def _provider_response(ctx: GradeContext) -> dict[str, Any]:
    """promptfoo's providerResponse: the provider's answer as graded (after the provider's
    and the test's output transforms, before an assertion's own), with `cached` and, when
    the test has no transform, `providerTransformedOutput`. promptfoo's echo provider
    always answers with its input as `raw`, `isRefusal: false` and an empty `metadata`."""
    response = ctx.response
    echo = ctx.provider_id == "echo"
    provider_response: dict[str, Any] = {"output": response.output}
    if echo:
        provider_response["raw"] = ctx.prompt
    if response.error is not None:
        provider_response["error"] = response.error
    if response.cost is not None:
        provider_response["cost"] = response.cost
    if response.finish_reason:
        provider_response["finishReason"] = response.finish_reason
    if response.token_usage and not echo:
        provider_response["tokenUsage"] = dict(response.token_usage)
    provider_response["cached"] = response.cached
    if echo:
        provider_response["tokenUsage"] = dict(response.token_usage)
        provider_response["isRefusal"] = False
    if response.metadata or echo:
        provider_response["metadata"] = response.metadata
    if response.log_probs is not None:
        provider_response["logProbs"] = response.log_probs
    if "transform" not in ctx.case_options:
        provider_response["providerTransformedOutput"] = response.output
    return provider_response


@functools.lru_cache(maxsize=256)
def _written_label(agent: str, provider_id: str) -> str:
    """The provider's label as its config writes it ("" when it has none), as promptfoo's
    provider objects hold it."""
    return "" if agent == default_label(provider_id) else agent


@functools.lru_cache(maxsize=64)
def _base_path(suite_root: str) -> str:
    """promptfoo's `basePath` in a provider's config: the suite's folder as seen from the
    directory the harness runs in ("." when it runs there)."""
    return os.path.relpath(suite_root) if suite_root else "."


def _run_context(ctx: GradeContext) -> dict[str, Any]:
    """promptfoo's assertion context for this run, before any assertion's `config`; the
    provider as the JSON of promptfoo's provider object (label and config, its id() method
    being left out) and `logProbs` None when the provider gave none."""
    response = ctx.response
    provider_response = _provider_response(ctx)
    test = ctx.case_test or {"vars": ctx.vars, "assert": [ctx.assertion.raw]}
    context: dict[str, Any] = {
        "prompt": ctx.prompt,
        "vars": ctx.vars,
        "test": test,
        "logProbs": response.log_probs,
        "provider": {
            "label": _written_label(ctx.agent, ctx.provider_id),
            "config": {**ctx.provider_config, "basePath": _base_path(str(ctx.suite_root))},
        },
        "providerResponse": provider_response,
    }
    if "metadata" in provider_response:
        context["metadata"] = provider_response["metadata"]
    return context


def _with_config(context: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The context with an assertion's `config`, where promptfoo puts it (before metadata)."""
    if not config:
        return context
    ordered = {k: v for k, v in context.items() if k != "metadata"}
    ordered["config"] = config
    if "metadata" in context:
        ordered["metadata"] = context["metadata"]
    return ordered


def _memoized_context(ctx: GradeContext) -> dict[str, Any]:
    context: dict[str, Any] | None = ctx.run_memo.get("script_context")
    if context is None:
        context = ctx.run_memo["script_context"] = _run_context(ctx)
    return context


def assertion_context(ctx: GradeContext) -> dict[str, Any]:
    """promptfoo's assertion context (runAssertion's `context`) as the dict a Python or Ruby
    check receives: what crosses promptfoo's JSON boundary (no `logProbs` when there are
    none, the provider without its id() method). Worked out once per run."""
    context = _memoized_context(ctx)
    if context["logProbs"] is None:
        context = {k: v for k, v in context.items() if k != "logProbs"}
    return _with_config(context, ctx.assertion.config)


def javascript_context(ctx: GradeContext) -> str:
    """The JSON text of promptfoo's assertion context for a JavaScript check, which the
    sandbox's scripts realm turns back into the object promptfoo passes: the provider with an
    id() method, `logProbs` present even when undefined. Written once per run."""
    if ctx.assertion.config:
        return jsengine.to_json(_with_config(_with_provider_id(ctx), ctx.assertion.config))
    text: str | None = ctx.run_memo.get("script_context_js")
    if text is None:
        text = ctx.run_memo["script_context_js"] = jsengine.to_json(_with_provider_id(ctx))
    return text


def _with_provider_id(ctx: GradeContext) -> dict[str, Any]:
    """The run's context with the provider's id, which the scripts realm makes an id() method."""
    context = dict(_memoized_context(ctx))
    context["provider"] = {**context["provider"], "id": ctx.provider_id}
    return context


def run_file(ref: str, ctx: GradeContext) -> Any:
    """Call `file://x.py[:fn]` (default `get_assert`) with (output, context)."""
    try:
        fn = user_function(ref, ctx.suite_root, "get_assert")
    except ScriptError:
        raise
    except Exception as exc:
        raise ScriptError(f"{type(exc).__name__}: {exc}") from exc
    return call_json(fn, ctx.output, assertion_context(ctx))
