"""One evaluation as data: its identity (`EvaluationMeta`) and everything it produced
(`EvaluationResult`), which reports and the command line read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evals.model.gates import GateConfig
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.model.summary import GateReport, Summary
from evals.model.triage import TriageAction


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


RunOrder = Literal["plan", "rows", "cases"]
RUN_ORDERS: dict[str, tuple[str, ...]] = {
    "plan": ("case_index", "prompt_index", "agent_index", "repeat"),
    "rows": ("case_index", "repeat", "agent_index", "prompt_index"),
    "cases": ("case_index", "agent_index", "repeat", "prompt_index"),
}
"""The orders runs are read in, as the store's columns: the plan's; promptfoo's rows (each
test's repeats in turn, the columns agent-major); each case's runs of one agent together."""


def run_order_key(order: RunOrder) -> Callable[[RunRecord], tuple[int, ...]]:
    """The sort key of `order` for records held in memory."""
    names = RUN_ORDERS[order]

    def key(record: RunRecord) -> tuple[int, ...]:
        return tuple(
            record.key.repeat if name == "repeat" else getattr(record, name) for name in names
        )

    return key


class RunSource(Protocol):
    """Where an evaluation's every run can be read again, a batch at a time (the store)."""

    def iter_runs(self, order: RunOrder = "plan") -> Iterator[RunRecord]:
        """Every run, whole, in `order` (`RUN_ORDERS`)."""
        ...


@dataclass(slots=True)
class FailedConversations:
    """One agent's failed conversations on one case: how many, and the first one (in
    repeat order)."""

    agent: str
    case_id: str
    failed: int
    conversations: int
    first: RunRecord


@dataclass(slots=True)
class RunFacts:
    """What reports and the exit code read of an evaluation's runs besides its statistics:
    how many ran and passed, the response cache's (hits, runs) per agent, each agent's
    failed conversations per case, the cases that ran (their suite indices) and the
    repeats (the highest repeat's number, plus one), counted as the runs arrived."""

    runs: int = 0
    passed: int = 0
    case_indices: list[int] = field(default_factory=list)
    repeats: int = 0
    cache_hits: dict[str, tuple[int, int]] = field(default_factory=dict)
    conversations: list[FailedConversations] = field(default_factory=list)


@dataclass(slots=True)
class EvaluationResult:
    """Everything an evaluation produced; reports and the CLI read only this.

    `records` holds every run only when the evaluation kept them (a library caller's
    default); otherwise it is empty, `facts` holds what was counted of the runs, and the
    reports that list every run read them from `runs` (the store, in plan order).
    `counts` is the analysis's tally of the runs (`evals.analysis.cells.Tally`), which a
    staged run's next stage goes on counting.
    `annotations` are people's annotations (overrides, thumbs, comments) in force on the
    runs the result reads, when it was read from a store (`evals compare`, `evals regrade`),
    newest first: reports list them beside the verdict, and no gate reads them.
    """

    suite: Suite
    meta: EvaluationMeta
    records: list[RunRecord]
    summary: Summary
    gates: GateReport
    gate_config: GateConfig
    repeat: int
    facts: RunFacts | None = None
    runs: RunSource | None = None
    counts: Any = None
    annotations: list[TriageAction] = field(default_factory=list)
