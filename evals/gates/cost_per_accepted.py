"""`cost_per_accepted`: total cost over passing runs at most `max_cost_per_accepted`, with
delta-method limits (docs/statistics.md). Spending money and accepting nothing fails
outright; a cost the harness could not work out (a model without a price) leaves it
undetermined, naming the model and the fix.
"""

from __future__ import annotations

from functools import partial

from evals.analysis.summarize import cost_per_accepted_interval
from evals.gates.families import (
    Hypothesis,
    Levels,
    gate_result,
    judge_family,
    limits_sentence,
    two_sided_confidence,
)
from evals.gates.registry import Evidence, Gate, when_set
from evals.model.summary import AgentStats, GateResult, GateStatus


def _cost_limit(estimate: float, standard_error: float, level: float, side: str) -> float:
    interval = cost_per_accepted_interval(estimate, standard_error, two_sided_confidence(level))
    return interval[0] if side == "lower" else interval[1]


def cost_per_accepted_gate(agent: AgentStats, threshold: float, levels: Levels) -> GateResult:
    """The `cost_per_accepted` row of `agent` against `threshold`."""
    value, error = agent.cost_per_accepted, agent.cost_per_accepted_se
    unknown = agent.unknown_cost_note()
    if unknown is not None:
        return GateResult("cost_per_accepted", "undetermined", threshold, None, None, unknown)
    if value is None:
        status: GateStatus = "fail" if agent.total_cost else "undetermined"
        return GateResult(
            "cost_per_accepted",
            status,
            threshold,
            None,
            None,
            f"{agent.agent} had no accepted run, spending {agent.total_cost or 0.0:.4g}",
        )
    if error is None:
        return GateResult(
            "cost_per_accepted",
            "undetermined",
            threshold,
            value,
            None,
            f"{agent.agent} spent {value:.4g} per accepted run on one case: no interval",
        )
    hypothesis = Hypothesis(
        label="cost_per_accepted",
        measured=value,
        limit=partial(_cost_limit, value, error),
        threshold=threshold,
        higher_is_better=False,
    )
    (judged,) = judge_family([hypothesis], levels)
    reason = f"{agent.agent} spent {value:.4g} per accepted run: " + limits_sentence(
        judged, lambda v: f"{v:.4g}"
    )
    return gate_result("cost_per_accepted", judged, levels, reason)


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.subject is not None and evidence.config.max_cost_per_accepted is not None
    return [cost_per_accepted_gate(evidence.subject, evidence.config.max_cost_per_accepted, levels)]


GATE = Gate(
    name="cost_per_accepted",
    keys=("max_cost_per_accepted",),
    statistical=True,
    family=when_set("max_cost_per_accepted", "subject"),
    decide=_decide,
)
