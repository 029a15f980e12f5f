"""promptfoo's perplexity assertions, read from the token log-probabilities a provider
returns with its output (`logProbs`).

`perplexity` is exp(-mean log-probability): it passes at or below `threshold`, scoring 1
or 0. `perplexity-score` is the logistic of the mean, 1 / (1 + exp(-mean)), in (0, 1):
it passes at or above `threshold` and is itself the score. Without a threshold both
pass. `not-` inverts the verdict (and makes the score of perplexity-score 1 - score). A
response without log-probabilities, or with none in its list, cannot be graded: the row
becomes an error row, as in promptfoo.
"""

from __future__ import annotations

import math

from evals.common.jsvalues import js_string, to_fixed
from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.model.results import Grade


def js_exp(x: float) -> float:
    """JavaScript's Math.exp: infinity past the float range instead of an error."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def mean_log_prob(log_probs: list[float]) -> float:
    """The mean log-probability, summed left to right as promptfoo's `reduce` sums."""
    total = 0.0
    for value in log_probs:
        total += value
    return total / len(log_probs)


def _log_probs(ctx: GradeContext, name: str) -> list[float]:
    log_probs = ctx.response.log_probs
    if not log_probs:
        raise GraderError(
            f"{name} assertion does not support providers that do not return logProbs"
        )
    return log_probs


@register("perplexity", layer="final", promptfoo=True)
def perplexity(ctx: GradeContext) -> Grade:
    """The output's perplexity, exp(-mean log-probability), is at most `threshold`."""
    value = js_exp(-mean_log_prob(_log_probs(ctx, "Perplexity")))
    threshold = ctx.assertion.threshold
    passed = True if threshold is None else (value <= threshold) != ctx.inverse
    relation = "less than or equal to" if ctx.inverse else "greater than"
    reason = (
        "Assertion passed"
        if passed
        else f"Perplexity {to_fixed(value, 2)} is {relation} threshold {js_string(threshold)}"
    )
    return Grade(passed, 1.0 if passed else 0.0, reason, ctx.assertion.raw)


@register("perplexity-score", layer="final", promptfoo=True)
def perplexity_score(ctx: GradeContext) -> Grade:
    """The normalized perplexity score, 1 / (1 + exp(-mean log-probability)), is at least
    `threshold`; the score is that value."""
    value = 1.0 / (1.0 + js_exp(-mean_log_prob(_log_probs(ctx, "perplexity-score"))))
    threshold = ctx.assertion.threshold
    passed = True if threshold is None else (value >= threshold) != ctx.inverse
    relation = "greater than or equal to" if ctx.inverse else "less than"
    reason = (
        "Assertion passed"
        if passed
        else f"Perplexity score {to_fixed(value, 2)} is {relation} threshold {js_string(threshold)}"
    )
    return Grade(passed, 1.0 - value if ctx.inverse else value, reason, ctx.assertion.raw)
