"""Each agent's scorecard over an evaluation: mean layer scores and combined score, the
runs that missed a minimum, `missing_span_rate`, and the robustness metrics of the agents
book's chapter 10 (`retry_success`, `fallback_correct`, `partial_task_handled`,
`timeout_rate`).

It reads what grading kept with each run (`grade.metadata["scorecard"]`, see
evals.graders.scorecard) and the runs' error kinds, so it works on slim records too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evals.model.results import RunRecord
from evals.model.summary import AgentScorecard, RunShare

ROBUSTNESS = (
    ("retry", "retry_success"),
    ("fallback", "fallback_correct"),
    ("partial", "partial_task_handled"),
)


def _card(record: RunRecord) -> dict[str, Any] | None:
    grade = record.grade
    return None if grade is None else grade.metadata.get("scorecard")


def _share(cards: list[dict[str, Any]], key: str) -> RunShare:
    answers = [c.get("robustness", {}).get(key) for c in cards]
    applicable = [a for a in answers if a is not None]
    return RunShare(sum(bool(a) for a in applicable), len(applicable))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def agent_scorecard(agent: str, records: Sequence[RunRecord]) -> AgentScorecard | None:
    """The agent's scorecard, None when none of its runs was scored."""
    cards = [card for card in map(_card, records) if card is not None]
    if not cards:
        return None
    layers: dict[str, list[float]] = {}
    for card in cards:
        for layer, value in card["layers"].items():
            layers.setdefault(layer, []).append(float(value))
    expected = sum(int(c.get("trace_expected") or 0) for c in cards)
    missing = sum(int(c.get("trace_missing") or 0) for c in cards)
    traced = any("trace_expected" in c for c in cards)
    shares = {name: _share(cards, key) for key, name in ROBUSTNESS}
    return AgentScorecard(
        agent=agent,
        runs=len(cards),
        layers={layer: sum(v) / len(v) for layer, v in layers.items()},
        score=_mean([float(c["score"]) for c in cards]),
        min_score_failures=sum(bool(c.get("failures")) for c in cards),
        missing_span_rate=(missing / expected if expected else 0.0) if traced else None,
        retry_success=shares["retry_success"],
        fallback_correct=shares["fallback_correct"],
        partial_task_handled=shares["partial_task_handled"],
        timeouts=RunShare(sum(r.error_kind == "timeout" for r in records), len(records)),
    )


def scorecards(records: Sequence[RunRecord], agents: Sequence[str]) -> list[AgentScorecard]:
    """The scorecard of each agent (in `agents`' order) that has scored runs."""
    by_agent: dict[str, list[RunRecord]] = {}
    for record in records:
        by_agent.setdefault(record.key.agent, []).append(record)
    found = (agent_scorecard(agent, by_agent.get(agent, [])) for agent in agents)
    return [card for card in found if card is not None]
