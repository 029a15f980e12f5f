"""`cost_ratio` and `latency_ratio`: the candidate's mean cost per run and p95 latency over
the baseline's, at most `max_cost_ratio` and `max_latency_ratio`, with limits
exp(log ratio ± z·SE) from the paired cluster bootstrap (docs/statistics.md). A cost
the harness could not work out (a model without a price) leaves `cost_ratio`
undetermined, naming the model and the fix."""

from __future__ import annotations

import math
from functools import partial

from evals import stats
from evals.gates.families import Hypothesis, Levels, gate_result, judge_family, limits_sentence
from evals.gates.registry import Evidence, Gate, when_set
from evals.model.summary import GateResult


def _ratio_limit(ratio: float, log_se: float, level: float, side: str) -> float:
    return math.exp(stats.normal_limit(math.log(ratio), log_se, level, side))


def _times(value: float) -> str:
    return f"{value:.2f}x"


def ratio_gate(
    name: str,
    what: str,
    ratio: float | None,
    log_se: float | None,
    threshold: float,
    levels: Levels,
) -> GateResult:
    """A candidate/baseline ratio that must stay at or below `threshold`."""
    if ratio is None or log_se is None or ratio <= 0:
        return GateResult(
            name, "undetermined", threshold, ratio, None, f"no {what} ratio could be estimated"
        )
    hypothesis = Hypothesis(
        label=name,
        measured=ratio,
        limit=partial(_ratio_limit, ratio, log_se),
        threshold=threshold,
        higher_is_better=False,
    )
    (judged,) = judge_family([hypothesis], levels)
    reason = f"candidate/baseline {what} {ratio:.2f}x: {limits_sentence(judged, _times)}"
    return gate_result(name, judged, levels, reason)


def _decide_cost(evidence: Evidence, levels: Levels) -> list[GateResult]:
    comparison, threshold = evidence.comparison, evidence.config.max_cost_ratio
    assert comparison is not None and threshold is not None
    compared = (evidence.config.candidate, evidence.config.baseline)
    unknown = [
        note
        for agent in evidence.summary.agents
        if agent.group == "suite" and agent.agent in compared
        if (note := agent.unknown_cost_note()) is not None
    ]
    if unknown:
        return [GateResult(COST.name, "undetermined", threshold, None, None, "; ".join(unknown))]
    return [
        ratio_gate(
            COST.name,
            "mean cost per run",
            comparison.cost_ratio,
            comparison.cost_ratio_log_se,
            threshold,
            levels,
        )
    ]


def _decide_latency(evidence: Evidence, levels: Levels) -> list[GateResult]:
    comparison, threshold = evidence.comparison, evidence.config.max_latency_ratio
    assert comparison is not None and threshold is not None
    return [
        ratio_gate(
            LATENCY.name,
            f"p95 latency ({evidence.summary.latency_source})",
            comparison.latency_ratio,
            comparison.latency_ratio_log_se,
            threshold,
            levels,
        )
    ]


COST = Gate(
    name="cost_ratio",
    keys=("max_cost_ratio",),
    statistical=True,
    family=when_set("max_cost_ratio", "compared"),
    decide=_decide_cost,
)
LATENCY = Gate(
    name="latency_ratio",
    keys=("max_latency_ratio",),
    statistical=True,
    family=when_set("max_latency_ratio", "compared"),
    decide=_decide_latency,
)
