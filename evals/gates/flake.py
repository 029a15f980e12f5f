"""`flake_rate`: the mean per-case probability that two repeats of a case disagree, at most
`max_flake_rate`; a property of the agent, not of the number of repeats. Limits invert
Johnson's skewness-corrected t over cases (docs/statistics.md); errors count as failed runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evals import stats
from evals.gates.families import (
    Hypothesis,
    Levels,
    gate_result,
    judge_family,
    limits_sentence,
    two_sided_confidence,
)
from evals.gates.registry import Evidence, Gate, when_set
from evals.model.summary import AgentStats, CaseAgentStats, GateResult


def _flake_limit(outcomes: list[tuple[int, int]], level: float, side: str) -> float:
    found = stats.flake_probability(outcomes, two_sided_confidence(level))
    assert found is not None
    _, (low, high) = found
    return low if side == "lower" else high


def flake_gate(
    agent: AgentStats, case_stats: Sequence[CaseAgentStats], threshold: float, levels: Levels
) -> GateResult:
    """The `flake_rate` row of `agent` against `threshold`."""
    outcomes = [
        (c.passes, c.counted) for c in case_stats if c.agent == agent.agent and c.counted >= 2
    ]
    if agent.flake_probability is None or not outcomes:
        return GateResult(
            "flake_rate",
            "undetermined",
            threshold,
            None,
            None,
            "no case has two counted runs, so flakiness cannot be observed",
        )
    hypothesis = Hypothesis(
        label="flake_rate",
        measured=agent.flake_probability,
        limit=partial(_flake_limit, outcomes),
        threshold=threshold,
        higher_is_better=False,
    )
    (judged,) = judge_family([hypothesis], levels)
    reason = (
        f"{agent.agent}: two repeats of a case disagree with probability "
        f"{agent.flake_probability:.3f} (mean over {len(outcomes)} cases): "
        f"{limits_sentence(judged, lambda v: f'{v:.3f}')}"
    )
    return gate_result("flake_rate", judged, levels, reason)


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.subject is not None and evidence.config.max_flake_rate is not None
    return [
        flake_gate(
            evidence.subject,
            evidence.summary.case_stats,
            evidence.config.max_flake_rate,
            levels,
        )
    ]


GATE = Gate(
    name="flake_rate",
    keys=("max_flake_rate",),
    statistical=True,
    family=when_set("max_flake_rate", "subject"),
    decide=_decide,
)
