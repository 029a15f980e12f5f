"""`min_repeats`: undetermined while a case has fewer counted runs than `min_repeats`. A
fact, not an estimate: it spends nothing."""

from __future__ import annotations

from evals.gates.families import Levels
from evals.gates.registry import Evidence, Gate, Scope
from evals.model.summary import GateResult


def _family(scope: Scope) -> list[str] | None:
    return [] if scope.subject and scope.config.min_repeats > 1 else None


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    subject, minimum = evidence.subject, evidence.config.min_repeats
    assert subject is not None
    short = [
        c.case_id
        for c in evidence.summary.case_stats
        if c.agent == subject.agent and c.counted < minimum
    ]
    reason = (
        f"{len(short)} case(s) have fewer than {minimum} counted runs: insufficient data"
        if short
        else f"every case has at least {minimum} counted runs"
    )
    return [
        GateResult(
            "min_repeats", "undetermined" if short else "pass", minimum, len(short), None, reason
        )
    ]


GATE = Gate(
    name="min_repeats",
    keys=("min_repeats",),
    statistical=False,
    family=_family,
    decide=_decide,
)
