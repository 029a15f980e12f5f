"""`policy`: fails on any run whose grade carries a policy violation. A fact, not an
estimate: it spends nothing, a single violation fails at any look, and no score
compensates it. Its reason names where the first violation of each agent happened (case,
repeat and, in a conversation, the turn) and what it was."""

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
    if not count:
        reason = f"no policy violations by {names}"
    else:
        where = "; ".join(
            f"{a.agent} in {a.violation_cases} case(s), first {a.first_violation}"
            for a in agents
            if a.policy_violations and a.first_violation
        )
        reason = (
            f"{count} policy violation(s) by {names}"
            + (f" ({where})" if where else "")
            + "; a violation is never compensated by scores"
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
