"""Charts of stored evaluations as Vega-Lite specs, built once and cached.

Building an Altair chart and validating it against the Vega-Lite schema costs far more
than drawing it, and a stored evaluation never changes: so each chart a page draws from
one evaluation (or one comparison) is built once, turned into its spec, and kept with
`st.cache_data` under the same keys as the data it shows. Pages draw the spec with
`st.vega_lite_chart`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import charts, data, frames
from evals.dashboard.comparison import Side

# Histograms show runs up to this quantile; the rest are counted in a caption.
CLIP_QUANTILE = 0.99
DISTRIBUTIONS = (
    ("latency_ms", "Latency per answered run", "latency (ms)"),
    ("cost", "Cost per answered run", "cost (USD)"),
)


@st.cache_data(show_spinner=False)
def distributions(url: str, evaluation_id: str) -> dict[str, Any]:
    """Histograms of latency and cost per answered run of an evaluation, and its errors.

    `runs`: how many runs the evaluation stored; `errored`: per agent and error kind, the
    errored runs (left out of the histograms); per field, its chart `spec`, how many runs
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
    for field, title, axis_title in DISTRIBUTIONS:
        shown, cut = frames.clip_upper(answered, field, CLIP_QUANTILE)
        binned = frames.bin_counts(shown, field)
        result[field] = {
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
    format), or None when no agent has one."""
    stored = data.evaluation(url, evaluation_id)
    frame = frames.agent_estimates((stored.summary if stored else None) or {}, value, interval)
    if frame.empty:
        return None
    chart = charts.estimate_with_interval(
        frame, title=title, axis_title=axis[0], axis_format=axis[1]
    )
    return chart.to_dict()


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
