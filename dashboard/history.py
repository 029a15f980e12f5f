"""Since when does a case or tag regress? A walk back over stored verdicts.

The verdicts are those each evaluation stored (`group_verdicts`, copied from its summary);
nothing is estimated here. Walking from the newest evaluation back, a group's current
run of identical verdicts ends at the first evaluation whose verdict differs, or that has
no verdict for it: that evaluation is the last one without the change, the one after it
the first with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class Onset:
    """When a group's current verdict began.

    `first` is the earliest evaluation of the unbroken run of that verdict, `streak` its
    length in evaluations. `last_good` is the evaluation just before it, with
    `last_good_verdict` (`absent` when it did not decide the group), or None when the run
    reaches back to the oldest evaluation of the window: the change is at least as old.
    """

    verdict: str
    streak: int
    first: dict[str, Any]
    last_good: dict[str, Any] | None
    last_good_verdict: str | None

    @property
    def open_ended(self) -> bool:
        """True when every evaluation in the window had the verdict."""
        return self.last_good is None


def onsets(history: dict[str, Any]) -> dict[tuple[str, str], Onset]:
    """The onset of the current verdict of every (kind, name) decided by the newest
    evaluation of `history` (as `DashboardQueries.history` returns it)."""
    listed = history["evaluations"]
    if not listed:
        return {}
    verdicts: dict[tuple[str, str, str], str] = {
        (row["evaluation_id"], row["kind"], row["name"]): row["verdict"]
        for row in history["verdicts"]
    }
    newest = listed[0]["id"]
    found: dict[tuple[str, str], Onset] = {}
    for evaluation_id, kind, name in verdicts:
        if evaluation_id != newest:
            continue
        current = verdicts[(newest, kind, name)]
        streak = 1
        last_good: dict[str, Any] | None = None
        last_verdict: str | None = None
        for older in listed[1:]:
            verdict = verdicts.get((older["id"], kind, name), ABSENT)
            if verdict != current:
                last_good, last_verdict = older, verdict
                break
            streak += 1
        found[(kind, name)] = Onset(current, streak, listed[streak - 1], last_good, last_verdict)
    return found
