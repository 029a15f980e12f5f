"""`p0_regressions`: every case with `metadata.priority: P0` decided on its own exact table,
Holm within the P0 cases (not all cases, so the other cases do not dilute it).

A case fails when any loss is shown (its upper limit below 0) and passes only when its
loss is shown within `p0_margin`; the gate fails when one case fails and passes when all
pass. A case the data cannot judge never counts as passed.

The test is chosen before seeing data, the same in every mode: the unpaired exact
unconditional score test of the case's two binomials. When the agents' runs pair up by
seed (`gates.paired`, and always in `evals ci pr`) it stays valid, and conservative under
the positive correlation pairing brings (the unpaired variance of a difference exceeds
the paired one), while it keeps its power: 5 of 5 against 0 of 5 has p = 2^-10 unpaired
where the paired exact test, with five discordant pairs, cannot go below 2^-5 = 0.031 and
so could not fail a total break at five repeats once the budget is split. The per-case
verdict table keeps the paired test.
"""

from __future__ import annotations

from functools import partial

from evals import stats
from evals.gates.families import Hypothesis, Levels, family_status, judge_family
from evals.gates.registry import Design, Evidence, Gate, Reach, Scope, p0_cases
from evals.gates.regression import points
from evals.model.gates import GateConfig
from evals.model.summary import CaseComparison, Comparison, GateResult


def _p0_hypothesis(case: CaseComparison, config: GateConfig) -> Hypothesis:
    cand, base = case.candidate, case.baseline
    table = (cand.passes, cand.counted, base.passes, base.counted)
    assert case.difference is not None
    return Hypothesis(
        label=case.case_id,
        measured=case.difference,
        limit=partial(stats.exact_score_limit, *table),
        threshold=-config.p0_margin,
        fail_threshold=0.0,
        fail_p=partial(stats.exact_score_p_value, *table, 0.0, "less"),
    )


def p0_gate(comparison: Comparison, config: GateConfig, levels: Levels) -> GateResult:
    """The `p0_regressions` row of `comparison`."""
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
        tables=[
            (c.candidate.passes, c.candidate.counted, c.baseline.passes, c.baseline.counted)
            for c, j in zip(judgeable, judged, strict=True)
            if j.status == "undetermined"
        ],
        family=len(judged),
    )


def can_still_fail(gate: GateResult, fraction: float, final_share: float) -> bool:
    """Whether a P0 row left undetermined after `fraction` of the last look's runs could
    still fail by then: for some open case, every remaining run of the candidate failing
    and of the baseline passing shows a loss at Holm's first step at the last look's
    `final_share` (exact)."""
    if not gate.tables:
        return False
    level = final_share / max(gate.family or 1, 1)
    for cand_passes, cand_runs, base_passes, base_runs in gate.tables:
        cand_final = max(cand_runs, round(cand_runs / fraction))
        base_final = max(base_runs, round(base_runs / fraction))
        extra = base_final - base_runs
        p = stats.exact_score_p_value(
            cand_passes, cand_final, base_passes + extra, base_final, 0.0, "less"
        )
        if p <= level:
            return True
    return False


def _family(scope: Scope) -> tuple[str, ...] | None:
    if not (scope.compared and scope.config.block_p0_regressions):
        return None
    return scope.p0_cases


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    assert evidence.comparison is not None
    return [p0_gate(evidence.comparison, evidence.config, levels)]


def _reach(design: Design) -> list[Reach]:
    """A P0 case can fail when k of k against 0 of k shows a loss at Holm's first step
    (`design.levels` is already the share over the P0 cases), and can pass when k of k for
    both shows the loss within `p0_margin`."""
    if not design.scope.p0_cases:
        return []
    n, levels = design.runs, design.levels
    broken = stats.exact_score_p_value(0, n, n, n, 0.0, "less")
    same = stats.exact_score_limit(n, n, n, n, levels.pass_level, "lower")
    return [
        Reach(
            GATE.name,
            can_fail=broken <= levels.share,
            can_pass=same >= -design.scope.config.p0_margin,
        )
    ]


GATE = Gate(
    name="p0_regressions",
    keys=("block_p0_regressions", "p0_margin"),
    statistical=True,
    family=_family,
    decide=_decide,
    reads=p0_cases,
    reach=_reach,
    still_fails=can_still_fail,
)
