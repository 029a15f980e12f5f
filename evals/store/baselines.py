"""Which stored evaluation is the baseline, and why.

The nightly stores every evaluation, but only one that earned it becomes the baseline
pull requests and the next nightly compare with:

- it can be one at all: complete, unsharded, not started by a pull request, not
  regraded (`is_baseline_eligible`);
- a triager accepted it (`evals baseline accept ID --reason ...`: an acknowledgement of
  the evaluation under the gate name `baseline` in the triage log, with who and why), or
- the nightly that stored it chose it (`config.baseline`: its own blocking gates passed
  and it did not regress against the baseline before it), or
- nothing decided about it (an evaluation of `evals run --env nightly`, or one stored
  before baselines were chosen) and its gates passed.

The newest evaluation of a (suite, branch) that is a baseline by these rules is *the*
baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evals.model.evaluation import EvaluationMeta
from evals.model.triage import TriageAction

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target", "merge_group"})
# Where a nightly records its decision in the evaluation's config.
DECISION = "baseline"


@dataclass(frozen=True, slots=True)
class BaselineStatus:
    """Whether an evaluation may serve as a baseline, and why, in a few words."""

    chosen: bool
    reason: str


def ineligible_reason(meta: EvaluationMeta) -> str | None:
    """Why the evaluation can never be a baseline, or None when it can."""
    if meta.status != "complete":
        return f"never a baseline: {meta.status}"
    if meta.shard is not None:
        return f"never a baseline: shard {meta.shard}"
    if meta.ci_event in PULL_REQUEST_EVENTS:
        return "never a baseline: a pull request's"
    if (meta.config or {}).get("regraded_from"):
        return "never a baseline: regraded"
    return None


def is_baseline_eligible(meta: EvaluationMeta) -> bool:
    """True for a complete, unsharded evaluation that no pull request started or regraded."""
    return ineligible_reason(meta) is None


def baseline_status(
    meta: EvaluationMeta, gates: Mapping[str, Any] | None, acceptance: TriageAction | None
) -> BaselineStatus:
    """Whether `meta` is a baseline (with its stored gate report `gates`, and the
    triager's acceptance of it, if any), and why."""
    ineligible = ineligible_reason(meta)
    if ineligible is not None:
        return BaselineStatus(False, ineligible)
    if acceptance is not None:
        return BaselineStatus(True, f"accepted by {acceptance.actor}: {acceptance.reason}")
    decision = (meta.config or {}).get(DECISION)
    if isinstance(decision, dict) and "chosen" in decision:
        return BaselineStatus(bool(decision["chosen"]), str(decision.get("reason") or ""))
    if gates is not None and gates.get("passed") is False:
        return BaselineStatus(False, f"its gates did not pass ({gates.get('verdict')})")
    return BaselineStatus(True, "its gates passed")


def acceptances(actions: list[TriageAction]) -> dict[str, TriageAction]:
    """The acceptances in force among `actions` (newest first), by evaluation id."""
    found: dict[str, TriageAction] = {}
    for action in actions:
        if action.accepts_baseline and action.evaluation_id not in found:
            found[str(action.evaluation_id)] = action
    return found
