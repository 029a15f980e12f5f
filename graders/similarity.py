"""Embedding similarity assertions as in promptfoo 0.121: similar, similar:cosine,
similar:dot and similar:euclidean.

The embedding provider is chosen and called in graders/judge.py; an embedding failure
yields an errored grade. Coroutine graders: the runner awaits them on its event loop.
"""

from __future__ import annotations

import math

from evals.common.jsvalues import js_string, to_fixed
from evals.graders.base import GradeContext, GraderError
from evals.graders.judge import (
    add_usage,
    cosine_similarity,
    dot_product,
    embed,
    euclidean_distance,
    resolve_provider,
)
from evals.graders.judge_grading import (
    EPSILON,
    judge_failed,
    string_or_strings,
)
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.model.results import Grade

_METRICS = {"": "cosine", "cosine": "cosine", "dot": "dot_product", "euclidean": "euclidean"}


def similarity_grade(
    ctx: GradeContext, value: float, metric: str, threshold: float, usage: dict[str, int]
) -> Grade:
    """promptfoo's buildSimilarityResult for one expected value."""
    inverse = ctx.inverse
    shown, limit = to_fixed(value, 2), js_string(threshold)
    if metric == "euclidean":
        passed = value >= threshold - EPSILON if inverse else value <= threshold + EPSILON
        normalized = 1 / (1 + value)
        near = f"Distance {shown} is less than or equal to threshold {limit}"
        far = f"Distance {shown} is greater than threshold {limit}"
        reason = (far if inverse else near) if passed else (near if inverse else far)
        score = 1 - normalized if inverse else normalized
        return Grade(passed, score, reason, ctx.assertion.raw, tokens_used=usage)
    passed = value <= threshold + EPSILON if inverse else value >= threshold - EPSILON
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
        return judge_failed(
            ctx, first.error or second.error or "Unknown error fetching embeddings", usage
        )
    if first.vector is None or second.vector is None:
        return judge_failed(ctx, "Embedding not found", usage)
    measure = {
        "cosine": cosine_similarity,
        "dot_product": dot_product,
        "euclidean": euclidean_distance,
    }[metric]
    return similarity_grade(ctx, measure(first.vector, second.vector), metric, threshold, usage)


@register(
    "similar", "similar:cosine", "similar:dot", "similar:euclidean", layer="final", promptfoo=True
)
async def similar(ctx: GradeContext) -> Grade:
    """Embedding similarity with the value (or the best of a list) reaches `threshold` (0.75)."""
    kind = ctx.assertion.base_type
    metric = _METRICS.get(kind.partition(":")[2])
    if metric is None:
        raise GraderError(f"Unknown similarity metric: {kind.partition(':')[2]}")
    value = string_or_strings(ctx, "Similarity")
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
