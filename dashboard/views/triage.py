"""Triage: acknowledge a regression or a failing gate, quarantine a case for an
environment until a date, accept a judge disagreement. Triagers only.

A quarantined case keeps running and is reported with its own interval, but the
regression and P0 gates of the next `evals run` leave it out until the expiry. Every
action is recorded with the logged-in identity through the one audited write path
(`evals.dashboard.triage`).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import streamlit as st

from evals.dashboard import auth, data, selection, triage, widgets
from evals.model.defaults import GATE_ENVIRONMENTS
from evals.model.errors import SuiteError

KINDS = {
    "quarantine": "Quarantine a case",
    "acknowledge": "Acknowledge",
    "accept_disagreement": "Accept a judge disagreement",
}
EVERY = "every environment"

person = auth.visitor()
if not person.can_triage:
    widgets.header("Triage", "Quarantine, acknowledge or accept: recorded with your name.")
    st.error(
        f"Triage needs the triager role; {person.actor} has "
        f"{', '.join(sorted(person.roles)) or 'no role'}. Ask the dashboard's administrators "
        "for the triager role (triager_emails, triager_groups or triager_domains), or see "
        "every action on the Audit trail page."
    )
    st.stop()
url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Triage", "Quarantine, acknowledge or accept: recorded with your name.")

evaluations = data.evaluations(url, suite_id)
if not evaluations:
    widgets.no_data("No complete evaluation of this suite yet.")
    st.stop()
evaluation_id = st.selectbox(
    "Evaluation",
    [e["id"] for e in evaluations],
    format_func=lambda i: next(
        f"{i} · {e['environment'] or 'no environment'} · {e['verdict'] or 'no gates'}"
        for e in evaluations
        if e["id"] == i
    ),
    key="triage_evaluation",
)
stored = data.evaluation(url, evaluation_id)
if stored is None:
    widgets.no_data("That evaluation is no longer in the store.")
    st.stop()
cases = ((stored.summary or {}).get("comparison") or {}).get("cases") or []
verdicts = {c["case_id"]: c["verdict"] for c in cases}
case_ids = sorted(verdicts, key=lambda c: (verdicts[c] != "regression", c))
decided = (stored.gates or {}).get("gates") or []
gates = [g["name"] for g in decided]
failing = [g["name"] for g in decided if g["status"] != "pass"]

with st.form("triage_form", clear_on_submit=True):
    kind = st.radio("Action", list(KINDS), format_func=KINDS.__getitem__, key="triage_kind")
    left, right = st.columns(2)
    case_id = left.selectbox(
        "Case",
        [None, *case_ids],
        format_func=lambda c: "—" if c is None else f"{verdicts[c]} · {c}",
        key="triage_case",
    )
    gate = right.selectbox(
        "Gate (acknowledge)",
        [None, *gates],
        index=1 + gates.index(failing[0]) if failing else 0,
        format_func=lambda g: "—" if g is None else g,
        key="triage_gate",
    )
    environment = left.selectbox("Environment", [EVERY, *GATE_ENVIRONMENTS], key="triage_env")
    tomorrow = datetime.now(UTC) + timedelta(days=7)
    until_day = right.date_input(
        "Quarantine until (UTC)", value=tomorrow.date(), key="triage_until"
    )
    reason = st.text_area("Why", key="triage_reason")
    link = st.text_input("Link (https://…)", key="triage_link")
    if st.form_submit_button("Record", type="primary"):
        until = None
        if kind == "quarantine":
            until = datetime(until_day.year, until_day.month, until_day.day, tzinfo=UTC).timestamp()
        try:
            recorded = triage.submit(
                person,
                url,
                kind,
                suite_id,
                reason,
                case_id=case_id,
                environment=None if environment == EVERY else environment,
                evaluation_id=evaluation_id,
                gate=gate if kind == "acknowledge" else None,
                until=until,
                link=link or None,
            )
        except SuiteError as exc:
            st.error(exc.render())
        else:
            st.success(f"Recorded triage action {recorded.id}.")

st.subheader("In force")
held = triage.current(url, suite_id)
if not held:
    widgets.no_data("No triage action in force for this suite.")
    st.stop()
st.dataframe(triage.frame(held, time.time()), width="stretch", hide_index=True)
with st.form("withdraw_form", clear_on_submit=True):
    target = st.selectbox(
        "Remove action",
        [a.id for a in held],
        format_func=lambda i: next(
            f"{i} · {a.kind} · {a.case_id or a.gate or ''}" for a in held if a.id == i
        ),
        key="withdraw_id",
    )
    why = st.text_input("Why remove it", key="withdraw_reason")
    if st.form_submit_button("Remove") and target is not None:
        try:
            triage.withdraw(person, url, target, why)
        except SuiteError as exc:
            st.error(exc.render())
        else:
            st.success(f"Removed triage action {target}.")
