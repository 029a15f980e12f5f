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

ALL_SUITES = "every suite"

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Audit trail", "Every triage action: who took it, when, why and until when.")

scope = st.segmented_control("Suite", [suite_id, ALL_SUITES], default=suite_id, key="audit_scope")
actions = triage.history(url, None if scope == ALL_SUITES else suite_id)
filters = st.columns(4)
kinds = filters[0].multiselect("Action", [*TRIAGE_KINDS, "remove"], key="audit_kinds")
who = filters[1].text_input("Who (contains)", key="audit_who")
case = filters[2].text_input("Case (contains)", key="audit_case")
since = filters[3].date_input("Since", value=None, key="audit_since")
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
