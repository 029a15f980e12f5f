"""Overview: every suite's latest verdict per environment, and how one suite, tag or case
moved over time in one environment (the sidebar's)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from evals.dashboard import charts, data, figures, frames, selection, theme, widgets

ENVIRONMENTS = ["nightly", "pr", "release"]
TREND = "trend"
SUITE_TREND = "suite"


def trend_chart(spec: dict[str, Any], key: str, case_id: str | None = None, **extra: str) -> None:
    """Draw a trend; a click on (or nearest to) a point opens that evaluation."""
    event = st.vega_lite_chart(
        spec, width="stretch", on_select="rerun", selection_mode=charts.PICK, key=key
    )
    picked = selection.picked_evaluation(event, charts.PICK)
    if picked is not None:
        selection.open_evaluation(picked, case_id, **extra)


url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header(
    "Overview", "Latest gate verdicts of every suite, and how one suite moves over time."
)

suites = data.suites(url)
verdicts = data.latest_verdicts(url)
latest = data.evaluations(url, suite_id)
tiles = st.columns(4)
tiles[0].metric("Suites in the store", len(suites))
tiles[1].metric(
    "Evaluations of this suite",
    next((row["evaluations"] for row in suites if row["suite_id"] == suite_id), 0),
)
if latest:
    newest = latest[0]
    tiles[2].metric("Latest verdict", newest["verdict"] or "no gates")
    stamp = theme.when(newest["started_at"])
    tiles[3].metric("Latest run (UTC)", stamp[11:], help=stamp)
    tiles[3].caption(f"{stamp[:10]} · environment: {newest['environment'] or 'none'}")

st.subheader("Latest verdict per environment")
matrix = frames.verdict_matrix(verdicts, ENVIRONMENTS)
widgets.text_table(matrix.reset_index(), tinted=list(matrix.columns))

environment = selection.current_environment()
in_environment = selection.environment_evaluations(suite_id)
names = data.group_names(url, in_environment[0]["id"]) if in_environment else {}
subjects = (
    [SUITE_TREND]
    + [f"tag:{name}" for name in names.get("tag", [])]
    + [f"case:{name}" for name in names.get("case", [])]
)
wanted = st.query_params.get(TREND, SUITE_TREND)
subject = st.selectbox(
    "Trend of",
    subjects,
    index=subjects.index(wanted) if wanted in subjects else 0,
    format_func=lambda s: "the whole suite" if s == SUITE_TREND else s.replace(":", " ", 1),
    key="trend_subject",
)
if subject == SUITE_TREND:
    st.query_params.pop(TREND, None)
else:
    st.query_params[TREND] = subject
label = selection.environment_label(environment)
st.subheader(
    f"Trend of {suite_id}" if subject == SUITE_TREND else f"Trend of {subject.replace(':', ' ', 1)}"
)
st.caption(
    f"Environment {label} only (choose another in the sidebar). Times in UTC. Click a point "
    "to open that evaluation's comparison."
)

if subject != SUITE_TREND:
    kind, name = subject.split(":", 1)
    charted = figures.group_trend(url, suite_id, environment, kind, name)
    group = charted["frame"]
    if charted["spec"] is None:
        widgets.no_data(f"No evaluation in {label} stored rates for this {kind}.")
        st.stop()
    trend_chart(
        charted["spec"],
        "trend_group",
        name if kind == "case" else None,
        **({"tag": name} if kind == "tag" else {}),
    )
    decided = group.dropna(subset=["difference"]).drop_duplicates("evaluation")
    with st.expander("Evaluations in this chart", expanded=True):
        st.dataframe(
            decided[["started", "evaluation", "commit", "group_verdict", "difference", "q"]],
            width="stretch",
            hide_index=True,
            column_config={
                "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
                "group_verdict": widgets.tinted_column(
                    decided, "group_verdict", "verdict of the comparison"
                ),
                "difference": st.column_config.NumberColumn("difference", format="%+.3f"),
                "q": st.column_config.NumberColumn("q (BH)", format="%.4f"),
            },
        )
    st.stop()

charted = figures.suite_trends(url, suite_id, environment)
trend = charted["frame"]
if trend.empty:
    widgets.no_data(f"No complete evaluation of this suite in {label} yet.")
    st.stop()
main_trend, *side_trends = (row[0] for row in figures.SUITE_TRENDS)
trend_chart(charted[main_trend], "trend_suite")
for column, value in zip(st.columns(2), side_trends, strict=True):
    with column:
        trend_chart(charted[value], f"trend_{value}")
if charted["errored"] is not None:
    st.vega_lite_chart(charted["errored"], width="stretch")


def evaluations_table() -> None:
    st.dataframe(
        trend[["started", "evaluation", "commit", "verdict", "agent", "pass_rate", "errors"]],
        width="stretch",
        hide_index=True,
        column_config={
            "verdict": widgets.tinted_column(trend, "verdict"),
            "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
            "pass_rate": st.column_config.NumberColumn("pass rate", format="percent"),
        },
    )


widgets.on_demand("Evaluations in these charts", "trend_table", evaluations_table)
