"""Non-inferiority of one agent against another over a set of cases.

A gate passes only when the data show the loss is within its tolerance, fails only when
they show it beyond, and is undetermined otherwise (the confidence-interval approach to
non-inferiority: CPMP (2000), Points to consider on switching between superiority and
non-inferiority; Wellek, S. (2010), Testing Statistical Hypotheses of Equivalence and
Noninferiority, 2nd ed., ch. 2).

The difference of two agents' mean per-case pass rates over a suite or tag is tested with
the case as the unit: a one-sample t test on the per-case differences (Miller 2024, section
4), whose interval is exactly its inversion, so the interval and the decision cannot
disagree. The agents ran the same cases, so case difficulty cancels in each difference.
The spread of per-case differences estimates its own variance, but with few cases, or
cases whose runs all agree, it can be implausibly small: a tag whose cases all passed every
run for both agents has identical differences and a zero-width t interval. The standard
error is therefore never taken below half the run noise the cases can be expected to show,
sum(p(1-p)/(k-1))/(2·C^2) over both agents, where a case whose k runs all agree counts
q(1-q)/k at Jeffreys' rate q = 0.5/(k+1). The spread contains all of that noise, so it
falls below half of it only by chance (with 30 cases about 1 % of the time) and the floor
seldom binds with real data; and six cases that pass every run for both agents can no
longer show a 10-point tolerance met (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evals.stats.distributions import t_quantile, t_sf

Side = Literal["lower", "upper"]


@dataclass(frozen=True, slots=True)
class CaseMeanDifference:
    """Mean of per-case differences of pass rates, with the t test's standard error."""

    estimate: float
    standard_error: float
    df: int
    cases: int

    def limit(self, level: float, side: Side) -> float:
        """One-sided confidence limit at `level` (e.g. 0.975 for a 95 % two-sided interval)."""
        if not 0 < level < 1:
            raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
        half = t_quantile(level, self.df) * self.standard_error
        bound = self.estimate - half if side == "lower" else self.estimate + half
        return max(-1.0, min(1.0, bound))

    def p_value(self, null: float, alternative: Literal["less", "greater"]) -> float:
        """One-sided t p-value of H0: difference = `null` against `alternative`.

        "less" (a loss beyond -null) is at most a exactly when `limit(1 - a, "upper")`
        is below `null`; "greater" likewise with the lower limit.
        """
        if self.standard_error == 0:
            beyond = self.estimate < null if alternative == "less" else self.estimate > null
            return 0.0 if beyond else 1.0
        statistic = (self.estimate - null) / self.standard_error
        if alternative == "less":
            statistic = -statistic
        return t_sf(statistic, self.df)


def mean_differences(
    first_passes: np.ndarray,
    first_runs: np.ndarray | int,
    second_passes: np.ndarray,
    second_runs: np.ndarray | int,
) -> tuple[np.ndarray, np.ndarray]:
    """(mean difference, standard error) over the last axis (cases), for many suites at once.

    The computation behind `case_mean_difference`, vectorized so power can be simulated
    with exactly the gate's test: arrays of passes and runs broadcast together, cases on
    the last axis.
    """
    first_passes, second_passes = np.asarray(first_passes), np.asarray(second_passes)
    first_runs, second_runs = np.asarray(first_runs), np.asarray(second_runs)
    count = np.broadcast(first_passes, first_runs, second_passes, second_runs).shape[-1]
    differences = first_passes / first_runs - second_passes / second_runs
    mean = differences.mean(axis=-1)
    spread = differences.var(axis=-1, ddof=1) / count
    hidden = _hidden_variance(first_passes, first_runs) + _hidden_variance(
        second_passes, second_runs
    )
    floor = hidden.sum(axis=-1) / count**2
    return mean, np.sqrt(np.maximum(spread, floor))


def _hidden_variance(passes: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Half the run noise a case's rate can be expected to show: p(1-p)/(k-1)/2, the rate
    of a case whose runs all agree taken at Jeffreys' 0.5/(k+1) (and the variance then
    q(1-q)/k, as the rate is not estimated from its runs)."""
    observed = passes / runs
    agree = (passes == 0) | (passes == runs)
    jeffreys = 0.5 / (runs + 1)
    hidden = jeffreys * (1 - jeffreys) / runs
    mixed = observed * (1 - observed) / np.maximum(runs - 1, 1)
    return np.where(agree, hidden, mixed) / 2


def case_mean_difference(
    first_passes: Sequence[int],
    first_runs: Sequence[int],
    second_passes: Sequence[int],
    second_runs: Sequence[int],
) -> CaseMeanDifference:
    """First agent's mean per-case pass rate minus the second's, over shared cases.

    Counts are per case, in the same case order for both agents; every case needs runs
    from both. The standard error is the larger of s_d/sqrt(C) (the spread of per-case
    differences) and the floor of run noise described above; df = C - 1.
    """
    count = len(first_passes)
    if not count == len(first_runs) == len(second_passes) == len(second_runs):
        raise ValueError("need passes and runs of both agents for every case")
    if count < 2:
        raise ValueError("a difference over cases needs at least two cases")
    if min(*first_runs, *second_runs) < 1:
        raise ValueError("every case needs runs from both agents")
    mean, error = mean_differences(
        np.asarray(first_passes, dtype=float),
        np.asarray(first_runs, dtype=float),
        np.asarray(second_passes, dtype=float),
        np.asarray(second_runs, dtype=float),
    )
    return CaseMeanDifference(float(mean), float(error), count - 1, count)
