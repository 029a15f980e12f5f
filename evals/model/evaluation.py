"""One evaluation as data: its identity (`EvaluationMeta`) and everything it produced
(`EvaluationResult`), which reports and the command line read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.model.summary import GateReport, Summary


@dataclass(slots=True)
class EvaluationMeta:
    """Identity and provenance of one evaluation, as stored.

    `fingerprint` is the suite fingerprint (comparability); `agent_fingerprints` the
    agent fingerprint of each agent, by label (what changed). `outline` is the suite's
    `SuiteOutline` as JSON: what analysing the stored runs again needs of the suite
    (cases, tags, priorities, gate thresholds) without its file.

    `status` is `running` until the evaluation ends, then `complete` when every planned
    run is stored, or `incomplete` when some never will be (a merge that lacked a shard);
    `planned_runs` and `stored_runs` say how many. `ci_event` is the CI event that started
    it (`schedule`, `push`, `pull_request`, ...; None outside CI): environment and branch
    come from that trusted context in `evals ci`, and evaluations of pull requests are
    never chosen as baselines.
    """

    id: str
    suite_id: str
    suite_version: str | None
    fingerprint: str
    description: str
    environment: str | None
    git_commit: str | None
    git_branch: str | None
    started_at: float
    ended_at: float | None = None
    agents: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    shard: str | None = None
    outline: dict[str, Any] | None = None
    agent_fingerprints: dict[str, str] = field(default_factory=dict)
    planned_runs: int | None = None
    stored_runs: int | None = None
    ci_event: str | None = None


@dataclass(slots=True)
class EvaluationResult:
    """Everything an evaluation produced; reports and the CLI read only this."""

    suite: Suite
    meta: EvaluationMeta
    records: list[RunRecord]
    summary: Summary
    gates: GateReport
    gate_config: GateConfig
    repeat: int
