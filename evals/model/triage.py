"""Triage: what a team decided about a regression, a flaky case or a judge's verdict, and
what people said of single runs (annotations).

Every action is stored with who took it, when, why and (for a quarantine) until when, in
an append-only log: removing an action is itself an action that names its target. A
quarantined case keeps running and being reported with its own interval, but the
regression and P0 gates leave it out until its expiry; after that it blocks again.

Annotations are about one run (evaluation, case, agent, prompt, repeat): an `override`
of its verdict (`label` pass or fail, with a reason), a `rate` (`label` up or down, with
an optional comment) and a `comment`. No gate counts them: they are people's labels, shown
beside the run and read by `evals triage labels` as the human side of `evals calibrate`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

TriageKind = Literal[
    "acknowledge", "quarantine", "accept_disagreement", "remove", "override", "rate", "comment"
]
TRIAGE_KINDS: tuple[str, ...] = ("acknowledge", "quarantine", "accept_disagreement")
ANNOTATION_KINDS: tuple[str, ...] = ("override", "rate", "comment")
# The labels of each annotation kind that takes one.
ANNOTATION_LABELS: dict[str, tuple[str, ...]] = {
    "override": ("pass", "fail"),
    "rate": ("up", "down"),
}
EXPIRING_WITHIN_S = 24 * 3600.0
# An acknowledgement of an evaluation under this gate name accepts it as the baseline
# (`evals baseline accept`): a nightly the gates did not choose becomes the one pull
# requests and the next nightly compare with.
BASELINE_GATE = "baseline"


@dataclass(frozen=True, slots=True)
class TriageAction:
    """One triage action as stored (`id` None until stored).

    `environment` None applies to every environment. `target_id` is the action a `remove`
    withdraws. An annotation names its run by `evaluation_id`, `case_id`, `agent`,
    `prompt_id` and `repeat` (from 0), and holds its `label`. Times are seconds since the
    epoch.
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
    agent: str | None = None
    prompt_id: str | None = None
    repeat: int | None = None
    label: str | None = None
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

    @property
    def accepts_baseline(self) -> bool:
        """True for a triager's acceptance of evaluation `evaluation_id` as the baseline."""
        return (
            self.kind == "acknowledge"
            and self.gate == BASELINE_GATE
            and self.evaluation_id is not None
        )


def quarantine_sentence(quarantines: list[TriageAction], now: float) -> str:
    """ "3 case(s) quarantined, 1 expiring within a day" for the active quarantines."""
    expiring = sum(
        1 for q in quarantines if q.until is not None and q.until - now <= EXPIRING_WITHIN_S
    )
    return f"{len(quarantines)} case(s) quarantined, {expiring} expiring within a day"


# What every report says beside people's annotations of runs.
ANNOTATIONS_CHANGE_NO_GATE = (
    "Annotations are people's labels of single runs: they change no verdict and no gate "
    "(the graders decide; to take a case out of the gates, quarantine it). Overrides and "
    "thumbs are read by `evals triage labels` as the human side of `evals calibrate`."
)


def annotation_words(action: TriageAction) -> str:
    """What an annotation says of its run, without who and when: `verdict overridden to
    fail`, `thumb up`, `comment`."""
    return {
        "override": f"verdict overridden to {action.label}",
        "rate": f"thumb {action.label}",
        "comment": "comment",
    }.get(action.kind, action.kind)
