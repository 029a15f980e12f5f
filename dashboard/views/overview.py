"""Overview: every suite's latest verdict per environment, and one suite's trends."""

from __future__ import annotations

import streamlit as st

from evals.dashboard import charts, data, frames, selection, theme, widgets

ENVIRONMENTS = ["nightly", "pr", "release"]
ALL = "all environments"

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

st.subheader(f"Trends of {suite_id}")
environment = st.segmented_control(
    "Environment", [ALL, *ENVIRONMENTS], default=ALL, key="overview_environment"
)
rows = data.trend(url, suite_id, None if environment in (None, ALL) else environment)
trend = frames.trend_frame(rows)
if trend.empty:
    widgets.no_data("No complete evaluation of this suite in that environment yet.")
else:
    st.altair_chart(
        charts.trend_with_band(
            trend,
            value="pass_rate",
            low="pass_low",
            high="pass_high",
            title="Pass rate per agent (mean of per-case rates) with its 95 % interval",
            axis_title="pass rate",
            axis_format=".0%",
        ),
        width="stretch",
    )
    left, right = st.columns(2)
    left.altair_chart(
        charts.trend_with_band(
            trend,
            value="cost_per_accepted",
            low="cpa_low",
            high="cpa_high",
            title="Cost per accepted task (USD) with its interval",
            axis_title="cost per accepted task (USD)",
            axis_format="$.4f",
        ),
        width="stretch",
    )
    right.altair_chart(
        charts.trend_with_band(
            trend,
            value="p95_latency_ms",
            low="p95_low",
            high="p95_high",
            title="p95 latency per run (ms) with its bootstrap interval",
            axis_title="p95 latency (ms)",
            axis_format=",.0f",
        ),
        width="stretch",
    )
    with st.expander("Evaluations in these charts"):
        st.dataframe(
            widgets.colour_words(
                trend[["started", "evaluation", "environment", "verdict", "agent", "pass_rate"]],
                ["verdict"],
            ),
            width="stretch",
            hide_index=True,
        )
