"""Run a suite in pre-planned stages of repeats, stopping once its gates are decided.

A run that is clearly better or clearly worse is decided after a few repeats; a close
one needs many. Staged runs spend repeats only where they are needed: the first stage
runs, say, 5 repeats per case and agent, and only when a blocking gate is still
undetermined does the next stage add repeats up to 10, then up to 20.

Looking at accumulating data several times gives several chances to stop on a false
decision (Armitage, McPherson and Rowe 1969), so the error rate is split across the
planned looks with the Bonferroni rule: with L looks, every look decides its gates at
confidence 1 - (1 - confidence)/L, and by the union bound the chance that any look makes
a false decision stays within 1 - confidence. This is the conservative member of the
group-sequential designs (Jennison and Turnbull 2000, ch. 2 and 7); Pocock's constant
boundaries and O'Brien-Fleming-type spending are tighter but need the joint distribution
of the test statistics across looks, which the gates' intervals (MOVER over effective-n
Wilson intervals, bootstrap ratios, Wilson counts) do not have in closed form. The union
bound holds whatever that dependence is. docs/statistics.md shows the simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING

from evals.model.errors import SuiteError

if TYPE_CHECKING:
    from evals.model.evaluation import EvaluationResult
    from evals.model.options import RunOptions
    from evals.model.suite import Suite
    from evals.model.summary import GateReport

DEFAULT_STAGES = (5, 10, 20)


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


def look_confidence(confidence: float, looks: int) -> float:
    """The confidence every look decides at: the error 1 - confidence split over `looks`."""
    if looks < 1:
        raise ValueError("a staged run needs at least one look")
    return 1 - (1 - confidence) / looks


def is_decided(report: GateReport) -> bool:
    """True once more repeats cannot change the build's verdict.

    Every blocking gate passed, or one failed (a failed blocking gate fails the build
    whatever the undetermined ones would say).
    """
    return report.verdict != "undetermined"


@dataclass(slots=True, frozen=True)
class Look:
    """The gates' verdict after one stage."""

    repeats: int
    verdict: str
    failed: tuple[str, ...]
    undetermined: tuple[str, ...]


def _look(repeats: int, report: GateReport) -> Look:
    blocking = [g for g in report.gates if g.blocking]
    return Look(
        repeats=repeats,
        verdict=report.verdict,
        failed=tuple(g.name for g in blocking if g.status == "fail"),
        undetermined=tuple(g.name for g in blocking if g.status == "undetermined"),
    )


def _repeats(count: int) -> str:
    return f"{count} repeat" if count == 1 else f"{count} repeats"


@dataclass(slots=True)
class StagedResult:
    """A staged run: the final evaluation, every look, and the error split used."""

    result: EvaluationResult
    stages: tuple[int, ...]
    looks: list[Look]
    confidence: float
    look_confidence: float

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
        return (
            f"the last planned stage was reached with {', '.join(last.undetermined)} "
            "still undetermined"
        )

    def describe(self) -> str:
        """One paragraph for the report: stages run, repeats, why it stopped, the error split."""
        last = self.looks[-1]
        history = ", ".join(f"{_repeats(look.repeats)}: {look.verdict}" for look in self.looks)
        return (
            f"staged run: {len(self.looks)} of {len(self.stages)} stages "
            f"({history}); stopped because {self.stop_reason}. Each look decided at "
            f"confidence {self.look_confidence:.4g}, the error {1 - self.confidence:.3g} split "
            f"over {len(self.stages)} looks (Bonferroni), so a false decision at any look "
            f"stays within {1 - self.confidence:.3g}. Final data: {_repeats(last.repeats)} per "
            "case and agent."
        )


def run_until_decided(
    suite: Suite, options: RunOptions, stages: Sequence[int] = DEFAULT_STAGES
) -> StagedResult:
    """Run `stages` cumulative repeats one stage at a time until the verdict is decided.

    Every stage adds only its new repeats to the same evaluation (one id in the store),
    and every look decides the gates at the Bonferroni-split confidence.
    """
    from evals.pipeline.evaluation import run_evaluation

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
    confidence = options.confidence
    if confidence is None:
        confidence = suite.gates.for_environment(options.environment).confidence
    per_look = look_confidence(confidence, len(stages))
    result: EvaluationResult | None = None
    looks: list[Look] = []
    for repeats in stages:
        result = run_evaluation(
            suite, replace(options, repeat=repeats, confidence=per_look), previous=result
        )
        looks.append(_look(repeats, result.gates))
        if is_decided(result.gates):
            break
    assert result is not None
    return StagedResult(result, stages, looks, confidence, per_look)
