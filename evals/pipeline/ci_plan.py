"""What a pull request's gate can see: `evals plan`'s model applied to the job's cases.

`evals ci pr` states in its summary the smallest change in pass rate its gate finds with
the plan's power, from the pass rate, ICC and agent correlation of the stored nightly
(else defaults), and with `--effect` takes the repeats the plan needs for a given change.
The planning model is `evals.analysis.power`'s; this module is the job's only use of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from evals.analysis.power import PowerPlan, build_power_plan, estimate_from_summary
from evals.model.suite import Suite


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
    confidence: float,
    nightly: tuple[str, dict[str, Any]] | None,
) -> tuple[PowerPlan, str]:
    estimate = (
        estimate_from_summary(nightly[0], nightly[1], suite.gates.baseline) if nightly else None
    )
    plan = build_power_plan(
        suite,
        cases=max(1, cases),
        repeats=repeats,
        effect=effect,
        confidence=confidence,
        estimate=estimate,
    )
    return plan, estimate.source if estimate else "defaults (no stored nightly)"


def plan_pull_request(
    suite: Suite,
    *,
    cases: int,
    repeats: int,
    final_repeats: int | None,
    effect: float | None,
    max_repeats: int,
    confidence: float,
    nightly: tuple[str, dict[str, Any]] | None,
) -> PrPlan:
    """The repeats to run (`effect` asks the plan for them, else `repeats`) and the notes.

    `final_repeats` is the last stage of a staged run, which the power note describes;
    `nightly` is the stored nightly's (id, summary) the estimates come from.
    """
    plan, source = _plan(suite, cases, repeats, effect, confidence, nightly)
    notes = []
    if effect is not None:
        needed = plan.repeats_for_target(paired=True)
        repeats = min(needed or max_repeats, max_repeats)
        reach = ""
        if needed is None or needed > max_repeats:
            short = "more cases" if needed is None else f"{needed} repeats"
            wider = plan.cases_for_target(True, max_repeats)
            reach = (
                f" (detecting {effect:g} would need {short}; capped at {max_repeats}, where "
                f"it needs {wider} cases)"
            )
        notes.append(
            f"repeats from the power plan for a difference of {effect:g}: {repeats}{reach}"
        )
    shown = final_repeats or repeats
    final = replace(plan, repeats=replace(plan.repeats, value=shown))
    notes.append(
        f"power: with {cases} case(s) × {shown} repeat(s), paired, this gate finds a change "
        f"of {final.mde(True):.2f} in pass rate with {final.power:.0%} power at "
        f"α = {final.alpha:.2g} (pass rate, ICC and correlation from {source}; two versions "
        "of one agent correlate more than that, so the bound is conservative); `evals plan` "
        "shows the repeats and cases a smaller change needs"
    )
    return PrPlan(repeats, notes)
