"""The statistics of an evaluation as data: what `analysis` computes and reports print.

Plain dataclasses with `to_dict`, so the store, the JSON report and the dashboard share
one shape. Intervals are (low, high) tuples at the summary's confidence level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson


def _json_ready(value: Any) -> Any:
    """A dataclass tree as plain JSON values; orjson walks it several times faster than
    `dataclasses.asdict`, which matters for summaries of thousands of cases."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


Interval = tuple[float, float]
Verdict = Literal["regression", "improvement", "equivalent", "inconclusive", "insufficient data"]
GateStatus = Literal["pass", "fail", "undetermined"]


@dataclass(slots=True)
class CaseAgentStats:
    """One agent on one case over its repeats."""

    case_id: str
    agent: str
    runs: int
    passes: int
    fails: int
    errors: int
    pass_rate: float | None
    interval: Interval | None
    pass_hat_k: float | None = None
    flake: float | None = None
    mean_cost: float | None = None
    mean_latency_ms: float | None = None
    mean_score: float | None = None
    policy_violations: int = 0


@dataclass(slots=True)
class AgentStats:
    """One agent over a set of cases (the suite, or one tag), the case as the unit."""

    agent: str
    group: str
    cases: int
    runs: int
    passes: int
    errors: int
    pass_rate: float | None
    interval: Interval | None
    run_pass_rate: float | None = None
    standard_error: float | None = None
    effective_n: float | None = None
    icc: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    flake_rate: float | None = None
    total_cost: float = 0.0
    cost_per_accepted: float | None = None
    p95_latency_ms: float | None = None
    mean_latency_ms: float | None = None
    policy_violations: int = 0
    k: int | None = None
    mean_flake: float | None = None
    cost_per_accepted_interval: Interval | None = None
    p95_latency_interval: Interval | None = None


@dataclass(slots=True)
class CaseComparison:
    """Candidate against baseline on one case."""

    case_id: str
    description: str
    tags: list[str]
    priority: str | None
    baseline: CaseAgentStats
    candidate: CaseAgentStats
    difference: float | None
    interval: Interval | None
    p_value: float | None
    p_adjusted: float | None
    verdict: Verdict
    why_it_exists: str | None = None
    paired: bool = False


@dataclass(slots=True)
class GroupComparison:
    """Candidate against baseline over the suite or one tag."""

    group: str
    cases: int
    baseline_rate: float | None
    candidate_rate: float | None
    difference: float | None
    interval: Interval | None
    verdict: Verdict
    p_value: float | None = None
    p_adjusted: float | None = None
    explanation: str = ""
    correlation: float | None = None
    fixed_suite_interval: Interval | None = None


@dataclass(slots=True)
class Comparison:
    """Everything that says whether the candidate is better or worse than the baseline."""

    baseline: str
    candidate: str
    overall: GroupComparison
    tags: list[GroupComparison]
    cases: list[CaseComparison]
    warnings: list[str] = field(default_factory=list)
    latency_ratio: float | None = None
    latency_ratio_interval: Interval | None = None
    cost_ratio: float | None = None
    cost_ratio_interval: Interval | None = None
    paired_cases: int = 0


@dataclass(slots=True)
class Summary:
    """Statistics of one evaluation."""

    suite_id: str
    version: str | None
    fingerprint: str
    confidence: float
    case_stats: list[CaseAgentStats]
    agents: list[AgentStats]
    tags: list[AgentStats]
    comparison: Comparison | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (intervals become lists, as in JSON)."""
        return _json_ready(self)


@dataclass(slots=True)
class GateResult:
    """One gate's decision with the numbers behind it."""

    name: str
    status: GateStatus
    threshold: float | None
    measured: float | None
    interval: Interval | None
    reason: str
    blocking: bool = True


@dataclass(slots=True)
class GateReport:
    """All gates of an evaluation and the overall decision."""

    gates: list[GateResult]
    environment: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True unless a blocking gate failed (undetermined gates do not fail a build)."""
        return not any(g.status == "fail" and g.blocking for g in self.gates)

    @property
    def verdict(self) -> str:
        """pass, fail, or undetermined when nothing failed but something is undecided."""
        if not self.passed:
            return "fail"
        if any(g.status == "undetermined" and g.blocking for g in self.gates):
            return "undetermined"
        return "pass"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict including the overall verdict."""
        data = _json_ready(self)
        data["verdict"] = self.verdict
        data["passed"] = self.passed
        return data
