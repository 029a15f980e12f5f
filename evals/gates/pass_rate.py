"""`min_pass_rate` and `min_pass_rate[tag]`: the candidate's mean per-case pass rate, over
the suite and per tag, at or above a minimum.

The limits are the effective-n Wilson interval over cases at the gate's levels
(docs/statistics.md); errored runs count as failed runs unless their kind is excluded.
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
from evals.gates.registry import (
    Evidence,
    Gate,
    Scope,
    tag_row,
    tagged_cases,
    tags_with,
    when_set,
)
from evals.model.summary import AgentStats, GateResult


def share_text(value: float) -> str:
    """A rate as the gate reasons show it (0.812)."""
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
    """One row per (name, agent, minimum), Holm across them at one share: a family of one
    for the suite, one family of tags for the per-tag gate."""
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
            f"{limits_sentence(decided, share_text, len(judged))}"
        )
        results.append(gate_result(name, decided, levels, reason))
    return results


def _decide_suite(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.subject is not None and evidence.config.min_pass_rate is not None
    return pass_rate_gates(
        ["min_pass_rate"], [evidence.subject], [evidence.config.min_pass_rate], levels
    )


def _tag_family(scope: Scope) -> list[str] | None:
    if not scope.subject:
        return None
    return tags_with(scope.config, scope.tags, {"min_pass_rate"}) or None


def _decide_tags(evidence: Evidence, levels: Levels) -> list[GateResult]:
    subject, config = evidence.subject, evidence.config
    assert subject is not None
    stats_of = {t.group: t for t in evidence.summary.tags if t.agent == subject.agent}
    tags = tags_with(config, frozenset(stats_of), {"min_pass_rate"})
    return pass_rate_gates(
        [tag_row(TAGS.name, t) for t in tags],
        [stats_of[t] for t in tags],
        [float(config.per_tag[t]["min_pass_rate"]) for t in tags],
        levels,
    )


SUITE = Gate(
    name="min_pass_rate",
    keys=("min_pass_rate",),
    statistical=True,
    family=when_set("min_pass_rate", "subject"),
    decide=_decide_suite,
)
TAGS = Gate(
    name="min_pass_rate[tag]",
    keys=("per_tag.min_pass_rate",),
    statistical=True,
    family=_tag_family,
    decide=_decide_tags,
    reads=tagged_cases,
)
