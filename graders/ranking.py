"""Group assertions, as in promptfoo 0.121: max-score and select-best.

They grade a group of outputs (every prompt and agent of one test and repeat), not one
run: each output gets a component result, exactly one passes (the winner) and the others
fail. `max-score` is deterministic: an output's score is the average (or sum), optionally
weighted by assertion type, of its other assertion scores; the highest wins, ties go to the
first output, and a `threshold` the best score misses selects nothing. `select-best` asks
the grader provider (chosen as for llm-rubric) for the index of the best output.
`merge_group_verdict` folds a component into the run's grade with promptfoo's rules.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from evals.common.jsvalues import js_string, to_fixed
from evals.graders import judge_prompts as prompts
from evals.graders.base import GradeContext, GraderError
from evals.graders.judge_grading import ask_rubric, judge_failed, try_parse, unanswered
from evals.graders.registry import GROUP_TYPES, value_check
from evals.model.results import AgentResponse, Grade, promptfoo_components
from evals.model.suite import Assertion, Case

METHODS = ("average", "sum")


@value_check("max-score")
def check_max_score_value(value: Any) -> None:
    """A max-score value is absent or `{method: average|sum, weights: {type: n}, threshold}`."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise GraderError("max-score value must be an object with method, weights or threshold")
    if value.get("method", "average") not in METHODS:
        raise GraderError(f"max-score method must be one of {', '.join(METHODS)}")
    weights = value.get("weights", {})
    if not isinstance(weights, dict) or not all(
        isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights.values()
    ):
        raise GraderError("max-score weights must map assertion types to numbers")
    threshold = value.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, (int, float))
    ):
        raise GraderError("max-score threshold must be a number")


@value_check("select-best")
def check_select_best_value(value: Any) -> None:
    """A select-best value is the criteria text the grader compares the outputs by."""
    if not isinstance(value, str):
        raise GraderError("select-best must have a string value")


def _failed_all(count: int, reason: str, assertion: Assertion) -> list[Grade]:
    return [Grade(False, 0.0, reason, assertion.raw, errored=True) for _ in range(count)]


def _aggregate(grade: Grade, weights: dict[str, Any], method: str) -> tuple[float, int, float]:
    """(score, assertion count, total weight) of a run's non-group components, as promptfoo
    lists them (an assert-set's components and those a script returned count one by one;
    a missing or NaN score counts 0)."""
    listed = promptfoo_components([c.to_dict() for c in grade.component_results])
    relevant = [
        c
        for c in listed
        if c.get("assertion") is not None and c["assertion"].get("type") not in GROUP_TYPES
    ]
    if not relevant:
        raise GraderError(
            "max-score requires at least one other assertion (besides max-score or "
            "select-best) to aggregate scores from"
        )
    total = total_weight = 0.0
    for component in relevant:
        weight = weights.get(str(component["assertion"].get("type") or "unknown"), 1)
        score = component.get("score")
        total += (0.0 if not score or math.isnan(score) else score) * weight
        total_weight += weight
    if method == "sum":
        return total, len(relevant), total_weight
    return (total / total_weight if total_weight > 0 else 0.0), len(relevant), total_weight


def max_score(assertion: Assertion, grades: list[Grade]) -> list[Grade]:
    """One max-score component per graded output of the group, in the group's order."""
    if len(grades) < 2:
        reason = "max-score assertion must have at least two outputs to compare between"
        return _failed_all(len(grades), reason, assertion)
    options = assertion.value if isinstance(assertion.value, dict) else {}
    method = str(options.get("method", "average"))
    weights = options.get("weights") or {}
    threshold = options.get("threshold")
    try:
        scored = [_aggregate(grade, weights, method) for grade in grades]
    except GraderError as exc:
        return _failed_all(len(grades), str(exc), assertion)
    best, winner = float("-inf"), 0
    for index, (score, _, _) in enumerate(scored):
        if score > best:
            best, winner = score, index
    meets = threshold is None or best >= threshold
    out = []
    for index, (score, count, total_weight) in enumerate(scored):
        won = index == winner and meets
        if won:
            reason = f"Selected as highest scoring output (score: {to_fixed(score, 3)})"
        elif score == best and not meets:
            reason = (
                f"Not selected - score {to_fixed(score, 3)} below threshold {js_string(threshold)}"
            )
        else:
            reason = f"Not selected (score: {to_fixed(score, 3)}, max: {to_fixed(best, 3)})"
        named = {"maxScore": score, "assertionCount": float(count), "totalWeight": total_weight}
        out.append(Grade(won, 1.0 if won else 0.0, reason, assertion.raw, named_scores=named))
    return out


def _verdict(text: str) -> int | None:
    found = re.search(r"\d+", text.strip())
    return int(found.group(0)) if found else None


async def select_best(
    assertion: Assertion,
    case: Case,
    outputs: list[Any],
    *,
    variables: dict[str, Any],
    prompt: str,
    response: AgentResponse,
    suite_root: Path,
    suite_config: dict[str, Any],
) -> list[Grade]:
    """One select-best component per output: the grader provider names the best index.

    The judge sees the test's vars, `criteria` (the value) and `outputs`; a judge that fails
    or names no valid index fails every output with an errored grade.
    """
    count = len(outputs)
    if count < 2:
        reason = "select-best assertion must have at least two outputs to compare between"
        return _failed_all(count, reason, assertion)
    if not isinstance(assertion.value, str):
        return _failed_all(count, "select-best must have a string value", assertion)
    ctx = GradeContext(
        output=None,
        assertion=assertion,
        value=assertion.value,
        inverse=False,
        prompt=prompt,
        vars=variables,
        response=response,
        latency_ms=0.0,
        suite_root=suite_root,
        case_metadata=case.metadata,
        suite_config=suite_config,
        case_options=case.options,
    )
    criteria = assertion.value
    scope = {**variables, "criteria": criteria, "outputs": [try_parse(o) for o in outputs]}
    usage: dict[str, int] = {}
    try:
        reply = await ask_rubric(ctx, prompts.SELECT_BEST, "select-best", scope, usage)
    except GraderError as exc:
        return _failed_all(count, str(exc), assertion)
    failure = unanswered(ctx, reply, usage)
    if failure is not None:
        return [dataclasses.replace(failure) for _ in range(count)]
    index = _verdict(reply.text)
    if index is None or index >= count:
        reason = f"Invalid select-best verdict: {'NaN' if index is None else index}"
        return [judge_failed(ctx, reason, dict(usage)) for _ in range(count)]
    return [
        Grade(
            i == index,
            1.0 if i == index else 0.0,
            f"Output selected as the best: {criteria}"
            if i == index
            else f"Output not selected: {criteria}",
            assertion.raw,
            tokens_used=dict(usage),
        )
        for i in range(count)
    ]


def merge_group_verdict(grade: Grade, component: Grade) -> Grade:
    """The run's grade with a group component folded in, as promptfoo merges it.

    The run passes only if it passed and won. A loss sets the score to the component's;
    max-score replaces the reason only of a run that was passing, select-best always; the
    judge's tokens count towards the run's. The run's named scores are unchanged.
    """
    kind = (component.assertion or {}).get("type")
    passed = grade.passed and component.passed
    score = grade.score if component.passed else component.score
    if kind == "select-best":
        reason = grade.reason if component.passed else component.reason
    else:
        reason = component.reason if (grade.passed and not component.passed) else grade.reason
    tokens = dict(grade.tokens_used)
    if kind == "select-best" and component.tokens_used:
        for key, value in component.tokens_used.items():
            tokens[key] = tokens.get(key, 0) + value
    return dataclasses.replace(
        grade,
        passed=passed,
        score=score,
        reason=reason,
        component_results=[*grade.component_results, component],
        tokens_used=tokens,
    )
