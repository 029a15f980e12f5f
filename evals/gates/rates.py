"""The gates on one agent's own rates: minimum pass rate (suite and tags), maximum error
rate, maximum flake probability and cost per accepted run.

Each computes its one-sided limits at the levels its share of the build's budget gives:
the pass rate from the effective-n Wilson interval over cases, the error rate from
Clopper-Pearson limits on the pooled runs, the flake probability from Johnson's
skewness-corrected t over cases, cost per accepted run from its delta-method standard
error. docs/statistics.md gives the references.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evals import stats
from evals.analysis.summarize import cost_per_accepted_interval
from evals.gates.families import (
    Hypothesis,
    Levels,
    family_status,
    gate_result,
    judge_family,
    limits_sentence,
    two_sided_confidence,
)
from evals.model.summary import AgentStats, CaseAgentStats, GateResult, GateStatus


def _share(value: float) -> str:
    return f"{value:.3f}"


def _pass_rate_limit(agent: AgentStats, level: float, side: str) -> float:
    assert agent.pass_rate is not None
    low, high = stats.effective_wilson_interval(
        agent.pass_rate,
        agent.variance,
        agent.cases,
        max(agent.counted, agent.cases),
        two_sided_confidence(level),
    )
    return low if side == "lower" else high


def pass_rate_gates(
    names: Sequence[str], agents: Sequence[AgentStats], thresholds: Sequence[float], levels: Levels
) -> list[GateResult]:
    """`min_pass_rate` (a family of one) or `min_pass_rate[tag]` (one family of tags):
    the mean per-case pass rate at or above its minimum."""
    results: list[GateResult] = []
    hypotheses = []
    for name, agent, threshold in zip(names, agents, thresholds, strict=True):
        if agent.pass_rate is None:
            results.append(
                GateResult(
                    name,
                    "undetermined",
                    threshold,
                    None,
                    None,
                    f"{agent.agent} has no counted runs",
                )
            )
            continue
        hypotheses.append(
            (
                name,
                agent,
                Hypothesis(
                    label=name,
                    measured=agent.pass_rate,
                    limit=partial(_pass_rate_limit, agent),
                    threshold=threshold,
                ),
            )
        )
    judged = judge_family([h for _, _, h in hypotheses], levels)
    for (name, agent, _), decided in zip(hypotheses, judged, strict=True):
        excluded = f", {agent.excluded} excluded error(s) left out" if agent.excluded else ""
        reason = (
            f"{agent.agent} pass rate {agent.pass_rate:.3f} over {agent.cases} cases "
            f"(errors count as failed runs{excluded}): "
            f"{limits_sentence(decided, _share, len(judged))}"
        )
        results.append(gate_result(name, decided, levels, reason))
    return results


def _error_limit(agent: AgentStats, level: float, side: str) -> float:
    return stats.clopper_pearson_limit(agent.errors, agent.runs, level, side)


def _error_words(agent: AgentStats) -> str:
    if not agent.errors:
        return f"{agent.agent}: no errored run of {agent.runs}"
    kind, count = max(agent.error_kinds.items(), key=lambda item: (item[1], item[0]))
    first = agent.first_errors.get(kind, "")
    text = (
        f"{agent.agent}: {agent.errors} of {agent.runs} runs errored "
        f"({agent.errors / agent.runs:.0%}), most often {kind} ({count}): {first!r}"
    )
    if agent.excluded:
        text += f"; {agent.excluded} excluded from the pass rates"
    return text


def error_rate_gate(agents: Sequence[AgentStats], threshold: float, levels: Levels) -> GateResult:
    """`error_rate`: the share of runs that errored, for each compared agent, at most
    `threshold`. An errored run counts here whatever its kind; the reason names the most
    frequent kind and its first message."""
    ran = [a for a in agents if a.runs]
    hypotheses = [
        Hypothesis(
            label=a.agent,
            measured=a.errors / a.runs,
            limit=partial(_error_limit, a),
            threshold=threshold,
            higher_is_better=False,
            fail_p=partial(stats.binomial_p_value, a.errors, a.runs, threshold, "greater"),
        )
        for a in ran
    ]
    judged = judge_family(hypotheses, levels)
    if not judged:
        return GateResult("error_rate", "undetermined", threshold, None, None, "no runs")
    worst = max(judged, key=lambda j: (j.status == "fail", j.fail_limit))
    reason = "; ".join(
        f"{_error_words(a)}: {limits_sentence(j, _share, len(judged))}"
        for a, j in zip(ran, judged, strict=True)
    )
    result = gate_result("error_rate", worst, levels, reason)
    result.status = family_status(judged)
    return result


def _flake_limit(outcomes: list[tuple[int, int]], level: float, side: str) -> float:
    found = stats.flake_probability(outcomes, two_sided_confidence(level))
    assert found is not None
    _, (low, high) = found
    return low if side == "lower" else high


def flake_gate(
    agent: AgentStats, case_stats: Sequence[CaseAgentStats], threshold: float, levels: Levels
) -> GateResult:
    """`flake_rate`: the mean per-case probability that two repeats disagree (errors count
    as failed runs), at most `threshold`; a property of the agent, not of the repeats."""
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
        f"{limits_sentence(judged, _share)}"
    )
    return gate_result("flake_rate", judged, levels, reason)


def _cost_limit(estimate: float, standard_error: float, level: float, side: str) -> float:
    interval = cost_per_accepted_interval(estimate, standard_error, two_sided_confidence(level))
    return interval[0] if side == "lower" else interval[1]


def cost_per_accepted_gate(agent: AgentStats, threshold: float, levels: Levels) -> GateResult:
    """`cost_per_accepted`: total cost over passing runs at most `threshold`. Spending
    money and accepting nothing fails outright."""
    value, error = agent.cost_per_accepted, agent.cost_per_accepted_se
    if value is None:
        status: GateStatus = "fail" if agent.total_cost > 0 else "undetermined"
        return GateResult(
            "cost_per_accepted",
            status,
            threshold,
            None,
            None,
            f"{agent.agent} had no accepted run, spending {agent.total_cost:.4g}",
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
