"""Cost and latency: distributions per agent, p95 and cost per accepted task with
intervals, and the flakiest cases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import badges, data, figures, frames, selection, svg, theme, triage, widgets

# Flaky cases drawn as a plain table; the rest are one switch away.
FLAKY_SHOWN = 25

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
start = st.query_params.get("evaluation") or (
    current[1].evaluation_id if current else evaluations[0]["id"]
)
chosen = selection.evaluation_picker("Evaluation", evaluations, start, "cost_evaluation")
selection.keep_param("evaluation", chosen["id"])
stored = data.evaluation(url, chosen["id"])
summary = (stored.summary if stored else None) or {}
agents = summary.get("agents", [])


def _interval(bounds: list[float] | None, shown: Callable[[float], str]) -> str:
    return "—" if not bounds else f"{shown(bounds[0])} – {shown(bounds[1])}"


def _ms(value: float) -> str:
    return f"{value:,.0f} ms"


def _usd(value: float) -> str:
    return f"${value:.4f}"


if agents:
    widgets.text_table(
        pd.DataFrame(
            [
                {
                    "agent": stats["agent"],
                    "p95 latency": "—"
                    if stats.get("p95_latency_ms") is None
                    else _ms(stats["p95_latency_ms"]),
                    "p95 interval": _interval(stats.get("p95_latency_interval"), _ms),
                    "cost per accepted task": "—"
                    if stats.get("cost_per_accepted") is None
                    else _usd(stats["cost_per_accepted"]),
                    "cost interval": _interval(stats.get("cost_per_accepted_interval"), _usd),
                    "total cost": "unknown"
                    if stats.get("total_cost") is None
                    else _usd(stats["total_cost"])
                    + (f" ({n} unknown)" if (n := stats.get("unknown_cost_runs")) else ""),
                    "flake probability": theme.percent(stats.get("flake_probability")),
                }
                for stats in agents
            ]
        )
    )
    st.caption(
        "Cost per accepted task is the total cost divided by passed runs; flake probability "
        "the chance that two repeats of a case disagree, mean over cases. Intervals are "
        "95 % and treat the runs of a case as correlated: p95 latency's is Woodruff's "
        "(from the paired cluster bootstrap for a compared baseline and candidate), "
        "cost per accepted task's the delta method's over cases."
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
# (estimate, its interval, why it can be missing, chart title, (axis title, axis format))
INTERVAL_CHARTS = (
    (
        "p95_latency_ms",
        "p95_latency_interval",
        "No p95 interval: it needs at least two cases.",
        "p95 latency with its interval over cases",
        ("p95 latency (ms)", ",.0f"),
    ),
    (
        "cost_per_accepted",
        "cost_per_accepted_interval",
        "No cost-per-accepted interval: no run passed.",
        "Cost per accepted task with its interval",
        ("cost per accepted task (USD)", "$.4f"),
    ),
)
estimate_specs = [
    (missing, figures.estimates(url, chosen["id"], estimate, interval, title, axis))
    for estimate, interval, missing, title, axis in INTERVAL_CHARTS
]


def _clipped(shown: dict[str, Any]) -> str:
    if not shown["cut"]:
        return ""
    return widgets.heading_html(
        "",
        f"{shown['cut']:,} runs above the {figures.CLIP_QUANTILE:.0%} quantile "
        f"({shown['limit']:,.4g}) left out so outliers do not squeeze the bars; the "
        f"largest is {shown['largest']:,.4g}.",
    )


# The distributions and the estimates with their intervals, drawn on the server as one
# block, one under the other at the page's width: side by side, their text would shrink
# below reading size.
drawn = [
    distributions[field]["svg"] + _clipped(distributions[field])
    for field, *_ in figures.DISTRIBUTIONS
    if field in distributions
] + [
    widgets.heading_html("", missing) if charted is None else charted["svg"]
    for missing, charted in estimate_specs
]
svg.draw(*drawn)


def charts() -> None:
    """The same charts in Vega-Lite, with zoom and tooltips (its script is loaded only
    once they are asked for)."""
    for column, (field, *_) in zip(st.columns(2), figures.DISTRIBUTIONS, strict=True):
        if field in distributions:
            column.vega_lite_chart(distributions[field]["spec"], width="stretch")
    for column, (missing, charted) in zip(st.columns(2), estimate_specs, strict=True):
        if charted is None:
            column.info(missing)
        else:
            column.vega_lite_chart(charted["spec"], width="stretch")


widgets.on_demand("Interactive charts", "cost_charts", charts)

st.subheader("Flaky cases, most flaky first")
flaky = frames.flaky_cases(summary)
marks = badges.case_marks(triage.current(url, suite_id), chosen.get("environment"))
flaky["triage"] = [badges.marks_text(marks.get(case, [])) for case in flaky["case"]]
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
