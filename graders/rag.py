"""Retrieval (RAG) assertions as in promptfoo 0.121: context-recall, context-relevance,
context-faithfulness and answer-relevance.

The retrieved context is the `context` var (or, for recall, the prompt), or what the
assertion's `contextTransform` extracts from the provider's output; the judge's
answers are read and scored as promptfoo does, and answer-relevance compares the questions
the judge infers from the answer with the query by embeddings. Coroutine graders: the
runner awaits them on its event loop.
"""

from __future__ import annotations

import math
import re
from typing import Any

from evals.common.jsvalues import js_string, to_fixed
from evals.graders import judge_prompts as prompts
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import invariant
from evals.graders.judge import (
    JudgeReply,
    add_usage,
    cosine_similarity,
    embed,
    nonblank_lines,
    resolve_provider,
)
from evals.graders.judge_grading import (
    EPSILON,
    ask_judge,
    ask_rubric,
    judge_failed,
    render_rubric,
    require_prompt,
    rubric_prompt,
    try_parse,
    unanswered,
)
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade


def resolve_context(ctx: GradeContext, fallback: str | None) -> str | list[str]:
    """The retrieved context: the `context` var (text or list of texts), else the fallback;
    with the assertion's `contextTransform`, what the transform extracts from the output."""
    value = ctx.vars.get("context")
    if isinstance(value, list):
        for index, item in enumerate(value):
            invariant(
                isinstance(item, str),
                f"Invalid context: expected an array of strings, but found "
                f"{_js_type(item)} at index {index}",
            )
    context = value if value else fallback
    source = ctx.assertion.raw.get("contextTransform")
    if source is not None:
        context = _transformed_context(ctx, source)
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


def _transformed_context(ctx: GradeContext, source: Any) -> Any:
    """promptfoo's contextTransform: the transform run over the provider's output (before
    the test's own transform), with the vars, the prompt and the response's metadata."""
    from evals.common.transforms import TransformError, apply_output_transform, transform_label

    scope: dict[str, Any] = {"vars": ctx.vars, "prompt": {"label": ctx.prompt}}
    if ctx.response.metadata:
        scope["metadata"] = ctx.response.metadata
    label = transform_label(source) if isinstance(source, str) else str(source)
    try:
        context = apply_output_transform(
            str(source), ctx.response.output, scope, ctx.suite_root, "contextTransform"
        )
    except TransformError as exc:
        detail = exc.args[0].split("): ", 1)[-1] if "): " in exc.args[0] else exc.args[0]
        raise GraderError(
            f"Failed to transform context using expression '{label}': {detail}"
        ) from None
    valid = isinstance(context, str) or (
        isinstance(context, list) and all(isinstance(c, str) for c in context)
    )
    if not valid:
        raise GraderError(
            f"Failed to transform context using expression '{label}': Invariant failed: "
            f"contextTransform must return a string or array of strings. Got "
            f"{_js_type(context)}. Check your transform expression: {label}"
        )
    return context


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
    passed = score >= threshold - EPSILON
    relation = ">=" if passed else "<"
    reason = f"{label} {to_fixed(score, 2)} is {relation} {js_string(threshold)}"
    return Grade(passed, score, reason, ctx.assertion.raw, tokens_used=usage, metadata=metadata)


@register("context-recall", layer="final", promptfoo=True)
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
    usage: dict[str, int] = {}
    reply = await ask_rubric(ctx, prompts.CONTEXT_RECALL, "context-recall", variables, usage)
    if failure := unanswered(ctx, reply, usage):
        return failure
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


@register("context-relevance", layer="final", promptfoo=True)
async def context_relevance(ctx: GradeContext) -> Grade:
    """Share of the context's sentences the judge extracts as needed to answer the query."""
    query = _query(ctx)
    context = resolve_context(ctx, None)
    variables = {"context": _joined(context), "query": query}
    usage: dict[str, int] = {}
    reply = await ask_rubric(ctx, prompts.CONTEXT_RELEVANCE, "context-relevance", variables, usage)
    if failure := unanswered(ctx, reply, usage):
        return failure
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


@register("context-faithfulness", layer="final", promptfoo=True)
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

    async def ask(part: int, default: str, label: str, variables: dict[str, Any]) -> JudgeReply:
        rendered = render_rubric(rubric_prompt(ctx, default, part), variables)
        return await ask_judge(
            ctx, provider, rendered, f"context-faithfulness-{label}", variables, usage
        )

    variables = {**ctx.vars, "question": query, "answer": try_parse(ctx.output)}
    reply = await ask(0, prompts.CONTEXT_FAITHFULNESS_STATEMENTS, "longform", variables)
    if failure := unanswered(ctx, reply, usage):
        return failure
    statements = list(nonblank_lines(reply.text))
    variables = {**ctx.vars, "context": _joined(context), "statements": statements}
    reply = await ask(1, prompts.CONTEXT_FAITHFULNESS_VERDICTS, "nli", variables)
    if failure := unanswered(ctx, reply, usage):
        return failure
    score = faithfulness_score(reply.text, len(statements))
    return _threshold_grade(ctx, score, "Faithfulness", usage, {"context": context})


@register("answer-relevance", layer="final", promptfoo=True)
async def answer_relevance(ctx: GradeContext) -> Grade:
    """Questions the judge infers from the answer, compared with the query by embeddings."""
    invariant(
        isinstance(ctx.output, str), "answer-relevance assertion type must evaluate a string output"
    )
    require_prompt(ctx)
    query = ctx.vars["query"] if isinstance(ctx.vars.get("query"), str) else ctx.prompt
    embedder = resolve_provider(ctx, "embedding", "answer relevancy check")
    writer = resolve_provider(ctx, "text", "answer relevancy check")
    usage: dict[str, int] = {}
    variables = {"answer": try_parse(ctx.output)}
    rendered = render_rubric(rubric_prompt(ctx, prompts.ANSWER_RELEVANCE), variables)
    questions: list[str] = []
    for _ in range(3):
        reply = await ask_judge(ctx, writer, rendered, "answer-relevance", variables, usage)
        if failure := unanswered(ctx, reply, usage):
            return failure
        questions.append(reply.text)
    target = await embed(embedder, query, ctx.suite_root)
    add_usage(usage, target.token_usage)
    if target.vector is None:
        return judge_failed(ctx, target.error or "No embedding", usage)
    scored: list[dict[str, Any]] = []
    for question in questions:
        vector = await embed(embedder, question, ctx.suite_root)
        add_usage(usage, vector.token_usage)
        if vector.vector is None:
            return judge_failed(ctx, vector.error or "No embedding", usage)
        similarity = cosine_similarity(target.vector, vector.vector)
        scored.append({"question": question, "similarity": similarity})
    similarity = math.fsum(s["similarity"] for s in scored) / len(scored)
    threshold = ctx.assertion.threshold or 0.0
    passed = similarity >= threshold - EPSILON
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
