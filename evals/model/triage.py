"""Triage: what a team decided about a regression, a flaky case or a judge's verdict.

Every action is stored with who took it, when, why and (for a quarantine) until when, in
an append-only log: removing an action is itself an action that names its target. A
quarantined case keeps running and being reported with its own interval, but the
regression and P0 gates leave it out until its expiry; after that it blocks again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

TriageKind = Literal["acknowledge", "quarantine", "accept_disagreement", "remove"]
TRIAGE_KINDS: tuple[str, ...] = ("acknowledge", "quarantine", "accept_disagreement")
EXPIRING_WITHIN_S = 24 * 3600.0


@dataclass(frozen=True, slots=True)
class TriageAction:
    """One triage action as stored (`id` None until stored).

    `environment` None applies to every environment. `target_id` is the action a `remove`
    withdraws. Times are seconds since the epoch.
    """

    kind: TriageKind
    suite_id: str
    actor: str
    reason: str
    created_at: float
    case_id: str | None = None
    environment: str | None = None
    evaluation_id: str | None = None
    gate: str | None = None
    until: float | None = None
    link: str | None = None
    target_id: int | None = None
    id: int | None = None

    def applies_to(self, environment: str | None) -> bool:
        """True when the action covers `environment` (an action for every environment
        covers all; one for an environment covers only that one)."""
        return self.environment is None or self.environment == environment

    def is_active(self, now: float) -> bool:
        """True while the action is in force: a quarantine until its expiry, others always."""
        return self.until is None or self.until > now

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


def quarantine_sentence(quarantines: list[TriageAction], now: float) -> str:
    """ "3 case(s) quarantined, 1 expiring within a day" for the active quarantines."""
    expiring = sum(
        1 for q in quarantines if q.until is not None and q.until - now <= EXPIRING_WITHIN_S
    )
    return f"{len(quarantines)} case(s) quarantined, {expiring} expiring within a day"
