"""The gates that compare the candidate with the baseline: regression (the suite and each
tag), P0 cases, and the cost and latency ratios.

Regression and P0 gates are non-inferiority tests: they pass only when the data show the
loss within the tolerance, fail when they show it beyond, and are undetermined otherwise.
The suite and each tag use the t test on per-case differences the comparison reports
(`evals.analysis.comparison.group_test`); P0 cases use the exact test of their own table,
decided within the P0 cases alone (not all cases), so a P0 case that drops 5/5 to 0/5
fails whatever the other cases do, and one the data cannot judge never counts as passed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

from evals import stats
from evals.analysis.comparison import group_test
from evals.gates.families import (
    Hypothesis,
    Levels,
    family_status,
    gate_result,
    judge_family,
    limits_sentence,
)
from evals.model.gates import GateConfig
from evals.model.summary import (
    CaseComparison,
    Comparison,
    GateResult,
    GroupComparison,
)


def points(value: float) -> str:
    """A difference of pass rates in signed points (-5.0 pp)."""
    return f"{value * 100 + 0.0:+.1f} pp"


def _group_hypothesis(group: GroupComparison, tolerance: float) -> Hypothesis | None:
    difference = group_test(group)
    if difference is None:
        return None
    return Hypothesis(
        label=group.group,
        measured=difference.estimate,
        limit=difference.limit,
        threshold=-tolerance,
        fail_p=partial(difference.p_value, -tolerance, "less"),
    )


def _no_data(name: str, tolerance: float, group: GroupComparison) -> GateResult:
    return GateResult(name, "undetermined", -tolerance, group.difference, None, group.explanation)


def regression_gates(
    names: Sequence[str],
    groups: Sequence[GroupComparison],
    tolerances: Sequence[float],
    levels: Levels,
) -> list[GateResult]:
    """One regression gate per group, Holm across the groups at one share (a gate over
    the suite is a family of one; per-tag gates share one family)."""
    hypotheses = [_group_hypothesis(g, t) for g, t in zip(groups, tolerances, strict=True)]
    tested = [h for h in hypotheses if h is not None]
    judged = iter(judge_family(tested, levels))
    results = []
    for name, group, tolerance, hypothesis in zip(
        names, groups, tolerances, hypotheses, strict=True
    ):
        if hypothesis is None:
            results.append(_no_data(name, tolerance, group))
            continue
        decided = next(judged)
        where = "the suite" if group.group == "suite" else f"tag {group.group}"
        reason = (
            f"candidate − baseline {points(hypothesis.measured)} over {group.cases} cases of "
            f"{where}, tolerated loss {tolerance:.3g}: "
            f"{limits_sentence(decided, points, len(tested))}"
        )
        results.append(gate_result(name, decided, levels, reason))
    return results


def _p0_hypothesis(case: CaseComparison, config: GateConfig) -> Hypothesis:
    cand, base = case.candidate, case.baseline
    if case.pair is not None:
        limit = partial(stats.paired_exact_limit, *case.pair)
        fail_p = partial(stats.paired_exact_p_value, *case.pair, 0.0, "less")
    else:
        table = (cand.passes, cand.counted, base.passes, base.counted)
        limit = partial(stats.exact_score_limit, *table)
        fail_p = partial(stats.exact_score_p_value, *table, 0.0, "less")
    assert case.difference is not None
    return Hypothesis(
        label=case.case_id,
        measured=case.difference,
        limit=limit,
        threshold=-config.p0_margin,
        fail_threshold=0.0,
        fail_p=fail_p,
    )


def p0_gate(comparison: Comparison, config: GateConfig, levels: Levels) -> GateResult:
    """`p0_regressions`: every P0 case decided on its own exact table, Holm within the P0
    cases. A case fails when any loss is shown (its upper limit below 0) and passes only
    when the loss is shown within `p0_margin`; the gate fails when one case fails and
    passes when all pass.
    """
    p0 = [c for c in comparison.cases if c.priority == "P0"]
    judgeable = [c for c in p0 if c.difference is not None]
    judged = judge_family([_p0_hypothesis(c, config) for c in judgeable], levels)
    status = family_status(judged)
    unjudged = len(p0) - len(judgeable)
    if unjudged:
        status = "fail" if status == "fail" else "undetermined"
    failed = [j for j in judged if j.status == "fail"]
    open_cases = [j for j in judged if j.status == "undetermined"]
    parts = []
    if failed:
        parts.append(
            "loss shown on "
            + "; ".join(
                f"{j.hypothesis.label} {points(j.hypothesis.measured)}, upper limit "
                f"{points(j.fail_limit)} at {100 * j.fail_level:.4g} % (p = {j.p_value:.3g}, "
                f"Holm q = {j.adjusted_p:.3g} within {len(judged)} P0 cases)"
                for j in failed
            )
        )
    if open_cases:
        shown = "; ".join(
            f"{j.hypothesis.label} lower limit {points(j.pass_limit)}" for j in open_cases[:3]
        )
        more = f" and {len(open_cases) - 3} more" if len(open_cases) > 3 else ""
        parts.append(
            f"{len(open_cases)} P0 case(s) not shown within the tolerated loss "
            f"{config.p0_margin:.3g} at {100 * levels.pass_level:.4g} % ({shown}{more}): "
            "the data cannot judge them, so they do not count as passed"
        )
    if unjudged:
        parts.append(f"{unjudged} P0 case(s) without counted runs from both agents")
    if not p0:
        parts.append("no P0 case was compared")
    elif status == "pass":
        parts.append(
            f"every one of {len(p0)} P0 case(s) shown within the tolerated loss "
            f"{config.p0_margin:.3g} at {100 * levels.pass_level:.4g} %"
        )
    worst = min(judged, key=lambda j: j.fail_limit, default=None)
    return GateResult(
        name="p0_regressions",
        status=status if p0 else "pass",
        threshold=0,
        measured=len(failed),
        interval=None if worst is None else worst.interval,
        reason="; ".join(parts),
        fail_limit=None if worst is None else worst.fail_limit,
        fail_level=None if worst is None else worst.fail_level,
        pass_limit=None if worst is None else worst.pass_limit,
        pass_level=levels.pass_level,
        share=levels.share if judged else None,
        p_value=None if worst is None else worst.p_value,
        adjusted_p=None if worst is None else worst.adjusted_p,
    )


def _ratio_limit(ratio: float, log_se: float, level: float, side: str) -> float:
    return math.exp(stats.normal_limit(math.log(ratio), log_se, level, side))


def ratio_gate(
    name: str,
    what: str,
    ratio: float | None,
    log_se: float | None,
    threshold: float,
    levels: Levels,
) -> GateResult:
    """A candidate/baseline ratio that must stay at or below `threshold`, with limits
    exp(log ratio ± z·SE) from the paired cluster bootstrap."""
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


def _times(value: float) -> str:
    return f"{value:.2f}x"
