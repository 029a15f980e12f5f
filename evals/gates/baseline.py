"""Reusing a stored baseline honestly: the drift guard, the reserve, and the candidate's
repeats allocated from the baseline's history.

When the baseline agent's fingerprint is unchanged since a stored evaluation, its stored
runs answer for it and no agent is called, except for a random share re-run fresh: the
**drift guard**. The world the agent runs in (tools, APIs, models behind the same name)
may have moved since, so the guard compares the fresh runs with the stored runs of the
same cases (the stratified score test with Cochran-Mantel-Haenszel weights, two-sided at
`DRIFT_LEVEL`: under no drift both come from the same rates, whatever they are) and,
when they differ, the baseline is run fresh instead. A drift the guard misses biases the
comparison by its size, so while stored runs stand in for the baseline the gates spend
only `1 - DRIFT_RESERVE` of the false-failure budget and keep the rest in reserve
against it (docs/statistics.md measures the false failures with and without drift).

The guard takes `GUARD_SHARE` of the stored runs it stands in for: at least one run of
every case (a case that broke since shows at once), the rest in proportion to each case's
standard deviation in the stored runs (where drift both shows and biases the comparison
most). Which repeats re-run is drawn from a seed, so a resumed run repeats its choice.

The candidate's repeats can then follow the baseline's history (`allocation`): cases
whose stored runs all agree carry little run noise and need few runs, flaky ones more,
in proportion to their standard deviation (Neyman 1934), with at least `MIN_REPEATS`
for every case so that a broken case still shows.

Pure: counts in, choices out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evals import stats
from evals.gates import p0 as p0_gate
from evals.model.gates import GateConfig
from evals.model.suite import Case

GUARD_SHARE = 0.2
DRIFT_LEVEL = 0.2
DRIFT_RESERVE = 0.5
MIN_REPEATS = 2

Counts = Mapping[str, tuple[int, int]]
"""Per case id: (passes, counted runs)."""


def fresh_in_full(config: GateConfig, cases: Sequence[Case]) -> frozenset[str]:
    """The cases whose baseline runs all run fresh while stored runs answer for the
    baseline: the P0 cases when the P0 gate is on, so that gate never compares a stored
    run and keeps its whole share (a drift the guard missed cannot bias what it never
    reads). `fresh_gates` names the gates that then compare fresh runs only."""
    if not config.block_p0_regressions:
        return frozenset()
    return p0_gate.GATE.reads(p0_gate.GATE.name, cases)


def fresh_gates(fresh_cases: frozenset[str] | Sequence[str]) -> tuple[str, ...]:
    """The gates that compare fresh runs only when `fresh_cases` (of `fresh_in_full`, as
    far as a comparison plans them) run fresh in full: none when there are none."""
    return (p0_gate.GATE.name,) if fresh_cases else ()


def _spread(passes: int, runs: int) -> float:
    """A case's standard deviation at Jeffreys' rate (x + 1/2)/(n + 1): never 0, so a
    case whose runs all agreed still gets its share."""
    rate = (passes + 0.5) / (runs + 1)
    return math.sqrt(rate * (1 - rate))


def guard_repeats(
    stored: Counts, share: float = GUARD_SHARE, seed: int = 0
) -> dict[str, list[int]]:
    """Which stored repeats of each case the drift guard re-runs fresh: `share` of the
    stored runs (rounded; as many as the cases hold), at least one per case, the rest by
    the cases' standard deviations, the repeats drawn at random (seeded) among each
    case's stored ones."""
    if not stored:
        return {}
    total = max(round(share * sum(runs for _, runs in stored.values())), len(stored))
    spreads = {case: _spread(*counts) for case, counts in stored.items()}
    weight = sum(spreads.values())
    extra = total - len(stored)
    shares = {case: extra * spreads[case] / weight for case in stored}
    wanted = {case: min(runs, 1 + math.floor(shares[case])) for case, (_, runs) in stored.items()}
    # the runs that rounding and full cases left over go to the largest remainders first
    # (Hamilton's method), a round at a time, to cases with stored runs still to re-run
    order = sorted(stored, key=lambda c: (math.floor(shares[c]) - shares[c], c))
    left = min(total, sum(runs for _, runs in stored.values())) - sum(wanted.values())
    while left > 0:
        for case in order:
            if left > 0 and wanted[case] < stored[case][1]:
                wanted[case] += 1
                left -= 1
    chooser = random.Random(seed)
    return {
        case: sorted(chooser.sample(range(stored[case][1]), count))
        for case, count in sorted(wanted.items())
    }


@dataclass(frozen=True, slots=True)
class Drift:
    """The drift guard's verdict: the fresh and stored runs of the guarded cases, the mean
    of their per-case rates, the two-sided p-value of no drift and whether it is drift."""

    fresh_runs: int
    stored_runs: int
    fresh_rate: float
    stored_rate: float
    p_value: float
    level: float

    @property
    def drifted(self) -> bool:
        """True when fresh and stored runs differ at the guard's level."""
        return self.p_value < self.level

    def describe(self) -> str:
        """The guard's result in one sentence."""
        verdict = "drift shown" if self.drifted else "no drift shown"
        return (
            f"{self.fresh_runs} run(s) re-run fresh pass {100 * self.fresh_rate:.1f} % against "
            f"{100 * self.stored_rate:.1f} % for the {self.stored_runs} stored run(s) of the "
            f"same cases: {verdict} (p = {self.p_value:.3g}, two-sided level {self.level:g})"
        )


def drift(fresh: Counts, stored: Counts, level: float = DRIFT_LEVEL) -> Drift:
    """Whether the fresh runs of the guarded cases differ from their stored runs.

    The stratified score test of fresh minus stored over the cases both have, weighted by
    n_fresh·n_stored/(n_fresh + n_stored) (Cochran-Mantel-Haenszel's weights, the most
    powerful against one log-odds shift of every case), two-sided.
    """
    cases = sorted(c for c in fresh if c in stored and fresh[c][1] and stored[c][1])
    if not cases:
        return Drift(0, 0, 0.0, 0.0, 1.0, level)
    fresh_counts = [fresh[c] for c in cases]
    stored_counts = [stored[c] for c in cases]
    weights = [
        f[1] * s[1] / (f[1] + s[1]) for f, s in zip(fresh_counts, stored_counts, strict=True)
    ]
    test = stats.stratified_difference(
        [f[0] for f in fresh_counts],
        [f[1] for f in fresh_counts],
        [s[0] for s in stored_counts],
        [s[1] for s in stored_counts],
        weights,
    )
    p = min(1.0, 2 * min(test.p_value(0.0, "less"), test.p_value(0.0, "greater")))
    return Drift(
        fresh_runs=sum(f[1] for f in fresh_counts),
        stored_runs=sum(s[1] for s in stored_counts),
        fresh_rate=sum(f[0] / f[1] for f in fresh_counts) / len(cases),
        stored_rate=sum(s[0] / s[1] for s in stored_counts) / len(cases),
        p_value=p,
        level=level,
    )


def allocation(
    history: Counts, mean_repeats: float, minimum: int = MIN_REPEATS, maximum: int | None = None
) -> dict[str, int]:
    """The candidate's repeats per case for an average of `mean_repeats`, from the
    baseline's per-case history: in proportion to each case's standard deviation (Neyman's
    allocation), at least `minimum` and at most `maximum` per case (the cases held at
    `maximum` give their share to the others, as water fills)."""
    if not history:
        return {}
    spreads = {case: _spread(*counts) for case, counts in history.items()}
    budget = mean_repeats * len(history)
    capped: dict[str, int] = {}
    while True:
        free = {case: s for case, s in spreads.items() if case not in capped}
        if not free:
            return capped
        left = budget - sum(capped.values())
        weight = sum(free.values())
        planned = {
            case: max(minimum, round(left * spread / weight)) for case, spread in free.items()
        }
        over = {case for case, n in planned.items() if maximum is not None and n > maximum}
        if not over:
            return {**capped, **planned}
        capped.update(dict.fromkeys(over, maximum or 0))
