"""Compare the fixed, staged and adaptive designs of repeats by simulation (seeded).

    python validation/adaptive_design.py [--runs N] [--seed S] [--drops D ...] [--drop-tags T ...]
        [--power | --power-only [--power-rows I ...]] [--adaptive-designs RHO:MAX:REACH[:PASS]]
    python validation/adaptive_design.py --allocation [--settling BUILDS]
    python validation/adaptive_design.py --one-gate

Two agents run C cases: 30 cases in 3 tags of 10, or 100 cases in 5 tags of 20. Each case
has its own true pass rate p_c ~ Beta with mean `mu` and intra-class correlation `icc`
(the beta-binomial model); the candidate's cases in tag t0 (a third or a fifth of the
cases, or the tags named by --drop-tags) move by one log-odds shift so their mean drops by
`drop` (0 for A/A). The gates are
the suite's `regression` (tolerated loss 0.05) and a `regression[tag]` gate on every tag
(tolerated loss 0.10, or `--tag-tolerance`), decided by the product's own code
(`evals.pipeline.evaluation.analyse`):

- fixed k=10: every case 10 repeats, one decision at the whole budget;
- staged 5,10,20 (with --staged): `evals run --until-decided`, looks at 5, 10 and 20
  repeats for every case (`evals.pipeline.staged.look_spends`);
- adaptive: `evals run --adaptive 10`, looks after every 2 repeats up to 10, the finest
  test spending alpha·t^3 with exact group-sequential levels
  (`AdaptiveDesign.spends`), decided gates kept, only the cases of open gates run on,
  gates that cannot be decided by the last look stopped (futility reach 2, the default,
  and 1), through `evals.pipeline.adaptive.AdaptiveDesign` and
  `evals.gates.adaptive.settle`/`advance`;
- union bound, futility 2: the same with each look's budget equal to its increment of
  alpha·t^3 (no use of the correlation between looks), the earlier design.

--power adds the rows of POWER_ROWS, where fixed k = 10 has real power (about 0.5 to
0.8): every tag dropping, or one tag of 20 cases dropping 25 points; --adaptive-designs
adds adaptive designs by their spending rho, last look MAX and futility reach of the fail
and the pass side. --one-gate prints the power and mean calls of such designs for one
gate on the canonical Brownian motion (no gate is run): what looks can save at equal power.

The per-case verdict table, which none of these gates reads, is left out for speed. Each
build draws its runs once and every design reads a prefix of them, so the designs are
compared on the same data; "fixed verdict" is the share of builds where a design reached
the fixed design's verdict. Agent calls count both agents' runs. Each row names what its
verdicts are: a failure is "power" when some gate's true loss exceeds its tolerance and a
"false failure" otherwise; a pass is a "false pass" when some gate's true loss reaches its
tolerance (a drop of exactly the tolerance is the null boundary, where both are wrong).

--allocation prints, from the beta-binomial model alone (no gate is run), how far per-case
allocation of repeats can go at the variance of fixed k = 10 for the gates' estimand (the
mean over cases of the per-case difference): the bound of the oracle Neyman allocation,
the unbiased fixed-weight design that settles cases whose first runs all agree, and the
bias of the two naive estimators after settling, and the fewest calls of an ideal futility
rule that keeps 95 % of a gate's passes (docs/statistics.md). --settling N adds
N simulated 30-case suites per row, each judged once at the null boundary (the candidate
exactly at the tolerated loss 0.10) by the gates' t test at fixed k = 10, by the same test
after settling the cases whose first 2 repeats all agree, and by a test that weights cases
by their repeats (cluster-robust), for a log-odds drop and for a drop on the most
reliable third of the cases: the false failures and false passes of each.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from beta_binomial import case_rates, outcome_records, simulated_suite, tagged_cases

from evals.analysis import comparison
from evals.gates.adaptive import AdaptiveState, advance, settle
from evals.gates.catalog import planned_test_split
from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Case, Suite
from evals.model.summary import GateReport
from evals.pipeline.adaptive import AdaptiveDesign
from evals.pipeline.evaluation import analyse
from evals.pipeline.staged import look_spends
from evals.stats import mean_differences, sequential_levels, spending_shares, t_quantile
from evals.stats.distributions import normal_quantile

# No gate here reads the per-case verdict table (each case's exact test and interval,
# most of a summary's time), so it is left out: every case's p-value is "not tested".
comparison.case_p_value = lambda candidate, baseline, pair: None  # type: ignore[assignment]

MAX_REPEATS = 20
SUITE_TOLERANCE = 0.05


def tag_count(cases: int) -> int:
    """Tags of 10 cases at 30 cases, of 20 cases at 100."""
    return 3 if cases < 60 else 5


def gate_config(tags: int, tolerance: float) -> GateConfig:
    """The suite's regression gate (tolerated loss 0.05) and one per tag (`tolerance`)."""
    return GateConfig(
        baseline="base",
        candidate="cand",
        max_regression=SUITE_TOLERANCE,
        max_error_rate=None,
        block_p0_regressions=False,
        per_tag={f"t{i}": {"max_regression": tolerance} for i in range(tags)},
    )


@dataclass
class Tally:
    """Verdicts, agreement with the fixed design and agent calls over simulated builds."""

    builds: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    agreed: int = 0

    def add(self, verdict: str, calls: int, fixed_verdict: str) -> None:
        self.builds += 1
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1
        self.calls += calls
        self.agreed += verdict == fixed_verdict

    def share(self, verdict: str) -> float:
        return self.verdicts.get(verdict, 0) / self.builds

    @property
    def mean_calls(self) -> float:
        return self.calls / self.builds


def shifted(rates: np.ndarray, drop: float) -> np.ndarray:
    """`rates` moved by one log-odds shift so that their mean falls by `drop`."""
    if drop == 0:
        return rates
    logits = np.log(np.clip(rates, 1e-9, 1 - 1e-9) / np.clip(1 - rates, 1e-9, 1))
    target = max(rates.mean() - drop, 1e-6)
    low, high = -30.0, 0.0
    for _ in range(60):
        middle = (low + high) / 2
        if (1 / (1 + np.exp(-(logits + middle)))).mean() > target:
            high = middle
        else:
            low = middle
    return 1 / (1 + np.exp(-(logits + (low + high) / 2)))


@dataclass
class Build:
    """One simulated build: both agents' outcomes for up to MAX_REPEATS repeats."""

    records: list[RunRecord]

    def upto(self, repeats: dict[str, int]) -> list[RunRecord]:
        """The records of the first repeats[case] repeats of each case."""
        return [r for r in self.records if r.key.repeat < repeats[r.key.case_id]]


def draw_build(
    rng: np.random.Generator,
    cases: Sequence[Case],
    mu: float,
    icc: float,
    drop: float,
    regressed_tags: Sequence[str],
) -> Build:
    rates = case_rates(rng, len(cases), mu, icc)
    regressed = np.array([bool(set(c.tags) & set(regressed_tags)) for c in cases])
    candidate = rates.copy()
    candidate[regressed] = shifted(rates[regressed], drop)
    base = rng.random((len(cases), MAX_REPEATS)) < rates[:, None]
    cand = rng.random((len(cases), MAX_REPEATS)) < candidate[:, None]
    return Build([*outcome_records("base", base), *outcome_records("cand", cand)])


def _decide(suite: Suite, records: list[RunRecord], spend: float) -> GateReport:
    return analyse(suite, records, suite.gates, None, spend=spend)[1]


def fixed(suite: Suite, build: Build, repeats: int = 10) -> tuple[str, int]:
    records = build.upto(dict.fromkeys((c.id for c in suite.cases), repeats))
    return _decide(suite, records, 1 - suite.gates.confidence).verdict, len(records)


def staged(suite: Suite, build: Build, stages: tuple[int, ...] = (5, 10, 20)) -> tuple[str, int]:
    for repeats, spend in zip(stages, look_spends(suite.gates.confidence, stages), strict=True):
        records = build.upto(dict.fromkeys((c.id for c in suite.cases), repeats))
        verdict = _decide(suite, records, spend).verdict
        if verdict != "undetermined":
            break
    return verdict, len(records)


def union_spends(design: AdaptiveDesign, confidence: float) -> list[float]:
    """The earlier budgets: increments of alpha·t^rho, split across looks by the union bound."""
    fractions = [k / design.last for k in design.looks()]
    return spending_shares(fractions, 1 - confidence, design.rho)


def adaptive(
    suite: Suite, build: Build, design: AdaptiveDesign, exact: bool = True
) -> tuple[str, int]:
    """The adaptive run of `evals.pipeline.adaptive.run_adaptive` on simulated data, with
    the exact group-sequential budgets or (exact=False) the union-bound ones."""
    state = AdaptiveState(active=frozenset(c.id for c in suite.cases))
    done = dict.fromkeys((c.id for c in suite.cases), 0)
    verdict = "undetermined"
    records: list[RunRecord] = []
    confidence = suite.gates.confidence
    split = planned_test_split(suite, None)
    spends = design.spends(confidence, split) if exact else union_spends(design, confidence)
    for look, (repeats, spend) in enumerate(zip(design.looks(), spends, strict=True), start=1):
        done.update(dict.fromkeys(state.active, repeats))
        records = build.upto(done)
        futility = design.futility_at(look, spends)
        futile = futility.judge if futility is not None else None
        report = settle(
            _decide(suite, records, spend), state.frozen(), look, repeats, len(records), futile
        )
        state = advance(state, report, suite.cases, look, futile)
        verdict = report.verdict
        if verdict != "undetermined" or not state.active:
            break
    return verdict, len(records)


def scenario(
    runs: int,
    seed: int,
    cases: int,
    mu: float,
    icc: float,
    drop: float,
    designs: dict[str, Callable[[Suite, Build], tuple[str, int]]],
    tolerance: float,
    regressed_tags: Sequence[str],
) -> dict[str, Tally]:
    """Every design on the same `runs` simulated builds; the first design is the reference
    whose verdict the others are compared with."""
    rng = np.random.default_rng(seed)
    suite = simulated_suite(tagged_cases(cases, tag_count(cases)))
    suite.gates = gate_config(tag_count(cases), tolerance)
    tallies = {name: Tally() for name in designs}
    for _ in range(runs):
        build = draw_build(rng, suite.cases, mu, icc, drop, regressed_tags)
        outcomes = {name: design(suite, build) for name, design in designs.items()}
        reference = next(iter(outcomes.values()))[0]
        for name, (verdict, calls) in outcomes.items():
            tallies[name].add(verdict, calls, reference)
    return tallies


def verdict_names(
    cases: int, drop: float, regressed_tags: Sequence[str], tolerance: float
) -> tuple[str, str]:
    """What a failure and a pass are in a row: a failure is power when some gate's true
    loss exceeds its tolerance, a pass is false when some gate's true loss reaches it."""
    tags = tag_count(cases)
    hit = len(set(regressed_tags) & {f"t{i}" for i in range(tags)})
    losses = [(drop * hit / tags, SUITE_TOLERANCE), (drop if hit else 0.0, tolerance)]
    beyond = any(loss > limit + 1e-12 for loss, limit in losses)
    reached = any(loss >= limit - 1e-12 for loss, limit in losses)
    return ("power" if beyond else "false failure"), ("false pass" if reached else "passes")


def allocation(
    rng: np.random.Generator, mu: float, icc: float, drop: float, draws: int = 400_000
) -> list[str]:
    """How far per-case allocation of repeats can go at the variance of fixed k = 10.

    The gates estimate the mean over cases of p_cand - p_base; with n_i repeats of case i
    its run noise is sum(s_i^2/n_i)/C^2, s_i^2 = p_b(1-p_b) + p_c(1-p_c). Fixed k = 10
    gives sum(s_i^2)/(10·C^2). The oracle Neyman allocation (n_i proportional to s_i,
    rates known) reaches that variance with mean(s)^2/mean(s^2) of the calls: a bound no
    allocation learnt from the runs can beat. A design that settles a case whose first n0
    repeats of both agents all agree and keeps its estimate unbiased must weight the two
    stages by fixed weights n0/10 and 1 - n0/10 (Cui, Hung and Wang 1999, per case) and
    still run m_s >= 1 more repeats; the other cases get the m_u repeats that restore
    the variance of fixed k = 10. Stopping instead (the settled case's difference 0, the
    others' plain means) biases the case-mean estimate toward 0 by a factor
    1 - P(settle)·(1 - n0/10), and weighting cases by their repeats moves the estimand to
    sum(Delta_i·E n_i)/sum(E n_i).
    """
    last = 10
    base = case_rates(rng, draws, mu, icc)
    cand = shifted(base, drop)
    noise = base * (1 - base) + cand * (1 - cand)
    difference = cand - base
    lines = [
        f"  oracle Neyman allocation: {np.sqrt(noise).mean() ** 2 / noise.mean():.2f} of the "
        "calls of fixed k=10 at its variance"
    ]
    for first in (2, 4):
        settle = (base * cand) ** first + ((1 - base) * (1 - cand)) ** first
        early, late = first / last, 1 - first / last
        for settled_runs in (1, 2):
            rest = noise.mean() / last - early**2 / first * noise.mean()
            rest -= late**2 / settled_runs * (noise * settle).mean()
            if rest <= 0:
                lines.append(
                    f"  settle after {first}, {settled_runs} more run(s), fixed weights: "
                    "cannot reach the variance of fixed k=10"
                )
                continue
            open_runs = late**2 * (noise * (1 - settle)).mean() / rest
            calls = first + settle.mean() * settled_runs + (1 - settle.mean()) * open_runs
            lines.append(
                f"  settle after {first}, {settled_runs} more run(s), fixed weights: "
                f"{settle.mean():.0%} of cases settle, the others need {open_runs:.1f} more "
                f"repeats; {calls / last:.2f} of the calls"
            )
        if drop:
            expected_runs = first * settle + last * (1 - settle)
            shrunk = (difference * (1 - settle * late)).mean()
            weighted = (difference * expected_runs).sum() / expected_runs.sum()
            lines.append(
                f"  stop after {first} when all agree: case-mean estimate {shrunk:+.3f}, "
                f"repeat-weighted {weighted:+.3f}, for a true {difference.mean():+.3f}"
            )
    return lines


def futility_bound(
    rng: np.random.Generator, passes: float, keep: float, paths: int = 200_000
) -> tuple[float, float]:
    """The fewest calls (share of the fixed design's) of a futility rule that keeps `keep`
    of a gate's passes, and the share it kept, when the fixed design passes `passes`.

    The gate's statistic follows the canonical Brownian motion at the looks 2, 4, ..., 10
    of 10 (Jennison and Turnbull 2000, §3.1), with the drift that makes the fixed design
    pass with probability `passes` at a one-sided 0.5 % (z = 2.576); the rule stops at the
    first look whose z statistic lies below g0 + g1·t, and (g0, g1) are searched on a
    grid knowing the drift: a bound no rule that must estimate it can beat on this family.
    """
    fractions = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    critical = 2.576
    drift = critical + float(np.quantile(rng.standard_normal(paths), passes))
    steps = rng.standard_normal((paths, 5)) * np.sqrt(np.diff(np.r_[0.0, fractions]))
    z = (np.cumsum(steps, axis=1) + drift * fractions) / np.sqrt(fractions)
    passed = z[:, -1] > critical
    best = (1.0, 1.0)
    for start in np.linspace(-3, 3, 13):
        for slope in np.linspace(-3, 3, 13):
            below = z[:, :4] < start + slope * fractions[:4]
            stopped = below.any(axis=1)
            first = np.argmax(below, axis=1)
            kept = float((passed & ~stopped).sum() / passed.sum())
            calls = float(np.where(stopped, fractions[first], 1.0).mean())
            if kept >= keep and calls < best[0]:
                best = (calls, kept)
    return best


def one_gate_designs(
    rng: np.random.Generator, fixed_power: float, level: float = 0.00625, paths: int = 100_000
) -> list[str]:
    """Power and mean calls (share of fixed k = 10) of adaptive designs for one gate's
    fail side, on the canonical Brownian motion (Jennison and Turnbull 2000, §3.1).

    The drift makes fixed k = 10 fail with probability `fixed_power` at the one-sided
    `level` (a finest test's share of a 0.05 build budget); a design looks every 2
    repeats up to MAX at the exact levels of alpha·t^rho (`sequential_levels`) and stops
    for futility as the product does (`evals.stats.futile`): when the last look's fail
    limit lies more than `reach` predictive standard deviations, SE·sqrt(1 - t), beyond
    the estimate. No other gate and no pass side: the bound of what looks, spending and
    futility can save on one gate at equal power.
    """
    critical = normal_quantile(1 - level)
    drift = (critical + normal_quantile(fixed_power)) / math.sqrt(10) if fixed_power else 0.0
    lines = []
    for rho in (1.0, 2.0, 3.0):
        for last in (10, 12, 14):
            looks = np.arange(2, last + 1, 2)
            fractions = looks / last
            levels = sequential_levels(
                list(fractions), spending_shares(list(fractions), level, rho)
            )
            bounds = np.array([normal_quantile(1 - x) for x in levels])
            steps = np.diff(np.r_[0, looks])
            sums = np.cumsum(
                rng.standard_normal((paths, len(looks))) * np.sqrt(steps) + drift * steps, axis=1
            )
            z = sums / np.sqrt(looks)
            cells = []
            for reach in (None, 2.0, 1.0):
                alive = np.ones(paths, dtype=bool)
                failed = np.zeros(paths, dtype=bool)
                used = np.zeros(paths)
                for look, (repeats, t) in enumerate(zip(looks, fractions, strict=True)):
                    used[alive] = repeats
                    crossed = alive & (z[:, look] > bounds[look])
                    failed |= crossed
                    alive &= ~crossed
                    if reach is not None and look < len(looks) - 1:
                        alive &= ~(
                            bounds[-1] - z[:, look] / math.sqrt(t) > reach * math.sqrt((1 - t) / t)
                        )
                cells.append(
                    f"reach {reach if reach is not None else 'none'}: power "
                    f"{failed.mean():.3f}, calls {used.mean() / 10:.2f}"
                )
            lines.append(f"  rho {rho:g}, max {last}: " + "; ".join(cells))
    return lines


def shifted_rows(rates: np.ndarray, drop: float) -> np.ndarray:
    """Each row of `rates` moved by its own log-odds shift so its mean falls by `drop`."""
    logits = np.log(np.clip(rates, 1e-9, 1 - 1e-9) / np.clip(1 - rates, 1e-9, 1))
    target = np.maximum(rates.mean(axis=1) - drop, 1e-6)[:, None]
    low, high = np.full_like(target, -30.0), np.zeros_like(target)
    for _ in range(60):
        middle = (low + high) / 2
        above = (1 / (1 + np.exp(-(logits + middle)))).mean(axis=1, keepdims=True) > target
        high, low = np.where(above, middle, high), np.where(above, low, middle)
    return 1 / (1 + np.exp(-(logits + (low + high) / 2)))


def reliable_drop(rates: np.ndarray, drop: float) -> np.ndarray:
    """The most reliable third of each row's cases lose 3·`drop` (the row's mean `drop`)."""
    lowered = rates.copy()
    third = rates.shape[1] // 3
    top = np.argsort(-rates, axis=1)[:, :third]
    rows = np.arange(rates.shape[0])[:, None]
    lowered[rows, top] = rates[rows, top] - drop * rates.shape[1] / third
    return np.clip(lowered, 0.0, 1.0)


def settling(
    rng: np.random.Generator, builds: int, mu: float, icc: float, cases: int = 30
) -> list[str]:
    """False failures and false passes at the null boundary after settling agreeing cases.

    Each suite is judged once, one-sided at 1.25 % on each side (the finest test's share
    of a 0.05 build budget over two gates and the pass side), tolerated loss 0.10, the
    candidate's mean exactly 0.10 below the baseline's. A case settles when its first 2
    repeats of both agents all agree; the others run 10.
    """
    tolerance, level, first, last = 0.10, 0.0125, 2, 10
    critical = t_quantile(1 - level, cases - 1)
    lines = []
    for label, move in (
        ("log-odds drop", shifted_rows),
        ("drop on the reliable third", reliable_drop),
    ):
        base = case_rates(rng, builds * cases, mu, icc).reshape(builds, cases)
        cand = move(base, tolerance)
        base_runs = rng.random((builds, cases, last)) < base[..., None]
        cand_runs = rng.random((builds, cases, last)) < cand[..., None]
        agree = base_runs[..., :first].all(-1) & cand_runs[..., :first].all(-1)
        agree |= ~(base_runs[..., :first].any(-1) | cand_runs[..., :first].any(-1))
        repeats = np.where(agree, first, last)
        counted = np.arange(last) < repeats[..., None]
        cand_passes = (cand_runs & counted).sum(-1)
        base_passes = (base_runs & counted).sum(-1)
        fixed_estimate, fixed_error = mean_differences(
            cand_runs.sum(-1), last, base_runs.sum(-1), last
        )
        plain_estimate, plain_error = mean_differences(cand_passes, repeats, base_passes, repeats)
        differences = (cand_passes - base_passes) / repeats
        weighted = (repeats * differences).sum(-1) / repeats.sum(-1)
        spread = (repeats**2 * (differences - weighted[:, None]) ** 2).sum(-1)
        weighted_error = np.sqrt(spread * cases / (cases - 1)) / repeats.sum(-1)
        calls = repeats.mean() / last
        lines.append(f"  {label}, true difference {float((cand - base).mean()):+.3f}:")
        for name, estimate, error, share in (
            ("fixed k=10, case mean", fixed_estimate, fixed_error, 1.0),
            ("settled, case mean", plain_estimate, plain_error, calls),
            ("settled, repeat-weighted", weighted, weighted_error, calls),
        ):
            fails = np.mean(estimate + critical * error < -tolerance)
            passes = np.mean(estimate - critical * error >= -tolerance)
            fail_se, pass_se = (np.sqrt(x * (1 - x) / builds) for x in (fails, passes))
            lines.append(
                f"    {name:<26} false failure {fails:.4f} ({fail_se:.4f}), "
                f"false pass {passes:.4f} ({pass_se:.4f}), calls {share:.2f}"
            )
    return lines


SCENARIOS = ((30, 0.7, 0.3), (30, 0.85, 0.5), (100, 0.7, 0.3))
# Rows where the fixed design has real power (about 0.5 to 0.9): (cases, mu, icc, drop,
# the tags that drop). Every tag dropping puts the suite's `regression` gate beyond its
# tolerance; one tag of 20 cases dropping 25 points, that tag's gate.
POWER_ROWS = (
    (30, 0.7, 0.3, 0.15, ("t0", "t1", "t2")),
    (30, 0.85, 0.5, 0.12, ("t0", "t1", "t2")),
    (100, 0.7, 0.3, 0.10, ("t0", "t1", "t2", "t3", "t4")),
    (100, 0.7, 0.3, 0.25, ("t0",)),
)


def parse_design(spec: str) -> AdaptiveDesign:
    """`RHO:MAX:REACH[:PASS_REACH]` (REACH `none` for no futility) as an adaptive design
    looking every 2 repeats."""
    rho, last, reach, *rest = spec.split(":")
    futility = None if reach == "none" else float(reach)
    return AdaptiveDesign(
        last=int(last),
        first=2,
        every=2,
        rho=float(rho),
        futility=futility,
        pass_futility=float(rest[0]) if rest else None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="simulated builds per row")
    parser.add_argument(
        "--aa-runs", type=int, default=None, help="simulated builds per A/A row (default --runs)"
    )
    parser.add_argument("--staged", action="store_true", help="also the staged 5,10,20 design")
    parser.add_argument(
        "--scenarios",
        type=int,
        nargs="+",
        default=list(range(len(SCENARIOS))),
        help="which of the (cases, mu, icc) scenarios to run, by position",
    )
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--drops", type=float, nargs="+", default=[0.0, 0.05, 0.10, 0.20])
    parser.add_argument(
        "--drop-tags",
        nargs="+",
        default=["t0"],
        help="the tags whose cases drop (t0 t1 t2 for every case at 30 cases)",
    )
    parser.add_argument(
        "--one-gate",
        action="store_true",
        help="print the power and calls of adaptive designs for one gate on the canonical "
        "Brownian motion, and run no gate",
    )
    parser.add_argument(
        "--power", action="store_true", help="also the rows where fixed k=10 has real power"
    )
    parser.add_argument(
        "--power-only", action="store_true", help="only the rows where fixed k=10 has power"
    )
    parser.add_argument(
        "--power-rows", type=int, nargs="+", default=None, help="which power rows, by position"
    )
    parser.add_argument(
        "--adaptive-designs",
        nargs="+",
        default=[],
        metavar="RHO:MAX:REACH[:PASS_REACH]",
        help="further adaptive designs looking every 2 repeats, e.g. 2:14:1 or 1:12:2:0.5 "
        "(reach none: no futility; the pass side's reach defaults to REACH)",
    )
    parser.add_argument("--tag-tolerance", type=float, default=0.10, help="per-tag gates")
    parser.add_argument(
        "--designs",
        nargs="+",
        default=None,
        help="which designs to run besides fixed k=10, by name (default all)",
    )
    parser.add_argument(
        "--allocation",
        action="store_true",
        help="print how far per-case allocation of repeats can go, and run no gate",
    )
    parser.add_argument(
        "--settling",
        type=int,
        default=0,
        metavar="BUILDS",
        help="with --allocation, also judge BUILDS suites per row at the null boundary after "
        "settling cases whose first runs all agree",
    )
    arguments = parser.parse_args()
    if arguments.one_gate:
        print(
            f"one gate's fail side on the canonical Brownian motion, seed {arguments.seed}, "
            "100000 paths, one-sided level 0.00625, looks every 2 repeats"
        )
        for power in (0.0, 0.5, 0.8, 0.9):
            label = "at its null boundary" if power == 0 else f"fixed k=10 power {power:g}"
            print(f"\n{label}:")
            print("\n".join(one_gate_designs(np.random.default_rng(arguments.seed), power)))
        return
    if arguments.allocation:
        print(f"per-case allocation against fixed k=10, seed {arguments.seed}, 400000 cases")
        for number, (_, mu, icc) in enumerate(SCENARIOS[:2]):
            for drop in (0.0, 0.10):
                rng = np.random.default_rng(arguments.seed + 100 * number + int(100 * drop))
                print(f"\nmu {mu}, icc {icc}, drop {drop:.2f}:")
                print("\n".join(allocation(rng, mu, icc, drop)))
        print(
            "\nideal futility on one gate (Brownian motion at looks 2..10 of 10, boundary "
            "linear in t, tuned knowing the drift), keeping 95 % of the fixed design's passes:"
        )
        for passes in (0.066, 0.15, 0.34):
            calls, kept = futility_bound(np.random.default_rng(arguments.seed), passes, 0.95)
            print(
                f"  fixed design passes {passes:.3f}: {calls:.2f} of the calls "
                f"({kept:.1%} of passes kept)"
            )
        if arguments.settling:
            print(
                f"\nsettling after 2 repeats at the null boundary, {arguments.settling} suites "
                "of 30 cases per row, one-sided 1.25 % per side, tolerated loss 0.10 (MC SE):"
            )
            for number, (_, mu, icc) in enumerate(SCENARIOS[:2]):
                rng = np.random.default_rng(arguments.seed + 7 + number)
                print(f"mu {mu}, icc {icc}:")
                print("\n".join(settling(rng, arguments.settling, mu, icc)))
        return
    strict = AdaptiveDesign(last=10, first=2, every=2, futility=2.0)
    eager = AdaptiveDesign(last=10, first=2, every=2, futility=1.0)
    candidates: dict[str, Callable[[Suite, Build], tuple[str, int]]] = {
        **({"staged 5,10,20": staged} if arguments.staged else {}),
        "union bound, futility 2": lambda s, b: adaptive(s, b, strict, exact=False),
        "adaptive, futility 2": lambda s, b: adaptive(s, b, strict),
        "adaptive, futility 1": lambda s, b: adaptive(s, b, eager),
    }
    extra: list[str] = []
    for spec in arguments.adaptive_designs:
        design = parse_design(spec)
        name = f"rho {design.rho:g}, max {design.last}, reach {design.futility}"
        if design.pass_futility is not None:
            name += f"/{design.pass_futility:g}"
        candidates[name] = lambda s, b, d=design: adaptive(s, b, d)
        extra.append(name)
    chosen = [*(arguments.designs or list(candidates)), *extra]
    unknown = set(chosen) - set(candidates)
    if unknown:
        parser.error(f"unknown design(s) {sorted(unknown)}; choose from {sorted(candidates)}")
    designs: dict[str, Callable[[Suite, Build], tuple[str, int]]] = {
        "fixed k=10": fixed,
        **{name: candidates[name] for name in chosen},
    }
    started = time.perf_counter()
    aa_runs = arguments.aa_runs or arguments.runs
    rows: list[tuple[int, int, float, float, float, tuple[str, ...]]] = []
    if not arguments.power_only:
        for number, (cases, mu, icc) in enumerate(SCENARIOS):
            if number in arguments.scenarios:
                rows.extend(
                    (
                        arguments.seed + 100 * number + int(100 * drop),
                        cases,
                        mu,
                        icc,
                        drop,
                        tuple(arguments.drop_tags),
                    )
                    for drop in arguments.drops
                )
    if arguments.power or arguments.power_only:
        rows.extend(
            (arguments.seed + 1000 + 100 * number, *row)
            for number, row in enumerate(POWER_ROWS)
            if arguments.power_rows is None or number in arguments.power_rows
        )
    print(
        f"{arguments.runs} simulated builds per row ({aa_runs} per A/A row), "
        f"seed {arguments.seed}, build alpha 0.05; "
        f"gates: regression (tolerance {SUITE_TOLERANCE:g}) and regression[tag] on every tag "
        f"(tolerance {arguments.tag_tolerance:g}); 3 tags at 30 cases, 5 at 100; adaptive "
        "designs look every 2 repeats"
    )
    savings: dict[str, list[float]] = {name: [] for name in designs}
    for row_seed, cases, mu, icc, drop, regressed in rows:
        runs = aa_runs if drop == 0 else arguments.runs
        tallies = scenario(
            runs, row_seed, cases, mu, icc, drop, designs, arguments.tag_tolerance, regressed
        )
        dropped = ", ".join(regressed)
        label = "A/A" if drop == 0 else f"drop {drop:.2f} on {dropped}"
        failure, passing = verdict_names(cases, drop, regressed, arguments.tag_tolerance)
        print(f"\n{cases} cases, mu {mu}, icc {icc}, {label}:")
        reference = tallies["fixed k=10"].mean_calls
        for name, tally in tallies.items():
            fail, passed = tally.share("fail"), tally.share("pass")
            fail_se = math.sqrt(fail * (1 - fail) / tally.builds)
            pass_se = math.sqrt(passed * (1 - passed) / tally.builds)
            saving = 1 - tally.mean_calls / reference
            savings[name].append(saving)
            print(
                f"  {name:<26} {failure} {fail:.3f} (MC SE {fail_se:.3f}), {passing} "
                f"{passed:.3f} ({pass_se:.3f}), fixed verdict "
                f"{tally.agreed / tally.builds:.2f}; agent calls {tally.mean_calls:6.0f} "
                f"({-saving:+.0%})",
                flush=True,
            )
    print("\nmean agent calls against fixed k=10 over the rows:")
    for name, values in savings.items():
        mean, low, high = -float(np.mean(values)), -max(values), -min(values)
        print(f"  {name:<26} {mean:+.0%} (rows {low:+.0%} to {high:+.0%})")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
