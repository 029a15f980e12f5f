"""Build grading contexts and run single assertions the way the harness does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.grade.grading import AssertionRaised, grade_assertion
from evals.model.results import AgentResponse, Grade
from evals.model.suite import Assertion


def graded(assertion: Assertion, output: Any, response: AgentResponse, **context: Any) -> Grade:
    """`grade_assertion`, with an assertion that raised (its run would be an error row)
    returned as an errored grade whose reason is the row's error message."""
    try:
        return grade_assertion(assertion, output, response, **context)
    except AssertionRaised as exc:
        return Grade(False, 0.0, exc.message, assertion.raw, errored=True)


def make_assertion(kind: str, value: Any = None, **extra: Any) -> Assertion:
    """An Assertion as the loader builds it from a YAML mapping."""
    raw = {"type": kind, **({"value": value} if value is not None else {}), **extra}
    return Assertion(
        type=kind,
        value=value,
        threshold=None if extra.get("threshold") is None else float(extra["threshold"]),
        weight=float(extra.get("weight", 1.0)),
        metric=extra.get("metric"),
        config=dict(extra.get("config") or {}),
        raw=raw,
    )


def run(
    kind: str,
    output: Any,
    value: Any = None,
    *,
    response: AgentResponse | None = None,
    variables: dict[str, Any] | None = None,
    latency_ms: float = 10.0,
    suite_root: Path = Path("."),
    **extra: Any,
) -> Grade:
    """Grade `output` with one assertion (`extra` holds threshold, weight, metric, config)."""
    return graded(
        make_assertion(kind, value, **extra),
        output,
        response or AgentResponse(output=output),
        prompt="the prompt",
        variables=variables or {},
        latency_ms=latency_ms,
        suite_root=suite_root,
        agent="echo",
    )
