"""`assert-set`: a group of assertions graded together, with its own threshold."""

from __future__ import annotations

from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.model.results import Grade
from evals.model.suite import Assertion


def _child(raw: object) -> Assertion:
    if not isinstance(raw, dict) or "type" not in raw:
        raise GraderError("each assertion inside assert-set needs a type")
    return Assertion(
        type=str(raw["type"]),
        value=raw.get("value"),
        threshold=None if raw.get("threshold") is None else float(raw["threshold"]),
        weight=float(raw.get("weight", 1.0)),
        metric=raw.get("metric"),
        provider=raw.get("provider"),
        transform=raw.get("transform"),
        config=dict(raw.get("config") or {}),
        raw=dict(raw),
    )


@register("assert-set")
def assert_set(ctx: GradeContext) -> Grade:
    """Grade the nested `assert:` list like a test: weighted mean score, all-pass or threshold."""
    from evals.grading import combine, grade_assertion

    children = ctx.assertion.raw.get("assert")
    if not isinstance(children, list) or not children:
        raise GraderError("assert-set needs a non-empty `assert:` list")
    grades = []
    for raw in children:
        child = _child(raw)
        grade = grade_assertion(
            child,
            ctx.output,
            ctx.response,
            prompt=ctx.prompt,
            variables=ctx.vars,
            latency_ms=ctx.latency_ms,
            suite_root=ctx.suite_root,
            agent=ctx.agent,
            case_metadata=ctx.case_metadata,
            suite_config=ctx.suite_config,
            case_options=ctx.case_options,
            provider_config=ctx.provider_config,
        )
        grades.append((child, grade))
    result = combine(grades, ctx.assertion.threshold, ctx.vars)
    result.assertion = ctx.assertion.raw
    return result
