"""The one normalized trajectory model every agent format is converted into.

A trajectory is the ordered list of `Step`s an agent took in one run: model calls, tool
calls, approval requests and grants, and messages. Graders read only this model, so an
OpenAI, Anthropic, OpenTelemetry or harness-loop trajectory is graded the same way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

StepKind = Literal["model", "tool", "approval", "message"]
EFFECT_CLASSES = ("read", "compute", "draft", "write", "send", "publish", "delete")


@dataclass(slots=True)
class Step:
    """One thing the agent did: a model call, a tool call, an approval or a message.

    `result` holds a tool's successful output and `error` its failure (errors are data, not
    exceptions). Times are seconds since the epoch; tokens and cost may be unknown (None).
    `effect` is the tool's effect class and `approval` one of requested/granted/denied.
    """

    kind: StepKind
    name: str
    arguments: dict[str, Any] | None = None
    result: Any = None
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    effect: str | None = None
    approval: str | None = None
    call_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the step finished without an error."""
        return self.error is None

    @property
    def duration_ms(self) -> float | None:
        """Wall time of the step in milliseconds, when both ends are known."""
        if self.started_at is None or self.ended_at is None:
            return None
        return (self.ended_at - self.started_at) * 1000.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict without empty fields, for stores and reports."""
        data = asdict(self)
        return {k: v for k, v in data.items() if v is not None and v != {}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """Rebuild a step from `to_dict` output, ignoring unknown keys."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def tool_calls(trajectory: list[Step]) -> list[Step]:
    """The tool-call steps of a trajectory, in order."""
    return [s for s in trajectory if s.kind == "tool"]


def model_calls(trajectory: list[Step]) -> list[Step]:
    """The model-call steps of a trajectory, in order."""
    return [s for s in trajectory if s.kind == "model"]
