"""Check the whole build decision by simulation, through the product's own gates (seeded).

    python validation/build_decision.py [--runs N] [--seed S]

Two agents run C cases k times. Each case has its own true pass rate p_c ~ Beta with mean
`mu` and intra-class correlation `icc` (the beta-binomial model); a run errors with
probability `error` and otherwise passes with probability p_c. The runs become run records
and go through `evals.pipeline.evaluation.analyse`, that is `summarize` and `decide`: the
code a user runs, with the gate configuration a suite would declare. A staged run looks
at 5, 10 and 20 repeats with the budget each look may spend
(`evals.pipeline.staged.look_spends`) and stops once decided (`is_decided`), as
`evals run --until-decided` does. `evals plan`'s prediction comes from
`evals.analysis.power.build_power_plan` with the gate count `decide` reaches.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from beta_binomial import case_rates, outcome_records, simulated_suite, tagged_cases

from evals.analysis.power import build_power_plan
from evals.gates.catalog import planned_gate_count
from evals.model.gates import GateConfig
from evals.model.summary import GateReport
from evals.pipeline.evaluation import analyse
from evals.pipeline.staged import is_decided, look_spends
from evals.stats import flake_rate, shifted_case_rates, wilson_interval

CASES, REPEATS, TAGS, STAGES = 30, 5, 5, (5, 10, 20)
P0 = (0, 1, 2, 3, 4)
TOLERANT = {f"t{i}": {"max_regression": 0.10} for i in range(TAGS)}
AT_EDGE = {f"t{i}": {"max_regression": 0.0} for i in range(TAGS)}


@dataclass
class Tally:
    """Outcomes over simulated builds: verdicts, which gates failed, repeats run."""

    runs: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    repeats_run: int = 0

    def add(self, report: GateReport, repeats: int) -> None:
        self.runs += 1
        self.verdicts[report.verdict] = self.verdicts.get(report.verdict, 0) + 1
        for name in {g.name.split("[")[0] for g in report.gates if g.status == "fail"}:
            self.failed[name] = self.failed.get(name, 0) + 1
        self.repeats_run += repeats

    def share(self, verdict: str) -> tuple[float, float]:
        """(share of builds with `verdict`, its Monte Carlo standard error)."""
        rate = self.verdicts.get(verdict, 0) / self.runs
        return rate, math.sqrt(rate * (1 - rate) / self.runs)

    def row(self, label: str) -> str:
        fail, se = self.share("fail")
        passed, _ = self.share("pass")
        undetermined, _ = self.share("undetermined")
        gates = ", ".join(f"{k} {v / self.runs:.3f}" for k, v in sorted(self.failed.items()))
        return (
            f"  {label}: build fails {fail:.3f} (MC SE {se:.3f}); passes {passed:.3f}; "
            f"undetermined {undetermined:.3f}; mean repeats {self.repeats_run / self.runs:.1f}\n"
            f"    failing gates (share of builds): {gates or 'none'}"
        )


def population_flake(mu: float, icc: float, error: float) -> float:
    """E over the case population of 2q(1-q), q = (1-error)·p: the flake gate's null edge."""
    variance = icc * mu * (1 - mu)
    q_mean = (1 - error) * mu
    q_square = (1 - error) ** 2 * (variance + mu * mu)
    return 2 * (q_mean - q_square)


def edge_config(mu: float, icc: float, error: float) -> GateConfig:
    """Every threshold where its null holds with equality for identical agents: the worst
    case for false failures (the population's mean pass rate and flake, the run error
    rate, tolerance 0 for the suite and every tag)."""
    return GateConfig(
        baseline="base",
        candidate="cand",
        min_pass_rate=(1 - error) * mu,
        max_error_rate=error,
        max_flake_rate=population_flake(mu, icc, error),
        per_tag=AT_EDGE,
    )


TYPICAL = GateConfig(
    baseline="base",
    candidate="cand",
    min_pass_rate=0.6,
    max_regression=0.05,
    max_flake_rate=0.5,
    per_tag=TOLERANT,
)


def draw(rng, rates: np.ndarray, repeats: int, error: float) -> tuple[np.ndarray, np.ndarray]:
    """(passes, errors) of shape (cases, repeats)."""
    errors = rng.random((len(rates), repeats)) < error
    passes = ~errors & (rng.random((len(rates), repeats)) < rates[:, None])
    return passes, errors


def records_of(outcomes: dict[str, tuple[np.ndarray, np.ndarray]], repeats: int) -> list:
    """Run records of the first `repeats` repeats of each agent's outcomes."""
    records = []
    for agent, (passes, errors) in outcomes.items():
        records += outcome_records(
            agent, passes[:, :repeats], errors=errors[:, :repeats], error="agent raised"
        )
    return records


def simulate(
    runs: int,
    seed: int,
    mu: float,
    icc: float,
    error: float,
    config_for: Callable[[], GateConfig],
    staged: bool,
    candidate_error: float | None = None,
    fixed: Callable[[np.ndarray, np.ndarray], None] | None = None,
) -> Tally:
    """Builds of identical agents (unless `fixed` changes the outcomes, or the candidate
    errors at `candidate_error`), decided by the product's gates."""
    rng = np.random.default_rng(seed)
    suite = simulated_suite(tagged_cases(CASES, TAGS, P0))
    looks = STAGES if staged else (REPEATS,)
    config = config_for()
    spends = look_spends(config.confidence, looks) if staged else [1 - config.confidence]
    tally = Tally()
    for _ in range(runs):
        rates = case_rates(rng, CASES, mu, icc)
        base = draw(rng, rates, looks[-1], error)
        cand = draw(rng, rates, looks[-1], error if candidate_error is None else candidate_error)
        if fixed is not None:
            fixed(base[0], cand[0])
        outcomes = {"base": base, "cand": cand}
        for look, spend in zip(looks, spends, strict=True):
            _, report = analyse(suite, records_of(outcomes, look), config, None, spend=spend)
            if is_decided(report) or look == looks[-1]:
                tally.add(report, look)
                break
    return tally


def false_failures(runs: int, seed: int) -> None:
    print(
        f"1. identical agents, {CASES} cases x {REPEATS} repeats, {TAGS} tags with per-tag "
        f"regression gates, {len(P0)} P0 cases, runs error with probability 0.02"
    )
    for mu, icc in ((0.7, 0.3), (0.85, 0.5)):
        for label, staged in (("fixed k=5", False), ("--until-decided 5,10,20", True)):
            tally = simulate(
                runs, seed, mu, icc, 0.02, lambda m=mu, i=icc: edge_config(m, i, 0.02), staged
            )
            print(tally.row(f"mu {mu} icc {icc}, every gate at its edge, {label}"))
        typical = simulate(runs, seed, mu, icc, 0.02, lambda: TYPICAL, staged=False)
        print(typical.row(f"mu {mu} icc {icc}, typical thresholds, fixed k=5"))


def _detected(runs: int, seed: int, population: tuple, config: GateConfig, cases: int) -> float:
    """Share of builds whose regression gate fails, cases drawn from `population`."""
    rng = np.random.default_rng(seed)
    suite = simulated_suite(tagged_cases(cases, TAGS))
    found = 0
    for _ in range(runs):
        chosen = rng.integers(0, len(population[0]), cases)
        base = rng.random((cases, REPEATS)) < population[0][chosen][:, None]
        cand = rng.random((cases, REPEATS)) < population[1][chosen][:, None]
        records = [*outcome_records("base", base), *outcome_records("cand", cand)]
        _, report = analyse(suite, records, config, None)
        found += next(g for g in report.gates if g.name == "regression").status == "fail"
    return found / runs


def detection_power(runs: int, seed: int) -> None:
    cases, drop = 40, 0.10
    print(
        f"\n2. a {drop:.2f} drop at {cases} cases x {REPEATS} repeats: the regression gate "
        "fails (no errors; gates: error_rate, regression)"
    )
    print(
        "   plan: `evals plan` (simulated gate test, 4000 draws); real: decide() on simulated "
        "runs; log-odds drop is the plan's model, proportional drop keeps 1 - 0.10/mu of "
        "each case's rate"
    )
    config = GateConfig(baseline="base", candidate="cand", block_p0_regressions=False)
    suite = simulated_suite(tagged_cases(cases, TAGS))
    suite.gates = config
    for mu, icc in ((0.7, 0.3), (0.7, 0.6), (0.85, 0.5)):
        plan = build_power_plan(
            suite,
            gates=planned_gate_count(suite, None),
            repeats=REPEATS,
            effect=drop,
            pass_rate=mu,
            icc=icc,
        )
        predicted = plan.detection()
        baseline, shifted = shifted_case_rates(mu, icc, mu - drop)
        log_odds = _detected(runs, seed, (baseline, shifted), config, cases)
        proportional = _detected(runs, seed, (baseline, baseline * (1 - drop / mu)), config, cases)
        se = math.sqrt(predicted * (1 - predicted) / runs)
        print(
            f"  mu {mu} icc {icc}, share {plan.share:.4g}: plan {predicted:.3f}; real gates "
            f"log-odds drop {log_odds:.3f} ({log_odds - predicted:+.3f}), proportional drop "
            f"{proportional:.3f} ({proportional - predicted:+.3f}) (MC SE {se:.3f})"
        )


def p0_drop(runs: int, seed: int) -> None:
    print("\n3. one P0 case drops 5/5 -> 0/5, the other 29 cases unchanged (no errors)")

    def drop(base: np.ndarray, cand: np.ndarray) -> None:
        base[0, :] = True
        cand[0, :] = False

    tally = simulate(runs, seed, 0.7, 0.3, 0.0, lambda: TYPICAL, False, fixed=drop)
    failed = tally.failed.get("p0_regressions", 0)
    print(f"  the P0 gate fails {failed} of {tally.runs} builds")
    print(tally.row("typical thresholds"))


def always_errors(runs: int, seed: int) -> None:
    print(f"\n4. a candidate whose every run errors, {CASES} x {REPEATS}, typical thresholds")
    tally = simulate(runs, seed, 0.7, 0.3, 0.02, lambda: TYPICAL, False, candidate_error=1.0)
    print(tally.row("always erroring"))


def flakiness(runs: int, seed: int) -> None:
    mu, icc, limit = 0.7, 0.3, 0.30
    print(
        f"\n5. flake gate against k, one agent (mu {mu}, icc {icc}, true mean flake "
        f"probability {population_flake(mu, icc, 0.0):.3f}, max_flake_rate {limit})"
    )
    rng = np.random.default_rng(seed)
    suite = simulated_suite(tagged_cases(CASES, TAGS), agents=("cand",))
    config = GateConfig(candidate="cand", max_flake_rate=limit, max_error_rate=None)
    for repeats in (5, 20):
        new_fail = new_pass = old_fail = 0
        for _ in range(runs):
            rates = case_rates(rng, CASES, mu, icc)
            passes = rng.random((CASES, repeats)) < rates[:, None]
            _, report = analyse(suite, outcome_records("cand", passes), config, None)
            status = report.gates[0].status
            new_fail += status == "fail"
            new_pass += status == "pass"
            share = flake_rate([(int(x), repeats) for x in passes.sum(axis=1)])
            old_fail += wilson_interval(round(share * CASES), CASES)[0] > limit
        print(
            f"  k={repeats}: the flake gate fails {new_fail / runs:.3f}, passes "
            f"{new_pass / runs:.3f}; the old share-of-cases rule failed {old_fail / runs:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="simulated builds per row")
    parser.add_argument("--seed", type=int, default=20240601)
    arguments = parser.parse_args()
    runs, seed = arguments.runs, arguments.seed
    started = time.perf_counter()
    print(f"{runs} simulated builds per row, seed {seed}, build alpha 0.05\n")
    false_failures(runs, seed)
    detection_power(runs, seed + 1)
    p0_drop(max(runs // 4, 50), seed + 2)
    always_errors(max(runs // 10, 20), seed + 3)
    flakiness(runs // 2, seed + 4)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
