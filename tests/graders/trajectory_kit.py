"""Grade one run with its trajectory, the way the harness calls trajectory-aware graders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assertion_kit import graded, make_assertion

from evals.model.results import AgentResponse, Grade
from evals.model.trajectory import Step


def tool(name: str, args: dict[str, Any] | None = None, result: Any = None, **extra: Any) -> Step:
    """A tool-call step."""
    return Step(kind="tool", name=name, arguments=args or {}, result=result, **extra)


def grade_run(
    kind: str,
    value: Any = None,
    trajectory: list[Step] | None = None,
    *,
    output: Any = "",
    prompt: str = "the prompt",
    variables: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    suite_config: dict[str, Any] | None = None,
    latency_ms: float = 10.0,
    response: dict[str, Any] | None = None,
    latency_source: str = "wall",
    **extra: Any,
) -> Grade:
    """Grade an agent run (output plus trajectory) with one assertion."""
    agent_response = AgentResponse(output=output, trajectory=trajectory or [], **(response or {}))
    return graded(
        make_assertion(kind, value, **extra),
        output,
        agent_response,
        prompt=prompt,
        variables=variables or {},
        latency_ms=latency_ms,
        latency_source=latency_source,
        suite_root=Path("."),
        agent="agent",
        case_metadata=metadata or {},
        suite_config=suite_config or {},
    )
