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


def scorecards(records: Sequence[RunRecord], agents: Sequence[str]) -> list[AgentScorecard]:
    """The scorecard of each agent (in `agents`' order) that has scored runs."""
    tally = ScorecardTally()
    for record in records:
        tally.add(record)
    return tally.cards(agents)


class ScorecardTally:
    """Each agent's scorecard sums, taken one run at a time (`add`), read as
    `AgentScorecard`s (`cards`): the same numbers `scorecards` computes from every record."""

    def __init__(self) -> None:
        self._agents: dict[str, _AgentSums] = {}

    def add(self, record: RunRecord) -> None:
        """Count one run."""
        sums = self._agents.get(record.key.agent)
        if sums is None:
            sums = self._agents[record.key.agent] = _AgentSums()
        sums.add(record)

    def cards(self, agents: Sequence[str]) -> list[AgentScorecard]:
        """The scorecard of each agent (in `agents`' order) that has scored runs."""
        found = (self._agents[a].card(a) for a in agents if a in self._agents)
        return [card for card in found if card is not None]


class _AgentSums:
    """One agent's scorecard sums."""

    __slots__ = (
        "cards",
        "expected",
        "failures",
        "layers",
        "missing",
        "runs",
        "score",
        "shares",
        "timeouts",
        "traced",
    )

    def __init__(self) -> None:
        self.runs = self.cards = self.failures = self.timeouts = 0
        self.expected = self.missing = 0
        self.traced = False
        self.score = 0.0
        self.layers: dict[str, list[float]] = {}
        self.shares = {name: [0, 0] for _, name in ROBUSTNESS}

    def add(self, record: RunRecord) -> None:
        self.runs += 1
        self.timeouts += record.error_kind == "timeout"
        card = _card(record)
        if card is None:
            return
        self.cards += 1
        for layer, value in card["layers"].items():
            total = self.layers.setdefault(layer, [0.0, 0])
            total[0] += float(value)
            total[1] += 1
        self.expected += int(card.get("trace_expected") or 0)
        self.missing += int(card.get("trace_missing") or 0)
        self.traced = self.traced or "trace_expected" in card
        self.score += float(card["score"])
        self.failures += bool(card.get("failures"))
        robustness = card.get("robustness", {})
        for key, name in ROBUSTNESS:
            answer = robustness.get(key)
            if answer is not None:
                self.shares[name][0] += bool(answer)
                self.shares[name][1] += 1

    def card(self, agent: str) -> AgentScorecard | None:
        if not self.cards:
            return None
        missing = (self.missing / self.expected if self.expected else 0.0) if self.traced else None
        shares = {name: RunShare(hits, runs) for name, (hits, runs) in self.shares.items()}
        return AgentScorecard(
            agent=agent,
            runs=self.cards,
            layers={layer: total / count for layer, (total, count) in self.layers.items()},
            score=self.score / self.cards,
            min_score_failures=self.failures,
            missing_span_rate=missing,
            retry_success=shares["retry_success"],
            fallback_correct=shares["fallback_correct"],
            partial_task_handled=shares["partial_task_handled"],
            timeouts=RunShare(self.timeouts, self.runs),
        )
