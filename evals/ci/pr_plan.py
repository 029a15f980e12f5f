"""What a pull request's gate can see: `evals plan`'s model applied to the job's cases.

`evals ci pr` states in its summary the smallest drop in pass rate its regression gate
fails with the plan's power, from the pass rate and ICC of the stored nightly (else
defaults), and with `--effect` takes the repeats the plan needs for a given drop. The
planning model is `evals.analysis.power`'s (the regression gate's own test at its share
of the build's false-failure budget); this module is the job's only use of it.

What the gates read of a pull request that edits the suite is planned here too: the cases
it added or changed, which nothing at the base can be compared with, form a group of
their own under the minimum pass rate (`gate_new_cases`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from evals.analysis.power import Assumed, PowerPlan, build_power_plan, pooled_estimate
from evals.gates.catalog import planned_gate_count
from evals.model.gates import GateConfig
from evals.model.suite import Suite
from evals.stats import minimum_detectable_drop

ENVIRONMENT = "pr"
# The group the cases a pull request added or changed are gated as.
NEW_CASES_TAG = "new or changed"


@dataclass(slots=True)
class PrPlan:
    """The repeats a pull request runs and the sentences that explain them."""

    repeats: int
    notes: list[str]


def _plan(
    suite: Suite,
    cases: int,
    repeats: int,
    effect: float | None,
    nightly: tuple[str, dict[str, Any]] | None,
) -> tuple[PowerPlan, str]:
    estimate = pooled_estimate([nightly], suite.gates.baseline) if nightly else None
    plan = build_power_plan(
        suite,
        gates=planned_gate_count(suite, ENVIRONMENT),
        environment=ENVIRONMENT,
        cases=max(2, cases),
        repeats=repeats,
        effect=effect,
        estimate=estimate,
    )
    return plan, estimate.source if estimate else "defaults (no stored nightly)"


def repeats_needed(plan: PowerPlan, most: int) -> int | None:
    """Fewest repeats (at most `most`) with which the regression gate fails the plan's
    target drop with its power; None when `most` repeats are not enough."""
    cases = int(plan.cases.value)
    for repeats in range(1, most + 1):
        if plan.probability(cases, repeats, plan.effect.value, "fail") >= plan.power:
            return repeats
    return None


def detectable_drop(plan: PowerPlan) -> float | None:
    """Smallest drop the regression gate fails with the plan's power at its repeats."""
    return minimum_detectable_drop(
        int(plan.cases.value),
        int(plan.repeats.value),
        plan.pass_rate.value,
        plan.icc.value,
        plan.tolerance.value,
        plan.share,
        plan.power,
        plan.estimand,
    )


def plan_pull_request(
    suite: Suite,
    *,
    cases: int,
    repeats: int,
    final_repeats: int | None,
    effect: float | None,
    max_repeats: int,
    nightly: tuple[str, dict[str, Any]] | None,
) -> PrPlan:
    """The repeats to run (`effect` asks the plan for them, else `repeats`) and the notes.

    `final_repeats` is the last stage of a staged run, which the power note describes;
    `nightly` is the stored nightly's (id, summary) the estimates come from.
    """
    plan, source = _plan(suite, cases, repeats, effect, nightly)
    notes = []
    if effect is not None:
        needed = repeats_needed(plan, max_repeats)
        repeats = needed or max_repeats
        reach = ""
        if needed is None:
            wider = plan.cases_needed(max_repeats)
            more = f"{wider} cases" if wider is not None else "more cases than any suite has"
            reach = (
                f" (detecting {effect:g} needs more than {max_repeats} repeats with "
                f"{int(plan.cases.value)} cases; at {max_repeats} repeats it needs {more})"
            )
        notes.append(f"repeats from the power plan for a drop of {effect:g}: {repeats}{reach}")
    shown = final_repeats or repeats
    final = replace(plan, repeats=Assumed(shown, plan.repeats.source))
    drop = detectable_drop(final)
    found = (
        f"finds a drop of {drop:.2f} in pass rate with {final.power:.0%} power"
        if drop is not None
        else f"cannot find even a drop to 0 with {final.power:.0%} power"
    )
    notes.append(
        f"power: with {cases} case(s) × {shown} repeat(s), the regression gate {found} at its "
        f"share α = {final.share:.2g} of the build's budget (pass rate and ICC from {source}); "
        "`evals plan --env pr` shows the repeats and cases a smaller drop needs"
    )
    return PrPlan(repeats, notes)


def gate_new_cases(
    suite: Suite, config: GateConfig, cases: Collection[str]
) -> tuple[Suite, GateConfig]:
    """The suite and the pull request's thresholds `config` with `cases` (those the pull
    request added or changed) gated as a group of their own: tagged `NEW_CASES_TAG`, whose
    per-tag minimum pass rate is the pull request's `min_pass_rate`.

    Such cases have nothing alike at the base to be compared with, so only the absolute
    gates can judge them; as a group, a new case that fails every run fails the pull
    request even where the suite-wide pass rate, over many good cases, hides it. Unchanged
    without `min_pass_rate` or without such cases. The suite's gates become `config`, so
    planning reads the same gates as deciding.
    """
    if config.min_pass_rate is None or not cases:
        return suite, config
    wanted = set(cases)
    gated = replace(
        config,
        per_tag={**config.per_tag, NEW_CASES_TAG: {"min_pass_rate": config.min_pass_rate}},
    )
    tagged = [
        replace(case, metadata={**case.metadata, "tags": [*case.tags, NEW_CASES_TAG]})
        if case.id in wanted
        else case
        for case in suite.cases
    ]
    return replace(suite, cases=tagged, gates=gated), gated
