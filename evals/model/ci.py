"""What a CI job of `evals ci` decided, as data: the step summary and the pull-request
comment are rendered from it (`evals.reports.ci`), and `ci.json` is it as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from evals.model.evaluation import EvaluationResult
from evals.model.triage import TriageAction

CiKind = Literal["pr", "nightly"]


@dataclass(slots=True)
class CiOutcome:
    """One CI job's verdict and everything the reader of its comment needs.

    `results` holds one comparison per agent for a pull request (each agent at the base
    against the same agent at the head), or tonight's evaluation followed by its
    comparison with the previous night. `notes` are sentences about where the baseline
    came from, what changed, what the gate can detect and how undetermined gates count.
    `exit_code` is the job's: 0 passed, 1 a gate failed, 2 the suite or the job's input
    is invalid, 3 a fault or an incomplete evaluation; a job stopped by an error has
    `verdict` `error` and the error as `title`. `key_notes` are the notes shown above the
    fold of the comment; `added_cases` and `changed_cases` the cases a pull request added
    or changed, which count in the absolute gates but not in the comparison;
    `base_agent_fingerprints` the compared agents' fingerprints at the merge base, as
    main's side computed them.
    """

    kind: CiKind
    suite_id: str
    verdict: str
    exit_code: int
    results: list[EvaluationResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    title: str = ""
    report_url: str | None = None
    run_url: str | None = None
    key_notes: list[str] = field(default_factory=list)
    added_cases: list[str] = field(default_factory=list)
    changed_cases: list[str] = field(default_factory=list)
    base_agent_fingerprints: dict[str, str] = field(default_factory=dict)
    case_triage: list[TriageAction] = field(default_factory=list)
    """The team's triage actions and annotations in force on the suite's cases (newest
    first), shown beside the cases the comment names."""
    decided_at: float = 0.0
    """When the job decided (seconds since the epoch): how old each triage action is."""

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON (each result by its evaluation id, verdict and gates)."""
        return {
            "kind": self.kind,
            "suite": self.suite_id,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "title": self.title,
            "notes": list(self.notes),
            "added_cases": list(self.added_cases),
            "changed_cases": list(self.changed_cases),
            "base_agent_fingerprints": dict(self.base_agent_fingerprints),
            "case_triage": [action.to_dict() for action in self.case_triage],
            "report_url": self.report_url,
            "run_url": self.run_url,
            "results": [
                {
                    "evaluation": result.meta.id,
                    "agents": list(result.meta.agents),
                    "status": result.meta.status,
                    "gates": result.gates.to_dict(),
                }
                for result in self.results
            ],
        }
