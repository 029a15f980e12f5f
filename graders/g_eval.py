"""g-eval as in promptfoo 0.121: the judge writes evaluation steps for each criterion, then
scores the output 0-10 against them; several criteria are averaged.

A coroutine grader: the runner awaits it on its event loop.
"""

from __future__ import annotations

import json
import math
import re

from evals.common.jsvalues import js_string, js_stringify
from evals.graders import judge_prompts as prompts
from evals.graders.base import GradeContext
from evals.graders.judge import (
    resolve_provider,
)
from evals.graders.judge_grading import (
    ask_judge,
    js_number,
    judge_failed,
    render_rubric,
    rubric_prompt,
    string_or_strings,
    try_parse,
)
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.model.results import Grade

G_EVAL_STEPS_SCHEMA = {
    "type": "object",
    "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
    "required": ["steps"],
    "additionalProperties": False,
}


G_EVAL_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}


async def _g_eval_one(
    ctx: GradeContext, criteria: str, threshold: float, usage: dict[str, int]
) -> Grade:
    """promptfoo's matchesGEval: the judge writes evaluation steps, then scores 0-10."""
    provider = resolve_provider(ctx, "text", "reply geval check")
    steps_vars = {"criteria": criteria}
    steps_prompt = render_rubric(rubric_prompt(ctx, prompts.G_EVAL_STEPS, "steps"), steps_vars)
    reply = await ask_judge(
        ctx, provider, steps_prompt, "g-eval-steps", steps_vars, usage, G_EVAL_STEPS_SCHEMA
    )
    if reply.error:
        return judge_failed(ctx, reply.error, usage)
    if reply.output in (None, ""):
        return judge_failed(ctx, f"G-Eval step-generation call to {provider.id} returned no output")
    match = re.search(r'\{"steps".+\}', reply.text)
    if match is None:
        return judge_failed(
            ctx, f"LLM-proposed evaluation steps are not in JSON format: {reply.text}", usage
        )
    try:
        steps = json.loads(match.group(0)).get("steps")
    except ValueError as exc:
        return judge_failed(
            ctx,
            f"LLM-proposed evaluation steps are not in JSON format: {exc}\n\n{reply.text}",
            usage,
        )
    if not isinstance(steps, list):
        return judge_failed(
            ctx, f"G-Eval steps response has invalid or missing steps: {js_stringify(steps)}"
        )
    if not steps:
        return judge_failed(ctx, "LLM does not propose any evaluation step", usage)
    if not all(isinstance(s, str) and s.strip() for s in steps):
        return judge_failed(
            ctx, f"G-Eval steps response contains invalid steps: {js_stringify(steps)}", usage
        )
    variables = {
        "criteria": criteria,
        "steps": "\n- ".join(steps),
        "maxScore": "10",
        "input": try_parse(ctx.prompt),
        "output": try_parse(output_string(ctx)),
    }
    evaluate = render_rubric(rubric_prompt(ctx, prompts.G_EVAL_EVALUATE, "evaluate"), variables)
    reply = await ask_judge(ctx, provider, evaluate, "g-eval", variables, usage, G_EVAL_SCHEMA)
    if reply.error:
        return judge_failed(ctx, reply.error, usage)
    if reply.output in (None, ""):
        return judge_failed(
            ctx, f"G-Eval evaluation call to {provider.id} returned no output", usage
        )
    return _g_eval_score(ctx, reply.text, threshold, usage)


def _g_eval_score(ctx: GradeContext, text: str, threshold: float, usage: dict[str, int]) -> Grade:
    match = re.search(r"\{.+\}", text)
    if match is None:
        return judge_failed(
            ctx, f"LLM-proposed evaluation result is not in JSON format: {text}", usage
        )
    try:
        result = json.loads(match.group(0))
    except ValueError as exc:
        return judge_failed(
            ctx, f"LLM-proposed evaluation result is not in JSON format: {exc}\n\n{text}", usage
        )
    raw = result.get("score") if isinstance(result, dict) else None
    score = js_number(raw) if isinstance(raw, (int, float, str)) and raw != "" else None
    if score is None or isinstance(raw, bool):
        return judge_failed(
            ctx, f"G-Eval result has invalid or missing score: {js_stringify(raw)}", usage
        )
    if not 0 <= score <= 10:
        return judge_failed(
            ctx, f"G-Eval result score {js_string(score)} is outside the expected 0-10 range", usage
        )
    reason = result.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return judge_failed(
            ctx, f"G-Eval result has invalid or missing reason: {js_stringify(reason)}", usage
        )
    return Grade(score / 10 >= threshold, score / 10, reason, ctx.assertion.raw, tokens_used=usage)


@register("g-eval", layer="final", promptfoo=True)
async def g_eval(ctx: GradeContext) -> Grade:
    """G-Eval: criteria (a string or a list, averaged) scored 0-10, pass at `threshold` (0.7)."""
    value = string_or_strings(ctx, "G-Eval")
    threshold = 0.7 if ctx.assertion.threshold is None else ctx.assertion.threshold
    usage: dict[str, int] = {}
    if isinstance(value, str):
        grade = await _g_eval_one(ctx, value, threshold, usage)
        grade.passed = grade.passed if grade.errored else (grade.score >= threshold) != ctx.inverse
        if ctx.inverse and not grade.errored:
            grade.score = 1.0 - grade.score
        return grade
    if not value:
        reason = "G-Eval assertion requires at least one criterion string in the value array."
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    grades: list[Grade] = []
    for index, criterion in enumerate(value):
        grade = await _g_eval_one(ctx, criterion, threshold, usage)
        if grade.errored:
            reason = (
                f"G-Eval criterion {index + 1}/{len(value)} ({json.dumps(criterion)}) failed: "
                f"{grade.reason}"
            )
            return judge_failed(ctx, reason, usage)
        grades.append(grade)
    average = math.fsum(g.score for g in grades) / len(grades)
    return Grade(
        (average >= threshold) != ctx.inverse,
        1.0 - average if ctx.inverse else average,
        "\n\n".join(g.reason for g in grades),
        ctx.assertion.raw,
        tokens_used=usage,
    )
