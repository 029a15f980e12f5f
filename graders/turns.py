"""The turns of a conversation, each as a run of its own, for assertions with a `turn:`.

A simulated user's run holds the whole conversation: the transcript as its output, and
in its trajectory the messages of both sides with the agent's steps between them, each
tagged with its turn (the number of the user message it answers). An assertion with
`turn: 2` grades the agent's answer to the second user message as if it were a run: its
output is that answer, its trajectory the steps of that turn, its usage, cost and stop
reason that turn's. `turn: -1` (or `last`) is the agent's last answer, `turn: each` every
answer. A run that is not a conversation is one turn, turn 1. A turn's prompt is the
user message it answers, so a grader that reads the question (the verifier: what the
question asks, which figures it gives) reads that turn's question.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from evals.model.results import AgentResponse
from evals.model.trajectory import Step


@dataclass(frozen=True, slots=True)
class TurnView:
    """One answer of the agent: its turn number, output and response."""

    turn: int
    output: Any
    response: AgentResponse
    prompt: str | None = None


def _answers(trajectory: list[Step]) -> list[Step]:
    """The agent's answers in a conversation (messages given at the start excluded)."""
    return [
        s
        for s in trajectory
        if s.kind == "message" and s.name == "assistant" and not s.metadata.get("initial")
    ]


def _asked(trajectory: list[Step], answer: Step) -> str | None:
    """The user message an answer answers."""
    asked = None
    for step in trajectory:
        if step is answer:
            break
        if step.kind == "message" and step.name == "user":
            asked = str(step.result)
    return asked


def _view(response: AgentResponse, answer: Step) -> TurnView:
    turn = int(answer.metadata.get("turn") or 0)
    facts = answer.metadata
    output = facts.get("output", answer.result)
    steps = [
        s for s in response.trajectory if s.kind != "message" and s.metadata.get("turn") == turn
    ]
    return TurnView(
        turn,
        output,
        replace(
            response,
            output=output,
            metadata={**response.metadata, "turn": turn},
            trajectory=steps,
            token_usage=dict(facts.get("tokenUsage") or {}),
            cost=facts.get("cost"),
            stop_reason=facts.get("stopReason"),
            finish_reason=facts.get("finishReason"),
            latency_ms=facts.get("latencyMs"),
        ),
        _asked(response.trajectory, answer),
    )


def turn_views(response: AgentResponse, selector: int | str) -> list[TurnView]:
    """The answers `selector` names (a turn number, negative from the end, `last` or
    `each`); empty when the conversation has no such turn."""
    answers = _answers(response.trajectory)
    if not answers:
        whole = TurnView(1, response.output, response)
        return [whole] if selector in (1, -1, "last", "each") else []
    if selector == "each":
        return [_view(response, a) for a in answers]
    if selector == "last":
        selector = -1
    if not isinstance(selector, int):
        return []
    if selector < 0:
        return [_view(response, answers[selector])] if -selector <= len(answers) else []
    return [_view(response, a) for a in answers if a.metadata.get("turn") == selector]


def answered_turns(response: AgentResponse) -> list[int]:
    """The turns the agent answered, in order."""
    return [int(a.metadata.get("turn") or 0) for a in _answers(response.trajectory)]
