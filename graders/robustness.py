"""Robustness of one run, read from its trajectory: the agents book's chapter 10 metrics
``retry_success``, ``fallback_correct`` and ``partial_task_handled``.

Each is a question that applies to some runs only, so each answer is True, False or None
(the run never met the situation):

- retry: a tool call failed and the agent called the same tool again. True when every tool
  retried this way succeeded on a later call.
- fallback: a tool failed and never succeeded afterwards, and its contract names
  ``fallbacks`` (other tools that can stand in for it). True when, for each such tool, a
  declared fallback succeeded later in the run; calling anything else is not a fallback.
- partial: the run could not do the whole task, because a tool error stayed unresolved (no
  later success of that tool nor of a declared fallback) or because a guardrail cut it
  (``max_steps``, ``budget_exhausted``). True when it still ended on its own terms: an
  answer (stop reason ``done`` with a non-empty output) or a stop at an approval request.

``timeout_rate`` is about runs, not steps: the share of runs the harness cut at the
per-run timeout (error rows of kind ``timeout``), counted by the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.graders.contracts import ToolContract
from evals.model.trajectory import Step, tool_calls

CUT_SHORT = frozenset({"max_steps", "budget_exhausted"})


@dataclass(frozen=True, slots=True)
class Robustness:
    """A run's answers to the three robustness questions (None: not applicable)."""

    retry: bool | None
    fallback: bool | None
    partial: bool | None

    def to_dict(self) -> dict[str, bool | None]:
        """The JSON form kept with the run's scorecard."""
        return {"retry": self.retry, "fallback": self.fallback, "partial": self.partial}


def _succeeded_after(calls: list[Step], index: int, names: set[str]) -> bool:
    return any(c.name in names and c.ok for c in calls[index + 1 :])


def run_robustness(
    trajectory: list[Step],
    stop_reason: str | None,
    output: Any,
    contracts: dict[str, ToolContract],
) -> Robustness:
    """The run's retry, fallback and partial-task answers (see the module docstring)."""
    calls = tool_calls(trajectory)
    first_failure: dict[str, int] = {}
    for index, call in enumerate(calls):
        if not call.ok:
            first_failure.setdefault(call.name, index)
    retried = {
        name: index
        for name, index in first_failure.items()
        if any(c.name == name for c in calls[index + 1 :])
    }
    retry = (
        None
        if not retried
        else all(_succeeded_after(calls, index, {name}) for name, index in retried.items())
    )
    unresolved = [
        (i, c) for i, c in enumerate(calls) if not c.ok and not _succeeded_after(calls, i, {c.name})
    ]
    declared = {
        i: set(contracts[c.name].fallbacks)
        for i, c in unresolved
        if c.name in contracts and contracts[c.name].fallbacks
    }
    recovered = {i for i, names in declared.items() if _succeeded_after(calls, i, names)}
    fallback = None if not declared else recovered == set(declared)
    partial_task = len(recovered) < len(unresolved) or stop_reason in CUT_SHORT
    answered = stop_reason == "done" and bool(str(output or "").strip())
    partial = None if not partial_task else answered or stop_reason == "approval_required"
    return Robustness(retry, fallback, partial)
