"""One statistical gate as a family of one-sided hypotheses, decided at its share of the
build's false-failure budget.

A gate may hold one hypothesis (the suite's regression) or several (one per tag, one per
P0 case, one per agent's error rate). Each hypothesis has a threshold, a side (higher or
lower is better) and a family of one-sided confidence limits. Inside the gate, Holm's
procedure at the gate's share decides which hypotheses fail: hypothesis i fails when its
fail limit at 1 - share·p_i/q_i (q_i its Holm-adjusted p-value, the level of the step
of Holm's procedure that decides it) lies beyond the fail threshold, which happens
exactly when q_i <= share. It passes when its pass limit at 1 - pass_alpha lies within
the threshold, undetermined otherwise (`evals.stats.gate_status`). The limit shown is the
limit decided on, so a gate's interval and its status cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from evals import stats
from evals.model.summary import GateResult, GateStatus

Side = Literal["lower", "upper"]
Limit = Callable[[float, Side], float]


@dataclass(frozen=True, slots=True)
class Levels:
    """The error a gate may make: `share` of the build's false-failure budget `spend` on
    its fail side, `pass_alpha` on its pass side. `pooled` is the share of every gate of
    its graph together (`evals.gates.registry.Gate.graph`): what a hypothesis of the
    graph can reach once the others holding the rest of it are rejected."""

    share: float
    pass_alpha: float
    spend: float
    pooled: float | None = None

    @property
    def fail_level(self) -> float:
        """One-sided level of the fail limit of a gate with one hypothesis."""
        return 1 - self.share

    @property
    def pass_level(self) -> float:
        """One-sided level of every pass limit."""
        return 1 - self.pass_alpha


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One thing a gate checks: `limit(level, side)` are its one-sided confidence limits.

    It fails when shown beyond `fail_threshold` (default `threshold`) and passes when
    shown within `threshold`. `fail_p` is the exact one-sided p-value of the fail side
    when the test has one; otherwise it is found by inverting the limits.
    """

    label: str
    measured: float
    limit: Limit
    threshold: float
    higher_is_better: bool = True
    fail_threshold: float | None = None
    fail_p: Callable[[], float] | None = None

    @property
    def fail_at(self) -> float:
        """The threshold beyond which the hypothesis fails."""
        return self.threshold if self.fail_threshold is None else self.fail_threshold

    @property
    def fail_side(self) -> Side:
        """The limit that shows a failure: the upper one when higher is better."""
        return "upper" if self.higher_is_better else "lower"

    @property
    def pass_side(self) -> Side:
        """The limit that shows a pass."""
        return "lower" if self.higher_is_better else "upper"

    def p_value(self) -> float:
        """One-sided p-value of "the threshold is not crossed on the fail side"."""
        if self.fail_p is not None:
            return self.fail_p()
        return stats.inverted_p_value(
            lambda level: self.limit(level, self.fail_side), self.fail_at, self.fail_side
        )


@dataclass(frozen=True, slots=True)
class Judged:
    """A hypothesis with its limits, levels and status."""

    hypothesis: Hypothesis
    status: GateStatus
    fail_limit: float
    fail_level: float
    pass_limit: float
    pass_level: float
    p_value: float | None
    adjusted_p: float | None

    @property
    def interval(self) -> tuple[float, float]:
        """The two limits, low first."""
        return (min(self.fail_limit, self.pass_limit), max(self.fail_limit, self.pass_limit))


def _family_p_values(
    hypotheses: Sequence[Hypothesis], levels: Levels, weights: Sequence[float] | None
) -> tuple[list[float | None], list[float | None], list[float]]:
    """(p-values, Holm-adjusted p-values, fail levels). A lone hypothesis is decided at
    1 - share and keeps an exact p-value when its test has one; inverting its limits for
    a p-value nothing else needs is skipped."""
    if len(hypotheses) == 1 and hypotheses[0].fail_p is None and weights is None:
        return [None], [None], [levels.fail_level]
    p_values = [h.p_value() for h in hypotheses]
    adjusted = stats.holm(p_values) if weights is None else stats.weighted_holm(p_values, weights)
    return (
        list(p_values),
        list(adjusted),
        [
            stats.agreeing_confidence(p, q, levels.share)
            for p, q in zip(p_values, adjusted, strict=True)
        ],
    )


def judge_family(
    hypotheses: Sequence[Hypothesis], levels: Levels, weights: Sequence[float] | None = None
) -> list[Judged]:
    """Each hypothesis decided: Holm within the family at `levels.share` for failing (the
    weighted Holm procedure with `weights`, `stats.weighted_holm`), the pass limit at
    `levels.pass_level` for passing."""
    p_values, adjusted_p, fail_levels = _family_p_values(hypotheses, levels, weights)
    judged = []
    for hypothesis, p_value, adjusted, fail_level in zip(
        hypotheses, p_values, adjusted_p, fail_levels, strict=True
    ):
        fail_limit = hypothesis.limit(fail_level, hypothesis.fail_side)
        pass_limit = hypothesis.limit(levels.pass_level, hypothesis.pass_side)
        lower, upper = (
            (pass_limit, fail_limit) if hypothesis.higher_is_better else (fail_limit, pass_limit)
        )
        status = stats.gate_status(
            lower,
            upper,
            hypothesis.threshold,
            hypothesis.higher_is_better,
            hypothesis.fail_threshold,
        )
        judged.append(
            Judged(
                hypothesis,
                status,
                fail_limit,
                fail_level,
                pass_limit,
                levels.pass_level,
                p_value,
                adjusted,
            )
        )
    return judged


def two_sided_confidence(level: float) -> float:
    """The two-sided confidence whose limits are the one-sided limits at `level`."""
    return 2 * level - 1


def percent(level: float) -> str:
    """A confidence level as a percentage with the digits that matter (99.17 %)."""
    return f"{100 * level:.4g} %"


def limits_sentence(judged: Judged, show: Callable[[float], str], family: int = 1) -> str:
    """The fail and pass limits against their thresholds and what they show."""
    h = judged.hypothesis
    beyond = "below" if h.higher_is_better else "above"
    within = "at or above" if h.higher_is_better else "at or below"
    holm = f", Holm within {family}" if family > 1 else ""
    fail = (
        f"{h.fail_side} limit {show(judged.fail_limit)} at {percent(judged.fail_level)}"
        f"{holm} (fails {beyond} {show(h.fail_at)})"
    )
    passing = (
        f"{h.pass_side} limit {show(judged.pass_limit)} at {percent(judged.pass_level)} "
        f"(passes {within} {show(h.threshold)})"
    )
    outcome = {
        "fail": "shown beyond the threshold",
        "pass": "shown within the threshold",
        "undetermined": "shown neither within nor beyond the threshold",
    }[judged.status]
    return f"{fail}; {passing}: {outcome}"


def gate_result(
    name: str, judged: Judged, levels: Levels, reason: str, measured: float | None = None
) -> GateResult:
    """The gate row of one judged hypothesis."""
    h = judged.hypothesis
    return GateResult(
        name=name,
        status=judged.status,
        threshold=h.threshold,
        measured=h.measured if measured is None else measured,
        interval=judged.interval,
        reason=reason,
        fail_limit=judged.fail_limit,
        fail_level=judged.fail_level,
        pass_limit=judged.pass_limit,
        pass_level=judged.pass_level,
        share=levels.share,
        p_value=judged.p_value,
        adjusted_p=judged.adjusted_p,
    )


def family_status(judged: Sequence[Judged]) -> GateStatus:
    """A gate over several hypotheses fails when one fails and passes when all pass."""
    statuses = {j.status for j in judged}
    if "fail" in statuses:
        return "fail"
    return "pass" if statuses == {"pass"} else "undetermined"
