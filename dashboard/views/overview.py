"""Overview: every suite's latest verdict per environment, and how one suite, tag or case
moved over time in one environment (the sidebar's)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from evals.dashboard import charts, data, frames, selection, theme, widgets

ENVIRONMENTS = ["nightly", "pr", "release"]
TREND = "trend"
SUITE_TREND = "suite"


def trend_chart(chart: Any, key: str, case_id: str | None = None, **extra: str) -> None:
    """Draw a trend; a click on (or nearest to) a point opens that evaluation."""
    event = st.altair_chart(
        chart, width="stretch", on_select="rerun", selection_mode=charts.PICK, key=key
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
st.dataframe(widgets.colour_words(matrix, list(matrix.columns)), width="stretch")

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
    group = frames.group_trend_frame(data.group_trend(url, suite_id, environment, kind, name))
    if group.empty:
        widgets.no_data(f"No evaluation in {label} stored rates for this {kind}.")
        st.stop()
    trend_chart(
        charts.trend_with_band(
            group,
            value="pass_rate",
            low="pass_low",
            high="pass_high",
            title=f"Pass rate of {kind} {name} per agent, with its interval",
            axis_title="pass rate",
            axis_format=".0%",
        ),
        "trend_group",
        name if kind == "case" else None,
        **({"tag": name} if kind == "tag" else {}),
    )
    decided = group.dropna(subset=["difference"]).drop_duplicates("evaluation")
    with st.expander("Evaluations in this chart", expanded=True):
        st.dataframe(
            widgets.colour_words(
                decided[["started", "evaluation", "commit", "group_verdict", "difference", "q"]],
                ["group_verdict"],
            ),
            width="stretch",
            hide_index=True,
            column_config={
                "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
                "group_verdict": st.column_config.TextColumn("verdict of the comparison"),
                "difference": st.column_config.NumberColumn("difference", format="%+.3f"),
                "q": st.column_config.NumberColumn("q (BH)", format="%.4f"),
            },
        )
    st.stop()

trend = frames.trend_frame(data.trend(url, suite_id, environment))
if trend.empty:
    widgets.no_data(f"No complete evaluation of this suite in {label} yet.")
    st.stop()
trend_chart(
    charts.trend_with_band(
        trend,
        value="pass_rate",
        low="pass_low",
        high="pass_high",
        title="Pass rate per agent (mean of per-case rates) with its 95 % interval",
        axis_title="pass rate",
        axis_format=".0%",
    ),
    "trend_suite",
)
# (value, interval low, interval high, title, axis title, axis format) of the two
# smaller charts; latency only where the agent had no errored run.
SIDE_CHARTS = (
    (
        "cost_per_accepted",
        "cpa_low",
        "cpa_high",
        "Cost per accepted task (USD) with its interval",
        "cost per accepted task (USD)",
        "$.4f",
    ),
    (
        "p95_latency_ms",
        "p95_low",
        "p95_high",
        "p95 latency (ms), evaluations without errored runs",
        "p95 latency (ms)",
        ",.0f",
    ),
)
for column, (value, low, high, title, axis_title, axis_format) in zip(
    st.columns(2), SIDE_CHARTS, strict=True
):
    with column:
        trend_chart(
            charts.trend_with_band(
                trend.dropna(subset=[value]),
                value=value,
                low=low,
                high=high,
                title=title,
                axis_title=axis_title,
                axis_format=axis_format,
            ),
            f"trend_{value}",
        )
errored = trend[trend["errors"] > 0]
if not errored.empty:
    st.altair_chart(
        charts.errored_runs(
            errored,
            title="Errored runs (left out of the latency chart: they did not answer)",
        ),
        width="stretch",
    )
with st.expander("Evaluations in these charts"):
    st.dataframe(
        widgets.colour_words(
            trend[["started", "evaluation", "commit", "verdict", "agent", "pass_rate", "errors"]],
            ["verdict"],
        ),
        width="stretch",
        hide_index=True,
        column_config={
            "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
            "pass_rate": st.column_config.NumberColumn("pass rate", format="percent"),
        },
    )
