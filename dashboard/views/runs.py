"""Runs: search one evaluation's runs by text or regular expression over output, error,
prompt and variables, filtered by status, agent, case and run or case metadata
(`key=value`); every filter in the address."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from sqlalchemy.exc import DBAPIError

from evals.dashboard import badges, data, paged, selection, triage, widgets
from evals.store.dashboard_queries import SearchError

PAGE = 100
# Outputs and errors in the first view are cut at this length; the full table has them whole.
SHOWN_CHARS = 300
STATUSES = ["pass", "fail", "error"]

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header("Runs", "Find runs by what they answered, how they ended, and which case.")
evaluations = selection.environment_evaluations(suite_id) or data.evaluations(url, suite_id)
if not evaluations:
    widgets.no_data("No complete evaluation of this suite yet.")
    st.stop()
current = selection.current_sides(suite_id)
start = st.query_params.get("evaluation") or (
    current[1].evaluation_id if current else evaluations[0]["id"]
)
across = selection.flag_filter(
    "Search every evaluation of this suite here",
    "across",
    help="All the suite's complete evaluations in this environment (up to 200), newest "
    "runs first; case metadata as the newest evaluation's suite defines it.",
)
if across:
    chosen = evaluations[0]
    selection.keep_param("evaluation", None)
else:
    chosen = selection.evaluation_picker("Evaluation", evaluations, start, "runs_evaluation")
    selection.keep_param("evaluation", chosen["id"])
columns = st.columns([3, 1, 2, 2, 2])
with columns[0]:
    text = selection.text_filter("Search", "find", placeholder="text in output, error, prompt")
with columns[1]:
    regex = selection.flag_filter("Regular expression", "regex")
statuses = selection.list_filter(columns[2].multiselect, "Status", STATUSES, "status")
agents = selection.list_filter(
    columns[3].multiselect, "Agent", list(chosen["agents"] or []), "agent"
)
marks = badges.case_marks(triage.current(url, suite_id), selection.current_environment())
cases = selection.list_filter(
    columns[4].multiselect,
    "Case",
    data.group_names(url, chosen["id"])["case"],
    "run_case",
    format_func=lambda case: badges.option_label(case, marks.get(case, [])),
)
metadata_text = selection.text_filter(
    "Metadata",
    "meta",
    placeholder="key=value, key=value: the run's or its case's metadata (priority=P0)",
)
try:
    metadata = selection.parse_metadata(metadata_text)
except ValueError as error:
    st.error(str(error))
    st.stop()
page = int(st.query_params.get("page", "1") or 1)
filters = (
    ("text", text),
    ("regex", regex),
    ("statuses", tuple(statuses)),
    ("agents", tuple(agents)),
    ("case_ids", tuple(cases) if cases else None),
    ("metadata", tuple(metadata) if metadata else None),
    ("across", tuple(e["id"] for e in evaluations) if across else None),
)
try:
    found = data.search_runs(url, chosen["id"], filters, PAGE, (page - 1) * PAGE)
except SearchError as error:
    st.error(f"The search was not run: {error}.")
    st.stop()
except DBAPIError as error:
    st.error(f"The search failed: {error.orig}. Check the regular expression.")
    st.stop()
pages = max(1, -(-found["total"] // PAGE))
st.caption(f"{found['total']:,} runs match · page {page} of {pages}")
if pages > 1:
    page = st.number_input("Page", 1, pages, min(page, pages), key="runs_page")
    selection.keep_param("page", None if page == 1 else str(page))
frame = pd.DataFrame.from_records(found["rows"])
if frame.empty:
    widgets.no_data("No run matches these filters.")
    st.stop()
frame["repeat"] = frame["repeat"] + 1
frame["triage"] = [badges.marks_text(marks.get(case, [])) for case in frame["case_id"]]


def _short(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


st.html(
    paged.table_html(
        frame,
        [
            *(
                [
                    paged.Column(
                        "evaluation_id",
                        "evaluation",
                        href=lambda row: selection.open_link(row["evaluation_id"]),
                    )
                ]
                if across
                else []
            ),
            paged.Column(
                "case_id",
                "case",
                href=lambda row: selection.open_link(row["evaluation_id"], case=row["case_id"]),
            ),
            paged.Column("triage", "triage"),
            paged.Column("agent", "agent"),
            paged.Column("prompt", "prompt", _short),
            paged.Column("repeat", "repeat"),
            paged.Column("status", "status", tinted=True),
            paged.Column("error_kind", "error kind"),
            paged.Column("score", "score", lambda v: f"{v:.3g}"),
            paged.Column("cost", "cost (USD)", lambda v: f"{v:.5f}"),
            paged.Column("latency_ms", "latency (ms)", lambda v: f"{v:,.0f}"),
            paged.Column("output", "output", _short),
            paged.Column("error", "error", _short),
        ],
        f"runs {(page - 1) * PAGE + 1:,}–{(page - 1) * PAGE + len(frame):,} of "
        f"{found['total']:,}; prompts, outputs and errors cut at {SHOWN_CHARS} characters "
        "(in full in the table on demand and on the case's page)",
    )
)


def full_table() -> None:
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={
            "status": widgets.tinted_column(frame, "status"),
            "prompt": st.column_config.TextColumn("prompt", width="medium"),
            "output": st.column_config.TextColumn("output", width="large"),
            "error": st.column_config.TextColumn("error", width="medium"),
            "cost": st.column_config.NumberColumn("cost (USD)", format="%.5f"),
            "latency_ms": st.column_config.NumberColumn("latency (ms)", format="%.0f"),
        },
    )
    widgets.export(
        every_match,
        f"{suite_id}-{chosen['id']}-runs",
        "runs",
        f"all {found['total']:,} matching runs",
    )


def every_match() -> pd.DataFrame:
    """Every run the filters match (not only this page), read when a download is asked for."""
    rows = data.search_runs(url, chosen["id"], filters, None, 0)["rows"]
    whole = pd.DataFrame.from_records(rows)
    if not whole.empty:
        whole["repeat"] = whole["repeat"] + 1
    return whole


widgets.on_demand(
    "This page of runs in full, sortable, with downloads of every matching run",
    "runs_full_table",
    full_table,
)
