"""Check the harness's statistics by simulation (seeded; run on demand, not in tests).

    python validation/simulate.py [--runs N]

Cases are drawn from a beta-binomial model: each case has its own true pass rate
p_c ~ Beta with mean `mu` and intra-class correlation `icc`, and each run passes with
probability p_c. The suite's true score is `mu`, the mean over the population of cases
the suite samples. Everything goes through `evals.analysis.summarize`, the code users run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from beta_binomial import case_rates, numbered_cases, outcome_records, simulated_suite

from evals.analysis.summarize import summarize
from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.stats import wilson_interval


def _records(
    rng: np.random.Generator, agent: str, rates: np.ndarray, repeats: int
) -> list[RunRecord]:
    outcomes = rng.random((len(rates), repeats)) < rates[:, None]
    seeds = [int(rng.integers(1 << 31)) for _ in range(outcomes.size)]
    return outcome_records(agent, outcomes, seeds)


def coverage(runs: int, n_cases: int, repeats: int, mu: float, icc: float, seed: int):
    """Share of simulations whose suite interval (and plain run-level Wilson) covers mu."""
    rng = np.random.default_rng(seed)
    suite, config = simulated_suite(numbered_cases(n_cases)), GateConfig(candidate="cand")
    covered = naive = 0
    for _ in range(runs):
        records = _records(rng, "cand", case_rates(rng, n_cases, mu, icc), repeats)
        low, high = summarize(records, suite, config).agents[0].interval
        covered += low <= mu <= high
        passes = sum(r.passed for r in records)
        naive_low, naive_high = wilson_interval(passes, len(records))
        naive += naive_low <= mu <= naive_high
    return covered / runs, naive / runs


def comparison_rates(
    runs: int, n_cases: int, repeats: int, mu: float, icc: float, drop: float, seed: int
):
    """(share called regression, mean true difference) for a candidate `drop` points worse."""
    rng = np.random.default_rng(seed)
    suite, config = (
        simulated_suite(numbered_cases(n_cases)),
        GateConfig(baseline="base", candidate="cand"),
    )
    regressions, true_differences = 0, []
    for _ in range(runs):
        rates = case_rates(rng, n_cases, mu, icc)
        worse = np.clip(rates - drop, 0, 1)
        records = _records(rng, "base", rates, repeats) + _records(rng, "cand", worse, repeats)
        overall = summarize(records, suite, config).comparison.overall
        regressions += overall.verdict == "regression"
        true_differences.append(float(np.mean(worse - rates)))
    return regressions / runs, float(np.mean(true_differences))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="simulations per check")
    runs = parser.parse_args().runs
    started = time.perf_counter()
    print(f"beta-binomial cases, {runs} simulations per row, seeded\n")
    print("coverage of the 95 % suite interval (30 cases x 5 repeats)")
    print(f"{'mu':>5} {'icc':>5} {'case-level':>11} {'run-level Wilson':>17}")
    for mu, icc in [(0.7, 0.3), (0.7, 0.6), (0.85, 0.5), (0.5, 0.2)]:
        case_level, run_level = coverage(runs, 30, 5, mu, icc, seed=11)
        print(f"{mu:>5} {icc:>5} {case_level:>11.3f} {run_level:>17.3f}")
    print("\nfalse 'regression' for two identical agents (30 cases x 5 repeats)")
    for mu, icc in [(0.7, 0.3), (0.85, 0.5)]:
        rate, _ = comparison_rates(runs, 30, 5, mu, icc, 0.0, seed=23)
        print(f"  mu={mu} icc={icc}: {rate:.3f}")
    print("\npower to call a 10-point regression (40 cases x 5 repeats)")
    for mu, icc in [(0.7, 0.3), (0.7, 0.6), (0.85, 0.5)]:
        rate, true_difference = comparison_rates(runs, 40, 5, mu, icc, 0.10, seed=37)
        print(f"  mu={mu} icc={icc}: power {rate:.3f} (true mean difference {true_difference:.3f})")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
