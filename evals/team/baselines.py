"""The baseline from the command line: which evaluation it is and why, and accepting one.

A nightly becomes the baseline when its gates passed and it did not regress against the
baseline before it (`evals ci nightly` records the decision); a regression that is meant
(a deliberate trade-off, a harder suite) is made the baseline by a person:
`evals baseline accept ID --reason ...` appends an acknowledgement to the triage log
(who, when, why), which `evals triage remove` withdraws like any other action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evals.model.errors import SuiteError
from evals.model.triage import BASELINE_GATE, TriageAction
from evals.store.baselines import BaselineStatus, ineligible_reason
from evals.team.triage import new_action, record

if TYPE_CHECKING:
    from evals.store import Store, StoredEvaluation


def accept_baseline(
    store: Store, evaluation_id: str, actor: str, reason: str, now: float
) -> TriageAction:
    """Record that `actor` accepts evaluation `evaluation_id` as the baseline, for
    `reason`; refused (SuiteError) for an evaluation that can never be one."""
    meta = store.get_evaluation(evaluation_id)
    if meta is None:
        raise SuiteError(
            f"the store has no evaluation {evaluation_id!r}",
            fix="see `evals history` for the evaluation ids",
        )
    ineligible = ineligible_reason(meta)
    if ineligible is not None:
        raise SuiteError(
            f"evaluation {evaluation_id} cannot be accepted as the baseline ({ineligible})",
            fix="accept a complete nightly evaluation (see `evals history`)",
        )
    action = new_action(
        "acknowledge",
        meta.suite_id,
        actor,
        reason,
        now=now,
        evaluation_id=evaluation_id,
        gate=BASELINE_GATE,
    )
    return record(store, action)


@dataclass(frozen=True, slots=True)
class CurrentBaseline:
    """The baseline of one suite on one branch (None when it has none), and why; and the
    newest nightly when it is not the baseline, with why not."""

    suite_id: str
    branch: str | None
    baseline: StoredEvaluation | None
    status: BaselineStatus | None
    newest: StoredEvaluation | None
    newest_status: BaselineStatus | None


def current_baselines(store: Store, suite_id: str | None, branch: str) -> list[CurrentBaseline]:
    """The baseline of each suite (or of `suite_id`) on `branch`, with the newest nightly."""
    nightlies = [
        meta
        for meta in store.list_evaluations(
            suite_id=suite_id, environment="nightly", branch=branch, limit=None
        )
    ]
    statuses = store.baseline_statuses(nightlies)
    found = []
    for suite in sorted({meta.suite_id for meta in nightlies}):
        mine = [meta for meta in nightlies if meta.suite_id == suite]
        chosen = next((meta for meta in mine if statuses[meta.id].chosen), None)
        newest = mine[0]
        found.append(
            CurrentBaseline(
                suite,
                branch,
                chosen,
                statuses[chosen.id] if chosen else None,
                newest if newest is not chosen else None,
                statuses[newest.id] if newest is not chosen else None,
            )
        )
    return found


def describe(current: CurrentBaseline) -> list[str]:
    """The lines `evals baseline show` prints for one suite."""
    head = f"{current.suite_id} on {current.branch}: "
    if current.baseline is None or current.status is None:
        lines = [head + "no baseline yet"]
    else:
        lines = [head + f"baseline {current.baseline.id} ({current.status.reason})"]
    if current.newest is not None and current.newest_status is not None:
        lines.append(
            f"  newest nightly {current.newest.id} is not the baseline: "
            f"{current.newest_status.reason}"
        )
    return lines
