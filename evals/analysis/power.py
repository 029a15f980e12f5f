"""Plan a comparison before running it: the effect a suite can detect, and what a target needs.

Uses the power formulas of Miller (2024, §5), implemented in `evals.stats.power`: with n
cases and k repeats, one agent's mean per-case pass rate p has variance
p(1-p)/(n·k)·(1 + (k-1)·ICC), the clustered design's effect 1 + (k-1)·ICC; the difference of
two agents adds both variances and, when they run the same cases (paired), subtracts the
covariance of their case rates, 2·ICC·p(1-p)·ρ/n. The pass rate, ICC and ρ come from the
latest complete stored evaluation of the suite when there is one, else from flags or
defaults, and the plan says which.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.model.suite import Suite
from evals.stats import (
    cases_needed,
    minimum_detectable_effect,
    power_to_detect,
    repeats_needed,
)

REPEAT_GRID = (1, 3, 5, 10, 20)
DEFAULT_PASS_RATE = 0.7
DEFAULT_ICC = 0.3
DEFAULT_CORRELATION = 0.5
DEFAULT_EFFECT = 0.10
DEFAULT_POWER = 0.8


@dataclass(slots=True, frozen=True)
class Assumed:
    """One planning input and where its value came from."""

    value: float
    source: str


@dataclass(slots=True, frozen=True)
class StoredEstimate:
    """Pass rate, ICC and agent correlation measured by a stored evaluation."""

    evaluation_id: str
    agent: str
    cases: int
    repeats: int | None
    pass_rate: float
    icc: float | None
    correlation: float | None

    @property
    def source(self) -> str:
        """Where the numbers come from, for the plan's header."""
        shape = f"{self.cases} cases" + (f" × {self.repeats} repeats" if self.repeats else "")
        return f"stored evaluation {self.evaluation_id} ({shape}, agent {self.agent})"


@dataclass(slots=True, frozen=True)
class PlanRow:
    """Detectable effects and cases needed at one number of repeats."""

    repeats: int
    design_effect: float
    mde_independent: float
    mde_paired: float
    cases_independent: int
    cases_paired: int


@dataclass(slots=True)
class PowerPlan:
    """Everything `evals plan` prints, computed from explicit, sourced assumptions.

    "Paired" means both agents run the same cases, so their case rates correlate by
    `correlation`; "independent" assumes no correlation, the conservative bound.
    """

    suite_id: str
    cases: Assumed
    repeats: Assumed
    pass_rate: Assumed
    icc: Assumed
    correlation: Assumed
    effect: Assumed
    confidence: Assumed
    power: float

    @property
    def alpha(self) -> float:
        """Two-sided error rate of the test the plan is for."""
        return 1 - self.confidence.value

    def _model(self, paired: bool) -> dict[str, float]:
        return {
            "pass_rate": self.pass_rate.value,
            "icc": self.icc.value,
            "correlation": self.correlation.value if paired else 0.0,
            "alpha": self.alpha,
        }

    def mde(self, paired: bool, repeats: int | None = None) -> float:
        """Minimum detectable effect at the suite's cases (and its repeats unless given)."""
        k = int(self.repeats.value) if repeats is None else repeats
        return minimum_detectable_effect(
            int(self.cases.value), k, power=self.power, **self._model(paired)
        )

    def power_now(self, paired: bool) -> float:
        """Power to detect the target effect at the suite's cases and repeats."""
        return power_to_detect(
            self.effect.value,
            int(self.cases.value),
            int(self.repeats.value),
            **self._model(paired),
        )

    def cases_for_target(self, paired: bool, repeats: int) -> int:
        """Cases that detect the target effect with `repeats` repeats."""
        return cases_needed(self.effect.value, repeats, power=self.power, **self._model(paired))

    def repeats_for_target(self, paired: bool) -> int | None:
        """Repeats that detect the target effect at the suite's cases; None if none can."""
        return repeats_needed(
            self.effect.value, int(self.cases.value), power=self.power, **self._model(paired)
        )

    def table(self, grid: tuple[int, ...] = REPEAT_GRID) -> list[PlanRow]:
        """One row per number of repeats in `grid` (and the suite's own)."""
        return [
            PlanRow(
                repeats=k,
                design_effect=1 + (k - 1) * self.icc.value,
                mde_independent=self.mde(False, k),
                mde_paired=self.mde(True, k),
                cases_independent=self.cases_for_target(False, k),
                cases_paired=self.cases_for_target(True, k),
            )
            for k in sorted({*grid, int(self.repeats.value)})
        ]


def estimate_from_summary(
    evaluation_id: str, summary: dict[str, Any], baseline: str | None
) -> StoredEstimate | None:
    """The baseline agent's (else the first agent's) pass rate and ICC from a stored summary.

    The agents' correlation is that of their observed per-case rates over the suite; run
    noise attenuates it, so it understates the true correlation and errs on the safe side.
    """
    agents = [
        a
        for a in summary.get("agents") or []
        if a.get("group") == "suite" and a.get("pass_rate") is not None
    ]
    if not agents:
        return None
    chosen = next((a for a in agents if a["agent"] == baseline), agents[0])
    overall = (summary.get("comparison") or {}).get("overall") or {}
    return StoredEstimate(
        evaluation_id=evaluation_id,
        agent=chosen["agent"],
        cases=int(chosen.get("cases") or 0),
        repeats=chosen.get("k"),
        pass_rate=float(chosen["pass_rate"]),
        icc=chosen.get("icc"),
        correlation=overall.get("correlation"),
    )


def latest_estimate(store_url: str, suite: Suite) -> StoredEstimate | None:
    """Estimates from the newest complete, unsharded evaluation of the suite in the store."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        for evaluation in store.list_evaluations(suite_id=suite.suite_id, status="complete"):
            if evaluation.shard is None and evaluation.summary:
                found = estimate_from_summary(
                    evaluation.id, evaluation.summary, suite.gates.baseline
                )
                if found is not None:
                    return found
    finally:
        store.close()
    return None


def existing_store_url(store_url: str | None) -> str | None:
    """The store to read estimates from: the one named, $EVALS_STORE_URL, or the default
    SQLite file when it already exists (planning never creates a store)."""
    if store_url or os.environ.get("EVALS_STORE_URL"):
        return store_url or os.environ["EVALS_STORE_URL"]
    from evals.store.engine import DEFAULT_SQLITE_PATH

    default = Path.cwd() / DEFAULT_SQLITE_PATH
    return str(default) if default.is_file() else None


def _pick(flag: float | None, stored: float | None, store_source: str, default: float) -> Assumed:
    if flag is not None:
        return Assumed(flag, "given on the command line")
    if stored is not None:
        return Assumed(stored, f"estimated from {store_source}")
    return Assumed(default, "default (no stored estimate)")


def build_power_plan(
    suite: Suite,
    *,
    cases: int | None = None,
    repeats: int | None = None,
    effect: float | None = None,
    pass_rate: float | None = None,
    icc: float | None = None,
    correlation: float | None = None,
    power: float = DEFAULT_POWER,
    confidence: float | None = None,
    estimate: StoredEstimate | None = None,
) -> PowerPlan:
    """The power plan of a suite: flags first, then the stored estimate, then defaults."""
    for name, value in (("baseline rate", pass_rate), ("ICC", icc), ("power", power)):
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"{name} must lie within [0, 1]")
    if correlation is not None and not -1 <= correlation <= 1:
        raise ValueError("correlation must lie within [-1, 1]")
    if confidence is not None and not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if effect is not None and not 0 < effect <= 1:
        raise ValueError("effect is a difference of pass rates, within (0, 1]")
    if (cases is not None and cases < 1) or (repeats is not None and repeats < 1):
        raise ValueError("cases and repeats must be at least 1")
    source = estimate.source if estimate else ""
    if repeats is not None:
        chosen_repeats = Assumed(repeats, "given on the command line")
    elif suite.gates.repeat:
        chosen_repeats = Assumed(suite.gates.repeat, "the suite's gates.repeat")
    else:
        chosen_repeats = Assumed(suite.evaluate_options.repeat, "the suite's evaluateOptions")
    return PowerPlan(
        suite_id=suite.suite_id,
        cases=Assumed(cases, "given on the command line")
        if cases is not None
        else Assumed(len(suite.cases), "the suite"),
        repeats=chosen_repeats,
        pass_rate=_pick(
            pass_rate, None if estimate is None else estimate.pass_rate, source, DEFAULT_PASS_RATE
        ),
        icc=_pick(icc, None if estimate is None else estimate.icc, source, DEFAULT_ICC),
        correlation=_pick(
            correlation,
            None if estimate is None else estimate.correlation,
            source,
            DEFAULT_CORRELATION,
        ),
        effect=Assumed(effect, "given on the command line")
        if effect is not None
        else Assumed(DEFAULT_EFFECT, "default"),
        confidence=Assumed(confidence, "given on the command line")
        if confidence is not None
        else Assumed(suite.gates.confidence, "the suite's gates"),
        power=power,
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and value > 1 else f"{value:.3g}"


def _target_sentence(plan: PowerPlan, paired: bool) -> str:
    design = "paired" if paired else "independent"
    needed = plan.repeats_for_target(paired)
    if needed is not None:
        return f"{design}, {needed} repeat(s)"
    most = max(REPEAT_GRID)
    return (
        f"{design}, no number of repeats (the spread between cases dominates): "
        f"{plan.cases_for_target(paired, most)} cases at {most} repeats"
    )


def render_power_plan(plan: PowerPlan, console: Any = None) -> None:
    """Print the plan: assumptions with their sources, the suite's MDE, and the table."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    n_cases, k = int(plan.cases.value), int(plan.repeats.value)
    effect = plan.effect.value
    console.print(f"[bold]Power plan for {plan.suite_id}[/bold], two agents")
    inputs = Table(show_header=False, box=None, padding=(0, 1))
    for label, assumed in (
        ("cases", plan.cases),
        ("repeats", plan.repeats),
        ("baseline pass rate", plan.pass_rate),
        ("ICC of repeats", plan.icc),
        ("agents' correlation ρ", plan.correlation),
        ("target effect", plan.effect),
        ("confidence", plan.confidence),
    ):
        inputs.add_row(label, _number(assumed.value), assumed.source)
    inputs.add_row("power", f"{plan.power:.3g}", "")
    console.print(inputs)
    console.print(
        f"With {n_cases} cases × {k} repeats, the smallest difference in pass rate found with "
        f"{plan.power:.0%} power at two-sided alpha {plan.alpha:.3g} is "
        f"[bold]{plan.mde(True):.3f}[/bold] paired, {plan.mde(False):.3f} independent; "
        f"power to find {effect:.3g}: {plan.power_now(True):.0%} paired, "
        f"{plan.power_now(False):.0%} independent."
    )
    console.print(
        f"To find {effect:.3g} with these {n_cases} cases: {_target_sentence(plan, True)}; "
        f"{_target_sentence(plan, False)}."
    )
    table = Table(title=f"MDE at {n_cases} cases; cases needed to find {effect:.3g}")
    for header in (
        "repeats",
        "design\neffect",
        "MDE\npaired",
        "MDE\nindep.",
        "cases\npaired",
        "cases\nindep.",
        "runs\npaired",
    ):
        table.add_column(header, justify="right")
    for row in plan.table():
        table.add_row(
            str(row.repeats),
            f"{row.design_effect:.2f}",
            f"{row.mde_paired:.3f}",
            f"{row.mde_independent:.3f}",
            str(row.cases_paired),
            str(row.cases_independent),
            str(2 * row.cases_paired * row.repeats),
            style="bold" if row.repeats == k else None,
        )
    console.print(table)
    console.print(
        "design effect 1+(k-1)·ICC; runs = 2 agents × cases × repeats. Miller (2024), Adding "
        "error bars to evals, §5: Var(difference) = 2·p(1-p)·(ICC·(1-ρ) + (1-ICC)/k)/n."
    )
