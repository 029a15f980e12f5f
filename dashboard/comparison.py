"""Candidate against baseline from stored evaluations, with the same statistics as the CLI.

Two agents of one evaluation reuse the summary and gate report that evaluation stored.
Any other pairing (two evaluations, or agents the evaluation did not compare) is analysed
afresh by `evals.pipeline.evaluation.analyse` over light records (each run's outcome,
seed, score, cost, latency and policy flag, read without outputs or trajectories) and the
suite outline stored with the candidate's evaluation (its cases' tags and priorities and
its gate thresholds). Everything comes from the store; no suite file is read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from evals.gates.decide import check_comparable
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.pipeline.evaluation import analyse
from evals.store import Store, StoredEvaluation
from evals.store.dashboard_queries import DashboardQueries


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a comparison: an agent within a stored evaluation."""

    evaluation_id: str
    agent: str


@dataclass(slots=True)
class ComparisonResult:
    """A comparison as the pages read it: the `Summary` and `GateReport` as dicts."""

    summary: dict[str, Any]
    gates: dict[str, Any]
    warnings: list[str]
    recomputed: bool


def light_records(rows: list[dict[str, Any]], label: str) -> list[RunRecord]:
    """Run records carrying only what the statistics read, relabelled as `label`: the
    outcome with its error kind and message, seed, score, cost, both latencies (when read)
    and the policy flag."""
    return [
        RunRecord(
            key=RunKey(row["prompt_id"], row["case_id"], label, row["repeat"]),
            case_index=row["case_index"],
            prompt_index=row["prompt_index"],
            agent_index=row["agent_index"],
            seed=row["seed"],
            prompt="",
            vars={},
            response=AgentResponse(cost=row["cost"], latency_ms=row.get("agent_latency_ms")),
            status=row["status"],
            grade=_grade(row),
            error=row.get("error"),
            error_kind=row.get("error_kind"),
            latency_ms=row["latency_ms"],
        )
        for row in rows
    ]


def _grade(row: dict[str, Any]) -> Grade | None:
    if row["passed"] is None:
        return None
    return Grade(
        passed=bool(row["passed"]),
        score=row["score"] if row["score"] is not None else 0.0,
        reason="",
        policy_violation=bool(row["policy_violation"]),
    )


def _stored_pair(evaluation: StoredEvaluation, baseline: Side, candidate: Side) -> bool:
    comparison = (evaluation.summary or {}).get("comparison") or {}
    return (
        baseline.evaluation_id == candidate.evaluation_id
        and comparison.get("baseline") == baseline.agent
        and comparison.get("candidate") == candidate.agent
        and evaluation.gates is not None
    )


def compare_sides(
    store: Store, baseline: Side, candidate: Side, environment: str | None = None
) -> ComparisonResult:
    """Statistics and gates of `candidate` against `baseline`."""
    if baseline == candidate:
        raise SuiteError(
            "baseline and candidate are the same runs", fix="pick another agent or evaluation"
        )
    base_meta = store.get_evaluation(baseline.evaluation_id)
    cand_meta = store.get_evaluation(candidate.evaluation_id)
    if base_meta is None or cand_meta is None:
        missing = baseline.evaluation_id if base_meta is None else candidate.evaluation_id
        raise SuiteError(f"the store has no evaluation {missing}", fix="pick another evaluation")
    if _stored_pair(cand_meta, baseline, candidate):
        assert cand_meta.summary is not None and cand_meta.gates is not None
        return ComparisonResult(cand_meta.summary, cand_meta.gates, [], recomputed=False)
    outline = cand_meta.suite_outline()
    warnings = check_comparable(base_meta.fingerprint, cand_meta.fingerprint, allow=True)
    if outline.gates is None:
        warnings.append(
            f"evaluation {cand_meta.id} was stored without its gate thresholds (by an older "
            "evals); the default thresholds apply"
        )
    queries = DashboardQueries(store.engine)
    environment = environment or cand_meta.environment
    thresholds = (outline.gates or GateConfig()).for_environment(environment)
    reported = thresholds.latency == "agent"
    records = light_records(
        queries.outcome_rows(baseline.evaluation_id, baseline.agent, reported), "baseline"
    ) + light_records(
        queries.outcome_rows(candidate.evaluation_id, candidate.agent, reported), "candidate"
    )
    config = dataclasses.replace(thresholds, baseline="baseline", candidate="candidate")
    summary, gates = analyse(outline, records, config, environment)
    gates.warnings.extend(warnings)
    return ComparisonResult(summary.to_dict(), gates.to_dict(), warnings, recomputed=True)
