"""`judge_kappa` and `judge_accuracy`: the suite's judge against human labels, Cohen's
kappa and accuracy at or above `min_judge_kappa` / `min_judge_accuracy`, measured over the
gates' calibration file (`evals.pipeline.calibration`). They read no runs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from evals.gates.families import (
    Hypothesis,
    Levels,
    gate_result,
    judge_family,
    limits_sentence,
    two_sided_confidence,
)
from evals.gates.registry import Evidence, Gate, no_case, when_set
from evals.model.summary import GateResult

if TYPE_CHECKING:
    from evals.analysis.agreement import Agreement


def _agreement_limit(
    estimate: Callable[[float], tuple[float, float, float]], level: float, side: str
) -> float:
    _, low, high = estimate(two_sided_confidence(level))
    return low if side == "lower" else high


def judge_gate(
    name: str, what: str, judged: Agreement, threshold: float, levels: Levels
) -> GateResult:
    """The row of one agreement measure (`kappa` or `accuracy`) against `threshold`."""
    estimate = judged.kappa if what == "kappa" else judged.accuracy
    value = estimate(0.95)[0]
    counts = f"{judged.agreed} of {judged.n} calibration items agreed"
    if judged.errors:
        counts += f", {judged.errors} not graded"
    if judged.n == 0 or value != value:
        reason = f"judge {what} is undefined ({counts}); label items of both verdicts"
        return GateResult(name, "undetermined", threshold, None, None, reason)
    hypothesis = Hypothesis(
        label=name, measured=value, limit=partial(_agreement_limit, estimate), threshold=threshold
    )
    (decided,) = judge_family([hypothesis], levels)
    reason = f"judge {what} {value:.3f} ({counts}): " + limits_sentence(
        decided, lambda v: f"{v:.3f}"
    )
    return gate_result(name, decided, levels, reason)


def _decide_kappa(evidence: Evidence, levels: Levels) -> list[GateResult]:
    threshold = evidence.config.min_judge_kappa
    assert evidence.judge is not None and threshold is not None
    return [judge_gate(KAPPA.name, "kappa", evidence.judge, threshold, levels)]


def _decide_accuracy(evidence: Evidence, levels: Levels) -> list[GateResult]:
    threshold = evidence.config.min_judge_accuracy
    assert evidence.judge is not None and threshold is not None
    return [judge_gate(ACCURACY.name, "accuracy", evidence.judge, threshold, levels)]


KAPPA = Gate(
    name="judge_kappa",
    keys=("min_judge_kappa", "judge_calibration"),
    statistical=True,
    family=when_set("min_judge_kappa", "judged"),
    decide=_decide_kappa,
    reads=no_case,
)
ACCURACY = Gate(
    name="judge_accuracy",
    keys=("min_judge_accuracy", "judge_calibration"),
    statistical=True,
    family=when_set("min_judge_accuracy", "judged"),
    decide=_decide_accuracy,
    reads=no_case,
)
