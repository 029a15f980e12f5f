"""`acme_spend_per_run`: what the candidate spent per run in this evaluation, at most the
key's value in dollars. A fact about this evaluation's spend, not an estimate: it takes
no share of the false-failure budget."""

from __future__ import annotations

from typing import Any

from evals import Evidence, Gate, GateResult, Levels, when_set

KEY = "acme_spend_per_run"


def _parse(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"must be a positive number of dollars, not {value!r}")
    return float(value)


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    limit = evidence.config.value(KEY)
    subject = evidence.subject
    assert subject is not None
    if subject.total_cost is None or not subject.runs:
        reason = f"{subject.agent}'s cost is unknown"
        return [GateResult(KEY, "undetermined", limit, None, None, reason)]
    spent = subject.total_cost / subject.runs
    reason = f"{subject.agent} spent ${spent:.4f} per run (limit ${limit:.4f})"
    return [GateResult(KEY, "pass" if spent <= limit else "fail", limit, spent, None, reason)]


SPEND_PER_RUN = Gate(
    name=KEY,
    keys=(KEY,),
    statistical=False,
    family=when_set(KEY, "subject"),
    decide=_decide,
    parse=_parse,
)
