"""Selections from an evaluation that several human-readable reports show alike."""

from __future__ import annotations

from collections import defaultdict

from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord
from evals.model.summary import AgentStats, CaseComparison


def case_comparisons(result: EvaluationResult) -> list[CaseComparison]:
    """Per-case candidate-vs-baseline comparisons, in suite order (empty with one agent)."""
    comparison = result.summary.comparison
    return list(comparison.cases) if comparison is not None else []


def explanations(result: EvaluationResult) -> list[str]:
    """Sentences explaining the suite's verdict and each tag's decided verdict (regression,
    improvement or equivalent), in words a developer reads without the tables."""
    comparison = result.summary.comparison
    if comparison is None:
        return []
    decided = [
        t for t in comparison.tags if t.verdict in ("regression", "improvement", "equivalent")
    ]
    return [g.explanation for g in (comparison.overall, *decided) if g.explanation]


def regressions(result: EvaluationResult) -> list[CaseComparison]:
    """Cases whose verdict is a regression, worst difference first."""
    found = [c for c in case_comparisons(result) if c.verdict == "regression"]
    return sorted(found, key=lambda c: c.difference if c.difference is not None else 0.0)


def improvements(result: EvaluationResult) -> list[CaseComparison]:
    """Cases whose verdict is an improvement, largest difference first."""
    found = [c for c in case_comparisons(result) if c.verdict == "improvement"]
    return sorted(found, key=lambda c: -(c.difference if c.difference is not None else 0.0))


def agent_overall(result: EvaluationResult, agent: str) -> AgentStats | None:
    """The suite-level statistics of one agent, when the summary has them."""
    return next((a for a in result.summary.agents if a.agent == agent), None)


def compared_agents(result: EvaluationResult) -> tuple[str | None, str | None]:
    """(baseline, candidate) labels as compared, falling back to the gate configuration."""
    comparison = result.summary.comparison
    if comparison is not None:
        return comparison.baseline, comparison.candidate
    return result.gate_config.baseline, result.gate_config.candidate


def runs_by_case_agent(result: EvaluationResult) -> dict[tuple[str, str], list[RunRecord]]:
    """Records grouped by (case id, agent), each group in repeat order."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in result.records:
        groups[(record.key.case_id, record.key.agent)].append(record)
    for runs in groups.values():
        runs.sort(key=lambda r: (r.key.repeat, r.key.prompt_id))
    return groups


def run_reason(record: RunRecord) -> str:
    """Why a run did not pass, in one line (empty for a pass)."""
    if record.status == "error":
        kind = f"{record.error_kind}: " if record.error_kind else ""
        return f"{kind}{record.error or record.response.error or 'error'}"
    if record.status == "fail" and record.grade is not None:
        return record.grade.reason
    return ""
