"""Judge verdicts on the output, as in promptfoo 0.121: llm-rubric, factuality,
model-graded-closedqa and trajectory:goal-success.

Each uses promptfoo's default prompt, its parsing of the judge's answer and its scores and
reasons (shared machinery in graders/judge_grading.py). These graders are coroutine
functions: the runner awaits them on its event loop.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evals.common.jsvalues import coerce_string
from evals.graders import judge_prompts as prompts
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import invariant
from evals.graders.judge import (
    first_json_object,
)
from evals.graders.judge_grading import (
    ask_rubric,
    inverted,
    json_grading,
    judge_failed,
    require_prompt,
    try_parse,
    unanswered,
)
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade

FACTUALITY_SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["A", "B", "C", "D", "E"]},
        "reason": {"type": "string"},
    },
    "required": ["category", "reason"],
    "additionalProperties": False,
}


FACTUALITY_CATEGORIES = {
    "A": "The submitted answer is a subset of the expert answer and is fully consistent with it.",
    "B": "The submitted answer is a superset of the expert answer and is fully consistent with it.",
    "C": "The submitted answer contains all the same details as the expert answer.",
    "D": "There is a disagreement between the submitted answer and the expert answer.",
    "E": "The answers differ, but these differences don't matter from the perspective of "
    "factuality.",
}


@register("llm-rubric", layer="final", promptfoo=True)
async def llm_rubric(ctx: GradeContext) -> Grade:
    """The judge decides whether the output satisfies the rubric (the value)."""
    value = assertion_value(ctx)
    invariant(
        value is None or isinstance(value, (str, dict, list)),
        '"llm-rubric" assertion type must have a string or object value',
    )
    variables = {**ctx.vars, "output": try_parse(output_string(ctx)), "rubric": value or ""}
    grade = await json_grading(ctx, prompts.LLM_RUBRIC, "llm-rubric", variables)
    return inverted(ctx, grade)


def _factuality_answer(text: str) -> tuple[str, str]:
    found = first_json_object(text)
    if found is not None and isinstance(found.get("category"), str):
        option = found["category"].strip().upper()
        if not re.fullmatch(r"[A-E]", option):
            raise GraderError(f"Invalid category value: {option}")
        reason = str(found.get("reason") or "").strip()
        return option, reason or f"Category {option}: {FACTUALITY_CATEGORIES[option]}"
    match = re.search(r"\s*\(?([a-eA-E])\)", text)
    if match is None:
        raise GraderError(f"Factuality checker output did not match expected format: {text}")
    tail = re.search(r"\)\s*(.*)", text, re.S)
    return match.group(1).upper(), tail.group(1).strip() if tail and tail.group(1) else text


def _against_value(ctx: GradeContext, name: str, value: str) -> dict[str, Any]:
    """The variables of a judge that reads the prompt, the output and the value as `name`."""
    require_prompt(ctx)
    return {
        **ctx.vars,
        "input": ctx.prompt,
        name: value,
        "completion": try_parse(output_string(ctx)),
    }


@register("factuality", layer="final", promptfoo=True)
async def factuality(ctx: GradeContext) -> Grade:
    """The judge compares the output with the expert answer (the value), categories A-E."""
    value = assertion_value(ctx)
    invariant(isinstance(value, str), "factuality assertion type must have a string value")
    variables = _against_value(ctx, "ideal", value)
    usage: dict[str, int] = {}
    reply = await ask_rubric(
        ctx, prompts.FACTUALITY, "factuality", variables, usage, FACTUALITY_SCHEMA
    )
    if failure := unanswered(ctx, reply, usage):
        return failure
    try:
        option, reason = _factuality_answer(reply.text)
    except GraderError as exc:
        return judge_failed(ctx, str(exc), usage)
    weights = ctx.case_options.get("factuality") or {}
    scores = {
        "A": weights.get("subset", 1),
        "B": weights.get("superset", 1),
        "C": weights.get("agree", 1),
        "D": weights.get("disagree", 0),
        "E": weights.get("differButFactual", 1),
    }
    passed = scores[option] > 0
    return Grade(passed, float(scores[option]), reason, ctx.assertion.raw, tokens_used=usage)


@register("model-graded-closedqa", layer="final", promptfoo=True)
async def closed_qa(ctx: GradeContext) -> Grade:
    """The judge answers Y/N: does the output meet the criterion (the value)?"""
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str), "model-graded-closedqa assertion type must have a string value"
    )
    variables = _against_value(ctx, "criteria", value)
    usage: dict[str, int] = {}
    reply = await ask_rubric(ctx, prompts.CLOSED_QA, "model-graded-closedqa", variables, usage)
    if failure := unanswered(ctx, reply, usage):
        return failure
    answer = reply.text.rstrip()
    if answer.endswith("Y"):
        return Grade(
            True,
            1.0,
            f"The submission meets the criterion:\n{reply.text}",
            ctx.assertion.raw,
            tokens_used=usage,
        )
    if answer.endswith("N"):
        reason = f"The submission does not meet the criterion:\n{reply.text}"
        return Grade(False, 0.0, reason, ctx.assertion.raw, tokens_used=usage)
    return judge_failed(ctx, f"Model grader produced a malformed response:\n{reply.text}", usage)


def trajectory_summary(ctx: GradeContext) -> str:
    """The run's steps as the compact JSON a goal judge reads (type, name, status)."""
    steps = []
    for index, step in enumerate(ctx.trajectory, start=1):
        entry: dict[str, Any] = {"index": index, "type": step.kind, "name": step.name}
        if step.error is not None:
            entry["status"] = "error"
        steps.append(entry)
    return json.dumps({"stepCount": len(steps), "steps": steps}, indent=2, ensure_ascii=False)


def _goal(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, dict) and isinstance(value.get("goal"), str) and value["goal"].strip():
        return value["goal"].strip()
    raise GraderError(
        "trajectory:goal-success assertion must have a string value or an object with a goal "
        "property"
    )


@register("trajectory:goal-success", layer="trajectory", promptfoo=True)
async def goal_success(ctx: GradeContext) -> Grade:
    """The judge decides from the output and the trajectory whether the agent reached the goal."""
    goal = _goal(assertion_value(ctx))
    variables = {
        **ctx.vars,
        "goal": goal,
        "output": try_parse(coerce_string(output_string(ctx))),
        "trajectory": trajectory_summary(ctx),
    }
    grade = await json_grading(
        ctx, prompts.TRAJECTORY_GOAL_SUCCESS, "trajectory:goal-success", variables
    )
    if ctx.inverse and not grade.errored:
        achieved = grade.passed
        grade.passed = not achieved
        grade.score = 0.0 if achieved else 1.0
        grade.reason = (
            f"Agent unexpectedly achieved the goal: {goal}"
            if achieved
            else f"Agent did not achieve the forbidden goal: {goal}"
        )
    return grade
