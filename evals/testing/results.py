"""What an agent answered inside a test: its response with the prompt it answered.

`evals_agent(...)` returns an `AgentResult`; `evals_run.record(...)` and the checks of
`evals.testing.checks` accept one, a bare `AgentResponse`, promptfoo's provider dict
(`{"output": ..., "tokenUsage": ..., "cost": ...}`), an object of the team's own with an
`output` attribute (and, when it has them, `trajectory`, `cost`, `token_usage` or
`usage`, `stop_reason`, `latency_ms`, `metadata`, `error`), or a plain string (the output
alone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evals.model.results import AgentResponse
from evals.model.trajectory import Step, tool_calls


@dataclass(slots=True)
class AgentResult:
    """One answer of an agent: the normalized response, the prompt and its variables."""

    response: AgentResponse
    prompt: str = ""
    vars: dict[str, Any] = field(default_factory=dict)

    @property
    def output(self) -> Any:
        """The agent's final output (after the provider's transform, when it has one)."""
        return self.response.output

    @property
    def text(self) -> str:
        """The output as text, as the harness's string assertions read it."""
        out = self.response.output
        if isinstance(out, str):
            return out
        return "" if out is None else json.dumps(out, ensure_ascii=False)

    @property
    def trajectory(self) -> list[Step]:
        """Every model call, tool call, approval and message of the run, in order."""
        return self.response.trajectory

    @property
    def tools(self) -> list[str]:
        """The names of the tools the agent called, in order."""
        return [step.name for step in tool_calls(self.response.trajectory)]

    @property
    def cost(self) -> float | None:
        """The run's cost as the agent reported it (None when unknown)."""
        return self.response.cost

    @property
    def latency_ms(self) -> float | None:
        """How long the agent took, as it reported or the harness measured."""
        return self.response.latency_ms


def as_result(value: Any, prompt: str = "") -> AgentResult:
    """An `AgentResult` from any answer shape the checks and `record` accept.

    Raises TypeError for other values, and the harness's MalformedResponse for a dict
    that is not a provider response (both make the run an error row).
    """
    if isinstance(value, AgentResult):
        return value
    if isinstance(value, AgentResponse):
        return AgentResult(value, prompt)
    if isinstance(value, str):
        return AgentResult(AgentResponse(output=value), prompt)
    if not isinstance(value, dict) and hasattr(value, "output"):
        value = {
            key: getattr(value, name)
            for name, key in _ATTRIBUTES.items()
            if getattr(value, name, None) is not None
        }
    if isinstance(value, dict):
        from evals.agents.base import normalize_response

        return AgentResult(normalize_response(value), prompt)
    raise TypeError(
        f"cannot read an agent answer from {type(value).__name__}: pass an AgentResult, "
        "an AgentResponse, a provider dict with 'output', an object with an `output` "
        "attribute, or a string"
    )


# An answer object's attributes, and the provider-dict keys they stand for.
_ATTRIBUTES = {
    "output": "output",
    "error": "error",
    "trajectory": "trajectory",
    "cost": "cost",
    "token_usage": "tokenUsage",
    "usage": "tokenUsage",
    "stop_reason": "stopReason",
    "latency_ms": "latencyMs",
    "metadata": "metadata",
}


def merged(results: Sequence[AgentResult]) -> AgentResult:
    """Several answers of one run (a multi-turn test) as one: the last output and stop
    reason, every step in order, and usage, cost and latency added up."""
    if len(results) == 1:
        return results[0]
    usage: dict[str, int] = {}
    for result in results:
        for key, amount in result.response.token_usage.items():
            usage[key] = usage.get(key, 0) + amount
    costs = [r.response.cost for r in results if r.response.cost is not None]
    latencies = [r.response.latency_ms for r in results if r.response.latency_ms is not None]
    last = results[-1]
    response = AgentResponse(
        output=last.response.output,
        token_usage=usage,
        cost=sum(costs) if costs else None,
        metadata={k: v for r in results for k, v in r.response.metadata.items()},
        trajectory=[step for r in results for step in r.response.trajectory],
        stop_reason=last.response.stop_reason,
        finish_reason=last.response.finish_reason,
        latency_ms=sum(latencies) if latencies else None,
        trace=[span for r in results for span in r.response.trace],
    )
    return AgentResult(response, results[0].prompt, dict(results[0].vars))
