"""promptfoo's grading helpers: invariants, GradingResults and threshold reasons.

The JavaScript value semantics these rely on (`String()`, `JSON.stringify`, `toFixed`)
are in `evals.common.jsvalues`.
"""

from __future__ import annotations

from typing import Any

from evals.common.jsvalues import js_string
from evals.graders.base import GradeContext, GraderError
from evals.model.results import Grade


def invariant(condition: Any, message: str) -> None:
    """promptfoo's `invariant`: a malformed assertion value stops the grader."""
    if not condition:
        raise GraderError(f"Invariant failed: {message}")


def outcome(ctx: GradeContext, passed: bool, reason: str, score: float | None = None) -> Grade:
    """A promptfoo GradingResult: score 1/0 by verdict unless given, "Assertion passed" on pass."""
    return Grade(  # by position (passed, score, reason, assertion): once per check per run
        passed,
        (1.0 if passed else 0.0) if score is None else float(score),
        "Assertion passed" if passed else reason,
        ctx.assertion.raw,
    )


def negation(ctx: GradeContext) -> str:
    """The "not " promptfoo inserts into failure reasons of inverted assertions."""
    return "not " if ctx.inverse else ""


def at_most(
    ctx: GradeContext, measured: float, threshold: float, subject: str, unit: str = ""
) -> Grade:
    """Pass when `measured` is at most `threshold` (above it, inverted), with promptfoo's
    failure reason "<subject> is greater than threshold <threshold><unit>" (the relation
    follows the assertion's inversion, not the measurement)."""
    passed = (measured <= threshold) != ctx.inverse
    relation = "less than or equal to" if ctx.inverse else "greater than"
    return outcome(ctx, passed, f"{subject} is {relation} threshold {js_string(threshold)}{unit}")
