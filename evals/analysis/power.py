"""Plan a comparison before running it: how likely the regression gate is to find a drop,
the smallest drop it finds, and how likely identical agents are to pass it.

The plan runs the gate's own test for the suite's estimand at the gate's share of the
build's false-failure budget: on these cases the stratified score test over the cases'
runs, on tasks like these the one-sided t test on per-case differences; it fails when the
upper limit lies below -tolerance and passes when the lower limit at 1 - budget/2 reaches
it. Cases are drawn from a population (`evals.stats.shifted_case_rates`): the baseline's
case rates Beta with its mean pass rate and intra-class correlation, the candidate's the
same cases moved by one log-odds shift to the baseline's rate minus the target drop, so
both agents' rates enter. The headline numbers simulate the test
(`simulated_gate_probability`, seeded); the table over repeats uses its normal or
noncentral t approximation (`regression_gate_probability`).
P0 cases get the exact power of their own test (`exact_rejection_probability`).

The pass rate and ICC come from a flag, else from the suite's recent complete stored
evaluations (pooled over up to five, weighted by cases), else from defaults, and the plan
says which.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.model.suite import Suite
from evals.plan.runs import select_cases
from evals.stats import (
    exact_rejection_probability,
    minimum_detectable_drop,
    regression_gate_probability,
    shifted_case_rates,
    simulated_gate_probability,
)

REPEAT_GRID = (1, 3, 5, 10, 20)
DEFAULT_PASS_RATE = 0.7
DEFAULT_ICC = 0.4
DEFAULT_P0_RATE = 0.95
DEFAULT_EFFECT = 0.10
DEFAULT_POWER = 0.8
POOLED_EVALUATIONS = 5
SIMULATIONS = 4000
_SEED = 20240601
_MOST_CASES = 100_000


@dataclass(slots=True, frozen=True)
class Assumed:
    """One planning input and where its value came from."""

    value: float
    source: str


@dataclass(slots=True, frozen=True)
class StoredEstimate:
    """The baseline agent's pass rate and ICC pooled over stored evaluations."""

    evaluation_ids: tuple[str, ...]
    agent: str
    cases: int
    repeats: int | None
    pass_rate: float
    icc: float | None
    p0_rate: float | None = None

    @property
    def source(self) -> str:
        """Where the numbers come from, for the plan's header."""
        count = len(self.evaluation_ids)
        which = (
            f"stored evaluation {self.evaluation_ids[0]}"
            if count == 1
            else f"{count} stored evaluations ({', '.join(self.evaluation_ids)})"
        )
        shape = f"{self.cases} cases" + (f" × {self.repeats} repeats" if self.repeats else "")
        return f"{which}, {shape}, agent {self.agent}"


@dataclass(slots=True, frozen=True)
class PlanRow:
    """What the gate finds at one number of repeats (noncentral t of its test)."""

    repeats: int
    power: float
    detectable_drop: float | None
    cases_needed: int | None
    identical_pass: float


@dataclass(slots=True)
class PowerPlan:
    """Everything `evals plan` prints, from explicit, sourced assumptions.

    `share` is the regression gate's share of the build's false-failure budget `spend`
    (split among `gates` blocking statistical gates); its pass limit is at spend/2.
    """

    suite_id: str
    environment: str | None
    cases: Assumed
    repeats: Assumed
    pass_rate: Assumed
    icc: Assumed
    effect: Assumed
    tolerance: Assumed
    spend: float
    gates: int
    power: float
    p0_cases: int = 0
    p0_rate: Assumed = field(default_factory=lambda: Assumed(DEFAULT_P0_RATE, "default"))
    p0_margin: float = 0.2
    estimand: str = "cases"

    @property
    def share(self) -> float:
        """The regression gate's share of the budget."""
        return self.spend / max(self.gates, 1)

    @property
    def pass_alpha(self) -> float:
        """The error of every gate's pass limit."""
        return self.spend / 2

    def _n(self) -> int:
        return int(self.cases.value)

    def _k(self) -> int:
        return int(self.repeats.value)

    def _simulate(self, drop: float, side: str, simulations: int = SIMULATIONS) -> float:
        rate = self.pass_rate.value
        baseline, candidate = shifted_case_rates(rate, self.icc.value, max(0.0, rate - drop))
        alpha = self.share if side == "fail" else self.pass_alpha
        return simulated_gate_probability(
            baseline,
            candidate,
            self._n(),
            self._k(),
            self.tolerance.value,
            alpha,
            side,
            simulations,
            _SEED,
            self.estimand,
        )

    def detection(self) -> float:
        """Probability that the gate fails a drop of the target effect (simulated)."""
        return self._simulate(self.effect.value, "fail")

    def identical_pass(self) -> float:
        """Probability that the gate passes identical agents (simulated): what an
        environment that fails on undetermined needs to be likely."""
        return self._simulate(0.0, "pass")

    def detectable_drop(self) -> float | None:
        """Smallest drop the gate fails with the plan's power (simulated, bisection with
        common random numbers); None when even a drop to 0 is not found that often."""
        rate = self.pass_rate.value
        if self._simulate(rate, "fail", SIMULATIONS // 2) < self.power:
            return None
        low, high = 0.0, rate
        for _ in range(14):
            middle = (low + high) / 2
            if self._simulate(middle, "fail", SIMULATIONS // 2) >= self.power:
                high = middle
            else:
                low = middle
        return high

    def probability(self, n: int, k: int, drop: float, side: str) -> float:
        """Noncentral t probability that the gate fails (side "fail") a drop with n cases
        and k repeats, or passes it (side "pass")."""
        rate = self.pass_rate.value
        return regression_gate_probability(
            n,
            k,
            rate,
            max(0.0, rate - drop),
            self.icc.value,
            self.tolerance.value,
            self.share if side == "fail" else self.pass_alpha,
            side,
            self.estimand,
        )

    def cases_needed(self, k: int) -> int | None:
        """Fewest cases with which the gate fails the target drop with the plan's power."""
        effect = self.effect.value

        def found(n: int) -> bool:
            return self.probability(n, k, effect, "fail") >= self.power

        high = 2
        while not found(high):
            high *= 2
            if high > _MOST_CASES:
                return None
        low = high // 2
        while high - low > 1:
            middle = (low + high) // 2
            if found(middle):
                high = middle
            else:
                low = middle
        return max(high, 2 if self.estimand == "tasks" else 1)

    def table(self, grid: tuple[int, ...] = REPEAT_GRID) -> list[PlanRow]:
        """One row per number of repeats in `grid` (and the suite's own)."""
        rows = []
        for k in sorted({*grid, self._k()}):
            rows.append(
                PlanRow(
                    repeats=k,
                    power=self.probability(self._n(), k, self.effect.value, "fail"),
                    detectable_drop=minimum_detectable_drop(
                        self._n(),
                        k,
                        self.pass_rate.value,
                        self.icc.value,
                        self.tolerance.value,
                        self.share,
                        self.power,
                        self.estimand,
                    ),
                    cases_needed=self.cases_needed(k),
                    identical_pass=self.probability(self._n(), k, 0.0, "pass"),
                )
            )
        return rows

    def p0_detection(self) -> float:
        """Probability that one P0 case whose rate falls by the target effect fails the
        P0 gate (exact; at Holm's first step, share/P0 cases)."""
        rate = self.p0_rate.value
        alpha = self.share / max(self.p0_cases, 1)
        return exact_rejection_probability(
            self._k(),
            max(0.0, rate - self.effect.value),
            self._k(),
            rate,
            0.0,
            alpha,
            "less",
        )

    def p0_pass(self) -> float:
        """Probability that one unchanged P0 case is shown within `p0_margin` (exact)."""
        rate = self.p0_rate.value
        return exact_rejection_probability(
            self._k(), rate, self._k(), rate, -self.p0_margin, self.pass_alpha, "greater"
        )


def pooled_estimate(
    summaries: list[tuple[str, dict[str, Any]]], baseline: str | None
) -> StoredEstimate | None:
    """The baseline agent's (else the first agent's) pass rate and ICC, pooled over stored
    summaries (newest first) and weighted by their cases; P0 cases' mean baseline rate."""
    found = []
    for evaluation_id, summary in summaries:
        agents = [
            a
            for a in summary.get("agents") or []
            if a.get("group") == "suite" and a.get("pass_rate") is not None
        ]
        if agents:
            chosen = next((a for a in agents if a["agent"] == baseline), agents[0])
            found.append((evaluation_id, chosen, summary))
    if not found:
        return None
    agent = found[0][1]["agent"]
    found = [f for f in found if f[1]["agent"] == agent]
    weights = [max(int(a.get("cases") or 0), 1) for _, a, _ in found]
    total = sum(weights)
    with_icc = [
        (w, a["icc"])
        for w, (_, a, _) in zip(weights, found, strict=True)
        if a.get("icc") is not None
    ]
    p0 = [
        c["baseline"]["pass_rate"]
        for _, _, s in found
        for c in (s.get("comparison") or {}).get("cases") or []
        if c.get("priority") == "P0" and c["baseline"].get("pass_rate") is not None
    ]
    return StoredEstimate(
        evaluation_ids=tuple(e for e, _, _ in found),
        agent=agent,
        cases=int(found[0][1].get("cases") or 0),
        repeats=found[0][1].get("k"),
        pass_rate=sum(
            w * float(a["pass_rate"]) for w, (_, a, _) in zip(weights, found, strict=True)
        )
        / total,
        icc=sum(w * float(i) for w, i in with_icc) / sum(w for w, _ in with_icc)
        if with_icc
        else None,
        p0_rate=sum(p0) / len(p0) if p0 else None,
    )


def latest_estimate(store_url: str, suite: Suite) -> StoredEstimate | None:
    """Estimates pooled over the suite's newest complete, unsharded stored evaluations."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        summaries = [
            (evaluation.id, evaluation.summary)
            for evaluation in store.list_evaluations(suite_id=suite.suite_id, status="complete")
            if evaluation.shard is None and evaluation.summary
        ][:POOLED_EVALUATIONS]
    finally:
        store.close()
    return pooled_estimate(summaries, suite.gates.baseline)


def existing_store_url(store_url: str | None) -> str | None:
    """The store to read estimates from: the one named, $EVALS_STORE_URL, or the default
    SQLite file when it already exists (planning never creates a store)."""
    if store_url or os.environ.get("EVALS_STORE_URL"):
        return store_url or os.environ["EVALS_STORE_URL"]
    from evals.store.location import DEFAULT_SQLITE_PATH

    default = Path.cwd() / DEFAULT_SQLITE_PATH
    return str(default) if default.is_file() else None


def _pick(flag: float | None, stored: float | None, store_source: str, default: float) -> Assumed:
    if flag is not None:
        return Assumed(flag, "given on the command line")
    if stored is not None:
        return Assumed(stored, f"estimated from {store_source}")
    return Assumed(default, "default (no stored estimate)")


def _check_inputs(**values: float | None) -> None:
    for name in ("pass_rate", "icc", "power", "tolerance"):
        value = values.get(name)
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"{name.replace('_', ' ')} must lie within [0, 1]")
    effect = values.get("effect")
    if effect is not None and not 0 < effect <= 1:
        raise ValueError("effect is a drop of the pass rate, within (0, 1]")
    for name in ("cases", "repeats"):
        value = values.get(name)
        if value is not None and value < (2 if name == "cases" else 1):
            raise ValueError("cases must be at least 2 and repeats at least 1")


def build_power_plan(
    suite: Suite,
    *,
    gates: int,
    environment: str | None = None,
    cases: int | None = None,
    repeats: int | None = None,
    effect: float | None = None,
    pass_rate: float | None = None,
    icc: float | None = None,
    tolerance: float | None = None,
    power: float = DEFAULT_POWER,
    estimate: StoredEstimate | None = None,
) -> PowerPlan:
    """The power plan of a suite in an environment: flags first, then the stored estimate,
    then defaults. `gates` is the number of blocking statistical gates that share the
    budget (`evals.gates.catalog.planned_gate_count`)."""
    _check_inputs(
        pass_rate=pass_rate,
        icc=icc,
        power=power,
        tolerance=tolerance,
        effect=effect,
        cases=cases,
        repeats=repeats,
    )
    config = suite.gates.for_environment(environment)
    selected = select_cases(suite.cases, config.tags, None)
    source = estimate.source if estimate else ""
    if repeats is not None:
        chosen_repeats = Assumed(repeats, "given on the command line")
    elif config.repeat:
        chosen_repeats = Assumed(config.repeat, "the environment's gates.repeat")
    else:
        chosen_repeats = Assumed(suite.evaluate_options.repeat, "the suite's evaluateOptions")
    return PowerPlan(
        suite_id=suite.suite_id,
        environment=environment,
        cases=Assumed(cases, "given on the command line")
        if cases is not None
        else Assumed(
            len(selected),
            "the suite" + (f" (tags {', '.join(config.tags)})" if config.tags else ""),
        ),
        repeats=chosen_repeats,
        pass_rate=_pick(
            pass_rate, estimate.pass_rate if estimate else None, source, DEFAULT_PASS_RATE
        ),
        icc=_pick(icc, estimate.icc if estimate else None, source, DEFAULT_ICC),
        effect=Assumed(effect, "given on the command line")
        if effect is not None
        else Assumed(DEFAULT_EFFECT, "default"),
        tolerance=Assumed(tolerance, "given on the command line")
        if tolerance is not None
        else Assumed(config.tolerance(), "the gates' max_regression (else margin)"),
        spend=1 - config.confidence,
        gates=gates,
        power=power,
        p0_cases=sum(1 for c in selected if c.priority == "P0"),
        p0_rate=_pick(None, estimate.p0_rate if estimate else None, source, DEFAULT_P0_RATE),
        p0_margin=config.p0_margin,
        estimand=config.estimand,
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and value > 1 else f"{value:.3g}"


def _drop(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_power_plan(plan: PowerPlan, console: Any = None) -> None:
    """Print the plan: assumptions with their sources, the gate's chances, and the table."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    n_cases, k = int(plan.cases.value), int(plan.repeats.value)
    effect = plan.effect.value
    where = f" ({plan.environment})" if plan.environment else ""
    console.print(
        f"[bold]Power plan for {plan.suite_id}{where}[/bold], baseline vs candidate, "
        + (
            f"on these {n_cases} cases"
            if plan.estimand == "cases"
            else "on tasks like these (gates.estimand: tasks)"
        )
    )
    inputs = Table(show_header=False, box=None, padding=(0, 1))
    for label, assumed in (
        ("cases", plan.cases),
        ("repeats", plan.repeats),
        ("baseline pass rate", plan.pass_rate),
        ("ICC of repeats", plan.icc),
        ("target drop", plan.effect),
        ("tolerated loss", plan.tolerance),
    ):
        inputs.add_row(label, _number(assumed.value), assumed.source)
    inputs.add_row(
        "regression gate's share",
        f"{plan.share:.4g}",
        f"{plan.spend:.3g} split among {plan.gates} blocking statistical gate(s)",
    )
    inputs.add_row("power", f"{plan.power:.3g}", "")
    console.print(inputs)
    detection = plan.detection()
    passing = plan.identical_pass()
    drop = plan.detectable_drop()
    console.print(
        f"With {n_cases} cases × {k} repeats the regression gate fails a drop of "
        f"{effect:.3g} (to {max(0.0, plan.pass_rate.value - effect):.3g}) with probability "
        f"[bold]{detection:.2f}[/bold]; the smallest drop it fails with {plan.power:.0%} "
        f"probability is [bold]{_drop(drop)}[/bold]. Identical agents pass it (loss shown "
        f"within {plan.tolerance.value:.3g}) with probability {passing:.2f}, which is what "
        "`on_undetermined: fail` needs. Simulated: "
        f"{SIMULATIONS} draws of the gate's own test (Monte Carlo SE at most "
        f"{0.5 / SIMULATIONS**0.5:.3f})."
    )
    if plan.p0_cases:
        console.print(
            f"P0 cases ({plan.p0_cases}, baseline rate {plan.p0_rate.value:.3g}, "
            f"{plan.p0_rate.source}): one that falls by {effect:.3g} fails the P0 gate with "
            f"probability {plan.p0_detection():.2f}; an unchanged one is shown within "
            f"{plan.p0_margin:.3g} (and can pass) with probability {plan.p0_pass():.2f} "
            f"at {k} repeats (exact)."
        )
    approximation = "normal" if plan.estimand == "cases" else "noncentral t"
    table = Table(
        title=f"At {n_cases} cases, by repeats ({approximation} approximation of the gate's "
        f"test, drop {effect:.3g})"
    )
    for header in ("repeats", "power", "smallest\ndrop found", "cases\nneeded", "identical\npass"):
        table.add_column(header, justify="right")
    for row in plan.table():
        table.add_row(
            str(row.repeats),
            f"{row.power:.2f}",
            _drop(row.detectable_drop),
            "—" if row.cases_needed is None else str(row.cases_needed),
            f"{row.identical_pass:.2f}",
            style="bold" if row.repeats == k else None,
        )
    console.print(table)
    test = (
        "the gate's stratified score test over the cases' runs"
        if plan.estimand == "cases"
        else "the gate's one-sided t test on per-case differences"
    )
    console.print(
        "Cases: baseline rates Beta(pass rate, ICC), the candidate's moved by one log-odds "
        f"shift; {test} at its share. docs/statistics.md shows plan against simulated gates."
    )
