"""What two evaluations share: the cases both suites grade alike, and what differs.

Two evaluations of the same suite fingerprint compare on every case. When the suite
changed between them, only the cases both suites define identically (same id, same case
fingerprint: vars, assertions, options and the files they name) compare; the others
are listed, as are changed prompts and gate thresholds. Agent fingerprints say which
agents changed, which is what a comparison is for, so they are reported and never
refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.model.suite import SuiteOutline


@dataclass(slots=True)
class SuiteDifferences:
    """How the candidate's suite differs from the baseline's, case by case."""

    same_suite: bool
    shared: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    prompts_changed: bool = False
    gates_changed: bool = False
    matched_by_id: bool = False

    def lines(self, limit: int = 8) -> list[str]:
        """One sentence per difference, for reports (case lists cut at `limit`)."""
        if self.same_suite:
            return []
        out = [f"the suite changed: compared on the {len(self.shared)} case(s) both versions share"]
        if self.matched_by_id:
            out.append(
                "one evaluation was stored without case fingerprints: cases are matched by id, "
                "so a case whose vars or assertions changed is compared too"
            )
        for what, ids in (
            ("only in the candidate's suite (in its own gates, not compared)", self.added),
            ("only in the baseline's suite (not compared)", self.removed),
            (
                "changed (vars, assertions or their files; in the candidate's own gates, "
                "not compared)",
                self.changed,
            ),
        ):
            if ids:
                shown = ", ".join(ids[:limit]) + (
                    f", … {len(ids) - limit} more" if len(ids) > limit else ""
                )
                out.append(f"{len(ids)} case(s) {what}: {shown}")
        if self.prompts_changed:
            out.append(
                "the prompts changed: the shared cases compare the agents with their own prompts"
            )
        if self.gates_changed:
            out.append("the gate thresholds changed: the candidate suite's thresholds decide")
        return out


def suite_differences(baseline: SuiteOutline, candidate: SuiteOutline) -> SuiteDifferences:
    """The cases two suite outlines share and how they differ.

    An outline stored before case fingerprints were has none; its cases are then matched
    by id alone, and the differences say so.
    """
    if baseline.fingerprint == candidate.fingerprint:
        return SuiteDifferences(True, shared=[c.id for c in candidate.cases])
    before = {c.id: c.fingerprint for c in baseline.cases}
    after = {c.id: c.fingerprint for c in candidate.cases}
    legacy = not any(before.values()) or not any(after.values())
    differences = SuiteDifferences(False, matched_by_id=legacy)
    for case_id, fp in after.items():
        if case_id not in before:
            differences.added.append(case_id)
        elif legacy or fp == before[case_id]:
            differences.shared.append(case_id)
        else:
            differences.changed.append(case_id)
    differences.removed = [case_id for case_id in before if case_id not in after]
    differences.prompts_changed = baseline.prompts_fingerprint != candidate.prompts_fingerprint
    base_gates = baseline.gates.to_dict() if baseline.gates else None
    cand_gates = candidate.gates.to_dict() if candidate.gates else None
    differences.gates_changed = base_gates != cand_gates
    return differences


def agent_change(label: str, before: str | None, after: str | None) -> str:
    """One sentence on an agent's fingerprint between two evaluations."""
    if not before or not after:
        return f"agent {label}: fingerprint unknown for one side (stored before fingerprints)"
    if before == after:
        return f"agent {label}: unchanged (fingerprint {after[:12]})"
    return f"agent {label}: changed (fingerprint {before[:12]} → {after[:12]})"
