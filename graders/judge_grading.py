"""What the model-graded assertions share: the grading prompt, asking the judge, its verdict.

Prompts are the assertion's or test's `rubricPrompt` or promptfoo 0.121's default
(graders/judge_prompts.py), rendered as promptfoo renders them; the grader provider is
chosen and called in graders/judge.py. A judge that fails to answer, or answers something
unparseable, yields an errored grade (the judge could not decide), never a silent pass or fail.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from evals.common.files import is_file_ref, resolve_ref
from evals.common.jsvalues import js_string, js_stringify
from evals.common.templating import render
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import invariant
from evals.graders.judge import (
    GraderProvider,
    JudgeReply,
    add_usage,
    complete,
    resolve_provider,
)
from evals.graders.structured import extract_json_objects
from evals.graders.values import assertion_value
from evals.model.results import Grade

EPSILON = sys.float_info.epsilon
"""The tolerance promptfoo allows when comparing a score with its threshold."""


RUBRIC_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "pass": {"type": "boolean"},
        "score": {"type": "number"},
    },
    "required": ["reason", "pass", "score"],
    "additionalProperties": False,
}


def try_parse(text: str) -> Any:
    """promptfoo's tryParse: JSON text becomes its value, anything else stays text."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def _template_scope(variables: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's processContextForTemplating: objects are shown to templates as JSON."""
    scope: dict[str, Any] = {}
    for key, value in variables.items():
        if isinstance(value, dict):
            scope[key] = js_stringify(value)
        elif isinstance(value, list):
            scope[key] = [js_stringify(v) if isinstance(v, (dict, list)) else v for v in value]
        else:
            scope[key] = value
    return scope


def render_rubric(template: str, variables: dict[str, Any]) -> str:
    """promptfoo's renderLlmRubricPrompt: a JSON prompt has each string rendered, else text."""
    scope = _template_scope(variables)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return render(value, scope)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    try:
        parsed = json.loads(template)
    except ValueError:
        return render(template, scope)
    return json.dumps(walk(parsed), ensure_ascii=False, separators=(",", ":"))


def rubric_prompt(ctx: GradeContext, default: str, part: str | int | None = None) -> str:
    """The grading prompt: the assertion's or test's `rubricPrompt`, else promptfoo's default."""
    custom = ctx.assertion.raw.get("rubricPrompt") or ctx.case_options.get("rubricPrompt")
    if part is not None:
        if isinstance(custom, dict) and isinstance(part, str):
            custom = custom.get(part)
        elif isinstance(custom, list) and isinstance(part, int):
            item = custom[part] if part < len(custom) else None
            custom = item.get("content") if isinstance(item, dict) else item
        else:
            custom = None
    if not custom:
        return default
    if is_file_ref(custom):
        path = resolve_ref(custom, ctx.suite_root)
        if not path.is_file():
            raise GraderError(f"File does not exist: {path}")
        return path.read_text(encoding="utf-8")
    if isinstance(custom, (dict, list)):
        return json.dumps(custom, ensure_ascii=False, separators=(",", ":"))
    invariant(isinstance(custom, str), "rubricPrompt must be a string")
    return custom


def string_or_strings(ctx: GradeContext, kind: str) -> str | list[str]:
    """The assertion's value, which must be a string or a list of strings (criteria, texts)."""
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str)
        or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        f"{kind} assertion type must have a string or array of strings value",
    )
    return value


def judge_failed(ctx: GradeContext, reason: str, usage: dict[str, int] | None = None) -> Grade:
    """The judge could not decide: an errored failing grade."""
    return Grade(False, 0.0, reason, ctx.assertion.raw, tokens_used=usage or {}, errored=True)


async def ask_judge(
    ctx: GradeContext,
    provider: GraderProvider,
    prompt: str,
    label: str,
    variables: dict[str, Any],
    usage: dict[str, int],
    schema: dict[str, Any] | None = None,
) -> JudgeReply:
    """The judge's reply to `prompt`, whatever it is; its token usage is added to `usage`."""
    reply = await complete(
        provider,
        prompt,
        label=label,
        variables=variables,
        suite_root=ctx.suite_root,
        schema=schema,
    )
    add_usage(usage, reply.token_usage)
    return reply


def unanswered(ctx: GradeContext, reply: JudgeReply, usage: dict[str, int]) -> Grade | None:
    """The errored grade when the judge failed or answered nothing; None when it answered."""
    if reply.error:
        return judge_failed(ctx, reply.error, usage)
    if reply.output in (None, ""):
        return judge_failed(ctx, "No output", usage)
    return None


async def ask_rubric(
    ctx: GradeContext,
    default: str,
    label: str,
    variables: dict[str, Any],
    usage: dict[str, int],
    schema: dict[str, Any] | None = None,
) -> JudgeReply:
    """The text judge's reply to the grading prompt (`rubricPrompt` or `default`) rendered
    with `variables`; `label` names the check."""
    rendered = render_rubric(rubric_prompt(ctx, default), variables)
    provider = resolve_provider(ctx, "text", f"{label} check")
    return await ask_judge(ctx, provider, rendered, label, variables, usage, schema)


async def json_grading(
    ctx: GradeContext, default: str, label: str, variables: dict[str, Any]
) -> Grade:
    """promptfoo's runJsonGradingPrompt: the judge answers `{pass, score, reason}`."""
    template = rubric_prompt(ctx, default)
    rendered = render_rubric(template, variables)
    provider = resolve_provider(ctx, "text", f"{label} check")
    usage: dict[str, int] = {}
    reply = await ask_judge(ctx, provider, rendered, label, variables, usage, RUBRIC_SCHEMA)
    if failure := unanswered(ctx, reply, usage):
        return failure
    if isinstance(reply.output, dict):
        parsed: Any = reply.output
    elif isinstance(reply.output, str):
        found = extract_json_objects(reply.output)
        if not found:
            return judge_failed(ctx, f"Could not extract JSON from {label} response", usage)
        parsed = found[0]
    else:
        return judge_failed(
            ctx,
            f"{label} produced malformed response - output must be string or object. "
            f"Output: {js_stringify(reply.output)}",
            usage,
        )
    if not isinstance(parsed, dict):
        return judge_failed(
            ctx,
            f"{label} produced malformed response. We were not able to parse the response as "
            f"JSON. Output: {js_stringify(reply.output)}",
            usage,
        )
    return _verdict_from_json(ctx, parsed, usage, rendered)


def _verdict_from_json(
    ctx: GradeContext, parsed: dict[str, Any], usage: dict[str, int], rendered: str
) -> Grade:
    raw_pass = parsed.get("pass", True)
    passed = (
        raw_pass
        if isinstance(raw_pass, bool)
        else bool(re.fullmatch(r"true|yes|pass|y", js_string(raw_pass), re.IGNORECASE))
    )
    score = js_number(parsed["score"]) if "score" in parsed else None
    if score is None:
        score = 1.0 if passed else 0.0
    threshold = ctx.assertion.threshold
    if threshold is not None:
        passed = passed and score >= threshold
    reason = parsed.get("reason") or (
        "Grading passed"
        if passed
        else f"Score {js_string(score)} below threshold "
        f"{js_string(threshold) if threshold is not None else 'undefined'}"
    )
    return Grade(
        passed,
        score,
        str(reason),
        ctx.assertion.raw,
        tokens_used=usage,
        metadata={"renderedGradingPrompt": rendered},
    )


def js_number(value: Any) -> float | None:
    """`Number(value)` when finite, None otherwise (`null` is 0, as in JavaScript)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value) if not isinstance(value, str) or value.strip() else 0.0
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def inverted(ctx: GradeContext, grade: Grade) -> Grade:
    """promptfoo's inversion for judges: errors stay as they are, verdicts and scores flip."""
    if ctx.inverse and not grade.errored:
        grade.passed = not grade.passed
        grade.score = min(1.0, max(0.0, 1.0 - grade.score))
    return grade


def require_prompt(ctx: GradeContext) -> None:
    kind = ctx.assertion.base_type
    invariant(ctx.prompt, f"{kind} assertion type must have a prompt")
