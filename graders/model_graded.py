"""Model-graded assertions: an LLM (or embedding model) judges the output, as in promptfoo 0.121.

llm-rubric, g-eval, factuality, model-graded-closedqa, answer-relevance, context-faithfulness,
context-relevance, context-recall, similar and trajectory:goal-success use promptfoo's
default prompts (graders/judge_prompts.py), its parsing of the judge's answer and its scores
and reasons. The grader provider is chosen and called in graders/judge.py. These graders are
coroutine functions: the runner awaits them on its event loop.

A judge that fails to answer, or answers something unparseable, yields an errored grade
(the judge could not decide), never a silent pass or fail.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from evals.results import Grade
from evals.templating import render
from graders import judge_prompts as prompts
from graders.base import GradeContext, GraderError
from graders.jscompat import coerce_string, invariant, js_string, js_stringify, to_fixed
from graders.judge import (
    GraderProvider,
    JudgeReply,
    add_usage,
    complete,
    cosine_similarity,
    dot_product,
    embed,
    euclidean_distance,
    first_json_object,
    nonblank_lines,
    resolve_provider,
)
from graders.output import output_string
from graders.python_assert import assertion_value
from graders.registry import register
from graders.structured import extract_json_objects

_EPSILON = sys.float_info.epsilon
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
FACTUALITY_SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["A", "B", "C", "D", "E"]},
        "reason": {"type": "string"},
    },
    "required": ["category", "reason"],
    "additionalProperties": False,
}
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
FACTUALITY_CATEGORIES = {
    "A": "The submitted answer is a subset of the expert answer and is fully consistent with it.",
    "B": "The submitted answer is a superset of the expert answer and is fully consistent with it.",
    "C": "The submitted answer contains all the same details as the expert answer.",
    "D": "There is a disagreement between the submitted answer and the expert answer.",
    "E": "The answers differ, but these differences don't matter from the perspective of "
    "factuality.",
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
    if isinstance(custom, str) and custom.startswith("file://"):
        path = (ctx.suite_root / Path(custom[len("file://") :])).resolve()
        if not path.is_file():
            raise GraderError(f"File does not exist: {path}")
        return path.read_text(encoding="utf-8")
    if isinstance(custom, (dict, list)):
        return json.dumps(custom, ensure_ascii=False, separators=(",", ":"))
    invariant(isinstance(custom, str), "rubricPrompt must be a string")
    return custom


def _failed(ctx: GradeContext, reason: str, usage: dict[str, int] | None = None) -> Grade:
    """The judge could not decide: an errored failing grade."""
    return Grade(False, 0.0, reason, ctx.assertion.raw, tokens_used=usage or {}, errored=True)


async def _ask(
    ctx: GradeContext,
    provider: GraderProvider,
    prompt: str,
    label: str,
    variables: dict[str, Any],
    usage: dict[str, int],
    schema: dict[str, Any] | None = None,
) -> JudgeReply:
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


def _no_answer(reply: JudgeReply) -> str | None:
    if reply.error:
        return reply.error
    return "No output" if reply.output in (None, "") else None


async def json_grading(
    ctx: GradeContext, default: str, label: str, variables: dict[str, Any]
) -> Grade:
    """promptfoo's runJsonGradingPrompt: the judge answers `{pass, score, reason}`."""
    template = rubric_prompt(ctx, default)
    rendered = render_rubric(template, variables)
    provider = resolve_provider(ctx, "text", f"{label} check")
    usage: dict[str, int] = {}
    reply = await _ask(ctx, provider, rendered, label, variables, usage, RUBRIC_SCHEMA)
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    if isinstance(reply.output, dict):
        parsed: Any = reply.output
    elif isinstance(reply.output, str):
        found = extract_json_objects(reply.output)
        if not found:
            return _failed(ctx, f"Could not extract JSON from {label} response", usage)
        parsed = found[0]
    else:
        return _failed(
            ctx,
            f"{label} produced malformed response - output must be string or object. "
            f"Output: {js_stringify(reply.output)}",
            usage,
        )
    if not isinstance(parsed, dict):
        return _failed(
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
    score = _number(parsed["score"]) if "score" in parsed else None
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


def _number(value: Any) -> float | None:
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


def _inverted(ctx: GradeContext, grade: Grade) -> Grade:
    """promptfoo's inversion for judges: errors stay as they are, verdicts and scores flip."""
    if ctx.inverse and not grade.errored:
        grade.passed = not grade.passed
        grade.score = min(1.0, max(0.0, 1.0 - grade.score))
    return grade


def _prompt_required(ctx: GradeContext) -> None:
    kind = ctx.assertion.base_type
    invariant(ctx.prompt, f"{kind} assertion type must have a prompt")


@register("llm-rubric")
async def llm_rubric(ctx: GradeContext) -> Grade:
    """The judge decides whether the output satisfies the rubric (the value)."""
    value = assertion_value(ctx)
    invariant(
        value is None or isinstance(value, (str, dict, list)),
        '"llm-rubric" assertion type must have a string or object value',
    )
    variables = {**ctx.vars, "output": try_parse(output_string(ctx)), "rubric": value or ""}
    grade = await json_grading(ctx, prompts.LLM_RUBRIC, "llm-rubric", variables)
    return _inverted(ctx, grade)


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


@register("factuality")
async def factuality(ctx: GradeContext) -> Grade:
    """The judge compares the output with the expert answer (the value), categories A-E."""
    value = assertion_value(ctx)
    invariant(isinstance(value, str), "factuality assertion type must have a string value")
    _prompt_required(ctx)
    variables = {
        **ctx.vars,
        "input": ctx.prompt,
        "ideal": value,
        "completion": try_parse(output_string(ctx)),
    }
    rendered = render_rubric(rubric_prompt(ctx, prompts.FACTUALITY), variables)
    provider = resolve_provider(ctx, "text", "factuality check")
    usage: dict[str, int] = {}
    reply = await _ask(ctx, provider, rendered, "factuality", variables, usage, FACTUALITY_SCHEMA)
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    try:
        option, reason = _factuality_answer(reply.text)
    except GraderError as exc:
        return _failed(ctx, str(exc), usage)
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


@register("model-graded-closedqa")
async def closed_qa(ctx: GradeContext) -> Grade:
    """The judge answers Y/N: does the output meet the criterion (the value)?"""
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str), "model-graded-closedqa assertion type must have a string value"
    )
    _prompt_required(ctx)
    variables = {
        **ctx.vars,
        "input": ctx.prompt,
        "criteria": value,
        "completion": try_parse(output_string(ctx)),
    }
    rendered = render_rubric(rubric_prompt(ctx, prompts.CLOSED_QA), variables)
    provider = resolve_provider(ctx, "text", "model-graded-closedqa check")
    usage: dict[str, int] = {}
    reply = await _ask(ctx, provider, rendered, "model-graded-closedqa", variables, usage)
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
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
    return _failed(ctx, f"Model grader produced a malformed response:\n{reply.text}", usage)


async def _g_eval_one(
    ctx: GradeContext, criteria: str, threshold: float, usage: dict[str, int]
) -> Grade:
    """promptfoo's matchesGEval: the judge writes evaluation steps, then scores 0-10."""
    provider = resolve_provider(ctx, "text", "reply geval check")
    steps_vars = {"criteria": criteria}
    steps_prompt = render_rubric(rubric_prompt(ctx, prompts.G_EVAL_STEPS, "steps"), steps_vars)
    reply = await _ask(
        ctx, provider, steps_prompt, "g-eval-steps", steps_vars, usage, G_EVAL_STEPS_SCHEMA
    )
    if reply.error:
        return _failed(ctx, reply.error, usage)
    if reply.output in (None, ""):
        return _failed(ctx, f"G-Eval step-generation call to {provider.id} returned no output")
    match = re.search(r'\{"steps".+\}', reply.text)
    if match is None:
        return _failed(
            ctx, f"LLM-proposed evaluation steps are not in JSON format: {reply.text}", usage
        )
    try:
        steps = json.loads(match.group(0)).get("steps")
    except ValueError as exc:
        return _failed(
            ctx,
            f"LLM-proposed evaluation steps are not in JSON format: {exc}\n\n{reply.text}",
            usage,
        )
    if not isinstance(steps, list):
        return _failed(
            ctx, f"G-Eval steps response has invalid or missing steps: {js_stringify(steps)}"
        )
    if not steps:
        return _failed(ctx, "LLM does not propose any evaluation step", usage)
    if not all(isinstance(s, str) and s.strip() for s in steps):
        return _failed(
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
    reply = await _ask(ctx, provider, evaluate, "g-eval", variables, usage, G_EVAL_SCHEMA)
    if reply.error:
        return _failed(ctx, reply.error, usage)
    if reply.output in (None, ""):
        return _failed(ctx, f"G-Eval evaluation call to {provider.id} returned no output", usage)
    return _g_eval_score(ctx, reply.text, threshold, usage)


def _g_eval_score(ctx: GradeContext, text: str, threshold: float, usage: dict[str, int]) -> Grade:
    match = re.search(r"\{.+\}", text)
    if match is None:
        return _failed(ctx, f"LLM-proposed evaluation result is not in JSON format: {text}", usage)
    try:
        result = json.loads(match.group(0))
    except ValueError as exc:
        return _failed(
            ctx, f"LLM-proposed evaluation result is not in JSON format: {exc}\n\n{text}", usage
        )
    raw = result.get("score") if isinstance(result, dict) else None
    score = _number(raw) if isinstance(raw, (int, float, str)) and raw != "" else None
    if score is None or isinstance(raw, bool):
        return _failed(
            ctx, f"G-Eval result has invalid or missing score: {js_stringify(raw)}", usage
        )
    if not 0 <= score <= 10:
        return _failed(
            ctx, f"G-Eval result score {js_string(score)} is outside the expected 0-10 range", usage
        )
    reason = result.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return _failed(
            ctx, f"G-Eval result has invalid or missing reason: {js_stringify(reason)}", usage
        )
    return Grade(score / 10 >= threshold, score / 10, reason, ctx.assertion.raw, tokens_used=usage)


@register("g-eval")
async def g_eval(ctx: GradeContext) -> Grade:
    """G-Eval: criteria (a string or a list, averaged) scored 0-10, pass at `threshold` (0.7)."""
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str)
        or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        "G-Eval assertion type must have a string or array of strings value",
    )
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
            return _failed(ctx, reason, usage)
        grades.append(grade)
    average = math.fsum(g.score for g in grades) / len(grades)
    return Grade(
        (average >= threshold) != ctx.inverse,
        1.0 - average if ctx.inverse else average,
        "\n\n".join(g.reason for g in grades),
        ctx.assertion.raw,
        tokens_used=usage,
    )


def resolve_context(ctx: GradeContext, fallback: str | None) -> str | list[str]:
    """The retrieved context: the `context` var (text or list of texts), else the fallback."""
    value = ctx.vars.get("context")
    if isinstance(value, list):
        for index, item in enumerate(value):
            invariant(
                isinstance(item, str),
                f"Invalid context: expected an array of strings, but found "
                f"{_js_type(item)} at index {index}",
            )
    context = value if value else fallback
    valid = (isinstance(context, str) and context) or (
        isinstance(context, list) and context and all(isinstance(c, str) and c for c in context)
    )
    invariant(
        valid,
        'Context is required for context-based assertions. Provide either a "context" variable '
        '(string or array of strings) in your test case or use "contextTransform" to extract '
        "context from the provider response.",
    )
    return context  # type: ignore[return-value]


def _js_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "object" if value is None or isinstance(value, (dict, list)) else "string"


def _joined(context: str | list[str]) -> str:
    return "\n\n".join(context) if isinstance(context, list) else context


def text_sentences(text: str) -> list[str]:
    """promptfoo's splitTextIntoSentences: lines when there are several, else sentences."""
    lines = [line for line in text.split("\n") if line.strip()]
    pieces = lines if len(lines) > 1 else re.split(r"(?<=[.!?])\s+", text)
    return [p.strip() for p in pieces if p.strip() and not re.fullmatch(r"\d+[.)]", p.strip())]


def _threshold_grade(
    ctx: GradeContext,
    score: float,
    label: str,
    usage: dict[str, int],
    metadata: dict[str, Any],
) -> Grade:
    threshold = ctx.assertion.threshold or 0.0
    passed = score >= threshold - _EPSILON
    relation = ">=" if passed else "<"
    reason = f"{label} {to_fixed(score, 2)} is {relation} {js_string(threshold)}"
    return Grade(passed, score, reason, ctx.assertion.raw, tokens_used=usage, metadata=metadata)


@register("context-recall")
async def context_recall(ctx: GradeContext) -> Grade:
    """Share of the expected answer's sentences (the value) the context supports."""
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str),
        "context-recall assertion requires a string value (expected answer or fact to verify)",
    )
    invariant(ctx.prompt, "context-recall assertion requires a prompt")
    context = resolve_context(ctx, ctx.prompt)
    variables = {**ctx.vars, "context": _joined(context), "groundTruth": value}
    rendered = render_rubric(rubric_prompt(ctx, prompts.CONTEXT_RECALL), variables)
    usage: dict[str, int] = {}
    provider = resolve_provider(ctx, "text", "context recall check")
    reply = await _ask(ctx, provider, rendered, "context-recall", variables, usage)
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    lines = [
        line
        for line in nonblank_lines(reply.text)
        if "[attributed]" in line.lower() or "[not attributed]" in line.lower()
    ]
    attributed = [
        "[not attributed]" not in line.lower() and "[attributed]" in line.lower() for line in lines
    ]
    score = sum(attributed) / len(lines) if lines else 0.0
    metadata = {
        "context": context,
        "totalSentences": len(lines),
        "attributedSentences": sum(attributed),
        "score": score,
    }
    return _threshold_grade(ctx, score, "Recall", usage, metadata)


def _query(ctx: GradeContext) -> str:
    kind = ctx.assertion.base_type
    invariant(
        isinstance(ctx.vars.get("query"), str),
        f'{kind} assertion requires a "query" variable with the user question',
    )
    return ctx.vars["query"]


@register("context-relevance")
async def context_relevance(ctx: GradeContext) -> Grade:
    """Share of the context's sentences the judge extracts as needed to answer the query."""
    query = _query(ctx)
    context = resolve_context(ctx, None)
    variables = {"context": _joined(context), "query": query}
    rendered = render_rubric(rubric_prompt(ctx, prompts.CONTEXT_RELEVANCE), variables)
    usage: dict[str, int] = {}
    provider = resolve_provider(ctx, "text", "context relevance check")
    reply = await _ask(ctx, provider, rendered, "context-relevance", variables, usage)
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    segmented = isinstance(context, list) or len(list(nonblank_lines(context))) > 1
    units = (
        [c for c in context if c.strip()] if isinstance(context, list) else text_sentences(context)
    )
    insufficient = "Insufficient Information" in reply.text
    split = (lambda t: list(nonblank_lines(t))) if segmented else text_sentences
    relevant = [] if insufficient else list(dict.fromkeys(split(reply.text)))
    count = min(len(relevant), len(units))
    score = count / len(units) if units else 0.0
    metadata = {
        "context": context,
        "extractedSentences": relevant,
        "totalContextUnits": len(units),
        "relevantSentenceCount": count,
        "insufficientInformation": insufficient,
        "score": score,
    }
    return _threshold_grade(ctx, score, "Context relevance", usage, metadata)


def faithfulness_score(verdicts: str, statements: int) -> float:
    """Share of statements the judge's natural-language-inference verdicts call supported."""
    text = verdicts.lower().strip()
    marker = "final verdict for each statement in order:"
    score = 0.0
    if statements > 0:
        if marker in text:
            answers = [a for a in text[text.index(marker) + len(marker) :].split(".") if a.strip()]
            if answers:
                unsupported = sum("yes" not in a for a in answers)
                score = 1 - (unsupported + max(0, statements - len(answers))) / statements
        else:
            no, yes = text.count("verdict: no"), text.count("verdict: yes")
            if no + yes > 0:
                score = 1 - (no + max(0, statements - no - yes)) / statements
    return min(1.0, max(0.0, score))


@register("context-faithfulness")
async def context_faithfulness(ctx: GradeContext) -> Grade:
    """Share of the output's statements that the context supports (no hallucination)."""
    query = _query(ctx)
    invariant(
        isinstance(ctx.output, str),
        "context-faithfulness assertion requires string output from the provider",
    )
    context = resolve_context(ctx, None)
    custom = ctx.assertion.raw.get("rubricPrompt") or ctx.case_options.get("rubricPrompt")
    invariant(not custom or isinstance(custom, list), "rubricPrompt must be an array")
    provider = resolve_provider(ctx, "text", "faithfulness check")
    usage: dict[str, int] = {}
    variables = {**ctx.vars, "question": query, "answer": try_parse(ctx.output)}
    template = rubric_prompt(ctx, prompts.CONTEXT_FAITHFULNESS_STATEMENTS, 0)
    reply = await _ask(
        ctx,
        provider,
        render_rubric(template, variables),
        "context-faithfulness-longform",
        variables,
        usage,
    )
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    statements = list(nonblank_lines(reply.text))
    variables = {**ctx.vars, "context": _joined(context), "statements": statements}
    template = rubric_prompt(ctx, prompts.CONTEXT_FAITHFULNESS_VERDICTS, 1)
    reply = await _ask(
        ctx,
        provider,
        render_rubric(template, variables),
        "context-faithfulness-nli",
        variables,
        usage,
    )
    problem = _no_answer(reply)
    if problem:
        return _failed(ctx, problem, usage)
    score = faithfulness_score(reply.text, len(statements))
    return _threshold_grade(ctx, score, "Faithfulness", usage, {"context": context})


@register("answer-relevance")
async def answer_relevance(ctx: GradeContext) -> Grade:
    """Questions the judge infers from the answer, compared with the query by embeddings."""
    invariant(
        isinstance(ctx.output, str), "answer-relevance assertion type must evaluate a string output"
    )
    _prompt_required(ctx)
    query = ctx.vars["query"] if isinstance(ctx.vars.get("query"), str) else ctx.prompt
    embedder = resolve_provider(ctx, "embedding", "answer relevancy check")
    writer = resolve_provider(ctx, "text", "answer relevancy check")
    usage: dict[str, int] = {}
    variables = {"answer": try_parse(ctx.output)}
    rendered = render_rubric(rubric_prompt(ctx, prompts.ANSWER_RELEVANCE), variables)
    questions: list[str] = []
    for _ in range(3):
        reply = await _ask(ctx, writer, rendered, "answer-relevance", variables, usage)
        problem = _no_answer(reply)
        if problem:
            return _failed(ctx, problem, usage)
        questions.append(reply.text)
    target = await embed(embedder, query, ctx.suite_root)
    add_usage(usage, target.token_usage)
    if target.vector is None:
        return _failed(ctx, target.error or "No embedding", usage)
    scored: list[dict[str, Any]] = []
    for question in questions:
        vector = await embed(embedder, question, ctx.suite_root)
        add_usage(usage, vector.token_usage)
        if vector.vector is None:
            return _failed(ctx, vector.error or "No embedding", usage)
        similarity = cosine_similarity(target.vector, vector.vector)
        scored.append({"question": question, "similarity": similarity})
    similarity = math.fsum(s["similarity"] for s in scored) / len(scored)
    threshold = ctx.assertion.threshold or 0.0
    passed = similarity >= threshold - _EPSILON
    relation = "greater" if passed else "less"
    reason = (
        f"Relevance {to_fixed(similarity, 2)} is {relation} than threshold {js_string(threshold)}"
    )
    metadata = {
        "generatedQuestions": scored,
        "averageSimilarity": similarity,
        "threshold": threshold,
    }
    return Grade(
        passed, similarity, reason, ctx.assertion.raw, tokens_used=usage, metadata=metadata
    )


_METRICS = {"": "cosine", "cosine": "cosine", "dot": "dot_product", "euclidean": "euclidean"}


def similarity_grade(
    ctx: GradeContext, value: float, metric: str, threshold: float, usage: dict[str, int]
) -> Grade:
    """promptfoo's buildSimilarityResult for one expected value."""
    inverse = ctx.inverse
    shown, limit = to_fixed(value, 2), js_string(threshold)
    if metric == "euclidean":
        passed = value >= threshold - _EPSILON if inverse else value <= threshold + _EPSILON
        normalized = 1 / (1 + value)
        near = f"Distance {shown} is less than or equal to threshold {limit}"
        far = f"Distance {shown} is greater than threshold {limit}"
        reason = (far if inverse else near) if passed else (near if inverse else far)
        score = 1 - normalized if inverse else normalized
        return Grade(passed, score, reason, ctx.assertion.raw, tokens_used=usage)
    passed = value <= threshold + _EPSILON if inverse else value >= threshold - _EPSILON
    above = f"Similarity {shown} is greater than or equal to threshold {limit}"
    below = f"Similarity {shown} is less than threshold {limit}"
    reason = (below if inverse else above) if passed else (above if inverse else below)
    return Grade(
        passed, 1 - value if inverse else value, reason, ctx.assertion.raw, tokens_used=usage
    )


async def _similarity(
    ctx: GradeContext, expected: str, metric: str, threshold: float, usage: dict[str, int]
) -> Grade:
    provider = resolve_provider(ctx, "embedding", "similarity check")
    first = await embed(provider, expected, ctx.suite_root)
    second = await embed(provider, output_string(ctx), ctx.suite_root)
    add_usage(usage, first.token_usage)
    add_usage(usage, second.token_usage)
    if first.error or second.error:
        return _failed(
            ctx, first.error or second.error or "Unknown error fetching embeddings", usage
        )
    if first.vector is None or second.vector is None:
        return _failed(ctx, "Embedding not found", usage)
    measure = {
        "cosine": cosine_similarity,
        "dot_product": dot_product,
        "euclidean": euclidean_distance,
    }[metric]
    return similarity_grade(ctx, measure(first.vector, second.vector), metric, threshold, usage)


@register("similar", "similar:cosine", "similar:dot", "similar:euclidean")
async def similar(ctx: GradeContext) -> Grade:
    """Embedding similarity with the value (or the best of a list) reaches `threshold` (0.75)."""
    kind = ctx.assertion.base_type
    metric = _METRICS.get(kind.partition(":")[2])
    if metric is None:
        raise GraderError(f"Unknown similarity metric: {kind.partition(':')[2]}")
    value = assertion_value(ctx)
    invariant(
        isinstance(value, str)
        or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        "Similarity assertion type must have a string or array of strings value",
    )
    threshold = 0.75 if ctx.assertion.threshold is None else ctx.assertion.threshold
    usage: dict[str, int] = {}
    if isinstance(value, str):
        return await _similarity(ctx, value, metric, threshold, usage)
    closest: Grade | None = None
    best = -math.inf
    for expected in value:
        grade = await _similarity(ctx, expected, metric, threshold, usage)
        if ctx.inverse:
            if not grade.passed:
                return grade
            if closest is None or grade.score < closest.score:
                closest = grade
        else:
            if grade.passed:
                return grade
            best = max(best, grade.score)
    if ctx.inverse and closest is not None:
        return closest
    reason = "None of the provided values met the similarity threshold"
    return Grade(False, best, reason, ctx.assertion.raw, tokens_used=usage)


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


@register("trajectory:goal-success")
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
