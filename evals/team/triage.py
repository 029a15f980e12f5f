"""Triage from the command line and the dashboard: one validated, audited write path.

`new_action` and `new_annotation` check an action before anything is written (a
quarantine needs a case and an expiry in the future, every action a reason, links are
http(s)); `record` appends it to the store's triage log with who and when; `withdraw`
records a removal. `evals triage list|add|annotate|remove` and the dashboard's triage
controls all go through these, and `quarantines` is what `evals run` reads before deciding
its gates.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from evals.common.clock import utc_text
from evals.model.defaults import GATE_ENVIRONMENTS
from evals.model.errors import SuiteError
from evals.model.triage import (
    ANNOTATION_KINDS,
    ANNOTATION_LABELS,
    TRIAGE_KINDS,
    TriageAction,
    TriageKind,
)

if TYPE_CHECKING:
    from evals.store import Store

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([dhm])")
_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0}
MAX_TEXT = 4000
# A quarantine is a pause while a flaky case is fixed, not a way to switch a case off:
# it lasts at most this long, and is renewed (a new, recorded action) if it must go on.
MAX_QUARANTINE_DAYS = 90


_UNTIL_FIX = (
    f"give a duration of at most {MAX_QUARANTINE_DAYS} days (7d, 12h, 30m) or an ISO date or "
    "time within them (2026-12-24, 2026-12-24T18:00Z)"
)


def parse_until(text: str, now: float) -> float:
    """An expiry as seconds since the epoch, from a duration after `now` (`7d`, `12h`,
    `30m`), an ISO date (midnight UTC starting that day) or an ISO date and time (UTC
    unless it names its offset). A duration or a time that no quarantine may last
    (beyond MAX_QUARANTINE_DAYS, or one no clock can hold) is refused here, before
    anything is stored."""
    value = text.strip()
    duration = _DURATION.fullmatch(value)
    if duration:
        seconds = float(duration.group(1)) * _UNITS[duration.group(2)]
        if not math.isfinite(seconds) or seconds > MAX_QUARANTINE_DAYS * 86400.0:
            raise SuiteError(
                f"a quarantine lasts at most {MAX_QUARANTINE_DAYS} days, and the expiry "
                f"{text!r} is further away",
                fix=_UNTIL_FIX,
            )
        return now + seconds
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    except (ValueError, OverflowError):
        raise SuiteError(f"cannot read the expiry {text!r}", fix=_UNTIL_FIX) from None


def _text(value: str | None, what: str) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > MAX_TEXT:
        raise SuiteError(f"the {what} is longer than {MAX_TEXT} characters", fix="shorten it")
    return value.strip()


def new_action(
    kind: str,
    suite_id: str,
    actor: str,
    reason: str,
    *,
    now: float,
    case_id: str | None = None,
    environment: str | None = None,
    evaluation_id: str | None = None,
    gate: str | None = None,
    until: float | None = None,
    link: str | None = None,
) -> TriageAction:
    """A checked triage action, or a SuiteError saying what to fix.

    Every action needs a reason and an actor; a quarantine needs a case and an expiry
    after `now`; an acknowledgement names a case, a gate or an evaluation; an accepted
    judge disagreement names a case. Links must be http(s) URLs, so a shown link can
    never run script.
    """
    if kind not in TRIAGE_KINDS:
        raise SuiteError(f"unknown triage action {kind!r}", fix=f"use one of {TRIAGE_KINDS}")
    why = _text(reason, "reason")
    who = _text(actor, "actor")
    if why is None or who is None:
        raise SuiteError("a triage action needs a reason and who took it", fix="give --reason")
    if environment is not None and environment not in GATE_ENVIRONMENTS:
        raise SuiteError(
            f"unknown environment {environment!r}", fix=f"use one of {', '.join(GATE_ENVIRONMENTS)}"
        )
    link = _text(link, "link")
    if link is not None and (urlparse(link).scheme not in ("http", "https") or " " in link):
        raise SuiteError(f"the link {link!r} is not an http(s) URL", fix="give an https:// link")
    case_id, gate, evaluation_id = (
        _text(case_id, "case id"),
        _text(gate, "gate"),
        _text(evaluation_id, "evaluation id"),
    )
    if kind == "quarantine":
        if case_id is None or until is None:
            raise SuiteError(
                "a quarantine needs a case and an expiry", fix="give --case and --until"
            )
        if until <= now:
            raise SuiteError(
                "the quarantine's expiry is not in the future", fix="give a later --until"
            )
        if until - now > MAX_QUARANTINE_DAYS * 86400.0:
            raise SuiteError(
                f"a quarantine lasts at most {MAX_QUARANTINE_DAYS} days, and this one would "
                f"end {when(until)}",
                fix=f"give an --until within {MAX_QUARANTINE_DAYS} days (90d) and renew the "
                "quarantine if the case is still flaky then",
            )
    elif until is not None:
        raise SuiteError(f"only a quarantine has an expiry, not {kind}", fix="drop --until")
    if kind == "acknowledge" and not (case_id or gate or evaluation_id):
        raise SuiteError(
            "an acknowledgement names what it acknowledges",
            fix="give --case, --gate or --evaluation",
        )
    if kind == "accept_disagreement" and case_id is None:
        raise SuiteError("an accepted judge disagreement names its case", fix="give --case")
    checked: TriageKind = kind  # type: ignore[assignment]
    return TriageAction(
        kind=checked,
        suite_id=suite_id,
        actor=who,
        reason=why,
        created_at=now,
        case_id=case_id,
        environment=environment,
        evaluation_id=evaluation_id,
        gate=gate,
        until=until,
        link=link,
    )


def new_annotation(
    kind: str,
    suite_id: str,
    actor: str,
    comment: str,
    *,
    now: float,
    evaluation_id: str,
    case_id: str,
    agent: str,
    prompt_id: str,
    repeat: int,
    label: str | None = None,
) -> TriageAction:
    """A checked annotation of one run, or a SuiteError saying what to fix.

    An `override` sets the run's verdict as a person reads it (`label` pass or fail) and
    needs a reason; a `rate` is a thumb (`label` up or down) with an optional comment; a
    `comment` is a remark. None of them changes a verdict or a gate."""
    if kind not in ANNOTATION_KINDS:
        raise SuiteError(f"unknown annotation {kind!r}", fix=f"use one of {ANNOTATION_KINDS}")
    who = _text(actor, "actor")
    if who is None:
        raise SuiteError("an annotation needs who made it", fix="log in, or give --by")
    said = _text(comment, "comment") or ""
    allowed = ANNOTATION_LABELS.get(kind)
    if allowed is not None and label not in allowed:
        raise SuiteError(f"a {kind} needs a label: one of {', '.join(allowed)}", fix="choose one")
    if allowed is None and label is not None:
        raise SuiteError(f"a {kind} takes no label", fix="leave the label out")
    if kind in ("override", "comment") and not said:
        raise SuiteError(f"a {kind} needs a reason", fix="say why")
    if repeat < 0 or not (evaluation_id and case_id and agent):
        raise SuiteError(
            "an annotation names its run: evaluation, case, agent, prompt and repeat",
            fix="annotate a run from the dashboard's Case page",
        )
    checked: TriageKind = kind  # type: ignore[assignment]
    return TriageAction(
        kind=checked,
        suite_id=suite_id,
        actor=who,
        reason=said,
        created_at=now,
        case_id=case_id,
        evaluation_id=evaluation_id,
        agent=agent,
        prompt_id=prompt_id,
        repeat=repeat,
        label=label,
    )


def record(store: Store, action: TriageAction) -> TriageAction:
    """Append a checked action to the store's triage log; returns it with its id.

    The suite must have an evaluation in the store, and a case must be one of the
    suite's latest evaluation, so a mistyped id is refused rather than never matching;
    an annotation's run must be stored.
    """
    if action.kind in ANNOTATION_KINDS:
        found = store.load_runs(
            action.evaluation_id or "",
            case_id=action.case_id,
            agent=action.agent,
            repeat=action.repeat,
        )
        if not any(r.key.prompt_id == action.prompt_id for r in found):
            raise SuiteError(
                f"no stored run of case {action.case_id!r} by {action.agent!r} (prompt "
                f"{action.prompt_id!r}, repeat {action.repeat}) in evaluation "
                f"{action.evaluation_id!r}",
                fix="annotate a run the store holds",
            )
        return store.triage.record(action)
    latest = store.list_evaluations(suite_id=action.suite_id, limit=1)
    if not latest:
        raise SuiteError(
            f"the store has no evaluation of suite {action.suite_id!r}",
            fix="see `evals history` for the suite ids",
        )
    if action.case_id is not None:
        stored = store.get_evaluation(latest[0].id)
        cases = [c.id for c in stored.suite_outline().cases] if stored else []
        if action.case_id not in cases:
            shown = ", ".join(cases[:8]) + (", ..." if len(cases) > 8 else "")
            raise SuiteError(
                f"suite {action.suite_id!r} has no case {action.case_id!r} in its latest "
                f"evaluation {latest[0].id}",
                fix=f"use one of: {shown}",
            )
    return store.triage.record(action)


def annotate_run(
    store: Store,
    kind: str,
    actor: str,
    comment: str,
    *,
    now: float,
    evaluation_id: str,
    case_id: str,
    agent: str,
    repeat: int,
    prompt_id: str | None = None,
    label: str | None = None,
) -> TriageAction:
    """Check and record `actor`'s annotation of one stored run (`evals triage annotate`):
    the suite is the evaluation's, and the prompt, when not named, the run's only one."""
    meta = store.get_evaluation(evaluation_id)
    if meta is None:
        raise SuiteError(
            f"the store has no evaluation {evaluation_id!r}", fix="see `evals history`"
        )
    if prompt_id is None:
        runs = store.load_runs(evaluation_id, case_id=case_id, agent=agent, repeat=repeat)
        prompts = sorted({r.key.prompt_id for r in runs})
        if len(prompts) > 1:
            raise SuiteError(
                f"the run of case {case_id!r} by {agent!r} (repeat {repeat + 1}) has "
                f"{len(prompts)} prompts",
                fix=f"name one with --prompt: {', '.join(prompts)}",
            )
        prompt_id = prompts[0] if prompts else ""
    action = new_annotation(
        kind,
        meta.suite_id,
        actor,
        comment,
        now=now,
        evaluation_id=evaluation_id,
        case_id=case_id,
        agent=agent,
        prompt_id=prompt_id,
        repeat=repeat,
        label=label,
    )
    return record(store, action)


def withdraw(store: Store, action_id: int, actor: str, reason: str) -> TriageAction:
    """Record the removal of action `action_id` (a SuiteError when there is none to remove)."""
    why, who = _text(reason, "reason"), _text(actor, "actor")
    if why is None or who is None:
        raise SuiteError("a removal needs a reason and who took it", fix="give --reason")
    target = store.triage.get(action_id)
    if target is None:
        raise SuiteError(f"no triage action {action_id}", fix="see `evals triage list --all`")
    removal = TriageAction(
        kind="remove",
        suite_id=target.suite_id,
        actor=who,
        reason=why,
        created_at=time.time(),
        target_id=action_id,
    )
    try:
        return store.triage.record(removal)
    except ValueError as exc:
        raise SuiteError(str(exc), fix="see `evals triage list --all`") from None


@contextmanager
def opened(store_url: str | None) -> Iterator[Store]:
    """The store at `store_url`, closed afterwards."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        yield store
    finally:
        store.close()


def quarantines(store_url: str | None, suite_id: str, now: float) -> list[TriageAction]:
    """The suite's quarantines not removed nor expired at `now` (any environment), read
    on a read-only connection."""
    from evals.store import open_store

    store = open_store(store_url, read_only=True)
    try:
        return store.triage.quarantines(suite_id, now=now)
    finally:
        store.close()


def case_actions(store_url: str | None, suite_id: str, now: float) -> list[TriageAction]:
    """What the team said of the suite's cases, in force at `now`, newest first: the
    triage actions on a case (quarantines, acknowledgements, accepted disagreements) and
    the annotations of any of its runs, read on a read-only connection."""
    from evals.store import open_store

    store = open_store(store_url, read_only=True)
    try:
        return [a for a in store.triage.current(suite_id, now=now) if a.case_id is not None]
    finally:
        store.close()


def annotations_of(store: Store, evaluation_ids: Sequence[str], now: float) -> list[TriageAction]:
    """People's annotations in force (not removed) of the runs of these evaluations, newest
    first: what the reports written from stored evaluations list beside the verdict."""
    wanted = set(evaluation_ids)
    return [
        action
        for action in store.triage.current(now=now)
        if action.kind in ANNOTATION_KINDS and action.evaluation_id in wanted
    ]


def listing(
    store_url: str | None, suite_id: str | None, everything: bool, now: float
) -> list[TriageAction]:
    """The actions in force (or, with `everything`, the whole log with removals), newest first."""
    with opened(store_url) as store:
        if everything:
            return store.triage.history(suite_id)
        return store.triage.current(suite_id, now=now)


def when(seconds: float | None) -> str:
    """A time as `YYYY-MM-DD HH:MM UTC` (empty for None); any stored float is shown."""
    return utc_text(seconds)


def remaining(until: float | None, now: float) -> str:
    """How long until an expiry, to the minute (`2d 3h`, `expired`); any stored float is
    shown (`never` for one too far away to count in days)."""
    if until is None:
        return ""
    left = until - now
    if left != left:
        return "not a time"
    if left <= 0:
        return "expired"
    if left >= timedelta.max.total_seconds():
        return "never"
    span = timedelta(seconds=int(left))
    hours, rest = divmod(span.seconds, 3600)
    return f"{span.days}d {hours}h" if span.days else f"{hours}h {rest // 60}m"


def print_actions(actions: list[TriageAction], now: float) -> None:
    """Print triage actions as a table, one line each, newest first."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "kind", "suite", "case", "env", "until", "left", "by", "when", "reason"):
        table.add_column(column, overflow="fold")
    for action in actions:
        target = f" #{action.target_id}" if action.target_id is not None else ""
        target += f" {action.label}" if action.label else ""
        reason = action.reason + (f" ({action.link})" if action.link else "")
        table.add_row(
            *(
                escape(text)
                for text in (
                    str(action.id),
                    action.kind + target,
                    action.suite_id,
                    action.case_id or action.gate or action.evaluation_id or "",
                    action.environment or "all",
                    when(action.until),
                    remaining(action.until, now),
                    action.actor,
                    when(action.created_at),
                    reason,
                )
            )
        )
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(table)
