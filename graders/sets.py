"""`assert-set`: a group of assertions graded together, with its own threshold."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

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


@register("assert-set", layer="final")
def assert_set(ctx: GradeContext) -> Grade | Awaitable[Grade]:
    """Grade the nested `assert:` list like a test: weighted mean score, all-pass or threshold.

    The children are graded on the same run by `ctx.grade_nested`, which the grading
    engine supplies; when one of them is pending (a judge, a check off the event loop),
    the set is too, and its children are awaited together.
    """
    children = ctx.assertion.raw.get("assert")
    if not isinstance(children, list) or not children:
        raise GraderError("assert-set needs a non-empty `assert:` list")
    if ctx.grade_nested is None:
        raise GraderError("assert-set is graded by the grading engine, which grades its children")
    started: list[tuple[Assertion, Any]] = []
    try:
        for raw in children:
            child = _child(raw)
            started.append((child, ctx.grade_nested(child)))
    except BaseException:
        for _, pending in started:
            if inspect.iscoroutine(pending):
                pending.close()  # a child that will not be awaited
        raise
    if all(isinstance(grade, Grade) for _, grade in started):
        return _combined(
            ctx, [(child, grade) for child, grade in started if isinstance(grade, Grade)]
        )
    return _settled(ctx, started)


async def _settled(ctx: GradeContext, started: list[tuple[Assertion, Any]]) -> Grade:
    pending = [grade for _, grade in started if not isinstance(grade, Grade)]
    outcomes = await asyncio.gather(*pending, return_exceptions=True)
    finished: list[Grade] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        finished.append(outcome)
    awaited = iter(finished)
    grades = [(child, g if isinstance(g, Grade) else next(awaited)) for child, g in started]
    return _combined(ctx, grades)


def _combined(ctx: GradeContext, grades: list[tuple[Assertion, Grade]]) -> Grade:
    result = combine(grades, ctx.assertion.threshold, ctx.vars)
    result.assertion = ctx.assertion.raw
    result.metadata = {**result.metadata, "assertionSet": set_metadata(ctx.assertion.raw)}
    return result


def set_metadata(raw: dict[str, Any]) -> dict[str, Any]:
    """What promptfoo's buildAssertionSetMetadata says of an assert-set in its result's
    metadata: its type and how many assertions it holds, with its metric, threshold and
    weight when written."""
    meta: dict[str, Any] = {"type": raw.get("type"), "assertionCount": len(raw.get("assert") or [])}
    for key in ("metric", "threshold", "weight"):
        if raw.get(key) is not None:
            meta[key] = raw[key]
    return meta
