"""Audit trail: every triage action with who, when, why and until when, filterable and
exportable as CSV.

Reasons, links and names are the users' own text: shown in a table as plain text, never
rendered as Markdown or HTML, and exported with formula-like cells quoted.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

import streamlit as st

from evals.dashboard import data, selection, triage, widgets
from evals.model.triage import TRIAGE_KINDS

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Audit trail", "Every triage action: who took it, when, why and until when.")

# Every filter is kept in the address, so a link to the audit trail opens the same view.
everywhere = selection.flag_filter("Every suite", "all_suites")
actions = triage.history(url, None if everywhere else suite_id)
filters = st.columns(4)
kinds = selection.list_filter(filters[0].multiselect, "Action", [*TRIAGE_KINDS, "remove"], "action")
with filters[1]:
    who = selection.text_filter("Who (contains)", "who")
with filters[2]:
    case = selection.text_filter("Case (contains)", "case_contains")
with filters[3]:
    since = selection.date_filter("Since", "since")
if kinds:
    actions = [a for a in actions if a.kind in kinds]
if who:
    actions = [a for a in actions if who.lower() in a.actor.lower()]
if case:
    actions = [a for a in actions if case.lower() in (a.case_id or "").lower()]
if isinstance(since, date):
    start = datetime(since.year, since.month, since.day, tzinfo=UTC).timestamp()
    actions = [a for a in actions if a.created_at >= start]

if not actions:
    widgets.no_data("No triage action matches.")
    st.stop()
table = triage.frame(actions, time.time())
st.dataframe(table, width="stretch", hide_index=True, key="audit_table")
st.download_button(
    "Export CSV",
    triage.csv_bytes(table),
    file_name="evals-triage-audit.csv",
    mime="text/csv",
    key="audit_csv",
)
