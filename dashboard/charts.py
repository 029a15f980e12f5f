"""Altair charts of the dashboard, built from tidy DataFrames.

Each chart is titled and its axes carry units, so a chart pasted into a ticket reads
without the page around it. Colours follow `evals.dashboard.theme`.
"""

from __future__ import annotations

import re

import altair as alt
import pandas as pd

from evals.dashboard import theme

WIDTH = "container"


def _agent_colour(agents: list[str]) -> alt.Color:
    palette = [theme.AGENT_PALETTE[i % len(theme.AGENT_PALETTE)] for i in range(len(agents))]
    return alt.Color("agent:N", title="agent", scale=alt.Scale(domain=agents, range=palette))


# Dates on every time axis, in UTC whatever the browser's zone: a nightly at 03:00 UTC
# reads as "Dec 05 03:00", never as "03 AM".
DATE_AXIS = alt.Axis(
    labelExpr="utcFormat(datum.value, '%b %d %H:%M')",
    labelAngle=-30,
    labelOverlap=True,
    title=None,
)
UTC = alt.Scale(type="utc")


def number_axis(axis_format: str) -> alt.Axis:
    """An axis whose labels are all different: ticks no closer than the format shows.

    A d3 format such as ".0%" prints 0.721 and 0.724 both as "72%": on a narrow range (a
    suite of 500 cases has narrow intervals) Vega would pick ticks finer than the labels
    and repeat them. The tick step is kept at least one unit of the last digit shown.
    """
    return alt.Axis(format=axis_format, tickMinStep=label_step(axis_format))


def label_step(axis_format: str) -> float:
    """The smallest difference a d3 number format shows: 0.01 for ".0%", 1 for ",.0f"."""
    match = re.search(r"\.(\d+)([a-z%])", axis_format)
    digits = int(match.group(1)) if match else 0
    kind = match.group(2) if match else "f"
    return 10.0 ** -(digits + (2 if kind == "%" else 0))


# Pick the clicked point of a trend (or the nearest to the click): its evaluation opens.
PICK = "picked"


def trend_with_band(
    frame: pd.DataFrame,
    *,
    value: str,
    low: str,
    high: str,
    title: str,
    axis_title: str,
    axis_format: str,
) -> alt.LayerChart:
    """A value per agent over time: a line with points over its interval band.

    `frame` has `started` (datetime), `when` (its UTC text), `agent`, `evaluation`,
    `commit`, `verdict` and the three value columns. Points and band carry the same
    tooltip: the value, its interval (labelled as such), the evaluation, its commit and its
    gate verdict. A click selects the nearest point's evaluation (selection `PICK`).
    """
    agents = list(dict.fromkeys(frame["agent"]))
    colour = _agent_colour(agents)
    x = alt.X("started:T", axis=DATE_AXIS, scale=UTC)
    tooltip = [
        alt.Tooltip("when:N", title="started (UTC)"),
        alt.Tooltip("evaluation:N"),
        alt.Tooltip("commit:N"),
        alt.Tooltip("agent:N"),
        alt.Tooltip(f"{value}:Q", title=axis_title, format=axis_format),
        alt.Tooltip(f"{low}:Q", title="interval low", format=axis_format),
        alt.Tooltip(f"{high}:Q", title="interval high", format=axis_format),
        alt.Tooltip("verdict:N", title="gate verdict"),
    ]
    base = alt.Chart(frame).encode(x=x, color=colour)
    band = base.mark_area(opacity=0.18).encode(
        y=alt.Y(f"{low}:Q", title=axis_title, axis=number_axis(axis_format)),
        y2=alt.Y2(f"{high}:Q"),
        tooltip=tooltip,
    )
    line = base.mark_line(strokeWidth=2).encode(y=alt.Y(f"{value}:Q"), tooltip=tooltip)
    pick = alt.selection_point(name=PICK, fields=["evaluation"], on="click", nearest=True)
    points = (
        base.mark_point(filled=True, size=60)
        .encode(y=alt.Y(f"{value}:Q"), tooltip=tooltip)
        .add_params(pick)
    )
    return (band + line + points).properties(title=title, width=WIDTH, height=260)


def errored_runs(frame: pd.DataFrame, *, title: str) -> alt.Chart:
    """Errored runs per agent and evaluation over time, as bars: what latency and cost
    statistics leave out. `frame` has `started`, `when`, `agent`, `evaluation`, `commit`, `errors`,
    `runs`."""
    agents = list(dict.fromkeys(frame["agent"]))
    return (
        alt.Chart(frame)
        .mark_bar(size=8)
        .encode(
            x=alt.X("started:T", axis=DATE_AXIS, scale=UTC),
            xOffset="agent:N",
            y=alt.Y("errors:Q", title="errored runs"),
            color=_agent_colour(agents),
            tooltip=[
                alt.Tooltip("when:N", title="started (UTC)"),
                alt.Tooltip("evaluation:N"),
                alt.Tooltip("commit:N"),
                alt.Tooltip("agent:N"),
                alt.Tooltip("errors:Q", title="errored runs"),
                alt.Tooltip("runs:Q", title="runs"),
            ],
        )
        .properties(title=title, width=WIDTH, height=160)
    )


def forest_plot(frame: pd.DataFrame, *, title: str) -> alt.LayerChart:
    """Differences (candidate − baseline) with intervals, one row per group, by verdict.

    `frame` has `group`, `difference`, `low`, `high`, `verdict`, `cases`.
    """
    domain, colours = theme.verdict_scale()
    colour = alt.Color("verdict:N", scale=alt.Scale(domain=domain, range=colours))
    y = alt.Y(
        "group:N",
        title=None,
        sort=list(frame["group"]),
        axis=alt.Axis(labelOverlap=False, labelLimit=220),
    )
    axis = number_axis("+.0%")
    base = alt.Chart(frame).encode(y=y, color=colour)
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title="pass-rate difference, candidate − baseline", axis=axis),
        x2="high:Q",
    )
    points = base.mark_point(filled=True, size=90, shape="diamond").encode(
        x="difference:Q",
        tooltip=[
            alt.Tooltip("group:N"),
            alt.Tooltip("cases:Q"),
            alt.Tooltip("difference:Q", format="+.1%"),
            alt.Tooltip("low:Q", title="interval low", format="+.1%"),
            alt.Tooltip("high:Q", title="interval high", format="+.1%"),
            alt.Tooltip("verdict:N"),
        ],
    )
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color=theme.GREY, strokeDash=[4, 4])
    height = max(120, 28 * len(frame))
    return (zero.encode(x="x:Q") + bars + points).properties(
        title=title, width=WIDTH, height=height
    )


def histogram(frame: pd.DataFrame, *, title: str, axis_title: str) -> alt.Chart:
    """How a per-run quantity is distributed, one colour per agent, bars side by side.

    `frame` holds the counts already binned (`evals.dashboard.frames.bin_counts`): `agent`,
    `low`, `high`, `runs` and the agent's slice of the bin, `left` to `right`.
    """
    agents = list(dict.fromkeys(frame["agent"]))
    return (
        alt.Chart(frame)
        .mark_bar(opacity=0.85)
        .encode(
            x=alt.X("left:Q", title=axis_title, scale=alt.Scale(zero=False)),
            x2="right:Q",
            y=alt.Y("runs:Q", title="runs"),
            color=_agent_colour(agents),
            tooltip=[
                alt.Tooltip("agent:N"),
                alt.Tooltip("low:Q", title="from", format=",.4g"),
                alt.Tooltip("high:Q", title="to", format=",.4g"),
                alt.Tooltip("runs:Q", title="runs"),
            ],
        )
        .properties(title=title, width=WIDTH, height=240)
    )


def estimate_with_interval(
    frame: pd.DataFrame, *, title: str, axis_title: str, axis_format: str
) -> alt.LayerChart:
    """One estimate per agent with its interval: `agent`, `value`, `low`, `high`."""
    agents = list(dict.fromkeys(frame["agent"]))
    base = alt.Chart(frame).encode(
        y=alt.Y("agent:N", title=None, sort=agents), color=_agent_colour(agents)
    )
    rule = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title=axis_title, axis=number_axis(axis_format)), x2="high:Q"
    )
    point = base.mark_point(filled=True, size=90).encode(
        x="value:Q",
        tooltip=[
            alt.Tooltip("agent:N"),
            alt.Tooltip("value:Q", title=axis_title, format=axis_format),
            alt.Tooltip("low:Q", title="interval low", format=axis_format),
            alt.Tooltip("high:Q", title="interval high", format=axis_format),
        ],
    )
    return (rule + point).properties(title=title, width=WIDTH, height=110 + 36 * len(agents))
