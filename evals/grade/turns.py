"""Assertions with a `turn:`: graded on one answer of a conversation, or on each of them.

Each selected answer is graded as a run of its own (`evals.graders.turns`); the
assertion's grade is the first failing answer's, its reason naming the turn, else a pass
over every selected answer. An answer that does not exist (the conversation ended before
turn 3) fails the assertion.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine
from typing import Any

from evals.graders.turns import TurnView, answered_turns, turn_views
from evals.model.results import AgentResponse, Grade
from evals.model.suite import Assertion

Started = Grade | Coroutine[Any, Any, Grade]
Start = Callable[[Assertion, Any, AgentResponse, dict[str, Any]], Started]


def _turned(turn: int, grade: Grade) -> Grade:
    """A turn's grade, its reason naming the turn."""
    return dataclasses.replace(
        grade,
        reason=f"turn {turn}: {grade.reason}",
        metadata={**grade.metadata, "turn": turn},
    )


def _merged(assertion: Assertion, graded: list[tuple[int, Grade]]) -> Grade:
    failed = [(turn, grade) for turn, grade in graded if not grade.passed]
    if failed:
        return _turned(*failed[0])
    if len(graded) == 1:
        return _turned(*graded[0])
    score = sum(grade.score for _, grade in graded) / len(graded)
    turns = ", ".join(str(turn) for turn, _ in graded)
    return Grade(
        True,
        score,
        f"turns {turns}: {graded[-1][1].reason}",
        assertion.raw,
        named_scores=graded[-1][1].named_scores,
        metadata={"turns": [turn for turn, _ in graded]},
    )


def _prompted(context: dict[str, Any], view: TurnView) -> dict[str, Any]:
    """The grading context of one answer: its prompt is the conversation before it."""
    return context if view.prompt is None else {**context, "prompt": view.prompt}


def start_turns(
    assertion: Assertion, response: AgentResponse, context: dict[str, Any], start: Start
) -> Started:
    """The grade of an assertion with a `turn:`, or the pending grade when a judge grades it.

    `start` grades the assertion (without its turn) on one answer's output and response.
    """
    selector = assertion.turn
    assert selector is not None
    views = turn_views(response, selector)
    if not views:
        answered = answered_turns(response) or [1]
        return Grade(
            assertion.weight == 0,  # a zero-weight assertion is informational only
            0.0,
            f"turn {selector}: the conversation has no such turn (the agent answered "
            f"turn(s) {', '.join(str(t) for t in answered)})",
            assertion.raw,
        )
    plain = dataclasses.replace(assertion, turn=None)
    started = [
        (view.turn, start(plain, view.output, view.response, _prompted(context, view)))
        for view in views
    ]
    if all(isinstance(grade, Grade) for _, grade in started):
        return _merged(
            assertion, [(turn, grade) for turn, grade in started if isinstance(grade, Grade)]
        )
    return _awaited(assertion, views, started)


async def _awaited(
    assertion: Assertion, views: list[TurnView], started: list[tuple[int, Started]]
) -> Grade:
    async def settled(pending: Started) -> Grade:
        return pending if isinstance(pending, Grade) else await pending

    grades = await asyncio.gather(*(settled(pending) for _, pending in started))
    return _merged(
        assertion, [(view.turn, grade) for view, grade in zip(views, grades, strict=True)]
    )
