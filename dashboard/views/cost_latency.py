"""Cost and latency: distributions per agent, p95 and cost per accepted task with
intervals, and the flakiest cases."""

from __future__ import annotations

import streamlit as st

from evals.dashboard import data, figures, frames, selection, theme, widgets

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
widgets.header(
    "Cost and latency",
    "What each agent costs and how long it takes, and which cases pass only sometimes.",
)

evaluations = data.evaluations(url, suite_id)
if not evaluations:
    widgets.no_data("No complete evaluation of this suite yet.")
    st.stop()
current = selection.current_sides(suite_id)
start = current[1].evaluation_id if current else evaluations[0]["id"]
chosen = selection.evaluation_picker("Evaluation", evaluations, start, "cost_evaluation")
stored = data.evaluation(url, chosen["id"])
summary = (stored.summary if stored else None) or {}
agents = summary.get("agents", [])

tiles = st.columns(max(1, len(agents)))
for column, stats in zip(tiles, agents, strict=False):
    with column, st.container(border=True):
        st.subheader(stats["agent"])
        p95 = stats.get("p95_latency_ms")
        p95_interval = stats.get("p95_latency_interval")
        st.metric(
            "p95 latency",
            "—" if p95 is None else f"{p95:,.0f} ms",
            help=None
            if not p95_interval
            else f"95 % interval {p95_interval[0]:,.0f} – {p95_interval[1]:,.0f} ms",
        )
        per_accepted = stats.get("cost_per_accepted")
        st.metric(
            "cost per accepted task",
            "—" if per_accepted is None else f"${per_accepted:.4f}",
            help="total cost divided by passed runs",
        )
        st.metric("total cost", f"${stats.get('total_cost', 0.0):.4f}")
        flake = stats.get("flake_probability")
        st.metric(
            "flake probability",
            "—" if flake is None else f"{flake * 100:.1f} %",
            help="chance that two repeats of a case disagree, mean over cases",
        )

distributions = figures.distributions(url, chosen["id"])
if not distributions["runs"]:
    widgets.no_data("This evaluation stored no runs.")
    st.stop()
if distributions["errored"]:
    errored = distributions["errored"]
    st.warning(
        f"{sum(row['n'] for row in errored):,} errored runs are left out of the distributions "
        "below (they did not answer, so their time and cost say nothing of the agent's): "
        + "; ".join(
            f"{row['agent']} {row['error_kind'] or 'error'} ×{row['n']}" for row in errored
        ),
        icon="⚠️",
    )
for column, (field, _, _) in zip(st.columns(2), figures.DISTRIBUTIONS, strict=True):
    shown = distributions[field]
    column.vega_lite_chart(shown["spec"], width="stretch")
    if shown["cut"]:
        column.caption(
            f"{shown['cut']:,} runs above the {figures.CLIP_QUANTILE:.0%} quantile "
            f"({shown['limit']:,.4g}) left out so outliers do not squeeze the bars; the "
            f"largest is {shown['largest']:,.4g}."
        )

# (estimate, its interval, why it can be missing, chart title, axis title, axis format)
# Flaky cases drawn as a plain table; the rest are one switch away.
FLAKY_SHOWN = 25
INTERVAL_CHARTS = (
    (
        "p95_latency_ms",
        "p95_latency_interval",
        "No p95 interval: it needs at least two cases.",
        "p95 latency with its cluster-bootstrap interval",
        "p95 latency (ms)",
        ",.0f",
    ),
    (
        "cost_per_accepted",
        "cost_per_accepted_interval",
        "No cost-per-accepted interval: no run passed.",
        "Cost per accepted task with its interval",
        "cost per accepted task (USD)",
        "$.4f",
    ),
)
for column, (estimate, interval, missing, title, axis_title, axis_format) in zip(
    st.columns(2), INTERVAL_CHARTS, strict=True
):
    spec = figures.estimates(
        url, chosen["id"], estimate, interval, title, (axis_title, axis_format)
    )
    if spec is None:
        column.info(missing)
    else:
        column.vega_lite_chart(spec, width="stretch")

st.subheader("Flaky cases, most flaky first")
flaky = frames.flaky_cases(summary)
if flaky.empty:
    widgets.no_data("No case both passed and failed: nothing is flaky here.")
else:
    widgets.text_table(
        flaky.head(FLAKY_SHOWN).assign(
            flake=flaky["flake"].map(theme.percent), pass_rate=flaky["pass_rate"].map(theme.percent)
        )
    )

    def flaky_table() -> None:
        st.dataframe(
            flaky,
            hide_index=True,
            width="stretch",
            column_config={
                "flake": st.column_config.ProgressColumn(
                    "flake rate", min_value=0.0, max_value=1.0, format="percent"
                ),
                "pass_rate": st.column_config.NumberColumn("pass rate", format="percent"),
            },
        )

    widgets.on_demand(f"All {len(flaky)} as a table", "flaky_all", flaky_table)
