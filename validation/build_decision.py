"""Check the whole build decision by simulation (seeded; run on demand, not in tests).

    python validation/build_decision.py [--runs N] [--seed S]

Two agents run C cases k times. Each case has its own true pass rate p_c ~ Beta with mean
`mu` and intra-class correlation `icc` (the beta-binomial model); a run errors with
probability `error`, and otherwise passes with probability p_c; errors count as failures.
The build is decided from the counts with `evals.stats` only, the way the gates decide:

- min_pass_rate: the candidate's mean per-case pass rate, effective-n Wilson interval;
- regression: candidate minus baseline over all cases, t test on per-case differences;
- regression[tag]: the same per tag, Holm across the tags;
- p0_regressions: every P0 case, exact unconditional score test, Holm across P0 cases;
  a P0 case fails when a loss is shown and passes only when the loss is shown within
  `p0_margin`;
- max_error_rate: the candidate's pooled error rate, Clopper-Pearson;
- max_flake_rate: the candidate's mean per-case flake probability, effective-n Wilson.

Each gate fails when its upper (or, for the two rates that must stay low, lower) limit
at 1 - alpha/G clears the threshold (G = 6 gates share the build's false-failure budget
alpha), and passes when its limit at 1 - alpha/2 shows the threshold met; the build fails
when any gate fails. A staged run looks at 5, 10 and 20 repeats and spends the budget
over the looks (increments of alpha·t, t the share of the 20 repeats run).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from evals.stats import (
    case_mean_difference,
    clopper_pearson_limit,
    effective_wilson_interval,
    exact_score_p_value,
    flake_probability,
    flake_rate,
    gate_status,
    holm,
    mean_of_means_variance,
    regression_gate_probability,
    shifted_case_rates,
    simulated_gate_probability,
    spending_shares,
    wilson_interval,
)

ALPHA = 0.05
GATES = 6
TAGS = 5


@dataclass(frozen=True)
class Build:
    """The gates' thresholds (fractions) and the build's false-failure budget."""

    min_pass_rate: float
    tolerance: float
    tag_tolerance: float
    p0_fail_margin: float
    p0_margin: float
    max_error_rate: float
    max_flake_rate: float
    p0_cases: tuple[int, ...] = (0, 1, 2, 3, 4)
    alpha: float = ALPHA


@dataclass
class Counts:
    """Passes and errors per case for each agent: arrays of shape (cases,)."""

    base_passes: np.ndarray
    cand_passes: np.ndarray
    cand_errors: np.ndarray
    repeats: int
    tags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))


def case_rates(rng: np.random.Generator, n_cases: int, mu: float, icc: float) -> np.ndarray:
    """True per-case pass rates, Beta with mean `mu` and intra-class correlation `icc`."""
    scale = (1 - icc) / icc
    return rng.beta(mu * scale, (1 - mu) * scale, size=n_cases)


def draw_runs(rng, rates: np.ndarray, repeats: int, error: float) -> tuple[np.ndarray, np.ndarray]:
    """(passes, errors) outcome arrays of shape (cases, repeats): a run errors with
    probability `error`, else passes with its case's rate."""
    errors = rng.random((len(rates), repeats)) < error
    passes = ~errors & (rng.random((len(rates), repeats)) < rates[:, None])
    return passes, errors


def mean_flake(rates: np.ndarray, error: float) -> float:
    """The true mean probability that two runs of a case disagree."""
    q = (1 - error) * rates
    return float(np.mean(2 * q * (1 - q)))


def _status(fails: bool, passes: bool) -> str:
    return "fail" if fails else "pass" if passes else "undetermined"


def _family(fail_p: list[float], pass_flags: list[bool], share: float) -> str:
    """Holm across one gate's hypotheses for failing; passing needs every one to pass."""
    fails = any(q <= share for q in holm(fail_p))
    return _status(fails, all(pass_flags))


def _limit_of_mean(rate: float, values: list[float], runs: int, level: float) -> tuple:
    return effective_wilson_interval(
        rate, mean_of_means_variance(values), len(values), runs, 2 * level - 1
    )


def decide(counts: Counts, build: Build, fail_alpha: float, pass_alpha: float) -> dict[str, str]:
    """Every gate's status: fail limits at `fail_alpha`/G, pass limits at `pass_alpha`."""
    share = fail_alpha / GATES
    k = counts.repeats
    n = len(counts.cand_passes)
    runs = [k] * n
    cand, base = counts.cand_passes.tolist(), counts.base_passes.tolist()
    rates = [x / k for x in cand]
    result: dict[str, str] = {}

    rate = sum(rates) / n
    fail_high = _limit_of_mean(rate, rates, n * k, 1 - share)[1]
    pass_low = _limit_of_mean(rate, rates, n * k, 1 - pass_alpha)[0]
    result["min_pass_rate"] = gate_status(
        pass_low, fail_high, build.min_pass_rate, fail_threshold=build.min_pass_rate
    )

    overall = case_mean_difference(cand, runs, base, runs)
    result["regression"] = _status(
        overall.p_value(-build.tolerance, "less") <= share,
        overall.p_value(-build.tolerance, "greater") <= pass_alpha,
    )

    fail_p, pass_flags = [], []
    for tag in range(TAGS):
        members = np.flatnonzero(counts.tags == tag)
        tagged = case_mean_difference(
            [cand[i] for i in members],
            [k] * len(members),
            [base[i] for i in members],
            [k] * len(members),
        )
        fail_p.append(tagged.p_value(-build.tag_tolerance, "less"))
        pass_flags.append(tagged.p_value(-build.tag_tolerance, "greater") <= pass_alpha)
    result["regression[tags]"] = _family(fail_p, pass_flags, share)

    fail_p = [
        exact_score_p_value(cand[i], k, base[i], k, -build.p0_fail_margin, "less")
        for i in build.p0_cases
    ]
    pass_flags = [
        exact_score_p_value(cand[i], k, base[i], k, -build.p0_margin, "greater") <= pass_alpha
        for i in build.p0_cases
    ]
    result["p0_regressions"] = _family(fail_p, pass_flags, share)

    errors, total = int(counts.cand_errors.sum()), n * k
    result["max_error_rate"] = gate_status(
        clopper_pearson_limit(errors, total, 1 - share, "lower"),
        clopper_pearson_limit(errors, total, 1 - pass_alpha, "upper"),
        build.max_error_rate,
        higher_is_better=False,
    )

    outcomes = list(zip(cand, runs, strict=True))
    flake, (low, _) = flake_probability(outcomes, 1 - 2 * share)
    _, (_, high) = flake_probability(outcomes, 1 - 2 * pass_alpha)
    result["max_flake_rate"] = gate_status(low, high, build.max_flake_rate, higher_is_better=False)
    assert flake >= 0
    return result


def build_verdict(statuses: dict[str, str]) -> str:
    values = statuses.values()
    if "fail" in values:
        return "fail"
    return "pass" if all(v == "pass" for v in values) else "undetermined"


def _tags(n_cases: int) -> np.ndarray:
    return np.arange(n_cases) % TAGS


def _counts(passes_b, passes_c, errors_c, repeats, tags) -> Counts:
    return Counts(
        passes_b[:, :repeats].sum(axis=1),
        passes_c[:, :repeats].sum(axis=1),
        errors_c[:, :repeats].sum(axis=1),
        repeats,
        tags,
    )


@dataclass
class Tally:
    """Outcomes over simulated builds: verdicts, and which gates failed."""

    runs: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    repeats_run: int = 0

    def add(self, statuses: dict[str, str], repeats: int) -> None:
        self.runs += 1
        verdict = build_verdict(statuses)
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1
        for name, status in statuses.items():
            if status == "fail":
                self.failed[name] = self.failed.get(name, 0) + 1
        self.repeats_run += repeats

    def share(self, verdict: str) -> tuple[float, float]:
        """(share of builds with `verdict`, its Monte Carlo standard error)."""
        rate = self.verdicts.get(verdict, 0) / self.runs
        return rate, math.sqrt(rate * (1 - rate) / self.runs)


def simulate(
    runs: int,
    seed: int,
    n_cases: int,
    repeats: int,
    mu: float,
    icc: float,
    error: float,
    build_for: Callable[[np.ndarray], Build],
    candidate: Callable[[np.ndarray], np.ndarray] = lambda rates: rates,
    stages: tuple[int, ...] | None = None,
    candidate_error: float | None = None,
    fixed: Callable[[np.ndarray, np.ndarray], None] | None = None,
) -> Tally:
    """Simulated builds; `stages` makes each a staged run that stops once decided."""
    rng = np.random.default_rng(seed)
    tags = _tags(n_cases)
    tally = Tally()
    looks = stages or (repeats,)
    most = looks[-1]
    shares = spending_shares([s / most for s in looks], ALPHA) if stages else [ALPHA]
    for _ in range(runs):
        rates = case_rates(rng, n_cases, mu, icc)
        build = build_for(rates)
        passes_b, _ = draw_runs(rng, rates, most, error)
        cand_error = error if candidate_error is None else candidate_error
        passes_c, errors_c = draw_runs(rng, candidate(rates), most, cand_error)
        if fixed is not None:
            fixed(passes_b, passes_c)
        for look, spent in zip(looks, shares, strict=True):
            statuses = decide(
                _counts(passes_b, passes_c, errors_c, look, tags), build, spent, spent / 2
            )
            if build_verdict(statuses) != "undetermined" or look == most:
                tally.add(statuses, look)
                break
    return tally


def edge_build(mu: float, icc: float, error: float) -> Callable[[np.ndarray], Build]:
    """Every threshold at the edge of its gate's null for identical agents: the worst case
    for false failures (the population mean pass rate and flake, the run error rate, no
    tolerated loss)."""

    def build(rates: np.ndarray) -> Build:
        del rates
        return Build(
            min_pass_rate=(1 - error) * mu,
            tolerance=0.0,
            tag_tolerance=0.0,
            p0_fail_margin=0.0,
            p0_margin=0.2,
            max_error_rate=error,
            max_flake_rate=population_flake(mu, icc, error),
        )

    return build


def population_flake(mu: float, icc: float, error: float) -> float:
    """E over the case population of 2q(1-q), q = (1-error)·p: the flake gate's null edge."""
    variance = icc * mu * (1 - mu)
    q_mean = (1 - error) * mu
    q_square = (1 - error) ** 2 * (variance + mu * mu)
    return 2 * (q_mean - q_square)


TYPICAL = Build(
    min_pass_rate=0.6,
    tolerance=0.05,
    tag_tolerance=0.10,
    p0_fail_margin=0.0,
    p0_margin=0.2,
    max_error_rate=0.05,
    max_flake_rate=0.35,
)


def _row(label: str, tally: Tally) -> str:
    fail, fail_se = tally.share("fail")
    passed, _ = tally.share("pass")
    undetermined, _ = tally.share("undetermined")
    gates = ", ".join(f"{k} {v / tally.runs:.3f}" for k, v in sorted(tally.failed.items()))
    mean_repeats = tally.repeats_run / tally.runs
    return (
        f"  {label}: build fails {fail:.3f} (MC SE {fail_se:.3f}); passes {passed:.3f}; "
        f"undetermined {undetermined:.3f}; mean repeats {mean_repeats:.1f}\n"
        f"    failing gates: {gates or 'none'}"
    )


def false_failures(runs: int, seed: int) -> None:
    print("1. identical agents, 30 cases x 5 repeats, 5 tags, 5 P0 cases, error rate 0.02")
    for mu, icc in ((0.7, 0.3), (0.85, 0.5)):
        edge = edge_build(mu, icc, 0.02)
        for label, stages in (("fixed k=5", None), ("staged 5,10,20", (5, 10, 20))):
            tally = simulate(runs, seed, 30, 5, mu, icc, 0.02, edge, stages=stages)
            print(_row(f"mu {mu} icc {icc}, every gate at its edge, {label}", tally))
        typical = simulate(runs, seed, 30, 5, mu, icc, 0.02, lambda rates: TYPICAL)
        print(_row(f"mu {mu} icc {icc}, typical thresholds, fixed k=5", typical))


def logit_shift(mu: float, icc: float, drop: float, seed: int) -> float:
    """The log-odds shift that lowers the population mean of Beta(mu, icc) rates by `drop`
    (bisection over a large sample, independent of the planning code's quadrature)."""
    rates = np.clip(case_rates(np.random.default_rng(seed), 400_000, mu, icc), 1e-12, 1 - 1e-12)
    log_odds = np.log(rates / (1 - rates))
    low, high = -10.0, 0.0
    for _ in range(60):
        middle = (low + high) / 2
        if np.mean(1 / (1 + np.exp(-(log_odds + middle)))) < mu - drop:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def detection_power(runs: int, seed: int) -> None:
    print("\n2. a 10-point drop at 40 cases x 5 repeats: regression gate fails (no errors)")
    print(
        "   plan: simulated_gate_probability over shifted_case_rates (baseline Beta(mu, icc), the"
    )
    print("   candidate shifted in log-odds), 4000 simulations, and the noncentral-t shortcut;")
    print("   simulated here with that drop and with every case keeping the share 1 - 0.10/mu")
    print("   of its pass rate (a drop the plan does not model)")
    for mu, icc in ((0.7, 0.3), (0.7, 0.6), (0.85, 0.5)):
        shift = logit_shift(mu, icc, 0.10, seed)
        models = {
            "log-odds drop": lambda r, s=shift: 1 / (1 + np.exp(-(np.log(r / (1 - r)) + s))),
            "proportional drop": lambda r, m=mu: r * (1 - 0.10 / m),
        }
        population = shifted_case_rates(mu, icc, mu - 0.10)
        for label, share in (("alone, alpha 0.05", ALPHA), (f"1 of {GATES} gates", ALPHA / GATES)):
            planned = simulated_gate_probability(*population, 40, 5, 0.0, share, seed=seed)
            shortcut = regression_gate_probability(40, 5, mu, mu - 0.10, icc, 0.0, 0.0, share)
            found = [
                _regression_power(runs, seed, mu, icc, model, share) for model in models.values()
            ]
            se = max(math.sqrt(f * (1 - f) / runs) for f in found)
            print(
                f"  mu {mu} icc {icc}, {label}: plan {planned:.3f} (noncentral t {shortcut:.3f});"
                " simulated "
                + ", ".join(
                    f"{name} {f:.3f} ({f - planned:+.3f})"
                    for name, f in zip(models, found, strict=True)
                )
                + f" (MC SE <= {se:.3f})"
            )


def _regression_power(runs: int, seed: int, mu: float, icc: float, candidate, share: float):
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(runs):
        rates = np.clip(case_rates(rng, 40, mu, icc), 1e-12, 1 - 1e-12)
        base = (rng.random((40, 5)) < rates[:, None]).sum(axis=1)
        cand = (rng.random((40, 5)) < candidate(rates)[:, None]).sum(axis=1)
        difference = case_mean_difference(cand.tolist(), [5] * 40, base.tolist(), [5] * 40)
        found += difference.p_value(0.0, "less") <= share
    return found / runs


def p0_drop(runs: int, seed: int) -> None:
    print("\n3. one P0 case drops 5/5 -> 0/5, the other 29 cases unchanged")

    def drop(passes_b: np.ndarray, passes_c: np.ndarray) -> None:
        passes_b[0, :] = True
        passes_c[0, :] = False

    build = replace(TYPICAL, min_pass_rate=0.0, max_flake_rate=1.0)
    tally = simulate(runs, seed, 30, 5, 0.7, 0.3, 0.0, lambda rates: build, fixed=drop)
    print(_row("P0 gate among 5 P0 cases", tally))
    p_value = exact_score_p_value(0, 5, 5, 5, 0.0, "less")
    share = ALPHA / GATES
    print(
        f"  one-sided exact p of 0/5 against 5/5: {p_value:.5f}; Holm's first step at "
        f"{share:.4f}/m fails it for up to m = {int(share // p_value)} P0 cases"
    )


def always_errors(runs: int, seed: int) -> None:
    print("\n4. a candidate whose every run errors, 30 cases x 5 repeats, typical thresholds")
    tally = simulate(runs, seed, 30, 5, 0.7, 0.3, 0.02, lambda rates: TYPICAL, candidate_error=1.0)
    print(_row("always erroring", tally))


def flakiness(runs: int, seed: int) -> None:
    print("\n5. flake gate against k, identical agents (mu 0.7, icc 0.3), threshold 0.30")
    print("   (true mean flake probability 0.294; old rule: share of cases both passing and")
    print("   failing, fail when its Wilson lower bound exceeds the threshold)")
    rng = np.random.default_rng(seed)
    for repeats in (5, 20):
        new_fail = old_fail = old_pass = new_pass = 0
        for _ in range(runs):
            rates = case_rates(rng, 30, 0.7, 0.3)
            passes = (rng.random((30, repeats)) < rates[:, None]).sum(axis=1).tolist()
            outcomes = [(x, repeats) for x in passes]
            _, (low, high) = flake_probability(outcomes, 0.95)
            new_fail += low > 0.30
            new_pass += high <= 0.30
            share = flake_rate(outcomes)
            old_low, _ = wilson_interval(round(share * 30), 30)
            old_fail += old_low > 0.30
            old_pass += share <= 0.30
        print(
            f"  k={repeats}: mean flake probability fails {new_fail / runs:.3f}, passes "
            f"{new_pass / runs:.3f}; old share-of-cases rule fails {old_fail / runs:.3f}, "
            f"passes {old_pass / runs:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="simulated builds per row")
    parser.add_argument("--seed", type=int, default=20240601)
    arguments = parser.parse_args()
    runs, seed = arguments.runs, arguments.seed
    started = time.perf_counter()
    print(f"{runs} simulated builds per row, seed {seed}, build alpha {ALPHA}, {GATES} gates\n")
    false_failures(runs, seed)
    detection_power(runs, seed + 1)
    p0_drop(max(runs // 5, 50), seed + 2)
    always_errors(max(runs // 10, 20), seed + 3)
    flakiness(runs, seed + 4)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
