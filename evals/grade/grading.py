"""Apply a case's assertions to one agent response, with promptfoo's scoring rules.

The test score is the weighted mean of assertion scores; the test passes when every
assertion passes, or, with a `threshold`, when the score reaches it. On top of
promptfoo's rules, a policy violation fails the test whatever the weights or threshold.
A test's `assertScoringFunction` may then re-decide the combined grade. A suite with a
`scorecard:` block, or a case with `metadata.min_scores`, is decided by the scorecard
(evals.graders.scorecard): per-layer minimums, the combined score S(r), and still no
compensation for a policy violation.

An assertion that raises (a malformed value, an unknown type, a transform or grader that
throws) makes the run an error row, as in promptfoo, but its other checks are still
graded: grades are independent facts, and a policy violation, a trajectory or a budget
seen in a run whose cost check raised counts in its gate. `grade_case` then raises
`AssertionRaised` carrying that grade, the raised assertion an errored component. A
grader that answers "could not decide" (a judge that failed) is a failed check instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import operator
import traceback
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any

from evals.common.blocking import UserCodeBlocked, interruptible, run_to_completion
from evals.common.jsengine import JavaScriptLimitError
from evals.common.templating import TemplateError, render_value
from evals.graders.base import (
    GradeContext,
    GraderError,
    ScriptFailed,
    ScriptRaised,
    output_text,
)
from evals.graders.contracts import suite_contracts
from evals.graders.cost import resolve_cost, suite_prices
from evals.graders.registry import GROUP_TYPES, Grader, get_grader
from evals.graders.robustness import run_robustness
from evals.graders.scorecard import (
    apply_scorecard,
    parse_min_scores,
    parse_scorecard,
    scorecard_enabled,
)
from evals.graders.scoring import combine
from evals.model.results import AgentResponse, Grade, pick_latency, promptfoo_components
from evals.model.suite import Assertion, Case


class AssertionRaised(Exception):
    """An assertion raised: the run becomes an error row with this message.

    Raised by a case's grading, `grade` is the run's grade all the same: every other
    assertion graded, each one that raised an errored, failed component with its message,
    combined by promptfoo's scoring rules (so a policy violation still marks it).
    `limit` is "time" or "memory" when the sandbox stopped the check at one of its limits,
    "timeout" when the run's watchdog stopped it.
    """

    def __init__(self, message: str, grade: Grade | None = None, limit: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.grade = grade
        self.limit = limit


def raised_grade(assertion: Assertion, raised: AssertionRaised) -> Grade:
    """The component grade of an assertion that raised: failed, errored, with its message."""
    return Grade(False, 0.0, raised.message, assertion.raw, errored=True)


def _detail(exc: Exception) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


# GradeContext's fields that differ between the assertions of one run come first; the
# rest, shared by every assertion of the run, are passed by position in field order.
_PER_ASSERTION = ("output", "assertion", "value", "inverse")
_SHARED_NAMES = tuple(f.name for f in dataclasses.fields(GradeContext))[len(_PER_ASSERTION) :]
if tuple(f.name for f in dataclasses.fields(GradeContext))[: len(_PER_ASSERTION)] != _PER_ASSERTION:
    raise ImportError(f"GradeContext's first fields must be {_PER_ASSERTION}")
_in_field_order = operator.itemgetter(*_SHARED_NAMES)


def _shared_fields(
    output: Any, response: AgentResponse, context: dict[str, Any]
) -> tuple[Any, ...]:
    """The GradeContext fields every assertion of one run shares, worked out once per run,
    in field order after the per-assertion ones (a context is then built by position,
    which is several times cheaper than by keyword).

    `context` holds prompt, variables, latency_ms (the harness's wall time) and
    suite_root, and optionally latency_source (wall, the default, or agent: the latency
    the agent reported), agent, case_metadata, suite_config, case_options,
    provider_config, provider_id and case_test (see GradeContext). `grade_nested` grades
    another assertion on `output`.
    """
    source = context.get("latency_source") or "wall"
    fields = {
        "prompt": context["prompt"],
        "vars": context["variables"],
        "response": response,
        "latency_ms": pick_latency(context["latency_ms"], response.latency_ms, source),
        "latency_source": source,
        "suite_root": context["suite_root"],
        "agent": context.get("agent") or "",
        "case_metadata": context.get("case_metadata") or {},
        "suite_config": context.get("suite_config") or {},
        "case_options": context.get("case_options") or {},
        "provider_config": context.get("provider_config") or {},
        "provider_id": context.get("provider_id") or "",
        "grade_nested": functools.partial(
            start_assertion, output=output, response=response, **context
        ),
        "case_test": context.get("case_test") or {},
        "run_memo": {},
    }
    shared: tuple[Any, ...] = _in_field_order(fields)
    return shared


def _prepare(
    assertion: Assertion,
    output: Any,
    response: AgentResponse,
    context: dict[str, Any],
    shared: tuple[Any, ...] | None = None,
) -> tuple[Grader, GradeContext]:
    """The grader and its context; AssertionRaised when the assertion cannot run.

    `context` is as for `_shared_fields`; `shared` is `_shared_fields` of this run's
    output when the caller has it already (an assertion with a `transform` grades its own
    output and works its fields out again).
    """
    grader = get_grader(assertion.base_type)
    if grader is None:
        raise AssertionRaised(f"Error: Unknown assertion type: {assertion.type}")
    variables = context["variables"]
    if assertion.transform is not None:
        from evals.common.transforms import TransformError, apply_output_transform

        scope = {"vars": variables, "prompt": {"label": context["prompt"]}}
        try:
            output = apply_output_transform(
                assertion.transform, output, scope, context["suite_root"], "assertion transform"
            )
        except TransformError as exc:
            raise AssertionRaised(exc.row_error) from None
        shared = None
    if shared is None:
        shared = _shared_fields(output, response, context)
    try:
        value = render_value(assertion.value, variables)
    except TemplateError as exc:
        raise AssertionRaised(f"Error: {exc}") from None
    ctx = GradeContext(output, assertion, value, assertion.negated, *shared)
    return grader, ctx


def _raised(assertion: Assertion, exc: Exception) -> AssertionRaised:
    if isinstance(exc, AssertionRaised):
        return exc
    if isinstance(exc, JavaScriptLimitError):
        message = f"Error: the {assertion.type} check was stopped: {exc.message}"
        return AssertionRaised(message, limit=exc.limit)
    if isinstance(exc, ScriptRaised):
        return AssertionRaised(str(exc))
    if isinstance(exc, GraderError):
        return AssertionRaised(f"Error: {exc}")
    return AssertionRaised(f"Error: {assertion.type} raised {_detail(exc)}")


def _settled(assertion: Assertion, grade: Grade) -> Grade:
    # promptfoo: a zero-weight assertion is informational only; an assert-set is not an
    # assertion there (its children are), so a failing one still fails the test
    if assertion.weight == 0 and not grade.policy_violation and assertion.type != "assert-set":
        grade.passed = True
    return grade


def grade_assertion(
    assertion: Assertion, output: Any, response: AgentResponse, **context: Any
) -> Grade:
    """Run one assertion; AssertionRaised when it raises (the run is then an error row).

    `context` holds `_prepare`'s keywords (prompt, variables, latency_ms, suite_root, ...).
    A judge (coroutine grader) is run to completion on a private loop; inside the runner,
    `grade_assertion_async` awaits it on the runner's loop instead.
    """
    started = _start_assertion(assertion, output, response, context)
    return started if isinstance(started, Grade) else run_to_completion(started)


@interruptible
def _start_assertion(
    assertion: Assertion,
    output: Any,
    response: AgentResponse,
    context: dict[str, Any],
    shared: tuple[Any, ...] | None = None,
) -> Grade | Coroutine[Any, Any, Grade]:
    """The grade of a pure grader, or the pending grade of a judge for the caller to await."""
    if assertion.turn is not None:
        from evals.grade.turns import start_turns

        return start_turns(assertion, response, context, _start_assertion)
    grader, ctx = _prepare(assertion, output, response, context, shared)
    try:
        grade = grader(ctx)
    except ScriptFailed as exc:
        return Grade(False, 0.0, str(exc), assertion.raw)
    except UserCodeBlocked:
        message = f"Error: the {assertion.type} check was stopped: it ran past the run's timeout"
        raise AssertionRaised(message, limit="timeout") from None
    except Exception as exc:  # user graders may raise anything
        raise _raised(assertion, exc) from None
    if not isinstance(grade, Grade) and inspect.isawaitable(grade):
        return _awaited(assertion, grade)
    return _settled(assertion, grade)


async def _awaited(assertion: Assertion, pending: Awaitable[Grade]) -> Grade:
    try:
        grade = await pending
    except Exception as exc:  # user graders may raise anything
        raise _raised(assertion, exc) from None
    return _settled(assertion, grade)


def start_assertion(
    assertion: Assertion, output: Any, response: AgentResponse, **context: Any
) -> Grade | Coroutine[Any, Any, Grade]:
    """`grade_assertion` that leaves a pending grade (a judge, a check running off the
    event loop) for the caller to await instead of blocking for it."""
    return _start_assertion(assertion, output, response, context)


async def grade_assertion_async(
    assertion: Assertion, output: Any, response: AgentResponse, **context: Any
) -> Grade:
    """`grade_assertion` for the event loop: judges are awaited, pure graders called directly."""
    started = _start_assertion(assertion, output, response, context)
    return started if isinstance(started, Grade) else await started


_TOKEN_KEYS = ("total", "prompt", "completion", "cached", "numRequests")


def _scoring_context(grade: Grade, threshold: float | None) -> dict[str, Any]:
    """The scoring function's context; its component results listed as promptfoo lists them."""
    tokens = {k: sum(c.tokens_used.get(k, 0) for c in grade.component_results) for k in _TOKEN_KEYS}
    context: dict[str, Any] = {
        "componentResults": promptfoo_components([c.to_dict() for c in grade.component_results]),
        "tokensUsed": tokens,
    }
    if threshold is not None:
        context["threshold"] = threshold
    return context


@interruptible
def apply_scoring_function(
    grade: Grade, ref: str, suite_root: Path, threshold: float | None = None
) -> Grade:
    """Let the test's `assertScoringFunction` re-decide the combined grade, as promptfoo does.

    `ref` is `file://x.py[:fn]` (default function `func`) or `file://x.js[:fn]` (run in the
    JavaScript sandbox), called as fn(named_scores, {threshold, componentResults,
    tokensUsed}); the GradingResult it returns overrides the grade's fields. A function that
    raises or returns something else fails the test with "Scoring function error: ...". A
    policy violation still fails the test.
    """
    from evals.common.files import load_function, split_ref
    from evals.common.jsengine import JavaScriptError
    from evals.common.jsfiles import JS_FILES, call_scoring
    from evals.graders.python_assert import is_grading_result
    from evals.graders.scripts import call_json

    try:
        path, name = split_ref(ref)
        context = _scoring_context(grade, threshold)
        if path.endswith(JS_FILES):
            try:
                scores = dict(grade.named_scores)
                result = call_scoring((suite_root / path).resolve(), name, [scores, context])
            except JavaScriptError as exc:
                raise ValueError(exc.message) from None
        else:
            function = load_function(suite_root / path, name or "func", "assertScoringFunction")
            result = call_json(function, grade.named_scores, context)
        if not is_grading_result(result):
            raise ValueError("assertion scoring function must return a GradingResult")
    except Exception as exc:  # user code may raise anything
        return dataclasses.replace(
            grade, passed=False, score=0.0, reason=f"Scoring function error: {exc}"
        )
    scored = Grade.from_dict({**grade.to_dict(), **result})
    scored.component_results = grade.component_results
    scored.metadata = {**dict(result.get("metadata") or {}), **grade.metadata}
    if grade.policy_violation:
        scored.passed, scored.reason, scored.policy_violation = False, grade.reason, True
    return scored


def per_run_assertions(case: Case) -> list[Assertion]:
    """The case's assertions graded on each run alone: all but the group assertions,
    which are decided once every output of the test and repeat exists (evals/grade/groups.py)."""
    return [a for a in case.asserts if a.base_type not in GROUP_TYPES]


def _combined(
    case: Case,
    grades: list[tuple[Assertion, Grade]],
    response: AgentResponse,
    context: dict[str, Any],
) -> Grade:
    if case.asserts and not grades:  # only group assertions: promptfoo scores 0 and passes
        return Grade(True, 0.0, "All assertions passed", None)
    grade = combine(grades, case.threshold, case.vars)
    suite_config = context.get("suite_config") or {}
    if not scorecard_enabled(suite_config, case.metadata):
        return grade
    source = context.get("latency_source") or "wall"
    return apply_scorecard(
        grade,
        grades,
        parse_scorecard(suite_config.get("scorecard"), suite_config.get("budget")),
        parse_min_scores(case.metadata.get("min_scores") or {}),
        resolve_cost(
            response,
            suite_prices(suite_config),
            prompt=context.get("prompt") or "",
            output_text=output_text(response.output),
        ).amount,
        pick_latency(context["latency_ms"], response.latency_ms, source),
        threshold_decides=case.threshold is not None,
        robustness=run_robustness(
            response.trajectory,
            response.stop_reason,
            response.output,
            suite_contracts(suite_config),
        ).to_dict(),
    )


def _finished(case: Case, grade: Grade, context: dict[str, Any]) -> Grade:
    if case.scoring_function is None or not case.asserts:
        return grade
    root = Path(context.get("suite_root") or ".")
    return apply_scoring_function(grade, case.scoring_function, root, case.threshold)


def _case_context(case: Case, **context: Any) -> dict[str, Any]:
    return {
        **context,
        "variables": case.vars,
        "case_metadata": case.metadata,
        "case_options": case.options,
        "case_test": case.test,
    }


def _graded(
    case: Case,
    grades: list[tuple[Assertion, Grade]],
    raised: list[AssertionRaised],
    response: AgentResponse,
    context: dict[str, Any],
) -> Grade:
    """The case's grade; AssertionRaised carrying it when an assertion raised. Such a run
    is an error row: its grade is promptfoo's combination of the checks (policy
    violations included), with neither the scorecard nor the scoring function, which
    decide a verdict the run no longer has."""
    if raised:
        first = raised[0]
        grade = combine(grades, case.threshold, case.vars)
        raise AssertionRaised(first.message, grade, first.limit)
    return _finished(case, _combined(case, grades, response, context), context)


def grade_case(case: Case, response: AgentResponse, *, output: Any, **context: Any) -> Grade:
    """Grade one response against every assertion of a case.

    `context` holds prompt, latency_ms, suite_root, agent and suite_config. Raises
    AssertionRaised, with the grade of every assertion, when one of them raised.
    """
    keywords = _case_context(case, **context)
    shared = _shared_fields(output, response, keywords)
    grades: list[tuple[Assertion, Grade]] = []
    raised: list[AssertionRaised] = []
    for assertion in per_run_assertions(case):
        try:
            started = _start_assertion(assertion, output, response, keywords, shared)
            grade = started if isinstance(started, Grade) else run_to_completion(started)
        except AssertionRaised as exc:
            raised.append(exc)
            grade = raised_grade(assertion, exc)
        grades.append((assertion, grade))
    return _graded(case, grades, raised, response, context)


async def grade_case_async(
    case: Case, response: AgentResponse, *, output: Any, **context: Any
) -> Grade:
    """`grade_case` for the event loop: the case's judges are awaited concurrently.

    Pure graders finish on the spot; only judges become tasks, which keeps a run of
    deterministic assertions free of event-loop scheduling.
    """
    keywords = _case_context(case, **context)
    asserts = per_run_assertions(case)
    shared = _shared_fields(output, response, keywords)
    started: list[Grade | AssertionRaised | Coroutine[Any, Any, Grade]] = []
    for assertion in asserts:
        try:
            started.append(_start_assertion(assertion, output, response, keywords, shared))
        except AssertionRaised as exc:
            started.append(exc)
    pending = [s for s in started if not isinstance(s, Grade | AssertionRaised)]
    judged = iter(await asyncio.gather(*pending, return_exceptions=True) if pending else [])
    grades: list[tuple[Assertion, Grade]] = []
    raised: list[AssertionRaised] = []
    for assertion, outcome in zip(asserts, started, strict=True):
        result: Grade | BaseException = (
            outcome if isinstance(outcome, Grade | AssertionRaised) else next(judged)
        )
        if isinstance(result, AssertionRaised):
            raised.append(result)
            result = raised_grade(assertion, result)
        elif isinstance(result, BaseException):
            raise result
        grades.append((assertion, result))
    return _graded(case, grades, raised, response, context)
