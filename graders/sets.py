"""`assert-set`: a group of assertions graded together, with its own threshold."""

from __future__ import annotations

from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.graders.scoring import combine
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
    """Grade the nested `assert:` list like a test: weighted mean score, all-pass or threshold.

    The children are graded on the same run by `ctx.grade_nested`, which the grading
    engine supplies.
    """
    children = ctx.assertion.raw.get("assert")
    if not isinstance(children, list) or not children:
        raise GraderError("assert-set needs a non-empty `assert:` list")
    if ctx.grade_nested is None:
        raise GraderError("assert-set is graded by the grading engine, which grades its children")
    grades = []
    for raw in children:
        child = _child(raw)
        grades.append((child, ctx.grade_nested(child)))
    result = combine(grades, ctx.assertion.threshold, ctx.vars)
    result.assertion = ctx.assertion.raw
    return result
