"""The triage marks a case carries wherever it appears: quarantined (until when, by whom),
a judge disagreement accepted, acknowledged.

Built from the triage actions in force (`evals.dashboard.triage.current`), for the
environment a page shows: a quarantine for `nightly` marks a case on nightly pages only,
one for every environment everywhere.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from evals.model.triage import TriageAction
from evals.team.triage import when

QUARANTINE = "#7a5af5"
ACCEPTED = "#1f9aa8"
ACKNOWLEDGED = "#6b7280"


def case_marks(
    actions: Iterable[TriageAction], environment: str | None
) -> dict[str, list[tuple[str, str, str]]]:
    """Per case, its marks as (text, colour, tooltip), quarantines first."""
    order = {"quarantine": 0, "accept_disagreement": 1, "acknowledge": 2}
    marks: dict[str, list[tuple[int, tuple[str, str, str]]]] = {}
    for action in actions:
        if action.case_id is None or action.kind not in order:
            continue
        if action.kind == "quarantine" and not action.applies_to(environment):
            continue
        by = f"by {action.actor} on {when(action.created_at)}: {action.reason}"
        if action.kind == "quarantine":
            scope = action.environment or "every environment"
            mark = (
                f"quarantined until {when(action.until)[:10]}",
                QUARANTINE,
                f"left out of the regression and P0 gates in {scope} until "
                f"{when(action.until)}, {by}",
            )
        elif action.kind == "accept_disagreement":
            mark = ("judge disagreement accepted", ACCEPTED, by)
        else:
            mark = ("acknowledged", ACKNOWLEDGED, by)
        marks.setdefault(action.case_id, []).append((order[action.kind], mark))
    return {
        case: [m for _, m in sorted(found, key=lambda x: x[0])] for case, found in marks.items()
    }


def marks_html(marks: list[tuple[str, str, str]]) -> str:
    """A case's marks as small badges (each with its tooltip), to put after its name."""
    return "".join(
        f' <span class="triage-badge" title="{html.escape(tip)}" style="background:{colour}22;'
        f"color:{colour};border:1px solid {colour}55;border-radius:0.5rem;padding:0 0.4rem;"
        f'font-size:0.8rem;font-weight:600;white-space:nowrap">{html.escape(text)}</span>'
        for text, colour, tip in marks
    )


def marks_text(marks: list[tuple[str, str, str]]) -> str:
    """A case's marks as plain words, for table cells."""
    return ", ".join(text for text, _, _ in marks)


def option_label(case_id: str, marks: list[tuple[str, str, str]]) -> str:
    """A case as a picker's option shows it: its id, then its marks in words (a picker's
    options are plain text), `refund-card · quarantined until 2026-12-24`."""
    return " · ".join([case_id, *(text for text, _, _ in marks)])
