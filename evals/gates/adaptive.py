"""Which cases can still change a gate decision, and the gates an adaptive run has decided.

An adaptive run looks at its data after every batch of repeats. A gate decided at a look
(pass or fail) keeps that decision; the cases it reads need no further runs for it. The
next batch goes only to cases read by a blocking gate that is still undetermined, so
every undetermined gate sees exactly the runs a fixed schedule would have given it, and
its test at each look is the test of the non-adaptive group-sequential design. That is
what keeps the error of each gate within its spending over the looks.

Pure: gate reports and case lists in, decisions and case ids out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from evals import stats
from evals.gates.catalog import gate_cases, gate_of
from evals.model.suite import Case
from evals.model.summary import GateReport, GateResult


def _settles(gate: GateResult) -> bool:
    """A decision at a look is kept, unless the gate is a fact one more run can overturn."""
    declared = gate_of(gate.name)
    return declared is None or declared.settles


@dataclass(frozen=True, slots=True)
class Decided:
    """A gate decided at a look: its result then (whose reason names the look) and the look."""

    result: GateResult
    look: int


@dataclass(slots=True)
class AdaptiveState:
    """What an adaptive run knows after a look: the decided gates and the cases still open."""

    decided: dict[str, Decided] = field(default_factory=dict)
    active: frozenset[str] = frozenset()

    def frozen(self) -> dict[str, GateResult]:
        """The results the next looks keep for the gates already decided."""
        return {name: d.result for name, d in self.decided.items()}


def _stamped(gate: GateResult, look: int, repeats: int, runs: int) -> GateResult:
    when = f"decided at look {look} ({repeats} repeats, {runs} runs)"
    return replace(gate, reason=f"{gate.reason}; {when}")


def _freezes(gate: GateResult) -> bool:
    return gate.blocking and _settles(gate) and gate.status in ("pass", "fail")


@dataclass(frozen=True, slots=True)
class Futility:
    """How a look judges whether an undetermined gate can still be decided by the last
    look: `fraction` of the last look's repeats run, the last look's spend over this
    look's (`spend_ratio`) and its budget `final_spend`, and the conditional standard
    deviations the estimate may move to fail (`reach`) and to pass (`pass_reach`, default
    `reach`; see `evals.stats.futility`); `fail_only` judges the fail side alone, where an
    undetermined verdict passes and only a failure could change the build."""

    fraction: float
    spend_ratio: float
    final_spend: float
    reach: float = 2.0
    pass_reach: float | None = None
    fail_only: bool = False

    def judge(self, gate: GateResult) -> bool:
        """True when `gate` cannot be decided by the last look: never for a gate declared
        without futility nor one without both limits; for a gate decided case by case (the
        P0 gate) when the pass side is given up (`pass_reach` 0, as where an undetermined
        verdict passes) and its own exact `still_fails` says no remaining runs could fail
        it. The fail side is judged at the last look's level of the row's `first_step`
        when that is stricter than the level it was decided at now."""
        declared = gate_of(gate.name)
        if declared is not None and not declared.futility:
            return False
        if declared is not None and declared.still_fails is not None:
            if (self.pass_reach != 0 and not self.fail_only) or gate.share is None:
                return False
            final_share = gate.share * self.spend_ratio
            return not declared.still_fails(gate, self.fraction, final_share)
        numbers = [
            gate.measured,
            gate.threshold,
            gate.fail_limit,
            gate.fail_level,
            gate.pass_limit,
            gate.pass_level,
        ]
        known = [float(n) for n in numbers if n is not None]
        if len(known) < len(numbers):
            return False
        measured, threshold, fail_limit, fail_level, pass_limit, pass_level = known
        if not all(math.isfinite(n) for n in (measured, fail_limit, pass_limit)):
            return False
        return stats.futile(
            measured,
            threshold,
            fail_limit,
            fail_level,
            pass_limit,
            pass_level,
            self.fraction,
            1 - min(1 - fail_level, first_step(gate)) * self.spend_ratio,
            1 - self.final_spend / 2,
            self.reach,
            self.pass_reach,
            self.fail_only,
        )


def first_step(gate: GateResult) -> float:
    """The error a row meets when it is the first of its family to fail: its gate's
    share over its Holm `family` (1 when not recorded). A row that could fail by the last
    look only at a later step of its family needs another row to fail first, which fails
    the build without it; so whether it can still be the one to turn the build red is
    judged at this level."""
    if gate.share is None:
        return 1.0
    return gate.share / max(gate.family or 1, 1)


def _futile(gate: GateResult, look: int) -> GateResult:
    return replace(
        gate,
        reason=f"{gate.reason}; cannot be decided by the last look (judged at look {look}), "
        "so its cases run no further for it",
    )


Judge = Callable[[GateResult], bool]


def _is_futile(gate: GateResult, futile: Judge | None) -> bool:
    return (
        futile is not None
        and gate.blocking
        and gate.status == "undetermined"
        and _settles(gate)
        and futile(gate)
    )


def settle(
    report: GateReport,
    frozen: Mapping[str, GateResult],
    look: int,
    repeats: int,
    runs: int,
    futile: Judge | None = None,
) -> GateReport:
    """`report` as an adaptive look states it: each gate decided at an earlier look keeps
    that decision (`frozen`), each blocking gate decided now says at which look, after how
    many repeats per case and runs in all, and each undetermined gate that `futile` (for
    instance `Futility.judge`) finds cannot be decided by the last look says so."""
    gates = [
        frozen[g.name]
        if g.name in frozen
        else _stamped(g, look, repeats, runs)
        if _freezes(g)
        else _futile(g, look)
        if _is_futile(g, futile)
        else g
        for g in report.gates
    ]
    return replace(report, gates=gates)


def advance(
    state: AdaptiveState,
    report: GateReport,
    cases: Sequence[Case],
    look: int,
    futile: Judge | None = None,
) -> AdaptiveState:
    """The state after the settled `report` of `look` (settled with the same `futile`).

    Blocking statistical gates decided for the first time are frozen with their look; with
    `futile`, an undetermined gate that cannot be decided by the last look is frozen as
    undetermined (its settled reason says so: the judgement reads only the gate's
    numbers, which settling leaves alone). The cases still open are those read by a
    blocking gate neither decided nor frozen. Deterministic in its inputs, so a resumed
    run that sees the same records makes the same choices.
    """
    decided = dict(state.decided)
    for gate in report.gates:
        if gate.name in decided:
            continue
        if _freezes(gate) or _is_futile(gate, futile):
            decided[gate.name] = Decided(gate, look)
    open_gates: Iterable[GateResult] = (
        g
        for g in report.gates
        if g.blocking and g.status == "undetermined" and g.name not in decided
    )
    active = frozenset().union(*(gate_cases(g.name, cases) for g in open_gates))
    return AdaptiveState(decided, frozenset(active))
