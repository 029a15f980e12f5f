"""One-line checks for tests, each one of the harness's graders.

`check(result, "contains", "6.45 %")` grades an agent's answer with the grader `evals run`
uses for that assertion type, and `assert_trajectory`, `assert_policy`, `assert_budget`
and `assert_verified` name the graders of what the agent did. A failing grade raises
`GradeFailed`, an AssertionError whose message is the grader's reason, so pytest reports
it as a failed test and the plugin as a failed run. Inside a marked test the checks read
the suite file's tool contracts, policy, budget and prices, and the plugin keeps every
grade with the run (a failed policy check is stored as a policy violation).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.model.results import Grade
from evals.model.suite import Assertion
from evals.testing.results import AgentResult, as_result
from evals.testing.runs import EvalsRun, current_run

SEQUENCE_MODES = ("in_order", "exact")
MATCH_MODES = ("strict", "unordered", "subset", "superset")


class UnknownCost(UserWarning):
    """A budget's `max_cost` was not checked: the run's cost is unknown (a model without a
    price); the message names the model and the `prices:` entry that fixes it."""


class GradeFailed(AssertionError):
    """A check's grade failed; `grade` holds the grader's verdict and reason."""

    def __init__(self, grade: Grade) -> None:
        super().__init__(grade.reason)
        self.grade = grade


def check(
    result: Any,
    kind: str,
    value: Any = None,
    *,
    threshold: float | None = None,
    config: dict[str, Any] | None = None,
    transform: str | None = None,
) -> Grade:
    """Grade `result` with the assertion type `kind` (any type a suite's `assert:` takes,
    `not-` prefixes included) and return the grade; raise GradeFailed when it fails.

    `result` is what `evals_agent` returned, an AgentResponse, a provider dict or the
    output text. An unknown type raises the harness's SuiteError naming the fix.
    """
    __tracebackhide__ = True  # pytest shows the failing check's line in the test
    from evals.graders.registry import GROUP_TYPES, check_assertion_type

    check_assertion_type(kind)
    if kind in GROUP_TYPES:
        raise ValueError(f"{kind} compares the outputs of several runs; it cannot check one")
    answer = as_result(result)
    raw: dict[str, Any] = {"type": kind}
    if value is not None:
        raw["value"] = value
    assertion = Assertion(
        type=kind,
        value=value,
        threshold=threshold,
        transform=transform,
        config=dict(config or {}),
        raw=raw,
    )
    run = current_run()
    grade = _graded(answer, assertion, run)
    if run is not None:
        run.grades.append(grade)
        if kind == "policy" and value is None and not config:
            run.policy_checked.append(answer)
    if grade.metadata.get("unknown"):
        warnings.warn(UnknownCost(grade.reason), stacklevel=2)
    if not grade.passed:
        raise GradeFailed(grade)
    return grade


def _graded(answer: AgentResult, assertion: Assertion, run: EvalsRun | None) -> Grade:
    """`assertion`'s grade of `answer`, with what the run's suite file tells the graders."""
    from evals.grade.grading import grade_assertion

    return grade_assertion(
        assertion,
        answer.response.output,
        answer.response,
        prompt=answer.prompt,
        variables=answer.vars,
        latency_ms=answer.response.latency_ms or 0.0,
        suite_root=run.suite_root if run is not None else Path.cwd(),
        agent=run.agent if run is not None else "",
        case_metadata=run.metadata if run is not None else {},
        suite_config=run.suite_config if run is not None else {},
        case_options=run.case_options if run is not None else {},
        provider_config=run.provider_config if run is not None else {},
    )


def grade_suite_policy(run: EvalsRun) -> str | None:
    """Grade every answer the run recorded against the suite file's `policy:` block (when
    it has one), whether or not the test checked it, and keep the grades with the run: a
    violation counts however the test ended (a failed assertion before `assert_policy`, an
    exception, no policy check at all). An answer the test already checked with a bare
    `assert_policy(answer)` is not graded twice. Returns the message of a policy check that
    raised (the run is then an error row), else None."""
    from evals.grade.grading import AssertionRaised

    if not isinstance(run.suite_config.get("policy"), dict):
        return None
    assertion = Assertion(type="policy", raw={"type": "policy"})
    for answer in run.results:
        if any(answer is checked for checked in run.policy_checked):
            continue
        try:
            run.grades.append(_graded(answer, assertion, run))
        except AssertionRaised as exc:
            return f"the suite's policy check raised: {exc.message}"
        run.policy_checked.append(answer)
    return None


def assert_trajectory(result: Any, tools: Sequence[Any], mode: str = "in_order") -> Grade:
    """The agent called `tools`: in this order (`in_order`, others may come between),
    exactly these in this order (`exact`), each at least once (`used`), or matching a
    reference trajectory (`strict`, `unordered`, `subset`, `superset`; a tool may then
    be `{"name": ..., "args": {...}}`)."""
    __tracebackhide__ = True
    steps = list(tools)
    if mode in SEQUENCE_MODES:
        return check(result, "trajectory:tool-sequence", {"steps": steps, "mode": mode})
    if mode == "used":
        return check(result, "trajectory:tool-used", steps)
    if mode in MATCH_MODES:
        return check(result, "trajectory:match", {"calls": steps, "mode": mode})
    known = ", ".join((*SEQUENCE_MODES, "used", *MATCH_MODES))
    raise ValueError(f"assert_trajectory: unknown mode {mode!r}; use one of {known}")


def assert_policy(result: Any, **rules: Any) -> Grade:
    """The agent broke no policy rule: `allow=`, `deny=`, `require_approval=`,
    `forbidden_patterns=`, `patterns=`, `injection={instruction, answer|action}`,
    `max_identical_calls=` (docs/graders.md), over the suite file's own policy block."""
    __tracebackhide__ = True
    return check(result, "policy", rules or None)


def assert_budget(result: Any, **limits: Any) -> Grade:
    """The run stayed within `max_steps=`, `max_tool_calls=`, `max_tokens=`, `max_cost=`,
    `max_latency_ms=` (and the other budget keys), and stopped for `stop_reason=`."""
    __tracebackhide__ = True
    return check(result, "budget", limits)


def assert_verified(result: Any, **rules: Any) -> Grade:
    """Every figure of the answer comes from a tool result or the question, percentages
    from a calculating tool, no datum follows an unresolved tool error, and quoted text
    appears in a tool result (the verifier grader; `rules` override its options)."""
    __tracebackhide__ = True
    return check(result, "verifier", rules or None)
