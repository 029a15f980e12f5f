"""Charts of stored evaluations as Vega-Lite specs, built once and cached.

Building an Altair chart and validating it against the Vega-Lite schema costs far more
than drawing it, and a stored evaluation never changes: so each chart a page draws from
one evaluation (or one comparison) is built once, turned into its spec, and kept with
`st.cache_data` under the same keys as the data it shows. Pages draw the spec with
`st.vega_lite_chart`.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pandas as pd
import streamlit as st

from evals.dashboard import charts, data, frames, svg
from evals.dashboard.comparison import Side

# Histograms show runs up to this quantile; the rest are counted in a caption.
CLIP_QUANTILE = 0.99
DISTRIBUTIONS = (
    ("latency_ms", "Latency per answered run", "latency (ms)", ",.0f"),
    ("cost", "Cost per answered run", "cost (USD)", "$.4f"),
)


@st.cache_data(show_spinner=False)
def distributions(url: str, evaluation_id: str) -> dict[str, Any]:
    """Histograms of latency and cost per answered run of an evaluation, and its errors.

    `runs`: how many runs the evaluation stored; `errored`: per agent and error kind, the
    errored runs (left out of the histograms); per field that has answered runs, its
    chart as a figure drawn on the server (`svg`) and as a Vega-Lite `spec`, how many runs
    above the clip quantile were `cut`, the quantile's value `limit` and the `largest`.
    """
    runs = pd.DataFrame.from_records(data.run_metrics(url, evaluation_id))
    result: dict[str, Any] = {"runs": len(runs), "errored": []}
    if runs.empty:
        return result
    answered, errored = runs[runs["status"] != "error"], runs[runs["status"] == "error"]
    counts = errored.groupby(["agent", "error_kind"], dropna=False).size().reset_index(name="n")
    result["errored"] = [
        {"agent": row["agent"], "error_kind": row["error_kind"], "n": int(row["n"])}
        for row in counts.to_dict("records")
    ]
    for field, title, axis_title, axis_format in DISTRIBUTIONS:
        shown, cut = frames.clip_upper(answered, field, CLIP_QUANTILE)
        binned = frames.bin_counts(shown, field)
        if binned.empty:
            continue
        if field == "latency_ms":
            axis_format = svg.time_format(float(binned["high"].max()))
        result[field] = {
            "svg": svg.histogram(
                binned, title=title, axis_title=axis_title, axis_format=axis_format
            ),
            "spec": charts.histogram(binned, title=title, axis_title=axis_title).to_dict(),
            "cut": cut,
            "limit": float(answered[field].quantile(CLIP_QUANTILE)) if cut else None,
            "largest": float(answered[field].max()) if cut else None,
        }
    return result


@st.cache_data(show_spinner=False)
def estimates(
    url: str, evaluation_id: str, value: str, interval: str, title: str, axis: tuple[str, str]
) -> dict[str, Any] | None:
    """The chart of one stored per-agent estimate with its interval (`axis`: title and
    format), as a figure drawn on the server (`svg`) and a Vega-Lite `spec`, or None when
    no agent has one."""
    stored = data.evaluation(url, evaluation_id)
    frame = frames.agent_estimates((stored.summary if stored else None) or {}, value, interval)
    if frame.empty:
        return None
    chart = charts.estimate_with_interval(
        frame, title=title, axis_title=axis[0], axis_format=axis[1]
    )
    drawn = svg.intervals(frame, title=title, axis_title=axis[0], axis_format=axis[1])
    return {"svg": drawn, "spec": chart.to_dict()}


@st.cache_data(show_spinner=False)
def forest(url: str, baseline: Side, candidate: Side, environment: str | None) -> dict[str, Any]:
    """The forest plot of a comparison: the suite and every tag, difference and interval."""
    comparison = data.comparison(url, baseline, candidate, environment).summary["comparison"]
    shown = frames.forest_frame(comparison).dropna(subset=["difference"])
    chart = charts.forest_plot(
        shown,
        title="Pass-rate difference (candidate − baseline), suite at the confidence level, "
        "tags at their Holm level",
    )
    return chart.to_dict()


class TrendFields(TypedDict):
    """What a trend chart draws: value and interval columns, titles and number format."""

    value: str
    low: str
    high: str
    title: str
    axis_title: str
    axis_format: str


# The suite's trend charts on Overview: pass rate first, then the two smaller charts;
# latency only where the agent had no errored run.
SUITE_TRENDS = (
    TrendFields(
        value="pass_rate",
        low="pass_low",
        high="pass_high",
        title="Pass rate per agent (mean of per-case rates) with its 95 % interval",
        axis_title="pass rate",
        axis_format=".0%",
    ),
    TrendFields(
        value="cost_per_accepted",
        low="cpa_low",
        high="cpa_high",
        title="Cost per accepted task (USD) with its interval",
        axis_title="cost per accepted task (USD)",
        axis_format="$.4f",
    ),
    TrendFields(
        value="p95_latency_ms",
        low="p95_low",
        high="p95_high",
        title="p95 latency (ms), evaluations without errored runs",
        axis_title="p95 latency (ms)",
        axis_format=",.0f",
    ),
)


@st.cache_data(ttl=data.LISTING_TTL_S, show_spinner=False)
def suite_trends(url: str, suite_id: str, environment: str | None) -> dict[str, Any]:
    """The suite's trend over its recent evaluations in one environment, charted.

    `frame`: one row per evaluation and agent (`frames.trend_frame`); per value of
    `SUITE_TRENDS`, its chart's spec; `errored`: the spec of the errored runs per
    evaluation, or None when no run errored. Cached like the listing it is built from, so
    every visit within a minute draws the same specs without rebuilding them."""
    trend = frames.trend_frame(data.trend(url, suite_id, environment))
    result: dict[str, Any] = {"frame": trend, "errored": None}
    if trend.empty:
        return result
    for fields in SUITE_TRENDS:
        shown = trend.dropna(subset=[fields["value"]])
        result[fields["value"]] = charts.trend_with_band(shown, **fields).to_dict()
    errored = trend[trend["errors"] > 0]
    if not errored.empty:
        result["errored"] = charts.errored_runs(
            errored, title="Errored runs (left out of the latency chart: they did not answer)"
        ).to_dict()
    return result


@st.cache_data(ttl=data.LISTING_TTL_S, show_spinner=False)
def group_trend(
    url: str, suite_id: str, environment: str | None, kind: str, name: str
) -> dict[str, Any]:
    """One tag's or case's pass rate over recent evaluations, charted: `frame`
    (`frames.group_trend_frame`) and `spec`, None when no evaluation stored its rates."""
    group = frames.group_trend_frame(data.group_trend(url, suite_id, environment, kind, name))
    if group.empty:
        return {"frame": group, "spec": None}
    spec = charts.trend_with_band(group, **group_trend_fields(kind, name)).to_dict()
    return {"frame": group, "spec": spec}


def group_trend_fields(kind: str, name: str) -> TrendFields:
    """The value, interval columns, titles and number format of a tag's or case's trend,
    the same for its Vega-Lite chart and its SVG."""
    return TrendFields(
        value="pass_rate",
        low="pass_low",
        high="pass_high",
        title=f"Pass rate of {kind} {name} per agent, with its interval",
        axis_title="pass rate",
        axis_format=".0%",
    )


@st.cache_data(show_spinner=False, max_entries=256)
def waterfall(
    url: str, side: Side, case_id: str, prompt_id: str, repeat: int, title: str
) -> str | None:
    """The waterfall of one stored run's trace (or steps), titled `title` and the source,
    as a figure drawn on the server; None when the run is not stored or recorded no
    timing."""
    record = data.run(url, side.evaluation_id, case_id, side.agent, prompt_id, repeat)
    if record is None:
        return None
    bars, source = frames.waterfall_frame(record)
    if bars.empty:
        return None
    shown = f"{title}: trace (ms)" if source == "trace" else f"{title}: steps (ms)"
    return svg.waterfall(bars, title=shown)
