"""Run a suite in pre-planned stages of repeats, stopping once its gates are decided.

A run that is clearly better or clearly worse is decided after a few repeats; a close
one needs many. Staged runs spend repeats only where they are needed: the first stage
runs, say, 5 repeats per case and agent, and only when a blocking gate is still
undetermined does the next stage add repeats up to 10, then up to 20.

Looking at accumulating data several times gives several chances to stop on a false
decision (Armitage, McPherson and Rowe 1969), so the build's false-failure budget
alpha = 1 - confidence is spent over the planned looks: the look after stage l spends
alpha·(t_l - t_{l-1}), t_l the share of the last stage's repeats run by then (an
alpha-spending function linear in information: Lan and DeMets 1983; Kim and DeMets 1987),
and splits that spend among its gates as a single decision would. By the union bound the
chance that any look fails the build falsely stays within alpha, whatever the dependence
between looks, which the gates' statistics (t tests over cases, exact tests, bootstrap
ratios) do not give in closed form. The pass side is spent the same way (half of each
look's spend), so stopping on a pass is no easier than stopping on a failure.
docs/statistics.md shows the simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING

from evals.gates.adaptive import Futility
from evals.model.defaults import DEFAULT_STAGES
from evals.model.errors import SuiteError
from evals.stats import spending_shares

if TYPE_CHECKING:
    from evals.model.evaluation import EvaluationResult
    from evals.model.options import EvaluationState, RunOptions
    from evals.model.suite import Suite
    from evals.model.summary import GateReport


def check_stages(stages: Sequence[int]) -> tuple[int, ...]:
    """The stages as a tuple, when they are cumulative repeats: positive and increasing."""
    stages = tuple(stages)
    if not stages:
        raise ValueError("give at least one stage, for example 5,10,20")
    if stages[0] < 1 or any(b <= a for a, b in pairwise(stages)):
        raise ValueError(
            "stages are cumulative repeats per case and agent: positive and increasing, "
            f"like 5,10,20 (got {','.join(str(s) for s in stages)})"
        )
    return stages


def parse_stages(text: str) -> tuple[int, ...]:
    """Cumulative repeats per stage from text such as "5,10,20".

    Each number is the total repeats per case and agent after that stage.
    """
    try:
        stages = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"stages are whole numbers separated by commas, not {text!r}") from None
    return check_stages(stages)


def look_spends(confidence: float, stages: Sequence[int]) -> list[float]:
    """The false-failure budget each look may spend: increments of alpha·t, t the share of
    the last stage's repeats run by that look; they add up to alpha = 1 - confidence."""
    stages = check_stages(stages)
    return spending_shares([s / stages[-1] for s in stages], 1 - confidence)


def is_decided(report: GateReport) -> bool:
    """True once the data decided the build's verdict.

    Every blocking gate passed, or one failed (a failed blocking gate fails the build
    whatever the undetermined ones would say). An undetermined verdict runs the next
    stage, whatever the environment does with it at the end.
    """
    return report.verdict != "undetermined"


@dataclass(slots=True, frozen=True)
class Look:
    """The gates' verdict after one stage, and the budget that look spent."""

    repeats: int
    spend: float
    verdict: str
    failed: tuple[str, ...]
    undetermined: tuple[str, ...]
    futile: bool = False


FAIL_REACH = 2.0
"""How many conditional standard deviations an undetermined gate's estimate may need to
move to fail by the last stage before a staged run stops for it, where an undetermined
verdict passes (the adaptive runs' `DEFAULT_REACH`)."""


def cannot_fail(
    report: GateReport, stage: int, stages: Sequence[int], spends: Sequence[float]
) -> bool:
    """True where an undetermined verdict passes (a pull request) and no undetermined
    blocking gate can still fail by the last stage after stage `stage` (0-based) of
    `stages` with budgets `spends`: only failing could change the build, and more stages
    would not reach it (`evals.gates.adaptive.Futility`, the pass side given up)."""
    if report.on_undetermined != "pass" or report.verdict != "undetermined":
        return False
    if stage >= len(stages) - 1:
        return False
    futility = Futility(
        fraction=stages[stage] / stages[-1],
        spend_ratio=spends[-1] / spends[stage],
        final_spend=spends[-1],
        reach=FAIL_REACH,
        pass_reach=0.0,
        fail_only=True,
    )
    open_gates = [g for g in report.gates if g.blocking and g.status == "undetermined"]
    return all(futility.judge(g) for g in open_gates)


def _look(repeats: int, spend: float, report: GateReport, futile: bool = False) -> Look:
    blocking = [g for g in report.gates if g.blocking]
    return Look(
        repeats=repeats,
        spend=spend,
        verdict=report.verdict,
        failed=tuple(g.name for g in blocking if g.status == "fail"),
        undetermined=tuple(g.name for g in blocking if g.status == "undetermined"),
        futile=futile,
    )


def _repeats(count: int) -> str:
    return f"{count} repeat" if count == 1 else f"{count} repeats"


@dataclass(slots=True)
class StagedResult:
    """A staged run: the final evaluation, every look, and the budget each look spent."""

    result: EvaluationResult
    stages: tuple[int, ...]
    looks: list[Look]
    confidence: float

    @property
    def stopped_early(self) -> bool:
        """True when the gates were decided before the last planned stage."""
        return len(self.looks) < len(self.stages)

    @property
    def stop_reason(self) -> str:
        """Why no further stage ran, in words."""
        last = self.looks[-1]
        if last.failed:
            return (
                f"blocking gate(s) {', '.join(last.failed)} failed, which fails the build "
                "whatever the other gates say"
            )
        if last.verdict == "pass":
            return "every blocking gate passed"
        if last.futile:
            return (
                f"no undetermined blocking gate ({', '.join(last.undetermined)}) could still "
                "fail by the last stage, and this environment passes an undetermined verdict"
            )
        return (
            f"the last planned stage was reached with {', '.join(last.undetermined)} "
            "still undetermined"
        )

    def describe(self) -> str:
        """One paragraph for the report: stages run, repeats, why it stopped, the spending."""
        last = self.looks[-1]
        history = ", ".join(
            f"{_repeats(look.repeats)}: {look.verdict}, spent {look.spend:.3g}"
            for look in self.looks
        )
        alpha = 1 - self.confidence
        return (
            f"staged run: {len(self.looks)} of {len(self.stages)} stages "
            f"({history}); stopped because {self.stop_reason}. Each look spent its share of "
            f"the build's false-failure budget {alpha:.3g} (alpha·t, t the share of the "
            f"{self.stages[-1]} planned repeats run), so a false failure at any look stays "
            f"within {alpha:.3g}. Final data: {_repeats(last.repeats)} per case and agent."
        )


def run_until_decided(
    suite: Suite,
    options: RunOptions,
    stages: Sequence[int] = DEFAULT_STAGES,
    state: EvaluationState | None = None,
) -> StagedResult:
    """Run `stages` cumulative repeats one stage at a time until the verdict is decided,
    or, where an undetermined verdict passes, until no open gate can still fail by the
    last stage.

    Every stage adds only its new repeats to the same evaluation (one id in the store),
    and every look decides the gates with its spend of the build's budget (`look_spends`).
    `state` is where the run starts (a stored baseline standing in); each stage adds its
    spend to it.
    """
    from evals.model.options import EvaluationState
    from evals.pipeline.evaluation import run_evaluation

    start = EvaluationState() if state is None else state
    stages = check_stages(stages)
    if options.repeat is not None:
        raise SuiteError(
            "a staged run sets the repeats of each stage itself",
            fix="drop --repeat, or give the stages, for example --until-decided 5,10,20",
        )
    if options.shard is not None:
        raise SuiteError(
            "a staged run decides on the whole suite, so it cannot run one shard",
            fix="drop --shard, or run the shards with a fixed --repeat and merge them",
        )
    confidence = suite.gates.for_environment(options.environment).confidence
    result: EvaluationResult | None = None
    looks: list[Look] = []
    spends = look_spends(confidence, stages)
    for stage, (repeats, spend) in enumerate(zip(stages, spends, strict=True)):
        result = run_evaluation(
            suite, replace(options, repeat=repeats), result, replace(start, spend=spend)
        )
        futile = cannot_fail(result.gates, stage, stages, spends)
        looks.append(_look(repeats, spend, result.gates, futile))
        if is_decided(result.gates) or futile:
            break
    assert result is not None
    return StagedResult(result, stages, looks, confidence)
