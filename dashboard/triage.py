"""The dashboard's triage data: reads over the viewer's read-only connection, and the
one audited write path.

Pages read the triage log through a store opened read-only (`open_viewer_store`), like
every other page. Only `submit` and `withdraw` write, each through
`evals.team.triage` (the checks `evals triage add` applies) on a separate connection
(`$EVALS_TRIAGE_STORE_URL`, else the store's URL: for PostgreSQL a role that may only
insert triage actions), and only for a visitor with the triager role; each action
records the visitor's identity from the login, never one typed in a form.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import widgets
from evals.dashboard.auth import Visitor
from evals.model.triage import TriageAction, annotation_words
from evals.store import Store, open_store, open_viewer_store
from evals.team import triage

READ_TTL_S = 10


@st.cache_resource(show_spinner=False)
def _viewer(url: str) -> Store:
    return open_viewer_store(url)


@st.cache_resource(show_spinner=False)
def _writer(url: str) -> Store:
    return open_store(url)


def triage_url(url: str) -> str:
    """The store URL triage actions are written through."""
    return os.environ.get("EVALS_TRIAGE_STORE_URL") or url


@st.cache_data(ttl=READ_TTL_S, show_spinner=False)
def current(url: str, suite_id: str) -> list[TriageAction]:
    """The suite's actions in force (not removed, not expired), newest first."""
    return _viewer(url).triage.current(suite_id, now=time.time())


@st.cache_data(ttl=READ_TTL_S, show_spinner=False)
def history(url: str, suite_id: str | None) -> list[TriageAction]:
    """Every action (removals too), newest first; every suite for None."""
    return _viewer(url).triage.history(suite_id)


def _refuse(person: Visitor) -> None:
    if not person.can_triage:
        raise PermissionError(f"{person.actor} may not record triage actions")


def submit(
    person: Visitor, url: str, kind: str, suite_id: str, reason: str, **fields: Any
) -> TriageAction:
    """Record a triage action by `person` (a triager), checked as on the command line."""
    _refuse(person)
    action = triage.new_action(kind, suite_id, person.actor, reason, now=time.time(), **fields)
    stored = triage.record(_writer(triage_url(url)), action)
    st.cache_data.clear()
    return stored


def annotate(
    person: Visitor, url: str, kind: str, suite_id: str, comment: str, **run: Any
) -> TriageAction:
    """Record `person`'s (a triager's) annotation of one run: an override, a thumb or a
    comment (`run`: evaluation_id, case_id, agent, prompt_id, repeat, label)."""
    _refuse(person)
    action = triage.new_annotation(kind, suite_id, person.actor, comment, now=time.time(), **run)
    stored = triage.record(_writer(triage_url(url)), action)
    st.cache_data.clear()
    return stored


def run_annotations(
    actions: list[TriageAction], evaluation_id: str, case_id: str
) -> dict[tuple[str, str, int], list[TriageAction]]:
    """The annotations in force of one case's runs in one evaluation, by (agent, prompt,
    repeat), newest first."""
    found: dict[tuple[str, str, int], list[TriageAction]] = {}
    for action in actions:
        if action.evaluation_id != evaluation_id or action.case_id != case_id:
            continue
        if action.agent is None or action.repeat is None:
            continue
        found.setdefault((action.agent, action.prompt_id or "", action.repeat), []).append(action)
    return found


def annotation_text(action: TriageAction) -> str:
    """One annotation in words: `override to fail by ann@example.com, 2026-03-08 09:12 UTC:
    the total is wrong`."""
    what = annotation_words(action)
    said = f": {action.reason}" if action.reason else ""
    return f"{what} by {action.actor}, {triage.when(action.created_at)}{said}"


def withdraw(person: Visitor, url: str, action_id: int, reason: str) -> TriageAction:
    """Record the removal of an action by `person` (a triager)."""
    _refuse(person)
    removal = triage.withdraw(_writer(triage_url(url)), action_id, person.actor, reason)
    st.cache_data.clear()
    return removal


def frame(actions: list[TriageAction], now: float) -> pd.DataFrame:
    """The actions as a table of plain text (shown as text, never as markup)."""
    rows = [
        {
            "id": a.id,
            "when": triage.when(a.created_at),
            "who": a.actor,
            "action": a.kind,
            "removes": a.target_id,
            "suite": a.suite_id,
            "case": a.case_id,
            "environment": a.environment or ("" if a.kind == "remove" else "all"),
            "gate": a.gate,
            "evaluation": a.evaluation_id,
            "until": triage.when(a.until),
            "left": triage.remaining(a.until, now),
            "why": a.reason,
            "link": a.link,
        }
        for a in actions
    ]
    return pd.DataFrame(rows, columns=list(rows[0]) if rows else ["id"])


def csv_bytes(table: pd.DataFrame) -> bytes:
    """The table as CSV, with cells a spreadsheet would run as formulas quoted."""
    return widgets.csv_text(table).encode("utf-8")
