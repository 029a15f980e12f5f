"""`min_pass_rate` and `min_pass_rate[tag]`: the candidate's mean per-case pass rate, over
the suite and per tag, at or above a minimum.

The limits are Clopper-Pearson limits at the gate's levels: at the conditional runs on
these cases (the default estimand), at the Korn-Graubard effective sample size on tasks
like these (`evals.analysis.summarize.pass_rate_limit`, docs/statistics.md); errored runs
count as failed runs unless their kind is excluded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from evals import stats
from evals.analysis.summarize import pass_rate_limit
from evals.gates.families import Hypothesis, Levels, gate_result, judge_family, limits_sentence
from evals.gates.registry import (
    Design,
    Evidence,
    Gate,
    Reach,
    Scope,
    tag_row,
    tagged_cases,
    tags_with,
    when_set,
)
from evals.model.gates import about
from evals.model.summary import AgentStats, GateResult


def share_text(value: float) -> str:
    """A rate as the gate reasons show it (0.812)."""
    return f"{value:.3f}"


def pass_rate_gates(
    names: Sequence[str],
    agents: Sequence[AgentStats],
    thresholds: Sequence[float],
    estimand: str,
    levels: Levels,
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
                    limit=partial(pass_rate_limit, agent, estimand),
                    threshold=threshold,
                ),
            )
        )
    judged = judge_family([h for _, _, h in hypotheses], levels)
    for (name, agent, _), decided in zip(hypotheses, judged, strict=True):
        excluded = f", {agent.excluded} excluded error(s) left out" if agent.excluded else ""
        where = about(estimand, agent.cases)
        reason = (
            f"{agent.agent} pass rate {agent.pass_rate:.3f} {where} "
            f"(errors count as failed runs{excluded}): "
            f"{limits_sentence(decided, share_text, len(judged))}"
        )
        results.append(replace(gate_result(name, decided, levels, reason), about=where))
    return results


def _decide_suite(evidence: Evidence, levels: Levels) -> list[GateResult]:
    config, minimum = evidence.config, evidence.config.min_pass_rate
    assert evidence.subject is not None and minimum is not None
    return pass_rate_gates(
        ["min_pass_rate"], [evidence.subject], [minimum], config.estimand, levels
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
        config.estimand,
        levels,
    )


def reachable(
    row: str, cases: int, runs: int, minimum: float, estimand: str, levels: Levels
) -> Reach:
    """Whether a minimum pass rate over `cases` cases of `runs` runs can fail (every run
    failing) and can pass (every run passing) at `levels`: an all-pass or all-fail group
    counts its runs on these cases, its cases (with Korn and Graubard's factor) on tasks
    like these."""

    def size(level: float) -> float:
        if estimand == "cases":
            return float(cases * runs)
        factor = (stats.normal_quantile(level) / stats.t_quantile(level, cases - 1)) ** 2
        return cases * factor if cases > 1 else float(runs)

    if not cases:
        return Reach(row, can_fail=False, can_pass=False)
    fail, passing = levels.fail_level, levels.pass_level
    return Reach(
        row,
        can_fail=stats.effective_clopper_pearson_limit(0.0, size(fail), fail, "upper") < minimum,
        can_pass=stats.effective_clopper_pearson_limit(1.0, size(passing), passing, "lower")
        >= minimum,
    )


def _reach_suite(design: Design) -> list[Reach]:
    config = design.scope.config
    assert config.min_pass_rate is not None
    return [
        reachable(
            SUITE.name,
            len(design.cases),
            design.runs,
            config.min_pass_rate,
            config.estimand,
            design.levels,
        )
    ]


def _reach_tags(design: Design) -> list[Reach]:
    config = design.scope.config
    return [
        reachable(
            tag_row(TAGS.name, tag),
            sum(tag in c.tags for c in design.cases),
            design.runs,
            float(config.per_tag[tag]["min_pass_rate"]),
            config.estimand,
            design.levels,
        )
        for tag in _tag_family(design.scope) or ()
    ]


SUITE = Gate(
    name="min_pass_rate",
    keys=("min_pass_rate",),
    statistical=True,
    family=when_set("min_pass_rate", "subject"),
    decide=_decide_suite,
    reach=_reach_suite,
)
TAGS = Gate(
    name="min_pass_rate[tag]",
    keys=("per_tag.min_pass_rate",),
    statistical=True,
    family=_tag_family,
    decide=_decide_tags,
    reads=tagged_cases,
    reach=_reach_tags,
)
