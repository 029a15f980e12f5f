"""`policy`: fails on any run whose grade carries a policy violation. A fact, not an
estimate: it spends nothing, a single violation fails at any look, and no score
compensates it."""

from __future__ import annotations

from evals.gates.families import Levels
from evals.gates.registry import Evidence, Gate, Scope, no_case
from evals.model.summary import GateResult


def _family(scope: Scope) -> list[str] | None:
    return [] if scope.config.zero_policy_violations else None


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    summary, subject = evidence.summary, evidence.subject
    agents = [subject] if subject is not None else [a for a in summary.agents if a.group == "suite"]
    count = sum(a.policy_violations for a in agents)
    names = ", ".join(a.agent for a in agents)
    reason = (
        f"{count} policy violation(s) by {names}; a violation is never compensated by scores"
        if count
        else f"no policy violations by {names}"
    )
    return [GateResult("policy", "fail" if count else "pass", 0, count, None, reason)]


GATE = Gate(
    name="policy",
    keys=("zero_policy_violations",),
    statistical=False,
    family=_family,
    decide=_decide,
    reads=no_case,
    settles=False,
    futility=False,
)
