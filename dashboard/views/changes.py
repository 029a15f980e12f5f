"""What changed: the newest evaluation of a suite in one environment, read the way a team
lead reads it in the morning. Its gate verdict and the gates that failed; its regressions
and improvements (tags, then cases by priority and evidence) with their intervals,
q-values, since when they hold and a link to each case; new, removed and errored cases.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import streamlit as st

from evals.dashboard import (
    badges,
    changes,
    data,
    history,
    morning,
    selection,
    theme,
    triage,
    widgets,
)
from evals.dashboard.comparison import Side

SHOWN = 25

url = data.store_url()
suite_id = st.session_state[selection.SUITE]
environment = selection.current_environment()
evaluations = selection.environment_evaluations(suite_id)
widgets.header(
    f"What changed · {suite_id} · {selection.environment_label(environment)}",
    "The newest evaluation: did its gates pass, what regressed, since when, and how sure.",
)
if not evaluations:
    widgets.no_data("No complete evaluation of this suite in this environment yet.")
    st.stop()
latest = evaluations[0]
stored = data.evaluation(url, latest["id"])
assert stored is not None
summary, gates = stored.summary or {}, stored.gates or {}
comparison = summary.get("comparison")
pair = selection.stored_pair(latest["id"])
sides = (Side(latest["id"], pair[0]), Side(latest["id"], pair[1])) if pair else None

previous = data.previous_evaluation(url, suite_id, environment, latest["started_at"], latest["id"])
names = data.group_names(url, latest["id"])
new_cases, removed_cases = changes.case_set_changes(
    names["case"], data.group_names(url, previous["id"])["case"] if previous else None
)
errored = changes.errored_cases(data.case_rates(url, latest["id"]))

if comparison is None:
    widgets.no_data(
        "This evaluation ran a single agent, so it has no regressions to show; its errored "
        "cases are below."
    )
    regressions = improvements = changes.changes({}, "regression", {}, {})
else:
    p0_failed = changes.p0_failures(gates, [c["case_id"] for c in comparison.get("cases", [])])
    decided = [
        name
        for group in (*comparison.get("tags", []), *comparison.get("cases", []))
        if group["verdict"] in ("regression", "improvement")
        for name in [group.get("case_id") or group["group"]]
    ]
    onsets = history.onsets(
        data.history(
            url,
            suite_id,
            environment,
            latest["started_at"],
            tuple(sorted({*decided, *p0_failed})),
        ),
        p0_failed,
    )
    failing_text = changes.failing_assertion_text(
        data.failing_assertions(url, latest["id"], comparison["candidate"])
    )
    regressions = changes.changes(comparison, "regression", onsets, failing_text, p0_failed)
    improvements = changes.changes(comparison, "improvement", onsets, failing_text)


def _href(kind: str, name: str) -> str:
    """The address a name in the answer opens: a case's page, a tag's cases on Compare."""
    if sides is None:
        return selection.link("compare", selection.view_params())
    baseline, candidate = sides
    if kind == "case":
        return selection.link(
            "case", selection.sides_params(baseline, candidate, **{selection.CASE: name})
        )
    key = "tag" if kind == "tag" else "verdict"
    return selection.link("compare", selection.sides_params(baseline, candidate, **{key: name}))


marks = badges.case_marks(triage.current(url, suite_id), environment)


def _marks(row: dict[str, Any]) -> str:
    return badges.marks_html(marks.get(row["name"], [])) if row["kind"] == "case" else ""


failing = changes.failing_gates(gates)
verdict = gates.get("verdict") or "no gates"
label = theme.evaluation_label(latest) + (f" · {pair[1]} against {pair[0]}" if pair else "")
regressed_cases = int((regressions["kind"] == "case").sum())
counts = (
    f"New cases {len(new_cases)} · removed {len(removed_cases)}"
    + (f" (against {previous['id']})" if previous else "")
    + f" · cases with errored runs {errored['case'].nunique()}"
)
overall = comparison["overall"] if comparison is not None else None
whole = (
    ""
    if overall is None
    else f"Whole suite: {theme.percent(overall.get('baseline_rate'))} → "
    f"{theme.percent(overall.get('candidate_rate'))} "
    f"({theme.points(overall.get('difference'))}), {overall['verdict']}."
)
no_gates = (
    f"All {len(gates['gates'])} gates passed."
    if gates.get("gates") and not failing
    else ""
    if gates.get("gates")
    else "The suite defines no gates."
)
# The answer to the morning question, as one block that fits a laptop's first view.
st.html(
    "<div class='evals-answer'>"
    + widgets.badge_html(f"gates: {verdict}", verdict)
    + f"<span style='color:#555;font-size:0.875rem;margin-left:0.5rem'>{html.escape(label)}"
    + "</span>"
    + (
        " · "
        + morning.link(
            "open this comparison", selection.link("compare", selection.sides_params(*sides))
        )
        if sides
        else ""
    )
    + (f"<p style='margin:0.5rem 0 0'>{html.escape(no_gates)}</p>" if no_gates else "")
    + morning.gates_html(
        failing,
        [c["case_id"] for c in (comparison or {}).get("cases", [])],
        regressed_cases,
        _href,
    )
    + morning.changes_html("Regressions", regressions, _href, _marks)
    + morning.changes_html("Improvements", improvements, _href, _marks)
    + f"<p style='color:#555;font-size:0.875rem;margin:0.25rem 0 0'>{html.escape(whole)} "
    + f"{html.escape(counts)}</p>"
    + "</div>"
)
for warning in gates.get("warnings", []):
    st.warning(warning, icon="⚠️")
if failing:
    with st.expander("Statistical detail: each gate's full reason"):
        st.html(
            widgets.table_html(
                pd.DataFrame(
                    [
                        {
                            "gate": g["name"],
                            "status": g["status"],
                            "blocking": "yes" if g.get("blocking", True) else "no",
                            "reason": g["reason"],
                        }
                        for g in failing
                    ]
                ),
                tinted=["status"],
            )
        )


def _change_card(row: dict[str, Any]) -> None:
    with st.container(border=True):
        title = f"{row['kind']} {row['name']}"
        if row["priority"]:
            title += f" · {row['priority']}"
        lines = [
            f"<b>{html.escape(title)}</b>{_marks(row)}"
            + (
                f" — {html.escape(row['description'])}"
                if row["description"] and row["description"] != row["name"]
                else ""
            ),
            html.escape(changes.evidence_text(row)),
            "<b>When:</b> " + html.escape(changes.since_text(row)),
        ]
        if row["gate"]:
            lines.insert(
                1,
                f"<b>The {html.escape(row['gate'])} gate failed on this case</b> (decided "
                f"within the P0 cases); its own verdict over all cases: "
                f"{html.escape(row['verdict'])}",
            )
        if row["failing_assertion"]:
            lines.append("<b>Failing assertion:</b> " + html.escape(row["failing_assertion"]))
        if row["reason"]:
            lines.append(f"<span style='color:#666'>{html.escape(row['reason'])}</span>")
        st.html(
            f"<div style='border-left:4px solid {theme.hex_colour(row['verdict'])};"
            "padding-left:10px;line-height:1.5;white-space:pre-wrap;word-break:break-word'>"
            + "<br>".join(lines)
            + "</div>"
        )
        if sides is None:
            return
        with st.container(horizontal=True):
            if row["kind"] == "case":
                st.page_link(
                    "views/case.py",
                    label="Open case",
                    icon=":material/search:",
                    query_params=selection.sides_params(*sides, **{selection.CASE: row["name"]}),
                )
            else:
                st.page_link(
                    "views/compare.py",
                    label="Its cases",
                    icon=":material/filter_list:",
                    query_params=selection.sides_params(*sides, tag=row["name"]),
                )
            st.page_link(
                "views/overview.py",
                label="Trend",
                icon=":material/show_chart:",
                query_params=selection.view_params(trend=f"{row['kind']}:{row['name']}"),
            )


def _section(title: str, frame: pd.DataFrame, key: str, empty: str) -> None:
    st.subheader(title)
    if frame.empty:
        widgets.no_data(empty)
        return
    for row in frame.head(SHOWN).to_dict("records"):
        _change_card({str(key): value for key, value in row.items()})
    if len(frame) > SHOWN:
        st.caption(f"{len(frame) - SHOWN} more in the table below.")

    # Differences in percentage points, as every page writes them.
    in_points = frame.assign(
        difference=frame["difference"] * 100, low=frame["low"] * 100, high=frame["high"] * 100
    )

    def table() -> None:
        st.dataframe(
            in_points,
            hide_index=True,
            width="stretch",
            column_config={
                "baseline": st.column_config.NumberColumn(format="percent"),
                "candidate": st.column_config.NumberColumn(format="percent"),
                "difference": st.column_config.NumberColumn("difference (pp)", format="%+.1f"),
                "low": st.column_config.NumberColumn("interval low (pp)", format="%+.1f"),
                "high": st.column_config.NumberColumn("interval high (pp)", format="%+.1f"),
                "level": st.column_config.NumberColumn("interval level", format="percent"),
            },
            key=f"{key}_table",
        )
        widgets.export(in_points, f"{suite_id}-{latest['id']}-{key}", key)

    widgets.on_demand(f"All {len(frame)} as a table", f"{key}_all", table)


_section(
    "Regressions",
    regressions,
    "regressions",
    "No tag or case regressed in this evaluation."
    if comparison is not None
    else "Nothing was compared.",
)
_section(
    "Improvements",
    improvements,
    "improvements",
    "No tag or case improved in this evaluation.",
)

st.subheader("New, removed and errored cases")


def _listing(title: str, count: int, body: str) -> str:
    return f"<div style='flex:1 1 0;min-width:12rem'><b>{title}</b> ({count}){body}</div>"


def _names(names: list[str]) -> str:
    text = html.escape("\n".join(names) or "none")
    return f"<pre style='white-space:pre-wrap;font-family:inherit;margin:0.5rem 0'>{text}</pre>"


errored_count = errored["case"].nunique()
errored_body = (
    _names([])
    if errored.empty
    else widgets.table_html(errored.head(SHOWN))
    + (
        f"<p style='color:#666'>{len(errored) - SHOWN} more in the table below.</p>"
        if len(errored) > SHOWN
        else ""
    )
)
st.html(
    "<div style='display:flex;gap:1rem;flex-wrap:wrap'>"
    + _listing("New", len(new_cases), _names(new_cases))
    + _listing("Removed", len(removed_cases), _names(removed_cases))
    + _listing("With errored runs", errored_count, errored_body)
    + "</div>"
)
if not errored.empty:

    def errored_table() -> None:
        st.dataframe(errored, hide_index=True, width="stretch", key="errored_table")
        widgets.export(errored, f"{suite_id}-{latest['id']}-errored", "errored")

    widgets.on_demand("Errored runs as a table, to export", "errored_all", errored_table)
