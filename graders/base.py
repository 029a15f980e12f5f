"""What every grader receives, and the helpers that turn a check into a Grade."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.model.results import AgentResponse, Grade
from evals.model.suite import Assertion
from evals.model.trajectory import Step


def output_text(output: Any) -> str:
    """An output as text, as promptfoo's string assertions see it: a string as is, nothing
    as "", anything else as JSON (a value JSON cannot hold, in an answer a pytest test
    recorded, as its `str`)."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    import json

    return json.dumps(output, ensure_ascii=False, default=str)


@dataclass(slots=True)
class GradeContext:
    """Everything a grader may read about one run. Graders never write anywhere.

    `output` is the agent output after any transform; `value` the assertion value rendered
    with the test's vars; `inverse` is True for `not-` assertions; `case_options` the test's
    `options` (merged with `defaultTest.options`), where model-graded assertions find their
    grader provider and rubric prompt; `provider_config` the `config` of the agent's provider
    entry (where is-valid-openai-tools-call finds its `tools`) and `provider_id` its id
    (is-valid-function-call asks which provider it is); `grade_nested` grades
    another assertion on this same run (the grading engine supplies it; assert-set grades
    its children with it), leaving a pending grade (a judge, a check off the event loop)
    to await. `latency_ms` is the run's one latency, from the source the
    suite names in `latency_source` (`gates.latency`: wall, the harness's clock, or
    agent, the agent's own report); every grader reads it and no other, but promptfoo's
    `latency` assertion, which reads the agent's report first, as promptfoo does. `case_test` is
    the test as promptfoo holds it (`Case.test`, script assertions' `context.test`);
    `run_memo` is shared by the assertions of one run, for what they would otherwise each
    work out again (the script assertions' context).
    """

    output: Any
    assertion: Assertion
    value: Any
    inverse: bool
    prompt: str
    vars: dict[str, Any]
    response: AgentResponse
    latency_ms: float
    suite_root: Path
    latency_source: str = "wall"
    agent: str = ""
    case_metadata: dict[str, Any] = field(default_factory=dict)
    suite_config: dict[str, Any] = field(default_factory=dict)
    case_options: dict[str, Any] = field(default_factory=dict)
    provider_config: dict[str, Any] = field(default_factory=dict)
    provider_id: str = ""
    grade_nested: Callable[[Assertion], Grade | Awaitable[Grade]] | None = None
    case_test: dict[str, Any] = field(default_factory=dict)
    run_memo: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The output as text, as promptfoo's string assertions see it."""
        return output_text(self.output)

    @property
    def trajectory(self) -> list[Step]:
        """The run's normalized trajectory."""
        return self.response.trajectory


class GraderError(Exception):
    """A grader could not reach a verdict (bad assertion value, grader code raised)."""


class ScriptRaised(GraderError):
    """Code an assertion loads from a file threw, or the file could not be loaded: as in
    promptfoo, the run is an error row whose error is this text (`Error: kaboom`)."""


class ScriptFailed(GraderError):
    """A Python file giving an assertion's value raised: promptfoo fails that check with
    this text as its reason (score 0) and grades the others."""


def verdict(ctx: GradeContext, ok: bool, reason_ok: str, reason_fail: str) -> Grade:
    """A binary grade honoring `not-`: the reason explains the final verdict."""
    passed = ok != ctx.inverse
    if ctx.inverse:
        reason = "Assertion passed" if passed else f"Expected not: {reason_ok}"
    else:
        reason = "Assertion passed" if passed else reason_fail
    return Grade(
        passed=passed, score=1.0 if passed else 0.0, reason=reason, assertion=ctx.assertion.raw
    )


def scored(ctx: GradeContext, score: float, passed: bool, reason: str) -> Grade:
    """A graded score with an explicit verdict (threshold-style assertions)."""
    if ctx.inverse:
        passed = not passed
        score = 1.0 - score
    return Grade(passed=passed, score=score, reason=reason, assertion=ctx.assertion.raw)
