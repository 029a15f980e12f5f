"""Overview: every suite's latest verdict per environment, and how one suite, tag or case
moved over time in one environment (the sidebar's)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import (
    badges,
    charts,
    data,
    figures,
    frames,
    selection,
    svg,
    theme,
    triage,
    widgets,
)

ENVIRONMENTS = ["nightly", "pr", "release"]
TREND = "trend"
SUITE_TREND = "suite"
CASE_TREND = "case"


def trend_chart(spec: dict[str, Any], key: str, case_id: str | None = None, **extra: str) -> None:
    """Draw a trend interactively; a click on (or nearest to) a point opens that evaluation."""
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
figures_shown = [
    ("Suites in the store", len(suites), ""),
    (
        "Evaluations of this suite",
        next((row["evaluations"] for row in suites if row["suite_id"] == suite_id), 0),
        "",
    ),
]
if latest:
    newest = latest[0]
    stamp = theme.when(newest["started_at"])
    figures_shown += [
        ("Latest verdict", newest["verdict"] or "no gates", ""),
        ("Latest run (UTC)", stamp[11:], stamp),
    ]
baseline = data.baseline(url, suite_id)
# The figures and the verdict matrix go out as one HTML block.
matrix = frames.verdict_matrix(verdicts, ENVIRONMENTS)
st.html(
    widgets.tiles_html(figures_shown)
    + (
        widgets.heading_html(
            "", f"Latest run: {stamp[:10]} · environment: {newest['environment'] or 'none'}"
        )
        if latest
        else ""
    )
    + widgets.heading_html(
        "",
        f"Baseline of {baseline['branch']}: {baseline['id']} ({baseline['reason']})"
        if baseline
        else "No baseline yet: no nightly of main has earned it",
    )
    + widgets.heading_html("Latest verdict per environment", "")
    + widgets.table_html(matrix.reset_index(), tinted=list(matrix.columns))
)

environment = selection.current_environment()
in_environment = selection.environment_evaluations(suite_id)
names = data.group_names(url, in_environment[0]["id"]) if in_environment else {}
tags = [f"tag:{name}" for name in names.get("tag", [])]
cases = names.get("case", [])
wanted = st.query_params.get(TREND, SUITE_TREND)
wanted_case = wanted[5:] if wanted.startswith("case:") and wanted[5:] in cases else None
# The cases (hundreds) get a picker of their own, drawn only once "a case" is chosen: a
# picker's options are all sent and built in the browser with the page.
subjects = [SUITE_TREND, *tags, *([CASE_TREND] if cases else [])]
start = CASE_TREND if wanted_case is not None else wanted
subject = st.selectbox(
    "Trend of",
    subjects,
    index=subjects.index(start) if start in subjects else 0,
    format_func=lambda s: {SUITE_TREND: "the whole suite", CASE_TREND: "a case…"}.get(
        s, s.replace(":", " ", 1)
    ),
    key="trend_subject",
)
# the triage marks of the cases, for the environment shown (a quarantine, an accepted
# judge disagreement, an acknowledgement), in the picker and by the case's trend
marks = badges.case_marks(triage.current(url, suite_id), environment) if cases else {}
if subject == CASE_TREND:
    picked_case = st.selectbox(
        "Case",
        cases,
        index=cases.index(wanted_case) if wanted_case is not None else 0,
        format_func=lambda c: badges.option_label(c, marks.get(c, [])),
        key="trend_case",
    )
    subject = f"case:{picked_case}"
selection.keep_param(TREND, None if subject == SUITE_TREND else subject)
label = selection.environment_label(environment)
# The heading and its note go out with the charts, as one block.
intro = widgets.heading_html(
    "Trend of " + (suite_id if subject == SUITE_TREND else subject.replace(":", " ", 1)),
    f"Environment {label} only (choose another in the sidebar). Times in UTC. Click a point "
    "to open that evaluation's comparison.",
)

if subject != SUITE_TREND:
    kind, name = subject.split(":", 1)
    charted = figures.group_trend(url, suite_id, environment, kind, name)
    group = charted["frame"]
    if charted["spec"] is None:
        svg.draw(intro)
        widgets.no_data(f"No evaluation in {label} stored rates for this {kind}.")
        st.stop()
    opened = {kind: name}
    svg.draw(
        intro,
        f"<p>{badges.marks_html(marks.get(name, []))}</p>" if kind == "case" else "",
        svg.trend(
            group,
            **figures.group_trend_fields(kind, name),
            href=lambda evaluation: selection.open_link(evaluation, **opened),
        ),
    )
    widgets.on_demand(
        "Interactive chart",
        "trend_group_chart",
        lambda: trend_chart(
            charted["spec"],
            "trend_group",
            name if kind == "case" else None,
            **({"tag": name} if kind == "tag" else {}),
        ),
    )
    per_evaluation = group.drop_duplicates("evaluation")
    versions = [str(s) for s in per_evaluation["suite_fingerprint"]]
    evaluation_ids = [str(e) for e in per_evaluation["evaluation"]]
    representatives = tuple(dict(zip(versions, evaluation_ids, strict=True)).items())
    if kind == "case":
        defined = data.case_fingerprints(url, representatives, name)
        changed = frames.edits(versions, [defined.get(s) for s in versions])
    else:
        members = data.tag_members(url, representatives, name)
        changed = frames.edits(versions, members=[members.get(s) for s in versions])
    per_evaluation = per_evaluation.assign(changed=changed)
    decided = per_evaluation.dropna(subset=["difference"])
    st.markdown("**Evaluations in this chart**")
    widgets.text_table(
        pd.DataFrame(
            {
                "started (UTC)": decided["when"],
                "evaluation": decided["evaluation"],
                "commit": decided["commit"],
                "verdict of the comparison": decided["group_verdict"],
                "since the one before": decided["changed"],
                "difference": decided["difference"].map(theme.points),
                theme.q_label(kind): decided["q"].map(theme.q_text),
            }
        ),
        tinted=["verdict of the comparison"],
    )
    st.stop()

charted = figures.suite_trends(url, suite_id, environment)
trend = charted["frame"]
if trend.empty:
    svg.draw(intro)
    widgets.no_data(f"No complete evaluation of this suite in {label} yet.")
    st.stop()
drawn = [intro]
for fields in figures.SUITE_TRENDS:
    shown = trend.dropna(subset=[fields["value"]])
    if shown.empty:
        continue
    drawn.append(
        svg.trend(
            shown,
            **fields,
            href=selection.open_link,
            height=260 if fields is figures.SUITE_TRENDS[0] else 200,
        )
    )
errored = trend[trend["errors"] > 0]
if not errored.empty:
    drawn.append(
        svg.trend(
            errored,
            value="errors",
            low=None,
            high=None,
            title="Errored runs (left out of the latency chart: they did not answer)",
            axis_title="errored runs",
            axis_format=",.0f",
            href=selection.open_link,
            height=180,
        )
    )
svg.draw(*drawn)


def interactive_charts() -> None:
    main_trend, *side_trends = (fields["value"] for fields in figures.SUITE_TRENDS)
    trend_chart(charted[main_trend], "trend_suite")
    for column, value in zip(st.columns(2), side_trends, strict=True):
        with column:
            trend_chart(charted[value], f"trend_{value}")
    if charted["errored"] is not None:
        st.vega_lite_chart(charted["errored"], width="stretch")


widgets.on_demand("Interactive charts", "trend_charts", interactive_charts)


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
